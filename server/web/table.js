// The table: the other seats, the stock and the pile, this seat's hand drawn as cards, and the
// actions. Split along three lines: its state (table-state.js: the view, the hand's order, the
// marks), the player's input (table-input.js: clicks, keys and drags into messages or state) and
// its painting (table-paint.js and table-seats.js: the state into the page). This module puts
// them together and paints on each new view; what a seat may do comes from the view. It also
// opens the table's menu, keeps the notices in their slot (over the prompt's line, covering no
// control), and after the page slept (hidden, frozen, or a view that jumps several turns)
// summarises what it missed instead of flying every card at once.

import { alertOn, turnAlert } from "./alert.js";
import { flightsFrom, flyEvents, landAll, motionAllowed } from "./fly.js";
import { TableState, myTurnOf } from "./table-state.js";
import { bindTableInput } from "./table-input.js";
import { buildTable, paintAlert, paintCommitment, paintTable } from "./table-paint.js";
import { paintSeats } from "./table-seats.js";
import { createClock } from "./table-clock.js";
import { moveText } from "./log.js";
import { t } from "./i18n.js";

/** How long after a wake the views that come in are the page catching up, in milliseconds. */
const CATCH_UP_MS = 1500;

/** The events that are a seat's moves. */
const MOVES = ["drew_from_stock", "took_from_pile", "threw", "called"];

/**
 * What the seats did in `events`, seat by seat in turn ("Ravi: threw 9♠ · Bot 2: took 7♥,
 * threw K♠"), and how many moves that was.
 */
