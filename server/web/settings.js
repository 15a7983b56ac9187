// Table settings: the form (a one-line explanation per setting), the presets and turn timers the
// server offers (`GET /api/presets`), the server's judgement of a form (`POST /api/settings/check`)
// and plain-words summaries, in the page's language (i18n.js). No rule of the game is written
// here: what a table may be is the server's to say.

import { el } from "./dom.js";
import { errorText } from "./errors.js";
import { t } from "./i18n.js";

/**
 * What the server offers: its named presets (`standard`, `household`, `yaniv`, each a whole
 * settings value) and the turn timers a table may have, in seconds.
 * @typedef {{presets: Object<string, object>, turnTimers: number[]}} Catalogue
 */

let catalogue = null;

/**
 * The presets the server wrote into the page (its `<script id="presets" type="application/json">`
 * block, the same JSON as `GET /api/presets`), or null where it wrote none.
 * @returns {object|null}
 */
function presetsInPage() {
  try {
    const body = JSON.parse(document.getElementById("presets")?.textContent || "null");
    return body && body.presets && body.turn_timers ? body : null;
  } catch {
    return null;
  }
}

/**
 * The server's presets and turn timers: from the page itself, else asked for once a page.
 * @returns {Promise<Catalogue>} rejected when the server cannot be reached
 */
export function loadCatalogue() {
  if (!catalogue) {
    const written = presetsInPage();
    catalogue = (written
      ? Promise.resolve(written)
      : fetch("/api/presets").then((res) => (res.ok ? res.json() : Promise.reject(new Error(`presets: ${res.status}`)))))
      .then((body) => ({ presets: body.presets, turnTimers: body.turn_timers }));
    catalogue.catch(() => { catalogue = null; });
  }
  return catalogue;
}

/**
 * The server's judgement of a table's settings: whether it would create a room with them (the
 * same body as `POST /api/rooms`, the same refusal).
 * @param {object} settings
 * @returns {Promise<{code: string, message: string}|null|undefined>} null when they are playable,
 *   the refusal when not; undefined when the server could not be asked
 */
export async function checkSettings(settings) {
  try {
    const res = await fetch("/api/settings/check", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ settings }),
    });
    if (res.ok) return null;
    const body = await res.json();
    // Settings the server cannot even read (a number out of any range, a word where a number
    // goes) are the form's problem, not a broken page's.
    if (body && body.code === "bad_message") return { code: "settings_unreadable", message: body.message };
    return body && body.code ? body : undefined;
  } catch {
    return undefined;
  }
}

/** One line about a preset (`standard`, `household`, `yaniv`). */
export function describePreset(preset) {
  return t(`preset.${preset}.note`);
}

/** A deep copy of a settings value. */
export function copySettings(s) {
  return JSON.parse(JSON.stringify(s));
}

/** The settings that are the table's own, not the rules': a preset keeps them as they are. */
const OWN = ["turn_timer", "hints"];

/**
 * The preset these settings equal in every rule, or null. The turn timer and the hints are left
 * out: they set the pace and the help, not the game, so a preset with a timer is still that
 * preset.
 * @param {object} s
 * @param {Object<string, object>} presets the server's
 */
export function presetOf(s, presets) {
  for (const [name, preset] of Object.entries(presets)) {
    const keys = Object.keys(preset).filter((k) => !OWN.includes(k));
    const extra = Object.keys(s).filter((k) => !OWN.includes(k) && !(k in preset));
    if (extra.length === 0 && keys.every((k) => JSON.stringify(s[k]) === JSON.stringify(preset[k]))) return name;
  }
  return null;
}

/** A turn timer's length in words (`15 s`, `2 min`). */
export function timerLength(seconds) {
  return seconds % 60 === 0 && seconds >= 120
    ? t("timer.minutes", { count: seconds / 60 })
    : t("timer.seconds", { count: seconds });
}

/** The table's turn timer in words: how long a turn has, or that there is no limit. */
export function timerText(s) {
  return s.turn_timer ? t("summary.turnTimer", { time: timerLength(s.turn_timer) }) : t("summary.noTurnTimer");
}

/** How many rounds, in words. */
export function roundsText(s) {
  if (s.rounds === "until_one_remains") return t("summary.untilOneRemains");
  return t("summary.rounds", { count: s.rounds.fixed });
}

/** The call limit, in words. */
export function limitText(s) {
  return s.call_limit === null ? t("summary.noLimit") : t("summary.limit", { limit: s.call_limit });
}

/** What the court cards are worth, in words. */
export function courtText(s) {
  return t(`court.${s.court}`);
}

/** A short summary of a table, one item per setting that matters (the direction only when it is
 * counter-clockwise). */
