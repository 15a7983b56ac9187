// The coach on the page, in the page's language: a hint at the table (on your turn, where the
// table allows hints) and the review of a finished match (from the match-over dialog and from
// Replay). The server weighs the moves from what the seat could see (docs/protocol.md, `hint`
// and `review`); this module only says what it found. Cards are named in words, as the
// announcements name them, so what is shown is what a screen reader reads.

import { cardName } from "./cards.js";
import { el } from "./dom.js";
import { t } from "./i18n.js";

/** Cards in words, in a list. */
const names = (cards) => cards.map(cardName).join(", ");

/** A number of points with one decimal at most (`8.2`, `3`). */
const points = (n) => String(Math.round(n * 10) / 10);

/** A move (`{type: "call"}`, a draw, a throw) in words: "take the queen of hearts". */
export function moveWords(move) {
  if (move.type === "call") return t("coach.move.call");
  if (move.type === "draw") return move.card ? t("coach.move.take", { card: cardName(move.card) }) : t("coach.move.stock");
  return t("coach.move.throw", { cards: names(move.cards) });
}

/** Why the best move is best, in a sentence. */
export function whyWords(why) {
  switch (why.type) {
    case "call":
      return t("coach.why.call", { total: why.total, lightest: why.lightest });
    case "hold":
      return t("coach.why.hold", { total: why.total, lightest: why.lightest });
    case "goes":
      return t("coach.why.goes", { card: cardName(why.card), cards: names(why.with) });
    case "low":
      return t("coach.why.low", { card: cardName(why.card) });
    case "stock":
      return t("coach.why.stock", { card: cardName(why.card) });
    case "sheds":
      return t("coach.why.sheds", { points: why.points });
    case "keeps":
      return t("coach.why.keeps", { cards: names(why.cards) });
    case "only":
      return t("coach.why.only");
    default:
      return t("coach.why.playsOut");
  }
}

/** A hint (the `advice` of a `hint` message) in one or two sentences. */
export function hintWords(advice) {
  const [best, next] = advice.moves;
  const text = t("coach.hint", { move: moveWords(best.move), why: whyWords(advice.why) });
  if (!next || next.behind <= 0) return text;
  return `${text} ${t("coach.next", { move: moveWords(next.move), points: points(next.behind) })}`;
}

/** One flagged decision in a sentence: what was chosen, what was better, and why. */
export function decisionWords(decision, name) {
  const params = {
    hand: names(decision.hand),
    total: decision.total,
    chose: moveWords(decision.chose),
    best: moveWords(decision.best),
    why: whyWords(decision.why),
  };
  return name ? t("coach.theirDecision", { ...params, name }) : t("coach.decision", params);
}

/** One decision as an item of a list: when and what it cost, then the sentence. */
function decisionItem(decision, name) {
  const li = el("li", "coach-decision");
  li.append(
    el("b", "", t("coach.when", { round: decision.round, turn: decision.turn, cost: points(decision.cost) })),
    el("p", "", decisionWords(decision, name)),
  );
  return li;
}

/**
 * The review of a seat's match (the `review` of a `review` message) as a section: a sentence for
 * the whole match, the three costliest decisions, then every decision flagged, in play order.
 * @param {object} review
 * @param {string|null} name the seat's name when it is not this page's own seat
 * @returns {HTMLElement}
 */
export function reviewBox(review, name = null) {
  const box = el("section", "coach-review", undefined, { id: "coach-review" });
  box.setAttribute("aria-labelledby", "coach-review-title");
  box.append(el("h3", "", t("coach.reviewTitle"), { id: "coach-review-title" }));
  const flagged = review.flagged || [];
  box.append(el("p", "coach-summary", flagged.length === 0
    ? t("coach.clean", { weighed: review.weighed })
    : t("coach.summary", { count: flagged.length, weighed: review.weighed, cost: points(review.cost) })));
  if (flagged.length > 0) {
    box.append(el("h4", "", t("coach.costliest")));
    const costliest = [...flagged].sort((a, b) => b.cost - a.cost).slice(0, 3);
    const top = el("ol", "coach-costliest");
    for (const d of costliest) top.append(decisionItem(d, name));
    box.append(top);
  }
  if (flagged.length > 3) {
    const all = el("details", "coach-all");
    all.append(el("summary", "", t("coach.all", { count: flagged.length })));
    const list = el("ol");
    for (const d of flagged) list.append(decisionItem(d, name));
    all.append(list);
    box.append(all);
  }
  box.append(el("p", "note", t("coach.estimate")));
  return box;
}
