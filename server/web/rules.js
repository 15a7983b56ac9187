// How to play: its dialog, written for this product from the two rule texts, filled in with the
// table's own settings (limit, penalty, court values, runs, jokers, turn order, direction, what a
// reshuffle keeps, scoring), in the
// page's language, and ending with the table's own Nepali words (the glossary of the standard
// table's rule text), each in Devanagari with its romanisation and its meaning. These are words
// about the rules, for people; the page judges nothing by them.

import { courtText, limitText, roundsText, timerLength } from "./settings.js";
import { $, el, kbd } from "./dom.js";
import { t, tNodes } from "./i18n.js";

/**
 * The table's own words, from the glossary of the standard table's rule text: each word in
 * Devanagari and romanised, the same in both languages; what each means is the message
 * `words.KEY`.
 */
export const WORDS = [
  { key: "dhumbal", word: "धुम्बल", roman: "Dhumbal" },
  { key: "jhyap", word: "झ्याप", roman: "Jhyap" },
  { key: "call", word: "कल", roman: "Kal" },
  { key: "caught", word: "समातियो", roman: "Samatiyo" },
  { key: "light", word: "हलुका, भारी", roman: "Haluka, bhari" },
  { key: "thupro", word: "थुप्रो", roman: "Thupro" },
  { key: "phaleko", word: "फालेको पत्ती", roman: "Phaleko patti" },
  { key: "throw", word: "फाल्नु", roman: "Phalnu" },
  { key: "set", word: "जोडा", roman: "Joda" },
  { key: "run", word: "सिक्वेन्स", roman: "Sikwens" },
  { key: "penalty", word: "जरिवाना", roman: "Jariwana" },
  { key: "rows", word: "लागेको, लेनदेन", roman: "Lageko, lenden" },
];

/** The settings How to play was last opened with (drawn again at a switch of language). */
let shownFor = null;

/**
 * Opens How to play for a table's settings, at its top: focus on its title, not on Close at the
 * bottom.
 * @param {object} settings
 */
export function openRules(settings) {
  shownFor = settings;
  renderRules($("rules-box"), settings);
  const dialog = $("rules-dialog");
  if (!dialog.open) dialog.showModal();
  const title = $("rules-title");
  title.tabIndex = -1;
  title.focus({ preventScroll: true });
  dialog.scrollTop = 0;
  $("rules-box").scrollTop = 0;
}

/** Draws How to play again in the page's language, if it is open. */
export function relabelRules() {
  if ($("rules-dialog").open && shownFor) renderRules($("rules-box"), shownFor);
}

/** Makes the dialog's Close button close it (once, at the page's start). */
export function setupRules() {
  $("rules-close").addEventListener("click", () => $("rules-dialog").close());
}

/** A list item of strings and nodes. */
function item(parts) {
  const li = el("li");
  li.append(...(typeof parts === "string" ? [parts] : parts));
  return li;
}

function list(items) {
  const ul = el("ul");
  for (const i of items) ul.append(item(i));
  return ul;
}

/** The sentences of a paragraph, left out where null, joined with a space. */
function para(...sentences) {
  return el("p", "", sentences.filter((x) => x !== null && x !== "").join(" "));
}

/**
 * The table's words: each Nepali word in Devanagari (`lang="ne"`) and romanised
 * (`lang="ne-Latn"`), then what it means in the page's language.
 * @param {object} s the table's settings
 * @returns {HTMLElement}
 */
function words(s) {
  const dl = el("dl", "words");
  for (const w of WORDS) {
    const dt = el("dt");
    const word = el("span", "", w.word);
    word.lang = "ne";
    const roman = el("i", "", w.roman);
    roman.lang = "ne-Latn";
    dt.append(word, " (", roman, ")");
    dl.append(dt, el("dd", "", t(`words.${w.key}`, { penalty: s.penalty })));
  }
  return dl;
}

/**
 * Builds the rules for a table into `container`.
 * @param {HTMLElement} container
 * @param {object} s the table's settings
 */
