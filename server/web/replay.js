// The replay page (`/replay`): a finished match's hand history, from the server
// (`/replay#CODE/N`, with the seat token this browser keeps for the room) or from a file, stepped
// through move by move, forwards and backwards, every hand face up.

import { cardElement, cardLabel } from "./cards.js";
import { SEAT_COLOURS, endingText } from "./score.js";
import { canVerify, verifyHistory } from "./fair.js";
import { $, codeSpan, el, kbd, totalText } from "./dom.js";
import { notice } from "./page.js";
import { storedRoom } from "./storage.js";
import { reviewBox } from "./coach.js";
import { onLanguageChange, startPage, t, tNodes } from "./i18n.js";

/**
 * One moment of the match: what the table looked like, and the line that says how it got there.
 * @typedef {object} Frame
 * @property {number} round the round's number
 * @property {number} roundIndex its place in `history.rounds`
 * @property {number} step the step shown (0 = the deal)
 * @property {number} steps the round's number of steps
 * @property {number|null} seat who acted (null for the deal and the show)
 * @property {string[][]} hands every hand, face up
 * @property {string|null} pileTop
 * @property {number} pileSize
 * @property {number} stock
 * @property {number} dealer
 * @property {() => string} line what happened, in the page's language
 * @property {number} finished how many rounds are over (their scores are shown)
 */

function removeOne(list, card) {
  const at = list.lastIndexOf(card);
  if (at >= 0) list.splice(at, 1);
}

/**
 * The name of a seat, as the history recorded it; a bot's in the page's language (the server
 * names the bot of seat N "Bot N", a name no person may take).
 */
function nameOf(history, seat) {
  const name = history.players && history.players[seat];
  if (name === `Bot ${seat + 1}`) return t("seat.bot", { n: seat + 1 });
  return name || t("seat.n", { n: seat + 1 });
}

/**
 * Every frame of a hand history, from its first deal to its last show.
 * @param {object} history a `dhumbal-hand-history/1` record
 * @returns {Frame[]}
 */
export function framesOf(history) {
  const frames = [];
  const name = (s) => nameOf(history, s);
  history.rounds.forEach((round, roundIndex) => {
    const hands = round.hands.map((h) => h.slice());
    const dealt = hands.reduce((n, h) => n + h.length, 0);
    let stock = round.deck.length - dealt - 1;
    const pile = [round.pile_top];
    const base = { round: round.round, roundIndex, steps: round.steps.length, dealer: round.dealer };
    const snap = (step, seat, line, finished) => ({
      ...base,
      step,
      seat,
      hands: hands.map((h) => h.slice()),
      pileTop: pile.length ? pile[pile.length - 1] : null,
      pileSize: pile.length,
      stock,
      line,
      finished,
    });
    frames.push(snap(0, null, () => t("replay.dealt", { round: round.round, who: name(round.dealer), card: cardLabel(round.pile_top) }), roundIndex));
    round.steps.forEach((step, k) => {
      const parts = [];
      for (const event of step.events) {
        switch (event.type) {
          case "reshuffled":
            if (Array.isArray(step.reshuffled)) {
              for (const c of step.reshuffled) removeOne(pile, c);
            }
            stock = event.stock;
            parts.push(() => t("log.reshuffled", { count: event.stock }));
            break;
          case "drew_from_stock": {
            const card = step.card;
            stock -= 1;
            if (card) hands[event.seat].push(card);
            parts.push(() => (card ? t("replay.drewCard", { who: name(event.seat), card: cardLabel(card) }) : t("log.drew", { who: name(event.seat) })));
            break;
          }
          case "took_from_pile":
            removeOne(pile, event.card);
            hands[event.seat].push(event.card);
            parts.push(() => t("log.took", { who: name(event.seat), card: cardLabel(event.card) }));
            break;
          case "threw":
            for (const c of event.cards) removeOne(hands[event.seat], c);
            pile.push(...event.cards);
            parts.push(() => t("log.threw", { who: name(event.seat), cards: event.cards.map(cardLabel).join(" ") }));
            break;
          case "called":
            parts.push(() => t("log.called", { who: name(event.seat) }));
            break;
          default:
            break;
        }
      }
      const line = () => parts.map((part) => part()).join(" ") || t("replay.played", { who: name(step.seat) });
      frames.push(snap(k + 1, step.seat, line, roundIndex));
    });
    if (round.result) {
      const ending = () => endingText(round.result, round.hands.map((_, s) => name(s)), history.settings);
      frames.push(snap(round.steps.length, null, () => t("replay.roundOver", { round: round.round, ending: ending() }), roundIndex + 1));
    }
  });
  return frames;
}

