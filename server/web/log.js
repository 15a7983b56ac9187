// The table's happenings in words: a line of the round's log for each event, the table's notices
// (a turn ran out, a seat handed to a bot, someone back), and what each seat did on its latest
// turn.

import { cardLabel } from "./cards.js";
import { t } from "./i18n.js";

/** Cards as the log writes them: their labels, `9♠ 9♥`. */
const labels = (cards) => cards.map(cardLabel).join(" ");

/**
 * One line of the log, in words, or null for events not worth a line.
 * @param {object} event an engine event
 * @param {string[]} names the seats' names
 * @param {number|null} me this page's seat
 * @param {boolean} [standIn] a stand-in bot played it for the seat's person, and the line names
 *   the bot ("A bot (for Asha) threw 9♠")
 * @param {(cards: string[]) => string} [cardsText] the cards in words: their labels (`9♠ 9♥`)
 *   for the log; their names for a screen reader (announce.js)
 * @returns {string|null}
 */
export function describeEvent(event, names, me, standIn = false, cardsText = labels) {
  const name = (s) => names[s] || t("seat.n", { n: s + 1 });
  const who = (s) => {
    if (standIn) return s === me ? t("log.botForYou") : t("log.botFor", { name: name(s) });
    return s === me ? t("log.you") : name(s);
  };
  switch (event.type) {
    case "dealt":
      return t("log.dealt", { round: event.round, who: who(event.dealer), card: cardsText([event.pile_top]) });
    case "called":
      return t("log.called", { who: who(event.seat) });
    case "drew_from_stock":
      return t("log.drew", { who: who(event.seat) });
    case "took_from_pile":
      return t("log.took", { who: who(event.seat), card: cardsText([event.card]) });
    case "threw":
      return t("log.threw", { who: who(event.seat), cards: cardsText(event.cards) });
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
 * a bot or removed a person, someone is back.
 * @param {object} notice the server's `notice`
 * @param {number|null} me this page's seat
 * @returns {string|null}
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

/** The events that are a seat's moves. */
const MOVES = ["drew_from_stock", "took_from_pile", "threw", "called"];

/**
 * A move a seat made, in a few words ("took 7♥", "threw K♥"), or null for one that shows nothing
 * (a blind draw from the stock is implied by a turn without a pick-up).
 * @param {object} event
 * @returns {string|null}
 */
export function moveText(event) {
  if (event.type === "took_from_pile") return t("seat.lastTook", { card: cardLabel(event.card) });
  if (event.type === "threw") return t("seat.lastThrew", { cards: event.cards.map(cardLabel).join(" ") });
  if (event.type === "called") return t("seat.lastCalled");
  return null;
}

/**
 * What each seat did on its latest turn this round ("took 7♥, threw K♥"), from the log.
 * @param {object[]} log the round's events
 * @returns {(string|null)[]} by seat
 */
export function lastTurns(log) {
  const turns = [];
  let current = null;
  for (const e of log) {
    if (!MOVES.includes(e.type)) continue;
    if (e.seat !== current) turns[e.seat] = [];
    current = e.seat;
    const text = moveText(e);
    if (text) turns[e.seat].push(text);
  }
  return turns.map((parts) => (parts && parts.length ? parts.join(", ") : null));
}
