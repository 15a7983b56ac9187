//! Measures variants of the hard and expert bots against each other in the arena, without making
//! them difficulties: how the calling rules of issue #19 were tuned.
//!
//! ```text
//! cargo run --release -p dhumbal-bots --example tune -- --preset standard --games 8000 \
//!     --seats 'expert:hold=10/hard/hard/hard' [--set call_limit=2 …]
//! ```
//!
//! A seat is `hard`, `hard0` (hard's calling rule before the tuning), or `expert`, each with
//! optional `:key=value,…` changes to its numbers (`CallRule` or `ExpertParams` field names;
//! `lean`, `reset` and `cap` for `throw_first_lean`, `reset_weight` and `throw_cap` (at yaniv,
//! `reset_lean`, `reset_hold_flat` and `reset_cap` replace `lean`, `hold_flat` and `cap`); `standing`, `bonus`, `reveal`,
//! `gift` and `aim` (`reset`) for its `throw_first_judge`, `st` for `standing_threat`; for the expert's
//! search, `search=0|1` and the `SearchParams` fields as `samples`, `window`, `candidates`,
//! `switch`, `z` (`switch_z`), `draws`, `throws`, `throw_first`, `open_calls`, `roll_call_at`,
//! `hard_calls`, `rel` (`relative`), `own_judge` and `cap_ms`).
//! Seats are separated by `/`. It prints each seat's mean per round (higher is better, points
//! negated at cumulative tables), its calls and catches, and the margin of the first seat's
//! spec over the other seats, paired per match, with its 95% interval.

use dhumbal_bots::arena::{Config, run_with};
use dhumbal_bots::expert::ExpertParams;
use dhumbal_bots::hard::CallRule;
use dhumbal_bots::search::SearchParams;
use dhumbal_bots::{Bot, ExpertBot, HardBot};
use dhumbal_engine::{Difficulty, Preset, Settings};

/// One seat's bot, with its numbers.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // a handful of seats, built once
enum Spec {
    Hard(CallRule),
    Expert(ExpertParams),
}

fn parse_spec(text: &str) -> Result<Spec, String> {
    let (name, changes) = text.split_once(':').unwrap_or((text, ""));
    let mut spec = match name {
        "hard" => Spec::Hard(CallRule::default()),
        "hard0" => Spec::Hard(CallRule::ORIGINAL),
        "expert" => Spec::Expert(ExpertParams::default()),
        _ => return Err(format!("unknown bot `{name}`")),
    };
    for change in changes.split(',').filter(|c| !c.is_empty()) {
        let (key, value) = change
            .split_once('=')
            .ok_or_else(|| format!("`{change}` is not key=value"))?;
        let v: f64 = value
            .parse()
            .map_err(|_| format!("`{value}` is not a number"))?;
        match &mut spec {
            Spec::Hard(rule) => match key {
                "margin" => rule.margin = v as u32,
                "confidence" => rule.confidence = v,
                "throw_first_confidence" => rule.throw_first_confidence = v,
                "open_confidence" => rule.open_confidence = v,
                "open_at" => rule.open_at = v as u32,
                "low_limits" => rule.low_limits = v != 0.0,
                "fitted_belief" => rule.fitted_belief = v != 0.0,
                _ => return Err(format!("hard has no `{key}`")),
            },
            Spec::Expert(p) => match key {
                "hold" => p.hold = v,
                "hold_per_point" => p.hold_per_point = v,
                "hold_flat" => p.hold_flat = v,
                "plan_margin" => p.plan_margin = v as u32,
                "open_plan_at" => p.open_plan_at = v as u32,
                "open_call_at" => p.open_call_at = v as u32,
                "elimination_cost" => p.elimination_cost = v,
                "eliminate_bonus" => p.eliminate_bonus = v,
                "place_weight" => p.place_weight = v,
                "threat" => p.threat = v,
                "min_lightest" => p.min_lightest = v,
                "threat_margin" => p.threat_margin = v as u32,
                "relative" => p.relative = v,
                "pass_weight" => p.pass_weight = v,
                "pass_shift" => p.pass_shift = v as i32,
                "throw_first_lean" | "lean" => p.throw_first_lean = v,
                "reset_weight" | "reset" => p.reset_weight = v,
                "throw_cap" | "cap" => p.throw_cap = v,
                "reset_lean" => p.reset_lean = v,
                "reset_hold_flat" => p.reset_hold_flat = v,
                "reset_cap" => p.reset_cap = v,
                "standing" => p.throw_first_judge.standing = v,
                "bonus" => p.throw_first_judge.bonus = v,
                "reveal" => p.throw_first_judge.reveal = v,
                "gift" => p.throw_first_judge.gift = v,
                "aim" => p.throw_first_judge.reset = v,
                "standing_threat" | "st" => p.standing_threat = v,
                "search" => {
                    p.search = (v != 0.0).then(|| p.search.unwrap_or_default());
                }
                "samples" | "window" | "candidates" | "switch" | "draws" | "throws" | "cap_ms"
                | "throw_first" | "roll_call_at" | "z" | "open_calls" | "hard_calls" | "rel"
                | "own_judge" => {
                    let s = p.search.get_or_insert_with(SearchParams::default);
                    match key {
                        "samples" => s.samples = v as u32,
                        "window" => s.window = v,
                        "candidates" => s.candidates = v as usize,
                        "switch" => s.switch_margin = v,
                        "draws" => s.draws = v != 0.0,
                        "throws" => s.throws = v != 0.0,
                        "throw_first" => s.throw_first = v != 0.0,
                        "z" => s.switch_z = v,
                        "open_calls" => s.open_calls = v != 0.0,
                        "hard_calls" => s.hard_calls = v != 0.0,
                        "rel" => s.relative = v,
                        "own_judge" => s.own_judge = v != 0.0,
                        "roll_call_at" => s.open_call_at = v as u32,
                        _ => {
                            s.time_cap =
                                (v > 0.0).then(|| std::time::Duration::from_secs_f64(v / 1000.0))
                        }
                    }
                }
                _ => return Err(format!("expert has no `{key}`")),
            },
        }
    }
    Ok(spec)
}

