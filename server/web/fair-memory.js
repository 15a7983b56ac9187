// What this page remembers of a room's matches while it plays (the commitment before the first
// deal, the client seeds it sent and which the server acknowledged, the hands it was dealt), so
// that the hand history downloaded after the match can be checked against it (fair.js).

import { isHex32, newClientSeed } from "./fair-scheme.js";
import { tab } from "./storage.js";


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