// ----- The page -----

const state = {
  history: null,
  frames: [],
  at: 0,
  /** What the line under the title says: its words, drawn again at a switch of language. */
  source: () => tNodes("replay.intro", { file: codeSpan("dhumbal-CODE-N.json") }),
  /** The corner's verdict on the deals: `{ kind, text }`, `text()` its words; or null. */
  check: null,
  /** The coach's review shown: `{ seat, review }`, or null. */
  review: null,
};

/** Says where the match comes from (or why none came): `words()` gives the text or nodes. */
function source(words) {
  state.source = words;
  paintSource();
}

function paintSource() {
  const words = state.source();
  $("replay-source").replaceChildren(...(typeof words === "string" ? [words] : words));
}

/** The page's title: the match's, once one is shown. */
function pageTitle() {
  const h = state.history;
  return h ? t("title.replayMatch", { room: h.room, match: h.match_number }) : t("title.replay");
}

/**
 * Shows a hand history: checks its shape, builds its frames and shows the first.
 * @param {object} history
 * @param {() => string} from where it came from, in words
 */
function load(history, from) {
  if (!history || history.format !== "dhumbal-hand-history/1" || !Array.isArray(history.rounds) || history.rounds.length === 0) {
    notice(t("replay.notHistory"), "error");
    return;
  }
  let frames;
  try {
    frames = framesOf(history);
  } catch {
    notice(t("replay.damaged"), "error");
    return;
  }
  state.history = history;
  state.frames = frames;
  state.at = 0;
  source(() => t("replay.loaded", {
    from: from(),
    room: history.room,
    match: history.match_number,
    rounds: t("replay.rounds", { count: history.rounds.length }),
    steps: t("replay.steps", { count: frames.length }),
  }));
  document.title = pageTitle();
  $("replay").hidden = false;
  paint();
  // Arrow keys step at once, not in the file chooser.
  $("replay-forward").focus({ preventScroll: true });
  check(history);
  offerReview(history);
}

/**
 * The coach's review of a seat of the history shown: its seats to choose from, and nothing yet
 * (a review asks the server, with the match's revealed seed, which the history holds).
 */
function offerReview(history) {
  const seats = $("replay-review-seat");
  seats.replaceChildren(...history.rounds[0].hands.map((_, s) => el("option", "", nameOf(history, s), { value: String(s) })));
  state.review = null;
  $("replay-review-box").replaceChildren();
  $("replay-review-status").textContent = "";
  $("replay-coach").hidden = !history.seed;
}

/** Asks the server for the coach's review of the chosen seat, and shows it. */
async function review() {
  const h = state.history;
  if (!h || !h.seed) return;
  const seat = Number($("replay-review-seat").value);
  const status = $("replay-review-status");
  const button = $("replay-review");
  button.disabled = true;
  status.textContent = t("coach.reviewing");
  $("replay-review-box").replaceChildren();
  try {
    const res = await fetch(`/api/rooms/${encodeURIComponent(h.room)}/matches/${encodeURIComponent(h.match_number)}/review?seat=${seat}`, {
      headers: { authorization: `Bearer ${h.seed}` },
    });
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      status.textContent = res.status === 404 ? t("replay.reviewGone") : t(body.code === "coach_busy" ? "error.coach_busy" : "replay.reviewRefused");
      return;
    }
    const message = await res.json();
    state.review = { seat, review: message.review };
    status.textContent = "";
    paintReview();
  } catch {
    status.textContent = t("replay.unreachable");
  } finally {
    button.disabled = false;
  }
}

/** The review shown, in the page's language. */
function paintReview() {
  const box = $("replay-review-box");
  if (!state.review || !state.history) return;
  box.replaceChildren(reviewBox(state.review.review, nameOf(state.history, state.review.seat)));
}

/** Shows the verdict on the deals in the corner; `text` gives its words. */
function showCheck(kind, text) {
  state.check = { kind, text };
  paintCheck();
}

