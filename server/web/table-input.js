// What the player does at the table, turned into messages to the server or changes of the table's
// state: a tap marks a card (tap again to unmark); Throw sends the marked cards; with nothing
// marked, dragging a card onto the pile throws it alone; dragging a card sideways within the hand
// moves it there (Shift+Left/Right moves the focused card); Sort hand turns sorted mode on and
// off; the stock and a takeable pile card draw;
// keys do the same (1-9, T, C, O, S, P, Esc); the host's seat menu hands a seat to a bot or
// removes its person. Whether a move may be made now is the view's to say (`can_throw`,
// `can_draw`, `takeable`, `can_call`); the server judges every action, and this only asks.

import { cardElement, cardLabel } from "./cards.js";
import { t } from "./i18n.js";
import { alertOn, primeAudio, setAlert } from "./alert.js";
import { paintAlert } from "./table-paint.js";
import { wireWatchers } from "./watchers.js";

/**
 * Wires the table's controls.
 * @param {object} p the table's elements (table-paint.js's `buildTable`)
 * @param {import("./table-state.js").TableState} state
 * @param {object} hooks
 * @param {(msg: object) => void} hooks.send sends a play message
 * @param {(text: string) => void} hooks.notice shows a short message to the player
 * @param {() => void} hooks.rules opens How to play
 * @param {{all: () => void, seats: () => void}} redraw paints the table again (all, or its seats)
 * @returns {() => void} tears down what listens on the whole document
 */
