"""``canasta`` with the player's page server and the table timed, for ``scripts/bench_web.py``.

    python scripts/timed_play.py OUT.json play --ui web ...

runs the ``canasta`` command given after ``OUT.json`` with a timeline of the server side's steps
(``canasta_net.timing``'s spans and marks of the host and the seat, plus the page server's moves
(by the page's socket or ``POST /act``) and snapshot pushes, on ``time.perf_counter``), written
to ``OUT.json`` when the process ends. A step costs the timeline a tuple appended to a list: a
few microseconds.

Each entry is ``[name, start, end or null, details]``; ``summarize`` turns a timeline into the
legs of each move the page posted.
"""

from __future__ import annotations

import atexit
import gc
import json
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

Entry = tuple[str, float, float | None, dict[str, Any]]

clock = time.perf_counter


class Timeline:
    """A ``canasta_net.timing.Timing`` that keeps every span and mark, with the few details the
    summary needs (never the messages themselves)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    @contextmanager
    def span(self, name: str, **details: Any) -> Iterator[None]:
        start = clock()
        try:
            yield
        finally:
            kept = {"t": details["t"]} if name == "host.handle" else {}
            self.entries.append((name, start, clock(), kept))

    def mark(self, name: str, **details: Any) -> None:
        kept: dict[str, Any] = {}
        if name == "seat.receive":
            kept["t"] = details["message"].get("t")
        self.entries.append((name, clock(), None, kept))


def install(timeline: Timeline) -> None:
    """Hand ``timeline`` to the host and the local seat that ``canasta play``/``host`` start,
    and wrap the page server's POSTs and pushes."""
    import canasta_net.ui.cli as cli
    import canasta_net.web.server as server
    from canasta_net.net.peer import PeerSession

    names = vars(cli)  # the command module's own names, replaced where it looks them up
    start_host = names["start_host"]

    async def timed_start_host(*args: Any, **kwargs: Any) -> Any:
        kwargs["timing"] = timeline
        return await start_host(*args, **kwargs)

    class TimedSession(PeerSession):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["timing"] = timeline
            super().__init__(*args, **kwargs)

    names["start_host"] = timed_start_host
    names["PeerSession"] = TimedSession

    post = server.PageResource._post

    def timed_post(self: Any, request: Any, path: str) -> int | bytes:
        start = clock()
        try:
            return post(self, request, path)
        finally:
            timeline.entries.append(("page.post", start, clock(), {"path": path}))

    by_socket = server.PageServer._act_by_socket

    def timed_act_by_socket(self: Any, text: str) -> str | None:
        start = clock()
        try:
            return by_socket(self, text)
        finally:  # a move by the page's socket: timed as a POST /act was
            timeline.entries.append(("page.post", start, clock(), {"path": "/act"}))

    push = server.PageServer._push

    def timed_push(self: Any) -> None:
        start = clock()
        pushed = self._pushed
        push(self)
        if self._pushed != pushed:  # a snapshot went out: which hand it showed
            hand = " ".join(c["card"] for c in self.model.snapshot().get("hand") or [])
            timeline.entries.append(("page.push", start, clock(), {"hand": hand}))

    started: dict[str, float] = {}

    def collected(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started["gc"] = clock()
        elif "gc" in started:
            gen = info.get("generation")
            timeline.entries.append(("gc", started.pop("gc"), clock(), {"gen": gen}))

    gc.callbacks.append(collected)  # the garbage collector's pauses, in the process's thread
    server.PageResource._post = timed_post  # type: ignore[method-assign]
    server.PageServer._act_by_socket = timed_act_by_socket  # type: ignore[method-assign]
    server.PageServer._push = timed_push  # type: ignore[method-assign]


def percentiles(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)

    def at(fraction: float) -> float:
        return round(ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))], 2)

    return {"p50": at(0.5), "p95": at(0.95), "mean": round(statistics.fmean(values), 2)}


def summarize(entries: list[list[Any]]) -> dict[str, Any]:
    """The legs of each ``/act`` POST, from the POST's arrival to the push of the first snapshot
    whose hand differs (the one the page's clock stops on), in milliseconds:

    - ``post``: the page server's handling of the POST (the seat signs and sends the move);
    - ``to_host``: from then to the host's handling of it (the loopback TLS connection, the
      reactor's turns);
    - ``host``: the host's handling (the engine's check, the journal) to the seat's first receipt
      of what comes back (the durable log's sync on its thread, the records and view sent);
    - ``log_sync``: of which the log's write and sync;
    - ``seat``: from that receipt to the push (the seat's checks of the records, the model);
    - ``push``: the snapshot made, encoded and written to the event stream;
    - ``server``: the whole, the POST's arrival to the push written;
    - ``pushes``: snapshots pushed per move (the last one included);
    - ``gc``: the garbage collector's pauses between the POST's arrival and the push (all of them,
      in any thread: the reactor's waits for one only when it runs there).
    """
    ordered = sorted(entries, key=lambda e: float(e[1]))
    legs: dict[str, list[float]] = {
        k: []
        for k in ("post", "to_host", "host", "log_sync", "seat", "push", "server", "pushes", "gc")
    }
    pauses = [e for e in ordered if e[0] == "gc"]
    per_move: list[dict[str, float]] = []
    hand: str | None = None
    for i, entry in enumerate(ordered):
        name, start, end, details = entry
        if name == "page.push":
            hand = details["hand"]
            continue
        if name != "page.post" or details.get("path") != "/act":
            continue
        before = hand
        handled = sync = received = final = None
        pushes = 0
        for later in ordered[i + 1 :]:
            lname = later[0]
            if lname == "host.handle" and handled is None and later[3].get("t") == "act":
                handled = later
            elif lname == "log.sync" and handled is not None and sync is None:
                sync = later
            elif lname == "seat.receive" and handled is not None and received is None:
                received = later
            elif lname == "page.push":
                pushes += 1
                if later[3]["hand"] != before:
                    final = later
                    break
            elif lname == "page.post" and later[3].get("path") == "/act":
                break  # the next move came first: this one changed no hand (a refusal)
        if final is None or handled is None or received is None:
            continue
        ms = 1000.0
        move = {
            "post": (end - start) * ms,
            "to_host": (handled[1] - end) * ms,
            "host": (received[1] - handled[1]) * ms,
            "seat": (final[1] - received[1]) * ms,
            "push": (final[2] - final[1]) * ms,
            "server": (final[2] - start) * ms,
            "pushes": float(pushes),
            "gc": sum((g[2] - g[1]) * ms for g in pauses if start <= g[1] and g[2] <= final[2]),
        }
        if sync is not None and sync[1] < received[1]:
            move["log_sync"] = (sync[2] - sync[1]) * ms
        for leg, value in move.items():
            legs[leg].append(value)
        per_move.append({leg: round(value, 2) for leg, value in move.items()})
    summary: dict[str, Any] = {name: percentiles(values) for name, values in legs.items()}
    summary["per_move"] = per_move  # in order, beside the page's ``per_click_ms``: the tail
    return summary


def main() -> None:
    out = sys.argv[1]
    timeline = Timeline()
    install(timeline)

    def write() -> None:
        with open(out, "w", encoding="utf-8") as file:
            json.dump(timeline.entries, file)

    atexit.register(write)
    from canasta_net.ui.cli import main as canasta

    sys.argv = ["canasta", *sys.argv[2:]]
    canasta()


if __name__ == "__main__":
    main()
