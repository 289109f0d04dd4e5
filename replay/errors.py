"""Errors the ``canasta-replay`` tools raise; ``str(error)`` is a sentence for the user."""

from __future__ import annotations


class ReplayToolError(Exception):
    """Something the user asked for cannot be done; the message says what and why."""

    #: The exit status the command line uses for this error.
    exit_code = 1


class UnreadableLog(ReplayToolError):
    """The file is not a log this program can read (not a log, an unsupported version, I/O)."""

    exit_code = 2


class LocatorError(ReplayToolError):
    """A position (``--at``) names no record of this log, or is not written as one."""

    exit_code = 2


class PositionUnknown(ReplayToolError):
    """The table at that record cannot be shown or played from (no hand, or no seeds yet)."""


class AnnotationError(ReplayToolError):
    """An annotation file, or a new annotation, is malformed."""


class AnnotationMismatch(AnnotationError):
    """The annotations are bound to another game, or to other records, than this log's."""


class WhatIfError(ReplayToolError):
    """An action of a what-if line is illegal; ``index`` (0-based) and ``code`` say which and why.

    ``code`` is the engine's stable reason code (``docs/rules.md``), or ``bad-action`` for text
    that is not an action.
    """

    def __init__(self, index: int, action: str, code: str, reason: str) -> None:
        super().__init__(
            f"The what-if line is illegal at action {index + 1} ({action!r}): {reason} [{code}]"
        )
        self.index = index
        self.action = action
        self.code = code
        self.reason = reason