function paintCheck() {
  const box = $("replay-check");
  box.className = "replay-check";
  if (!state.check) return;
  box.textContent = state.check.text();
  if (state.check.kind) box.classList.add(state.check.kind);
}

/** Checks the deals of the history shown, and says so in the corner. */
async function check(history) {
  if (!canVerify()) {
    showCheck(null, () => t("replay.noCrypto"));
    return;
  }
  showCheck(null, () => t("replay.checking"));
  try {
    const verdict = await verifyHistory(history, null);
    if (state.history !== history) return;
    showCheck(verdict.ok ? "ok" : "bad", () => verdict.summary);
  } catch (e) {
    showCheck(null, () => t("replay.checkFailed", { why: e.say ? e.say() : e.message }));
  }
}

function go(at) {
  if (state.frames.length === 0) return;
  state.at = Math.max(0, Math.min(state.frames.length - 1, at));
  paint();
}

/** The first index of round `roundIndex`'s frames. */
function firstOf(roundIndex) {
  return state.frames.findIndex((f) => f.roundIndex === roundIndex);
}

/** The start of the round shown, or of the previous round when already there. */
function previousRound() {
  const f = state.frames[state.at];
  const start = firstOf(f.roundIndex);
  if (start < state.at) go(start);
  else if (f.roundIndex > 0) go(firstOf(f.roundIndex - 1));
}

function nextRound() {
  const f = state.frames[state.at];
  let i = state.at;
  while (i < state.frames.length && state.frames[i].roundIndex === f.roundIndex) i += 1;
  go(i);
}

function paint() {
  const h = state.history;
  const f = state.frames[state.at];
  const root = $("replay");
  root.dataset.frame = String(state.at);
  root.dataset.frames = String(state.frames.length);
  root.dataset.round = String(f.round);
  root.dataset.step = String(f.step);
  const where = { room: h.room, match: h.match_number, round: f.round, step: f.step, steps: f.steps };
  $("replay-title").textContent = h.settings && h.settings.rounds && h.settings.rounds.fixed
    ? t("replay.positionOf", { ...where, rounds: h.settings.rounds.fixed })
    : t("replay.position", where);

  const seats = $("replay-seats");
  seats.replaceChildren();
  const totals = totalsAfter(f.finished);
  const settings = h.settings || {};
  f.hands.forEach((hand, s) => {
    const li = el("li", "replay-seat");
    li.dataset.seat = String(s);
    if (f.seat === s) li.classList.add("turn");
    const head = el("div", "seat-name");
    const dot = el("span", "dot");
    dot.style.background = SEAT_COLOURS[s % SEAT_COLOURS.length];
    head.append(dot, el("span", "", nameOf(h, s)));
    if (s === f.dealer) {
      const dealer = el("span", "dealer", t("seat.dealerMark"));
      dealer.title = t("seat.dealer");
      head.append(dealer);
    }
    const total = el("span", "seat-total", t("seat.total", { total: totalText(totals[s], settings) }));
    head.append(total);
    const cards = el("div", "replay-hand");
    cards.setAttribute("aria-label", t("replay.handOf", { name: nameOf(h, s) }));
    for (const c of hand) cards.append(cardElement(c));
    if (hand.length === 0) cards.append(el("span", "note", t("replay.outOfMatch")));
    li.append(head, cards);
    seats.append(li);
  });

  const pile = $("replay-pile");
  pile.replaceChildren(f.pileTop ? cardElement(f.pileTop) : el("div", "card empty-slot"));
  $("replay-pile-label").textContent = t("pile.count", { count: f.pileSize });
  $("replay-stock").textContent = t("stock.count", { count: f.stock });
  $("replay-line").textContent = f.line();

  $("replay-back").disabled = state.at === 0;
  $("replay-prev-round").disabled = state.at === 0;
  $("replay-forward").disabled = state.at === state.frames.length - 1;
  $("replay-next-round").disabled = state.frames[state.frames.length - 1].roundIndex === f.roundIndex;
  paintScores(f.finished);
}

/** Every seat's total after the first `finished` rounds. */
function totalsAfter(finished) {
  const h = state.history;
  const n = h.rounds[0].hands.length;
  if (finished === 0) return new Array(n).fill(0);
  const result = h.rounds[finished - 1].result;
  return result ? result.total : new Array(n).fill(0);
}

