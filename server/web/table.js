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

/**
 * One line of the log, in words, or null for events not worth a line. `standIn`: a stand-in bot
 * played it for the seat's person, and the line names the bot ("A bot (for Asha) threw 9♠").
 */
export function describeEvent(event, names, me, standIn = false) {
  const name = (s) => names[s] || t("seat.n", { n: s + 1 });
  const who = (s) => {
    if (standIn) return s === me ? t("log.botForYou") : t("log.botFor", { name: name(s) });
    return s === me ? t("log.you") : name(s);
  };
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
 * A `notice` in words (a toast and a line of the log): a turn ran out, the host handed a seat to
 * a bot or removed a person, someone is back. `me` is this page's seat.
 */
export function noticeText(notice, me) {
  const you = me !== null && me !== undefined && notice.seat === me;
  const params = { name: notice.name };
  switch (notice.kind) {
    case "timed_out":
      if (notice.away) return t(you ? "notice.awayYou" : "notice.away", params);
      return t(you ? "notice.timedOutYou" : "notice.timedOut", params);
    case "handed_to_bot":
      return t(you ? "notice.handedYou" : "notice.handed", params);
    case "removed":
      return t("notice.removed", params);
    case "back":
      return t(you ? "notice.backYou" : "notice.back", params);
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
  // The turn alert: a tone and a vibration when this seat's turn comes; off until turned on here,
  // and remembered on this device.
  const alertButton = el("button", "link turn-alert");
  alertButton.type = "button";
  alertButton.id = "turn-alert";
  const paintAlert = () => {
    const on = alertOn();
    alertButton.textContent = t(on ? "alert.onText" : "alert.offText");
    alertButton.title = t("alert.title");
    alertButton.setAttribute("aria-pressed", String(on));
  };
  alertButton.addEventListener("click", () => {
    setAlert(!alertOn());
    if (alertOn()) primeAudio();
    paintAlert();
  });
  paintAlert();
  header.insertBefore(alertButton, rulesButton);

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
  // Call, Sort hand and Throw each keep one place (a grid of three): Call's stays empty while it
  // is hidden, so Throw never moves, and Sort hand stands between them. On the limit exactly a
  // line under Call warns that a tie catches a caller.
  const callSlot = el("div", "call-slot");
  const callHint = el("small", "call-hint");
  callHint.id = "call-hint";
  callHint.hidden = true;
  callSlot.append(callButton, callHint);
  actions.append(callSlot, sortButton, throwButton);
  mine.append(status, hand, actions);
  root.append(header, seats, middle, prompt, mine, log);
  // The host's list of the people removed during the match, each with Let back.
  const removedList = el("ul", "table-removed");
  removedList.id = "table-removed";
  label(removedList, "lobby.removedList", "aria-label");
  removedList.hidden = true;
  root.append(removedList);

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
    // Keep the keyboard's place in the host's menu, or on a seat, across the redraw.
    const focused = seats.contains(document.activeElement) ? document.activeElement : null;
    if (menu && focused && focused.dataset.action && !menu.focus) menu.focus = focused.dataset.action;
    const focusSeat = focused && focused.classList.contains("seat") ? focused.dataset.seat : null;
    rebuilding = true;
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
      else if (info && info.kind === "human" && info.stand_in) {
        // A stand-in plays this person's turns: away (or gone), or this one turn ran out.
        box.classList.add("stand-in");
        const badge = el("span", "bot-badge", "\u{1F916}");
        badge.setAttribute("role", "img");
        label(badge, "seat.botBadge", "aria-label");
        label(badge, "seat.botBadge", "title");
        const away = info.away || !info.connected;
        meta.append(badge, el("span", "", away ? t("seat.standIn", { level: level(info.stand_in) }) : t("seat.timedOutBot")));
      }
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
      if (hostMay(info)) menuTrigger(box, s, name);
      seats.append(box);
    }
    paintMenu();
    // The turn's clock goes on the seats just drawn (or on this page's own).
    paintClock();
    if (focusSeat !== null && !seats.contains(document.activeElement)) {
      const again = seats.querySelector(`.seat[data-seat="${focusSeat}"]`);
      if (again && again.tabIndex === 0) again.focus({ preventScroll: true });
    }
    rebuilding = false;
  }

  // ----- The host's menu on a person's seat, during the match -----

  /**
   * The seat whose menu is open, or null: `{ seat, confirm }` (`confirm`: it asks whether to
   * remove them), and `focus`, the item to focus when it is drawn next.
   */
  let menu = null;
  /** Whether the seats are being drawn again (their focus moves on purpose). */
  let rebuilding = false;

  /** Whether this page is the host and may hand this seat's person to a bot or remove them. */
  function hostMay(info) {
    return Boolean(info && info.kind === "human" && room && view.seat !== null && room.host === view.seat &&
      info.seat !== view.seat && (room.stage === "playing" || room.stage === "between_rounds"));
  }

  /** Makes a person's seat open the host's menu (by click, Enter, Space or Down). */
  function menuTrigger(box, s, nameRow) {
    box.classList.add("has-menu");
    box.tabIndex = 0;
    box.setAttribute("role", "button");
    box.setAttribute("aria-haspopup", "dialog");
    box.setAttribute("aria-expanded", String(Boolean(menu && menu.seat === s)));
    box.setAttribute("aria-label", t("host.menu", { name: seatName(s) }));
    const mark = el("span", "seat-menu-mark", "\u22ee");
    mark.setAttribute("aria-hidden", "true");
    nameRow.append(mark);
    box.addEventListener("click", () => {
      menu = menu && menu.seat === s ? null : { seat: s, confirm: false, focus: "first" };
      paintSeats();
    });
    box.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " " && event.key !== "ArrowDown") return;
      event.preventDefault();
      event.stopPropagation();
      menu = { seat: s, confirm: false, focus: "first" };
      paintSeats();
    });
  }

  function closeMenu(refocus) {
    if (!menu) return;
    const s = menu.seat;
    menu = null;
    paintSeats();
    const box = seats.querySelector(`.seat[data-seat="${s}"]`);
    if (refocus && box) box.focus({ preventScroll: true });
  }

  /** Draws the open menu under its seat, inside the row of seats. */
  function paintMenu() {
    if (!menu) return;
    const box = seats.querySelector(`.seat[data-seat="${menu.seat}"]`);
    const info = room && room.seats[menu.seat];
    if (!box || !hostMay(info)) {
      menu = null;
      return;
    }
    const name = seatName(menu.seat);
    const pop = el("div", "seat-menu");
    pop.id = "seat-menu";
    pop.dataset.seat = String(menu.seat);
    pop.setAttribute("role", "dialog");
    pop.setAttribute("aria-label", t("host.menu", { name }));
    const item = (text, action, cls) => {
      const b = el("button", cls, text);
      b.type = "button";
      b.dataset.action = action;
      return b;
    };
    if (menu.confirm) {
      const ask = el("p", "seat-menu-text", t("host.removeConfirm", { name }));
      ask.id = "seat-menu-ask";
      pop.setAttribute("aria-describedby", ask.id);
      pop.append(ask, item(t("host.removeYes", { name }), "remove-yes", "danger"), item(t("host.cancel"), "cancel", ""));
    } else {
      pop.append(el("p", "seat-menu-title", name));
      if (info.away) pop.append(el("p", "seat-menu-text", t("host.alreadyBot", { name })));
      else pop.append(item(t("host.handToBot"), "hand", ""));
      pop.append(item(t("host.remove"), "remove", "danger-outline"));
    }
    pop.addEventListener("click", (event) => {
      const b = event.target.closest("button");
      if (!b || !menu) return;
      const seat = menu.seat;
      if (b.dataset.action === "hand") {
        hooks.send({ type: "hand_to_bot", seat });
        closeMenu(true);
      } else if (b.dataset.action === "remove") {
        menu = { seat, confirm: true, focus: "first" };
        paintSeats();
      } else if (b.dataset.action === "remove-yes") {
        hooks.send({ type: "clear_seat", seat });
        closeMenu(false);
      } else if (b.dataset.action === "cancel") {
        menu = { seat, confirm: false, focus: "remove" };
        paintSeats();
      }
    });
    pop.addEventListener("keydown", (event) => {
      // The table's shortcut keys are not for the menu.
      event.stopPropagation();
      const items = [...pop.querySelectorAll("button")];
      const at = items.indexOf(document.activeElement);
      if (event.key === "Escape") closeMenu(true);
      else if (event.key === "ArrowDown") items[(at + 1) % items.length].focus();
      else if (event.key === "ArrowUp") items[(at - 1 + items.length) % items.length].focus();
      else if (event.key === "Home") items[0].focus();
      else if (event.key === "End") items[items.length - 1].focus();
      else return;
      event.preventDefault();
    });
    pop.addEventListener("focusout", (event) => {
      const to = event.relatedTarget;
      if (rebuilding || !menu || (to && (pop.contains(to) || box.contains(to)))) return;
      if (to) closeMenu(false);
    });
    seats.append(pop);
    // Under its seat, and never wider than the row (a phone must not scroll sideways).
    const left = Math.max(0, Math.min(box.offsetLeft, seats.clientWidth - pop.offsetWidth));
    pop.style.left = `${left}px`;
    pop.style.top = `${box.offsetTop + box.offsetHeight + 4}px`;
    const want = menu.focus;
    menu.focus = null;
    const items = [...pop.querySelectorAll("button")];
    const target = want === "first" ? items[0] : items.find((b) => b.dataset.action === want);
    if (target) target.focus({ preventScroll: true });
  }

  // A press anywhere but the menu and its seat closes the menu.
  const outside = (event) => {
    if (!menu) return;
    const inMenu = event.target.closest && event.target.closest("#seat-menu, #seats .seat.has-menu");
    if (!inMenu) {
      menu = null;
      if (view) paintSeats();
    }
  };
  document.addEventListener("pointerdown", outside);

  // ----- The turn's clock -----

  let ticker = null;
  const remaining = (c) => Math.max(0, c.at + c.left_ms - performance.now());

  /**
   * The clock of the turn being played, on its seat (this page's own at the top of the hand's
   * area): a bar that empties and the seconds left, urgent in the last 5. Its room is kept at
   * every seat of a table with a timer, so nothing moves when it comes or goes.
   */
  function paintClock() {
    root.classList.toggle("timed", Boolean(view.settings.turn_timer));
    for (const old of mine.querySelectorAll(":scope > .turn-clock")) old.remove();
    mine.classList.remove("clock-urgent");
    const c = view.clock;
    const place = !c || ["round_over", "match_over"].includes(view.phase) ? null
      : c.seat === view.seat ? mine : seats.querySelector(`.seat[data-seat="${c.seat}"]`);
    if (!place) {
      stopClock();
      return;
    }
    const clock = el("div", "turn-clock");
    clock.setAttribute("role", "timer");
    clock.dataset.seat = String(c.seat);
    const bar = el("span", "turn-clock-bar");
    const fill = el("i");
    // The bar goes on from where the clock stands now, however often the seat is drawn again.
    fill.style.animationDuration = `${c.total_ms}ms`;
    fill.style.animationDelay = `-${Math.max(0, c.total_ms - remaining(c))}ms`;
    bar.append(fill);
    clock.append(bar, el("span", "turn-clock-secs"));
    place.append(clock);
    tick();
    if (!ticker && remaining(c) > 0) ticker = setInterval(tick, 200);
  }

  function tick() {
    const c = view && view.clock;
    const clocks = root.querySelectorAll(".turn-clock");
    if (!c || clocks.length === 0) {
      stopClock();
      return;
    }
    const left = remaining(c);
    const secs = Math.ceil(left / 1000);
    for (const clock of clocks) {
      // Whole seconds, for a bar that must not glide (prefers-reduced-motion).
      clock.style.setProperty("--left", String(Math.min(1, (secs * 1000) / c.total_ms)));
      if (clock.dataset.seconds !== String(secs)) {
        clock.dataset.seconds = String(secs);
        clock.querySelector(".turn-clock-secs").textContent = t("timer.seconds", { count: secs });
        clock.setAttribute("aria-label", t("clock.aria", { count: secs }));
      }
      const urgent = left <= 5000;
      clock.classList.toggle("urgent", urgent);
      clock.parentElement.classList.toggle("clock-urgent", urgent);
    }
    if (left <= 0) stopClock();
  }

  function stopClock() {
    if (ticker) clearInterval(ticker);
    ticker = null;
  }

  // ----- The host's list of the people removed, with Let back -----

  let removedShown = "";
  function paintRemoved() {
    const host = room && view.seat !== null && room.host === view.seat && room.stage !== "lobby";
    const list = host ? room.removed || [] : [];
    const key = JSON.stringify([list, t("lobby.letBack")]);
    if (key === removedShown) return;
    removedShown = key;
    removedList.replaceChildren();
    list.forEach((who, i) => {
      const li = el("li", "table-removed-item");
      const back = el("button", "", t("lobby.letBack"));
      back.type = "button";
      back.setAttribute("aria-label", `${t("lobby.letBack")}: ${who}`);
      back.addEventListener("click", () => hooks.send({ type: "readmit", removed: i }));
      li.append(el("span", "", t("lobby.removed", { name: who })), back);
      removedList.append(li);
    });
    removedList.hidden = list.length === 0;
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
        pileBox.append(groupBox(view.previous_throw, previousThrowLabel(view, canDraw), view.takeable, []));
      }
      if (view.top_throw.length > 0) {
        const hint = view.phase === "start" ? pickable(view.top_throw, s.pickup) : [];
        pileBox.append(groupBox(view.top_throw, t(view.phase === "draw" ? "pile.justThrown" : "pile.lastThrow"), [], hint));
      }
    } else if (view.top_throw.length > 0) {
      pileBox.append(groupBox(view.top_throw, pileLabel(view, canDraw), view.takeable, []));
    } else if (view.pile_top) {
      pileBox.append(groupBox([view.pile_top], pileLabel(view, canDraw), view.takeable, []));
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
    const tie = view.can_call && s.call_limit !== null && view.hand_total === s.call_limit;
    callHint.hidden = !tie;
    callHint.textContent = tie ? t("table.callTie") : "";
    callButton.classList.toggle("tie", tie);
    if (tie) callButton.setAttribute("aria-describedby", "call-hint");
    else callButton.removeAttribute("aria-describedby");
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
    } else {
      // The line keeps its place with nothing marked, so that marking a card moves nothing.
      status.append(el("span", "marked-note empty"));
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
      text = t("prompt.botPlays");
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
    // The round's events, a stand-in's naming the bot, with the table's notices in their places.
    const marks = new Set(view.standIn || []);
    const notes = view.notes || [];
    const lines = [];
    let next = 0;
    const notesUpTo = (at) => {
      for (; next < notes.length && notes[next].at <= at; next += 1) {
        const text = noticeText(notes[next].notice, view.seat);
        if (text) lines.push({ text, cls: "log-notice" });
      }
    };
    view.log.forEach((e, i) => {
      notesUpTo(i);
      const text = describeEvent(e, names, view.seat, marks.has(i));
      if (text) lines.push({ text, cls: marks.has(i) ? "log-stand-in" : "" });
    });
    notesUpTo(Infinity);
    for (const line of lines.slice(-6)) log.append(el("li", line.cls, line.text));
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
    paintRemoved();
    keepHand(room, view, order, marked);
  }

  /** The boxes cards may fly from, as they are before a redraw that adds `events` to the log. */
  function flightsFrom(events) {
    const handBoxes = new Map([...hand.querySelectorAll(".card")].map((c) => [c.dataset.card, c.getBoundingClientRect()]));
    const top = pileBox.querySelector(".card.top");
    return { events, hand: handBoxes, pile: (top || pileBox).getBoundingClientRect(), stock: stock.getBoundingClientRect() };
  }

  /** Flies the cards of the events just drawn: the stock or the pile to a hand, a hand to the pile. */
  function flyEvents(before) {
    const me = view.seat;
    const seatBox = (s) => {
      const box = seats.querySelector(`.seat[data-seat="${s}"]`);
      return box ? box.getBoundingClientRect() : null;
    };
    const handBox = (c) => {
      const cardEl = [...hand.querySelectorAll(".card")].find((e) => e.dataset.card === c);
      return cardEl ? cardEl.getBoundingClientRect() : null;
    };
    const top = pileBox.querySelector(".card.top");
    const pile = (top || pileBox).getBoundingClientRect();
    let delay = 0;
    for (const e of before.events) {
      const mine = e.seat === me;
      if (e.type === "drew_from_stock") {
        const drawn = mine ? view.hand.find((c) => !before.hand.has(c)) : null;
        fly(drawn || null, before.stock, mine ? handBox(drawn) : seatBox(e.seat), ["stock", mine ? "hand" : "seat"], delay);
      } else if (e.type === "took_from_pile") {
        fly(e.card, before.pile, mine ? handBox(e.card) : seatBox(e.seat), ["pile", mine ? "hand" : "seat"], delay);
      } else if (e.type === "threw") {
        const last = e.cards[e.cards.length - 1];
        fly(last, mine ? before.hand.get(last) : seatBox(e.seat), pile, [mine ? "hand" : "seat", "pile"], delay);
      } else {
        continue;
      }
      delay += 140;
    }
  }

  return {
    /** Shows a new view (and the room's seats and names). */
    render(newView, newRoom) {
      const handChanged = !view || view.round !== newView.round;
      // What moved since the last view, to fly it (the boxes are read before the redraw).
      const flights = view && !handChanged && newView.log.length > view.log.length && motionAllowed()
        ? flightsFrom(newView.log.slice(view.log.length)) : null;
      const wasMine = view ? myTurnOf(view) : null;
      view = newView;
      room = newRoom;
      names = room ? room.seats.map(nameOfSeat) : [];
      paintCommitment();
      paintAlert();
      if (handChanged) {
        // After a reload, the order and the marks this tab kept for the round.
        const kept = keptHand(room, view);
        order = kept ? kept.order : [];
        if (kept) marked = kept.marked;
      }
      order = order.filter((c) => view.hand.includes(c));
      for (const c of view.hand) if (!order.includes(c)) order.push(c);
      marked = marked.filter((c) => view.hand.includes(c));
      paint();
      if (flights) flyEvents(flights);
      if (wasMine === false && myTurnOf(view) && alertOn()) turnAlert();
    },
    /** Forgets the hand order and the marks (a new match). */
    reset() {
      view = null;
      order = [];
      marked = [];
      menu = null;
      stopClock();
    },
    /** The hand as the player keeps it. */
    handOrder: () => [...order],
    /** Tears down the keyboard handler. */
    destroy() {
      document.removeEventListener("keydown", keys);
      document.removeEventListener("pointerdown", outside);
      stopClock();
    },
  };
}

