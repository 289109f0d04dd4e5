"""Stepping through a game, one record at a time: the logic of ``canasta-replay show``'s prompt.

:class:`Stepper` holds the current record and obeys text commands; it does no I/O, so it is tested
without a terminal. The command line only reads a line, calls :meth:`Stepper.execute` and prints
what it returns.

Commands: ``n``/``next`` [K], ``p``/``prev`` [K], ``j``/``jump`` POSITION (a record number,
``hand:H`` or ``hand:H/turn:T``), ``h`` H (the deal of hand H), ``t`` T (turn T of the current
hand), ``home``, ``end``, ``?``/``help``, ``q``/``quit``. An empty line is ``next``. Hands and
turns count from 1, as every tool shows them (``locate.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from canasta_net.i18n import N_, current
from canasta_net.log.records import shown_number

from .annotations import Annotation
from .errors import LocatorError
from .locate import locate
from .render import render_step
from .timeline import Timeline
from .views import Perspective
from .wording import hand_noun

# The stepper's sentences are in the reader's language (``--lang``, the process's): its commands
# stay as typed.
HELP = N_("""Commands:
  n, next [K]      forward one record (or K)         (an empty line does the same)
  p, prev [K]      back one record (or K)
  j, jump POS      go to a record number, hand:H, hand:H/turn:T, or end
  h H              go to the deal of hand H
  t T              go to turn T of the current hand
  home, end        the first or the last record
  ?, help          this help
  q, quit          leave
Hands and turns count from 1; records from 0 (record 0 is the log's header).""")


@dataclass(frozen=True)
class Reply:
    """What to print after a command, and whether the stepper is finished."""

    text: str
    quit: bool = False


class Stepper:
    def __init__(
        self,
        timeline: Timeline,
        perspective: Perspective,
        annotations: Sequence[Annotation] = (),
        start: int = 0,
    ) -> None:
        self.timeline = timeline
        self.perspective = perspective
        self.annotations = list(annotations)
        self.position = max(0, min(start, timeline.last_record))

    # ------------------------------------------------------------------ moving
    def move(self, delta: int) -> None:
        self.position = max(0, min(self.position + delta, self.timeline.last_record))

    def jump(self, where: str) -> None:
        self.position = locate(self.timeline, where)

    def goto_hand(self, hand: int) -> None:
        """Go to the deal of hand ``hand``, counted as people count (the first hand is 1)."""
        self.jump(f"hand:{hand}")

    def goto_turn(self, turn: int) -> None:
        """Go to turn ``turn`` (the first is 1) of the hand on the table."""
        hand = self.current_hand()
        if hand is None:
            _ = current().gettext
            if hand_noun(self.timeline.game) == "deal":
                said = _("No deal is being played here: choose a deal first (h H).")
            else:
                said = _("No hand is being played here: choose a hand first (h H).")
            raise LocatorError(said)
        self.jump(f"hand:{shown_number(hand)}/turn:{turn}")

    def current_hand(self) -> int | None:
        """The hand on the table, as the log numbers it (from 0), or None."""
        step = self.timeline.steps[self.position]
        if step.hand is not None and self.timeline.hand(step.hand) is not None:
            return step.hand
        return None

    # ------------------------------------------------------------------ showing
    def render(self) -> str:
        step = self.timeline.steps[self.position]
        return render_step(self.timeline, step, self.perspective, self.annotations)

    def execute(self, command: str) -> Reply:
        """Obey one command line; return what to show (the table, help or an error sentence)."""
        _ = current().gettext
        words = command.strip().split()
        verb = words[0].lower() if words else "n"
        argument = " ".join(words[1:])
        try:
            if verb in ("q", "quit", "exit"):
                return Reply("", quit=True)
            if verb in ("?", "help"):
                return Reply(_(HELP))
            if verb in ("n", "next", "p", "prev"):
                count = _number(argument, 1)
                self.move(count if verb in ("n", "next") else -count)
            elif verb in ("j", "jump"):
                if not argument:
                    return Reply(_("Jump where? Give a record number, hand:H or hand:H/turn:T."))
                self.jump(argument)
            elif verb == "h":
                self.goto_hand(_number(argument, None))
            elif verb == "t":
                self.goto_turn(_number(argument, None))
            elif verb == "home":
                self.position = 0
            elif verb == "end":
                self.position = self.timeline.last_record
            else:
                return Reply(_("Unknown command {verb!r}; type ? for help.").format(verb=verb))
        except LocatorError as e:
            return Reply(str(e))
        return Reply(self.render())


def _number(text: str, default: int | None) -> int:
    if not text and default is not None:
        return default
    if not text.strip().isdigit():
        _ = current().gettext
        if not text:
            raise LocatorError(_("Give a number."))
        raise LocatorError(_("{text!r} is not a number.").format(text=text))
    return int(text)
