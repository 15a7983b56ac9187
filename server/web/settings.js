// Table settings: the presets, a form with a one-line explanation per setting, validation that
// mirrors `engine/src/settings.rs` (the server still judges), and plain-words summaries.

/** The named presets, spelled out exactly as `Preset::settings` in the engine. */
export const PRESETS = {
  standard: {
    players: 4, cards: 5, rounds: { fixed: 3 }, call_limit: 5, penalty: 25,
    penalty_mode: "instead", double_penalty: null, court: "tens", runs: false, jokers: false,
    jokers_in_runs: false, turn_order: "draw_then_throw", pickup: "single_only",
    scoring: "settlement", elimination: null, score_reset: false, difficulty: "medium",
  },
  household: {
    players: 5, cards: 5, rounds: { fixed: 5 }, call_limit: null, penalty: 25,
    penalty_mode: "instead", double_penalty: null, court: "jack_zero", runs: true, jokers: false,
    jokers_in_runs: false, turn_order: "throw_then_draw", pickup: "single_only",
    scoring: "cumulative", elimination: 100, score_reset: false, difficulty: "medium",
  },
  yaniv: {
    players: 4, cards: 5, rounds: "until_one_remains", call_limit: 7, penalty: 30,
    penalty_mode: "on_top", double_penalty: null, court: "tens", runs: true, jokers: true,
    jokers_in_runs: true, turn_order: "throw_then_draw", pickup: "ends", scoring: "cumulative",
    elimination: 200, score_reset: true, difficulty: "medium",
  },
};

/** One line about each preset. */
export const PRESET_NOTES = {
  standard: "The standard table: draw then throw, call at 5 or less, a wrong call costs 25, zero-sum scores.",
  household: "The household guide: throw then draw, Jack 0, runs, no call limit, points add up, out at 100.",
  yaniv: "Yaniv, the Israeli cousin: call at 7 or less, 30 on top of the hand, jokers wild in runs, out at 200.",
};

const COURT_TEXT = {
  tens: "Jack, queen and king 10 each",
  sequential: "Jack 11, queen 12, king 13",
  jack_zero: "Jack 0, queen 10, king 10",
};

/** A deep copy of a settings value. */
export function copySettings(s) {
  return JSON.parse(JSON.stringify(s));
}

/** The preset name these settings equal exactly, or null. */
export function presetOf(s) {
  const text = JSON.stringify(s);
  for (const [name, preset] of Object.entries(PRESETS)) {
    if (JSON.stringify(preset) === text) return name;
  }
  return null;
}

/** The first problem with these settings, in plain words, or null. Mirrors `Settings::validate`. */
export function validate(s) {
  if (!(s.players >= 2 && s.players <= 6)) return "Players must be 2 to 6.";
  if (s.cards !== 5 && s.cards !== 7) return "Deal 5 or 7 cards.";
  if (s.rounds !== "until_one_remains") {
    const n = s.rounds.fixed;
    if (!(Number.isInteger(n) && n >= 1 && n <= 100)) return "Rounds must be 1 to 100.";
  } else if (s.elimination === null) {
    return "Playing until one player remains needs elimination on.";
  }
  if (s.call_limit !== null && !(Number.isInteger(s.call_limit) && s.call_limit >= 0 && s.call_limit <= 50)) {
    return "The call limit must be 0 to 50.";
  }
  if (!(Number.isInteger(s.penalty) && s.penalty >= 1 && s.penalty <= 500)) return "The penalty must be 1 to 500.";
  if (s.double_penalty) {
    const d = s.double_penalty;
    if (!(Number.isInteger(d.amount) && d.amount > s.penalty && d.amount <= 500)) {
      return `The doubled penalty must be more than the penalty (${s.penalty}) and at most 500.`;
    }
    if (!(Number.isInteger(d.margin) && d.margin >= 0 && d.margin <= 50)) return "The doubled penalty's margin must be 0 to 50.";
  }
  if (s.jokers_in_runs && !(s.runs && s.jokers)) return "Jokers in runs needs both runs and jokers on.";
  if (s.turn_order === "draw_then_throw" && s.pickup !== "single_only") {
    return "The pick-up rule only applies when players throw before they draw.";
  }
  if (s.elimination !== null) {
    if (s.scoring !== "cumulative") return "Elimination needs cumulative points.";
    if (!(Number.isInteger(s.elimination) && s.elimination >= 1 && s.elimination <= 1000)) {
      return "The elimination total must be 1 to 1000.";
    }
  }
  if (s.score_reset && s.scoring !== "cumulative") return "The score reset needs cumulative points.";
  return null;
}