function signedTotal(n) {
  return n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0";
}

// ----- Polish pass: the pile's labels, the turn alert, cards that fly, the hand kept -----

/**
 * The previous throw's label at a throw-then-draw table: on this seat's pick-up, what of it may
 * be taken (the view's `takeable`), or that none of it may.
 */
function previousThrowLabel(view, canDraw) {
  if (!canDraw) return t("pile.previous");
  const cards = view.takeable.map(cardLabel);
  if (cards.length === 0) return t("pile.takeNone");
  if (cards.length === 1) return t("pile.takeThis", { card: cards[0] });
  return t("pile.takeOneOf", { cards: cards.join(" ") });
}

/** The pile's label at a draw-then-throw table: its size, and on this seat's draw what may be taken. */
function pileLabel(view, canDraw) {
  const count = view.pile_size;
  if (!canDraw) return t("pile.count", { count });
  if (view.takeable.length === 0) return t("pile.countNone", { count });
  return t("pile.countTake", { count, card: view.takeable.map(cardLabel).join(" ") });
}

/** Whether it is this view's seat's turn to play. */
function myTurnOf(view) {
  return view.seat !== null && view.turn === view.seat && !["round_over", "match_over"].includes(view.phase);
}

const ALERT_KEY = "dhumbal.turnAlert";

