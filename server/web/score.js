// The score dialog: every hand face up, the Hand / Took / Paid (or Points) / Total rows, who called
// and whether they were caught, a chart of every Total across the rounds, then Next round; after
// the match, first who won it (or who shared first place) and the standings (the server's), the
// room's ledger of its matches, Rematch (and who asked for one), Leave, the host's Back to the
// lobby and Change settings, and checking the deals. The ledger's table is the lobby's too.

import { cardElement } from "./cards.js";
import { $, el, hideNameTip, nameCut, seatName, signed, totalText } from "./dom.js";
import { t } from "./i18n.js";
import { reviewBox } from "./coach.js";

const SVG = "http://www.w3.org/2000/svg";

/** The colours of the seats in the chart and the legend. */
export const SEAT_COLOURS = ["#d1495b", "#2e86ab", "#edae49", "#66a182", "#8d6a9f", "#e07a5f"];

/** One sentence about how the round ended. */
export function endingText(result, names, settings) {
  const e = result.ending;
  const taker = names[result.taker];
  if (e.kind === "call") {
    const caller = names[e.caller];
    if (!e.caught) return t("ending.called", { caller, total: result.hand[e.caller] });
    return t("ending.caught", {
      caller,
      total: result.hand[e.caller],
      taker,
      held: result.hand[result.taker],
      charged: result.took[e.caller],
    });
  }
  return t(settings ? "ending.nobodyCap" : "ending.nobody", { taker });
}

/**
 * Names in a list, in the page's language: "Asha", "Asha and Bina", "Asha, Bina and Chandra".
 * @param {string[]} names
 */
export function listText(names) {
  if (names.length < 2) return names.join("");
  return t("list.and", { first: names.slice(0, -1).join(", "), last: names[names.length - 1] });
}

/**
 * The match's heading: who won it, or who shared first place.
 * @param {object[]} standings the server's standings, best first
 * @param {string[]} names seat names
 * @param {number|null} me the viewer's seat
 */
export function winnerText(standings, names, me) {
  const first = (standings || []).filter((st) => st.place === 1).map((st) => st.seat);
  if (first.length === 0) return t("score.matchOver");
  if (first.length === 1) return first[0] === me ? t("score.youWin") : t("score.wins", { name: names[first[0]] });
  // You first, when you are among them.
  const seats = first.includes(me) ? [me, ...first.filter((s) => s !== me)] : first;
  return t("score.shareFirst", { names: listText(seats.map((s) => (s === me ? t("score.you") : names[s]))) });
}

/**
 * The room's ledger as a table: for each seat that has finished a match here, its name now,
 * the matches played, those won and its points across them.
 * @param {object} room the room (its `ledger`, `seats` and `settings`)
 * @returns {HTMLElement|null} the section, or null before the room's first match ends
 */
export function ledgerBox(room) {
  const rows = room.ledger || [];
  if (rows.length === 0) return null;
  const section = el("section", "ledger");
  const heading = el("h3", "", t("ledger.title"));
  const table = el("table", "ledger-table");
  const head = el("tr");
  head.append(el("th", "", t("ledger.seat")), el("th", "", t("ledger.played")), el("th", "", t("ledger.won")), el("th", "", t("ledger.points")));
  table.append(head);
  const cumulative = room.settings && room.settings.scoring === "cumulative";
  for (const row of rows) {
    const tr = el("tr", row.seat === room.your_seat ? "me" : "");
    tr.dataset.seat = String(row.seat);
    const seat = room.seats[row.seat];
    const name = seat && seat.kind !== "empty" ? seatName(seat) : row.name || t("seat.n", { n: row.seat + 1 });
    const th = el("th", "");
    th.append(nameCut(name));
    tr.append(th, el("td", "", String(row.played)), el("td", "", String(row.won)), el("td", "", cumulative ? String(row.points) : signed(row.points)));
    table.append(tr);
  }
  section.append(heading, table);
  return section;
}

/**
 * A small line chart of every seat's Total after each round, as inline SVG.
 * @param {object[]} results every finished round's result
 * @param {string[]} names seat names
 */