export function renderRules(container, s) {
  container.replaceChildren();
  const throwFirst = s.turn_order === "throw_then_draw";
  const cumulative = s.scoring === "cumulative";
  const limit = s.call_limit;
  const court = courtText(s);
  const onTop = s.penalty_mode === "on_top";
  // Settings from before these two were settings: clockwise, and what such tables kept.
  const direction = s.direction || "clockwise";
  const keeps = s.reshuffle_keeps || (throwFirst ? "top_throw" : "top_card");

  const h = el("h2", "", t("rules.title"));
  h.id = "rules-title";
  container.append(h);
  container.append(el("p", "", t("rules.intro")));

  container.append(el("h3", "", t("rules.thisTable")));
  const table = el("table", "rules-settings");
  const wrongCall = t(onTop ? "rules.penaltyOnTop" : "rules.penaltyInstead", { penalty: s.penalty }) +
    (s.double_penalty ? t("rules.penaltyDoubled", { amount: s.double_penalty.amount, margin: s.double_penalty.margin }) : "");
  const rows = [
    [t("rules.row.players"), `${s.players}`],
    [t("rules.row.cards"), t("rules.cardsEach", { count: s.cards })],
    [t("rules.row.match"), roundsText(s)],
    [t("rules.row.calling"), limit === null ? t("rules.callAnyTime") : t("rules.callWith", { limit })],
    [t("rules.row.penalty"), wrongCall],
    [t("rules.row.court"), court],
    [t("rules.row.runs"), t(s.runs ? "rules.runsOn" : "rules.runsOff")],
    [t("rules.row.jokers"), t(s.jokers ? (s.jokers_in_runs ? "rules.jokersInRuns" : "rules.jokersInSets") : "option.off")],
    [t("rules.row.turn"), t(throwFirst ? "option.turnOrder.throw_then_draw" : "option.turnOrder.draw_then_throw")],
    [t("rules.row.direction"), t(`option.direction.${direction}`)],
    [t("rules.row.reshuffle"), t(`option.reshuffle.${keeps}`)],
    [t("rules.row.scoring"), cumulative
      ? t("rules.cumulative") + (s.elimination !== null ? t("rules.outAt", { out: s.elimination }) : "")
      : t("rules.settlement")],
    [t("rules.row.bots"), t(`difficulty.${s.difficulty}`)],
    [t("rules.row.turnTimer"), s.turn_timer ? t("rules.turnTimer", { time: timerLength(s.turn_timer) }) : t("rules.noTurnTimer")],
    [t("rules.row.hints"), t(s.hints ? "rules.hints" : "rules.noHints")],
  ];
  for (const [k, v] of rows) {
    const tr = el("tr");
    tr.append(el("th", "", k), el("td", "", v));
    table.append(tr);
  }
  container.append(table);

  container.append(el("h3", "", t("rules.worth")));
  container.append(para(
    t("rules.worth.text", { court: court.toLowerCase() }),
    s.jokers ? t("rules.worth.joker") : null,
    t("rules.worth.total")));

  container.append(el("h3", "", t("rules.deal")));
  const deal = direction === "counter_clockwise" ? "rules.deal.textCounter" : "rules.deal.text";
  container.append(el("p", "", t(deal, { count: s.cards })));

  container.append(el("h3", "", t("rules.turn")));
  const steps = [t(`rules.turn.direction.${direction}`)];
  steps.push(limit === null ? t("rules.turn.callAny") : t("rules.turn.callLimit", { limit }));
  if (throwFirst) {
    steps.push(t("rules.turn.throwFirst"));
    steps.push(t("rules.turn.thenTake", { pick: t(`rules.pick.${s.pickup}`) }));
  } else {
    steps.push(t("rules.turn.take"));
    steps.push(t("rules.turn.thenThrow"));
    steps.push(t("rules.turn.barred"));
  }
  // What the engine keeps at a reshuffle: the top card (at a throw-then-draw table it is then a
  // single card to pick up), or the whole top throw.
  if (keeps === "top_throw") steps.push(t("rules.turn.reshuffleThrow"));
  else steps.push(t(throwFirst ? "rules.turn.reshuffleSingle" : "rules.turn.reshuffle"));
  container.append(list(steps));

  container.append(el("h3", "", t("rules.groups")));
  const groups = [t("rules.groups.one"), t("rules.groups.set")];
  if (s.runs) groups.push(t("rules.groups.run"));
  if (s.jokers) groups.push(t(s.jokers_in_runs ? "rules.groups.jokerRuns" : "rules.groups.joker"));
  groups.push(t("rules.groups.top"));
  container.append(list(groups));

  container.append(el("h3", "", t("rules.show")));
  container.append(para(
    t("rules.show.call"),
    t(onTop ? "rules.show.caughtOnTop" : "rules.show.caughtInstead", { penalty: s.penalty }),
    limit !== null ? t("rules.show.equalLimit", { limit }) : t("rules.show.equal")));
  container.append(el("p", "", t("rules.show.nobody")));

  container.append(el("h3", "", t("rules.score")));
  if (cumulative) {
    container.append(para(
      t("rules.score.cumulative"),
      s.elimination !== null ? t("rules.score.out", { out: s.elimination }) : null,
      s.score_reset ? t("rules.score.reset") : null,
      t("rules.score.cumulativeEnd", { rounds: roundsText(s) })));
  } else {
    container.append(el("p", "", t("rules.score.settlement", { rounds: roundsText(s) })));
    container.append(el("p", "", t("rules.score.example")));
  }

  container.append(el("h3", "", t("rules.screen")));
  container.append(list([
    t("rules.screen.tap"),
    t("rules.screen.order"),
    t("rules.screen.drag"),
    t("rules.screen.sort"),
    t("rules.screen.holding", { limit: limitText(s) }),
    tNodes("rules.screen.keys", {
      digits: kbd("1-9"), t: kbd("T"), s: kbd("S"), p: kbd("P"), c: kbd("C"), o: kbd("O"), n: kbd("N"),
    }),
  ]));

  container.append(el("h3", "", t("rules.tips")));
  container.append(list([
    t("rules.tips.count"),
    t("rules.tips.pair"),
    t("rules.tips.under"),
    t("rules.tips.pile"),
  ]));

  const wordsTitle = el("h3", "", t("rules.words"));
  wordsTitle.id = "rules-words";
  container.append(wordsTitle);
  container.append(el("p", "", t("rules.words.intro")));
  container.append(words(s));
}
