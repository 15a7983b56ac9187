//! The arena: plays many matches between bots and prints how each did.
//!
//! ```text
//! cargo run --release -p dhumbal-bots --bin arena -- --preset standard \
//!     --seats hard,medium,easy,easy --games 10000 --seed 1 --threads 2 [--json] \
//!     [--set call_limit=null --set turn_order=throw_then_draw …] [--expert-samples 128] \
//!     [--expert-cap-ms 50]
//! ```
//!
//! `--set key=value` changes one setting of the preset (the value in JSON, or a bare word for a
//! name), so every option mix can be measured; the seat count comes from `--seats`.
//! Entries rotate round the table (see [`dhumbal_bots::arena`]). For each entry it prints the
//! mean Paid per round (mean points per round at cumulative tables, where lower is better) with
//! a 95% confidence interval, the match win rate, calls made and calls caught; then the rounds
//! ended by the throw cap and the throughput; per seat (from the dealer's left) each entry's mean;
//! each entry's decision time (p50, p99, max); and for every pair of difficulties at the table
//! the margin of one over the other, paired per match, with its 95% interval.
//! `--expert-samples` sets the expert's search budget (samples per candidate move; 0 turns its
//! search off) and `--expert-cap-ms` its wall-clock cap. `--json` prints one JSON object
//! instead, whose `bots` hold one object per entry with `mean_per_round` signed so that higher
//! is better.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use std::time::Duration;

use dhumbal_bots::arena::{Config, run_with};
use dhumbal_bots::expert::ExpertParams;
use dhumbal_bots::search::SearchParams;
use dhumbal_bots::{Bot, ExpertBot, new_bot};
use dhumbal_engine::{Difficulty, Preset, Scoring, Settings};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

/// Plays bots against each other and prints how each did.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// The table: standard, household or yaniv.
    #[arg(long, default_value = "standard")]
    preset: String,
    /// The bots, one per seat, comma-separated: easy, medium, hard or expert.
    #[arg(long, default_value = "hard,medium,easy,easy")]
    seats: String,
    /// How many matches to play.
    #[arg(long, default_value_t = 1000)]
    games: u64,
    /// The seed every deal and bot derives from.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads to play on (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Change one setting of the preset: `--set key=value`, the value in JSON
    /// (`--set call_limit=null`, `--set runs=true`), or a bare word for a name
    /// (`--set court=sequential`). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// The expert's search budget: samples per candidate move, 0 to turn the search off
    /// (default: the expert's own setting).
    #[arg(long, value_name = "SAMPLES")]
    expert_samples: Option<u32>,
    /// A wall-clock cap on each expert decision's search, in milliseconds, 0 for none (default:
    /// the expert's own setting, 50 ms).
    #[arg(long, value_name = "MS")]
    expert_cap_ms: Option<u64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// The expert's numbers with the command line's search budget.
fn expert_params(args: &Args) -> ExpertParams {
    let mut params = ExpertParams::default();
    if let Some(samples) = args.expert_samples {
        params.search = (samples > 0).then(|| SearchParams {
            samples,
            ..params.search.unwrap_or_default()
        });
    }
    if let (Some(ms), Some(search)) = (args.expert_cap_ms, params.search.as_mut()) {
        search.time_cap = (ms > 0).then(|| Duration::from_millis(ms));
    }
    params
}

fn difficulty(name: &str) -> Option<Difficulty> {
    [
        Difficulty::Easy,
        Difficulty::Medium,
        Difficulty::Hard,
        Difficulty::Expert,
    ]
    .into_iter()
    .find(|d| d.name() == name.trim())
}

