// The How to play page, written for this product from the two rule texts, filled in with the
// table's own settings (limit, penalty, court values, runs, jokers, turn order, scoring).

import { courtText, limitText, roundsText } from "./settings.js";

function el(tag, text) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  return e;
}

function list(items) {
  const ul = el("ul");
  for (const item of items) ul.append(el("li", item));
  return ul;
}

/**
 * Builds the rules for a table into `container`.
 * @param {HTMLElement} container
 * @param {object} s the table's settings
 */
export function renderRules(container, s) {
  container.replaceChildren();
  const throwFirst = s.turn_order === "throw_then_draw";
  const cumulative = s.scoring === "cumulative";
  const limit = s.call_limit;
  const court = courtText(s);

  const h = el("h2", "How to play Dhumbal");
  h.id = "rules-title";
  container.append(h);
  container.append(el("p",
    "Dhumbal, also called Jhyap, is the Nepali least-count game. Every card in your hand counts " +
    "against you. Take a card, throw one or more away, keep your total coming down, and call when " +
    "you believe nobody else is as light as you are."));

  container.append(el("h3", "This table"));
  const table = document.createElement("table");
  table.className = "rules-settings";
  const rows = [
    ["Players", `${s.players}`],
    ["Cards dealt", `${s.cards} each`],
    ["Match", roundsText(s)],
    ["Calling", limit === null ? "Any time at the start of your turn" : `With ${limit} or less in hand`],
    ["A wrong call costs", `${s.penalty}${s.penalty_mode === "on_top" ? " on top of your hand" : " instead of your hand"}` +
      (s.double_penalty ? `; ${s.double_penalty.amount} if you were over the lightest hand by more than ${s.double_penalty.margin}` : "")],
    ["Court cards", court],
    ["Runs", s.runs ? "On: 3 or more in a row of one suit" : "Off: only same-rank groups"],
    ["Jokers", s.jokers ? (s.jokers_in_runs ? "Two, worth 0, wild in sets and runs" : "Two, worth 0, wild in sets") : "Off"],
    ["A turn", throwFirst ? "Throw, then draw" : "Draw, then throw"],
    ["Scoring", cumulative ? `Points add up, low is good${s.elimination !== null ? `; out at ${s.elimination}` : ""}` : "Zero-sum settlement, high is good"],
    ["Bots", s.difficulty],
  ];
  for (const [k, v] of rows) {
    const tr = document.createElement("tr");
    tr.append(el("th", k), el("td", v));
    table.append(tr);
  }
  container.append(table);

  container.append(el("h3", "What the cards are worth"));
  container.append(el("p",
    `An ace is 1, the cards 2 to 10 their own number, and the court cards: ${court.toLowerCase()}.` +
    (s.jokers ? " A joker is worth 0." : "") +
    " Your hand total is those numbers added up. No card beats another: the only number that matters is the one you hold."));

  container.append(el("h3", "The deal"));
  container.append(el("p",
    `Everyone gets ${s.cards} cards, one at a time from the dealer's left. The next card is turned up as the pile; ` +
    "the rest is the face-down stock. The seat on the dealer's left plays first, and the deal moves one seat to the left each round. " +
    "In the first round you lead."));

  container.append(el("h3", "Your turn"));
  const steps = [];
  steps.push(limit === null
    ? "Before anything else you may call, whatever you hold."
    : `Before anything else you may call, but only if your hand adds up to ${limit} or less. The button reads "Call on N" when you can.`);
  if (throwFirst) {
    steps.push("If you don't call, throw one legal group onto the pile.");
    const pick = {
      single_only: "the previous player's throw, but only if it was a single card",
      any_card: "any one card of the previous player's throw",
      ends: "the first or the last card of the previous player's throw",
    }[s.pickup];
    steps.push(`Then take one card: the top of the stock, or ${pick}. The cards you may take are highlighted.`);
  } else {
    steps.push("If you don't call, take exactly one card: the top of the face-down stock, or the top card of the pile.");
    steps.push("Then throw one legal group onto the pile. There is no passing.");
    steps.push("The card you just took from the pile can't go straight back this turn, alone or in a group. It is marked in your hand.");
  }
  steps.push("If the stock runs out, everything under the pile's top card is shuffled into a new stock.");
  container.append(list(steps));

  container.append(el("h3", "What you may throw together"));
  const groups = ["One card, always.", "Two or more cards of the same rank, even part of a set."];
  if (s.runs) groups.push("A run: three or more cards in a row of one suit, ace low (A-2-3 is a run, Q-K-A is not).");
  if (s.jokers) {
    groups.push(s.jokers_in_runs
      ? "A joker stands in for a missing card in a set or a run, beside real cards; the two jokers may go as a pair."
      : "A joker stands in for the rank of a set beside at least one real card, never in a run; the two jokers may go as a pair.");
  }
  groups.push("The last card of a group lands on top of the pile, and only the top can be taken.");
  container.append(list(groups));

  container.append(el("h3", "Calling and the show"));
  container.append(el("p",
    "A call turns every hand face up. If every other hand is strictly heavier than yours, the call was right and you take the round. " +
    `If anybody matches or beats you, you are caught and charged ${s.penalty}` +
    (s.penalty_mode === "on_top" ? " on top of your hand" : " instead of your hand") +
    ". Equal is enough to catch you" + (limit !== null ? `, so calling on exactly ${limit} is risky` : "") + "."));
  container.append(el("p",
    "If nobody calls, the round ends after 200 throws across the table: every hand is shown, the lightest takes it, and nobody is penalised. " +
    "Ties for lightest are settled walking round from the dealer's left."));

  container.append(el("h3", "Keeping score"));
  if (cumulative) {
    container.append(el("p",
      "A right call scores 0 for the caller and every other player adds their hand to their total. " +
      "A caught caller adds the penalty and the others add nothing. Low is good." +
      (s.elimination !== null ? ` A player whose total reaches ${s.elimination} is out.` : "") +
      (s.score_reset ? " A total that lands exactly on a multiple of 50 drops by 50." : "") +
      ` The match lasts ${roundsText(s)}, and the lowest total wins.`));
  } else {
    container.append(el("p",
      "At the show every seat is charged its hand (the Took row); the round's taker is charged nothing, and a caught caller is charged the penalty instead. " +
      "The taker collects everything the others were charged (the Paid row), so every round and the running Total add up to zero. " +
      `Higher is better. The match lasts ${roundsText(s)}, and the highest Total wins.`));
    container.append(el("p",
      "Example: hands of 4, 12, 19 and 7, nobody caught: Took 0, 12, 19, 7 and Paid +38, −12, −19, −7."));
  }

  container.append(el("h3", "At this table on screen"));
  container.append(list([
    "Tap a card to mark it, tap again to unmark. The Throw button shows what the marked cards are worth and lights up only for a legal group.",
    "The cards land in the order you marked them: the last one you mark ends up on top of the pile.",
    "With nothing marked, drag a card onto the pile to throw it on its own.",
    "Sort hand puts your cards lightest first, jokers last.",
    `The line above your hand reads "Holding N" with the limit beside it (${limitText(s)}).`,
    "Keys: 1-9 mark cards, T throws, S takes from the stock, P from the pile, C calls, O sorts, N next round.",
  ]));

  container.append(el("h3", "Tips"));
  container.append(list([
    "Count your hand every turn, and watch how many cards the others hold: someone down to two cards may call soon.",
    "Keep a pair: two heavy cards can leave in one throw.",
    "Call one under the limit rather than on it, because a tie catches you.",
    "Taking from the pile tells the table about your hand; the stock tells nobody anything.",
  ]));
}
