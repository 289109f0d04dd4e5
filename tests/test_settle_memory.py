"""A process's start-up is collected, then kept out of the garbage collector's reach
(``ui.app.settle_memory``): its full collections then look only at what play made."""

from __future__ import annotations

import gc
import weakref

from canasta_net.ui.app import settle_memory


class Node:
    def __init__(self) -> None:
        self.next: Node | None = None


def test_settle_memory_collects_the_start_up_s_garbage_and_freezes_the_rest() -> None:
    cycle = Node()
    cycle.next = cycle  # garbage the collector must find: never frozen
    gone = weakref.ref(cycle)
    del cycle
    kept = Node()
    try:
        settle_memory()
        assert gone() is None
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for generation in range(3) for o in gc.get_objects(generation))
    finally:
        gc.unfreeze()
    assert any(o is kept for o in gc.get_objects(2))
