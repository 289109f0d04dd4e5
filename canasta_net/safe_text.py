"""Text from another party, made safe to print on a terminal.

Player and table names, chats, refusal messages, reasons and beacon fields come from other people
on the LAN (or from a log they wrote). Printed raw, an escape sequence in them could retitle the
terminal window (OSC), move the cursor, clear the screen, or reorder what is shown (bidirectional
overrides). :func:`safe_text` shows every such character as a visible escape instead (``\\x1b``,
``\\u202e``) and keeps ordinary letters of every script, so that ``Zoë`` and ``Ωμέγα`` stay as
they are. One function, used everywhere such text reaches a terminal or a text file.

Pages are another matter: HTML export escapes for HTML (``replay/export_html.py``).
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["safe_lines", "safe_text"]

# Unicode categories shown escaped: controls (C0, DEL, C1: every terminal escape starts with one),
# format characters (bidi overrides and isolates, zero-width joiners), surrogates, private use,
# unassigned code points, and the line and paragraph separators.
_ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

# The usual short forms, for text that is easier to read with them.
_SHORT_FORMS: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(ch: str) -> str:
    short = _SHORT_FORMS.get(ch)
    if short is not None:
        return short
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _is_unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in _ESCAPED_CATEGORIES


def safe_text(text: object) -> str:
    """``text`` (or ``str(text)``) as one line with every control, format or invisible character
    shown as a visible escape. Idempotent: safe text is left as it is."""
    shown = text if isinstance(text, str) else str(text)
    if shown.isprintable():  # the common case: nothing to escape (space is printable)
        return shown
    return "".join(_escaped(ch) if _is_unsafe(ch) else ch for ch in shown)


def safe_lines(text: str) -> str:
    """Text of several lines made safe line by line: its own line breaks are kept, every other
    unsafe character is escaped. For output built by this program from parts that came from
    others (each of which should already have gone through :func:`safe_text`)."""
    return "\n".join(safe_text(line) for line in text.split("\n"))
