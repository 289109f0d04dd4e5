// The player's page: draws the snapshot the player's own process sends (docs/ui-model.md) and
// sends the person's moves back. It decides no rule: the legal moves, values and frozen states
// all come from the snapshot. Every text from the snapshot is inserted with textContent.
"use strict";

(function () {
  const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  const MAY_I = "may-i";
  // a move on its way greys the buttons after this long without an answer (ms): a quick answer
  // (some milliseconds on loopback) comes without a flash of grey
  const SENDING_SHOWN_MS = 100;

  // ------------------------------------------------------------------ the reader's language
  // The catalogue of this client's language comes from the page's server (GET /i18n.json, made
  // from the same gettext catalogue as the terminal's: docs/i18n.md); every sentence of the page
  // is written _("English text") and its {names} filled by f(). Cards and moves stay canonical
  // in the data (data-card, data-action); only their shown text is in the reader's notation.
  const catalog = { lang: "en", messages: {}, ranks: {}, joker: "Jkr", languages: {} };
  function _(text) {
    const t = catalog.messages[text];
    return typeof t === "string" && t ? t : text;
  }
  function f(text, values) {
    return text.replace(/\{(\w+)\}/g, function (m, k) {
      return Object.prototype.hasOwnProperty.call(values, k) ? String(values[k]) : m;
    });
  }
  function cardLabel(text) {
    if (text === "JK") return catalog.joker;
    const suit = text.slice(-1);
    const rank = text.slice(0, -1);
    return (catalog.ranks[rank] || rank) + (SUITS[suit] || suit);
  }
  // a move's text with its cards as the reader writes them (its verb stays canonical)
  function moveLabel(text) {
    if (catalog.lang === "en") return text;
    return String(text).split(" ").map(function (w, i) {
      return i && /^(10|[2-9AJQK])[CDHS]$|^JK$/.test(w) ? cardLabel(w) : w;
    }).join(" ");
  }
  // the engine's name of a meld (Ks, 3s (black), wild cards, 5-9H run; May I?: set of Ks, 4-7 of
  // H) in the reader's words
  function meldLabel(label) {
    if (catalog.lang === "en") return label;
    const rank = /^(10|[2-9AJQK])s$/.exec(label);
    if (rank) return catalog.ranks[rank[1]] || rank[1];
    const run = /^(\w+)-(\w+)([CDHS]) run$/.exec(label);
    if (run) {
      return f(_("{cards} run"), { cards: cardLabel(run[1] + run[3]) + "-" + cardLabel(run[2] + run[3]) });
    }
    // May I?'s melds (mayi/melds.py: "set of Ks", "4-7 of H")
    const set = /^set of (10|[2-9AJQK])s$/.exec(label);
    if (set) return f(_("set of {rank}"), { rank: catalog.ranks[set[1]] || set[1] });
    const seq = /^(10|[2-9AJQK])-(10|[2-9AJQK]) of ([CDHS])$/.exec(label);
    if (seq) {
      return f(_("sequence {cards}"), { cards: cardLabel(seq[1] + seq[3]) + "-" + cardLabel(seq[2] + seq[3]) });
    }
    return _(label);
  }
  async function loadCatalog(lang) {
    try {
      const answer = await fetch("/i18n.json?lang=" + encodeURIComponent(lang || ""), {
        credentials: "same-origin", cache: "no-store",
      });
      if (!answer.ok) return;
      const data = await answer.json();
      catalog.lang = data.lang;
      catalog.messages = data.messages || {};
      catalog.ranks = data.ranks || {};
      catalog.joker = data.joker || "Jkr";
      catalog.languages = data.languages || {};
    } catch (e) {
      return;
    }
    document.documentElement.lang = catalog.lang;
    translateStatic();
    for (const key of Object.keys(drawnKeys)) delete drawnKeys[key];
    render();
  }
  // The page's fixed texts (index.html holds them in English, for a page without its script).
  const STATIC_TEXTS = [
    ["#events-title", N_("What happened")],
    ["#chat button", N_("Send")],
    ["#watching-title", N_("Watching")],
    ["#legal-title", N_("Legal moves")],
    ["#legal-note", N_("Every move the engine allows now; click one to play it.")],
    ["#next-hand", N_("Next hand")],
    ["#sheet-close", N_("Look at the table")],
    ["#sheet-leave", N_("Close the page")],
    ["#keys", N_("Click cards to select them (or \u2190 \u2192 and Space), then a button; Enter plays the highlighted button, Esc clears the selection. To add to a meld, select cards and click the meld.")],
  ];
  function N_(text) { return text; } // marks a text for the catalogue; translated where shown
  function translateStatic() {
    STATIC_TEXTS.forEach(function (pair) {
      const node = document.querySelector(pair[0]);
      if (node) node.textContent = _(pair[1]);
    });
    $("chat-text").placeholder = _("Say something to the table");
    const select = $("lang");
    if (select) {
      clear(select);
      Object.keys(catalog.languages).forEach(function (code) {
        const option = el("option", null, catalog.languages[code]);
        option.value = code;
        option.selected = code === catalog.lang;
        select.appendChild(option);
      });
    }
  }
  async function chooseLanguage(lang) {
    const answer = await post("/lang", { lang: lang });
    if (!answer.ok) showHint(answer.error);
  }

  const page = {
    snap: null,
    selected: new Set(), // indices into snap.hand
    staged: [], // May I?: groups (lists of hand indices) staged for the contract
    cursor: 0,
    clearOnHandChange: false, // a move was sent: forget the selection once the hand changes
    sending: false, // a move was posted and no snapshot came since
    sentPast: null, // the server's count of moves taken (``moves``) when the move in flight went
    greying: null, // the timer that greys the buttons while a move is on its way
    localError: null, // {tried, message}: the server's answer to a POST, when it said no
    closed: false, // the person closed the page after the table
    teams: {}, // seat -> team, as last seen (the seats carry none between hands)
    dismissedSheet: null, // the hand whose score sheet the person closed
    readyFor: null, // the hand after whose sheet the person said "next hand"
    defaultButton: null,
    eventLines: [], // the lines the list of what happened shows
    // the searching bot's suggestion for the open prompt: {legal, pending} while it thinks,
    // then {legal, action, label, reason, cards}; dropped when the prompt changes
    suggestion: null,
  };

  // ------------------------------------------------------------------ small helpers
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function clear(node) { node.textContent = ""; return node; }
  // Draw ``nodes`` as ``box``'s children, keeping those it shows already that are the same (by
  // their markup: a button's is its move, its label and its class): a snapshot comes while a
  // person presses a button (another player's move, a chat line, a watcher), and a button
  // replaced between its press and its release gets no click at all: the move was lost. The
  // nodes put in its place are returned (in order).
  function keepSame(box, nodes) {
    const shown = new Map();
    Array.from(box.childNodes).forEach(function (node) {
      const key = markup(node);
      if (!shown.has(key)) shown.set(key, []);
      shown.get(key).push(node);
    });
    const drawn = nodes.map(function (node) {
      const same = shown.get(markup(node));
      return same && same.length ? same.shift() : node;
    });
    const keep = new Set(drawn);
    Array.from(box.childNodes).forEach(function (node) { if (!keep.has(node)) node.remove(); });
    // the kept nodes stay where they are (a node moved is taken out first, as a replaced one)
    drawn.forEach(function (node, i) {
      if (box.childNodes[i] !== node) box.insertBefore(node, box.childNodes[i] || null);
    });
    return drawn;
  }
  function markup(node) { return node.nodeType === 1 ? node.outerHTML : "#" + node.textContent; }
  function isMayI(snap) { return snap.game === MAY_I; }
  function seatName(snap, seat) {
    const row = (snap.seats || [])[seat];
    return row ? row.name : f(_("seat {seat}"), { seat: seat });
  }

  function cardNode(text, opts) {
    const o = opts || {};
    const node = el("span", "card" + (o.big ? " big" : ""));
    node.dataset.card = text;
    node.title = cardLabel(text);
    if (text === "JK") {
      node.classList.add("joker");
      node.appendChild(el("span", "rank", catalog.joker));
      if (o.big) node.appendChild(el("span", "suit", "\u2605"));
      return node;
    }
    const suit = text.slice(-1);
    const rank = text.slice(0, -1);
    if (suit === "D" || suit === "H") node.classList.add("red");
    const shown = catalog.ranks[rank] || rank;
    if (o.big) {
      node.appendChild(el("span", "rank", shown));
      node.appendChild(el("span", "suit", SUITS[suit] || suit));
    } else {
      node.textContent = shown + (SUITS[suit] || suit);
    }
    return node;
  }
  function cardRow(list) {
    const span = el("span", "cards");
    list.forEach(function (c) { span.appendChild(cardNode(c)); });
    return span;
  }
  function cardsText(list) { return list.join(" "); }
  function cardsLabel(list) { return list.map(cardLabel).join(" "); }

  // A move's text in a form where the order of its cards does not matter, so the page can tell
  // whether what the selection builds is one of the legal moves (and send the canonical text).
  function moveKey(text) {
    const body = text.trim().replace(/\s+/g, " ");
    const tokens = body.split(" ");
    const verb = tokens[0];
    if (verb === "meld" && body.indexOf("|") >= 0) {
      const groups = body.slice(5).split("|").map(function (g) {
        return g.trim().split(" ").sort().join(" ");
      });
      return "meld " + groups.sort().join(" | ");
    }
    let rest = tokens.slice(1);
    let head = [];
    let tail = [];
    if (verb === "add" || verb === "merge" || verb === "take-top") {
      head = rest.slice(0, 1);
      rest = rest.slice(1);
    }
    const onto = rest.indexOf("onto");
    if (onto >= 0) {
      tail = rest.slice(onto);
      rest = rest.slice(0, onto);
    }
    return [verb].concat(head, rest.slice().sort(), tail).join(" ");
  }
  const legalKeys = new WeakMap(); // snapshot -> Map(moveKey -> legal move), made once
  function legalMatch(snap, text) {
    let keys = legalKeys.get(snap);
    if (!keys) {
      keys = new Map();
      for (const legal of snap.legal || []) {
        const key = moveKey(legal);
        if (!keys.has(key)) keys.set(key, legal);
      }
      legalKeys.set(snap, keys);
    }
    return keys.get(moveKey(text)) || null;
  }

  // ------------------------------------------------------------------ talking to the peer
  async function post(path, body) {
    try {
      const answer = await fetch(path, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        credentials: "same-origin",
        cache: "no-store",
      });
      let data = null;
      try { data = await answer.json(); } catch (e) { data = null; }
      if (data && data.ok) return { ok: true, data: data };
      const why = data && typeof data.error === "string" ? data.error
        : f(_("the page's server answered {status}"), { status: answer.status });
      return { ok: false, error: why };
    } catch (e) {
      return { ok: false, error: _("the page lost its connection to your canasta process") };
    }
  }

  // The moves go over one WebSocket (GET /ws), opened once: a fetch per move cost the browser
  // several milliseconds of request setup each time (docs/web-client.md). A move refused at once
  // is answered on it; an accepted one is not (the next snapshot shows it). While the socket is
  // down (it reopens after a second), a move goes by POST /act.
  const moves = { socket: null, sentOn: null }; // sentOn: the socket of the move in flight
  function openMoveSocket() {
    if (page.closed) return;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    let socket = null;
    try { socket = new WebSocket(scheme + location.host + "/ws"); } catch (e) { return; }
    socket.addEventListener("message", function (e) {
      let answer = null;
      try { answer = JSON.parse(e.data); } catch (err) { return; }
      if (!answer || answer.ok !== false) return;
      page.localError = { tried: answer.tried || document.body.dataset.sent || "",
        message: String(answer.error) };
      endSending();
      render();
    });
    socket.addEventListener("close", function () {
      if (moves.socket === socket) moves.socket = null;
      if (page.sending && moves.sentOn === socket) {
        // the move may not have reached the seat, and then no snapshot comes: the buttons work
        // again (while it waits for one, the page takes no click), and the person is told; a
        // move that did arrive shows in the next snapshot (a second one is refused)
        page.localError = { tried: document.body.dataset.sent || "",
          message: _("the page lost its connection to your canasta process") };
        endSending();
        render();
      }
      const over = page.snap && (page.snap.finished || page.snap.match_end);
      if (!page.closed && !over) setTimeout(openMoveSocket, 1000);
    });
    moves.socket = socket;
  }

  // The move goes to the seat; until the next snapshot the page takes no other move, and its
  // buttons are greyed if that takes long (a class, not a redraw: the server holds its "move
  // sent" snapshot a moment, since the table's answer comes first on a quick table, and the
  // page's main thread is left free for that answer).
  async function act(text) {
    if (!page.snap || page.sending) return;
    page.localError = null;
    page.clearOnHandChange = true;
    page.sending = true;
    page.sentPast = typeof page.snap.moves === "number" ? page.snap.moves : null;
    document.body.dataset.sent = text;
    // greyed at once, the buttons were restyled in the click's frame and again at the answer
    // (some milliseconds later), inside its render (its first read of the layout): 0.5 ms of
    // its 2 ms p50 (scripts/bench_web.py)
    clearTimeout(page.greying);
    page.greying = setTimeout(function () {
      if (page.sending) $("me").classList.add("sending");
    }, SENDING_SHOWN_MS);
    const socket = moves.socket;
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({ action: text }));
      moves.sentOn = socket;
      return;
    }
    const answer = await post("/act", { action: text });
    if (!answer.ok) {
      page.localError = { tried: text, message: answer.error };
      endSending();
      render();
    }
  }
  function endSending() {
    moves.sentOn = null;
    page.sentPast = null;
    if (!page.sending) return;
    page.sending = false;
    clearTimeout(page.greying);
    $("me").classList.remove("sending");
  }

  // The page's Suggest: the server searches in a worker process and answers when it is done
  // (about half a second); the page goes on meanwhile.
  async function askSuggestion() {
    const snap = page.snap;
    if (!snap || (page.suggestion && page.suggestion.pending)) return;
    const legal = (snap.legal || []).join("\n");
    page.suggestion = { legal: legal, pending: true };
    render();
    const answer = await post("/suggest", {});
    const now = page.snap;
    if (!page.suggestion || !now || (now.legal || []).join("\n") !== legal) return; // moved on
    if (!answer.ok) {
      page.suggestion = null;
      showHint(answer.error);
      return;
    }
    const data = answer.data;
    page.suggestion = {
      legal: legal, action: data.action, label: data.label, reason: data.reason,
      cards: data.cards || [],
    };
    render();
  }
  function suggestedIndices(snap) {
    const marked = new Set();
    const s = page.suggestion;
    if (!s || s.pending) return marked;
    const cards = handCards(snap);
    (s.cards || []).forEach(function (card) {
      const i = cards.findIndex(function (c, k) { return c === card && !marked.has(k); });
      if (i >= 0) marked.add(i);
    });
    return marked;
  }

  async function simplePost(path, body, what) {
    const answer = await post(path, body);
    if (!answer.ok) {
      page.localError = { tried: what, message: answer.error };
      render();
    }
    return answer.ok;
  }

  // ------------------------------------------------------------------ selection
  function handCards(snap) { return (snap.hand || []).map(function (h) { return h.card; }); }
  function stagedIndices() {
    const all = new Set();
    page.staged.forEach(function (g) { g.forEach(function (i) { all.add(i); }); });
    return all;
  }
  function selectedCards(snap) {
    const cards = handCards(snap);
    return Array.from(page.selected).sort(function (a, b) { return a - b; })
      .map(function (i) { return cards[i]; });
  }
  // The hand changed: keep the selected and staged cards that are still there (by their text).
  function remapSelection(oldCards, newCards) {
    const used = new Set();
    function find(card) {
      for (let i = 0; i < newCards.length; i++) {
        if (newCards[i] === card && !used.has(i)) { used.add(i); return i; }
      }
      return -1;
    }
    const staged = page.staged.map(function (group) {
      return group.map(function (i) { return find(oldCards[i]); })
        .filter(function (i) { return i >= 0; });
    }).filter(function (g) { return g.length; });
    const selected = new Set();
    page.selected.forEach(function (i) {
      const j = find(oldCards[i]);
      if (j >= 0) selected.add(j);
    });
    page.staged = staged;
    page.selected = selected;
  }
  function toggle(index) {
    if (stagedIndices().has(index)) return;
    if (page.selected.has(index)) page.selected.delete(index);
    else page.selected.add(index);
    page.cursor = index;
    render();
  }
  function clearSelection() {
    page.selected = new Set();
    page.staged = [];
    render();
  }

  // ------------------------------------------------------------------ the snapshot arrives
  function onSnapshot(snap) {
    if (!snap || snap.v !== 1) return;
    const old = page.snap;
    if (old && snap.version < old.version && snap.role === old.role) return; // a stale one
    const oldCards = old ? handCards(old) : [];
    const newCards = handCards(snap);
    if (oldCards.join(" ") !== newCards.join(" ")) {
      if (page.clearOnHandChange) {
        page.selected = new Set();
        page.staged = [];
        page.clearOnHandChange = false;
      } else {
        remapSelection(oldCards, newCards);
      }
      page.cursor = Math.min(page.cursor, Math.max(0, newCards.length - 1));
    }
    if (snap.refusal) page.clearOnHandChange = false;
    // a snapshot the server made before the move in flight reached it (another player's move or
    // a chat line, on its way meanwhile) is drawn, and the page still waits for the move's answer:
    // ending there showed the old question again, and a second click was "not your turn"
    const madeBefore = page.sending && page.sentPast !== null && typeof snap.moves === "number"
      && snap.moves <= page.sentPast;
    if (!madeBefore) endSending();
    // a new question: the page's own last complaint (a POST the server refused) is old news
    const legal = (snap.legal || []).join("\n");
    if (legal && (!old || (old.legal || []).join("\n") !== legal)) page.localError = null;
    if (page.suggestion && page.suggestion.legal !== legal) page.suggestion = null;
    page.snap = snap;
    if (snap.lang && snap.lang !== catalog.lang) {
      loadCatalog(snap.lang); // draws once the catalogue is there
      return;
    }
    render();
  }

  // ------------------------------------------------------------------ drawing
  const drawnKeys = {};
  function once(part, inputs, draw, snap) {
    const key = JSON.stringify(inputs);
    if (drawnKeys[part] === key) return;
    drawnKeys[part] = key;
    if (!guarded(part, draw, snap)) drawnKeys[part] = null; // tried again with the next one
  }
  // One part of the page that cannot be drawn (a fault of this page's) must not stop the
  // others: the whole render stopped there, the table stood still on the last snapshot drawn
  // and the person's clicks seemed to do nothing. The fault goes to the console, and on the
  // body (``data-render-error``) for the tests.
  function guarded(part, draw, snap) {
    try {
      draw(snap);
      return true;
    } catch (e) {
      document.body.dataset.renderError = part + ": " + String(e && e.stack || e);
      console.error("the page could not draw its " + part + ":", e);
      return false;
    }
  }

  function render() {
    const snap = page.snap;
    if (!snap || page.closed) return;
    const started = performance.now();
    const state = snap.state || {};
    const events = snap.events || [];
    const eventsKey = [events.length, events[0], events[events.length - 1]];
    // read before anything changes the page, while its layout is the last frame's (cheap)
    const eventsAtBottom = drawnKeys.events !== JSON.stringify(eventsKey) && eventsScrolledDown();
    const selection = Array.from(page.selected).join(",");
    // each part is redrawn only when what it shows changed (a snapshot comes after every move)
    // the header names the sides: the seats' names and teams, not their cards (every move)
    once("header", [catalog.lang, snap.game, snap.variant, snap.table, snap.hand_no, state.contract,
      snap.scores, snap.score_names, snap.target, snap.seat, (snap.seats || []).map(function (s) {
        return [s.name, s.team];
      })], renderHeader, snap);
    once("seats", [snap.game, snap.seats, snap.last_move, state.down, state.buys, state.buy_limit],
      renderSeats, snap);
    once("pile", [snap.pile, state.window, Boolean(snap.state), Boolean(snap.hand_end)],
      renderPile, snap);
    once("last", [snap.last_move], renderLastMove, snap);
    // the melds change with the table; the legal moves (new after every move) only through
    // those that name a meld or add to one
    once("sides", [snap.game, snap.sides, state.melds, canAddToMelds(snap), meldMoves(snap),
      selection], isMayI(snap) ? renderMayISeats : renderSides, snap);
    guarded("me", renderMe, snap);
    once("events", eventsKey, function () { renderEvents(snap, eventsAtBottom); }, snap);
    once("watchers", [catalog.lang, snap.watchers, snap.finished, snap.match_end,
      snap.host_fingerprint, snap.watch_command], renderWatchers, snap);
    once("legal", [snap.legal], renderLegal, snap);
    once("lobby", [snap.lobby], renderLobby, snap);
    once("sheet", [snap.hand_end, snap.match_end, snap.history, snap.finished, snap.outcome,
      snap.role, snap.seat, snap.scores, snap.target, page.dismissedSheet, page.readyFor],
    renderSheet, snap);
    document.body.dataset.version = String(snap.version);
    document.body.dataset.role = snap.role;
    document.body.dataset.renderMs = (performance.now() - started).toFixed(2); // the benchmark's
    document.body.dataset.hand = handCards(snap).join(" "); // last: the benchmark watches it
  }

  function sideNames(snap, side) {
    if (isMayI(snap)) return [seatName(snap, side)];
    // between hands the seats carry no team: the teams seen during the hand still hold
    (snap.seats || []).forEach(function (s) {
      if (s.team !== null && s.team !== undefined) page.teams[s.seat] = s.team;
    });
    return (snap.seats || []).filter(function (s) { return page.teams[s.seat] === side; })
      .map(function (s) { return s.name; });
  }
  // the names a score counts for: the rules' teams, as the snapshot lists them (in the lobby
  // and between hands too, where the seats carry no team), else the teams seen in the hand
  function scoreNames(snap, side) {
    const listed = ((snap.score_names || [])[side] || []).filter(Boolean);
    return listed.length ? listed : sideNames(snap, side);
  }
  function yourSide(snap) {
    if (snap.seat === null || snap.seat === undefined) return null;
    if (isMayI(snap)) return snap.seat;
    const row = (snap.seats || [])[snap.seat];
    return row ? row.team : null;
  }

  function renderHeader(snap) {
    const state = snap.state || {};
    const parts = [isMayI(snap) ? _("May I?") : _("Canasta")];
    if (snap.variant) parts.push(snap.variant);
    if (snap.table) parts.push(f(_("table {name}"), { name: snap.table }));
    parts.push(f(isMayI(snap) ? _("deal {number}") : _("hand {number}"), { number: snap.hand_no }));
    if (isMayI(snap) && state.contract) {
      parts.push(f(_("contract: {contract}"), { contract: snap.contract || state.contract }));
    }
    $("game-line").textContent = parts.join(" \u00b7 ");
    document.title = "canasta-net \u00b7 " + parts.slice(0, 2).join(" ");
    const line = clear($("score-line"));
    const mine = yourSide(snap);
    (snap.scores || []).forEach(function (score, side) {
      const names = scoreNames(snap, side);
      const chip = el("span", "score" + (side === mine ? " yours" : ""),
        (names.length ? names.join(" & ") : f(isMayI(snap) ? _("seat {seat}") : _("team {team}"),
          { seat: side, team: side })) + ": " + score);
      chip.dataset.side = String(side);
      line.appendChild(chip);
    });
    if (snap.target) {
      line.appendChild(el("span", "score target", f(_("target {target}"), { target: snap.target })));
    } else if (isMayI(snap)) line.appendChild(el("span", "score target", _("lowest total wins")));
  }

  // Each seat's box is kept from one snapshot to the next and redrawn only when what it shows
  // changed (a move changes one or two seats: the mover's cards, whose turn it is).
  const seatKeys = [];
  function renderSeats(snap) {
    const row = $("seats");
    const moved = snap.last_move ? snap.last_move.seat : null;
    const state = snap.state || {};
    const seats = snap.seats || [];
    seats.forEach(function (s, i) {
      const key = JSON.stringify([catalog.lang, snap.game, s, s.seat === moved,
        state.down ? state.down[s.seat] : null, state.buys ? state.buys[s.seat] : null,
        state.buy_limit]);
      let box = row.children[i];
      if (box && seatKeys[i] === key) return;
      seatKeys[i] = key;
      if (!box) {
        box = el("div", "seat");
        row.appendChild(box);
      }
      drawSeat(snap, s, box, moved, state);
    });
    while (row.children.length > seats.length) row.lastElementChild.remove();
    seatKeys.length = seats.length;
  }
  function drawSeat(snap, s, box, moved, state) {
    box.dataset.seat = String(s.seat);
    box.classList.toggle("you", Boolean(s.you));
    box.classList.toggle("to-move", Boolean(s.to_move));
    box.classList.toggle("moved", s.seat === moved);
    box.classList.toggle("gone", Boolean(s.left || !s.connected));
    box.classList.toggle("open", s.taken === false);
    setText(part(box, "name", "div"), s.name + (s.you && s.name !== "you" ? " " + _("(you)") : ""));
    const info = [];
    if (s.taken === false) info.push(_("waiting for a player"));
    if (s.bot) info.push(_("bot"));
    if (s.team !== null && s.team !== undefined && !isMayI(snap)) {
      info.push(f(_("team {team}"), { team: s.team }));
    }
    if (s.cards !== null && s.cards !== undefined) info.push(f(_("cards: {n}"), { n: s.cards }));
    if (s.dealer) info.push(_("dealer"));
    if (isMayI(snap) && state.down) info.push(state.down[s.seat] ? _("down") : _("not down"));
    if (isMayI(snap) && state.buys) {
      info.push(f(_("buys {bought}/{limit}"), { bought: state.buys[s.seat], limit: state.buy_limit }));
    }
    if (s.to_move) info.push(_("to move"));
    if (s.left) info.push(f(_("left: {reason}"), { reason: s.left }));
    else if (!s.connected && s.taken !== false) info.push(_("disconnected"));
    setText(part(box, "info", "div"), info.join(" \u00b7 "));
    // the cards in hand as backs (at most 22), added or taken off one by one
    const count = !s.you && s.cards ? Math.min(s.cards, 22) : 0;
    let backs = box.querySelector(":scope > .backs");
    if (!count) {
      if (backs) backs.remove();
      return;
    }
    if (!backs) backs = part(box, "backs", "span");
    while (backs.children.length < count) backs.appendChild(el("span", "card back"));
    while (backs.children.length > count) backs.lastElementChild.remove();
  }
  // the child of ``box`` with class ``cls`` (made, last, when there is none)
  function part(box, cls, tag) {
    return box.querySelector(":scope > ." + cls) || box.appendChild(el(tag, cls));
  }
  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  function renderPile(snap) {
    const box = clear($("pile"));
    const pile = snap.pile || {};
    box.className = "pile-box" + (pile.frozen_for_you || pile.frozen ? " frozen" : "");
    if (!snap.state) {
      box.appendChild(el("div", "meta-light", snap.hand_end ? _("Between hands.")
        : _("No hand is on the table yet.")));
      return;
    }
    const stock = el("div", "stack stock");
    stock.appendChild(el("span", "card big back"));
    stock.appendChild(el("div", null, f(_("stock {size}"), {
      size: pile.stock === null || pile.stock === undefined ? "?" : pile.stock,
    })));
    box.appendChild(stock);
    const discards = el("div", "stack discards");
    discards.appendChild(pile.top ? cardNode(pile.top, { big: true }) : el("span", "card big empty"));
    discards.appendChild(el("div", "pile-size", f(_("pile {size}"), { size: pile.size || 0 })));
    box.appendChild(discards);
    const note = el("div", "frozen-note");
    if (pile.frozen_for_you) {
      note.appendChild(el("strong", null, _("Frozen for you")));
      (pile.frozen_reasons || []).forEach(function (r) { note.appendChild(el("div", null, r)); });
    } else if (pile.frozen) {
      note.appendChild(el("strong", null, _("Frozen")));
    }
    const window_ = (snap.state || {}).window;
    if (isMayI(snap) && window_ && window_.asker !== null && window_.asker !== undefined) {
      note.appendChild(el("div", null, f(_("{who} asks to buy {card}"), {
        who: seatName(snap, window_.asker), card: pile.top ? cardLabel(pile.top) : _("the discard"),
      })));
    }
    box.appendChild(note);
  }

  // each move as a whole sentence ({who} the mover), so that a language can say it its own way
  const VERBS = {
    draw: function () { return _("{who} drew from the stock"); },
    "take-pile": function (rest, move) {
      if (typeof move.cards === "number") {
        return rest ? _("{who} took the pile ({n} cards) with {cards}")
          : _("{who} took the pile ({n} cards)");
      }
      return rest ? _("{who} took the pile with {cards}") : _("{who} took the pile");
    },
    "take-top": function () { return _("{who} took the top card onto meld {cards}"); },
    "take-discard": function () { return _("{who} took the discard {cards}"); },
    meld: function () { return _("{who} melded {cards}"); },
    add: function () { return _("{who} added {cards} to meld {meld}"); },
    merge: function () { return _("{who} merged melds {cards}"); },
    discard: function () { return _("{who} discarded {cards}"); },
    "ask-go-out": function () { return _("{who} asks: may I go out?"); },
    answer: function () { return _("{who} answered {cards}"); },
    "may-i": function () { return _("{who} says May I? for {cards}"); },
    pass: function () { return _("{who} passed"); },
    allow: function () { return _("{who} allowed the buy"); },
    deny: function () { return _("{who} denied, taking {cards}"); },
  };
  function describeMove(move) {
    const text = String(move.action || "");
    const sp = text.indexOf(" ");
    const verb = sp < 0 ? text : text.slice(0, sp);
    let rest = sp < 0 ? "" : text.slice(sp + 1);
    const say = VERBS[verb];
    if (!say) return move.name + " " + moveLabel(text);
    let meld = "";
    if (verb === "add") {
      const at = rest.indexOf(" ");
      meld = rest.slice(0, at);
      rest = rest.slice(at + 1);
    }
    if (verb === "answer") rest = rest === "yes" ? _("yes") : rest === "no" ? _("no") : rest;
    return f(say(rest, move), {
      who: move.name, cards: moveLabel("x " + rest).slice(2), meld: meld, n: move.cards,
    });
  }
  function renderLastMove(snap) {
    const box = $("last-move");
    box.textContent = snap.last_move
      ? f(_("Last move: {move}"), { move: describeMove(snap.last_move) }) : "";
  }

  function meldActions(snap, index) {
    // Samba and friends: the legal moves that name this meld without a card from the hand
    const out = [];
    (snap.legal || []).forEach(function (text) {
      const t = text.split(" ");
      if (t[0] === "take-top" && t[1] === String(index)) out.push([text, _("take the top card here")]);
      if (t[0] === "take-pile" && t[t.length - 2] === "onto" && t[t.length - 1] === String(index)) {
        out.push([text, _("take the pile onto this")]);
      }
      if (t[0] === "merge" && t[1] === String(index)) {
        out.push([text, f(_("merge meld {meld} in"), { meld: t[2] })]);
      }
    });
    return out;
  }

  function meldNode(snap, meld, ref) {
    const box = el("div", "meld");
    box.dataset.meld = ref;
    const head = el("div", "meld-head");
    head.appendChild(el("span", "label", ref + ": " + meldLabel(String(meld.label || ""))));
    if (meld.canasta) {
      const kind = meld.canasta === "natural" ? _("natural canasta")
        : meld.canasta === "mixed" ? _("mixed canasta") : meld.canasta;
      head.appendChild(el("span", "badge " + meld.canasta, kind));
    }
    if (meld.points !== undefined) {
      head.appendChild(el("span", "pts", f(_("{points} pts"), {
        points: meld.points + (meld.bonus || 0),
      })));
    }
    box.appendChild(head);
    box.appendChild(cardRow(meld.cards || []));
    box.addEventListener("click", function () {
      const now = page.snap;
      if (!now || !box.classList.contains("clickable")) return;
      const again = addText(now, ref, selectedCards(now));
      if (again) act(legalMatch(now, again) || again);
      else showHint(isMayI(now) ? _("Select the card to add first.")
        : _("Select the cards to add first."));
    });
    return box;
  }
  // Whether a meld takes the selection (and is lit when that makes a legal move), and its own
  // buttons (Samba: take the top card here, the pile onto it, merge): changed in place, since
  // they change with the selection and the legal moves, far more often than the meld.
  function setMeldClickable(snap, box, clickable) {
    const ref = box.dataset.meld;
    box.classList.toggle("clickable", clickable);
    const title = clickable ? _("Select cards in your hand, then click here to add them") : "";
    if (box.title !== title) box.title = title;
    const text = clickable ? addText(snap, ref, selectedCards(snap)) : null;
    box.classList.toggle("target", Boolean(text && legalMatch(snap, text)));
    const extra = !isMayI(snap) && clickable ? meldActions(snap, ref) : [];
    const key = JSON.stringify(extra);
    if (box.dataset.actions === key || (!extra.length && box.dataset.actions === undefined)) return;
    const old = box.querySelector(":scope > .meld-actions");
    if (old) old.remove();
    box.dataset.actions = key;
    if (!extra.length) return;
    const bar = el("div", "meld-actions");
    extra.forEach(function (pair) {
      const b = actionButton(snap, pair[1], pair[0]);
      b.addEventListener("click", function (e) { e.stopPropagation(); });
      bar.appendChild(b);
    });
    box.appendChild(bar);
  }
  // The melds' panels are kept while what they show is the same (a move changes the legal moves
  // and the selection far more often than the melds): each is drawn anew only when its own part
  // of the snapshot changed, and its melds' clickability is then set in place.
  const panelsDrawn = { by: null, keys: [] };
  function placePanels(snap, by, parts) {
    const box = $("sides");
    if (panelsDrawn.by !== by) {
      clear(box);
      panelsDrawn.by = by;
      panelsDrawn.keys = [];
    }
    parts.forEach(function (part, i) {
      const key = JSON.stringify([catalog.lang, part.key]);
      let panel = box.children[i];
      if (!panel || panelsDrawn.keys[i] !== key) {
        const fresh = part.draw();
        if (panel) box.replaceChild(fresh, panel);
        else box.appendChild(fresh);
        panel = fresh;
        panelsDrawn.keys[i] = key;
      }
      panel.querySelectorAll(".meld").forEach(function (node) {
        setMeldClickable(snap, node, part.clickable);
      });
    });
    while (box.children.length > parts.length) box.lastElementChild.remove();
    panelsDrawn.keys.length = parts.length;
  }
  function addText(snap, ref, sel) {
    if (!sel.length) return null;
    if (isMayI(snap)) return sel.length === 1 ? "add " + ref + " " + sel[0] : null;
    return "add " + ref + " " + cardsText(sel);
  }

  // whether the melds are clickable (a move may add to one, or take onto one)
  function canAddToMelds(snap) {
    const A = snap.actions || {};
    return isMayI(snap) ? Boolean(A.add)
      : Boolean(A.add || A["take-top"] || A.merge || A["take-pile"]);
  }
  const MELD_VERBS = { add: true, "take-top": true, merge: true };
  function meldMoves(snap) {
    return (snap.legal || []).filter(function (text) {
      const verb = text.split(" ", 1)[0];
      return MELD_VERBS[verb] || (verb === "take-pile" && text.indexOf(" onto ") >= 0);
    });
  }

  function renderSides(snap) {
    const canAdd = canAddToMelds(snap);
    placePanels(snap, "sides", (snap.sides || []).map(function (side) {
      return { key: side, clickable: Boolean(side.yours && canAdd),
        draw: function () { return drawSide(snap, side); } };
    }));
  }
  function drawSide(snap, side) {
    const panel = el("div", "panel side" + (side.yours ? " yours" : ""));
    panel.dataset.side = String(side.team);
    const head = el("div", "side-head");
    head.appendChild(el("h2", null, side.names.join(" & ") +
      (side.yours ? " " + _("(your side)") : "")));
    head.appendChild(el("span", "points", f(_("{points} points on the table"), {
      points: side.meld_points,
    })));
    panel.appendChild(head);
    const bits = [f(_("canastas: {n}"), { n: side.canastas })];
    if (side.needs !== null && side.needs !== undefined) {
      bits.unshift(side.laid_this_turn
        ? f(_("not opened: the initial meld needs {points} points, {laid} laid this turn"),
          { points: side.needs, laid: side.laid_this_turn })
        : f(_("not opened: the initial meld needs {points} points"), { points: side.needs }));
    } else {
      bits.unshift(_("opened"));
    }
    panel.appendChild(el("div", "opening", bits.join(" \u00b7 ")));
    if (side.red_threes && side.red_threes.length) {
      const reds = el("div", "reds", _("Red threes:") + " ");
      reds.appendChild(cardRow(side.red_threes));
      panel.appendChild(reds);
    }
    const list = el("div", "meld-list");
    (side.melds || []).forEach(function (meld) {
      list.appendChild(meldNode(snap, meld, String(meld.index)));
    });
    if (!(side.melds || []).length) list.appendChild(el("div", "no-melds", _("no melds yet")));
    panel.appendChild(list);
    return panel;
  }

  function renderMayISeats(snap) {
    // May I?: every seat melds alone, and anyone down may lay off on any meld
    const state = snap.state || {};
    const canAdd = canAddToMelds(snap);
    placePanels(snap, "may-i", (state.melds || []).map(function (melds, seat) {
      const down = Boolean(state.down && state.down[seat]);
      return { key: [melds, seat, seat === snap.seat, seatName(snap, seat), down],
        clickable: canAdd, draw: function () { return drawSeatMelds(snap, melds, seat); } };
    }));
  }
  function drawSeatMelds(snap, melds, seat) {
    const state = snap.state || {};
    const panel = el("div", "panel side" + (seat === snap.seat ? " yours" : ""));
    panel.dataset.side = String(seat);
    const head = el("div", "side-head");
    head.appendChild(el("h2", null, seatName(snap, seat) +
      (seat === snap.seat ? " " + _("(you)") : "")));
    head.appendChild(el("span", "points", state.down && state.down[seat] ? _("down")
      : _("not down")));
    panel.appendChild(head);
    const list = el("div", "meld-list");
    melds.forEach(function (meld, n) {
      list.appendChild(meldNode(snap, meld, seat + "." + n));
    });
    if (!melds.length) list.appendChild(el("div", "no-melds", _("no melds yet")));
    panel.appendChild(list);
    return panel;
  }

  // ------------------------------------------------------------------ your hand and moves
  function actionButton(snap, label, text) {
    const legal = legalMatch(snap, text);
    const b = el("button", legal ? "primary" : "try", label);
    b.type = "button";
    b.dataset.action = legal || text;
    if (!legal) b.title = _("Not among the legal moves: the engine will say why if you try it");
    b.addEventListener("click", function () { act(legal || text); });
    return b;
  }
  function plainButton(label, onClick, cls) {
    const b = el("button", cls || "", label);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }
  function showHint(text) {
    page.localError = { tried: "", message: text };
    render();
  }

  const PROMPT_LABELS = {
    answer: function (rest) { return rest === "yes" ? _("Yes, go out") : _("No, not yet"); },
    "may-i": function (rest) { return f(_("May I? (buy {card})"), { card: cardLabel(rest) }); },
    pass: function () { return _("Pass"); },
    allow: function () { return _("Allow"); },
    deny: function (rest) { return f(_("Deny: take {card} myself"), { card: cardLabel(rest) }); },
  };

  function renderMe(snap) {
    const me = $("me");
    const spectator = snap.role === "spectator" || snap.seat === null || snap.seat === undefined;
    me.classList.toggle("spectator", spectator);
    $("hand").hidden = spectator;
    $("keys").hidden = spectator;
    renderPrompt(snap, spectator);
    if (spectator) {
      clear($("controls"));
      clear($("staging"));
      clear($("suggestion"));
      renderRefusal(snap);
      page.defaultButton = null;
      return;
    }
    renderHand(snap);
    renderStaging(snap);
    renderControls(snap);
    renderSuggestion(snap);
    renderRefusal(snap);
  }

  function renderSuggestion(snap) {
    const box = el("div"); // drawn here, then kept where the same (keepSame)
    drawSuggestion(snap, box);
    keepSame($("suggestion"), Array.from(box.childNodes));
  }
  function drawSuggestion(snap, box) {
    const s = page.suggestion;
    if (!s) return;
    if (s.pending) {
      box.appendChild(el("span", "meta", _("The bot is thinking about your move\u2026")));
      return;
    }
    box.appendChild(el("span", "suggestion-head", _("Suggested:") + " "));
    box.appendChild(el("span", "suggested-move", s.label));
    box.appendChild(el("span", "meta", " \u2014 " + s.reason + " "));
    const play = actionButton(snap, _("Play it"), s.action);
    play.classList.add("play-suggested");
    box.appendChild(play);
  }

  function renderPrompt(snap, spectator) {
    const shown = $("prompt");
    const box = el("div"); // drawn here, then kept where the same (keepSame)
    renderPromptLine(snap, spectator, shown, box);
    if (!spectator) renderArrivals(snap, box);
    keepSame(shown, Array.from(box.childNodes));
  }
  function renderArrivals(snap, box) {
    // cards that came outside this seat's turn, named until its next move
    if (snap.received && snap.received.length) {
      box.appendChild(el("span", "arrived", f(_("You received {cards}."), {
        cards: cardsLabel(snap.received),
      })));
    }
    if (snap.deal_red_threes && snap.deal_red_threes.length) {
      box.appendChild(el("span", "arrived", f(
        _("Your red threes from the deal, laid and replaced from the stock: {cards}."),
        { cards: cardsLabel(snap.deal_red_threes) })));
    }
  }

  // The prompt's line: its classes and kind on ``shown`` (the page's), its parts into ``box``.
  function renderPromptLine(snap, spectator, shown, box) {
    if (!snap.prompt || snap.prompt.kind === "turn") questionShown = null;
    shown.className = "prompt";
    if (spectator) {
      box.appendChild(el("span", "spectator-note",
        _("You are watching: the public table only, no hidden card.")));
      const mover = (snap.seats || []).find(function (s) { return s.to_move; });
      if (mover) box.appendChild(el("span", "waiting", f(_("{name} to move."), { name: mover.name })));
      return;
    }
    const prompt = snap.prompt;
    if (prompt) {
      shown.dataset.kind = prompt.kind;
      if (prompt.kind !== "turn") {
        shown.classList.add("ask");
        showNewQuestion(shown, prompt.kind + "\n" + prompt.text);
      }
      box.appendChild(el("span", "prompt-text", prompt.text));
      if (prompt.kind !== "turn") {
        (snap.legal || []).forEach(function (text) {
          const sp = text.indexOf(" ");
          const verb = sp < 0 ? text : text.slice(0, sp);
          const label = PROMPT_LABELS[verb] ? PROMPT_LABELS[verb](text.slice(sp + 1)) : text;
          box.appendChild(actionButton(snap, label, text));
        });
      }
      return;
    }
    delete shown.dataset.kind;
    if (snap.ready_asked && page.readyFor !== (snap.hand_end ? snap.hand_end.hand : null)) {
      shown.classList.add("ask");
      box.appendChild(el("span", "prompt-text", _("The next hand waits until you are ready.")));
      box.appendChild(plainButton(_("Next hand"), readyForNextHand, "primary"));
    } else if (snap.finished) {
      box.appendChild(el("span", "waiting", f(_("The game is over: {reason}."), {
        reason: _(snap.finished),
      })));
    } else if (snap.tried) {
      box.appendChild(el("span", "waiting", f(_("Sent \u201c{move}\u201d\u2026"), {
        move: moveLabel(snap.tried),
      })));
    } else {
      const mover = (snap.seats || []).find(function (s) { return s.to_move; });
      box.appendChild(el("span", "waiting", mover
        ? f(_("Waiting for {name} to move."), { name: mover.name }) : _("Waiting for the table.")));
    }
  }

  // A question (a partner's "may I go out?", a May I? buy) waits for this person's answer: on a
  // narrow screen the prompt is below the table, so a new one is scrolled into view (once; the
  // layout is read in the next frame, not inside the render).
  let questionShown = null;
  function showNewQuestion(box, key) {
    if (questionShown === key) return;
    questionShown = key;
    requestAnimationFrame(function () {
      const where = box.getBoundingClientRect();
      if (where.top < 0 || where.bottom > window.innerHeight) {
        box.scrollIntoView({ block: "center" });
      }
    });
  }

  // The hand is updated in place: a card still in it keeps its node (by its text and which copy
  // of it it is), a group its box, and only what changed is touched (a class, a title, a node in
  // or out). Rebuilt, every card's node had its style and layout worked out anew in the frame
  // after each move; kept, the selection's lift also animates as the style sheet says.
  const handNodes = { lang: null, cards: new Map(), groups: new Map() };
  function renderHand(snap) {
    const box = $("hand");
    if (handNodes.lang !== catalog.lang) { // the cards' faces are in the reader's notation
      clear(box);
      handNodes.lang = catalog.lang;
      handNodes.cards = new Map();
      handNodes.groups = new Map();
    }
    const staged = stagedIndices();
    const suggested = suggestedIndices(snap);
    const hand = snap.hand || [];
    const cards = new Map();
    const groups = new Map();
    const copies = {};
    const order = []; // [group box, [card nodes]]
    hand.forEach(function (h, i) {
      let group = groups.get(h.group);
      if (!group) {
        group = handNodes.groups.get(h.group);
        if (!group) {
          group = el("div", "group");
          group.dataset.group = h.group;
        }
        groups.set(h.group, group);
        order.push([group, []]);
      }
      copies[h.card] = (copies[h.card] || 0) + 1;
      const key = h.card + "/" + copies[h.card];
      let node = handNodes.cards.get(key);
      if (!node) {
        node = cardNode(h.card, { big: true });
        node.title = cardLabel(h.card);
      }
      cards.set(key, node);
      order[order.length - 1][1].push(node);
      const index = String(i);
      if (node.dataset.index !== index) node.dataset.index = index;
      const title = h.new ? f(_("{card} (just drawn)"), { card: cardLabel(h.card) })
        : h.received ? f(_("{card} (received)"), { card: cardLabel(h.card) }) : cardLabel(h.card);
      if (node.title !== title) node.title = title;
      node.classList.toggle("new", Boolean(h.new || h.received));
      node.classList.toggle("selected", page.selected.has(i));
      node.classList.toggle("staged", staged.has(i));
      node.classList.toggle("suggested", suggested.has(i));
      node.classList.toggle("cursor", i === page.cursor && box.dataset.keys === "on");
    });
    handNodes.cards = cards;
    handNodes.groups = groups;
    // what left the hand goes first, then the groups and their cards are put in order, moving
    // only what is out of place (removed last, a card or group that left from the middle had
    // every one after it moved, each taken out and put back: laid out and painted anew)
    const keptGroups = new Set(order.map(function (pair) { return pair[0]; }));
    Array.from(box.children).forEach(function (g) { if (!keptGroups.has(g)) g.remove(); });
    order.forEach(function (pair, g) {
      const group = pair[0];
      const keptCards = new Set(pair[1]);
      Array.from(group.children).forEach(function (n) { if (!keptCards.has(n)) n.remove(); });
      if (box.children[g] !== group) box.insertBefore(group, box.children[g] || null);
      pair[1].forEach(function (node, c) {
        if (group.children[c] !== node) group.insertBefore(node, group.children[c] || null);
      });
    });
    if (!hand.length) box.appendChild(el("span", "meta", _("No cards in your hand.")));
  }

  function renderStaging(snap) {
    const box = clear($("staging"));
    if (!isMayI(snap) || !page.staged.length) return;
    const cards = handCards(snap);
    box.appendChild(el("span", "meta", _("Staged for the contract:")));
    page.staged.forEach(function (group, n) {
      const g = el("span", "staged-group");
      g.appendChild(cardRow(group.map(function (i) { return cards[i]; })));
      const undo = plainButton("\u00d7", function () {
        page.staged.splice(n, 1);
        render();
      }, "quiet");
      undo.title = _("Take this group back into the hand");
      g.appendChild(undo);
      box.appendChild(g);
    });
  }

  function renderControls(snap) {
    const box = $("controls");
    const A = snap.actions || {};
    const sel = selectedCards(snap);
    const buttons = [];
    function add(label, text) {
      const b = actionButton(snap, label, text);
      buttons.push(b);
      return b;
    }
    const asking = snap.prompt && snap.prompt.kind !== "turn";
    if (!asking) {
      if (A.draw) add(_("Draw"), "draw");
      if (isMayI(snap)) {
        (A["take-discard"] || []).forEach(function (t) {
          add(f(_("Take the discard {card}"), { card: cardLabel(t.split(" ")[1]) }), t);
        });
      } else if (A["take-pile"]) {
        if (sel.length) {
          add(f(_("Take the pile with {cards}"), { cards: cardsLabel(sel) }),
            "take-pile " + cardsText(sel));
        } else {
          A["take-pile"].forEach(function (t) {
            if (t.indexOf(" onto ") >= 0) return; // offered on the meld it goes onto
            add(t === "take-pile" ? _("Take the pile")
              : f(_("Take the pile with {cards}"), { cards: moveLabel("x " + t.slice(10)).slice(2) }), t);
          });
        }
      }
      if (A.meld) {
        if (isMayI(snap)) {
          const cards = handCards(snap);
          if (sel.length) {
            buttons.push(plainButton(_("Stage as a group"), function () {
              page.staged.push(Array.from(page.selected).sort(function (a, b) { return a - b; }));
              page.selected = new Set();
              render();
            }));
          }
          const groups = page.staged.map(function (g) {
            return g.map(function (i) { return cards[i]; });
          });
          if (sel.length) groups.push(sel);
          if (groups.length) {
            add(f(_("Lay the contract: {melds}"), { melds: groups.map(cardsLabel).join(" | ") }),
              "meld " + groups.map(cardsText).join(" | "));
          }
        } else if (sel.length) {
          add(f(_("Meld {cards}"), { cards: cardsLabel(sel) }), "meld " + cardsText(sel));
        }
      }
      if (A.add && sel.length) {
        buttons.push(el("span", "meta", f(_("or click a meld to add {cards}"), {
          cards: cardsLabel(sel),
        })));
      }
      if (A.discard && sel.length === 1) {
        add(f(_("Discard {card}"), { card: cardLabel(sel[0]) }), "discard " + sel[0]);
      }
      if (A["ask-go-out"]) add(_("Ask partner: may I go out?"), "ask-go-out");
    }
    if (sel.length || page.staged.length) {
      buttons.push(plainButton(_("Clear selection"), clearSelection, "quiet"));
    }
    if ((snap.legal || []).length) {
      const ask = plainButton(_("Suggest"), askSuggestion, "quiet suggest");
      ask.title = _("What the searching bot would play here, and why (from what you see only)");
      ask.disabled = Boolean(page.suggestion && page.suggestion.pending);
      buttons.push(ask);
    }
    if (snap.hand_end && !snap.match_end) {
      buttons.push(plainButton(_("Score sheet"), function () {
        page.dismissedSheet = null;
        render();
      }));
    }
    if (A.discard && !sel.length && !asking) {
      buttons.push(el("span", "meta", _("Select one card to discard it.")));
    }
    const first = buttons.find(function (b) { return b.classList.contains("primary"); }) ||
      buttons.find(function (b) { return b.tagName === "BUTTON" && b.dataset.action; });
    if (first) first.classList.add("default");
    const drawn = keepSame(box, buttons);
    page.defaultButton = first ? drawn[buttons.indexOf(first)] : null;
  }

  function renderRefusal(snap) {
    const box = clear($("refusal"));
    const shown = page.localError || snap.refusal;
    if (!shown) return;
    if (shown.tried) {
      box.appendChild(el("span", null, _("Refused:") + " "));
      box.appendChild(el("span", "tried", shown.tried));
      box.appendChild(el("span", null, " \u2014 "));
    }
    box.appendChild(el("span", "message", shown.message));
  }

  // The list of what happened changes after every move, at its end (the snapshot keeps the
  // latest lines: the oldest drop off its start). Only the lines that came and went are touched,
  // and nothing here reads the layout: reading it after the other parts' changes made the browser
  // lay the whole page out there and then, inside the render (most of its script time), and
  // again for each snapshot of a burst, where the frame lays it out once. Whether the person was
  // reading older lines is read before the render changes anything (``atBottom``); the scroll
  // to the end waits for the frame's own layout.
  function eventsScrolledDown() {
    const list = $("events");
    return list.scrollHeight - list.scrollTop - list.clientHeight < 30;
  }
  function renderEvents(snap, atBottom) {
    const list = $("events");
    const lines = snap.events || [];
    const drawn = page.eventLines;
    let dropped = 0;
    while (dropped < drawn.length && !continues(drawn, dropped, lines)) dropped++;
    if (dropped === drawn.length) {
      clear(list); // nothing in common (a new language, another page's stream): draw anew
    } else {
      for (let i = 0; i < dropped; i++) list.removeChild(list.firstChild);
    }
    const kept = drawn.length - dropped;
    for (let i = kept; i < lines.length; i++) list.appendChild(el("li", null, lines[i]));
    page.eventLines = lines.slice();
    if (atBottom || lines.length < 8) {
      requestAnimationFrame(function () { list.scrollTop = list.scrollHeight; }); // laid out by then
    }
  }
  // whether the lines drawn from index ``from`` on are the first lines of ``lines``
  function continues(drawn, from, lines) {
    if (drawn.length - from > lines.length) return false;
    for (let i = from; i < drawn.length; i++) {
      if (drawn[i] !== lines[i - from]) return false;
    }
    return true;
  }

  function renderWatchers(snap) {
    $("quit").textContent = snap.finished || snap.match_end ? _("Close the page")
      : _("Leave the table\u2026");
    const w = snap.watchers || [];
    $("watchers").textContent = w.length ? w.join(", ") : _("Nobody is watching.");
    $("fingerprint").textContent = snap.host_fingerprint
      ? f(_("Table fingerprint: {fingerprint}"), { fingerprint: snap.host_fingerprint }) : "";
    $("watch-command").textContent = snap.watch_command
      ? f(_("Others can watch with: {command}"), { command: snap.watch_command }) : "";
  }

  // a joiner's questions before its seat: the host's fingerprint, the tables heard on the LAN
  function renderLobby(snap) {
    const box = clear($("lobby"));
    const lobby = snap.lobby;
    box.hidden = !lobby;
    if (!lobby) return;
    if (lobby.trust) {
      const t = lobby.trust;
      box.appendChild(el("h2", null, _("Is this the table you mean to join?")));
      box.appendChild(el("p", null, t.table
        ? f(_("Table {table} at {address} has the fingerprint:"), { table: t.table, address: t.address })
        : f(_("The host at {address} has the fingerprint:"), { address: t.address })));
      box.appendChild(el("p", "fingerprint big-fingerprint", t.fingerprint));
      box.appendChild(el("p", "meta", _("Compare it with what the host shows. Accepted, it is remembered for this address; refused, you do not join.")));
      const yes = plainButton(_("Accept and join"), function () {
        simplePost("/trust", { accept: true }, "accept the fingerprint");
      }, "primary");
      yes.id = "trust-accept";
      const no = plainButton(_("Refuse"), function () {
        simplePost("/trust", { accept: false }, "refuse the fingerprint");
      });
      no.id = "trust-refuse";
      box.appendChild(yes);
      box.appendChild(no);
      return;
    }
    const tables = lobby.tables || [];
    box.appendChild(el("h2", null, _("Tables on your network")));
    if (!tables.length) {
      box.appendChild(el("p", "meta", _("Listening for tables on the LAN\u2026")));
      return;
    }
    const list = el("ul", "table-list");
    tables.forEach(function (t, i) {
      const item = el("li");
      item.appendChild(el("span", null, t.name + " \u2014 " + f(_("{variant}, {free}/{seats} seats free, {deal} deal, {address}"),
        { variant: t.variant, free: t.free, seats: t.seats, deal: t.deal, address: t.address }) + " "));
      item.appendChild(el("span", "meta fingerprint", t.fingerprint + " "));
      const join = plainButton(_("Join"), function () {
        simplePost("/pick", { table: i, address: t.address }, "join " + t.name);
      }, "primary");
      join.dataset.table = String(i);
      join.disabled = t.free === 0;
      item.appendChild(join);
      list.appendChild(item);
    });
    box.appendChild(list);
  }

  function renderLegal(snap) {
    const list = clear($("legal-list"));
    const legal = snap.legal || [];
    $("legal-count").textContent = String(legal.length);
    legal.forEach(function (text) {
      const item = el("li");
      const b = el("button", null, moveLabel(text));
      b.type = "button";
      b.dataset.action = text;
      b.addEventListener("click", function () { act(text); });
      item.appendChild(b);
      list.appendChild(item);
    });
    if (!legal.length) list.appendChild(el("li", "meta", _("Nothing is asked of you now.")));
  }

  // ------------------------------------------------------------------ between hands, the end
  const COUNTS = { natural_canastas: true, mixed_canastas: true };
  function partValue(part) {
    if (COUNTS[part.key]) return String(part.value);
    if (part.key === "cards_in_hand") return part.value ? "\u2212" + part.value : "0";
    return String(part.value);
  }

  function renderSheet(snap) {
    const overlay = $("overlay");
    const end = snap.hand_end;
    const over = Boolean(snap.match_end);
    const key = over ? "end" : end ? end.hand : null;
    const show = Boolean(end || over) && page.dismissedSheet !== key;
    overlay.hidden = !show;
    if (!show) return;
    $("sheet-title").textContent = over ? _("The match is over")
      : f(isMayI(snap) ? _("Deal {number} is over") : _("Hand {number} is over"),
        { number: end.shown_hand || "" });
    const reason = [];
    if (end && end.went_out_name) reason.push(f(_("{name} went out."), { name: end.went_out_name }));
    else if (end && end.reason) {
      reason.push((END_REASONS[end.reason] ? _(END_REASONS[end.reason]) : String(end.reason)) + ".");
    }
    $("sheet-reason").textContent = reason.join(" ");
    const table = clear($("sheet-table"));
    if (end) {
      const headRow = el("tr");
      headRow.appendChild(el("th", null, ""));
      end.sides.forEach(function (s) { headRow.appendChild(el("th", null, s.names.join(" & "))); });
      table.appendChild(headRow);
      const labels = [];
      end.sides.forEach(function (s) {
        s.parts.forEach(function (p) {
          if (!labels.some(function (l) { return l.key === p.key; })) labels.push(p);
        });
      });
      labels.forEach(function (label) {
        const row = el("tr", label.key === "total" ? "total" : "");
        row.appendChild(el("td", null, label.label));
        end.sides.forEach(function (s) {
          const part = s.parts.find(function (p) { return p.key === label.key; });
          row.appendChild(el("td", null, part ? partValue(part) : ""));
        });
        table.appendChild(row);
      });
      const totals = end.totals || snap.scores || [];
      const match = el("tr", "match");
      match.appendChild(el("td", null, snap.target
        ? f(_("match total (target {target})"), { target: snap.target }) : _("match total")));
      end.sides.forEach(function (s) { match.appendChild(el("td", null, totals[s.side])); });
      table.appendChild(match);
    }
    drawChart(snap);
    renderResult(snap);
    const canReady = Boolean(end) && !over && !snap.finished && snap.role !== "spectator" &&
      snap.seat !== null && snap.seat !== undefined && page.readyFor !== key;
    $("next-hand").hidden = !canReady;
    $("sheet-leave").hidden = !(over || snap.finished);
  }

  const STOP_REASONS = {
    "max-hands": N_("the table's number of hands was played"),
  };
  const END_REASONS = {
    "stock-exhausted": N_("the stock ran out"),
    "last-red-three": N_("the last card of the stock was a red three"),
    "turn-limit": N_("the deal reached its turn limit"),
  };
  // the audit's verdict (its code, replay/audit.py) in the reader's words
  const VERDICTS = {
    "valid": N_("valid"),
    "incomplete": N_("incomplete"),
    "invalid": N_("invalid"),
    "unchecked": N_("unchecked"),
  };
  function renderResult(snap) {
    const box = clear($("match-result"));
    const end = snap.match_end;
    if (!end && !snap.finished) return;
    if (end) {
      let text;
      if (end.kind === "match-end" && end.winner !== null && end.winner !== undefined) {
        text = f(_("{names} won the match"), { names: scoreNames(snap, end.winner).join(" & ") });
      } else if (end.kind === "forfeit") {
        text = end.seat !== null && end.seat !== undefined
          ? f(_("The match ended by forfeit: {name} left"), { name: seatName(snap, end.seat) })
          : _("The match ended by forfeit");
      } else {
        text = end.reason ? f(_("The match stopped: {reason}"), {
          reason: STOP_REASONS[end.reason] ? _(STOP_REASONS[end.reason]) : end.reason,
        }) : _("The match stopped");
      }
      box.appendChild(el("div", "winner", text + "."));
      if (end.totals) {
        box.appendChild(el("div", null, f(_("Totals: {totals}"), {
          totals: end.totals.join(" \u2013 "),
        })));
      }
    }
    if (snap.finished) {
      box.appendChild(el("div", "meta", f(_("Your session: {reason}."), { reason: _(snap.finished) })));
    }
    const out = snap.outcome || {};
    if (out.log) {
      const line = el("div", null, _("The log:") + " ");
      line.appendChild(el("span", "path", out.log));
      box.appendChild(line);
    }
    if (out.verdict) {
      const verdict = VERDICTS[out.verdict] ? _(VERDICTS[out.verdict]) : out.verdict;
      box.appendChild(el("div", "verdict", f(_("Audit: {verdict}"), { verdict: verdict })));
    }
    if (out.replay) {
      const line = el("div", null, "");
      const href = String(out.replay);
      // only a link to this page's own server: never a scheme the snapshot could smuggle in
      if (href.charAt(0) === "/" && href.charAt(1) !== "/") {
        const a = el("a", null, _("Open the replay"));
        a.href = href;
        a.target = "_blank";
        a.rel = "noopener";
        line.appendChild(a);
      } else {
        line.textContent = f(_("Replay: {link}"), { link: href });
      }
      box.appendChild(line);
    }
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, cls) {
    const node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (cls) node.setAttribute("class", cls);
    return node;
  }
  function drawChart(snap) {
    const box = clear($("chart"));
    const history = snap.history || [];
    if (!history.length) return;
    const sides = history[0].length;
    const W = 560, H = 190, L = 46, R = 110, T = 12, B = 24;
    let lo = 0, hi = snap.target || 0;
    history.forEach(function (row) {
      row.forEach(function (v) { lo = Math.min(lo, v); hi = Math.max(hi, v); });
    });
    if (hi === lo) hi = lo + 1;
    const n = history.length;
    const x = function (i) { return L + (W - L - R) * (n ? i / n : 0); };
    const y = function (v) { return T + (H - T - B) * (1 - (v - lo) / (hi - lo)); };
    const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img" });
    root.appendChild(svg("title", {})).textContent = _("Match totals after each hand");
    root.appendChild(svg("line", { x1: L, y1: y(0), x2: W - R, y2: y(0) }, "axis"));
    root.appendChild(svg("line", { x1: L, y1: T, x2: L, y2: H - B }, "axis"));
    const top = svg("text", { x: L - 4, y: y(hi) + 4, "text-anchor": "end" });
    top.textContent = String(hi);
    root.appendChild(top);
    const zero = svg("text", { x: L - 4, y: y(0) + 4, "text-anchor": "end" });
    zero.textContent = "0";
    root.appendChild(zero);
    if (snap.target) {
      root.appendChild(svg("line", { x1: L, y1: y(snap.target), x2: W - R, y2: y(snap.target) },
        "target"));
    }
    for (let i = 1; i <= n; i++) {
      const t = svg("text", { x: x(i), y: H - 6, "text-anchor": "middle" });
      t.textContent = String(i);
      root.appendChild(t);
    }
    const labels = [];
    for (let s = 0; s < sides; s++) {
      const points = [[x(0), y(0)]].concat(history.map(function (row, i) {
        return [x(i + 1), y(row[s])];
      }));
      root.appendChild(svg("polyline", {
        points: points.map(function (p) { return p[0].toFixed(1) + "," + p[1].toFixed(1); }).join(" "),
      }, "line s" + (s % 6)));
      const last = points[points.length - 1];
      root.appendChild(svg("circle", { cx: last[0], cy: last[1], r: 3.5 }, "s" + (s % 6)));
      labels.push({ side: s, x: last[0] + 8, y: last[1] + 4 });
    }
    // the end labels, top to bottom, kept a line apart where totals are close
    labels.sort(function (a, b) { return a.y - b.y; });
    labels.forEach(function (l, i) {
      if (i > 0 && l.y < labels[i - 1].y + 13) l.y = labels[i - 1].y + 13;
      const label = svg("text", { x: l.x, y: l.y }, "s" + (l.side % 6));
      label.textContent = scoreNames(snap, l.side).join(" & ").slice(0, 18) + " " +
        history[n - 1][l.side];
      root.appendChild(label);
    });
    box.appendChild(root);
  }

  async function readyForNextHand() {
    const end = page.snap && page.snap.hand_end;
    if (await simplePost("/ready", {}, "next hand")) {
      page.readyFor = end ? end.hand : null;
      page.dismissedSheet = page.readyFor;
      render();
    }
  }

  // ------------------------------------------------------------------ wiring
  function onKey(e) {
    const target = e.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
    const snap = page.snap;
    if (!snap || snap.seat === null || snap.seat === undefined) return;
    const count = (snap.hand || []).length;
    const hand = $("hand");
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      if (!count) return;
      hand.dataset.keys = "on";
      page.cursor = (page.cursor + (e.key === "ArrowRight" ? 1 : count - 1)) % count;
      render();
      e.preventDefault();
    } else if (e.key === " " || e.key === "Spacebar") {
      if (target && target.tagName === "BUTTON") return; // space presses a focused button
      if (!count) return;
      hand.dataset.keys = "on";
      toggle(Math.min(page.cursor, count - 1));
      e.preventDefault();
    } else if (e.key === "Enter") {
      if (target && (target.tagName === "BUTTON" || target.tagName === "A" ||
        target.tagName === "SUMMARY")) return;
      if (!$("overlay").hidden && !$("next-hand").hidden) { $("next-hand").click(); }
      else if (page.defaultButton) page.defaultButton.click();
      e.preventDefault();
    } else if (e.key === "Escape") {
      if (!$("overlay").hidden) $("sheet-close").click();
      else clearSelection();
    }
  }

  function connect() {
    openMoveSocket();
    const status = $("connection");
    const source = new EventSource("/events");
    source.addEventListener("snapshot", function (e) {
      let snap = null;
      try { snap = JSON.parse(e.data); } catch (err) { return; }
      onSnapshot(snap);
    });
    source.addEventListener("open", function () {
      status.textContent = _("live");
      status.classList.remove("down");
    });
    source.addEventListener("error", function () {
      const over = page.closed || (page.snap && (page.snap.finished || page.snap.match_end));
      status.textContent = page.closed ? _("closed: you may close this tab")
        : over ? _("the game is over") : _("reconnecting\u2026");
      status.classList.toggle("down", !over);
      if (over) source.close();
    });
  }

  function setup() {
    document.addEventListener("keydown", onKey);
    $("hand").addEventListener("click", function (e) {
      const node = e.target instanceof Element ? e.target.closest(".card[data-index]") : null;
      if (node) toggle(Number(node.dataset.index));
    });
    // A clicked move button is not focused: the snapshot that follows replaces the buttons, and
    // removing the focused element made the browser restyle and lay out the page there and
    // then, inside the render (4-14 ms). Keys still reach every button (Tab, then Enter).
    document.addEventListener("mousedown", function (e) {
      const button = e.target instanceof Element ? e.target.closest("button") : null;
      if (button && button.closest("#me, #sides, #legal-list")) e.preventDefault();
    });
    $("next-hand").addEventListener("click", readyForNextHand);
    $("sheet-close").addEventListener("click", function () {
      const snap = page.snap;
      page.dismissedSheet = snap && snap.match_end ? "end" : snap && snap.hand_end
        ? snap.hand_end.hand : null;
      render();
    });
    $("chat").addEventListener("submit", async function (e) {
      e.preventDefault();
      const input = $("chat-text");
      const text = input.value.trim();
      if (!text) return;
      if (await simplePost("/chat", { text: text }, "chat")) input.value = "";
    });
    async function leave() {
      const over = page.snap && (page.snap.finished || page.snap.match_end);
      if (over) {
        // after the table, leaving ends the process: it may go before it answers
        page.closed = true;
        await post("/quit", {});
        $("connection").textContent = _("closed: you may close this tab");
        $("overlay").hidden = true;
        document.body.dataset.closed = "1";
      } else if (window.confirm(_("Leave the table? The match stops for everyone."))) {
        simplePost("/quit", {}, "quit");
      }
    }
    $("quit").addEventListener("click", leave);
    $("sheet-leave").addEventListener("click", leave);
    $("lang").addEventListener("change", function (e) { chooseLanguage(e.target.value); });
    loadCatalog("").then(connect);
  }

  setup();
})();
