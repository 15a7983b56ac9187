// Painting the table from its state: the header, the stock and the pile, the prompt, this seat's
// status, hand and actions, the log, and the host's list of the people removed. What may be done
// comes from the view (`can_draw`, `can_throw`, `takeable`, `next_takeable`, `can_call`); the
// painting only shows it. The seats are table-seats.js's; what the controls do, table-input.js's.

import { cardBack, cardElement, cardElementName, cardLabel, classify, setCardName } from "./cards.js";
import { limitText } from "./settings.js";
import { el, kbd, totalText } from "./dom.js";
import { label, language, t, tNodes } from "./i18n.js";
import { describeEvent, noticeText } from "./log.js";
import { alertOn } from "./alert.js";
import { paintWatchers } from "./watchers.js";
import { roundOver } from "./table-state.js";
import { hintWords } from "./coach.js";

/** A `<button type="button">` with a class, an id and a text that follows the language. */
const labelled = (cls, id, key) => label(el("button", cls, undefined, { type: "button", id }), key);

/**
 * Builds the table's elements into `root` (its section), once.
 * @param {HTMLElement} root
 * @returns {object} the elements, by name
 */
export function buildTable(root) {
  root.replaceChildren();
  const p = { root };
  // One compact line above the seats: the round and the limit, How to play and the table's menu.
  // The rest (the throws, the direction, the deal commitment, the turn alert, the log) is in
  // the menu, each with a sentence saying what it is (a phone cannot hover a tooltip).
  const header = el("div", "table-head");
  p.roundInfo = el("span", "round-info", undefined, { id: "round-info" });
  p.rulesButton = label(labelled("rules-mark", "open-rules", "table.rulesMark"), "rules.open", "aria-label");
  p.menuButton = labelled("menu-open", "table-menu-open", "table.menu");
  p.menuButton.setAttribute("aria-haspopup", "dialog");
  p.menuButton.setAttribute("aria-controls", "table-menu");
  header.append(p.roundInfo, p.rulesButton, p.menuButton);
  // The table's heading, for a screen reader (the focus comes to it on arriving).
  p.heading = label(el("h1", "sr-only", undefined, { id: "table-title", tabIndex: -1 }), "table.heading");
  buildMenu(p);
  p.seats = el("div", "seats", undefined, { id: "seats" });
  const middle = el("div", "middle");
  const stockBox = el("div", "stock-box");
  p.stock = cardBack({ tag: "button" });
  p.stock.id = "stock";
  p.stock.classList.add("stock");
  // Off while this seat may not draw, but still a place for the keyboard to wait (the focus
  // comes here after a throw), so not `disabled`.
  p.stock.setAttribute("aria-keyshortcuts", "S");
  p.stockLabel = el("span", "pile-label");
  stockBox.append(p.stock, p.stockLabel);
  p.pile = el("div", "pile-box", undefined, { id: "pile" });
  middle.append(stockBox, p.pile);
  p.middle = middle;
  p.prompt = el("p", "prompt", undefined, { id: "prompt" });
  // The coach's line, at a table that allows hints: Hint on this seat's turn, and what it said
  // (not a live region: the session says the hint once, through the page's announcer).
  p.coach = el("div", "coach-line", undefined, { id: "coach-line", hidden: true });
  p.hintButton = el("button", "hint", t("table.hint"), { type: "button", id: "hint" });
  p.hintButton.setAttribute("aria-keyshortcuts", "H");
  p.hintText = el("p", "hint-text", undefined, { id: "hint-text" });
  p.coach.append(p.hintButton, p.hintText);
  // Not a live region: announce.js says each move and this seat's turn once.
  p.log = label(el("ol", "log", undefined, { id: "log", tabIndex: 0 }), "table.log", "aria-label");

  p.mine = el("div", "mine");
  p.status = el("p", "status", undefined, { id: "status" });
  p.hand = label(el("div", "hand", undefined, { id: "hand" }), "table.hand", "aria-label");
  p.hand.setAttribute("role", "group");
  p.actions = el("div", "actions");
  p.sortButton = labelled("", "sort", "table.sort");
  p.callButton = el("button", "call", t("table.call"), { type: "button", id: "call" });
  p.throwButton = el("button", "primary", t("table.throw"), { type: "button", id: "throw" });
  p.sortButton.setAttribute("aria-keyshortcuts", "O");
  p.callButton.setAttribute("aria-keyshortcuts", "C");
  p.throwButton.setAttribute("aria-keyshortcuts", "T");
  // The table's shortcut keys, said on the table itself (and read with the hand).
  p.keys = el("p", "table-keys", undefined, { id: "table-keys" });
  p.hand.setAttribute("aria-describedby", "table-keys");
  // Call, Sort hand and Throw each keep one place (a grid of three): Call's stays empty while it
  // is hidden, so Throw never moves, and Sort hand stands between them. On the limit exactly a
  // line under Call warns that a tie catches a caller.
  const callSlot = el("div", "call-slot");
  p.callHint = el("small", "call-hint", undefined, { id: "call-hint", hidden: true });
  callSlot.append(p.callButton, p.callHint);
  p.actions.append(callSlot, p.sortButton, p.throwButton);
  p.mine.append(p.status, p.hand, p.actions);
  // The host's list of the people removed during the match, each with Let back.
  p.removedList = label(el("ul", "table-removed", undefined, { id: "table-removed", hidden: true }), "lobby.removedList", "aria-label");
  // Who watches: everyone sees it; the host may remove a watcher or turn watching off.
  p.watchers = el("div", "watchers table-watchers", undefined, { id: "table-watchers" });
  root.append(p.heading, header, p.seats, middle, p.prompt, p.coach, p.mine, p.log, p.keys, p.removedList, p.watchers, p.menu);
  paintAlert(p);
  return p;
}

