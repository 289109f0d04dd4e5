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

SCRIPT: Final = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("game-data").textContent);
  var steps = DATA.steps, pos = 0;
  // the games differ in words and in the table only: May I? seats play alone for penalty points
  var SEATS_ALONE = DATA.log.game === "may-i";
  var NOUN = SEATS_ALONE ? "deal" : "hand";
  var SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function count(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }
  // the data numbers hands, turns and deals from 0 as the log does; people count them from 1
  function shown(number) { return number + 1; }
  function seatName(seat) {
    var s = DATA.seats[seat];
    return s ? "seat " + seat + " (" + s.name + ")" : "seat " + seat;
  }
  function card(text, highlighted) {
    if (text === "JK") return el("span", "card" + (highlighted[text] ? " hl" : ""), "Jkr");
    var suit = text.slice(-1), rank = text.slice(0, -1);
    var cls = "card" + (suit === "D" || suit === "H" ? " red" : "") +
      (highlighted[text] ? " hl" : "");
    var node = el("span", cls, rank + (SUITS[suit] || suit));
    node.title = text;
    node.setAttribute("data-card", text);
    return node;
  }
  function cards(list, highlighted) {
    var span = el("span", "cards");
    list.forEach(function (c) { span.appendChild(card(c, highlighted)); });
    return span;
  }
  function backs(n) {
    var span = el("span", "cards");
    for (var i = 0; i < Math.min(n, 30); i++) span.appendChild(el("span", "card back", "#"));
    return span;
  }
  function notesAt(record) {
    return DATA.annotations.filter(function (a) { return a.record === record; });
  }
  function renderTable(step, highlighted) {
    var table = document.getElementById("table");
    table.textContent = "";
    var view = step.view;
    if (!view) {
      table.appendChild(el("div", "panel wide", step.pending
        ? "This copy of the log cannot show this " + NOUN + ": its seeds are not published in it."
        : "No " + NOUN + " is on the table."));
      return;
    }
    if (SEATS_ALONE) { renderSeatsTable(step, view, table, highlighted); return; }
    var centre = el("div", "panel wide centre");
    centre.appendChild(el("h2", null, "Hand " + shown(step.hand) + " \u00b7 turn " +
      shown(step.turn) +
      " \u00b7 dealer " + seatName(view.dealer) + " \u00b7 " +
      (view.to_move === null ? "the hand is over"
        : seatName(view.to_move) + " to move (" + view.phase + ")")));
    var pileLine = el("div", "pile", "Stock: " + count(view.stock_size, "card") +
      " \u00b7 Pile: " + count(view.pile_size, "card") +
      (view.pile_frozen ? " (frozen)" : "") + " \u00b7 top ");
    if (view.pile_top) pileLine.appendChild(card(view.pile_top, highlighted));
    else pileLine.appendChild(el("span", null, "none"));
    centre.appendChild(pileLine);
    if (view.pile) {
      var full = el("div", "pile-all", "Pile, bottom to top: ");
      full.appendChild(cards(view.pile, highlighted));
      centre.appendChild(full);
    }
    table.appendChild(centre);
    DATA.teams.forEach(function (team) {
      var panel = el("div", "panel team");
      var opened = view.opened[team.team] ? "opened" : "not opened";
      panel.appendChild(el("h2", null, team.name + ": " + opened +
        " (minimum " + view.minimums[team.team] + ")"));
      var reds = [];
      team.seats.forEach(function (s) { reds = reds.concat(view.red_threes[s]); });
      if (reds.length) {
        var r = el("div", "reds", "Red threes: ");
        r.appendChild(cards(reds, highlighted));
        panel.appendChild(r);
      }
      view.melds[team.team].forEach(function (meld, n) {
        var line = el("div", "meld");
        line.appendChild(el("span", "label", n + ": " + meld.label));
        line.appendChild(cards(meld.cards, highlighted));
        if (meld.canasta) line.appendChild(el("span", "canasta", meld.canasta + " canasta"));
        panel.appendChild(line);
      });
      if (!view.melds[team.team].length) panel.appendChild(el("div", "meld", "no melds"));
      table.appendChild(panel);
    });
    view.hand_sizes.forEach(function (size, seat) {
      var panel = el("div", "panel seat" + (view.to_move === seat ? " to-move" : ""));
      panel.setAttribute("data-seat", seat);
      panel.appendChild(el("h2", null, seatName(seat) + ": " + count(size, "card") +
        (view.seat === seat ? " (you)" : "")));
      if (view.hands) panel.appendChild(cards(view.hands[seat], highlighted));
      else if (view.seat === seat) panel.appendChild(cards(view.hand, highlighted));
      else panel.appendChild(backs(size));
      table.appendChild(panel);
    });
  }
  function seatList(seats) { return seats.map(seatName).join(", "); }
  function renderSeatsTable(step, view, table, highlighted) {
    // May I?: the deal's contract, the stock, the whole (public) discard pile, the buy window,
    // and per seat its hand, whether it is down, its buys and its own melds
    var centre = el("div", "panel wide centre");
    centre.appendChild(el("h2", null, "Deal " + shown(view.deal) + " \u00b7 contract " +
      view.contract + (view.discard_out ? "" : " (the last card must be melded)") +
      " \u00b7 turn " + shown(step.turn) + " \u00b7 dealer " + seatName(view.dealer) + " \u00b7 " +
      (view.to_move === null ? "the deal is over"
        : seatName(view.to_move) + " to move (" + view.phase + ")")));
    var pileLine = el("div", "pile", "Stock: " + count(view.stock_size, "card") +
      (view.turnovers ? " (the pile turned over " + count(view.turnovers, "time") + ")" : "") +
      " \u00b7 Discard pile: " + count(view.pile.length, "card") + " \u00b7 top ");
    if (view.pile_top) pileLine.appendChild(card(view.pile_top, highlighted));
    else pileLine.appendChild(el("span", null, "none"));
    centre.appendChild(pileLine);
    var full = el("div", "pile-all", "Discard pile, bottom to top: ");
    full.appendChild(cards(view.pile, highlighted));
    centre.appendChild(full);
    if (view.stock) {
      var stock = el("div", "stock-all", "Stock, next card last: ");
      stock.appendChild(cards(view.stock, highlighted));
      centre.appendChild(stock);
    }
    if (view.phase === "buy-offer") {
      centre.appendChild(el("div", "window", "Buy window: " + view.pile_top +
        " is for sale; to be asked: " + seatList(view.window.offer)));
    } else if (view.phase === "buy-permission" && view.window.asker !== null) {
      centre.appendChild(el("div", "window", "Buy window: " + seatName(view.window.asker) +
        " asks to buy " + view.pile_top + "; to allow or deny: " +
        seatList(view.window.permission)));
    }
    table.appendChild(centre);
    view.hand_sizes.forEach(function (size, seat) {
      var panel = el("div", "panel seat" + (view.to_move === seat ? " to-move" : ""));
      panel.setAttribute("data-seat", seat);
      panel.appendChild(el("h2", null, seatName(seat) + ": " + count(size, "card") +
        " \u00b7 " + (view.down[seat] ? "down" : "not down") + " \u00b7 " +
        view.buys[seat] + " of " + view.buy_limit + " buys" +
        (view.seat === seat ? " (you)" : "")));
      if (view.hands) panel.appendChild(cards(view.hands[seat], highlighted));
      else if (view.seat === seat) panel.appendChild(cards(view.hand, highlighted));
      else panel.appendChild(backs(size));
      view.melds[seat].forEach(function (meld, n) {
        var line = el("div", "meld");
        line.setAttribute("data-meld", seat + "." + n);
        line.appendChild(el("span", "label", seat + "." + n + ": " + meld.label + " "));
        line.appendChild(cards(meld.cards, highlighted));
        panel.appendChild(line);
      });
      if (!view.melds[seat].length) panel.appendChild(el("div", "meld", "no melds"));
      table.appendChild(panel);
    });
  }
  function renderNotes(step) {
    var box = document.getElementById("annotations");
    box.textContent = "";
    notesAt(step.record).forEach(function (a) {
      var note = el("div", "note");
      if (a.glyph) note.appendChild(el("span", "glyph", a.glyph));
      note.appendChild(el("strong", null, a.author + ": "));
      note.appendChild(el("span", null, a.comment));
      if (a.cards.length) note.appendChild(el("div", null, "Cards: " + a.cards.join(" ")));
      if (a.line) {
        note.appendChild(el("div", null, "What if: " + a.line.actions.join("; ")));
        note.appendChild(el("div", null, "\u2192 " + (a.line.outcome.summary || "")));
      }
      box.appendChild(note);
    });
  }
  function render() {
    var step = steps[pos];
    var highlighted = {};
    notesAt(step.record).forEach(function (a) {
      a.cards.forEach(function (c) { highlighted[c] = true; });
    });
    document.getElementById("position").textContent = "Record " + step.record + " of " +
      (steps.length - 1) + (step.hand !== null ? " \u00b7 " + NOUN + " " + shown(step.hand) : "") +
      (step.turn !== null ? " \u00b7 turn " + shown(step.turn) : "");
    document.getElementById("description").textContent = step.text;
    document.getElementById("slider").value = pos;
    document.getElementById("totals").textContent = (SEATS_ALONE
      ? "Penalty points (the lowest total wins): " : "Totals: ") + DATA.teams.map(function (t) {
      return t.name + " " + step.totals[t.team];
    }).join(" \u00b7 ");
    renderTable(step, highlighted);
    renderNotes(step);
    if (window.history && window.history.replaceState) {
      try {
        window.history.replaceState(null, "", "#record=" + step.record);
      } catch (e) { /* some browsers refuse this for file: pages */ }
    }
  }
  function go(n) { pos = Math.max(0, Math.min(steps.length - 1, n)); render(); }
  function hand(delta) {
    var current = steps[pos].hand, target = null;
    DATA.hands.forEach(function (h) {
      if (h.deal_record === null) return;
      var here = steps[pos].record;
      if (delta > 0 && h.deal_record > here && target === null) target = h.deal_record;
      if (delta < 0 && h.deal_record < here && h.hand !== current) target = h.deal_record;
    });
    if (target !== null) go(target);
  }
  // the computer analysis (canasta-replay analyze): its annotations carry their numbers in
  // "eval"; the chart adds up, per seat, the points lost in the marked moves over the match
  // the chart's <svg> is in the page, so the parser gives it the SVG namespace: the script needs
  // no namespace address (the page names no URL at all)
  var SVG = document.getElementById("loss-svg").namespaceURI;
  var COLOURS = ["#c0262d", "#234d9b", "#d98200", "#2e7d32", "#7b1fa2", "#00838f"];
  function svg(tag, attributes) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attributes).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    return node;
  }
  function renderAnalysis() {
    var rated = DATA.annotations.filter(function (a) { return a.eval; });
    if (!rated.length) return;
    document.getElementById("analysis").hidden = false;
    var W = 760, H = 240, L = 50, R = 12, T = 12, B = 28;
    var last = Math.max(1, steps[steps.length - 1].record);
    var bySeat = {}, top = 1;
    rated.forEach(function (a) {
      var list = bySeat[a.eval.seat] = bySeat[a.eval.seat] || [];
      var sum = (list.length ? list[list.length - 1].sum : 0) + a.eval.loss;
      list.push({ note: a, sum: sum });
      top = Math.max(top, sum);
    });
    function x(record) { return L + (W - L - R) * record / last; }
    function y(points) { return H - B - (H - T - B) * points / top; }
    var chart = document.getElementById("loss-svg");
    [["viewBox", "0 0 " + W + " " + H], ["width", W], ["height", H]].forEach(function (a) {
      chart.setAttribute(a[0], a[1]);
    });
    DATA.hands.forEach(function (h) {
      if (h.deal_record === null) return;
      chart.appendChild(svg("line", { x1: x(h.deal_record), x2: x(h.deal_record), y1: T,
        y2: H - B, stroke: "#c8ccc6" }));
      var label = svg("text", { x: x(h.deal_record) + 3, y: H - B + 16, "font-size": 11,
        fill: "#5f6b66" });
      label.textContent = NOUN + " " + shown(h.hand);
      chart.appendChild(label);
    });
    chart.appendChild(svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#5f6b66" }));
    chart.appendChild(svg("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: "#5f6b66" }));
    [0, top].forEach(function (v) {
      var tick = svg("text", { x: L - 4, y: y(v) + 4, "font-size": 11, "text-anchor": "end",
        fill: "#5f6b66" });
      tick.textContent = String(Math.round(v));
      chart.appendChild(tick);
    });
    var legend = document.getElementById("loss-legend");
    Object.keys(bySeat).forEach(function (key) {
      var seat = parseInt(key, 10), list = bySeat[key], colour = COLOURS[seat % COLOURS.length];
      var points = [x(0) + "," + y(0)], previous = 0;
      list.forEach(function (p) {
        points.push(x(p.note.record) + "," + y(previous));
        points.push(x(p.note.record) + "," + y(p.sum));
        previous = p.sum;
      });
      points.push(x(last) + "," + y(previous));
      chart.appendChild(svg("polyline", { points: points.join(" "), fill: "none",
        stroke: colour, "stroke-width": 2, "data-seat": seat }));
      list.forEach(function (p) {
        var dot = svg("circle", { cx: x(p.note.record), cy: y(p.sum),
          r: p.note.glyph === "??" ? 5 : p.note.glyph === "?" ? 4 : 3, fill: colour,
          "data-record": p.note.record, "data-glyph": p.note.glyph || "" });
        var title = svg("title", {});
        title.textContent = "record " + p.note.record + ": " + (p.note.glyph || "") + " " +
          seatName(seat) + " lost " + Math.round(p.note.eval.loss) + " with '" +
          p.note.eval.played + "' (best: '" + p.note.eval.best + "')";
        dot.appendChild(title);
        dot.addEventListener("click", function () { go(p.note.record); });
        chart.appendChild(dot);
      });
      var marks = { "?!": 0, "?": 0, "??": 0 };
      list.forEach(function (p) { if (p.note.glyph in marks) marks[p.note.glyph] += 1; });
      var item = el("span", "seat-loss");
      var swatch = el("span", "swatch");
      swatch.style.background = colour;
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(seatName(seat) + ": " +
        Math.round(previous) + " points lost in " + count(list.length, "marked move") +
        " (" + ["?!", "?", "??"].map(function (m) { return marks[m] + " " + m; }).join(", ") +
        ")"));
      legend.appendChild(item);
    });
    var worst = rated.slice().sort(function (a, b) {
      return b.eval.loss - a.eval.loss || a.record - b.record;
    }).slice(0, 5);
    var list = document.getElementById("worst-moves");
    worst.forEach(function (a) {
      var item = el("li", "worst");
      var link = el("a", null, "record " + a.record);
      link.href = "#record=" + a.record;
      link.addEventListener("click", function (e) { e.preventDefault(); go(a.record); });
      item.appendChild(link);
      item.appendChild(document.createTextNode(" " + (a.glyph || "") + " " +
        seatName(a.eval.seat) + ": '" + a.eval.played + "' loses " +
        Math.round(a.eval.loss) + " points to '" + a.eval.best + "'"));
      list.appendChild(item);
    });
  }
  function setup() {
    document.title = "canasta-net replay: " + DATA.log.variant + " " + DATA.log.table.slice(0, 8);
    document.getElementById("title").textContent = (SEATS_ALONE ? "May I? (" : "Canasta (") +
      DATA.log.variant + "), table " + DATA.log.table.slice(0, 16);
    document.getElementById("meta").textContent = DATA.seats.map(function (s) {
      return "seat " + s.seat + " " + s.name + (s.seat === DATA.log.host ? " (host)" : "");
    }).join(" \u00b7 ") + " \u2014 " + ({ seat: "seat " + DATA.perspective.seat + "'s view",
      public: "public view", all: "every card face up" })[DATA.perspective.kind] +
      (DATA.log.insecure ? " \u2014 insecure test seeds" : "");
    var validity = document.getElementById("validity");
    validity.className = "validity " + DATA.validity.verdict;
    validity.textContent = DATA.validity.verdict.toUpperCase() + ": " + DATA.validity.summary;
    var slider = document.getElementById("slider");
    slider.max = steps.length - 1;
    slider.addEventListener("input", function () { go(parseInt(slider.value, 10)); });
    function onClick(id, action) { document.getElementById(id).addEventListener("click", action); }
    onClick("first", function () { go(0); });
    onClick("prev", function () { go(pos - 1); });
    onClick("next", function () { go(pos + 1); });
    onClick("last", function () { go(steps.length - 1); });
    document.addEventListener("keydown", function (e) {
      if (e.target && e.target.tagName === "INPUT" && e.target.type !== "range") return;
      var keys = {
        ArrowRight: function () { go(pos + 1); }, ArrowLeft: function () { go(pos - 1); },
        Home: function () { go(0); }, End: function () { go(steps.length - 1); },
        PageDown: function () { hand(1); }, PageUp: function () { hand(-1); } };
      if (keys[e.key]) { keys[e.key](); e.preventDefault(); }
    });
    var list = document.getElementById("all-notes");
    DATA.annotations.forEach(function (a) {
      var item = el("li", null, "record " + a.record + ": " + (a.glyph ? a.glyph + " " : "") +
        a.author + ": " + a.comment);
      item.addEventListener("click", function () { go(a.record); });
      list.appendChild(item);
    });
    if (!DATA.annotations.length) list.appendChild(el("li", null, "none"));
    if (DATA.withheld_annotations) {
      list.appendChild(el("li", null, DATA.withheld_annotations +
        " annotations on a hand whose cards are not public yet are withheld from this view."));
    }
    var sheet = document.getElementById("scores");
    var head = el("tr");
    head.appendChild(el("th", null, NOUN));
    DATA.teams.forEach(function (t) { head.appendChild(el("th", null, t.name)); });
    sheet.appendChild(head);
    DATA.hands.forEach(function (h) {
      if (!h.scores) return;
      var row = el("tr");
      row.appendChild(el("td", null, shown(h.hand)));
      h.scores.forEach(function (s, t) {
        var sign = s.total >= 0 && !DATA.log.lowest_wins ? "+" : "";
        row.appendChild(el("td", null, sign + s.total + " = " + h.totals[t]));
      });
      sheet.appendChild(row);
    });
    if (DATA.result) {
      document.getElementById("result").textContent = "Result: " + DATA.result.text + ".";
    }
    renderAnalysis();
    var match = /record=(\d+)/.exec(window.location.hash || "");
    go(match ? parseInt(match[1], 10) : 0);
  }
  setup();
})();
"""

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
<section id="analysis" hidden><h2>Computer analysis: points lost in marked moves</h2>
<div id="loss-legend" class="legend meta"></div>
<div id="loss-chart"><svg id="loss-svg" role="img" aria-label="points lost per seat"></svg></div>
<h3>The costliest moves</h3><ol id="worst-moves"></ol></section>
<section><h2>Annotations</h2><ul id="all-notes"></ul></section>
<section><h2>Score sheet</h2><table id="scores" class="scores"></table>
<p id="result"></p></section>
<p class="meta">Keys: <kbd>&#x2190;</kbd> <kbd>&#x2192;</kbd> step, <kbd>Home</kbd> <kbd>End</kbd>
first and last record, <kbd>PgUp</kbd> <kbd>PgDn</kbd> previous and next hand.</p>
</main>
<script type="application/json" id="game-data">__DATA__</script>
<script>__SCRIPT__</script>
</body>
</html>
"""
