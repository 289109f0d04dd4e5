(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("game-data").textContent);
  var steps = DATA.steps, pos = 0;
  // the games differ in words and in the table only: May I? seats play alone for penalty points
  var SEATS_ALONE = DATA.log.game === "may-i";
  // the reader's language: its messages are in the data (``i18n``: msgid -> msgstr, the plural
  // forms, the language), from the same catalogue as every other text (docs/i18n.md); every
  // sentence here is marked with _() around its English text, its {names} filled by f()
  var I18N = DATA.i18n || { lang: "en", messages: {}, plurals: {} };
  function _(text) {
    var t = I18N.messages[text];
    return typeof t === "string" && t ? t : text;
  }
  function pluralIndex(n) {
    var lang = I18N.lang, m10 = n % 10, m100 = n % 100;
    if (lang === "ru") {
      return m10 === 1 && m100 !== 11 ? 0
        : m10 >= 2 && m10 <= 4 && (m100 < 10 || m100 >= 20) ? 1 : 2;
    }
    if (lang === "pl") {
      return n === 1 ? 0 : m10 >= 2 && m10 <= 4 && (m100 < 10 || m100 >= 20) ? 1 : 2;
    }
    return n === 1 ? 0 : 1;
  }
  function ngettext(singular, plural, n) {
    var forms = I18N.plurals[singular];
    if (forms && forms[pluralIndex(n)]) return forms[pluralIndex(n)];
    return n === 1 ? singular : plural;
  }
  function f(text, values) {
    return text.replace(/\{(\w+)\}/g, function (m, k) {
      return Object.prototype.hasOwnProperty.call(values, k) ? String(values[k]) : m;
    });
  }
  var SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function cardCount(n) { return f(ngettext("{n} card", "{n} cards", n), { n: n }); }
  function handName(number) {
    return f(SEATS_ALONE ? _("deal {n}") : _("hand {n}"), { n: shown(number) });
  }
  var PHASES = { draw: _("draw"), play: _("play"), "pile-pending": _("pile-pending"),
    asked: _("asked"), over: _("over"), "buy-offer": _("buy-offer"),
    "buy-permission": _("buy-permission") };
  function phaseName(phase) { return PHASES[phase] || phase; }
  // the data numbers hands, turns and deals from 0 as the log does; people count them from 1
  function shown(number) { return number + 1; }
  function seatName(seat) {
    var s = DATA.seats[seat];
    return s ? f(_("seat {seat} ({name})"), { seat: seat, name: s.name })
      : f(_("seat {seat}"), { seat: seat });
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
      var nothing = SEATS_ALONE
        ? (step.pending ? _("This copy of the log cannot show this deal: its seeds are not " +
          "published in it.") : _("No deal is on the table."))
        : (step.pending ? _("This copy of the log cannot show this hand: its seeds are not " +
          "published in it.") : _("No hand is on the table."));
      table.appendChild(el("div", "panel wide", nothing));
      return;
    }
    if (SEATS_ALONE) { renderSeatsTable(step, view, table, highlighted); return; }
    var centre = el("div", "panel wide centre");
    centre.appendChild(el("h2", null, f(_("Hand {n} \u00b7 turn {turn} \u00b7 dealer {seat}"),
      { n: shown(step.hand), turn: shown(step.turn), seat: seatName(view.dealer) }) +
      " \u00b7 " + (view.to_move === null ? _("the hand is over")
        : f(_("{seat} to move ({phase})"), { seat: seatName(view.to_move),
          phase: phaseName(view.phase) }))));
    var pileLine = el("div", "pile", f(_("Stock: {stock} \u00b7 Pile: {pile}"),
      { stock: cardCount(view.stock_size), pile: cardCount(view.pile_size) }) +
      (view.pile_frozen ? " " + _("(frozen)") : "") + " \u00b7 " + _("top") + " ");
    if (view.pile_top) pileLine.appendChild(card(view.pile_top, highlighted));
    else pileLine.appendChild(el("span", null, _("none")));
    centre.appendChild(pileLine);
    if (view.pile) {
      var full = el("div", "pile-all", _("Pile, bottom to top:") + " ");
      full.appendChild(cards(view.pile, highlighted));
      centre.appendChild(full);
    }
    table.appendChild(centre);
    DATA.teams.forEach(function (team) {
      var panel = el("div", "panel team");
      var opened = view.opened[team.team] ? _("opened") : _("not opened");
      panel.appendChild(el("h2", null, f(_("{team}: {opened} (minimum {minimum})"),
        { team: team.name, opened: opened, minimum: view.minimums[team.team] })));
      var reds = [];
      team.seats.forEach(function (s) { reds = reds.concat(view.red_threes[s]); });
      if (reds.length) {
        var r = el("div", "reds", _("Red threes:") + " ");
        r.appendChild(cards(reds, highlighted));
        panel.appendChild(r);
      }
      view.melds[team.team].forEach(function (meld, n) {
        var line = el("div", "meld");
        line.appendChild(el("span", "label", n + ": " + meld.label));
        line.appendChild(cards(meld.cards, highlighted));
        if (meld.canasta) {
          line.appendChild(el("span", "canasta", meld.canasta === "natural"
            ? _("natural canasta") : meld.canasta === "mixed" ? _("mixed canasta")
            : meld.canasta + " canasta"));
        }
        panel.appendChild(line);
      });
      if (!view.melds[team.team].length) panel.appendChild(el("div", "meld", _("no melds")));
      table.appendChild(panel);
    });
    view.hand_sizes.forEach(function (size, seat) {
      var panel = el("div", "panel seat" + (view.to_move === seat ? " to-move" : ""));
      panel.setAttribute("data-seat", seat);
      panel.appendChild(el("h2", null, seatName(seat) + ": " + cardCount(size) +
        (view.seat === seat ? " " + _("(you)") : "")));
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
    centre.appendChild(el("h2", null, f(_("Deal {n} \u00b7 contract {contract}"),
      { n: shown(view.deal), contract: view.contract }) +
      (view.discard_out ? "" : " " + _("(the last card must be melded)")) + " \u00b7 " +
      f(_("turn {turn} \u00b7 dealer {seat}"), { turn: shown(step.turn),
        seat: seatName(view.dealer) }) + " \u00b7 " +
      (view.to_move === null ? _("the deal is over")
        : f(_("{seat} to move ({phase})"), { seat: seatName(view.to_move),
          phase: phaseName(view.phase) }))));
    var pileLine = el("div", "pile", f(_("Stock: {stock}"), { stock: cardCount(view.stock_size) }) +
      (view.turnovers ? " " + f(ngettext("(the pile turned over {n} time)",
        "(the pile turned over {n} times)", view.turnovers), { n: view.turnovers }) : "") +
      " \u00b7 " + f(_("Discard pile: {pile}"), { pile: cardCount(view.pile.length) }) +
      " \u00b7 " + _("top") + " ");
    if (view.pile_top) pileLine.appendChild(card(view.pile_top, highlighted));
    else pileLine.appendChild(el("span", null, _("none")));
    centre.appendChild(pileLine);
    var full = el("div", "pile-all", _("Discard pile, bottom to top:") + " ");
    full.appendChild(cards(view.pile, highlighted));
    centre.appendChild(full);
    if (view.stock) {
      var stock = el("div", "stock-all", _("Stock, next card last:") + " ");
      stock.appendChild(cards(view.stock, highlighted));
      centre.appendChild(stock);
    }
    if (view.phase === "buy-offer") {
      centre.appendChild(el("div", "window", f(_("Buy window: {card} is for sale; to be " +
        "asked: {seats}"), { card: view.pile_top, seats: seatList(view.window.offer) })));
    } else if (view.phase === "buy-permission" && view.window.asker !== null) {
      centre.appendChild(el("div", "window", "Buy window: " + seatName(view.window.asker) +
        " asks to buy " + view.pile_top + "; to allow or deny: " +
        seatList(view.window.permission)));
    }
    table.appendChild(centre);
    view.hand_sizes.forEach(function (size, seat) {
      var panel = el("div", "panel seat" + (view.to_move === seat ? " to-move" : ""));
      panel.setAttribute("data-seat", seat);
      panel.appendChild(el("h2", null, seatName(seat) + ": " + cardCount(size) +
        " \u00b7 " + (view.down[seat] ? _("down") : _("not down")) + " \u00b7 " +
        f(_("{n} of {limit} buys"), { n: view.buys[seat], limit: view.buy_limit }) +
        (view.seat === seat ? " " + _("(you)") : "")));
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
      if (!view.melds[seat].length) panel.appendChild(el("div", "meld", _("no melds")));
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
      if (a.cards.length) {
        note.appendChild(el("div", null, f(_("Cards: {cards}"), { cards: a.cards.join(" ") })));
      }
      if (a.line) {
        note.appendChild(el("div", null, f(_("What if: {line}"),
          { line: a.line.actions.join("; ") })));
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
    document.getElementById("position").textContent =
      f(_("Record {record} of {last}"), { record: step.record, last: steps.length - 1 }) +
      (step.hand !== null ? " \u00b7 " + handName(step.hand) : "") +
      (step.turn !== null ? " \u00b7 " + f(_("turn {n}"), { n: shown(step.turn) }) : "");
    document.getElementById("description").textContent = step.text;
    document.getElementById("slider").value = pos;
    var totals = DATA.teams.map(function (t) {
      return t.name + " " + step.totals[t.team];
    }).join(" \u00b7 ");
    document.getElementById("totals").textContent = f(SEATS_ALONE
      ? _("Penalty points (the lowest total wins): {totals}") : _("Totals: {totals}"),
      { totals: totals });
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
      label.textContent = handName(h.hand);
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
        title.textContent = f(_("record {record}: {glyph} {seat} lost {loss} with " +
          "'{played}' (best: '{best}')"), { record: p.note.record, glyph: p.note.glyph || "",
          seat: seatName(seat), loss: Math.round(p.note.eval.loss), played: p.note.eval.played,
          best: p.note.eval.best });
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
      item.appendChild(document.createTextNode(f(ngettext(
        "{seat}: {points} points lost in {n} marked move ({marks})",
        "{seat}: {points} points lost in {n} marked moves ({marks})", list.length), {
        seat: seatName(seat), points: Math.round(previous), n: list.length,
        marks: ["?!", "?", "??"].map(function (m) { return marks[m] + " " + m; }).join(", ") })));
      legend.appendChild(item);
    });
    var worst = rated.slice().sort(function (a, b) {
      return b.eval.loss - a.eval.loss || a.record - b.record;
    }).slice(0, 5);
    var list = document.getElementById("worst-moves");
    worst.forEach(function (a) {
      var item = el("li", "worst");
      var link = el("a", null, f(_("record {record}"), { record: a.record }));
      link.href = "#record=" + a.record;
      link.addEventListener("click", function (e) { e.preventDefault(); go(a.record); });
      item.appendChild(link);
      item.appendChild(document.createTextNode(" " + (a.glyph || "") + " " +
        f(_("{seat}: '{played}' loses {loss} points to '{best}'"), { seat: seatName(a.eval.seat),
          played: a.eval.played, loss: Math.round(a.eval.loss), best: a.eval.best })));
      list.appendChild(item);
    });
  }
  function translateTemplate() {
    [["h-analysis", _("Computer analysis: points lost in marked moves")],
      ["h-costliest", _("The costliest moves")], ["h-annotations", _("Annotations")],
      ["h-scores", _("Score sheet")]].forEach(function (pair) {
      document.getElementById(pair[0]).textContent = pair[1];
    });
    document.getElementById("keys").textContent = _("Keys: \u2190 \u2192 step, Home End " +
      "first and last record, PgUp PgDn previous and next hand.");
  }
  function setup() {
    document.documentElement.lang = I18N.lang;
    document.title = f(_("canasta-net replay: {variant} {table}"),
      { variant: DATA.log.variant, table: DATA.log.table.slice(0, 8) });
    document.getElementById("title").textContent = f(SEATS_ALONE
      ? _("May I? ({variant}), table {table}") : _("Canasta ({variant}), table {table}"),
      { variant: DATA.log.variant, table: DATA.log.table.slice(0, 16) });
    var views = { seat: f(_("seat {seat}'s view"), { seat: DATA.perspective.seat }),
      public: _("public view"), all: _("every card face up") };
    document.getElementById("meta").textContent = DATA.seats.map(function (s) {
      return f(_("seat {seat} {name}"), { seat: s.seat, name: s.name }) +
        (s.seat === DATA.log.host ? " " + _("(host)") : "");
    }).join(" \u00b7 ") + " \u2014 " + views[DATA.perspective.kind] +
      (DATA.log.insecure ? " \u2014 " + _("insecure test seeds") : "");
    var validity = document.getElementById("validity");
    validity.className = "validity " + DATA.validity.verdict;
    var verdicts = { valid: _("VALID"), incomplete: _("INCOMPLETE"), invalid: _("INVALID") };
    validity.textContent = (verdicts[DATA.validity.verdict] ||
      DATA.validity.verdict.toUpperCase()) + ": " + DATA.validity.summary;
    // the page's fixed texts (the template's English) in the reader's language
    if (I18N.lang !== "en") translateTemplate();

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
      var item = el("li", null, f(_("record {record}"), { record: a.record }) + ": " +
        (a.glyph ? a.glyph + " " : "") + a.author + ": " + a.comment);
      item.addEventListener("click", function () { go(a.record); });
      list.appendChild(item);
    });
    if (!DATA.annotations.length) list.appendChild(el("li", null, _("none")));
    if (DATA.withheld_annotations) {
      list.appendChild(el("li", null, f(ngettext("{n} annotations on a hand whose cards are not " +
        "public yet are withheld from this view.", "{n} annotations on a hand whose cards are " +
        "not public yet are withheld from this view.", DATA.withheld_annotations),
        { n: DATA.withheld_annotations })));
    }
    var sheet = document.getElementById("scores");
    var head = el("tr");
    head.appendChild(el("th", null, SEATS_ALONE ? _("deal") : _("hand")));
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
      document.getElementById("result").textContent = f(_("Result: {text}."),
        { text: DATA.result.text });
    }
    renderAnalysis();
    var match = /record=(\d+)/.exec(window.location.hash || "");
    go(match ? parseInt(match[1], 10) : 0);
  }
  setup();
})();
