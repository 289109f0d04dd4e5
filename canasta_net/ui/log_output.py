"""``canasta -v``: Twisted's log events on stderr, one line each, filtered by level.

The host and the seats log through ``twisted.logger`` (a connection accepted, refused and why,
dropped and why; a table that stops). Without ``-v`` nothing of it is shown; ``-v`` shows events
of level info and up, ``-vv`` debug too. Events name peers and carry their words (a refused
name, a reason): each line is made safe for the terminal (``safe_text``).
"""

from __future__ import annotations

import time
from typing import Final, TextIO

from twisted.logger import (
    FilteringLogObserver,
    ILogFilterPredicate,
    ILogObserver,
    LogEvent,
    LogLevel,
    LogLevelFilterPredicate,
    PredicateResult,
    formatEventAsClassicLogText,
    globalLogBeginner,
)
from zope.interface import implementer  # type: ignore[import-untyped, unused-ignore]

from ..safe_text import safe_text

__all__ = ["level_for", "log_observer", "show_log_events"]


def level_for(verbosity: int) -> LogLevel:
    """The lowest level shown for ``-v`` given ``verbosity`` times."""
    level: LogLevel = LogLevel.debug if verbosity >= 2 else LogLevel.info
    return level


# Twisted's own notes on every factory started or stopped (each connection attempt of a seat
# starts one): detail for -vv, noise at -v.
_FACTORY_CHATTER: Final = frozenset(
    {"Starting factory {factory!r}", "Stopping factory {factory!r}"}
)


@implementer(ILogFilterPredicate)
class _HideFactoryChatter:
    def __call__(self, event: LogEvent) -> PredicateResult:
        chatter = event.get("log_format") in _FACTORY_CHATTER
        result: PredicateResult = PredicateResult.no if chatter else PredicateResult.maybe
        return result


@implementer(ILogObserver)
class _SafeLines:
    """Writes each event as ``HH:MM:SS [namespace] text``, every line of it escaped."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: LogEvent) -> None:
        text = formatEventAsClassicLogText(event, formatTime=_clock)
        if not text:
            return
        lines = text.rstrip("\n").split("\n")
        self.out.write("".join(safe_text(line) + "\n" for line in lines))
        self.out.flush()


def _clock(when: float | None) -> str:
    return "-" if when is None else time.strftime("%H:%M:%S", time.localtime(when))


def log_observer(out: TextIO, verbosity: int) -> ILogObserver:
    """An observer that writes events of ``level_for(verbosity)`` and up to ``out``."""
    predicates: list[ILogFilterPredicate] = [
        LogLevelFilterPredicate(defaultLogLevel=level_for(verbosity))
    ]
    if verbosity < 2:
        predicates.insert(0, _HideFactoryChatter())
    observer: ILogObserver = FilteringLogObserver(_SafeLines(out), predicates)
    return observer


def show_log_events(out: TextIO, verbosity: int) -> None:
    """Start Twisted's logging to ``out`` (stdout and stderr themselves stay as they are: the
    game is printed there)."""
    globalLogBeginner.beginLoggingTo([log_observer(out, verbosity)], redirectStandardIO=False)