/** A titled part of the table's menu: its heading, what it shows and a sentence saying what it is. */
function menuItem(key, shown, note) {
  const item = el("section", "menu-item");
  item.append(label(el("h3", ""), key), shown);
  if (note) item.append(note);
  return item;
}

/**
 * The table's menu, a dialog: the throws this round, which way play goes, the deal commitment
 * and the turn alert, each explained; How to play and the round's log; Close at its foot.
 */
function buildMenu(p) {
  p.menu = el("dialog", "table-menu", undefined, { id: "table-menu" });
  p.menu.setAttribute("aria-labelledby", "table-menu-title");
  const body = el("div", "table-menu-body");
  body.append(label(el("h2", "", undefined, { id: "table-menu-title" }), "table.menuTitle"));
  p.throwCount = el("p", "menu-value", undefined, { id: "throw-count" });
  p.throwNote = el("p", "note", undefined, { id: "throw-note" });
  // Which way play goes round the table (the seats are drawn in that order).
  p.direction = el("p", "menu-value play-direction", undefined, { id: "play-direction" });
  p.directionNote = el("p", "note");
  // The server's commitment to the match's secret seed, shown from the first deal: after the
  // match the seed is revealed and the page checks every deal against it (fair.js).
  p.commitment = el("p", "menu-value commitment", undefined, { id: "commitment", tabIndex: 0, hidden: true });
  p.commitmentNote = el("p", "note");
  p.commitmentItem = menuItem("table.menuCommitment", p.commitment, p.commitmentNote);
  // The turn alert: a tone and a vibration when this seat's turn comes (alert.js).
  p.alertButton = el("button", "turn-alert", undefined, { type: "button", id: "turn-alert" });
  p.alertNote = label(el("p", "note"), "alert.title");
  const more = el("div", "menu-more");
  p.menuRules = labelled("", "table-menu-rules", "rules.open");
  p.menuLog = labelled("", "table-menu-log", "table.menuLog");
  more.append(p.menuRules, p.menuLog);
  body.append(
    menuItem("table.menuThrows", p.throwCount, p.throwNote),
    menuItem("table.menuDirection", p.direction, p.directionNote),
    p.commitmentItem,
    menuItem("table.menuAlert", p.alertButton, p.alertNote),
    more,
  );
  const foot = el("div", "dialog-actions");
  p.menuClose = labelled("primary", "table-menu-close", "dialog.close");
  foot.append(p.menuClose);
  p.menu.append(body, foot);
}

/** The host's tag: a crown, and the word for a screen reader (and on hover). */
export function hostTag() {
  const tag = el("span", "host-tag", undefined, { title: t("seat.hostTitle") });
  const crown = el("span", "", "\u265b");
  crown.setAttribute("aria-hidden", "true");
  tag.append(crown, el("span", "sr-only", t("seat.hostTag")));
  return tag;
}

/** The turn alert's button: on or off. */
export function paintAlert(p) {
  const on = alertOn();
  p.alertButton.textContent = t(on ? "alert.onText" : "alert.offText");
  p.alertButton.title = t("alert.title");
  p.alertButton.setAttribute("aria-pressed", String(on));
}

