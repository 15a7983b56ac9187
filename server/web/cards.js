// Cards: the wire notation (`10H`, `QS`, `RJ`), values, group legality and drawing.
//
// Group legality mirrors `engine/src/group.rs` so the Throw button is enabled only for a legal
// group; the server still judges every throw.
//
// A card's face and its short label keep the international indices (A, K, Q, J and the suit
// symbols, as printed on the cards); its name for screen readers is in the page's language.

import { el } from "./dom.js";
import { t } from "./i18n.js";

/** Suit letters in deck order, with their symbols (their names: the messages `suit.X`). */
export const SUITS = {
  S: { symbol: "\u2660", red: false },
  H: { symbol: "\u2665", red: true },
  D: { symbol: "\u2666", red: true },
  C: { symbol: "\u2663", red: false },
};

const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];

/**
 * Parses a card from its wire text.
 * @param {string} text like `10H`, `QS`, `RJ`
 * @returns {{text: string, rank: number|null, suit: string|null, joker: boolean, red: boolean}}
 */
export function parseCard(text) {
  if (text === "RJ" || text === "BJ") {
    return { text, rank: null, suit: null, joker: true, red: text === "RJ" };
  }
  const suit = text.slice(-1);
  const rank = RANKS.indexOf(text.slice(0, -1)) + 1;
  if (!SUITS[suit] || rank < 1) {
    throw new Error(`not a card: ${text}`);
  }
  return { text, rank, suit, joker: false, red: SUITS[suit].red };
}

/** A card's rank symbol and suit symbol, for text (`10♥`; a joker in words). */
export function cardLabel(text) {
  const c = parseCard(text);
  if (c.joker) return t(c.red ? "card.redJoker" : "card.blackJoker");
  return `${RANKS[c.rank - 1]}${SUITS[c.suit].symbol}`;
}

/** A card's name in words, for screen readers (`ten of hearts`). */
export function cardName(text) {
  const c = parseCard(text);
  if (c.joker) return t(c.red ? "card.redJoker" : "card.blackJoker");
  return t("card.name", { rank: t(`rank.${c.rank}`), suit: t(`suit.${c.suit}`) });
}

/**
 * Classifies cards as a group under the table's settings: `single`, `set`, `run`, or null when
 * they may not be thrown together. Mirrors `classify` in `engine/src/group.rs`.
 */
export function classify(cards, settings) {
  if (cards.length === 0) return null;
  if (cards.length === 1) return "single";
  const parsed = cards.map(parseCard);
  const jokers = parsed.filter((c) => c.joker).length;
  if (jokers > 0 && !settings.jokers) return null;
  const ranks = new Set(parsed.filter((c) => !c.joker).map((c) => c.rank));
  if (ranks.size === 1 || (ranks.size === 0 && jokers === cards.length)) return "set";
  if (settings.runs && isRun(parsed, jokers, settings.jokers_in_runs)) return "run";
  return null;
}

function isRun(parsed, jokers, jokersInRuns) {
  if (parsed.length < 3 || (jokers > 0 && !jokersInRuns)) return false;
  const real = parsed.filter((c) => !c.joker);
  if (real.length < 2) return false;
  const suit = real[0].suit;
  const seen = new Set();
  for (const c of real) {
    if (c.suit !== suit || seen.has(c.rank)) return false;
    seen.add(c.rank);
  }
  const low = Math.min(...seen);
  const high = Math.max(...seen);
  const span = high - low + 1;
  return span - real.length <= jokers && parsed.length <= 13;
}

/**
 * The hand sorted lightest first, jokers last; equal values by rank then suit.
 * @param {string[]} cards
 * @param {Object<string, number>} values what each card is worth at this table (the server's
 *   `hand_values`, by card)
 */
export function sortHand(cards, values) {
  const suitOrder = "SHDC";
  const key = (t) => {
    const c = parseCard(t);
    if (c.joker) return [1, 0, 0, t === "RJ" ? 0 : 1];
    return [0, values[t] ?? 0, c.rank, suitOrder.indexOf(c.suit)];
  };
  return [...cards].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < ka.length; i += 1) {
      if (ka[i] !== kb[i]) return ka[i] - kb[i];
    }
    return 0;
  });
}

/**
 * Draws a card face up as a DOM element: rank and suit in two corners, a large suit in the
 * middle, red or black; jokers drawn distinctly.
 * @param {string} text the card
 * @param {{tag?: string, small?: boolean}} [options]
 */
export function cardElement(text, options = {}) {
  const c = parseCard(text);
  const e = el(options.tag || "div", `card face ${c.red ? "red" : "black"}${c.joker ? " joker" : ""}${options.small ? " small" : ""}`);
  e.dataset.card = text;
  if (options.tag === "button") e.type = "button";
  const rank = c.joker ? "J\u2605" : RANKS[c.rank - 1];
  const suit = c.joker ? "" : SUITS[c.suit].symbol;
  const picture = (cls, ...parts) => {
    const span = el("span", cls);
    span.setAttribute("aria-hidden", "true");
    span.append(...parts);
    return span;
  };
  const corner = (cls) => picture(`corner ${cls}`, el("b", "", rank), el("i", "", suit));
  e.append(corner("tl"), picture("pip", c.joker ? "\u2605" : suit), corner("br"));
  if (c.joker) e.append(picture("joker-word", t("card.jokerWord")));
  // Its name for a screen reader is its text (no `aria-label`: a `div` may not have one, and a
  // button's name then holds all it says), the picture being hidden from it.
  e.append(el("span", "sr-only card-name", cardName(text)));
  return e;
}

/**
 * Names a card element for a screen reader with `text` in place of its bare name ("Take two of
 * hearts", "two of hearts, just taken").
 * @param {HTMLElement} e a card from `cardElement`
 * @param {string} text
 */
export function setCardName(e, text) {
  const name = e.querySelector(".card-name");
  if (name) name.textContent = text;
}

/** The name a card element is read by (its words, as `cardName` or `setCardName` gave them). */
export function cardElementName(e) {
  const name = e.querySelector(".card-name");
  return name ? name.textContent : "";
}

/** Draws a face-down card. */
export function cardBack(options = {}) {
  const e = el(options.tag || "div", `card back${options.small ? " small" : ""}`);
  if (options.tag === "button") e.type = "button";
  return e;
}