/// `settings` with each `key=value` change applied (the value read as JSON).
fn with_changes(settings: Settings, changes: &[String]) -> Result<Settings, String> {
    let mut value = serde_json::to_value(settings).map_err(|e| e.to_string())?;
    for change in changes {
        let Some((key, text)) = change.split_once('=') else {
            return Err(format!("--set takes key=value, not `{change}`"));
        };
        // A value that is not JSON is taken as a string: `--set court=sequential`.
        let new = serde_json::from_str(text)
            .unwrap_or_else(|_| serde_json::Value::String(text.to_owned()));
        match value.get_mut(key) {
            Some(slot) => *slot = new,
            None => return Err(format!("--set: there is no setting `{key}`")),
        }
    }
    serde_json::from_value(value).map_err(|e| format!("--set: {e}"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(preset) = Preset::from_name(&args.preset) else {
        eprintln!(
            "unknown preset `{}`: use standard, household or yaniv",
            args.preset
        );
        return ExitCode::FAILURE;
    };
    let entries: Option<Vec<Difficulty>> = args.seats.split(',').map(difficulty).collect();
    let Some(entries) = entries else {
        eprintln!(
            "--seats takes easy, medium, hard or expert, comma-separated: `{}`",
            args.seats
        );
        return ExitCode::FAILURE;
    };
    let mut settings = match with_changes(preset.settings(), &args.set) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    settings.players = match u8::try_from(entries.len()) {
        Ok(n) => n,
        Err(_) => {
            eprintln!("too many seats");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = settings.validate() {
        eprintln!("that table cannot be played: {e}");
        return ExitCode::FAILURE;
    }
    let config = Config {
        settings,
        entries: entries.clone(),
        games: args.games,
        seed: args.seed,
        threads: args.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }),
    };
    let bar = if args.json || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new(args.games);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} matches, {per_sec}, eta {eta}")
                .expect("a valid template"),
        );
        bar
    };
    let started = Instant::now();
    let expert = expert_params(&args);
    let make = |entry: usize, seed: u64| -> Box<dyn Bot> {
        match config.entries[entry] {
            Difficulty::Expert => Box::new(ExpertBot::with_params(expert, seed)),
            other => new_bot(other, seed),
        }
    };
    let summary = match run_with(&config, make, |done| bar.set_position(done)) {
        Ok(summary) => summary,
        Err(e) => {
            bar.abandon();
            eprintln!("a match failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let rounds_per_sec = summary.rounds as f64 / seconds.max(1e-9);
    let cumulative = config.settings.scoring == Scoring::Cumulative;
    let names: Vec<String> = entries
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let same = entries.iter().filter(|e| *e == d).count();
            let nth = entries[..i].iter().filter(|e| *e == d).count() + 1;
            if same > 1 {
                format!("{}#{nth}", d.name())
            } else {
                d.name().to_owned()
            }
        })
        .collect();
    // Every pair of difficulties present: the first's mean less the second's, paired per match,
    // signed so that higher is better.
    let mut kinds: Vec<Difficulty> = Vec::new();
    for d in &entries {
        if !kinds.contains(d) {
            kinds.push(*d);
        }
    }
    let group =
        |d: Difficulty| -> Vec<usize> { (0..entries.len()).filter(|&i| entries[i] == d).collect() };
    let mut margins = Vec::new();
    for (i, &a) in kinds.iter().enumerate() {
        for &b in &kinds[i + 1..] {
            let (m, ci) = summary.margin(&group(a), &group(b));
            margins.push((a.name(), b.name(), m, ci));
        }
    }
    if args.json {
        let bots: Vec<_> = entries
            .iter()
            .zip(&summary.tallies)
            .zip(&names)
            .map(|((d, t), name)| {
                json!({
                    "bot": d.name(),
                    "entry": name,
                    "mean_per_round": t.mean(),
                    "ci95": t.ci95(),
                    "win_rate": t.win_rate(),
                    "calls": t.calls,
                    "caught": t.caught,
                    "rounds": t.rounds,
                    "matches": t.matches,
                    "by_seat_from_dealers_left": (0..entries.len())
                        .map(|k| t.seat_mean(k))
                        .collect::<Vec<_>>(),
                    "decision_us_p50": t.decision_quantile(0.5),
                    "decision_us_p99": t.decision_quantile(0.99),
                    "decision_us_max": t.decision_quantile(1.0),
                })
            })
            .collect();
        let out = json!({
            "preset": preset.name(),
            "settings": config.settings,
            "seats": entries.iter().map(|d| d.name()).collect::<Vec<_>>(),
            "games": summary.matches,
            "rounds": summary.rounds,
            "throw_cap_rounds": summary.throw_cap_rounds,
            "seconds": seconds,
            "rounds_per_sec": rounds_per_sec,
            "threads": config.threads,
            "scoring": if cumulative { "cumulative" } else { "settlement" },
            "bots": bots,
            "margins": margins
                .iter()
                .map(|(a, b, m, ci)| json!({"better": a, "than": b, "margin": m, "ci95": ci}))
                .collect::<Vec<_>>(),
        });
        println!("{out}");
        return ExitCode::SUCCESS;
    }
    let sign = if cumulative { -1.0 } else { 1.0 };
    let what = if cumulative {
        "mean points/round (lower is better)"
    } else {
        "mean Paid/round"
    };
    println!(
        "{} matches, {} rounds of `{}`, seed {}",
        summary.matches,
        summary.rounds,
        preset.name(),
        args.seed
    );
    println!(
        "{:<10} {:>38} {:>9} {:>8} {:>8}",
        "bot", what, "win rate", "calls", "caught"
    );
    for (name, t) in names.iter().zip(&summary.tallies) {
        println!(
            "{:<10} {:>29.3} ± {:<6.3} {:>8.1}% {:>8} {:>8}",
            name,
            sign * t.mean(),
            t.ci95(),
            100.0 * t.win_rate(),
            t.calls,
            t.caught
        );
    }
    println!(
        "per seat from the dealer's left ({}; the last is the dealer):",
        if cumulative {
            "points/round"
        } else {
            "Paid/round"
        }
    );
    for (name, t) in names.iter().zip(&summary.tallies) {
        let seats: Vec<String> = (0..entries.len())
            .map(|k| {
                t.seat_mean(k)
                    .map_or("-".into(), |m| format!("{:+.3}", sign * m))
            })
            .collect();
        println!("{:<10} {}", name, seats.join("  "));
    }
    println!("decision time (µs):");
    for (name, t) in names.iter().zip(&summary.tallies) {
        println!(
            "{:<10} p50 {:>8.1}  p99 {:>8.1}  max {:>9.1}  ({} decisions)",
            name,
            t.decision_quantile(0.5),
            t.decision_quantile(0.99),
            t.decision_quantile(1.0),
            t.decision_us.len()
        );
    }
    for (a, b, m, ci) in &margins {
        println!(
            "margin of {a} over {b}: {:+.3} ± {:.3} {} per round (higher is better for {a})",
            m,
            ci,
            if cumulative { "points" } else { "Paid" }
        );
    }
    println!(
        "rounds ended by the throw cap: {} ({:.2}%)",
        summary.throw_cap_rounds,
        100.0 * summary.throw_cap_rounds as f64 / summary.rounds.max(1) as f64
    );
    println!(
        "{rounds_per_sec:.0} rounds/s on {} threads ({seconds:.1} s)",
        config.threads
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_apply_to_the_preset_and_bad_ones_are_refused() {
        let standard = Preset::Standard.settings();
        let changed = with_changes(
            standard.clone(),
            &[
                "call_limit=null".into(),
                "court=sequential".into(),
                "runs=true".into(),
                "penalty=30".into(),
            ],
        )
        .unwrap();
        assert_eq!(changed.call_limit, None);
        assert_eq!(changed.court, dhumbal_engine::CourtValues::Sequential);
        assert!(changed.runs);
        assert_eq!(changed.penalty, 30);
        assert!(with_changes(standard.clone(), &["colour=red".into()]).is_err());
        assert!(with_changes(standard.clone(), &["runs".into()]).is_err());
        assert!(with_changes(standard, &["court=purple".into()]).is_err());
        assert_eq!(difficulty("hard"), Some(Difficulty::Hard));
        assert_eq!(difficulty("expert"), Some(Difficulty::Expert));
        assert_eq!(difficulty("master"), None);
    }
}