/** The server's commitment to the match's seed, shortened (whole in its title). */
export function paintCommitment(p, room) {
  const value = room && room.fairness ? room.fairness.commitment : null;
  const { commitment } = p;
  commitment.hidden = !value;
  p.commitmentItem.hidden = !value;
  if (!value) return;
  commitment.dataset.commitment = value;
  const hex = el("span", "", `${value.slice(0, 4)}\u2026${value.slice(-4)}`, { translate: false });
  commitment.replaceChildren(...tNodes("table.commitment", { hex }));
  commitment.title = t("table.commitmentTitle", { hex: value });
  commitment.setAttribute("aria-label", commitment.title);
  p.commitmentNote.textContent = t("table.menuCommitmentNote");
}

/**
 * Paints everything but the seats from the state.
 * @param {object} p the table's elements
 * @param {import("./table-state.js").TableState} state
 */
export function paintTable(p, state) {
  const { view } = state;
  // State on the root, for styling and for anyone (or any test) reading the page.
  p.root.dataset.phase = view.phase;
  p.root.dataset.round = String(view.round);
  p.root.dataset.myTurn = String(state.myTurn());
  p.root.dataset.mayDraw = String(view.can_draw);
  p.root.dataset.mayThrow = String(view.can_throw);
  p.mine.dataset.seat = view.seat === null ? "" : String(view.seat);
  paintPile(p, view);
  paintHand(p, state);
  paintActions(p, state);
  paintPrompt(p, state);
  paintHint(p, state);
  paintLog(p, state);
  paintRemoved(p, state);
  paintKeys(p, view);
  if (state.room) {
    const host = view.seat !== null && state.room.host === view.seat;
    paintWatchers(p.watchers, state.room, host);
  }
}

/**
 * The coach's line: shown on this seat's turn at a table that allows hints, with what the coach
 * said for this very view (a hint for an earlier view is gone), or that it is thinking.
 */
function paintHint(p, state) {
  const { view, hint } = state;
  const covered = state.room && view.seat !== null && state.room.seats[view.seat] && state.room.seats[view.seat].stand_in;
  const on = Boolean(view.settings.hints) && state.myTurn() && !covered;
  p.coach.hidden = !on;
  const current = hint && hint.view === view ? hint : null;
  p.hintButton.textContent = t("table.hint");
  p.hintButton.disabled = Boolean(current);
  p.hintText.textContent = !current ? "" : current.advice ? hintWords(current.advice) : t("coach.asking");
  p.hintText.hidden = !current;
}

/**
 * The previous throw's label at a throw-then-draw table: on this seat's pick-up, what of it may
 * be taken (the view's `takeable`), or that none of it may.
 */
function previousThrowLabel(view) {
  if (!view.can_draw) return t("pile.previous");
  const cards = view.takeable.map(cardLabel);
  if (cards.length === 0) return t("pile.takeNone");
  if (cards.length === 1) return t("pile.takeThis", { card: cards[0] });
  return t("pile.takeOneOf", { cards: cards.join(" ") });
}

/** The pile's label at a draw-then-throw table: its size, and on this seat's draw what may be taken. */
function pileLabel(view) {
  const count = view.pile_size;
  if (!view.can_draw) return t("pile.count", { count });
  if (view.takeable.length === 0) return t("pile.countNone", { count });
  return t("pile.countTake", { count, card: view.takeable.map(cardLabel).join(" ") });
}

/**
 * A throw on the pile, fanned, with its label: the cards this seat may take now are buttons
 * (`takeable`), and those another may take next are marked (`pickable`).
 */
function throwGroup(view, cards, text, takeable, next) {
  const g = el("div", "throw-group");
  const row = el("div", "fan");
  cards.forEach((c, i) => {
    const take = takeable.includes(c);
    const cardEl = cardElement(c, { tag: take && view.can_draw ? "button" : "div" });
    if (take) {
      cardEl.classList.add(view.can_draw ? "takeable" : "pickable");
      if (view.can_draw) setCardName(cardEl, t("pile.take", { card: cardElementName(cardEl) }));
    } else if (next.includes(c)) {
      cardEl.classList.add("pickable");
    }
    if (i === cards.length - 1) cardEl.classList.add("top");
    row.append(cardEl);
  });
  g.append(row, el("span", "pile-label", text));
  return g;
}

