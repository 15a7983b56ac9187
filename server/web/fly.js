// Cards that fly: after a redraw, each card that moved (the stock or the pile to a hand, a hand to
// the pile) flies from where it was to where it landed, over the page. Not when the system asks
// for less motion, nor in a hidden tab. A new redraw's flights first land those still in the air,
// so that cards never pile up over the table (a phone that wakes gets many redraws at once).

import { cardBack, cardElement } from "./cards.js";

/** Whether cards may fly. */
export function motionAllowed() {
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
  inFlight.add(e);
  const dx = from.left + from.width / 2 - (to.left + to.width / 2);
  const dy = from.top + from.height / 2 - (to.top + to.height / 2);
  const flight = e.animate([
    { transform: `translate(${dx}px, ${dy}px) scale(0.85)` },
    { transform: "translate(0, 0) scale(1)" },
  ], { duration: 360, delay, easing: "cubic-bezier(0.2, 0.7, 0.3, 1)", fill: "backwards" });
  const land = () => {
    inFlight.delete(e);
    e.remove();
  };
  flight.finished.then(land, land);
}

/** The cards in the air now. */
const inFlight = new Set();

/** Lands every card still in the air at once (its animation ends, the card goes). */
export function landAll() {
  for (const e of [...inFlight]) {
    for (const a of e.getAnimations()) a.finish();
    inFlight.delete(e);
    e.remove();
  }
}

/** The box of the pile's top card (or of the pile). */
const pileBoxOf = (parts) => (parts.pile.querySelector(".card.top") || parts.pile).getBoundingClientRect();

/**
 * The boxes cards may fly from, as they are before a redraw that adds `events` to the log.
 * @param {object} parts the table's elements (`hand`, `pile`, `stock`)
 * @param {object[]} events
 */
export function flightsFrom(parts, events) {
  const hand = new Map([...parts.hand.querySelectorAll(".card")].map((c) => [c.dataset.card, c.getBoundingClientRect()]));
  return { events, hand, pile: pileBoxOf(parts), stock: parts.stock.getBoundingClientRect() };
}

/**
 * Flies the cards of the events just drawn.
 * @param {object} parts the table's elements (`hand`, `pile`, `seats`)
 * @param {object} view the view just drawn
 * @param {object} before what {@link flightsFrom} read before the redraw
 * @param {boolean} [lastOnly] only the last move flies (the page catches up on several turns)
 */
export function flyEvents(parts, view, before, lastOnly = false) {
  landAll();
  const me = view.seat;
  const seatBox = (s) => {
    const box = parts.seats.querySelector(`.seat[data-seat="${s}"]`);
    return box ? box.getBoundingClientRect() : null;
  };
  const handBox = (c) => {
    const cardEl = [...parts.hand.querySelectorAll(".card")].find((e) => e.dataset.card === c);
    return cardEl ? cardEl.getBoundingClientRect() : null;
  };
  const pile = pileBoxOf(parts);
  let delay = 0;
  const moves = before.events.filter((e) => ["drew_from_stock", "took_from_pile", "threw"].includes(e.type));
  for (const e of lastOnly ? moves.slice(-1) : moves) {
    const mine = e.seat === me;
    if (e.type === "drew_from_stock") {
      const drawn = mine ? view.hand.find((c) => !before.hand.has(c)) : null;
      fly(drawn || null, before.stock, mine ? handBox(drawn) : seatBox(e.seat), ["stock", mine ? "hand" : "seat"], delay);
    } else if (e.type === "took_from_pile") {
      fly(e.card, before.pile, mine ? handBox(e.card) : seatBox(e.seat), ["pile", mine ? "hand" : "seat"], delay);
    } else if (e.type === "threw") {
      const last = e.cards[e.cards.length - 1];
      fly(last, mine ? before.hand.get(last) : seatBox(e.seat), pile, [mine ? "hand" : "seat", "pile"], delay);
    }
    delay += 140;
  }
}
