// Provably fair deals, checked in the browser: the scheme `dhumbal-fair-v1` of
// `docs/fairness.md`. SHA-256 and HMAC-SHA256 come from WebCrypto; ChaCha20, the Fisher–Yates
// shuffle and the deal are this file's own, so a player needs to trust neither the server nor
// a library to check that every deck followed from the seed the server committed to and the
// seeds the players added.
//
// It also remembers, per room and match, what this page saw while it played (the commitment
// before the first deal, the client seeds it sent, the hands it was dealt) so that the
// hand history downloaded after the match can be checked against it.
//
// What does not check out is kept as messages (`{ key, params }`) and put in words only when
// read (`summary`, `reasons`), so a verdict on the page follows a switch of language.

import { t } from "./i18n.js";
import { tab } from "./storage.js";

/** The scheme's name, the prefix of every domain-separation string. */
export const SCHEME = "dhumbal-fair-v1";

/**
 * A reason in the making: the message `key` with its params (some of them reasons too).
 * @param {string} key
 * @param {object} [params]
 */
const why = (key, params = {}) => ({ key, params });

/** A reason in words, in the page's language. */
function said(reason) {
  const params = {};
  for (const [k, v] of Object.entries(reason.params)) params[k] = v && v.key ? said(v) : v;
  return t(reason.key, params);
}

/** An error whose message is a reason, in words when read (and again at each reading). */
function failure(key, params) {
  const e = new Error(key);
  e.reason = why(key, params);
  e.say = () => said(e.reason);
  return e;
}

const encoder = new TextEncoder();

// ----- Hex -----

/**
 * Bytes as lowercase hex.
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function toHex(bytes) {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/**
 * Hex as bytes.
 * @param {string} hex an even number of hex digits
 * @returns {Uint8Array}
 * @throws {Error} when the text is not hex
 */
