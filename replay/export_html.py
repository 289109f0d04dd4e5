"""The game as one self-contained HTML page that replays it in a browser (see ``html_page.py``)."""

from __future__ import annotations

import html
import json
from typing import Any

from .html_page import SCRIPT, STYLE, TEMPLATE


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


def render_html(export: dict[str, Any]) -> str:
    log = export["log"]
    title = html.escape(f"canasta-net replay: {log['variant']}, table {log['table'][:16]}")
    page = TEMPLATE.replace("__STYLE__", STYLE).replace("__SCRIPT__", SCRIPT)
    page = page.replace("__TITLE__", title)
    # the data goes in last, so that nothing in it is ever taken for a placeholder
    return page.replace("__DATA__", embed_json(export))