export function summary(s) {
  const penalty = `${s.penalty_mode === "on_top" ? "+" : ""}${s.penalty}`;
  const items = [
    t("summary.players", { count: s.players }),
    t("summary.cards", { count: s.cards }),
    roundsText(s),
    limitText(s),
    s.double_penalty
      ? t("summary.wrongCallDoubled", { penalty, amount: s.double_penalty.amount, margin: s.double_penalty.margin })
      : t("summary.wrongCall", { penalty }),
    courtText(s),
    t(s.runs ? "summary.runs" : "summary.noRuns"),
    t(s.jokers ? (s.jokers_in_runs ? "summary.jokersInRuns" : "summary.jokers") : "summary.noJokers"),
    t(s.turn_order === "throw_then_draw" ? "summary.throwThenDraw" : "summary.drawThenThrow"),
    s.direction === "counter_clockwise" ? t("summary.counterClockwise") : null,
    s.scoring === "cumulative"
      ? (s.elimination !== null ? t("summary.cumulativeOut", { out: s.elimination }) : t("summary.cumulative"))
      : t("summary.settlement"),
    t("summary.bots", { level: t(`difficulty.${s.difficulty}`) }),
    timerText(s),
    s.hints ? t("summary.hints") : null,
  ];
  return items.filter((item) => item !== null);
}

// ----- The form -----

function field(id, label, note, control) {
  const row = el("div", "field");
  const lab = el("label", "", label, { htmlFor: id });
  const help = el("p", "note", note, { id: `${id}-note` });
  control.id = id;
  control.setAttribute("aria-describedby", help.id);
  row.append(lab, control, help);
  return row;
}

function select(options) {
  const box = el("select");
  for (const [value, text] of options) box.append(el("option", "", text, { value }));
  return box;
}

function number(min, max) {
  return el("input", "", undefined, { type: "number", inputMode: "numeric", min: String(min), max: String(max), step: "1" });
}

const OFF = "off";

/** How long the form waits after a change before it asks the server about it, in milliseconds. */
const CHECK_DELAY = 120;

/**
 * The settings form: every setting with a one-line explanation, and the server's presets. After
 * each change the server judges the settings (`checkSettings`); the form shows its refusal, and
 * says what it judged through `onChecked`.
 * @param {HTMLElement} container where to build it
 * @param {object} initial the settings to show (a table's, or a preset: playable)
 * @param {Catalogue} offer the server's presets and turn timers
 * @param {(settings: object, refusal: object|null) => void} onChecked called with the settings
 *   after each change, once the server has judged them (`refusal` null: they are playable)
 * @returns {{get: () => object, set: (s: object) => void, playable: () => boolean,
 *   settle: () => Promise<void>, relabel: () => void}}
 */
