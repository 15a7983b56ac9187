// The replay page (`/replay`): a finished match's hand history, from the server
// (`/replay#CODE/N`, with the seat token this browser keeps for the room) or from a file, stepped
// through move by move, forwards and backwards, every hand face up.

import { cardElement, cardLabel } from "./cards.js";
import { SEAT_COLOURS, endingText, signed } from "./score.js";
import { canVerify, verifyHistory } from "./fair.js";
import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);

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
 * @property {string} line
 * @property {number} finished how many rounds are over (their scores are shown)
 */

function removeOne(list, card) {
  const at = list.lastIndexOf(card);
  if (at >= 0) list.splice(at, 1);
}

/** The name of a seat, as the history recorded it. */
function nameOf(history, seat) {
  return (history.players && history.players[seat]) || `Seat ${seat + 1}`;
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
    frames.push(snap(0, null, `Round ${round.round}: ${name(round.dealer)} dealt; ${cardLabel(round.pile_top)} was turned up.`, roundIndex));
    round.steps.forEach((step, k) => {
      const parts = [];
      for (const event of step.events) {
        switch (event.type) {
          case "reshuffled":
            if (Array.isArray(step.reshuffled)) {
              for (const c of step.reshuffled) removeOne(pile, c);
            }
            stock = event.stock;
            parts.push(`The pile was shuffled into a new stock (${event.stock} cards).`);
            break;
          case "drew_from_stock": {
            const card = step.card;
            stock -= 1;
            if (card) hands[event.seat].push(card);
            parts.push(card ? `${name(event.seat)} drew ${cardLabel(card)} from the stock.` : `${name(event.seat)} drew from the stock.`);
            break;
          }
          case "took_from_pile":
            removeOne(pile, event.card);
            hands[event.seat].push(event.card);
            parts.push(`${name(event.seat)} took ${cardLabel(event.card)} from the pile.`);
            break;
          case "threw":
            for (const c of event.cards) removeOne(hands[event.seat], c);
            pile.push(...event.cards);
            parts.push(`${name(event.seat)} threw ${event.cards.map(cardLabel).join(" ")}.`);
            break;
          case "called":
            parts.push(`${name(event.seat)} called!`);
            break;
          default:
            break;
        }
      }
      frames.push(snap(k + 1, step.seat, parts.join(" ") || `${name(step.seat)} played.`, roundIndex));
    });
    if (round.result) {
      const names = history.players.length ? history.players : round.hands.map((_, s) => name(s));
      frames.push(snap(round.steps.length, null, `Round ${round.round} over. ${endingText(round.result, names, history.settings)}`, roundIndex + 1));
    }
  });
  return frames;
}

// ----- The page -----

const state = { history: null, frames: [], at: 0 };

let toastTimer = null;
function notice(text) {
  const toast = $("toast");
  toast.textContent = text;
  toast.className = "toast show error";
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { toast.className = "toast"; }, 4500);
}

function source(text) {
  $("replay-source").textContent = text;
}

/** Shows a hand history: checks its shape, builds its frames and shows the first. */
function load(history, from) {
  if (!history || history.format !== "dhumbal-hand-history/1" || !Array.isArray(history.rounds) || history.rounds.length === 0) {
    notice("That is not a dhumbal hand history with rounds to replay.");
    return;
  }
  let frames;
  try {
    frames = framesOf(history);
  } catch {
    notice("That hand history is damaged; it cannot be replayed.");
    return;
  }
  state.history = history;
  state.frames = frames;
  state.at = 0;
  source(`${from}: room ${history.room}, match ${history.match_number}, ${history.rounds.length} round${history.rounds.length === 1 ? "" : "s"}, ${frames.length} steps.`);
  document.title = `Dhumbal replay \u00b7 ${history.room} \u00b7 match ${history.match_number}`;
  $("replay").hidden = false;
  paint();
  // Arrow keys step at once, not in the file chooser.
  $("replay-forward").focus({ preventScroll: true });
  check(history);
}