function movesText(events, name) {
  const turns = [];
  let count = 0;
  for (const e of events) {
    if (!MOVES.includes(e.type)) continue;
    count += 1;
    const last = turns[turns.length - 1];
    const turn = last && last.seat === e.seat ? last : { seat: e.seat, moves: [] };
    if (turn !== last) turns.push(turn);
    const text = e.type === "drew_from_stock" ? t("away.drew") : moveText(e);
    if (text) turn.moves.push(text);
  }
  const text = turns.filter((tn) => tn.moves.length > 0)
    .map((tn) => `${name(tn.seat)}: ${tn.moves.join(", ")}`).join(" \u00b7 ");
  return { text, count };
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
  const parts = buildTable(root);
  parts.awayNotes = [];
  const state = new TableState();
  const clock = createClock(parts);

  /** Puts the notices' slot over the prompt's line, as wide as the hand's area. */
  const placeToast = () => {
    if (root.hidden || !state.view) return;
    const line = parts.prompt.getBoundingClientRect();
    const area = parts.mine.getBoundingClientRect();
    const css = document.documentElement.style;
    css.setProperty("--toast-top", `${line.top}px`);
    css.setProperty("--toast-height", `${line.height}px`);
    css.setProperty("--toast-left", `${area.left + area.width / 2}px`);
    css.setProperty("--toast-width", `${area.width}px`);
  };
  const seats = () => paintSeats(parts, state, clock);
  const paint = () => {
    if (!state.view) return;
    seats();
    paintTable(parts, state);
    state.keep();
    placeToast();
  };
  const destroyInput = bindTableInput(parts, state, hooks, { all: paint, seats });

  // The table's menu.
  parts.menuButton.addEventListener("click", () => parts.menu.showModal());
  parts.hintButton.addEventListener("click", () => {
    if (!state.view) return;
    state.hint = { view: state.view, advice: null };
    hooks.send({ type: "hint" });
    paint();
  });
  parts.menuClose.addEventListener("click", () => parts.menu.close());
  parts.menuRules.addEventListener("click", () => {
    parts.menu.close();
    hooks.rules();
  });
  parts.menuLog.addEventListener("click", () => {
    parts.menu.close();
    parts.log.scrollIntoView({ block: "end" });
    parts.log.scrollTop = parts.log.scrollHeight;
    parts.log.focus({ preventScroll: true });
  });

  // Asleep: where the log stood when the page was hidden or frozen. Catching up: the views that
  // come in for a moment after the wake (a frozen page gets them all at once) are summarised in
  // a notice and a line of the log, and only their last move flies.
  let asleep = null;
  let catchUp = null;
  const name = (s) => (s === state.view.seat ? t("log.you") : state.seatName(s));

  /** Says what happened since `from` (`{round, at}`): a notice, and a line in the log there. */
  const summarise = (from) => {
    const { view } = state;
    const same = view.round === from.round;
    const at = same ? from.at : 0;
    const { text, count } = movesText(view.log.slice(at).filter((e) => e.seat !== view.seat), name);
    if (!text) return;
    const note = { round: view.round, at, text: t("away.logLine", { count }), from };
    parts.awayNotes = parts.awayNotes.filter((n) => n.from !== from && n.round === view.round).concat(note);
    hooks.notice(t("away.summary", { moves: text }));
  };

  const sleep = () => {
    if (!asleep && state.view) asleep = { round: state.view.round, at: state.view.log.length };
    landAll();
  };
  const wake = () => {
    if (!asleep) return;
    catchUp = { from: asleep, until: performance.now() + CATCH_UP_MS };
    asleep = null;
    if (state.view) {
      summarise(catchUp.from);
      paint();
    }
  };
  const onVisibility = () => (document.visibilityState === "hidden" ? sleep() : wake());
  document.addEventListener("visibilitychange", onVisibility);
  document.addEventListener("freeze", sleep);
  document.addEventListener("resume", wake);
  window.addEventListener("resize", placeToast);
  window.addEventListener("scroll", placeToast, { passive: true });

  /**
   * After this seat's own move the keyboard goes where the next one is made: after a draw or a
   * pick-up, to the card just taken in the hand (to mark what to throw); after a throw, to the
   * stock (the next draw). Only when the focus was at the table's stock, pile, hand or actions,
   * or nowhere (a button just turned off drops it): never out of the chat or a dialog.
   */
  const keepTheKeyboardsPlace = (before, view, fresh) => {
    const own = fresh.filter((e) => view.seat !== null && e.seat === view.seat && MOVES.includes(e.type));
    const move = own[own.length - 1];
    if (!move || move.type === "called" || document.querySelector("dialog[open]")) return;
    const at = document.activeElement;
    const free = !at || at === document.body || at === parts.heading || parts.middle.contains(at) || parts.mine.contains(at);
    if (!free) return;
    if (move.type === "threw") {
      parts.stock.focus({ preventScroll: true });
      return;
    }
    const taken = view.hand.find((c) => !before.hand.includes(c));
    const card = (taken && parts.hand.querySelector(`.card[data-card="${taken}"]`)) || parts.hand.querySelector(".card");
    if (card) card.focus({ preventScroll: true });
  };

  return {
    /** Shows a new view (and the room's seats and names). */
    render(view, room) {
      const before = state.view;
      const now = performance.now();
      if (catchUp && now > catchUp.until) catchUp = null;
      if (catchUp) catchUp.until = Math.max(catchUp.until, now + CATCH_UP_MS / 3);
      const fresh = before && before.round === view.round && view.log.length > before.log.length
        ? view.log.slice(before.log.length) : null;
      // A view that jumps several seats' turns (the socket came back) is caught up on too.
      const movers = new Set((fresh || []).filter((e) => MOVES.includes(e.type)).map((e) => e.seat));
      const jump = !catchUp && !asleep && movers.size > 1 ? { round: before.round, at: before.log.length } : null;
      // What moved since the last view, to fly it (the boxes are read before the redraw).
      const flights = fresh && !asleep && motionAllowed() ? flightsFrom(parts, fresh) : null;
      const { wasMine } = state.update(view, room);
      if (catchUp || jump) summarise(catchUp ? catchUp.from : jump);
      paintCommitment(parts, room);
      paintAlert(parts);
      paint();
      if (fresh) keepTheKeyboardsPlace(before, view, fresh);
      if (flights) flyEvents(parts, view, flights, Boolean(catchUp || jump));
      if (wasMine === false && myTurnOf(view) && alertOn()) turnAlert();
    },
    /** Shows the coach's hint for the view shown now (the session has checked its version). */
    hint(advice) {
      if (!state.view) return;
      state.hint = { view: state.view, advice };
      paint();
    },
    /** The coach could not answer: the Hint button is back. */
    hintRefused() {
      state.hint = null;
      paint();
    },
    /** Forgets the hand order and the marks (a new match). */
    reset() {
      state.reset();
      clock.stop();
      parts.awayNotes = [];
    },
    /** The hand as the player keeps it. */
    handOrder: () => [...state.order],
    /** Tears down the keyboard handler and the page's listeners. */
    destroy() {
      destroyInput();
      clock.stop();
      document.removeEventListener("visibilitychange", onVisibility);
      document.removeEventListener("freeze", sleep);
      document.removeEventListener("resume", wake);
      window.removeEventListener("resize", placeToast);
      window.removeEventListener("scroll", placeToast);
    },
  };
}
