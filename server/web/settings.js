// Table settings: the presets, a form with a one-line explanation per setting, validation that
// mirrors `engine/src/settings.rs` (the server still judges), and plain-words summaries, in the
// page's language (i18n.js).

import { t } from "./i18n.js";

/** The named presets, spelled out exactly as `Preset::settings` in the engine. */
export const PRESETS = {
  standard: {
    players: 4, cards: 5, rounds: { fixed: 3 }, call_limit: 5, penalty: 25,
    penalty_mode: "instead", double_penalty: null, court: "tens", runs: false, jokers: false,
    jokers_in_runs: false, turn_order: "draw_then_throw", pickup: "single_only",
    scoring: "settlement", elimination: null, score_reset: false, difficulty: "medium",
    turn_timer: null,
  },
  household: {
    players: 5, cards: 5, rounds: { fixed: 5 }, call_limit: null, penalty: 25,
    penalty_mode: "instead", double_penalty: null, court: "jack_zero", runs: true, jokers: false,
    jokers_in_runs: false, turn_order: "throw_then_draw", pickup: "single_only",
    scoring: "cumulative", elimination: 100, score_reset: false, difficulty: "medium",
    turn_timer: null,
  },
  yaniv: {
    players: 4, cards: 5, rounds: "until_one_remains", call_limit: 7, penalty: 30,
    penalty_mode: "on_top", double_penalty: null, court: "tens", runs: true, jokers: true,
    jokers_in_runs: true, turn_order: "throw_then_draw", pickup: "ends", scoring: "cumulative",
    elimination: 200, score_reset: true, difficulty: "medium", turn_timer: null,
  },
};

/** One line about a preset (`standard`, `household`, `yaniv`). */
export function describePreset(preset) {
  return t(`preset.${preset}.note`);
}

/** A deep copy of a settings value. */
export function copySettings(s) {
  return JSON.parse(JSON.stringify(s));
}

/** Turn timers a table may have, in seconds (`TURN_TIMERS` in the engine); `null` is none. */
export const TURN_TIMERS = [15, 30, 60, 120];

/**
 * The preset name these settings equal in every rule, or null. The turn timer is left out: it
 * sets the pace, not the game, so a preset with a timer is still that preset.
 */