export function totalsChart(results, names) {
  const w = 320;
  const h = 140;
  const pad = { l: 34, r: 10, t: 10, b: 22 };
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  const n = names.length;
  const series = names.map((_, s) => [0, ...results.map((r) => r.total[s])]);
  const all = series.flat();
  let lo = Math.min(0, ...all);
  let hi = Math.max(0, ...all);
  if (hi === lo) { hi += 1; lo -= 1; }
  const rounds = results.length;
  const x = (i) => pad.l + (rounds === 0 ? 0 : (i / rounds) * (w - pad.l - pad.r));
  const y = (v) => pad.t + ((hi - v) / (hi - lo)) * (h - pad.t - pad.b);
  const line = (x1, y1, x2, y2, cls) => {
    const l = document.createElementNS(SVG, "line");
    l.setAttribute("x1", x1); l.setAttribute("y1", y1); l.setAttribute("x2", x2); l.setAttribute("y2", y2);
    l.setAttribute("class", cls);
    svg.append(l);
  };
  const text = (tx, ty, str, anchor) => {
    const label = document.createElementNS(SVG, "text");
    label.setAttribute("x", tx); label.setAttribute("y", ty);
    label.setAttribute("text-anchor", anchor);
    label.setAttribute("class", "axis-label");
    label.textContent = str;
    svg.append(label);
  };
  line(pad.l, y(0), w - pad.r, y(0), "zero");
  // Negative numbers with the minus sign, as the score rows write them.
  const axis = (v) => (v < 0 ? `\u2212${-v}` : String(v));
  text(pad.l - 4, y(hi) + 4, axis(hi), "end");
  text(pad.l - 4, y(lo) + 4, axis(lo), "end");
  if (lo < 0 && hi > 0) text(pad.l - 4, y(0) + 4, "0", "end");
  for (let i = 0; i <= rounds; i += 1) text(x(i), h - 6, i === 0 ? t("chart.start") : t("chart.round", { n: i }), "middle");
  for (let s = 0; s < n; s += 1) {
    const pts = series[s].map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    const p = document.createElementNS(SVG, "polyline");
    p.setAttribute("points", pts);
    p.setAttribute("fill", "none");
    p.setAttribute("stroke", SEAT_COLOURS[s % SEAT_COLOURS.length]);
    p.setAttribute("stroke-width", "2.5");
    p.setAttribute("stroke-linejoin", "round");
    svg.append(p);
    const last = series[s][series[s].length - 1];
    const dot = document.createElementNS(SVG, "circle");
    dot.setAttribute("cx", x(rounds)); dot.setAttribute("cy", y(last)); dot.setAttribute("r", "3.5");
    dot.setAttribute("fill", SEAT_COLOURS[s % SEAT_COLOURS.length]);
    svg.append(dot);
  }
  const title = document.createElementNS(SVG, "title");
  title.textContent = t("chart.title", { totals: names.map((name, s) => `${name} ${series[s][rounds]}`).join(", ") });
  svg.prepend(title);
  return svg;
}

/**
 * Fills the score dialog.
 * @param {HTMLElement} box the dialog's content element
 * @param {object} opts
 * @param {object} opts.result the round's result
 * @param {object[]} opts.results every finished round's result (for the chart)
 * @param {string[]} opts.names seat names
 * @param {number|null} opts.me the viewer's seat
 * @param {object} opts.settings the table's settings
 * @param {boolean} opts.matchOver whether the match has ended
 * @param {object[]} opts.standings the standings, best first (the server's `Standing`s)
 * @param {string[]|null} opts.seeds every round's shuffle seed, revealed after the match
 * @param {boolean} opts.waiting whether this seat has already said it is ready (or asked for a
 *   rematch)
 * @param {string} opts.waitingText who the table is waiting for
 * @param {() => void} opts.onNext Next round
 * @param {() => void} opts.onRematch Rematch
 * @param {() => void} [opts.onLeave] after the match: Leave (back to the home page)
 * @param {(() => void)|null} [opts.onToLobby] after the match, the host's Back to the lobby
 * @param {(() => void)|null} [opts.onChangeSettings] after the match, the host's Change settings
 * @param {string[]} [opts.rematchBy] the names of the others who asked for a rematch
 * @param {object|null} [opts.room] after a match: the room, whose ledger is shown
 * @param {object|null} [opts.fairness] after a match: checking its deals
 * @param {{kind: string, text: string}|null} opts.fairness.verdict the latest verdict of Verify
 *   (`checking`, `ok` or `bad`), or null
 * @param {string} opts.fairness.replayUrl the replay page of the match
 * @param {() => void} opts.fairness.onVerify Verify the deals
 * @param {() => void} opts.fairness.onDownload Download hand history
 */