export function bindTableInput(p, state, hooks, redraw) {
  const barred = (card) => hooks.notice(t("table.barredNotice", { card: cardLabel(card) }));

  const sendThrow = (cards) => {
    // The cards land in the order they were marked; the last one is the new pile top.
    hooks.send({ type: "throw", cards });
    state.marked = [];
  };
  const draw = (from, card) => {
    const msg = { type: "draw", from };
    if (card) msg.card = card;
    hooks.send(msg);
  };

  const toggle = (card) => {
    const { view } = state;
    if (!view || view.seat === null) return;
    if (card === view.barred) {
      barred(card);
      return;
    }
    state.toggle(card);
    redraw.all();
  };
  const doThrow = () => {
    if (state.view && state.mayThrowMarked()) sendThrow(state.marked);
  };
  const doCall = () => {
    if (state.view && state.view.can_call) hooks.send({ type: "call" });
  };
  const paintSorted = () => p.sortButton.setAttribute("aria-pressed", String(state.sorted));
  const doSort = () => {
    if (!state.view) return;
    state.setSorted(!state.sorted);
    paintSorted();
    redraw.all();
  };
  paintSorted();
  const drawStock = () => {
    if (state.view && state.view.can_draw) draw("stock");
  };
  const drawPile = (card) => {
    const { view } = state;
    if (!view || !view.can_draw) return;
    const takeable = view.takeable;
    if (card && takeable.includes(card)) draw("pile", card);
    else if (!card && takeable.length === 1) draw("pile", takeable[0]);
    else if (!card && takeable.length > 1) hooks.notice(t("error.choose_pile_card"));
    else hooks.notice(t(view.settings.turn_order === "throw_then_draw" ? "table.cantPickUp" : "table.onlyTop"));
  };

  p.rulesButton.addEventListener("click", hooks.rules);
  p.alertButton.addEventListener("click", () => {
    setAlert(!alertOn());
    if (alertOn()) primeAudio();
    paintAlert(p);
  });
  p.throwButton.addEventListener("click", doThrow);
  p.callButton.addEventListener("click", doCall);
  p.sortButton.addEventListener("click", doSort);
  p.stock.addEventListener("click", drawStock);
  // A pile card this seat may take is a button.
  p.pile.addEventListener("click", (event) => {
    const cardEl = event.target.closest("button.card");
    if (cardEl) drawPile(cardEl.dataset.card);
  });
  wireWatchers(p.watchers, () => hooks.send);
  p.removedList.addEventListener("click", (event) => {
    const back = event.target.closest("button[data-removed]");
    if (back) hooks.send({ type: "readmit", removed: Number(back.dataset.removed) });
  });

  // Dragging a card onto the pile, with nothing marked, throws it alone; dropping it within the
  // hand's row moves it there. Pointer events work for mouse, pen and touch alike; a short
  // movement is still a tap.
  let drag = null;
  p.hand.addEventListener("pointerdown", (event) => {
    const cardEl = event.target.closest(".card");
    if (!cardEl || event.button !== 0) return;
    drag = { card: cardEl.dataset.card, el: cardEl, x: event.clientX, y: event.clientY, ghost: null, id: event.pointerId };
  });
  const inside = (r, x, y, slack = 0) => x >= r.left - slack && x <= r.right + slack && y >= r.top - slack && y <= r.bottom + slack;
  /** The card of the hand the dragged one would go before (null: the end), or undefined when not over the hand. */
  const placeAt = (x, y) => {
    if (!inside(p.hand.getBoundingClientRect(), x, y, 24)) return undefined;
    const others = [...p.hand.querySelectorAll(".card")].filter((e) => e.dataset.card !== drag.card);
    let best = null;
    for (const e of others) {
      const r = e.getBoundingClientRect();
      const d = Math.hypot(x - (r.left + r.right) / 2, y - (r.top + r.bottom) / 2);
      if (!best || d < best.d) best = { e, r, d };
    }
    if (!best) return undefined;
    if (x < (best.r.left + best.r.right) / 2) return best.e.dataset.card;
    const next = others[others.indexOf(best.e) + 1];
    return next ? next.dataset.card : null;
  };
  const clearPlace = () => {
    for (const e of p.hand.querySelectorAll(".insert-before, .insert-after")) e.classList.remove("insert-before", "insert-after");
  };
  const endDrag = () => {
    if (drag && drag.ghost) drag.ghost.remove();
    if (drag) drag.el.classList.remove("dragging");
    p.pile.classList.remove("drop-target");
    clearPlace();
    drag = null;
  };
  const mayDropOnPile = () => state.marked.length === 0 && state.view.can_throw;
  const dragMove = (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.ghost && Math.hypot(dx, dy) < 10) return;
    if (!drag.ghost) {
      if (!state.view || !state.order.includes(drag.card)) {
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
    const overPile = inside(p.pile.getBoundingClientRect(), event.clientX, event.clientY);
    p.pile.classList.toggle("drop-target", overPile && mayDropOnPile());
    drag.overPile = overPile;
    // Where in the hand it would go: a mark beside the card it would stand next to.
    clearPlace();
    const before = overPile ? undefined : placeAt(event.clientX, event.clientY);
    drag.before = before;
    if (before !== undefined) {
      const cards = [...p.hand.querySelectorAll(".card")].filter((e) => e.dataset.card !== drag.card);
      const mark = before === null ? cards[cards.length - 1] : cards.find((e) => e.dataset.card === before);
      if (mark) mark.classList.add(before === null ? "insert-after" : "insert-before");
    }
  };
  const dragEnd = (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    const { card, before } = drag;
    const wasDrag = drag.ghost !== null;
    const overPile = Boolean(drag.overPile);
    endDrag();
    if (!wasDrag) toggle(card);
    else if (overPile && state.marked.length > 0) hooks.notice(t("table.unmarkToDrag"));
    else if (overPile && !state.view.can_throw) return;
    else if (overPile && card === state.view.barred) barred(card);
    else if (overPile) sendThrow([card]);
    else if (before !== undefined) {
      state.move(card, before);
      paintSorted();
      redraw.all();
    }
  };
  window.addEventListener("pointermove", dragMove);
  window.addEventListener("pointerup", dragEnd);
  window.addEventListener("pointercancel", endDrag);
  // Keyboard: Enter or Space on a card marks it (a click without a pointer); Shift+Left and
  // Shift+Right move it one place in the hand.
  p.hand.addEventListener("click", (event) => {
    if (event.detail !== 0) return;
    const cardEl = event.target.closest(".card");
    if (cardEl) toggle(cardEl.dataset.card);
  });
  p.hand.addEventListener("keydown", (event) => {
    const cardEl = event.target.closest(".card");
    if (!cardEl || !event.shiftKey || (event.key !== "ArrowLeft" && event.key !== "ArrowRight")) return;
    const { order } = state;
    const at = order.indexOf(cardEl.dataset.card);
    const to = event.key === "ArrowLeft" ? at - 1 : at + 1;
    event.preventDefault();
    if (at < 0 || to < 0 || to >= order.length) return;
    // Before the card now at `to` (moving left), or before the one after it (moving right).
    state.move(order[at], event.key === "ArrowLeft" ? order[to] : order[to + 1] ?? null);
    paintSorted();
    redraw.all();
  });

  const keys = (event) => {
    if (!state.view || p.root.hidden || event.ctrlKey || event.metaKey || event.altKey) return;
    if (document.querySelector("dialog[open]")) return;
    const tag = document.activeElement ? document.activeElement.tagName : "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    const k = event.key.toLowerCase();
    if (/^[1-9]$/.test(k)) {
      const card = state.order[Number(k) - 1];
      if (card) toggle(card);
    } else if (k === "t") doThrow();
    else if (k === "c") doCall();
    else if (k === "o") doSort();
    else if (k === "h" && !p.coach.hidden && !p.hintButton.disabled) p.hintButton.click();
    else if (k === "s") drawStock();
    else if (k === "p") drawPile(null);
    else if (k === "escape") {
      state.marked = [];
      redraw.all();
    } else return;
    event.preventDefault();
  };
  document.addEventListener("keydown", keys);

  const outside = bindSeatMenu(p, state, hooks, redraw);
  return () => {
    document.removeEventListener("keydown", keys);
    document.removeEventListener("pointerdown", outside);
    window.removeEventListener("pointermove", dragMove);
    window.removeEventListener("pointerup", dragEnd);
    window.removeEventListener("pointercancel", endDrag);
  };
}

/**
 * The host's menu on a person's seat, during the match: a seat opens it by click, Enter, Space or
 * Down; its items hand the seat to a bot or remove its person (after a confirmation); Escape, a
 * press elsewhere or focus leaving it closes it.
 * @returns {(event: PointerEvent) => void} the document's listener for a press outside the menu
 */
function bindSeatMenu(p, state, hooks, redraw) {
  const { seats } = p;
  const seatOf = (s) => seats.querySelector(`.seat[data-seat="${s}"]`);
  const open = (menu) => {
    state.menu = menu;
    redraw.seats();
  };
  const close = (refocus) => {
    if (!state.menu) return;
    const s = state.menu.seat;
    open(null);
    const box = seatOf(s);
    if (refocus && box) box.focus({ preventScroll: true });
  };

  const act = (action) => {
    const seat = state.menu.seat;
    if (action === "hand") {
      hooks.send({ type: "hand_to_bot", seat });
      close(true);
    } else if (action === "remove") {
      open({ seat, confirm: true, focus: "first" });
    } else if (action === "remove-yes") {
      hooks.send({ type: "clear_seat", seat });
      close(false);
    } else if (action === "cancel") {
      open({ seat, confirm: false, focus: "remove" });
    }
  };

  seats.addEventListener("click", (event) => {
    if (event.target.closest("#seat-menu")) {
      const b = event.target.closest("button");
      if (b && state.menu) act(b.dataset.action);
      return;
    }
    const box = event.target.closest(".seat.has-menu");
    if (!box) return;
    const s = Number(box.dataset.seat);
    open(state.menu && state.menu.seat === s ? null : { seat: s, confirm: false, focus: "first" });
  });

  seats.addEventListener("keydown", (event) => {
    const pop = event.target.closest("#seat-menu");
    if (pop) {
      // The table's shortcut keys are not for the menu.
      event.stopPropagation();
      const items = [...pop.querySelectorAll("button")];
      const at = items.indexOf(document.activeElement);
      if (event.key === "Escape") close(true);
      else if (event.key === "ArrowDown") items[(at + 1) % items.length].focus();
      else if (event.key === "ArrowUp") items[(at - 1 + items.length) % items.length].focus();
      else if (event.key === "Home") items[0].focus();
      else if (event.key === "End") items[items.length - 1].focus();
      else return;
      event.preventDefault();
      return;
    }
    const box = event.target.closest(".seat.has-menu");
    if (!box || (event.key !== "Enter" && event.key !== " " && event.key !== "ArrowDown")) return;
    event.preventDefault();
    event.stopPropagation();
    open({ seat: Number(box.dataset.seat), confirm: false, focus: "first" });
  });

  seats.addEventListener("focusout", (event) => {
    const pop = event.target.closest("#seat-menu");
    if (!pop || state.rebuilding || !state.menu) return;
    const to = event.relatedTarget;
    const box = seatOf(state.menu.seat);
    if (to && !pop.contains(to) && !(box && box.contains(to))) close(false);
  });

  // A press anywhere but the menu and its seat closes the menu.
  const outside = (event) => {
    if (!state.menu) return;
    const inMenu = event.target.closest && event.target.closest("#seat-menu, #seats .seat.has-menu");
    if (inMenu) return;
    state.menu = null;
    if (state.view) redraw.seats();
  };
  document.addEventListener("pointerdown", outside);
  return outside;
}
