"""The game as one self-contained HTML page that replays it in a browser (see ``html_page.py``)."""

from __future__ import annotations

import html
import json
import re
from typing import Any, Final

from canasta_net.i18n import Translator, current

from .html_page import SCRIPT, STYLE, TEMPLATE

# the messages the script marks: _("...") and ngettext("...", "...", n), adjacent "..." + "..."
_STRING: Final = r'"(?:[^"\\]|\\.)*"(?:\s*\+\s*"(?:[^"\\]|\\.)*")*'
_MARKED: Final = re.compile(rf"\b(_|ngettext)\(\s*({_STRING})")


def _js_text(literal: str) -> str:
    """The text of a (possibly concatenated) JavaScript string literal of the script."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', literal)
    return "".join(json.loads(f'"{part}"') for part in parts)


def page_messages(tr: Translator) -> dict[str, Any]:
    """The reader's messages the script uses (``i18n`` in the page's data): msgid -> msgstr,
    and each plural message's forms, from the one catalogue."""
    singular: dict[str, str] = {}
    plurals: dict[str, list[str]] = {}
    for keyword, literal in _MARKED.findall(SCRIPT):
        text = _js_text(literal)
        if keyword == "_":
            singular[text] = tr.gettext(text)
        else:
            plurals[text] = [tr.ngettext(text, text, n) for n in _PLURAL_SAMPLES[tr.lang]]
    return {"lang": tr.lang, "messages": singular, "plurals": plurals}


# one number of each plural form, in the order of the language's forms (the script's rule)
_PLURAL_SAMPLES: Final = {"en": (1, 2), "bg": (1, 2), "ru": (1, 2, 5), "pl": (1, 2, 5)}


def embed_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` appear literally."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def render_html(export: dict[str, Any], tr: Translator | None = None) -> str:
    """The page; in a language other than English (``tr``, by default the process's person's)
    its data carries that language's messages for the script (``i18n``)."""
    tr = current() if tr is None else tr
    log = export["log"]
    if tr.lang != "en":
        export = {**export, "i18n": page_messages(tr)}
    title = html.escape(
        tr.gettext("canasta-net replay: {variant}, table {table}").format(
            variant=log["variant"], table=log["table"][:16]
        )
    )
    page = TEMPLATE.replace("__STYLE__", STYLE).replace("__SCRIPT__", SCRIPT)
    page = page.replace("__TITLE__", title)
    # the data goes in last, so that nothing in it is ever taken for a placeholder
    return page.replace("__DATA__", embed_json(export))