export function settingsForm(container, initial, offer, onChecked) {
  container.classList.add("settings-form");
  /** The controls, by setting: built (again, at a switch of language) by `build`. */
  let c = {};
  let presetNote = null;
  let error = null;
  /** The server's refusal of the settings shown, or null. */
  let refusal = null;
  const options = (prefix, values) => values.map((v) => [v, t(`${prefix}.${v}`)]);
  const onOff = () => [[OFF, t("option.off")], ["on", t("option.on")]];
  const falseTrue = (off, on) => [["false", off], ["true", on]];

  /** Builds every control with its label and explanation in the page's language. */
  const build = () => {
    container.replaceChildren();
    c = {};
    c.preset = select([...options("preset", Object.keys(offer.presets)), ["custom", t("preset.custom")]]);
    c.players = select([2, 3, 4, 5, 6].map((n) => [String(n), t("summary.players", { count: n })]));
    c.cards = select([5, 7].map((n) => [String(n), t("summary.cards", { count: n })]));
    c.roundsMode = select([["fixed", t("option.roundsFixed")], ["until_one_remains", t("option.untilOneRemains")]]);
    c.rounds = number(1, 100);
    c.callLimit = select([["limit", t("option.callAtLimit")], [OFF, t("option.callAnyTime")]]);
    c.limit = number(0, 50);
    c.penalty = number(1, 500);
    c.penaltyMode = select([["instead", t("option.penaltyInstead")], ["on_top", t("option.penaltyOnTop")]]);
    c.double = select(onOff());
    c.doubleAmount = number(2, 500);
    c.doubleMargin = number(0, 50);
    c.court = select(options("option.court", ["tens", "sequential", "jack_zero"]));
    c.runs = select(falseTrue(t("option.runsOff"), t("option.runsOn")));
    c.jokers = select(falseTrue(t("option.off"), t("option.jokersOn")));
    c.jokersInRuns = select(falseTrue(t("option.jokersInSets"), t("option.jokersInRuns")));
    c.turnOrder = select(options("option.turnOrder", ["draw_then_throw", "throw_then_draw"]));
    c.pickup = select(options("option.pickup", ["single_only", "any_card", "ends"]));
    c.direction = select(options("option.direction", ["clockwise", "counter_clockwise"]));
    c.reshuffle = select(options("option.reshuffle", ["top_card", "top_throw"]));
    c.scoring = select(options("option.scoring", ["settlement", "cumulative"]));
    c.elimination = select(onOff());
    c.eliminationAt = number(1, 1000);
    c.scoreReset = select(falseTrue(t("option.off"), t("option.on")));
    c.difficulty = select(options("option.difficulty", ["easy", "medium", "hard", "expert"]));
    c.turnTimer = select([[OFF, t("option.timerOff")], ...offer.turnTimers.map((n) => [String(n), timerLength(n)])]);
    c.hints = select(falseTrue(t("option.hintsOff"), t("option.hintsOn")));

    presetNote = el("p", "note");
    const row = (id, key, control) => field(id, t(`setting.${key}`), t(`setting.${key}.note`), control);
    const rows = [
      row("set-preset", "preset", c.preset),
      row("set-players", "players", c.players),
      row("set-cards", "cards", c.cards),
      row("set-rounds-mode", "roundsMode", c.roundsMode),
      row("set-rounds", "rounds", c.rounds),
      row("set-call", "calling", c.callLimit),
      row("set-limit", "limit", c.limit),
      row("set-penalty", "penalty", c.penalty),
      row("set-penalty-mode", "penaltyMode", c.penaltyMode),
      row("set-double", "double", c.double),
      row("set-double-amount", "doubleAmount", c.doubleAmount),
      row("set-double-margin", "doubleMargin", c.doubleMargin),
      row("set-court", "court", c.court),
      row("set-runs", "runs", c.runs),
      row("set-jokers", "jokers", c.jokers),
      row("set-jokers-runs", "jokersInRuns", c.jokersInRuns),
      row("set-turn-order", "turnOrder", c.turnOrder),
      row("set-pickup", "pickup", c.pickup),
      row("set-direction", "direction", c.direction),
      row("set-reshuffle", "reshuffle", c.reshuffle),
      row("set-scoring", "scoring", c.scoring),
      row("set-elimination", "elimination", c.elimination),
      row("set-elimination-at", "eliminationAt", c.eliminationAt),
      row("set-score-reset", "scoreReset", c.scoreReset),
      row("set-difficulty", "difficulty", c.difficulty),
      row("set-turn-timer", "turnTimer", c.turnTimer),
      row("set-hints", "hints", c.hints),
    ];
    rows[0].append(presetNote);
    error = el("p", "form-error");
    error.setAttribute("role", "alert");
    container.append(...rows, error);
  };
  build();
  const rowOf = (control) => control.closest(".field");

  let current = copySettings(initial);

  const show = (s) => {
    const preset = presetOf(s, offer.presets);
    c.preset.value = preset || "custom";
    presetNote.textContent = preset ? describePreset(preset) : t("preset.custom.note");
    c.players.value = String(s.players);
    c.cards.value = String(s.cards);
    c.roundsMode.value = s.rounds === "until_one_remains" ? "until_one_remains" : "fixed";
    c.rounds.value = s.rounds === "until_one_remains" ? "" : String(s.rounds.fixed);
    c.callLimit.value = s.call_limit === null ? OFF : "limit";
    c.limit.value = s.call_limit === null ? "" : String(s.call_limit);
    c.penalty.value = String(s.penalty);
    c.penaltyMode.value = s.penalty_mode;
    c.double.value = s.double_penalty ? "on" : OFF;
    c.doubleAmount.value = s.double_penalty ? String(s.double_penalty.amount) : "";
    c.doubleMargin.value = s.double_penalty ? String(s.double_penalty.margin) : "";
    c.court.value = s.court;
    c.runs.value = String(s.runs);
    c.jokers.value = String(s.jokers);
    c.jokersInRuns.value = String(s.jokers_in_runs);
    c.turnOrder.value = s.turn_order;
    c.pickup.value = s.pickup;
    c.direction.value = s.direction || "clockwise";
    c.reshuffle.value = s.reshuffle_keeps || "top_card";
    c.scoring.value = s.scoring;
    c.elimination.value = s.elimination === null ? OFF : "on";
    c.eliminationAt.value = s.elimination === null ? "" : String(s.elimination);
    c.scoreReset.value = String(s.score_reset);
    c.difficulty.value = s.difficulty;
    c.turnTimer.value = s.turn_timer ? String(s.turn_timer) : OFF;
    c.hints.value = String(Boolean(s.hints));
    rowOf(c.rounds).hidden = s.rounds === "until_one_remains";
    rowOf(c.limit).hidden = s.call_limit === null;
    rowOf(c.doubleAmount).hidden = !s.double_penalty;
    rowOf(c.doubleMargin).hidden = !s.double_penalty;
    rowOf(c.pickup).hidden = s.turn_order !== "throw_then_draw";
    rowOf(c.jokersInRuns).hidden = !(s.runs && s.jokers);
    rowOf(c.elimination).hidden = s.scoring !== "cumulative";
    rowOf(c.eliminationAt).hidden = s.elimination === null;
    rowOf(c.scoreReset).hidden = s.scoring !== "cumulative";
    error.textContent = refusal ? errorText(refusal, s) : "";
  };

  // The server judges the settings a moment after the last change; an answer about settings
  // changed since (or set from outside) is not heard. `running` is the latest check (settled
  // once heard or dropped); `startNow` starts it without waiting out the moment.
  let timer = null;
  let asked = 0;
  let running = Promise.resolve();
  let startNow = () => {};
  const judge = () => {
    clearTimeout(timer);
    asked += 1;
    const n = asked;
    const s = copySettings(current);
    let start;
    running = new Promise((resolve) => { start = resolve; }).then(async () => {
      const verdict = await checkSettings(s);
      if (n !== asked || verdict === undefined) return;
      refusal = verdict;
      show(current);
      onChecked(copySettings(s), refusal);
    });
    startNow = start;
    timer = setTimeout(start, CHECK_DELAY);
  };

  const int = (control, fallback) => {
    const n = Number.parseInt(control.value, 10);
    return Number.isNaN(n) ? fallback : n;
  };

  // Reads the controls into settings, switching dependent options off when their parent is off
  // so the result stays playable.
  const read = () => {
    const s = copySettings(current);
    s.players = int(c.players, 4);
    s.cards = int(c.cards, 5);
    s.rounds = c.roundsMode.value === "until_one_remains" ? "until_one_remains" : { fixed: int(c.rounds, 3) };
    s.call_limit = c.callLimit.value === OFF ? null : int(c.limit, 5);
    s.penalty = int(c.penalty, 25);
    s.penalty_mode = c.penaltyMode.value;
    s.double_penalty = c.double.value === OFF ? null : {
      amount: int(c.doubleAmount, Math.max(50, s.penalty * 2)),
      margin: int(c.doubleMargin, 5),
    };
    s.court = c.court.value;
    s.runs = c.runs.value === "true";
    s.jokers = c.jokers.value === "true";
    s.jokers_in_runs = c.jokersInRuns.value === "true" && s.runs && s.jokers;
    s.turn_order = c.turnOrder.value;
    s.pickup = s.turn_order === "throw_then_draw" ? c.pickup.value : "single_only";
    s.direction = c.direction.value;
    s.reshuffle_keeps = c.reshuffle.value;
    s.scoring = c.scoring.value;
    const cumulative = s.scoring === "cumulative";
    s.elimination = cumulative && c.elimination.value !== OFF ? int(c.eliminationAt, 100) : null;
    s.score_reset = cumulative && c.scoreReset.value === "true";
    if (s.rounds === "until_one_remains" && s.elimination === null) s.rounds = { fixed: 3 };
    s.difficulty = c.difficulty.value;
    s.turn_timer = c.turnTimer.value === OFF ? null : int(c.turnTimer, 30);
    // Off is left out, as the server writes it.
    if (c.hints.value === "true") s.hints = true;
    else delete s.hints;
    return s;
  };

  container.addEventListener("change", (event) => {
    if (event.target === c.preset) {
      if (c.preset.value === "custom") return;
      // A preset sets the rules; the turn timer (the pace) and the hints stay as chosen.
      const pace = current.turn_timer === undefined ? null : current.turn_timer;
      current = { ...copySettings(offer.presets[c.preset.value]), turn_timer: pace };
      if (c.hints.value === "true") current.hints = true;
    } else {
      current = read();
    }
    show(current);
    judge();
  });

  show(current);
  return {
    get: () => copySettings(current),
    /** Shows settings the server already holds (playable): any answer still awaited is dropped. */
    set: (s) => {
      clearTimeout(timer);
      asked += 1;
      startNow();
      current = copySettings(s);
      refusal = null;
      show(current);
    },
    /** Whether the server's last word on the settings shown is that they are playable. */
    playable: () => refusal === null,
    /**
     * Settles at once what the server makes of the last change (`onChecked` has then been
     * called), so that what follows (Start, Create room) comes after it.
     * @returns {Promise<void>}
     */
    settle: async () => {
      for (;;) {
        const check = running;
        clearTimeout(timer);
        startNow();
        await check;
        if (check === running) return;
      }
    },
    /** Builds the form again in the page's language, with the same settings (and focus). */
    relabel: () => {
      const focused = container.contains(document.activeElement) ? document.activeElement.id : null;
      build();
      show(current);
      if (focused && document.getElementById(focused)) document.getElementById(focused).focus({ preventScroll: true });
    },
  };
}
