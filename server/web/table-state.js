// The table's state: the view the server sent last (with what it says this seat may do now:
// `can_throw`, `can_draw`, `takeable`, `can_call`, `next_takeable`), the room, and what is this
// page's own: the hand in the order the player keeps it, the marked cards, and the host's open
// seat menu. The order and the marks are kept for a reload of this tab.
//
// The hand's order is the player's: in sorted mode (Sort hand turns it on and off, and this
// device remembers it across rounds, matches and reloads) every new card goes where it sorts;
// otherwise the player's own arrangement (cards dragged into place) stays, and a drawn card goes
// to the end.
//
// Nothing here judges a move but `classify` (cards.js), which only enables the Throw button: the
// server judges every action.

import { classify, sortHand } from "./cards.js";
import { seatName } from "./dom.js";
import { t } from "./i18n.js";
import { flag, setFlag, tab } from "./storage.js";

/** The phases in which nobody is playing a turn. */
const OVER = ["round_over", "match_over"];

/**
 * Whether a view's round is over (nobody plays a turn).
 * @param {object} view
 */
export function roundOver(view) {
  return OVER.includes(view.phase);
}

/**
 * Whether it is this view's seat's turn to play.
 * @param {object} view
 */
export function myTurnOf(view) {
  return view.seat !== null && view.turn === view.seat && !roundOver(view);
}

/** Where this device keeps whether the hand is kept sorted. */
const SORTED_KEY = "dhumbal.sortedHand";

/** Where this seat's hand is kept across a reload (this tab only): by room and seat. */
const handKey = (room, view) => `dhumbal.hand.${room.code}.${view.seat}`;
const matchOf = (room) => (room.fairness ? room.fairness.match_number : null);

/** The hand's order and marks kept for this round, less any card no longer in the hand; or null. */
function keptHand(room, view) {
  if (!room || view.seat === null) return null;
  const kept = tab.getJson(handKey(room, view));
  if (!kept || kept.round !== view.round || kept.match !== matchOf(room)) return null;
  const held = (c) => view.hand.includes(c);
  return {
    order: (kept.order || []).filter(held),
    marked: (kept.marked || []).filter((c) => held(c) && c !== view.barred),
  };
}

/** What the table shows and what this page keeps of it. */
export class TableState {
  constructor() {
    /** The coach's hint: `{view, advice}`, for that view only (`advice` null while asked). */
    this.hint = null;
    /** The server's view of the table for this page's seat, or null before the first. */
    this.view = null;
    /** The room (seats, host, stage), or null. */
    this.room = null;
    /** The seats' names, by seat. */
    this.names = [];
    /** The hand in the order the player keeps it. */
    this.order = [];
    /** The marked cards, in the order they were marked (the last is the new pile top). */
    this.marked = [];
    /** Whether the hand is kept sorted: every card that comes goes where it sorts. */
    this.sorted = flag(SORTED_KEY, false);
    /**
     * The seat whose host's menu is open, or null: `{ seat, confirm }` (`confirm`: it asks
     * whether to remove them), and `focus`, the item to focus when it is drawn next.
     */
    this.menu = null;
    /** Whether the seats are being drawn again (their focus moves on purpose). */
    this.rebuilding = false;
  }

  /**
   * Takes a new view and room: the hand's order follows the cards held (after a reload, or in a
   * new round, the order and marks kept for it).
   * @returns {{handChanged: boolean, wasMine: boolean|null}} whether a new hand came, and
   *   whether it was this seat's turn before (null: no view before)
   */
  update(view, room) {
    const handChanged = !this.view || this.view.round !== view.round;
    const wasMine = this.view ? myTurnOf(this.view) : null;
    this.view = view;
    this.room = room;
    this.names = room ? room.seats.map(seatName) : [];
    if (handChanged) {
      const kept = keptHand(room, view);
      this.order = kept ? kept.order : [];
      if (kept) this.marked = kept.marked;
    }
    this.order = this.order.filter((c) => view.hand.includes(c));
    for (const c of view.hand) if (!this.order.includes(c)) this.order.push(c);
    if (this.sorted) this.sort();
    this.marked = this.marked.filter((c) => view.hand.includes(c));
    return { handChanged, wasMine };
  }

  /** Forgets the view, the hand's order and the marks (a new match). */
  reset() {
    this.view = null;
    this.order = [];
    this.marked = [];
    this.menu = null;
  }

  /** A seat's name. */
  seatName(s) {
    return this.names[s] || t("seat.n", { n: s + 1 });
  }

  /** Whether it is this page's seat's turn to play. */
  myTurn() {
    return myTurnOf(this.view);
  }

  /** Whether the marked cards make a group that may be thrown (the barred card may not). */
  markedValid() {
    const { marked, view } = this;
    return marked.length > 0 && classify(marked, view.settings) !== null && !marked.includes(view.barred);
  }

  /** Whether Throw would throw the marked cards now. */
  mayThrowMarked() {
    return this.view.can_throw && this.markedValid();
  }

  /** What each card of the hand is worth at this table, as the server says (`hand_values`). */
  values() {
    const { hand, hand_values: worth } = this.view;
    return Object.fromEntries(hand.map((card, i) => [card, worth[i]]));
  }

  /** What the marked cards add up to. */
  markedValue() {
    const values = this.values();
    return this.marked.reduce((sum, card) => sum + (values[card] ?? 0), 0);
  }

  /** Marks a card, or unmarks a marked one. */
  toggle(card) {
    this.marked = this.marked.includes(card) ? this.marked.filter((c) => c !== card) : [...this.marked, card];
  }

  /** Sorts the hand, lightest first (jokers last). */
  sort() {
    this.order = sortHand(this.order, this.values());
  }

  /**
   * Turns sorted mode on (the hand is sorted now and kept sorted) or off (the order stays as it
   * is, and new cards go to the end); this device remembers the choice.
   * @param {boolean} on
   */
  setSorted(on) {
    this.sorted = on;
    setFlag(SORTED_KEY, on);
    if (on && this.view) this.sort();
  }

  /**
   * Moves a card of the hand to just before `before` (to the end when `before` is null): the
   * player's own arrangement, which ends sorted mode.
   * @param {string} card
   * @param {string|null} before
   */
  move(card, before) {
    if (!this.order.includes(card) || card === before) return;
    const rest = this.order.filter((c) => c !== card);
    const at = before === null ? -1 : rest.indexOf(before);
    rest.splice(at < 0 ? rest.length : at, 0, card);
    this.order = rest;
    if (this.sorted) this.setSorted(false);
  }

  /** Whether this page is the host and may hand this seat's person to a bot or remove them. */
  hostMay(info) {
    const { room, view } = this;
    return Boolean(info && info.kind === "human" && room && view.seat !== null && room.host === view.seat &&
      info.seat !== view.seat && (room.stage === "playing" || room.stage === "between_rounds"));
  }

  /** Keeps the hand's order and marks, for a reload of this tab. */
  keep() {
    const { room, view, order, marked } = this;
    if (!room || !view || view.seat === null) return;
    tab.setJson(handKey(room, view), { match: matchOf(room), round: view.round, order, marked });
  }
}