/** Whether the turn alert (a tone and a vibration when this seat's turn comes) is on here. */
function alertOn() {
  try {
    return localStorage.getItem(ALERT_KEY) === "on";
  } catch {
    return false;
  }
}

function setAlert(on) {
  try {
    localStorage.setItem(ALERT_KEY, on ? "on" : "off");
  } catch {
    // Private browsing may refuse storage; the choice then lasts as long as the page.
  }
}

/** The page's audio, made on the tap that turns the alert on (browsers allow sound after one). */
let audio = null;

function primeAudio() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  try {
    if (!audio) audio = new Context();
    if (audio.state === "suspended") audio.resume().catch(() => {});
  } catch {
    audio = null;
  }
}

/** A short rising tone and a vibration, where the browser lets the page (after a first tap). */
function turnAlert() {
  if (navigator.userActivation && !navigator.userActivation.hasBeenActive) return;
  if (typeof navigator.vibrate === "function") navigator.vibrate([90, 60, 90]);
  primeAudio();
  if (!audio) return;
  const now = audio.currentTime;
  [660, 880].forEach((pitch, i) => {
    const at = now + i * 0.16;
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.type = "sine";
    tone.frequency.value = pitch;
    gain.gain.setValueAtTime(0.0001, at);
    gain.gain.exponentialRampToValueAtTime(0.18, at + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.14);
    tone.connect(gain).connect(audio.destination);
    tone.start(at);
    tone.stop(at + 0.15);
  });
}