/** Checks the deals of the history shown, and says so in the corner. */
async function check(history) {
  const box = $("replay-check");
  box.className = "replay-check";
  if (!canVerify()) {
    box.textContent = "Deals not checked here (needs https or localhost).";
    return;
  }
  box.textContent = "Checking the deals\u2026";
  try {
    const verdict = await verifyHistory(history, null);
    if (state.history !== history) return;
    box.textContent = verdict.summary;
    box.classList.add(verdict.ok ? "ok" : "bad");
  } catch (e) {
    box.textContent = `Deals not checked: ${e.message}`;
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
  const rounds = h.settings && h.settings.rounds && h.settings.rounds.fixed ? ` of ${h.settings.rounds.fixed}` : "";
  $("replay-title").textContent = `Room ${h.room} \u00b7 match ${h.match_number} \u00b7 round ${f.round}${rounds} \u00b7 step ${f.step} of ${f.steps}`;

  const seats = $("replay-seats");
  seats.replaceChildren();
  const totals = totalsAfter(f.finished);
  const cumulative = h.settings && h.settings.scoring === "cumulative";
  f.hands.forEach((hand, s) => {
    const li = el("li", "replay-seat");
    li.dataset.seat = String(s);
    if (f.seat === s) li.classList.add("turn");
    const head = el("div", "seat-name");
    const dot = el("span", "dot");
    dot.style.background = SEAT_COLOURS[s % SEAT_COLOURS.length];
    head.append(dot, el("span", "", nameOf(h, s)));
    if (s === f.dealer) head.append(el("span", "dealer", "D"));
    const total = el("span", "seat-total", `Total ${cumulative ? totals[s] : signed(totals[s])}`);
    head.append(total);
    const cards = el("div", "replay-hand");
    cards.setAttribute("aria-label", `${nameOf(h, s)}'s hand`);
    for (const c of hand) cards.append(cardElement(c));
    if (hand.length === 0) cards.append(el("span", "note", "out of the match"));
    li.append(head, cards);
    seats.append(li);
  });

  const pile = $("replay-pile");
  pile.replaceChildren(f.pileTop ? cardElement(f.pileTop) : el("div", "card empty-slot"));
  $("replay-pile-label").textContent = `Pile \u00b7 ${f.pileSize}`;
  $("replay-stock").textContent = `Stock \u00b7 ${f.stock}`;
  $("replay-line").textContent = f.line;

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
  const cumulative = h.settings && h.settings.scoring === "cumulative";
  const head = el("tr");
  head.append(el("th", "", "Round"));
  h.rounds[0].hands.forEach((_, s) => head.append(el("th", "", nameOf(h, s))));
  table.append(head);
  for (let r = 0; r < finished; r += 1) {
    const result = h.rounds[r].result;
    if (!result) continue;
    const tr = el("tr");
    tr.append(el("th", "", `R${result.round}`));
    result.total.forEach((t) => tr.append(el("td", "", cumulative ? String(t) : signed(t))));
    table.append(tr);
  }
  if (finished === 0) {
    const tr = el("tr");
    const td = el("td", "note", "No round is over yet.");
    td.colSpan = h.rounds[0].hands.length + 1;
    tr.append(el("th", "", ""), td);
    table.append(tr);
  }
}

/** Loads `/replay#CODE/N` from the server with the seat token this browser keeps. */
async function fromServer(code, match) {
  let token = null;
  try {
    const stored = JSON.parse(localStorage.getItem(`dhumbal.room.${code}`));
    token = stored && stored.token ? stored.token : null;
  } catch {
    token = null;
  }
  if (!token) {
    source(`This browser holds no seat in room ${code}: open the match's hand history file instead.`);
    return;
  }
  source(`Loading match ${match} of room ${code}\u2026`);
  try {
    const res = await fetch(`/api/rooms/${encodeURIComponent(code)}/matches/${encodeURIComponent(match)}/history`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (!res.ok) {
      source(res.status === 404
        ? `The server no longer keeps match ${match} of room ${code}. Open its hand history file instead.`
        : `The server would not give this browser match ${match} of room ${code} (${res.status}). Open its hand history file instead.`);
      return;
    }
    load(await res.json(), "From the server");
  } catch {
    source("Couldn't reach the server. Open a hand history file instead.");
  }
}

function setup() {
  $("replay-file").addEventListener("change", async (event) => {
    const file = event.target.files && event.target.files[0];
    if (!file) return;
    let history;
    try {
      history = JSON.parse(await file.text());
    } catch {
      notice("That file is not JSON; open a dhumbal hand history.");
      return;
    }
    load(history, `From ${file.name}`);
  });
  $("replay-back").addEventListener("click", () => go(state.at - 1));
  $("replay-forward").addEventListener("click", () => go(state.at + 1));
  $("replay-prev-round").addEventListener("click", previousRound);
  $("replay-next-round").addEventListener("click", nextRound);
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