export function presetOf(s) {
  for (const [name, preset] of Object.entries(PRESETS)) {
    const keys = Object.keys(preset).filter((k) => k !== "turn_timer");
    const extra = Object.keys(s).filter((k) => k !== "turn_timer" && !(k in preset));
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

/** The first problem with these settings, in plain words, or null. Mirrors `Settings::validate`. */
export function validate(s) {
  if (!(s.players >= 2 && s.players <= 6)) return t("invalid.players");
  if (s.cards !== 5 && s.cards !== 7) return t("invalid.cards");
  if (s.rounds !== "until_one_remains") {
    const n = s.rounds.fixed;
    if (!(Number.isInteger(n) && n >= 1 && n <= 100)) return t("invalid.rounds");
  } else if (s.elimination === null) {
    return t("invalid.untilOneRemains");
  }
  if (s.call_limit !== null && !(Number.isInteger(s.call_limit) && s.call_limit >= 0 && s.call_limit <= 50)) {
    return t("invalid.callLimit");
  }
  if (!(Number.isInteger(s.penalty) && s.penalty >= 1 && s.penalty <= 500)) return t("invalid.penalty");
  if (s.double_penalty) {
    const d = s.double_penalty;
    if (!(Number.isInteger(d.amount) && d.amount > s.penalty && d.amount <= 500)) {
      return t("invalid.doubleAmount", { penalty: s.penalty });
    }
    if (!(Number.isInteger(d.margin) && d.margin >= 0 && d.margin <= 50)) return t("invalid.doubleMargin");
  }
  if (s.jokers_in_runs && !(s.runs && s.jokers)) return t("invalid.jokersInRuns");
  if (s.turn_order === "draw_then_throw" && s.pickup !== "single_only") {
    return t("invalid.pickup");
  }
  if (s.elimination !== null) {
    if (s.scoring !== "cumulative") return t("invalid.elimination");
    if (!(Number.isInteger(s.elimination) && s.elimination >= 1 && s.elimination <= 1000)) {
      return t("invalid.eliminationAt");
    }
  }
  if (s.score_reset && s.scoring !== "cumulative") return t("invalid.scoreReset");
  if (s.turn_timer !== undefined && s.turn_timer !== null && !TURN_TIMERS.includes(s.turn_timer)) {
    return t("invalid.turnTimer");
  }
  return null;
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

/** A short summary of a table, one item per setting that matters. */
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
    s.scoring === "cumulative"
      ? (s.elimination !== null ? t("summary.cumulativeOut", { out: s.elimination }) : t("summary.cumulative"))
      : t("summary.settlement"),
    t("summary.bots", { level: t(`difficulty.${s.difficulty}`) }),
    timerText(s),
  ];
  return items;
}

// ----- The form -----

function field(id, label, note, control) {
  const row = document.createElement("div");
  row.className = "field";
  const lab = document.createElement("label");
  lab.htmlFor = id;
  lab.textContent = label;
  const help = document.createElement("p");
  help.className = "note";
  help.id = `${id}-note`;
  help.textContent = note;
  control.id = id;
  control.setAttribute("aria-describedby", help.id);
  row.append(lab, control, help);
  return row;
}

function select(options) {
  const el = document.createElement("select");
  for (const [value, text] of options) {
    const opt = document.createElement("option");
    opt.value = value;
    opt.textContent = text;
    el.append(opt);
  }
  return el;
}

function number(min, max) {
  const el = document.createElement("input");
  el.type = "number";
  el.inputMode = "numeric";
  el.min = String(min);
  el.max = String(max);
  el.step = "1";
  return el;
}

const OFF = "off";

/**
 * The settings form: every setting with a one-line explanation, and the presets.
 * @param {HTMLElement} container where to build it
 * @param {object} initial the settings to show
 * @param {(settings: object) => void} onChange called with the new settings after each change
 * @returns {{get: () => object, set: (s: object) => void, setDisabled: (d: boolean) => void,
 *   relabel: () => void}}
 */
export function settingsForm(container, initial, onChange) {
  container.classList.add("settings-form");
  /** The controls, by setting: built (again, at a switch of language) by `build`. */
  let c = {};
  let presetNote = null;
  let error = null;
  const options = (prefix, values) => values.map((v) => [v, t(`${prefix}.${v}`)]);
  const onOff = () => [[OFF, t("option.off")], ["on", t("option.on")]];
  const falseTrue = (off, on) => [["false", off], ["true", on]];

  /** Builds every control with its label and explanation in the page's language. */
  const build = () => {
    container.replaceChildren();
    c = {};
    c.preset = select([...options("preset", ["standard", "household", "yaniv"]), ["custom", t("preset.custom")]]);
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
    c.scoring = select(options("option.scoring", ["settlement", "cumulative"]));
    c.elimination = select(onOff());
    c.eliminationAt = number(1, 1000);
    c.scoreReset = select(falseTrue(t("option.off"), t("option.on")));
    c.difficulty = select(options("option.difficulty", ["easy", "medium", "hard", "expert"]));
    c.turnTimer = select([[OFF, t("option.timerOff")], ...TURN_TIMERS.map((n) => [String(n), timerLength(n)])]);

    presetNote = document.createElement("p");
    presetNote.className = "note";
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
      row("set-scoring", "scoring", c.scoring),
      row("set-elimination", "elimination", c.elimination),
      row("set-elimination-at", "eliminationAt", c.eliminationAt),
      row("set-score-reset", "scoreReset", c.scoreReset),
      row("set-difficulty", "difficulty", c.difficulty),
      row("set-turn-timer", "turnTimer", c.turnTimer),
    ];
    rows[0].append(presetNote);
    error = document.createElement("p");
    error.className = "form-error";
    error.setAttribute("role", "alert");
    container.append(...rows, error);
  };
  build();
  const rowOf = (control) => control.closest(".field");

  let current = copySettings(initial);

  const show = (s) => {
    const preset = presetOf(s);
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
    c.scoring.value = s.scoring;
    c.elimination.value = s.elimination === null ? OFF : "on";
    c.eliminationAt.value = s.elimination === null ? "" : String(s.elimination);
    c.scoreReset.value = String(s.score_reset);
    c.difficulty.value = s.difficulty;
    c.turnTimer.value = s.turn_timer ? String(s.turn_timer) : OFF;
    rowOf(c.rounds).hidden = s.rounds === "until_one_remains";
    rowOf(c.limit).hidden = s.call_limit === null;
    rowOf(c.doubleAmount).hidden = !s.double_penalty;
    rowOf(c.doubleMargin).hidden = !s.double_penalty;
    rowOf(c.pickup).hidden = s.turn_order !== "throw_then_draw";
    rowOf(c.jokersInRuns).hidden = !(s.runs && s.jokers);
    rowOf(c.elimination).hidden = s.scoring !== "cumulative";
    rowOf(c.eliminationAt).hidden = s.elimination === null;
    rowOf(c.scoreReset).hidden = s.scoring !== "cumulative";
    error.textContent = validate(s) || "";
  };

  const int = (el, fallback) => {
    const n = Number.parseInt(el.value, 10);
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
    s.scoring = c.scoring.value;
    const cumulative = s.scoring === "cumulative";
    s.elimination = cumulative && c.elimination.value !== OFF ? int(c.eliminationAt, 100) : null;
    s.score_reset = cumulative && c.scoreReset.value === "true";
    if (s.rounds === "until_one_remains" && s.elimination === null) s.rounds = { fixed: 3 };
    s.difficulty = c.difficulty.value;
    s.turn_timer = c.turnTimer.value === OFF ? null : int(c.turnTimer, 30);
    return s;
  };

  container.addEventListener("change", (event) => {
    if (event.target === c.preset) {
      if (c.preset.value === "custom") return;
      // A preset sets the rules; the turn timer (the pace) stays as chosen.
      const timer = current.turn_timer === undefined ? null : current.turn_timer;
      current = { ...copySettings(PRESETS[c.preset.value]), turn_timer: timer };
    } else {
      current = read();
    }
    show(current);
    onChange(copySettings(current));
  });

  show(current);
  return {
    get: () => copySettings(current),
    set: (s) => {
      current = copySettings(s);
      show(current);
    },
    setDisabled: (disabled) => {
      for (const el of container.querySelectorAll("select, input")) el.disabled = disabled;
    },
    /** Builds the form again in the page's language, with the same settings (and focus). */
    relabel: () => {
      const focused = container.contains(document.activeElement) ? document.activeElement.id : null;
      const disabled = Boolean(c.preset && c.preset.disabled);
      build();
      show(current);
      if (disabled) for (const el of container.querySelectorAll("select, input")) el.disabled = true;
      if (focused && document.getElementById(focused)) document.getElementById(focused).focus({ preventScroll: true });
    },
  };
}
