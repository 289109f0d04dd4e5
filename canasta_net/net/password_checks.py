"""Where a host checks join passwords, off its reactor's thread (``net/host.py`` applies the
password guard of ``net/limits.py`` first: a refused try is not even checked)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from twisted.internet.defer import Deferred, DeferredSemaphore, maybeDeferred
from twisted.internet.interfaces import IReactorThreads
from twisted.internet.threads import deferToThreadPool


class PasswordChecks:
    """Where a host checks join passwords: each check is a scrypt (tens of milliseconds and
    16 MiB), run one at a time on a worker thread of the reactor, so that the reactor's thread
    goes on serving the seated players meanwhile (a reactor without threads, a test's
    ``task.Clock``, checks at once). One check per connection waits at a time, and at most
    ``MAX_WAITING`` wait in all: beyond that a hello is refused as ``rate-limited``, so guessing
    costs the host neither unbounded memory nor unbounded time."""

    MAX_WAITING: Final = 8

    def __init__(
        self,
        reactor: Any,
        run_in_thread: Callable[[Callable[[], bool]], Deferred[bool]] | None = None,
    ) -> None:
        self.reactor = reactor
        self._run_in_thread = run_in_thread  # a test's own, instead of the reactor's threads
        self._one_at_a_time = DeferredSemaphore(1)
        self._waiting: set[object] = set()

    def check(self, who: object, matches: Callable[[], bool]) -> Deferred[bool] | None:
        """``matches()`` run in its turn (a Deferred of its answer), or None if ``who`` already
        waits for a check or too many wait."""
        if who in self._waiting or len(self._waiting) >= self.MAX_WAITING:
            return None
        self._waiting.add(who)

        def done(result: Any) -> Any:
            self._waiting.discard(who)
            return result

        checking: Deferred[bool] = self._one_at_a_time.run(self._run, matches)
        return checking.addBoth(done)

    def _run(self, matches: Callable[[], bool]) -> Deferred[bool]:
        if self._run_in_thread is not None:
            return self._run_in_thread(matches)
        if not IReactorThreads.providedBy(self.reactor):
            return maybeDeferred(matches)
        return deferToThreadPool(self.reactor, self.reactor.getThreadPool(), matches)
