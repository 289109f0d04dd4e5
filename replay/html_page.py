"""The page ``export --format html`` writes: one file, its style and script inline, no network.

The game is the JSON export, embedded in a ``<script type="application/json">`` element; the script
draws the table for one step at a time from it. The Content-Security-Policy forbids every fetch, so
the page works offline and cannot leak anything. Names, chat and comments are untrusted text and
are only ever inserted with ``textContent``.
"""

from __future__ import annotations

from importlib import resources
from typing import Final


def _shared_style() -> str:
    """The cards and the felt, shared with the player's page (one copy, in its static files)."""
    sheet = resources.files("canasta_net").joinpath("web", "static", "cards.css")
    return sheet.read_text(encoding="utf-8")


# the replay page's own rules, after the shared look
_PAGE_STYLE: Final = """
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.4 system-ui, sans-serif; color: var(--ink); background: #e9ece8; }
header, main, footer { max-width: 1100px; margin: 0 auto; padding: 10px 16px; }
h1 { font-size: 20px; margin: 6px 0; }
.meta { color: var(--muted); font-size: 13px; }
.validity { padding: 6px 10px; border-radius: 6px; margin: 6px 0; }
.validity.valid { background: #d7f0de; } .validity.incomplete { background: #fdf1c7; }
.validity.invalid { background: #f8d3d3; }
#controls { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
#controls button { font-size: 15px; padding: 4px 10px; }
#slider { flex: 1; min-width: 200px; }
#position { font-variant-numeric: tabular-nums; min-width: 210px; }
#description { font-size: 16px; min-height: 2.8em; padding: 6px 10px; background: var(--paper);
  border-radius: 6px; }
#table { background: var(--felt); color: #f4f4ee; border-radius: 14px; padding: 14px;
  margin-top: 10px; display: grid; gap: 10px; grid-template-columns: 1fr 1fr; }
#table .wide { grid-column: 1 / -1; }
#annotations .note { background: var(--paper); border-left: 4px solid #d9a400; padding: 6px 10px;
  margin: 6px 0; border-radius: 4px; }
#annotations .glyph { font-weight: 700; margin-right: 6px; }
#all-notes li { cursor: pointer; color: #234d9b; }
table.scores { border-collapse: collapse; background: var(--paper); }
table.scores td, table.scores th { border: 1px solid #c8ccc6; padding: 3px 10px;
  text-align: right; }
#analysis .legend span { margin-right: 14px; white-space: nowrap; }
#analysis .swatch { display: inline-block; width: 12px; height: 12px; margin-right: 4px;
  border-radius: 2px; vertical-align: -1px; }
#loss-chart svg { background: var(--paper); border-radius: 6px; max-width: 100%; height: auto; }
#loss-chart circle { cursor: pointer; }
#worst-moves a { color: #234d9b; }
kbd { border: 1px solid #999; border-radius: 3px; padding: 0 4px; background: #fff; }
"""

STYLE: Final = _shared_style() + _PAGE_STYLE

SCRIPT: Final = (
    resources.files("replay").joinpath("static", "replay.js").read_text(encoding="utf-8")
)
"""The page's script (``static/replay.js``: Babel extracts its ``_()`` and ``ngettext()``)."""

TEMPLATE: Final = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>__TITLE__</title>
<style>__STYLE__</style>
</head>
<body>
<header>
<h1 id="title">__TITLE__</h1>
<div id="meta" class="meta"></div>
<div id="validity" class="validity"></div>
</header>
<main>
<div id="controls">
<button id="first" title="First record (Home)">&#xAB;</button>
<button id="prev" title="Previous record (&#x2190;)">&#x25C0;</button>
<button id="next" title="Next record (&#x2192;)">&#x25B6;</button>
<button id="last" title="Last record (End)">&#xBB;</button>
<input id="slider" type="range" min="0" max="0" value="0" aria-label="record">
<span id="position"></span>
</div>
<div id="description" aria-live="polite"></div>
<div id="table"></div>
<div id="totals" class="meta"></div>
<section><div id="annotations"></div></section>
<section id="analysis" hidden>
<h2 id="h-analysis">Computer analysis: points lost in marked moves</h2>
<div id="loss-legend" class="legend meta"></div>
<div id="loss-chart"><svg id="loss-svg" role="img" aria-label="points lost per seat"></svg></div>
<h3 id="h-costliest">The costliest moves</h3><ol id="worst-moves"></ol></section>
<section><h2 id="h-annotations">Annotations</h2><ul id="all-notes"></ul></section>
<section><h2 id="h-scores">Score sheet</h2><table id="scores" class="scores"></table>
<p id="result"></p></section>
<p class="meta" id="keys">Keys: <kbd>&#x2190;</kbd> <kbd>&#x2192;</kbd> step, <kbd>Home</kbd>
<kbd>End</kbd> first and last record, <kbd>PgUp</kbd> <kbd>PgDn</kbd> previous and next hand.</p>
</main>
<script type="application/json" id="game-data">__DATA__</script>
<script>__SCRIPT__</script>
</body>
</html>
"""
