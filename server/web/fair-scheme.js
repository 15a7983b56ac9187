// Provably fair deals: the scheme `dhumbal-fair-v1` of `docs/fairness.md`, as the browser
// computes it. SHA-256 and HMAC-SHA256 come from WebCrypto; ChaCha20, the Fisher–Yates shuffle
// and the deal are this file's own, so a player needs to trust neither the server nor a library
// to check that every deck followed from the seed the server committed to and the seeds the
// players added. Checking a hand history with it is fair.js's; what the page remembers while it
// plays, fair-memory.js's.
//
// What does not check out is kept as messages (`{ key, params }`) and put in words only when
// read (`said`), so a verdict on the page follows a switch of language.

import { t } from "./i18n.js";

/** The scheme's name, the prefix of every domain-separation string. */
export const SCHEME = "dhumbal-fair-v1";

/**
 * A reason in the making: the message `key` with its params (some of them reasons too).
 * @param {string} key
 * @param {object} [params]
 */
export const why = (key, params = {}) => ({ key, params });

/** A reason in words, in the page's language. */
export function said(reason) {
  const params = {};
  for (const [k, v] of Object.entries(reason.params)) params[k] = v && v.key ? said(v) : v;
  return t(reason.key, params);
}

/** An error whose message is a reason, in words when read (and again at each reading). */
export function failure(key, params) {
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

/** WebCrypto's SubtleCrypto; throws the reason in words where the page has none. */
export function subtle() {
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

/** Each card's place in the canonical pack, jokers last: the order hands are compared in. */
export const ORDER = new Map(canonicalPack(true).map((c, i) => [c, i]));

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