function paintPile(p, view) {
  const { pile, stock } = p;
  pile.replaceChildren();
  const canDraw = view.can_draw;
  if (view.settings.turn_order === "throw_then_draw") {
    if (view.phase === "draw" && view.previous_throw.length > 0) {
      pile.append(throwGroup(view, view.previous_throw, previousThrowLabel(view), view.takeable, []));
    }
    if (view.top_throw.length > 0) {
      const text = t(view.phase === "draw" ? "pile.justThrown" : "pile.lastThrow");
      pile.append(throwGroup(view, view.top_throw, text, [], view.next_takeable || []));
    }
  } else if (view.top_throw.length > 0) {
    pile.append(throwGroup(view, view.top_throw, pileLabel(view), view.takeable, []));
  } else if (view.pile_top) {
    pile.append(throwGroup(view, [view.pile_top], pileLabel(view), view.takeable, []));
  }
  if (pile.childElementCount === 0) {
    const g = el("div", "throw-group");
    g.append(el("div", "card empty-slot"), el("span", "pile-label", t("pile.empty")));
    pile.append(g);
  }
  stock.setAttribute("aria-disabled", String(!canDraw));
  stock.classList.toggle("takeable", canDraw);
  stock.setAttribute("aria-label", t(canDraw ? "stock.ariaDraw" : "stock.aria", { count: view.stock_size }));
  p.stockLabel.textContent = t("stock.count", { count: view.stock_size });
}

function paintHand(p, state) {
  const { hand } = p;
  const { view, order, marked } = state;
  // Keep the keyboard's place: the card that had focus has it again after the redraw.
  const focused = hand.contains(document.activeElement) ? document.activeElement.dataset.card : null;
  hand.replaceChildren();
  hand.classList.toggle("many", order.length > 6);
  hand.style.setProperty("--n", String(Math.max(5, order.length)));
  order.forEach((c, i) => {
    const cardEl = cardElement(c, { tag: "button" });
    const isMarked = marked.includes(c);
    cardEl.classList.toggle("marked", isMarked);
    cardEl.setAttribute("aria-pressed", String(isMarked));
    cardEl.title = `${i + 1}`;
    if (c === view.barred) {
      cardEl.classList.add("barred");
      // Said in the card's name; shown under it.
      const tag = el("span", "barred-tag", t("hand.justTaken"));
      tag.setAttribute("aria-hidden", "true");
      cardEl.append(tag);
      setCardName(cardEl, t("hand.barredAria", { card: cardElementName(cardEl) }));
    }
    hand.append(cardEl);
    if (c === focused) cardEl.focus({ preventScroll: true });
  });
  if (view.seat === null) hand.append(el("p", "note", t("hand.watching")));
}

function paintActions(p, state) {
  const { throwButton, callButton, callHint, status } = p;
  const { view, marked } = state;
  const s = view.settings;
  const value = state.markedValue();
  const valid = state.markedValid();
  throwButton.textContent = marked.length > 0 ? t("table.throwValue", { value }) : t("table.throw");
  throwButton.disabled = !state.mayThrowMarked();
  throwButton.title = marked.length > 0 && !valid ? t(marked.includes(view.barred) ? "table.throwBarred" : "table.throwBad") : "";
  callButton.hidden = !view.can_call;
  callButton.textContent = t("table.callOn", { total: view.hand_total });
  const tie = view.can_call && s.call_limit !== null && view.hand_total === s.call_limit;
  callHint.hidden = !tie;
  callHint.textContent = tie ? t("table.callTie") : "";
  callButton.classList.toggle("tie", tie);
  if (tie) callButton.setAttribute("aria-describedby", "call-hint");
  else callButton.removeAttribute("aria-describedby");
  p.sortButton.disabled = state.order.length < 2;
  const holding = el("b", "", t("status.holding", { total: view.hand_total }));
  const limit = el("span", "limit", limitText(s));
  const mineTotal = el("span", "limit", t("seat.total", { total: totalText(view.totals[view.seat], s) }));
  status.replaceChildren(holding, limit, mineTotal);
  if (state.room && view.seat !== null && state.room.host === view.seat) status.append(hostTag());
  if (marked.length > 0) {
    const kind = classify(marked, s);
    status.append(el("span", `marked-note${kind ? "" : " bad"}`,
      kind ? t("status.marked", { count: marked.length, value }) : t("status.bad")));
  } else {
    // The line keeps its place with nothing marked, so that marking a card moves nothing.
    status.append(el("span", "marked-note empty"));
  }
  if (view.seat === null) status.replaceChildren(el("b", "", t("status.watching")));
  p.actions.hidden = view.seat === null;
}

