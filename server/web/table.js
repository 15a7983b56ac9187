// The table: the other seats, the stock and the pile, your hand drawn as cards, and the actions.
//
// A tap marks a card (tap again to unmark); the Throw button carries the marked cards' value and
// is enabled only for a legal group; with nothing marked, dragging a card onto the pile throws it
// alone. The server judges every action; this only asks.

import { cardBack, cardElement, cardLabel, classify, sortHand, total } from "./cards.js";
import { limitText } from "./settings.js";
import { el, seatName as nameOfSeat } from "./dom.js";
import { label, t, tNodes } from "./i18n.js";

/** Whether `view`'s seat may throw now. */
function mayThrow(view) {
  if (view.seat === null || view.seat !== view.turn) return false;
  return (view.settings.turn_order === "draw_then_throw" && view.phase === "throw") ||
    (view.settings.turn_order === "throw_then_draw" && view.phase === "start");
}

/** Whether `view`'s seat may draw now. */
function mayDraw(view) {
  if (view.seat === null || view.seat !== view.turn) return false;
  return (view.settings.turn_order === "draw_then_throw" && view.phase === "start") ||
    (view.settings.turn_order === "throw_then_draw" && view.phase === "draw");
}

/** Which cards of `throwCards` the next player could pick up in a throw-then-draw table. */
function pickable(throwCards, pickup) {
  if (throwCards.length === 0) return [];
  if (pickup === "single_only") return throwCards.length === 1 ? throwCards : [];
  if (pickup === "any_card") return throwCards;
  return [...new Set([throwCards[0], throwCards[throwCards.length - 1]])];
}

/** One line of the log, in words, or null for events not worth a line. */
export function describeEvent(event, names, me) {
  const who = (s) => (s === me ? t("log.you") : names[s] || t("seat.n", { n: s + 1 }));
  switch (event.type) {
    case "dealt":
      return t("log.dealt", { round: event.round, who: who(event.dealer), card: cardLabel(event.pile_top) });
    case "called":
      return t("log.called", { who: who(event.seat) });
    case "drew_from_stock":
      return t("log.drew", { who: who(event.seat) });
    case "took_from_pile":
      return t("log.took", { who: who(event.seat), card: cardLabel(event.card) });
    case "threw":
      return t("log.threw", { who: who(event.seat), cards: event.cards.map(cardLabel).join(" ") });
    case "reshuffled":
      return t("log.reshuffled", { count: event.stock });
    case "round_ended":
      return t("log.shown");
    case "match_ended":
      return t("log.matchOver");
    default:
      return null;
  }
}

/**
 * Builds the table into `root`.
 * @param {HTMLElement} root the table section
 * @param {object} hooks
 * @param {(msg: object) => void} hooks.send sends a play message
 * @param {(text: string) => void} hooks.notice shows a short message to the player
 * @param {() => void} hooks.rules opens How to play
 */