export function renderScore(box, opts) {
  const { result, results, names, me, settings, matchOver } = opts;
  const cumulative = settings.scoring === "cumulative";
  box.replaceChildren();
  hideNameTip();
  // After the match, the heading says who won it before anything else.
  const title = el("h2", "", matchOver ? winnerText(opts.standings, names, me) : t("score.roundResult", { round: result.round }));
  title.id = "score-title";
  box.append(title);
  const ending = el("p", "ending", endingText(result, names, settings));
  box.append(ending);

  const wrap = el("div", "score-wrap");
  const table = el("table", "score-table");
  const head = el("tr");
  // The corner over the rows' names heads nothing: a plain cell.
  head.append(el("td", "", ""));
  names.forEach((name, s) => {
    const th = el("th", s === me ? "me" : "");
    const dot = el("span", "dot");
    dot.style.background = SEAT_COLOURS[s % SEAT_COLOURS.length];
    // A long name is cut with an ellipsis, whole on hover and on focus.
    th.append(dot, nameCut(name));
    if (result.ending.kind === "call" && result.ending.caller === s) {
      th.append(el("span", "tag", t(result.ending.caught ? "score.tag.caught" : "score.tag.called")));
    }
    if (result.taker === s) th.append(el("span", "tag win", t("score.tag.took")));
    if (result.eliminated.includes(s)) th.append(el("span", "tag", t("score.tag.out")));
    head.append(th);
  });
  table.append(head);
  const handsRow = el("tr", "hands-row");
  handsRow.append(el("th", "", t("score.row.cards")));
  result.hands.forEach((hand, s) => {
    const td = el("td");
    const cards = el("div", "mini-hand");
    for (const c of hand) cards.append(cardElement(c, { small: true }));
    if (!result.active[s]) cards.append(el("span", "out", t("score.tag.out")));
    // A hand emptied at the show (its last card thrown) says so, rather than an empty cell.
    else if (hand.length === 0) cards.append(el("span", "no-cards", t("score.noCards")));
    td.append(cards);
    handsRow.append(td);
  });
  table.append(handsRow);
  const row = (label, values, fmt, cls) => {
    const tr = el("tr", cls);
    tr.append(el("th", "", label));
    values.forEach((v, s) => {
      // A seat out of the match has no hand, but keeps its Total.
      const td = el("td", "", result.active[s] || cls === "row-total" ? fmt(v) : "\u2013");
      tr.append(td);
    });
    table.append(tr);
  };
  row(t("score.row.hand"), result.hand, String, "row-hand");
  row(t("score.row.took"), result.took, String, "row-took");
  row(t(cumulative ? "score.row.points" : "score.row.paid"), result.paid, cumulative ? String : signed, "row-paid");
  row(t("score.row.total"), result.total, cumulative ? String : signed, "row-total");
  if (result.reset.some(Boolean)) {
    const tr = el("tr", "row-reset");
    tr.append(el("th", "", t("score.row.reset")));
    result.reset.forEach((r) => tr.append(el("td", "", r ? "\u221250" : "")));
    table.append(tr);
  }
  wrap.append(table);
  box.append(wrap);

  if (results.length > 0) {
    const chartBox = el("figure", "chart-box");
    chartBox.append(totalsChart(results, names));
    const cap = el("figcaption", "legend");
    names.forEach((name, s) => {
      const item = el("span", "legend-item");
      const dot = el("span", "dot");
      dot.style.background = SEAT_COLOURS[s % SEAT_COLOURS.length];
      item.append(dot, document.createTextNode(name));
      cap.append(item);
    });
    chartBox.append(cap);
    box.append(chartBox);
  }

  const actions = el("div", "dialog-actions");
  if (matchOver) {
    const ol = el("ol", "standings");
    for (const st of opts.standings || []) {
      const li = el("li", st.seat === me ? "me" : "");
      li.append(el("span", "place", `${st.place}.`), document.createTextNode(` ${names[st.seat]} `),
        el("b", "", totalText(st.total, settings)));
      if (st.eliminated) li.append(el("span", "tag", t("score.tag.out")));
      ol.append(li);
    }
    // The standings, with the final Totals, straight under the heading; then how the last
    // round ended and its table.
    box.insertBefore(ol, ending);
    box.insertBefore(el("h3", "", t("score.standings")), ol);
    if (opts.room) {
      const ledger = ledgerBox(opts.room);
      if (ledger) box.append(ledger);
    }
    if (opts.seeds && opts.seeds.length > 0) {
      const details = el("details", "seeds");
      details.append(el("summary", "", t("score.seeds")));
      const list = el("ol");
      list.translate = false;
      for (const seed of opts.seeds) list.append(el("li", "", seed));
      details.append(list);
      box.append(details);
    }
    if (opts.fairness) box.append(fairnessBox(opts.fairness));
    if (opts.coach) box.append(coachBox(opts.coach));
    const rematch = el("button", "primary", t(opts.waiting ? "score.rematchAskedButton" : "score.rematch"));
    rematch.type = "button";
    rematch.id = "rematch";
    rematch.disabled = opts.waiting || me === null;
    rematch.addEventListener("click", opts.onRematch);
    actions.append(rematch);
    // Leave (home, the seat given up on this page); the host's Back to the lobby (the same
    // people) and Change settings (the lobby with the settings open).
    const more = [
      ["leave", "score.leave", opts.onLeave],
      ["to-lobby", "score.toLobby", opts.onToLobby],
      ["change-settings", "score.changeSettings", opts.onChangeSettings],
    ];
    for (const [id, key, onClick] of more) {
      if (!onClick) continue;
      const b = el("button", "", t(key));
      b.type = "button";
      b.id = id;
      b.addEventListener("click", onClick);
      actions.append(b);
    }
    // Who asked for a rematch (the others see it, by name).
    if (opts.rematchBy && opts.rematchBy.length > 0) {
      const asked = el("p", "note rematch-asked", t("score.rematchBy", { names: opts.rematchBy.join(", ") }));
      asked.id = "rematch-asked";
      actions.append(asked);
    }
  } else if (me !== null) {
    const next = el("button", "primary", t(opts.waiting ? "score.waitingOthers" : "score.next"));
    next.type = "button";
    next.id = "next-round";
    next.disabled = opts.waiting;
    next.addEventListener("click", opts.onNext);
    actions.append(next);
  }
  if (opts.waitingText) actions.append(el("p", "note", opts.waitingText));
  box.append(actions);
}