fn build(spec: &Spec, seed: u64) -> Box<dyn Bot> {
    match spec {
        Spec::Hard(rule) => Box::new(HardBot::with_rule(*rule)),
        Spec::Expert(params) => Box::new(ExpertBot::with_params(*params, seed)),
    }
}

fn main() -> Result<(), String> {
    let mut preset = Preset::Standard;
    let mut games = 2000u64;
    let mut seed = 1u64;
    let mut seats = String::from("expert/hard/hard/hard");
    let mut changes: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--preset" => {
                preset = Preset::from_name(&value()?).ok_or("unknown preset")?;
            }
            "--games" => games = value()?.parse().map_err(|_| "bad --games")?,
            "--seed" => seed = value()?.parse().map_err(|_| "bad --seed")?,
            "--seats" => seats = value()?,
            "--set" => changes.push(value()?),
            _ => return Err(format!("unknown argument `{arg}`")),
        }
    }
    let texts: Vec<&str> = seats.split('/').collect();
    let specs: Vec<Spec> = texts
        .iter()
        .map(|t| parse_spec(t))
        .collect::<Result<_, _>>()?;
    let mut value = serde_json::to_value(preset.settings()).map_err(|e| e.to_string())?;
    for change in &changes {
        let (key, text) = change.split_once('=').ok_or("--set takes key=value")?;
        let new = serde_json::from_str(text)
            .unwrap_or_else(|_| serde_json::Value::String(text.to_owned()));
        *value.get_mut(key).ok_or(format!("no setting `{key}`"))? = new;
    }
    let mut settings: Settings = serde_json::from_value(value).map_err(|e| e.to_string())?;
    settings.players = specs.len() as u8;
    settings.validate().map_err(|e| e.to_string())?;
    let config = Config {
        settings,
        entries: vec![Difficulty::Hard; specs.len()],
        games,
        seed,
        threads: 1,
    };
    let summary = run_with(&config, |entry, seed| build(&specs[entry], seed), |_| {})
        .map_err(|e| e.to_string())?;
    let same: Vec<usize> = (0..texts.len()).filter(|&i| texts[i] == texts[0]).collect();
    let others: Vec<usize> = (0..texts.len()).filter(|&i| texts[i] != texts[0]).collect();
    for (text, t) in texts.iter().zip(&summary.tallies) {
        let seats: Vec<String> = (0..texts.len())
            .map(|k| format!("{:+.2}", t.seat_mean(k).unwrap_or(0.0)))
            .collect();
        println!(
            "{text:<40} {:+.3} ± {:.3}  calls {:>6} caught {:>5}  seats {}",
            t.mean(),
            t.ci95(),
            t.calls,
            t.caught,
            seats.join(" ")
        );
    }
    if !others.is_empty() {
        let (m, ci) = summary.margin(&same, &others);
        println!(
            "margin {:+.3} ± {:.3} over {} rounds, throw cap {}",
            m, ci, summary.rounds, summary.throw_cap_rounds
        );
    }
    Ok(())
}