export function createTable(root, hooks) {
  root.replaceChildren();
  const header = el("div", "table-head");
  const roundInfo = el("span", "round-info");
  const rulesButton = label(el("button", "link"), "rules.open");
  rulesButton.type = "button";
  rulesButton.id = "open-rules";
  rulesButton.addEventListener("click", hooks.rules);
  // The server's commitment to the match's secret seed, shown from the first deal: after the
  // match the seed is revealed and the page checks every deal against it (fair.js).
  const commitment = el("span", "commitment");
  commitment.id = "commitment";
  commitment.tabIndex = 0;
  commitment.hidden = true;
  header.append(roundInfo, commitment, rulesButton);

  const seats = el("div", "seats");
  seats.id = "seats";
  const middle = el("div", "middle");
  const stockBox = el("div", "stock-box");
  const stock = cardBack({ tag: "button" });
  stock.id = "stock";
  stock.classList.add("stock");
  const stockLabel = el("span", "pile-label");
  stockBox.append(stock, stockLabel);
  const pileBox = el("div", "pile-box");
  pileBox.id = "pile";
  middle.append(stockBox, pileBox);
  const prompt = el("p", "prompt");
  prompt.id = "prompt";
  prompt.setAttribute("aria-live", "polite");
  const log = el("ol", "log");
  log.id = "log";
  label(log, "table.log", "aria-label");

  const mine = el("div", "mine");
  const status = el("p", "status");
  status.id = "status";
  const hand = el("div", "hand");
  hand.id = "hand";
  hand.setAttribute("role", "group");
  label(hand, "table.hand", "aria-label");
  const actions = el("div", "actions");
  const sortButton = label(el("button", ""), "table.sort");
  sortButton.type = "button";
  sortButton.id = "sort";
  const callButton = el("button", "call", t("table.call"));
  callButton.type = "button";
  callButton.id = "call";
  const throwButton = el("button", "primary", t("table.throw"));
  throwButton.type = "button";
  throwButton.id = "throw";
  actions.append(sortButton, callButton, throwButton);
  mine.append(status, hand, actions);
  root.append(header, seats, middle, prompt, mine, log);

  let view = null;
  let room = null;
  let names = [];
  let order = []; // the hand in the order the player keeps it
  let marked = []; // marked cards, in the order they were marked

  const court = () => view.settings.court;
  const markedValid = () => marked.length > 0 && classify(marked, view.settings) !== null &&
    !marked.includes(view.barred);

  const sendThrow = (cards) => {
    // The cards land in the order they were marked; the last one is the new pile top.
    hooks.send({ type: "throw", cards });
    marked = [];
  };
  const draw = (from, card) => {
    const msg = { type: "draw", from };
    if (card) msg.card = card;
    hooks.send(msg);
  };

  const toggle = (card) => {
    if (!view || view.seat === null) return;
    if (card === view.barred) {
      hooks.notice(t("table.barredNotice", { card: cardLabel(card) }));
      return;
    }
    marked = marked.includes(card) ? marked.filter((c) => c !== card) : [...marked, card];
    paint();
  };

  const doThrow = () => {
    if (view && mayThrow(view) && markedValid()) sendThrow(marked);
  };
  const doCall = () => {
    if (view && view.can_call) hooks.send({ type: "call" });
  };
  const doSort = () => {
    if (!view) return;
    order = sortHand(order, court());
    paint();
  };
  const drawStock = () => {
    if (view && mayDraw(view)) draw("stock");
  };
  const drawPile = (card) => {
    if (!view || !mayDraw(view)) return;
    const takeable = view.takeable;
    if (card && takeable.includes(card)) draw("pile", card);
    else if (!card && takeable.length === 1) draw("pile", takeable[0]);
    else if (!card && takeable.length > 1) hooks.notice(t("error.choose_pile_card"));
    else hooks.notice(t(view.settings.turn_order === "throw_then_draw" ? "table.cantPickUp" : "table.onlyTop"));
  };

  throwButton.addEventListener("click", doThrow);
  callButton.addEventListener("click", doCall);
  sortButton.addEventListener("click", doSort);
  stock.addEventListener("click", drawStock);

  // Dragging a card onto the pile, with nothing marked, throws it alone. Pointer events work for
  // mouse, pen and touch alike; a short movement is still a tap.
  let drag = null;
  hand.addEventListener("pointerdown", (event) => {
    const cardEl = event.target.closest(".card");
    if (!cardEl || event.button !== 0) return;
    drag = { card: cardEl.dataset.card, el: cardEl, x: event.clientX, y: event.clientY, ghost: null, id: event.pointerId };
  });
  const endDrag = () => {
    if (drag && drag.ghost) drag.ghost.remove();
    if (drag) drag.el.classList.remove("dragging");
    pileBox.classList.remove("drop-target");
    drag = null;
  };
  window.addEventListener("pointermove", (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.ghost && Math.hypot(dx, dy) < 10) return;
    if (!drag.ghost) {
      if (marked.length > 0 || !mayThrow(view)) {
        if (marked.length > 0) hooks.notice(t("table.unmarkToDrag"));
        drag = null;
        return;
      }
      drag.ghost = cardElement(drag.card);
      drag.ghost.classList.add("ghost");
      document.body.append(drag.ghost);
      drag.el.classList.add("dragging");
    }
    drag.ghost.style.left = `${event.clientX}px`;
    drag.ghost.style.top = `${event.clientY}px`;
    const r = pileBox.getBoundingClientRect();
    const over = event.clientX >= r.left && event.clientX <= r.right && event.clientY >= r.top && event.clientY <= r.bottom;
    pileBox.classList.toggle("drop-target", over);
  });
  window.addEventListener("pointerup", (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    const wasDrag = drag.ghost !== null;
    const card = drag.card;
    const over = pileBox.classList.contains("drop-target");
    endDrag();
    if (!wasDrag) {
      toggle(card);
    } else if (over) {
      if (card === view.barred) hooks.notice(t("table.barredNotice", { card: cardLabel(card) }));
      else sendThrow([card]);
    }
  });
  window.addEventListener("pointercancel", endDrag);
  // Keyboard: Enter or Space on a card marks it (a click without a pointer).
  hand.addEventListener("click", (event) => {
    if (event.detail !== 0) return;
    const cardEl = event.target.closest(".card");
    if (cardEl) toggle(cardEl.dataset.card);
  });

  const keys = (event) => {
    if (!view || root.hidden || event.ctrlKey || event.metaKey || event.altKey) return;
    if (document.querySelector("dialog[open]")) return;
    const tag = document.activeElement ? document.activeElement.tagName : "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    const k = event.key.toLowerCase();
    if (/^[1-9]$/.test(k)) {
      const card = order[Number(k) - 1];
      if (card) toggle(card);
    } else if (k === "t") doThrow();
    else if (k === "c") doCall();
    else if (k === "o") doSort();
    else if (k === "s") drawStock();
    else if (k === "p") drawPile(null);
    else if (k === "escape") { marked = []; paint(); }
    else return;
    event.preventDefault();
  };
  document.addEventListener("keydown", keys);

  function seatName(s) {
    return names[s] || t("seat.n", { n: s + 1 });
  }

  // What each seat did on its latest turn this round ("took 7♥ · threw K♥"), from the log.
  let lastTurn = [];
  function readLastTurns() {
    lastTurn = [];
    let current = null;
    for (const e of view.log) {
      if (!["drew_from_stock", "took_from_pile", "threw", "called"].includes(e.type)) continue;
      if (e.seat !== current) lastTurn[e.seat] = [];
      current = e.seat;
      // A blind draw from the stock is implied by a turn without a pick-up.
      if (e.type === "took_from_pile") lastTurn[e.seat].push(t("seat.lastTook", { card: cardLabel(e.card) }));
      if (e.type === "threw") lastTurn[e.seat].push(t("seat.lastThrew", { cards: e.cards.map(cardLabel).join(" ") }));
      if (e.type === "called") lastTurn[e.seat].push(t("seat.lastCalled"));
    }
    lastTurn = lastTurn.map((parts) => (parts && parts.length ? parts.join(", ") : null));
  }

  function paintSeats() {
    readLastTurns();
    seats.replaceChildren();
    const n = view.card_counts.length;
    const first = view.seat === null ? 0 : view.seat + 1;
    for (let k = 0; k < n; k += 1) {
      const s = (first + k) % n;
      if (s === view.seat) continue;
      const info = room && room.seats[s];
      const box = el("div", "seat");
      box.dataset.seat = String(s);
      const playing = view.turn === s && !["round_over", "match_over"].includes(view.phase);
      if (playing) box.classList.add("turn");
      if (view.eliminated[s]) box.classList.add("out");
      const name = el("div", "seat-name");
      const dot = el("span", `conn ${info && !info.connected ? "off" : "on"}`);
      dot.title = t(info && !info.connected ? "seat.away" : "seat.here");
      name.append(dot, el("span", "", seatName(s)));
      if (s === view.dealer) {
        const dealer = el("span", "dealer", t("seat.dealerMark"));
        dealer.title = t("seat.dealer");
        name.append(dealer);
      }
      const meta = el("div", "seat-meta");
      const level = (d) => t(`difficulty.${d}`);
      if (info && info.kind === "bot") meta.append(el("span", "", t("seat.botLevel", { level: level(info.difficulty || view.settings.difficulty) })));
      else if (info && info.kind === "human" && info.stand_in) meta.append(el("span", "", t("seat.standIn", { level: level(info.stand_in) })));
      else if (info && info.kind === "human" && !info.connected) meta.append(el("span", "", t("seat.away")));
      else meta.append(el("span", "", t("lobby.player")));
      if (info && info.muted) meta.append(el("span", "muted-tag", ` \u00b7 ${t("lobby.muted")}`));
      const count = el("div", "seat-count");
      const backs = el("span", "backs");
      for (let i = 0; i < Math.min(view.card_counts[s], 7); i += 1) backs.append(el("i"));
      count.append(backs, el("span", "count", t("seat.cards", { count: view.card_counts[s] })));
      const score = el("div", "seat-total", t("seat.total", { total: view.settings.scoring === "cumulative" ? view.totals[s] : signedTotal(view.totals[s]) }));
      box.append(name, meta, count, score);
      if (lastTurn[s]) box.append(el("div", "seat-last", lastTurn[s]));
      if (playing) box.append(el("div", "seat-turn", t("seat.playing")));
      if (view.eliminated[s]) box.append(el("div", "seat-turn", t("seat.out")));
      seats.append(box);
    }
  }

  function paintPile() {
    pileBox.replaceChildren();
    const s = view.settings;
    const canDraw = mayDraw(view);
    const groupBox = (cards, label, takeable, hint) => {
      const g = el("div", "throw-group");
      const row = el("div", "fan");
      cards.forEach((c, i) => {
        const take = takeable.includes(c);
        const cardEl = cardElement(c, { tag: take && canDraw ? "button" : "div" });
        if (take) {
          cardEl.classList.add(canDraw ? "takeable" : "pickable");
          if (canDraw) {
            cardEl.addEventListener("click", () => drawPile(c));
            cardEl.setAttribute("aria-label", t("pile.take", { card: cardEl.getAttribute("aria-label") }));
          }
        } else if (hint.includes(c)) {
          cardEl.classList.add("pickable");
        }
        if (i === cards.length - 1) cardEl.classList.add("top");
        row.append(cardEl);
      });
      g.append(row, el("span", "pile-label", label));
      return g;
    };
    if (s.turn_order === "throw_then_draw") {
      if (view.phase === "draw" && view.previous_throw.length > 0) {
        pileBox.append(groupBox(view.previous_throw, t(view.seat === view.turn ? "pile.previousTake" : "pile.previous"), view.takeable, []));
      }
      if (view.top_throw.length > 0) {
        const hint = view.phase === "start" ? pickable(view.top_throw, s.pickup) : [];
        pileBox.append(groupBox(view.top_throw, t(view.phase === "draw" ? "pile.justThrown" : "pile.lastThrow"), [], hint));
      }
    } else if (view.top_throw.length > 0) {
      pileBox.append(groupBox(view.top_throw, t("pile.count", { count: view.pile_size }), view.takeable, []));
    } else if (view.pile_top) {
      pileBox.append(groupBox([view.pile_top], t("pile.count", { count: view.pile_size }), view.takeable, []));
    }
    if (pileBox.childElementCount === 0) {
      const g = el("div", "throw-group");
      g.append(el("div", "card empty-slot"), el("span", "pile-label", t("pile.empty")));
      pileBox.append(g);
    }
    stock.disabled = !canDraw;
    stock.classList.toggle("takeable", canDraw);
    stock.setAttribute("aria-label", t(canDraw ? "stock.ariaDraw" : "stock.aria", { count: view.stock_size }));
    stockLabel.textContent = t("stock.count", { count: view.stock_size });
  }

  function paintHand() {
    // Keep the keyboard's place: the card that had focus has it again after the redraw.
    const focused = hand.contains(document.activeElement) ? document.activeElement.dataset.card : null;
    hand.replaceChildren();
    hand.classList.toggle("many", order.length > 6);
    hand.style.setProperty("--n", String(Math.max(5, order.length)));
    order.forEach((c, i) => {
      const cardEl = cardElement(c, { tag: "button" });
      const isMarked = marked.includes(c);
      cardEl.classList.toggle("marked", isMarked);
      cardEl.setAttribute("aria-pressed", String(isMarked));
      cardEl.title = `${i + 1}`;
      if (c === view.barred) {
        cardEl.classList.add("barred");
        cardEl.append(el("span", "barred-tag", t("hand.justTaken")));
        cardEl.setAttribute("aria-label", t("hand.barredAria", { card: cardEl.getAttribute("aria-label") }));
      }
      hand.append(cardEl);
      if (c === focused) cardEl.focus({ preventScroll: true });
    });
    if (view.seat === null) hand.append(el("p", "note", t("hand.watching")));
  }

  function paintActions() {
    const s = view.settings;
    const canThrow = mayThrow(view);
    const value = total(marked, court());
    throwButton.textContent = marked.length > 0 ? t("table.throwValue", { value }) : t("table.throw");
    throwButton.disabled = !(canThrow && markedValid());
    if (marked.length > 0 && !markedValid()) {
      throwButton.title = t(marked.includes(view.barred) ? "table.throwBarred" : "table.throwBad");
    } else {
      throwButton.title = "";
    }
    callButton.hidden = !view.can_call;
    callButton.textContent = t("table.callOn", { total: view.hand_total });
    sortButton.disabled = order.length < 2;
    const holding = el("b", "", t("status.holding", { total: view.hand_total }));
    const limit = el("span", "limit", limitText(s));
    const mineTotal = view.totals[view.seat];
    const totalText = el("span", "limit", t("seat.total", { total: s.scoring === "cumulative" ? mineTotal : signedTotal(mineTotal) }));
    status.replaceChildren(holding, limit, totalText);
    if (marked.length > 0) {
      const kind = classify(marked, s);
      status.append(el("span", `marked-note${kind ? "" : " bad"}`,
        kind ? t("status.marked", { count: marked.length, value }) : t("status.bad")));
    }
    if (view.seat === null) status.replaceChildren(el("b", "", t("status.watching")));
    actions.hidden = view.seat === null;
  }

  function paintPrompt() {
    const s = view.settings;
    let text;
    if (view.phase === "round_over" || view.phase === "match_over") {
      text = t("prompt.roundOver");
    } else if (view.seat !== null && view.turn === view.seat && room && room.seats[view.seat] && room.seats[view.seat].stand_in) {
      text = t("prompt.standIn");
    } else if (view.seat !== null && view.turn === view.seat) {
      if (view.phase === "start" && s.turn_order === "draw_then_throw") {
        text = t(view.can_call ? "prompt.callOrDraw" : "prompt.draw");
      } else if (view.phase === "start") {
        text = t(view.can_call ? "prompt.callOrThrowFirst" : "prompt.throwFirst");
      } else if (view.phase === "throw") {
        text = t("prompt.throw");
      } else {
        text = t(view.takeable.length > 0 ? "prompt.pickUp" : "prompt.pickUpStock");
      }
    } else {
      text = t("prompt.playing", { name: seatName(view.turn) });
    }
    prompt.textContent = text;
    prompt.classList.toggle("yours", view.seat !== null && view.turn === view.seat && !["round_over", "match_over"].includes(view.phase));
    const round = s.rounds === "until_one_remains"
      ? t("table.round", { round: view.round })
      : t("table.roundOf", { round: view.round, rounds: s.rounds.fixed });
    const throws = t("table.throws", { throws: view.throws, cap: view.throw_cap });
    roundInfo.textContent = [round, limitText(s), throws].join(" \u00b7 ");
  }

  function paintLog() {
    log.replaceChildren();
    const lines = view.log.map((e) => describeEvent(e, names, view.seat)).filter(Boolean);
    for (const line of lines.slice(-6)) log.append(el("li", "", line));
  }

  function paintCommitment() {
    const value = room && room.fairness ? room.fairness.commitment : null;
    commitment.hidden = !value;
    if (!value) return;
    commitment.dataset.commitment = value;
    const hex = el("span", "", `${value.slice(0, 4)}\u2026${value.slice(-4)}`);
    hex.translate = false;
    commitment.replaceChildren(...tNodes("table.commitment", { hex }));
    commitment.title = t("table.commitmentTitle", { hex: value });
    commitment.setAttribute("aria-label", commitment.title);
  }

  function paint() {
    if (!view) return;
    // State on the root, for styling and for anyone (or any test) reading the page.
    root.dataset.phase = view.phase;
    root.dataset.round = String(view.round);
    root.dataset.myTurn = String(view.seat !== null && view.turn === view.seat && !["round_over", "match_over"].includes(view.phase));
    root.dataset.mayDraw = String(mayDraw(view));
    root.dataset.mayThrow = String(mayThrow(view));
    mine.dataset.seat = view.seat === null ? "" : String(view.seat);
    paintSeats();
    paintPile();
    paintHand();
    paintActions();
    paintPrompt();
    paintLog();
  }

  return {
    /** Shows a new view (and the room's seats and names). */
    render(newView, newRoom) {
      const handChanged = !view || view.round !== newView.round;
      view = newView;
      room = newRoom;
      names = room ? room.seats.map(nameOfSeat) : [];
      paintCommitment();
      if (handChanged) order = [];
      order = order.filter((c) => view.hand.includes(c));
      for (const c of view.hand) if (!order.includes(c)) order.push(c);
      marked = marked.filter((c) => view.hand.includes(c));
      paint();
    },
    /** Forgets the hand order and the marks (a new match). */
    reset() {
      view = null;
      order = [];
      marked = [];
    },
    /** The hand as the player keeps it. */
    handOrder: () => [...order],
    /** Tears down the keyboard handler. */
    destroy() {
      document.removeEventListener("keydown", keys);
    },
  };
}

function signedTotal(n) {
  return n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0";
}