function paintPrompt(p, state) {
  const { view, room } = state;
  const s = view.settings;
  const mine = view.seat !== null && view.turn === view.seat;
  let text;
  if (roundOver(view)) {
    text = t("prompt.roundOver");
  } else if (mine && room && room.seats[view.seat] && room.seats[view.seat].stand_in) {
    text = t("prompt.botPlays");
  } else if (mine) {
    if (view.phase === "start" && s.turn_order === "draw_then_throw") {
      text = t(view.can_call ? "prompt.callOrDraw" : "prompt.draw");
    } else if (view.phase === "start") {
      text = t(view.can_call ? "prompt.callOrThrowFirst" : "prompt.throwFirst");
    } else if (view.phase === "throw") {
      text = t("prompt.throw");
    } else {
      text = t(view.takeable.length > 0 ? "prompt.pickUp" : "prompt.pickUpStock");
    }
  } else {
    text = t("prompt.playing", { name: state.seatName(view.turn) });
  }
  p.prompt.textContent = text;
  p.prompt.classList.toggle("yours", state.myTurn());
  const round = s.rounds === "until_one_remains"
    ? t("table.round", { round: view.round })
    : t("table.roundOf", { round: view.round, rounds: s.rounds.fixed });
  p.roundInfo.textContent = [round, limitText(s)].join(" \u00b7 ");
  p.throwCount.textContent = t("table.throws", { throws: view.throws, cap: view.throw_cap });
  p.throwNote.textContent = t("table.menuThrowsNote", { cap: view.throw_cap });
  const direction = s.direction || "clockwise";
  p.direction.textContent = t(`table.direction.${direction}`);
  p.direction.title = t(`rules.turn.direction.${direction}`);
  p.directionNote.textContent = p.direction.title;
}

/**
 * The whole round's log: its events, a stand-in's naming the bot, the notices and what this page
 * summarised after a wake (`p.awayNotes`), each in its place. It scrolls; the newest line shows
 * unless the player scrolled up to read back, and then it stays where they are.
 */
function paintLog(p, state) {
  const { view, names } = state;
  const log = p.log;
  const atBottom = log.childElementCount === 0 || log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  const keep = log.scrollTop;
  log.replaceChildren();
  const marks = new Set(view.standIn || []);
  const notes = [
    ...(view.notes || []).map((n) => ({ at: n.at, text: noticeText(n.notice, view.seat) })),
    ...(p.awayNotes || []).filter((n) => n.round === view.round).map((n) => ({ at: n.at, text: n.text })),
  ].sort((a, b) => a.at - b.at);
  const lines = [];
  let next = 0;
  const notesUpTo = (at) => {
    for (; next < notes.length && notes[next].at <= at; next += 1) {
      if (notes[next].text) lines.push({ text: notes[next].text, cls: "log-notice" });
    }
  };
  view.log.forEach((e, i) => {
    notesUpTo(i);
    const text = describeEvent(e, names, view.seat, marks.has(i));
    if (text) lines.push({ text, cls: marks.has(i) ? "log-stand-in" : "" });
  });
  notesUpTo(Infinity);
  for (const line of lines) log.append(el("li", line.cls, line.text));
  log.scrollTop = atBottom ? log.scrollHeight : keep;
}

/** The shortcut keys under the log, in the page's language (not for a watcher, who has none). */
function paintKeys(p, view) {
  p.keys.hidden = view.seat === null;
  const key = language();
  if (p.keys.dataset.shown === key) return;
  p.keys.dataset.shown = key;
  p.keys.replaceChildren(...tNodes("rules.screen.keys", {
    digits: kbd("1-9"), t: kbd("T"), s: kbd("S"), p: kbd("P"), c: kbd("C"), o: kbd("O"), n: kbd("N"),
  }));
}

/** The host's list of the people removed, each with Let back (`data-removed`: its place). */
function paintRemoved(p, state) {
  const { view, room } = state;
  const host = room && view.seat !== null && room.host === view.seat && room.stage !== "lobby";
  const list = host ? room.removed || [] : [];
  const key = JSON.stringify([list, t("lobby.letBack")]);
  if (key === p.removedShown) return;
  p.removedShown = key;
  p.removedList.replaceChildren();
  list.forEach((who, i) => {
    const li = el("li", "table-removed-item");
    const back = el("button", "", t("lobby.letBack"), { type: "button" });
    back.dataset.removed = String(i);
    back.setAttribute("aria-label", `${t("lobby.letBack")}: ${who}`);
    li.append(el("span", "", t("lobby.removed", { name: who })), back);
    p.removedList.append(li);
  });
  p.removedList.hidden = list.length === 0;
}
