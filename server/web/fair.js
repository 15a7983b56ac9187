// Checking a hand history in the browser: every deal against the scheme (fair-scheme.js) and
// the rules it must follow (rounds, dealers, reshuffles, every card accounted for), and against
// what this page saw while it played (fair-memory.js). This module is also the fair-deal code's
// one entry: it passes on the scheme and the memory, so a page (or a test) imports from here.
//
// What does not check out is kept as messages (`{ key, params }`) and put in words only when
// read (`summary`, `reasons`), so a verdict on the page follows a switch of language.


import {
  ORDER, canonicalPack, commitment, deal, deck, deckSeed, firstDealer, isHex32, nextActive, reshuffleKeeps, said,
  shortHex, shuffle, subtle, why,
} from "./fair-scheme.js";
import { t } from "./i18n.js";

export * from "./fair-scheme.js";
export { Memory } from "./fair-memory.js";


function sameList(a, b) {
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameCards(a, b) {
  const key = (l) => l.slice().sort((x, y) => (ORDER.get(x) ?? 99) - (ORDER.get(y) ?? 99)).join(" ");
  return Array.isArray(a) && Array.isArray(b) && key(a) === key(b);
}

function removeOne(list, card) {
  const at = list.lastIndexOf(card);
  if (at < 0) return false;
  list.splice(at, 1);
  return true;
}

/**
 * Replays one round's cards: the deal, every draw from the stock (reshuffles included), every
 * pick-up and throw, and compares the hands at the show.
 * @returns {object[]} what does not check out, as reasons (empty when all does)
 */
function checkPlay(round, deckSeedHex, dealt, players, settings) {
  const problems = [];
  const name = (s) => players[s] || why("seat.n", { n: s + 1 });
  const hands = dealt.hands.map((h) => h.slice());
  // A stack whose top is its last card, as the engine keeps it.
  let stack = dealt.stock.slice().reverse();
  const pile = [dealt.pileTop];
  // The last throw still on the pile (the card turned up, before anyone throws).
  let topThrow = [dealt.pileTop];
  const keeps = reshuffleKeeps(settings);
  let reshuffles = 0;
  const steps = Array.isArray(round.steps) ? round.steps : [];
  for (let k = 0; k < steps.length; k += 1) {
    const step = steps[k];
    const where = why("fair.step", { n: k + 1, name: name(step.seat) });
    for (const event of step.events || []) {
      if (event.type === "reshuffled") {
        const cards = step.reshuffled;
        if (!Array.isArray(cards)) {
          problems.push(why("fair.reshuffleUnrecorded", { where }));
          return problems;
        }
        if (stack.length > 0) problems.push(why("fair.reshuffleEarly", { where, count: stack.length }));
        const sorted = cards.slice().sort((a, b) => ORDER.get(a) - ORDER.get(b));
        if (!sameList(sorted, cards)) problems.push(why("fair.reshuffleOrder", { where }));
        // Exactly what the table's rule keeps stays on top; everything under it is shuffled.
        const keep = keeps === "top_throw" ? Math.max(1, topThrow.length) : 1;
        const rest = pile.slice(Math.max(0, pile.length - keep));
        const under = pile.slice(0, Math.max(0, pile.length - keep));
        const missing = cards.filter((c) => !removeOne(under, c));
        if (missing.length > 0 || rest.length === 0) {
          problems.push(why("fair.reshuffleNotPile", { where, cards: missing.length > 0 ? missing.join(" ") : why("fair.nothingOnTop") }));
        } else if (under.length > 0) {
          problems.push(why("fair.reshuffleKept", { where, cards: under.join(" ") }));
        }
        if (problems.length > 0) return problems;
        reshuffles += 1;
        stack = shuffle(cards, deckSeedHex, reshuffles);
        pile.length = 0;
        pile.push(...rest);
        if (keeps === "top_card") topThrow = topThrow.slice(-1);
        if (event.stock !== undefined && event.stock !== stack.length) {
          problems.push(why("fair.reshuffleSize", { where, size: stack.length, said: event.stock }));
        }
      } else if (event.type === "drew_from_stock") {
        const top = stack.pop();
        if (top === undefined) {
          problems.push(why("fair.emptyStock", { where }));
          return problems;
        }
        if (step.card !== top) {
          problems.push(why("fair.wrongDraw", { where, card: step.card || why("fair.unrecordedCard"), top }));
          return problems;
        }
        hands[event.seat].push(top);
      } else if (event.type === "took_from_pile") {
        if (!removeOne(pile, event.card)) problems.push(why("fair.notOnPile", { where, card: event.card }));
        removeOne(topThrow, event.card);
        hands[event.seat].push(event.card);
      } else if (event.type === "threw") {
        for (const c of event.cards) {
          if (!removeOne(hands[event.seat], c)) problems.push(why("fair.notInHand", { where, card: c }));
        }
        pile.push(...event.cards);
        topThrow = event.cards.slice();
      }
    }
    if (problems.length > 0) return problems;
  }
  // Every card of the pack is somewhere, once: in a hand, on the pile or in the stock.
  const everywhere = hands.flat().concat(pile, stack);
  if (!sameCards(everywhere, canonicalPack(Boolean(settings.jokers)))) problems.push(why("fair.cardsAccounted"));
  if (round.result && Array.isArray(round.result.hands)) {
    round.result.hands.forEach((shown, s) => {
      if (!sameCards(shown, hands[s])) problems.push(why("fair.showHand", { name: name(s) }));
    });
  }
  return problems;
}

/**
 * What this page saw of one match: see {@link Memory}.
 * @typedef {object} Seen
 * @property {string|null} commitment the commitment shown before the first deal
 * @property {boolean} commitmentBeforeDeal whether it was seen before round 1 was dealt
 * @property {number|null} seat this page's seat
 * @property {Object<string, Allowed>} allowed what this seat's client seed may be at each
 *   round's deal, by round (see {@link Memory#sawDeal})
 * @property {Object<string, string[]>} hands this seat's hand at each round's deal, by round
 * @property {Object<string, (string|null)[]>} dealtSeeds the client seeds each `dealt` event
 *   announced, by round
 */

/**
 * One round's verdict.
 * @typedef {object} RoundVerdict
 * @property {number} round
 * @property {boolean} ok
 * @property {string[]} reasons what does not check out, in words
 */

/**
 * Checks a hand history: the seed against the commitment (and the commitment this page saw),
 * then every round's deck seed, deck, deal, stock draws and reshuffles, and what this page saw
 * of its own seat.
 * @param {object} history a `dhumbal-hand-history/1` record
 * @param {Seen|null} seen what this page saw while the match was played (null: nothing)
 * The words (`summary`, `reasons`) are drawn in the page's language each time they are read.
 * @returns {Promise<{ok: boolean, seed: {ok: boolean, reasons: string[]}, rounds: RoundVerdict[], summary: string}>}
 */
export async function verifyHistory(history, seen) {
  subtle();
  const seedVerdict = { ok: true, reasons: [] };
  const rounds = [];
  const fail = (reason) => {
    seedVerdict.ok = false;
    seedVerdict.reasons.push(reason);
  };
  if (!history || history.format !== "dhumbal-hand-history/1") {
    fail(why("fair.notHistory"));
  } else if (!isHex32(history.seed) || !isHex32(history.commitment)) {
    fail(why("fair.noSeed"));
  } else {
    const computed = await commitment(history.seed);
    if (computed !== history.commitment.toLowerCase()) {
      fail(why("fair.seedMismatch", { computed: shortHex(computed), recorded: shortHex(history.commitment) }));
    }
    if (seen && seen.commitment && seen.commitment.toLowerCase() !== computed) {
      fail(why("fair.seedNotSeen", { seen: shortHex(seen.commitment) }));
    }
    // The server shows each match's commitment before its first deal (in the lobby, or as the
    // last match ends); shown only with the deal, the seed could have been chosen to suit it.
    if (seen && seen.commitment && seen.dealtSeeds && seen.dealtSeeds[1] && !seen.commitmentBeforeDeal) {
      fail(why("fair.lateCommitment"));
    }
  }
  const settings = (history && history.settings) || {};
  const list = (history && Array.isArray(history.rounds)) ? history.rounds : [];
  // A match of a fixed number of rounds has no more than that many.
  const fixed = settings.rounds && typeof settings.rounds === "object" ? settings.rounds.fixed : null;
  if (seedVerdict.ok) {
    const players = history.players || [];
    const direction = settings.direction || "clockwise";
    let previousDealer = null;
    for (let index = 0; index < list.length; index += 1) {
      const round = list[index];
      const reasons = [];
      try {
        // Rounds 1, 2, … once each, in order; the dealer moves on as the rules say.
        if (round.round !== index + 1) reasons.push(why("fair.roundNumber", { want: index + 1, got: String(round.round) }));
        if (Number.isInteger(fixed) && index >= fixed) reasons.push(why("fair.tooManyRounds", { count: list.length, rounds: fixed }));
        const activeNow = (round.hands || []).map((h) => h.length > 0);
        const wantDealer = previousDealer === null ? firstDealer(activeNow.length, direction) : nextActive(previousDealer, activeNow, direction);
        if (round.dealer !== wantDealer) reasons.push(why("fair.dealer", { want: players[wantDealer] || why("seat.n", { n: wantDealer + 1 }), got: String(round.dealer) }));
        previousDealer = Number.isInteger(round.dealer) ? round.dealer : wantDealer;
        const seeds = round.client_seeds || [];
        const ds = await deckSeed(history.seed, history.room, history.match_number, round.round, seeds);
        if (ds !== String(round.deck_seed).toLowerCase()) {
          reasons.push(why("fair.deckSeed"));
        }
        const cards = deck(ds, Boolean(settings.jokers));
        if (!sameList(cards, round.deck)) reasons.push(why("fair.deck"));
        const active = activeNow;
        const dealt = deal(cards, round.dealer, active, settings.cards, direction);
        (round.hands || []).forEach((h, s) => {
          if (!sameList(h, dealt.hands[s])) reasons.push(why("fair.hand", { name: players[s] || why("seat.n", { n: s + 1 }) }));
        });
        if (round.pile_top !== dealt.pileTop) reasons.push(why("fair.pileTop", { want: dealt.pileTop, got: round.pile_top }));
        if (seen) {
          const announced = seen.dealtSeeds && seen.dealtSeeds[round.round];
          if (announced && !sameList(announced.map((s) => (s ? s.toLowerCase() : null)), seeds.map((s) => (s ? s.toLowerCase() : null)))) {
            reasons.push(why("fair.clientSeeds"));
          }
          // This seat's seed in force at each deal must be exactly the latest one this page sent
          // after it was shown the match's commitment and the server acknowledged before the
          // deal (null if none was), or one whose acknowledgement a dropped connection lost.
          if (seen.commitment && seen.seat !== null && seen.seat !== undefined && seen.allowed) {
            const mine = seeds[seen.seat] ? String(seeds[seen.seat]).toLowerCase() : null;
            const allowed = seen.allowed[round.round];
            if (!allowed) {
              reasons.push(why("fair.mySeedUnseen"));
            } else if (mine !== allowed.seed && !(mine && allowed.lost.includes(mine))) {
              reasons.push(allowed.seed
                ? why("fair.mySeed", { want: shortHex(allowed.seed), got: mine ? shortHex(mine) : why("fair.none") })
                : why("fair.mySeedNone", { got: mine ? shortHex(mine) : why("fair.none") }));
            }
          }
          const myHand = seen.hands && seen.hands[round.round];
          if (myHand && seen.seat !== null && seen.seat !== undefined && !sameCards(myHand, (round.hands || [])[seen.seat] || [])) {
            reasons.push(why("fair.myHand"));
          }
        }
        if (reasons.length === 0) reasons.push(...checkPlay(round, ds, dealt, players, settings));
      } catch (e) {
        reasons.push(why("fair.unchecked", { why: e.reason || e.message }));
      }
      rounds.push({ round: round.round, ok: reasons.length === 0, reasons });
    }
  }
  const ok = seedVerdict.ok && rounds.length > 0 && rounds.every((r) => r.ok);
  const inWords = (reasons) => reasons.map(said);
  return {
    ok,
    seed: { ok: seedVerdict.ok, get reasons() { return inWords(seedVerdict.reasons); } },
    rounds: rounds.map((r) => ({ round: r.round, ok: r.ok, get reasons() { return inWords(r.reasons); } })),
    get summary() {
      if (!seedVerdict.ok) return t("fair.summary.seed", { reasons: inWords(seedVerdict.reasons).join("; ") });
      if (rounds.length === 0) return t("fair.summary.empty");
      if (ok) return t("fair.summary.ok", { count: rounds.length });
      const bad = rounds.find((r) => !r.ok);
      return t("fair.summary.bad", { round: bad.round, reasons: inWords(bad.reasons).join("; ") });
    },
  };
}
