// The player's page: draws the snapshot the player's own process sends (docs/ui-model.md) and
// sends the person's moves back. It decides no rule: the legal moves, values and frozen states
// all come from the snapshot. Every text from the snapshot is inserted with textContent.
"use strict";

(function () {
  const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  const MAY_I = "may-i";

  const page = {
    snap: null,
    selected: new Set(), // indices into snap.hand
    staged: [], // May I?: groups (lists of hand indices) staged for the contract
    cursor: 0,
    clearOnHandChange: false, // a move was sent: forget the selection once the hand changes
    localError: null, // {tried, message}: the server's answer to a POST, when it said no
    closed: false, // the person closed the page after the table
    teams: {}, // seat -> team, as last seen (the seats carry none between hands)
    dismissedSheet: null, // the hand whose score sheet the person closed
    readyFor: null, // the hand after whose sheet the person said "next hand"
    defaultButton: null,
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
  function plural(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }
  function isMayI(snap) { return snap.game === MAY_I; }
  function seatName(snap, seat) {
    const row = (snap.seats || [])[seat];
    return row ? row.name : "seat " + seat;
  }

  function cardNode(text, opts) {
    const o = opts || {};
    const node = el("span", "card" + (o.big ? " big" : ""));
    node.dataset.card = text;
    node.title = text;
    if (text === "JK") {
      node.classList.add("joker");
      node.appendChild(el("span", "rank", "Jkr"));
      if (o.big) node.appendChild(el("span", "suit", "\u2605"));
      return node;
    }
    const suit = text.slice(-1);
    const rank = text.slice(0, -1);
    if (suit === "D" || suit === "H") node.classList.add("red");
    if (o.big) {
      node.appendChild(el("span", "rank", rank));
      node.appendChild(el("span", "suit", SUITS[suit] || suit));
    } else {
      node.textContent = rank + (SUITS[suit] || suit);
    }
    return node;
  }
  function cardRow(list) {
    const span = el("span", "cards");
    list.forEach(function (c) { span.appendChild(cardNode(c)); });
    return span;
  }
  function cardsText(list) { return list.join(" "); }

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
  function legalMatch(snap, text) {
    const key = moveKey(text);
    for (const legal of snap.legal || []) {
      if (moveKey(legal) === key) return legal;
    }
    return null;
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
      if (data && data.ok) return { ok: true };
      const why = data && typeof data.error === "string" ? data.error
        : "the page's server answered " + answer.status;
      return { ok: false, error: why };
    } catch (e) {
      return { ok: false, error: "the page lost its connection to your canasta process" };
    }
  }

  async function act(text) {
    if (!page.snap) return;
    page.localError = null;
    page.clearOnHandChange = true;
    document.body.dataset.sent = text;
    const answer = await post("/act", { action: text });
    if (!answer.ok) {
      page.localError = { tried: text, message: answer.error };
      render();
    }
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
    // a new question: the page's own last complaint (a POST the server refused) is old news
    const legal = (snap.legal || []).join("\n");
    if (legal && (!old || (old.legal || []).join("\n") !== legal)) page.localError = null;
    page.snap = snap;
    render();
  }

  // ------------------------------------------------------------------ drawing
  const drawnKeys = {};
  function once(part, inputs, draw, snap) {
    const key = JSON.stringify(inputs);
    if (drawnKeys[part] === key) return;
    drawnKeys[part] = key;
    draw(snap);
  }

  function render() {
    const snap = page.snap;
    if (!snap || page.closed) return;
    const started = performance.now();
    const state = snap.state || {};
    const selection = Array.from(page.selected).join(",");
    // each part is redrawn only when what it shows changed (a snapshot comes after every move)
    once("header", [snap.game, snap.variant, snap.table, snap.hand_no, state.contract,
      snap.scores, snap.target, snap.seats], renderHeader, snap);
    once("seats", [snap.game, snap.seats, snap.last_move, state.down, state.buys, state.buy_limit],
      renderSeats, snap);
    once("pile", [snap.pile, state.window, Boolean(snap.state), Boolean(snap.hand_end)],
      renderPile, snap);
    once("last", [snap.last_move], renderLastMove, snap);
    once("sides", [snap.game, snap.sides, state.melds, snap.legal, selection],
      isMayI(snap) ? renderMayISeats : renderSides, snap);
    renderMe(snap);
    const events = snap.events || [];
    once("events", [events.length, events[0], events[events.length - 1]], renderEvents, snap);
    once("watchers", [snap.watchers, snap.finished, snap.match_end, snap.host_fingerprint,
      snap.watch_command], renderWatchers, snap);
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
  function yourSide(snap) {
    if (snap.seat === null || snap.seat === undefined) return null;
    if (isMayI(snap)) return snap.seat;
    const row = (snap.seats || [])[snap.seat];
    return row ? row.team : null;
  }

  function renderHeader(snap) {
    const state = snap.state || {};
    const parts = [isMayI(snap) ? "May I?" : "Canasta"];
    if (snap.variant) parts.push(snap.variant);
    if (snap.table) parts.push("table " + snap.table);
    parts.push((isMayI(snap) ? "deal " : "hand ") + snap.hand_no);
    if (isMayI(snap) && state.contract) parts.push("contract: " + state.contract);
    $("game-line").textContent = parts.join(" \u00b7 ");
    document.title = "canasta-net \u00b7 " + parts.slice(0, 2).join(" ");
    const line = clear($("score-line"));
    const mine = yourSide(snap);
    (snap.scores || []).forEach(function (score, side) {
      const names = sideNames(snap, side);
      const chip = el("span", "score" + (side === mine ? " yours" : ""),
        (names.length ? names.join(" & ") : (isMayI(snap) ? "seat " : "team ") + side) + ": " +
        score);
      chip.dataset.side = String(side);
      line.appendChild(chip);
    });
    if (snap.target) line.appendChild(el("span", "score target", "target " + snap.target));
    else if (isMayI(snap)) line.appendChild(el("span", "score target", "lowest total wins"));
  }

  function renderSeats(snap) {
    const row = clear($("seats"));
    const moved = snap.last_move ? snap.last_move.seat : null;
    const state = snap.state || {};
    (snap.seats || []).forEach(function (s) {
      const box = el("div", "seat");
      box.dataset.seat = String(s.seat);
      if (s.you) box.classList.add("you");
      if (s.to_move) box.classList.add("to-move");
      if (s.seat === moved) box.classList.add("moved");
      if (s.left || !s.connected) box.classList.add("gone");
      if (s.taken === false) box.classList.add("open");
      box.appendChild(el("div", "name", s.name + (s.you && s.name !== "you" ? " (you)" : "")));
      const info = [];
      if (s.taken === false) info.push("waiting for a player");
      if (s.bot) info.push("bot");
      if (s.team !== null && s.team !== undefined && !isMayI(snap)) info.push("team " + s.team);
      if (s.cards !== null && s.cards !== undefined) info.push(plural(s.cards, "card"));
      if (s.dealer) info.push("dealer");
      if (isMayI(snap) && state.down) info.push(state.down[s.seat] ? "down" : "not down");
      if (isMayI(snap) && state.buys) info.push(state.buys[s.seat] + "/" + state.buy_limit + " buys");
      if (s.to_move) info.push("to move");
      if (s.left) info.push("left: " + s.left);
      else if (!s.connected && s.taken !== false) info.push("disconnected");
      box.appendChild(el("div", "info", info.join(" \u00b7 ")));
      if (!s.you && s.cards) {
        const backs = el("span", "backs");
        for (let i = 0; i < Math.min(s.cards, 22); i++) backs.appendChild(el("span", "card back"));
        box.appendChild(backs);
      }
      row.appendChild(box);
    });
  }

  function renderPile(snap) {
    const box = clear($("pile"));
    const pile = snap.pile || {};
    box.className = "pile-box" + (pile.frozen_for_you || pile.frozen ? " frozen" : "");
    if (!snap.state) {
      box.appendChild(el("div", "meta-light", snap.hand_end ? "Between hands."
        : "No hand is on the table yet."));
      return;
    }
    const stock = el("div", "stack stock");
    stock.appendChild(el("span", "card big back"));
    stock.appendChild(el("div", null, "stock " + (pile.stock === null || pile.stock === undefined
      ? "?" : pile.stock)));
    box.appendChild(stock);
    const discards = el("div", "stack discards");
    discards.appendChild(pile.top ? cardNode(pile.top, { big: true }) : el("span", "card big empty"));
    discards.appendChild(el("div", "pile-size", "pile " + (pile.size || 0)));
    box.appendChild(discards);
    const note = el("div", "frozen-note");
    if (pile.frozen_for_you) {
      note.appendChild(el("strong", null, "Frozen for you"));
      (pile.frozen_reasons || []).forEach(function (r) { note.appendChild(el("div", null, r)); });
    } else if (pile.frozen) {
      note.appendChild(el("strong", null, "Frozen"));
    }
    const window_ = (snap.state || {}).window;
    if (isMayI(snap) && window_ && window_.asker !== null && window_.asker !== undefined) {
      note.appendChild(el("div", null, seatName(snap, window_.asker) + " asks to buy " +
        (pile.top || "the discard")));
    }
    box.appendChild(note);
  }

  const VERBS = {
    draw: function () { return "drew from the stock"; },
    "take-pile": function (rest, move) {
      const n = move.cards;
      const took = "took the pile" + (typeof n === "number" ? " (" + plural(n, "card") + ")" : "");
      return rest ? took + " with " + rest : took;
    },
    "take-top": function (rest) { return "took the top card onto meld " + rest; },
    "take-discard": function (rest) { return "took the discard " + rest; },
    meld: function (rest) { return "melded " + rest; },
    add: function (rest) {
      const sp = rest.indexOf(" ");
      return "added " + rest.slice(sp + 1) + " to meld " + rest.slice(0, sp);
    },
    merge: function (rest) { return "merged melds " + rest; },
    discard: function (rest) { return "discarded " + rest; },
    "ask-go-out": function () { return "asks: may I go out?"; },
    answer: function (rest) { return "answered " + rest; },
    "may-i": function (rest) { return "says May I? for " + rest; },
    pass: function () { return "passed"; },
    allow: function () { return "allowed the buy"; },
    deny: function (rest) { return "denied, taking " + rest; },
  };
  function describeMove(move) {
    const text = String(move.action || "");
    const sp = text.indexOf(" ");
    const verb = sp < 0 ? text : text.slice(0, sp);
    const rest = sp < 0 ? "" : text.slice(sp + 1);
    const say = VERBS[verb];
    return move.name + " " + (say ? say(rest, move) : text);
  }
  function renderLastMove(snap) {
    const box = $("last-move");
    box.textContent = snap.last_move ? "Last move: " + describeMove(snap.last_move) : "";
  }

  function meldActions(snap, index) {
    // Samba and friends: the legal moves that name this meld without a card from the hand
    const out = [];
    (snap.legal || []).forEach(function (text) {
      const t = text.split(" ");
      if (t[0] === "take-top" && t[1] === String(index)) out.push([text, "take the top card here"]);
      if (t[0] === "take-pile" && t[t.length - 2] === "onto" && t[t.length - 1] === String(index)) {
        out.push([text, "take the pile onto this"]);
      }
      if (t[0] === "merge" && t[1] === String(index)) out.push([text, "merge meld " + t[2] + " in"]);
    });
    return out;
  }

  function meldNode(snap, meld, ref, clickable) {
    const box = el("div", "meld");
    box.dataset.meld = ref;
    const head = el("div", "meld-head");
    head.appendChild(el("span", "label", ref + ": " + meld.label));
    if (meld.canasta) {
      head.appendChild(el("span", "badge " + meld.canasta, meld.canasta + " canasta"));
    }
    if (meld.points !== undefined) {
      head.appendChild(el("span", "pts", (meld.points + (meld.bonus || 0)) + " pts"));
    }
    box.appendChild(head);
    box.appendChild(cardRow(meld.cards || []));
    if (clickable) {
      const sel = selectedCards(snap);
      const text = addText(snap, ref, sel);
      box.classList.add("clickable");
      box.title = "Select cards in your hand, then click here to add them";
      if (text && legalMatch(snap, text)) box.classList.add("target");
      box.addEventListener("click", function () {
        const again = addText(snap, ref, selectedCards(page.snap));
        if (again) act(legalMatch(page.snap, again) || again);
        else showHint("Select the card" + (isMayI(snap) ? "" : "s") + " to add first.");
      });
    }
    if (!isMayI(snap) && clickable) {
      const extra = meldActions(snap, ref);
      if (extra.length) {
        const bar = el("div", "meld-actions");
        extra.forEach(function (pair) {
          const b = actionButton(snap, pair[1], pair[0]);
          b.addEventListener("click", function (e) { e.stopPropagation(); });
          bar.appendChild(b);
        });
        box.appendChild(bar);
      }
    }
    return box;
  }
  function addText(snap, ref, sel) {
    if (!sel.length) return null;
    if (isMayI(snap)) return sel.length === 1 ? "add " + ref + " " + sel[0] : null;
    return "add " + ref + " " + cardsText(sel);
  }

  function renderSides(snap) {
    const box = clear($("sides"));
    const canAdd = Boolean(snap.actions && (snap.actions.add || snap.actions["take-top"] ||
      snap.actions.merge || snap.actions["take-pile"]));
    (snap.sides || []).forEach(function (side) {
      const panel = el("div", "panel side" + (side.yours ? " yours" : ""));
      panel.dataset.side = String(side.team);
      const head = el("div", "side-head");
      head.appendChild(el("h2", null, side.names.join(" & ") + (side.yours ? " (your side)" : "")));
      head.appendChild(el("span", "points", side.meld_points + " points on the table"));
      panel.appendChild(head);
      const bits = [plural(side.canastas, "canasta")];
      if (side.needs !== null && side.needs !== undefined) {
        bits.unshift("not opened: the initial meld needs " + side.needs + " points" +
          (side.laid_this_turn ? ", " + side.laid_this_turn + " laid this turn" : ""));
      } else {
        bits.unshift("opened");
      }
      panel.appendChild(el("div", "opening", bits.join(" \u00b7 ")));
      if (side.red_threes && side.red_threes.length) {
        const reds = el("div", "reds", "Red threes: ");
        reds.appendChild(cardRow(side.red_threes));
        panel.appendChild(reds);
      }
      const list = el("div", "meld-list");
      (side.melds || []).forEach(function (meld) {
        list.appendChild(meldNode(snap, meld, String(meld.index), side.yours && canAdd));
      });
      if (!(side.melds || []).length) list.appendChild(el("div", "no-melds", "no melds yet"));
      panel.appendChild(list);
      box.appendChild(panel);
    });
  }

  function renderMayISeats(snap) {
    // May I?: every seat melds alone, and anyone down may lay off on any meld
    const box = clear($("sides"));
    const state = snap.state || {};
    const canAdd = Boolean(snap.actions && snap.actions.add);
    (state.melds || []).forEach(function (melds, seat) {
      const panel = el("div", "panel side" + (seat === snap.seat ? " yours" : ""));
      panel.dataset.side = String(seat);
      const head = el("div", "side-head");
      head.appendChild(el("h2", null, seatName(snap, seat) + (seat === snap.seat ? " (you)" : "")));
      head.appendChild(el("span", "points", state.down && state.down[seat] ? "down" : "not down"));
      panel.appendChild(head);
      const list = el("div", "meld-list");
      melds.forEach(function (meld, n) {
        list.appendChild(meldNode(snap, meld, seat + "." + n, canAdd));
      });
      if (!melds.length) list.appendChild(el("div", "no-melds", "no melds yet"));
      panel.appendChild(list);
      box.appendChild(panel);
    });
  }

  // ------------------------------------------------------------------ your hand and moves
  function actionButton(snap, label, text) {
    const legal = legalMatch(snap, text);
    const b = el("button", legal ? "primary" : "try", label);
    b.type = "button";
    b.dataset.action = legal || text;
    if (!legal) b.title = "Not among the legal moves: the engine will say why if you try it";
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
    answer: function (rest) { return rest === "yes" ? "Yes, go out" : "No, not yet"; },
    "may-i": function (rest) { return "May I? (buy " + rest + ")"; },
    pass: function () { return "Pass"; },
    allow: function () { return "Allow"; },
    deny: function (rest) { return "Deny: take " + rest + " myself"; },
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
      renderRefusal(snap);
      page.defaultButton = null;
      return;
    }
    renderHand(snap);
    renderStaging(snap);
    renderControls(snap);
    renderRefusal(snap);
  }

  function renderPrompt(snap, spectator) {
    const box = clear($("prompt"));
    box.className = "prompt";
    if (spectator) {
      box.appendChild(el("span", "spectator-note",
        "You are watching: the public table only, no hidden card."));
      const mover = (snap.seats || []).find(function (s) { return s.to_move; });
      if (mover) box.appendChild(el("span", "waiting", mover.name + " to move."));
      return;
    }
    const prompt = snap.prompt;
    if (prompt) {
      box.dataset.kind = prompt.kind;
      if (prompt.kind !== "turn") box.classList.add("ask");
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
    delete box.dataset.kind;
    if (snap.ready_asked && page.readyFor !== (snap.hand_end ? snap.hand_end.hand : null)) {
      box.classList.add("ask");
      box.appendChild(el("span", "prompt-text", "The next hand waits until you are ready."));
      box.appendChild(plainButton("Next hand", readyForNextHand, "primary"));
    } else if (snap.finished) {
      box.appendChild(el("span", "waiting", "The game is over: " + snap.finished + "."));
    } else if (snap.tried) {
      box.appendChild(el("span", "waiting", "Sent \u201c" + snap.tried + "\u201d\u2026"));
    } else {
      const mover = (snap.seats || []).find(function (s) { return s.to_move; });
      box.appendChild(el("span", "waiting", mover ? "Waiting for " + mover.name + " to move."
        : "Waiting for the table."));
    }
  }

  function renderHand(snap) {
    const box = clear($("hand"));
    const staged = stagedIndices();
    let group = null;
    let groupKey = null;
    (snap.hand || []).forEach(function (h, i) {
      if (group === null || h.group !== groupKey) {
        group = el("div", "group");
        group.dataset.group = h.group;
        groupKey = h.group;
        box.appendChild(group);
      }
      const node = cardNode(h.card, { big: true });
      node.dataset.index = String(i);
      if (h.new) {
        node.classList.add("new");
        node.title = h.card + " (just drawn)";
      }
      if (page.selected.has(i)) node.classList.add("selected");
      if (staged.has(i)) node.classList.add("staged");
      if (i === page.cursor && box.dataset.keys === "on") node.classList.add("cursor");
      node.addEventListener("click", function () { toggle(i); });
      group.appendChild(node);
    });
    if (!(snap.hand || []).length) box.appendChild(el("span", "meta", "No cards in your hand."));
  }

  function renderStaging(snap) {
    const box = clear($("staging"));
    if (!isMayI(snap) || !page.staged.length) return;
    const cards = handCards(snap);
    box.appendChild(el("span", "meta", "Staged for the contract:"));
    page.staged.forEach(function (group, n) {
      const g = el("span", "staged-group");
      g.appendChild(cardRow(group.map(function (i) { return cards[i]; })));
      const undo = plainButton("\u00d7", function () {
        page.staged.splice(n, 1);
        render();
      }, "quiet");
      undo.title = "Take this group back into the hand";
      g.appendChild(undo);
      box.appendChild(g);
    });
  }

  function renderControls(snap) {
    const box = clear($("controls"));
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
      if (A.draw) add("Draw", "draw");
      if (isMayI(snap)) {
        (A["take-discard"] || []).forEach(function (t) {
          add("Take the discard " + t.split(" ")[1], t);
        });
      } else if (A["take-pile"]) {
        if (sel.length) add("Take the pile with " + cardsText(sel), "take-pile " + cardsText(sel));
        else {
          A["take-pile"].forEach(function (t) {
            if (t.indexOf(" onto ") >= 0) return; // offered on the meld it goes onto
            add(t === "take-pile" ? "Take the pile" : "Take the pile with " + t.slice(10), t);
          });
        }
      }
      if (A.meld) {
        if (isMayI(snap)) {
          const cards = handCards(snap);
          if (sel.length) {
            buttons.push(plainButton("Stage as a group", function () {
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
            add("Lay the contract: " + groups.map(cardsText).join(" | "),
              "meld " + groups.map(cardsText).join(" | "));
          }
        } else if (sel.length) {
          add("Meld " + cardsText(sel), "meld " + cardsText(sel));
        }
      }
      if (A.add && sel.length) {
        buttons.push(el("span", "meta", "or click a meld to add " + cardsText(sel)));
      }
      if (A.discard && sel.length === 1) add("Discard " + sel[0], "discard " + sel[0]);
      if (A["ask-go-out"]) add("Ask partner: may I go out?", "ask-go-out");
    }
    if (sel.length || page.staged.length) {
      buttons.push(plainButton("Clear selection", clearSelection, "quiet"));
    }
    if (snap.hand_end && !snap.match_end) {
      buttons.push(plainButton("Score sheet", function () {
        page.dismissedSheet = null;
        render();
      }));
    }
    if (A.discard && !sel.length && !asking) {
      buttons.push(el("span", "meta", "Select one card to discard it."));
    }
    buttons.forEach(function (b) { box.appendChild(b); });
    const first = buttons.find(function (b) { return b.classList.contains("primary"); }) ||
      buttons.find(function (b) { return b.tagName === "BUTTON" && b.dataset.action; });
    page.defaultButton = first || null;
    if (first) first.classList.add("default");
  }

  function renderRefusal(snap) {
    const box = clear($("refusal"));
    const shown = page.localError || snap.refusal;
    if (!shown) return;
    if (shown.tried) {
      box.appendChild(el("span", null, "Refused: "));
      box.appendChild(el("span", "tried", shown.tried));
      box.appendChild(el("span", null, " \u2014 "));
    }
    box.appendChild(el("span", "message", shown.message));
  }

  function renderEvents(snap) {
    const list = $("events");
    const lines = snap.events || [];
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 30;
    clear(list);
    lines.forEach(function (line) { list.appendChild(el("li", null, line)); });
    if (atBottom || lines.length < 8) list.scrollTop = list.scrollHeight;
  }

  function renderWatchers(snap) {
    $("quit").textContent = snap.finished || snap.match_end ? "Close the page"
      : "Leave the table\u2026";
    const w = snap.watchers || [];
    $("watchers").textContent = w.length ? w.join(", ") : "Nobody is watching.";
    $("fingerprint").textContent = snap.host_fingerprint
      ? "Table fingerprint: " + snap.host_fingerprint : "";
    $("watch-command").textContent = snap.watch_command
      ? "Others can watch with: " + snap.watch_command : "";
  }

  // a joiner's questions before its seat: the host's fingerprint, the tables heard on the LAN
  function renderLobby(snap) {
    const box = clear($("lobby"));
    const lobby = snap.lobby;
    box.hidden = !lobby;
    if (!lobby) return;
    if (lobby.trust) {
      const t = lobby.trust;
      box.appendChild(el("h2", null, "Is this the table you mean to join?"));
      box.appendChild(el("p", null, (t.table ? "Table " + t.table + " at " : "The host at ") +
        t.address + " has the fingerprint:"));
      box.appendChild(el("p", "fingerprint big-fingerprint", t.fingerprint));
      box.appendChild(el("p", "meta", "Compare it with what the host shows. Accepted, it is " +
        "remembered for this address; refused, you do not join."));
      const yes = plainButton("Accept and join", function () {
        simplePost("/trust", { accept: true }, "accept the fingerprint");
      }, "primary");
      yes.id = "trust-accept";
      const no = plainButton("Refuse", function () {
        simplePost("/trust", { accept: false }, "refuse the fingerprint");
      });
      no.id = "trust-refuse";
      box.appendChild(yes);
      box.appendChild(no);
      return;
    }
    const tables = lobby.tables || [];
    box.appendChild(el("h2", null, "Tables on your network"));
    if (!tables.length) {
      box.appendChild(el("p", "meta", "Listening for tables on the LAN\u2026"));
      return;
    }
    const list = el("ul", "table-list");
    tables.forEach(function (t, i) {
      const item = el("li");
      item.appendChild(el("span", null, t.name + " \u2014 " + t.variant + ", " + t.free + "/" +
        t.seats + " seats free, " + t.deal + " deal, " + t.address + " "));
      item.appendChild(el("span", "meta fingerprint", t.fingerprint + " "));
      const join = plainButton("Join", function () {
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
      const b = el("button", null, text);
      b.type = "button";
      b.dataset.action = text;
      b.addEventListener("click", function () { act(text); });
      item.appendChild(b);
      list.appendChild(item);
    });
    if (!legal.length) list.appendChild(el("li", "meta", "Nothing is asked of you now."));
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
    $("sheet-title").textContent = over ? "The match is over"
      : (isMayI(snap) ? "Deal " : "Hand ") + (end.shown_hand || "") + " is over";
    const reason = [];
    if (end && end.went_out_name) reason.push(end.went_out_name + " went out.");
    else if (end && end.reason) reason.push(String(end.reason) + ".");
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
      match.appendChild(el("td", null, "match total" + (snap.target ? " (target " +
        snap.target + ")" : "")));
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
    "max-hands": "the table's number of hands was played",
  };
  function renderResult(snap) {
    const box = clear($("match-result"));
    const end = snap.match_end;
    if (!end && !snap.finished) return;
    if (end) {
      let text;
      if (end.kind === "match-end" && end.winner !== null && end.winner !== undefined) {
        text = sideNames(snap, end.winner).join(" & ") + " won the match";
      } else if (end.kind === "forfeit") {
        text = "The match ended by forfeit" + (end.seat !== null && end.seat !== undefined
          ? ": " + seatName(snap, end.seat) + " left" : "");
      } else {
        text = "The match stopped" + (end.reason ? ": " + (STOP_REASONS[end.reason] ||
          end.reason) : "");
      }
      box.appendChild(el("div", "winner", text + "."));
      if (end.totals) box.appendChild(el("div", null, "Totals: " + end.totals.join(" \u2013 ")));
    }
    if (snap.finished) box.appendChild(el("div", "meta", "Your session: " + snap.finished + "."));
    const out = snap.outcome || {};
    if (out.log) {
      const line = el("div", null, "The log: ");
      line.appendChild(el("span", "path", out.log));
      box.appendChild(line);
    }
    if (out.verdict) box.appendChild(el("div", "verdict", "Audit: " + out.verdict));
    if (out.replay) {
      const line = el("div", null, "");
      const href = String(out.replay);
      // only a link to this page's own server: never a scheme the snapshot could smuggle in
      if (href.charAt(0) === "/" && href.charAt(1) !== "/") {
        const a = el("a", null, "Open the replay");
        a.href = href;
        a.target = "_blank";
        a.rel = "noopener";
        line.appendChild(a);
      } else {
        line.textContent = "Replay: " + href;
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
    root.appendChild(svg("title", {})).textContent = "Match totals after each hand";
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
      label.textContent = sideNames(snap, l.side).join(" & ").slice(0, 18) + " " +
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
    const status = $("connection");
    const source = new EventSource("/events");
    source.addEventListener("snapshot", function (e) {
      let snap = null;
      try { snap = JSON.parse(e.data); } catch (err) { return; }
      onSnapshot(snap);
    });
    source.addEventListener("open", function () {
      status.textContent = "live";
      status.classList.remove("down");
    });
    source.addEventListener("error", function () {
      const over = page.closed || (page.snap && (page.snap.finished || page.snap.match_end));
      status.textContent = page.closed ? "closed: you may close this tab"
        : over ? "the game is over" : "reconnecting\u2026";
      status.classList.toggle("down", !over);
      if (over) source.close();
    });
  }

  function setup() {
    document.addEventListener("keydown", onKey);
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
        $("connection").textContent = "closed: you may close this tab";
        $("overlay").hidden = true;
        document.body.dataset.closed = "1";
      } else if (window.confirm("Leave the table? The match stops for everyone.")) {
        simplePost("/quit", {}, "quit");
      }
    }
    $("quit").addEventListener("click", leave);
    $("sheet-leave").addEventListener("click", leave);
    connect();
  }

  setup();
})();