/** Whether cards may fly: not when the system asks for less motion, nor in a hidden tab. */
function motionAllowed() {
  if (document.hidden || typeof Element.prototype.animate !== "function") return false;
  return !(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
}

/**
 * A card flying from the box `from` to the box `to` (face up, or a back for `null`), over the
 * page and gone when it lands; `kinds` (`["stock", "hand"]`…) are kept on it as `data-from` and
 * `data-to`.
 */
function fly(card, from, to, kinds, delay) {
  if (!from || !to) return;
  const e = card ? cardElement(card) : cardBack();
  // A picture only: no card's name for a reader, no card anyone could find in the page.
  delete e.dataset.card;
  e.removeAttribute("aria-label");
  e.setAttribute("aria-hidden", "true");
  e.classList.add("flying");
  [e.dataset.from, e.dataset.to] = kinds;
  const width = Math.max(36, Math.min(72, to.width || 56));
  e.style.setProperty("--card-w", `${width}px`);
  e.style.left = `${to.left + to.width / 2 - width / 2}px`;
  e.style.top = `${to.top + to.height / 2 - (width * 1.4) / 2}px`;
  document.body.append(e);
  const dx = from.left + from.width / 2 - (to.left + to.width / 2);
  const dy = from.top + from.height / 2 - (to.top + to.height / 2);
  const flight = e.animate([
    { transform: `translate(${dx}px, ${dy}px) scale(0.85)` },
    { transform: "translate(0, 0) scale(1)" },
  ], { duration: 360, delay, easing: "cubic-bezier(0.2, 0.7, 0.3, 1)", fill: "backwards" });
  flight.finished.then(() => e.remove(), () => e.remove());
}

/** Where this seat's hand is kept across a reload (this tab only): by room and seat. */
const handKey = (room, view) => `dhumbal.hand.${room.code}.${view.seat}`;
const matchOf = (room) => (room.fairness ? room.fairness.match_number : null);

/** Keeps the hand's order and marks, for a reload of this tab. */
function keepHand(room, view, order, marked) {
  if (!room || !view || view.seat === null) return;
  try {
    sessionStorage.setItem(handKey(room, view), JSON.stringify({ match: matchOf(room), round: view.round, order, marked }));
  } catch {
    // Private browsing may refuse storage; a reload then forgets the order.
  }
}

/** The hand's order and marks kept for this round, less any card no longer in the hand; or null. */
function keptHand(room, view) {
  if (!room || view.seat === null) return null;
  try {
    const kept = JSON.parse(sessionStorage.getItem(handKey(room, view)));
    if (!kept || kept.round !== view.round || kept.match !== matchOf(room)) return null;
    const held = (c) => view.hand.includes(c);
    return {
      order: (kept.order || []).filter(held),
      marked: (kept.marked || []).filter((c) => held(c) && c !== view.barred),
    };
  } catch {
    return null;
  }
}