export function fromHex(hex) {
  if (typeof hex !== "string" || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw failure("fair.notHex");
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * Whether a value is 32 bytes written as 64 hex digits.
 * @param {unknown} value
 * @returns {boolean}
 */
export function isHex32(value) {
  return typeof value === "string" && /^[0-9a-fA-F]{64}$/.test(value);
}

/**
 * A fresh client seed: 32 random bytes from the browser, as 64 lowercase hex digits.
 * @returns {string}
 */
export function newClientSeed() {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return toHex(bytes);
}

/**
 * A long hex value shortened for the eye: `9d83…ee6e`.
 * @param {string} hex
 * @returns {string}
 */
export function shortHex(hex) {
  return hex && hex.length > 8 ? `${hex.slice(0, 4)}\u2026${hex.slice(-4)}` : hex || "";
}

// ----- WebCrypto -----

/** What to tell a person when the browser has no WebCrypto (a page served over plain http). */
export function noWebCrypto() {
  return t("fair.noWebCrypto");
}

function subtle() {
  const s = globalThis.crypto && globalThis.crypto.subtle;
  if (!s) throw failure("fair.noWebCrypto");
  return s;
}

/**
 * Whether this page can verify (WebCrypto is there only in secure contexts: https or localhost).
 * @returns {boolean}
 */
export function canVerify() {
  return Boolean(globalThis.crypto && globalThis.crypto.subtle);
}

function concat(parts) {
  const n = parts.reduce((sum, p) => sum + p.length, 0);
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function u32be(n) {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n >>> 0, false);
  return out;
}

/**
 * SHA-256 of some bytes.
 * @param {Uint8Array} bytes
 * @returns {Promise<Uint8Array>}
 */
export async function sha256(bytes) {
  return new Uint8Array(await subtle().digest("SHA-256", bytes));
}

/**
 * HMAC-SHA256.
 * @param {Uint8Array} key
 * @param {Uint8Array} message
 * @returns {Promise<Uint8Array>}
 */
export async function hmacSha256(key, message) {
  const k = await subtle().importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle().sign("HMAC", k, message));
}

// ----- The scheme -----

/**
 * The commitment to a match seed: SHA-256("dhumbal-fair-v1/commit" ‖ seed), in hex.
 * @param {string} seed the match seed, 64 hex digits
 * @returns {Promise<string>}
 */
export async function commitment(seed) {
  return toHex(await sha256(concat([encoder.encode(`${SCHEME}/commit`), fromHex(seed)])));
}

/**
 * Round `round`'s secret: HMAC-SHA256(key = seed, "dhumbal-fair-v1/round" ‖ u32be(round)).
 * @param {string} seed the match seed, 64 hex digits
 * @param {number} round from 1
 * @returns {Promise<string>} hex
 */
export async function roundSecret(seed, round) {
  return toHex(await hmacSha256(fromHex(seed), concat([encoder.encode(`${SCHEME}/round`), u32be(round)])));
}

/**
 * Round `round`'s deck seed, bound to the room, the match, the round and the client seeds.
 * @param {string} seed the match seed, 64 hex digits
 * @param {string} room the room's code
 * @param {number} match the match's number in its room, from 1
 * @param {number} round from 1
 * @param {(string|null)[]} clientSeeds every seat's client seed (hex) or null, in seat order
 * @returns {Promise<string>} hex
 */
export async function deckSeed(seed, room, match, round, clientSeeds) {
  const code = encoder.encode(room);
  const parts = [
    encoder.encode(`${SCHEME}/deck`),
    new Uint8Array([code.length >> 8, code.length & 0xff]),
    code,
    u32be(match),
    u32be(round),
    new Uint8Array([clientSeeds.length]),
  ];
  for (const s of clientSeeds) {
    if (s === null || s === undefined) {
      parts.push(new Uint8Array([0]));
    } else {
      parts.push(new Uint8Array([1]), fromHex(s));
    }
  }
  const secret = fromHex(await roundSecret(seed, round));
  return toHex(await hmacSha256(secret, concat(parts)));
}

// ----- ChaCha20, as rand_chacha's ChaCha20Rng -----

function rotl(x, n) {
  return (x << n) | (x >>> (32 - n));
}

function quarter(s, a, b, c, d) {
  s[a] = (s[a] + s[b]) | 0; s[d] = rotl(s[d] ^ s[a], 16);
  s[c] = (s[c] + s[d]) | 0; s[b] = rotl(s[b] ^ s[c], 12);
  s[a] = (s[a] + s[b]) | 0; s[d] = rotl(s[d] ^ s[a], 8);
  s[c] = (s[c] + s[d]) | 0; s[b] = rotl(s[b] ^ s[c], 7);
}

/**
 * One ChaCha20 block (20 rounds).
 * @param {Uint32Array} input the 16-word state: constants, key, counter, stream
 * @returns {Uint32Array} 16 words of keystream
 */
export function chachaBlock(input) {
  const x = new Int32Array(input);
  for (let i = 0; i < 10; i += 1) {
    quarter(x, 0, 4, 8, 12); quarter(x, 1, 5, 9, 13); quarter(x, 2, 6, 10, 14); quarter(x, 3, 7, 11, 15);
    quarter(x, 0, 5, 10, 15); quarter(x, 1, 6, 11, 12); quarter(x, 2, 7, 8, 13); quarter(x, 3, 4, 9, 14);
  }
  const out = new Uint32Array(16);
  for (let i = 0; i < 16; i += 1) out[i] = (x[i] + input[i]) >>> 0;
  return out;
}

/**
 * ChaCha20 keyed with a 32-byte seed on stream `stream`: the keystream as little-endian 32-bit
 * words, block after block (rand_chacha's `ChaCha20Rng::from_seed` with `set_stream`).
 */
export class ChaCha20 {
  /**
   * @param {Uint8Array} seed 32 bytes
   * @param {number} stream the stream number (words 14 and 15, low word first)
   */
  constructor(seed, stream = 0) {
    if (seed.length !== 32) throw failure("fair.keyLength");
    const state = new Uint32Array(16);
    state.set([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);
    const view = new DataView(seed.buffer, seed.byteOffset, 32);
    for (let i = 0; i < 8; i += 1) state[4 + i] = view.getUint32(4 * i, true);
    state[14] = stream % 2 ** 32;
    state[15] = Math.floor(stream / 2 ** 32);
    this.state = state;
    this.block = null;
    this.index = 16;
  }

  /**
   * The next 32-bit word of the keystream.
   * @returns {number}
   */
  nextU32() {
    if (this.index >= 16) {
      this.block = chachaBlock(this.state);
      // The 64-bit block counter: words 12 (low) and 13 (high).
      this.state[12] = (this.state[12] + 1) >>> 0;
      if (this.state[12] === 0) this.state[13] = (this.state[13] + 1) >>> 0;
      this.index = 0;
    }
    const word = this.block[this.index];
    this.index += 1;
    return word;
  }

  /**
   * A uniform number in `0..n` by rejection sampling, as the engine draws it.
   * @param {number} n at least 1
   * @returns {number}
   */
  below(n) {
    const max = 0xffffffff;
    const zone = max - (((max % n) + 1) % n);
    for (;;) {
      const x = this.nextU32();
      if (x <= zone) return x % n;
    }
  }
}

/**
 * Shuffles a copy of `cards` with Fisher–Yates driven by stream `stream` of `seed`.
 * @param {string[]} cards
 * @param {string} seed 64 hex digits
 * @param {number} stream
 * @returns {string[]}
 */
export function shuffle(cards, seed, stream) {
  const out = cards.slice();
  const rng = new ChaCha20(fromHex(seed), stream);
  for (let i = out.length - 1; i >= 1; i -= 1) {
    const j = rng.below(i + 1);
    const t = out[i];
    out[i] = out[j];
    out[j] = t;
  }
  return out;
}

const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];

/**
 * The canonical pack: `AS … KS AH … KH AD … KD AC … KC`, then `RJ BJ` with jokers.
 * @param {boolean} jokers
 * @returns {string[]}
 */
export function canonicalPack(jokers) {
  const pack = [];
  for (const suit of ["S", "H", "D", "C"]) for (const r of RANKS) pack.push(`${r}${suit}`);
  if (jokers) pack.push("RJ", "BJ");
  return pack;
}

const ORDER = new Map(canonicalPack(true).map((c, i) => [c, i]));

/**
 * A round's deck, top card first: the canonical pack shuffled with stream 0 of its deck seed.
 * @param {string} seed the deck seed, 64 hex digits
 * @param {boolean} jokers whether the table plays with jokers
 * @returns {string[]}
 */
export function deck(seed, jokers) {
  return shuffle(canonicalPack(jokers), seed, 0);
}

/**
 * Deals a deck as the engine does: one card at a time from the dealer's next seat, skipping seats
 * out of the match, until each has `cards`; then the pile's card; the rest is the stock.
 * @param {string[]} cardsTopFirst the deck
 * @param {number} dealer the dealer's seat
 * @param {boolean[]} active which seats are in the match
 * @param {number} cards cards per hand
 * @param {string} [direction] the table's `direction`: `clockwise` (the default) or
 *   `counter_clockwise`
 * @returns {{hands: string[][], pileTop: string, stock: string[]}} the stock top first
 */
export function deal(cardsTopFirst, dealer, active, cards, direction = "clockwise") {
  const n = active.length;
  const hands = active.map(() => []);
  const next = (s) => nextActive(s, active, direction);
  let at = 0;
  const first = next(dealer);
  for (let i = 0; i < cards; i += 1) {
    let seat = first;
    do {
      hands[seat].push(cardsTopFirst[at]);
      at += 1;
      seat = next(seat);
    } while (seat !== first);
  }
  return { hands, pileTop: cardsTopFirst[at], stock: cardsTopFirst.slice(at + 1) };
}

/**
 * The next seat after `seat` in the table's direction still in the match: `clockwise` (the
 * default) is seat + 1, `counter_clockwise` seat − 1 (mod the number of seats).
 * @param {number} seat
 * @param {boolean[]} active which seats are in the match
 * @param {string} [direction] the `direction` setting
 * @returns {number}
 */
export function nextActive(seat, active, direction = "clockwise") {
  const n = active.length;
  const step = direction === "counter_clockwise" ? n - 1 : 1;
  for (let k = 1; k <= n; k += 1) {
    const s = (seat + k * step) % n;
    if (active[s]) return s;
  }
  return seat;
}

/**
 * Round 1's dealer: the seat before seat 0 in the table's direction (the last seat clockwise,
 * seat 1 counter-clockwise), so that seat 0 leads.
 * @param {number} seats
 * @param {string} [direction]
 * @returns {number}
 */
export function firstDealer(seats, direction = "clockwise") {
  return direction === "counter_clockwise" ? 1 % seats : seats - 1;
}

/**
 * What a reshuffle keeps on the pile at this table: `top_card` or `top_throw` (the
 * `reshuffle_keeps` setting; without it, as before the setting: the top card at draw-then-throw
 * tables, the whole top throw at throw-then-draw tables).
 * @param {object} settings
 * @returns {"top_card"|"top_throw"}
 */
export function reshuffleKeeps(settings) {
  if (settings.reshuffle_keeps === "top_card" || settings.reshuffle_keeps === "top_throw") return settings.reshuffle_keeps;
  return settings.turn_order === "throw_then_draw" ? "top_throw" : "top_card";
}

// ----- Checking a hand history -----

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

// ----- What this page remembers -----

const memoryKey = (room) => `dhumbal.fair.${room}`;
const inMemory = new Map();

function readStore(room) {
  // Storage may be refused (or hold something else): then what this page holds in memory.
  const data = tab.getJson(memoryKey(room)) || inMemory.get(room) || {};
  if (!data.matches || typeof data.matches !== "object") data.matches = {};
  if (!data.seeds || typeof data.seeds !== "object") data.seeds = {};
  return data;
}

function writeStore(room, data) {
  inMemory.set(room, data);
  tab.setJson(memoryKey(room), data);
}

/**
 * The seeds this page sent answering one commitment, in the order sent: each `sent` (no answer
 * yet), `taken` (the server acknowledged it), or `lost` (its socket closed before an answer).
 * @typedef {{seed: string, state: "sent"|"taken"|"lost"}} SentSeed
 */

/**
 * What this seat's seed may be at a deal: the latest this page sent after it was shown the
 * commitment and the server acknowledged before the deal (`null`: none), or one sent after it
 * whose answer a dropped connection lost.
 * @typedef {{seed: string|null, lost: string[]}} Allowed
 */
function allowedNow(list) {
  const sent = Array.isArray(list) ? list : [];
  let at = -1;
  sent.forEach((s, i) => {
    if (s.state === "taken") at = i;
  });
  return {
    seed: at >= 0 ? sent[at].seed : null,
    lost: sent.slice(at + 1).filter((s) => s.state === "lost").map((s) => s.seed),
  };
}

/**
 * What this page remembers of a room's matches, for {@link verifyHistory}: kept in
 * sessionStorage (so a reload keeps it) or, where storage is refused, in memory.
 */
export class Memory {
  /** @param {string} room the room's code */
  constructor(room) {
    this.room = room;
  }

  /** @param {(data: object) => void} change */
  update(change) {
    const data = readStore(this.room);
    change(data);
    writeStore(this.room, data);
  }

  /**
   * Makes and remembers a fresh client seed answering a commitment this page was shown.
   * @param {string|null|undefined} commitment the commitment the room shows now
   * @returns {{seed: string, commitment: string}|null} the seed as the protocol sends it (null
   *   without a commitment: a seed chosen before the page saw one never counts)
   */
  freshSeed(commitment) {
    if (!isHex32(commitment)) return null;
    const key = commitment.toLowerCase();
    const seed = newClientSeed();
    this.update((d) => {
      const list = d.seeds[key] || (d.seeds[key] = []);
      list.push({ seed, state: "sent" });
      // The latest hundred are plenty for a match's rounds.
      if (list.length > 100) list.splice(0, list.length - 100);
      d.last = key;
    });
    return { seed, commitment: key };
  }

  /**
   * A seed for `hello`: only for the commitment this page last saw in this room (the room still
   * shows it, or the server says `stale_commitment` and the page sends another once it sees the
   * new one).
   * @returns {{seed: string, commitment: string}|null}
   */
  helloSeed() {
    return this.freshSeed(readStore(this.room).last);
  }

  /**
   * The server acknowledged a seed this page sent (`client_seed_taken`): it is the seat's seed
   * in force from the next deal of that commitment's match.
   * @param {string} commitment
   * @param {string} seed
   */
  taken(commitment, seed) {
    if (!isHex32(commitment) || !isHex32(seed)) return;
    const key = commitment.toLowerCase();
    const mine = seed.toLowerCase();
    this.update((d) => {
      const list = d.seeds[key] || (d.seeds[key] = []);
      let at = -1;
      list.forEach((s, i) => {
        if (s.seed === mine) at = i;
      });
      if (at < 0) return;
      // The same seed acknowledged again is the latest again.
      const [entry] = list.splice(at, 1);
      entry.state = "taken";
      list.push(entry);
    });
  }

  /** A new socket: seeds sent on the last one and never answered may or may not have been taken. */
  newConnection() {
    this.update((d) => {
      for (const list of Object.values(d.seeds)) {
        for (const s of list) if (s.state === "sent") s.state = "lost";
      }
    });
  }

  /** @param {number} match */
  matchOf(data, match) {
    const key = String(match);
    if (!data.matches[key]) data.matches[key] = { commitment: null, commitmentBeforeDeal: false, dealt: false, hands: {}, dealtSeeds: {}, allowed: {}, seat: null };
    if (!data.matches[key].allowed) data.matches[key].allowed = {};
    return data.matches[key];
  }

  /**
   * Remembers the commitment the room showed for a match.
   * @param {number} match
   * @param {string} value
   * @returns {boolean} whether it is new to this page (time to send a fresh client seed)
   */
  sawCommitment(match, value) {
    let fresh = false;
    this.update((d) => {
      const m = this.matchOf(d, match);
      d.last = String(value).toLowerCase();
      if (m.commitment === value) return;
      m.commitment = value;
      m.commitmentBeforeDeal = !m.dealt;
      fresh = true;
    });
    return fresh;
  }

  /**
   * Remembers a `dealt` event's client seeds, and what this seat's seed may be in it.
   * @param {number} match
   * @param {object} event the `dealt` event
   */
  sawDeal(match, event) {
    this.update((d) => {
      const m = this.matchOf(d, match);
      m.dealt = true;
      if (Array.isArray(event.client_seeds)) m.dealtSeeds[event.round] = event.client_seeds;
      if (m.commitment && !m.allowed[event.round]) m.allowed[event.round] = allowedNow(d.seeds[m.commitment.toLowerCase()]);
    });
  }

  /**
   * Arriving in a match (`history`): the rounds up to `round` this page did not see dealt were
   * dealt while it was away, after everything it had sent before.
   * @param {number} match
   * @param {number} round the round being played
   */
  caughtUp(match, round) {
    this.update((d) => {
      const m = this.matchOf(d, match);
      if (!m.commitment) return;
      for (let r = 1; r <= round; r += 1) {
        if (!m.allowed[r]) m.allowed[r] = allowedNow(d.seeds[m.commitment.toLowerCase()]);
      }
    });
  }

  /**
   * Remembers this seat's hand as dealt in a round (the first time only).
   * @param {number} match
   * @param {number} round
   * @param {number} seat
   * @param {string[]} hand
   */
  sawHand(match, round, seat, hand) {
    this.update((d) => {
      const m = this.matchOf(d, match);
      if (m.hands[round]) return;
      m.hands[round] = hand.slice();
      m.seat = seat;
    });
  }

  /**
   * What this page saw of a match, for {@link verifyHistory}.
   * @param {number} match
   * @param {number|null} seat this page's seat now
   * @returns {Seen}
   */
  seen(match, seat) {
    const d = readStore(this.room);
    const m = d.matches[String(match)] || { commitment: null, commitmentBeforeDeal: false, hands: {}, dealtSeeds: {}, allowed: {}, seat: null };
    return {
      commitment: m.commitment,
      commitmentBeforeDeal: m.commitmentBeforeDeal,
      seat: m.seat !== null ? m.seat : seat,
      hands: m.hands,
      dealtSeeds: m.dealtSeeds,
      allowed: m.allowed || {},
    };
  }
}