/** How many rounds, in words. */
export function roundsText(s) {
  if (s.rounds === "until_one_remains") return "until one player remains";
  const n = s.rounds.fixed;
  return `${n} round${n === 1 ? "" : "s"}`;
}

/** The call limit, in words. */
export function limitText(s) {
  return s.call_limit === null ? "no call limit" : `call at ${s.call_limit} or less`;
}

/** What the court cards are worth, in words. */
export function courtText(s) {
  return COURT_TEXT[s.court];
}

/** A short summary of a table, one item per setting that matters. */
export function summary(s) {
  const items = [
    `${s.players} players`,
    `${s.cards} cards`,
    roundsText(s),
    limitText(s),
    `wrong call ${s.penalty_mode === "on_top" ? "+" : ""}${s.penalty}${s.double_penalty ? ` (${s.double_penalty.amount} if off by more than ${s.double_penalty.margin})` : ""}`,
    courtText(s),
    s.runs ? "runs on" : "no runs",
    s.jokers ? (s.jokers_in_runs ? "jokers, wild in runs" : "jokers") : "no jokers",
    s.turn_order === "throw_then_draw" ? "throw then draw" : "draw then throw",
    s.scoring === "cumulative" ? `points add up${s.elimination !== null ? `, out at ${s.elimination}` : ""}` : "zero-sum scores",
    `${s.difficulty} bots`,
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
 * @returns {{get: () => object, set: (s: object) => void, setDisabled: (d: boolean) => void}}
 */
export function settingsForm(container, initial, onChange) {
  container.replaceChildren();
  container.classList.add("settings-form");
  const c = {};
  c.preset = select([["standard", "Standard table"], ["household", "Household guide"], ["yaniv", "Yaniv"], ["custom", "Custom"]]);
  c.players = select([2, 3, 4, 5, 6].map((n) => [String(n), `${n} players`]));
  c.cards = select([["5", "5 cards"], ["7", "7 cards"]]);
  c.roundsMode = select([["fixed", "A fixed number"], ["until_one_remains", "Until one player remains"]]);
  c.rounds = number(1, 100);
  c.callLimit = select([["limit", "At or below a limit"], [OFF, "Any time (no limit)"]]);
  c.limit = number(0, 50);
  c.penalty = number(1, 500);
  c.penaltyMode = select([["instead", "Instead of the hand"], ["on_top", "On top of the hand"]]);
  c.double = select([[OFF, "Off"], ["on", "On"]]);
  c.doubleAmount = number(2, 500);
  c.doubleMargin = number(0, 50);
  c.court = select([["tens", "Ten each"], ["sequential", "11, 12 and 13"], ["jack_zero", "Jack 0, queen and king 10"]]);
  c.runs = select([["false", "Only same-rank groups"], ["true", "Runs allowed"]]);
  c.jokers = select([["false", "Off"], ["true", "Two jokers, worth 0"]]);
  c.jokersInRuns = select([["false", "Only in sets"], ["true", "In sets and runs"]]);
  c.turnOrder = select([["draw_then_throw", "Draw, then throw"], ["throw_then_draw", "Throw, then draw"]]);
  c.pickup = select([["single_only", "Only a single-card throw"], ["any_card", "Any card of the throw"], ["ends", "First or last card of the throw"]]);
  c.scoring = select([["settlement", "Zero-sum settlement (high is good)"], ["cumulative", "Points add up (low is good)"]]);
  c.elimination = select([[OFF, "Off"], ["on", "On"]]);
  c.eliminationAt = number(1, 1000);
  c.scoreReset = select([["false", "Off"], ["true", "On"]]);
  c.difficulty = select([["easy", "Easy"], ["medium", "Medium"], ["hard", "Hard"], ["expert", "Expert"]]);

  const presetNote = document.createElement("p");
  presetNote.className = "note";
  const rows = [
    field("set-preset", "Preset", "A named table with every setting filled in; change any setting below to make it your own.", c.preset),
    field("set-players", "Players", "Seats at the table. Fewer hands that could be lighter make a call safer.", c.players),
    field("set-cards", "Cards", "Cards dealt to each player. Seven makes opening hands heavy and calls come later.", c.cards),
    field("set-rounds-mode", "Match length", "Deals in the match; scores carry across them.", c.roundsMode),
    field("set-rounds", "Rounds", "How many deals, when the match has a fixed length.", c.rounds),
    field("set-call", "Calling", "Whether a call needs the hand at or below a limit first.", c.callLimit),
    field("set-limit", "Call at or below", "The hand total a call is allowed at. At 3 calls are rare and safe; at 10 they come early and get caught.", c.limit),
    field("set-penalty", "A wrong call costs", "What a caught caller is charged, and what the seat that catches them collects.", c.penalty),
    field("set-penalty-mode", "Penalty is charged", "Instead of the caller's hand (Dhumbal), or added to it (most Yaniv tables).", c.penaltyMode),
    field("set-double", "Doubled penalty", "A bigger penalty when the caller is undercut by a wide margin.", c.double),
    field("set-double-amount", "Doubled penalty amount", "What the caller pays instead, 50 in the household guide.", c.doubleAmount),
    field("set-double-margin", "Undercut by more than", "How far over the lightest hand the caller must be for the doubled penalty.", c.doubleMargin),
    field("set-court", "Court cards", "What a jack, queen and king are worth. The ace is always 1 and a joker 0.", c.court),
    field("set-runs", "Runs", "Whether three or more consecutive cards of one suit may be thrown together.", c.runs),
    field("set-jokers", "Jokers", "Adds the two printed jokers, worth nothing and wild inside a set.", c.jokers),
    field("set-jokers-runs", "Jokers in runs", "Whether a joker may also fill a gap in a run (needs runs and jokers).", c.jokersInRuns),
    field("set-turn-order", "A turn is", "Draw one card then throw, or throw first and then draw.", c.turnOrder),
    field("set-pickup", "Pick up from the previous throw", "Throw-then-draw tables: which card of the previous player's throw may be taken.", c.pickup),
    field("set-scoring", "Scoring", "Settle each round to its winner, or add points to running totals where low is good.", c.scoring),
    field("set-elimination", "Elimination", "With points adding up: a player whose total reaches a threshold is out.", c.elimination),
    field("set-elimination-at", "Out at", "The total that puts a player out of the match.", c.eliminationAt),
    field("set-score-reset", "Score reset", "With points adding up: a total landing exactly on a multiple of 50 drops by 50.", c.scoreReset),
    field("set-difficulty", "Bots", "How much the bots remember and how far under the limit they wait before calling.", c.difficulty),
  ];
  rows[0].append(presetNote);
  const error = document.createElement("p");
  error.className = "form-error";
  error.setAttribute("role", "alert");
  container.append(...rows, error);
  const rowOf = (control) => control.closest(".field");

  let current = copySettings(initial);

  const show = (s) => {
    const preset = presetOf(s);
    c.preset.value = preset || "custom";
    presetNote.textContent = preset ? PRESET_NOTES[preset] : "Your own mix of settings.";
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
    return s;
  };

  container.addEventListener("change", (event) => {
    if (event.target === c.preset) {
      if (c.preset.value === "custom") return;
      current = copySettings(PRESETS[c.preset.value]);
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
  };
}