/**
 * After a match: check every deal against the revealed seed, download the hand history, replay.
 * @param {object} fairness see `renderScore`'s `opts.fairness`
 * @returns {HTMLElement}
 */
export function fairnessBox(fairness) {
  const section = el("section", "fairness");
  section.setAttribute("aria-label", t("fair.box"));
  section.append(el("p", "note", t("fair.note")));
  const buttons = el("div", "fair-actions");
  const verify = el("button", "", t("fair.verify"));
  verify.type = "button";
  verify.id = "verify";
  verify.disabled = Boolean(fairness.verdict && fairness.verdict.kind === "checking");
  verify.addEventListener("click", fairness.onVerify);
  const download = el("button", "", t("fair.download"));
  download.type = "button";
  download.id = "download-history";
  download.addEventListener("click", fairness.onDownload);
  const replay = el("a", "button-link", t("fair.replay"));
  replay.id = "replay-link";
  replay.href = fairness.replayUrl;
  replay.target = "_blank";
  replay.rel = "noopener";
  buttons.append(verify, download, replay);
  section.append(buttons);
  const verdict = el("p", "verdict");
  verdict.id = "verify-result";
  verdict.setAttribute("role", "status");
  if (fairness.verdict) {
    verdict.classList.add(fairness.verdict.kind);
    verdict.textContent = fairness.verdict.text;
  }
  section.append(verdict);
  return section;
}

/**
 * Shows the score dialog for the last finished round (or the match), or draws it again in place
 * when it is open, keeping the keyboard's place (a verdict, someone's Rematch).
 * @param {object} at what the dialog is about
 * @param {object} at.room the room (seats, stage, this page's seat)
 * @param {object} at.view the last view (its `results` and provisional `standings`)
 * @param {object|null} at.matchResult the `match_result`, once it came
 * @param {boolean} at.host whether this page is the room's host
 * @param {object|null} at.fairness see `renderScore`'s `opts.fairness`
 * @param {object|null} at.coach the coach's review of this page's seat: `{review, reviewing,
 *   onReview}` (`review` the `review` message once it came)
 * @param {object} actions `onNext`, `onRematch`, `onLeave`, and the host's `onToLobby` and
 *   `onChangeSettings`
 */
