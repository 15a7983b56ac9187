// What a screen reader hears at the table: every public event of a `state` (a draw from the
// stock, a pick-up of a named card, a throw of named cards, a call and how it ended, a reshuffle,
// the show with every hand and who took the round, the match's end), this page's own turn and
// what its hand is worth, each said once, in words, in the page's language, through the polite live region
// (`say` in page.js). The cards are named as their buttons are (`cardName`: "two of hearts").
// Arriving (a `history`) says nothing: only what happens from then on is news. The table's notices
// (a turn that ran out, a seat handed to a stand-in, someone back) are said by page.js's
// `notice`, which says every notice but an error politely.

import { cardName } from "./cards.js";
import { seatName } from "./dom.js";
import { t } from "./i18n.js";
import { describeEvent } from "./log.js";
import { say } from "./page.js";
import { endingText, listText } from "./score.js";
import { myTurnOf, roundOver } from "./table-state.js";

/** Cards in words for a reader: "two of hearts, king of spades". */
const names = (cards) => cards.map(cardName).join(", ");

/** What the last view showed this page: its seat, hand and whether it was its turn. */
let last = null;

/**
 * The seats' names as this page says them.
 * @param {object|null} room
 */
function seatNames(room) {
  return room ? room.seats.map(seatName) : [];
}

/**
 * The sentences for one event, or none.
 * @param {object} event
 * @param {string[]} seats the seats' names
 * @param {number|null} me this page's seat
 * @param {boolean} standIn a stand-in played it
 * @param {object} settings the table's
 * @returns {string[]}
 */
export function eventWords(event, seats, me, standIn, settings) {
  if (event.type === "round_ended") return showWords(event.result, seats, me, settings);
  if (event.type === "match_ended") return [t("log.matchOver")];
  const text = describeEvent(event, seats, me, standIn, names);
  return text ? [text] : [];
}

/** The show: each hand face up with its total, and how the round ended (who took it). */
function showWords(result, seats, me, settings) {
  const who = (s) => (s === me ? t("log.you") : seats[s] || t("seat.n", { n: s + 1 }));
  const hands = result.hands
    .map((hand, s) => (result.active && result.active[s] === false ? null
      : t("say.hand", { name: who(s), cards: hand.length > 0 ? names(hand) : t("say.noCards"), total: result.hand[s] })))
    .filter(Boolean);
  const shown = seats.map((n, s) => (s === me ? t("log.you") : n));
  return [t("say.show", { hands: listText(hands) }), endingText(result, shown, settings)];
}

/**
 * Says what a `state` brought: its events, then this page's own news (the card it drew, its
 * turn, what its hand is worth). Called once per `state`, after the view is kept.
 * @param {object} msg the `state`
 * @param {{room: object|null, view: object}} session
 */
export function announceState(msg, session) {
  const { view, room } = session;
  if (!view) return;
  const me = view.seat;
  const seats = seatNames(room);
  const standIn = msg.stand_in !== null && msg.stand_in !== undefined;
  const before = last && last.seat === me && last.round === view.round ? last : null;
  const lines = [];
  let moved = false;
  for (const event of msg.events || []) {
    const mine = me !== null && event.seat === me;
    if (mine && event.type === "drew_from_stock" && before) {
      // This page alone sees the card it drew.
      const drawn = view.hand.filter((c) => !before.hand.includes(c));
      if (drawn.length === 1) {
        lines.push(t(standIn ? "say.botDrew" : "say.youDrew", { card: cardName(drawn[0]) }));
        moved = true;
        continue;
      }
    }
    lines.push(...eventWords(event, seats, me, standIn && event.type !== "dealt", view.settings));
    if (mine && ["drew_from_stock", "took_from_pile", "threw"].includes(event.type)) moved = true;
  }
  const turn = myTurnOf(view) && !(room && room.seats[me] && room.seats[me].stand_in);
  if (turn && !(before && before.turn)) {
    lines.push(t("say.yourTurn", { cards: names(view.hand), total: view.hand_total }));
  } else if (moved && me !== null && !roundOver(view)) {
    lines.push(t("say.holding", { total: view.hand_total }));
  }
  last = { seat: me, round: view.round, hand: view.hand.slice(), turn };
  for (const line of lines) say(line);
}