function paintScores(finished) {
  const h = state.history;
  const table = $("replay-scores");
  table.replaceChildren();
  const settings = h.settings || {};
  const head = el("tr");
  head.append(el("th", "", t("replay.round")));
  h.rounds[0].hands.forEach((_, s) => head.append(el("th", "", nameOf(h, s))));
  table.append(head);
  for (let r = 0; r < finished; r += 1) {
    const result = h.rounds[r].result;
    if (!result) continue;
    const tr = el("tr");
    tr.append(el("th", "", t("replay.roundRow", { n: result.round })));
    result.total.forEach((n) => tr.append(el("td", "", totalText(n, settings))));
    table.append(tr);
  }
  if (finished === 0) {
    const tr = el("tr");
    const td = el("td", "note", t("replay.noneOver"));
    td.colSpan = h.rounds[0].hands.length + 1;
    // One cell across the table: no round's name heads it.
    tr.append(td);
    table.append(tr);
  }
}

/** Loads `/replay#CODE/N` from the server with the seat token this browser keeps. */
async function fromServer(code, match) {
  const token = storedRoom(code).token || null;
  if (!token) {
    source(() => t("replay.noSeat", { room: code }));
    return;
  }
  source(() => t("replay.loading", { match, room: code }));
  try {
    const res = await fetch(`/api/rooms/${encodeURIComponent(code)}/matches/${encodeURIComponent(match)}/history`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (!res.ok) {
      const status = res.status;
      source(() => (status === 404
        ? t("replay.gone", { match, room: code })
        : t("replay.refused", { match, room: code, status })));
      return;
    }
    load(await res.json(), () => t("replay.fromServer"));
  } catch {
    source(() => t("replay.unreachable"));
  }
}

/** The line of keys under the controls. */
function paintKeys() {
  $("replay-keys").replaceChildren(...tNodes("replay.keys", {
    left: kbd("\u2190"),
    right: kbd("\u2192"),
    pageUp: kbd("Page Up"),
    pageDown: kbd("Page Down"),
    home: kbd("Home"),
    end: kbd("End"),
  }));
}

/** Draws the page again in the language just chosen, at the same step. */
function relabel() {
  document.title = pageTitle();
  paintSource();
  paintKeys();
  paintCheck();
  paintReview();
  if (state.frames.length > 0) paint();
}

function setup() {
  startPage();
  onLanguageChange(relabel);
  document.title = pageTitle();
  paintSource();
  paintKeys();
  $("replay-file").addEventListener("change", async (event) => {
    const file = event.target.files && event.target.files[0];
    if (!file) return;
    // The file's own name, shown as it is (not a word of the page's language).
    const chosen = $("replay-file-name");
    delete chosen.dataset.i18n;
    chosen.translate = false;
    chosen.textContent = file.name;
    let history;
    try {
      history = JSON.parse(await file.text());
    } catch {
      notice(t("replay.notJson"), "error");
      return;
    }
    load(history, () => t("replay.fromFile", { file: file.name }));
  });
  $("replay-back").addEventListener("click", () => go(state.at - 1));
  $("replay-forward").addEventListener("click", () => go(state.at + 1));
  $("replay-prev-round").addEventListener("click", previousRound);
  $("replay-next-round").addEventListener("click", nextRound);
  $("replay-review").addEventListener("click", review);
  document.addEventListener("keydown", (event) => {
    if (state.frames.length === 0 || event.ctrlKey || event.metaKey || event.altKey) return;
    const tag = document.activeElement ? document.activeElement.tagName : "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    if (event.key === "ArrowRight") go(state.at + 1);
    else if (event.key === "ArrowLeft") go(state.at - 1);
    else if (event.key === "PageDown") nextRound();
    else if (event.key === "PageUp") previousRound();
    else if (event.key === "Home") go(0);
    else if (event.key === "End") go(state.frames.length - 1);
    else return;
    event.preventDefault();
  });
  const m = location.hash.match(/^#([A-Za-z0-9]+)\/(\d+)$/);
  if (m) fromServer(decodeURIComponent(m[1]).toUpperCase(), Number(m[2]));
}

setup();