export function showScore({ room, view, matchResult, host, fairness, coach }, actions) {
  const results = matchResult ? matchResult.results : view.results;
  const result = results[results.length - 1];
  if (!result) return;
  const me = room.your_seat;
  const matchOver = room.stage === "match_over";
  const others = room.seats.filter((s) => s.seat !== me && s.kind === "human");
  const waitingFor = others.filter((s) => s.connected && !s.ready).map((s) => s.name);
  const mine = me !== null && room.seats[me] ? room.seats[me].ready : false;
  let waitingText = "";
  if (!matchOver && waitingFor.length > 0) waitingText = t("score.waitingFor", { names: waitingFor.join(", ") });
  if (matchOver && mine) waitingText = waitingFor.length ? t("score.rematchWaiting", { names: waitingFor.join(", ") }) : t("score.rematchAsked");
  const dialog = $("score-dialog");
  const box = $("score-box");
  const focused = dialog.contains(document.activeElement) && document.activeElement.id ? document.activeElement.id : null;
  renderScore(box, {
    result,
    results,
    names: room.seats.map(seatName),
    me,
    settings: view.settings,
    matchOver,
    standings: matchResult ? matchResult.standings : view.standings,
    seeds: matchResult ? matchResult.seeds : null,
    waiting: mine,
    waitingText,
    onNext: actions.onNext,
    onRematch: actions.onRematch,
    // After the match: the others who asked for a rematch (`ready` then means that), Leave, and
    // the host's Back to the lobby and Change settings.
    rematchBy: matchOver ? others.filter((s) => s.ready).map(seatName) : [],
    onLeave: actions.onLeave,
    onToLobby: host ? actions.onToLobby : null,
    onChangeSettings: host ? actions.onChangeSettings : null,
    fairness: matchOver ? fairness : null,
    room: matchOver ? room : null,
    coach: matchOver && me !== null && coach ? coach : null,
  });
  // The buttons stand below the results, which scroll on their own: always in view, never over
  // the results. The heading stands above them, as still: scrolling the results (to Verify's
  // verdict, say) never takes it out of view.
  const footer = box.querySelector(":scope > .dialog-actions");
  const old = dialog.querySelector(":scope > .dialog-actions");
  if (old) old.remove();
  if (footer) dialog.append(footer);
  const heading = box.querySelector(":scope > #score-title");
  const oldHeading = dialog.querySelector(":scope > #score-title");
  if (oldHeading) oldHeading.remove();
  if (heading) dialog.prepend(heading);
  if (focused && $(focused)) $(focused).focus({ preventScroll: true });
  if (!dialog.open) {
    dialog.showModal();
    const first = dialog.querySelector("#next-round, #rematch");
    if (first) first.focus({ preventScroll: true });
    dialog.scrollTop = 0;
    box.scrollTop = 0;
  }
}

/** Closes the score dialog, if it is open. */
export function closeScore() {
  const dialog = $("score-dialog");
  if (dialog.open) dialog.close();
}

/** At the page's start: Escape does not close the dialog, and N presses Next round. */
export function setupScore() {
  $("score-dialog").addEventListener("cancel", (event) => event.preventDefault());
  document.addEventListener("keydown", (event) => {
    if (event.key.toLowerCase() !== "n" || !$("score-dialog").open) return;
    const next = $("next-round");
    if (next && !next.disabled) {
      event.preventDefault();
      next.click();
    }
  });
}

/**
 * After the match, the coach's review of this page's own seat: Review my play, then (once the
 * server has looked the match over) where the points went.
 * @param {{review: object|null, reviewing: boolean, onReview: () => void}} coach
 */
function coachBox(coach) {
  if (coach.review) return reviewBox(coach.review.review);
  const box = el("div", "coach-ask");
  const ask = el("button", "", t("score.review"), { type: "button", id: "review-play" });
  ask.disabled = coach.reviewing;
  ask.addEventListener("click", coach.onReview);
  box.append(ask);
  if (coach.reviewing) {
    const status = el("p", "note", t("coach.reviewing"));
    status.setAttribute("role", "status");
    box.append(status);
  }
  return box;
}
