//! How long the hard and expert bots take to decide.
//!
//! Collects decision points from seeded matches of each preset and of the standard table at call
//! limit 0, where the expert's search plays out the longest rounds (two hard and two expert bots),
//! then times each bot's `choose` on them: criterion reports the mean over the set, and a plain
//! timing loop afterwards prints the median and the 99th percentile of single decisions, and
//! checks the expert's p99 against its 50 ms budget (with a 20% tolerance for a loaded machine).
//! The expert is timed as it plays by default, its search included (128 samples per candidate,
//! capped at 50 ms); `expert_nosearch` is the same bot with the search off.

use std::hint::black_box;
use std::time::Instant;

use criterion::Criterion;
use dhumbal_bots::arena::play_out_watched;
use dhumbal_bots::expert::ExpertParams;
use dhumbal_bots::{Bot, ExpertBot, new_bot};
use dhumbal_engine::{Difficulty, Game, Preset, PublicHistory, SeatView, Settings};

/// The bots timed, by difficulty.
const TIMED: [Difficulty; 2] = [Difficulty::Hard, Difficulty::Expert];

/// The expert's decision-time budget, in microseconds.
const EXPERT_BUDGET_US: f64 = 50_000.0;

/// Every view (with the public history) a bot decided from in `matches` seeded matches of
/// `settings` (hard and expert bots alternating round the table).
fn decision_points(settings: &Settings, matches: u8) -> Vec<(SeatView, PublicHistory)> {
    let mut views = Vec::new();
    for m in 0..matches {
        let mut game = Game::new(settings.clone(), [m; 32]).expect("a valid preset");
        let mut bots: Vec<Box<dyn Bot>> = (0..settings.players)
            .map(|s| new_bot(TIMED[usize::from(s) % 2], u64::from(s)))
            .collect();
        play_out_watched(&mut game, &mut bots, |d| {
            views.push((d.view.clone(), d.game.public_history().clone()));
        })
        .expect("bots play legally");
    }
    views
}

/// The tables timed: the presets, and the standard table at call limit 0.
fn tables() -> Vec<(String, Settings)> {
    let mut tables: Vec<(String, Settings)> = Preset::ALL
        .iter()
        .map(|p| (p.name().to_owned(), p.settings()))
        .collect();
    tables.push((
        "standard_limit0".to_owned(),
        Settings {
            call_limit: Some(0),
            ..Preset::Standard.settings()
        },
    ));
    tables
}

/// A named way to build a bot.
type Maker = (&'static str, fn() -> Box<dyn Bot>);

/// The bots timed: hard, the expert as it plays (with its search), and the expert without it.
fn timed_bots() -> Vec<Maker> {
    vec![
        ("hard", || new_bot(Difficulty::Hard, 0)),
        ("expert", || new_bot(Difficulty::Expert, 0)),
        ("expert_nosearch", || {
            Box::new(ExpertBot::with_params(
                ExpertParams {
                    search: None,
                    ..ExpertParams::default()
                },
                0,
            ))
        }),
    ]
}

fn decide(c: &mut Criterion) {
    for (table, settings) in tables() {
        let views = decision_points(&settings, 8);
        for (name, make) in timed_bots() {
            let mut bot = make();
            let mut i = 0;
            c.bench_function(&format!("{name}_choose_{table}"), |b| {
                b.iter(|| {
                    i = (i + 1) % views.len();
                    let (view, history) = &views[i];
                    black_box(bot.choose(black_box(view), black_box(history)))
                })
            });
        }
    }
}

/// The median and 99th percentile of single decisions, timed one by one.
fn percentiles() {
    for (table, settings) in tables() {
        let views = decision_points(&settings, 30);
        for (name, make) in timed_bots() {
            // A fresh bot per view: it rebuilds its memory from the log, the slow path.
            let mut times: Vec<f64> = Vec::with_capacity(views.len() * 5);
            for _ in 0..5 {
                for (view, history) in &views {
                    let mut bot = make();
                    let start = Instant::now();
                    black_box(bot.choose(black_box(view), black_box(history)));
                    times.push(start.elapsed().as_secs_f64() * 1e6);
                }
            }
            times.sort_by(f64::total_cmp);
            let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
            println!(
                "{} bot decision, {}: {} decisions, median {:.1} µs, p99 {:.1} µs, max {:.1} µs",
                name,
                table,
                times.len(),
                at(0.5),
                at(0.99),
                at(1.0)
            );
            if name == "expert" {
                assert!(
                    at(0.99) <= EXPERT_BUDGET_US * 1.2,
                    "the expert's p99 ({:.0} µs) is over its budget",
                    at(0.99)
                );
            }
        }
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    decide(&mut criterion);
    criterion.final_summary();
    percentiles();
}
