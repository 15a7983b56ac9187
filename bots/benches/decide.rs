//! How long the hard bot takes to decide.
//!
//! Collects the hard bot's decision points from seeded standard matches of four hard bots, then
//! times `choose` on them: criterion reports the mean over the set, and a plain timing loop
//! afterwards prints the median and the 99th percentile of single decisions.

use std::hint::black_box;
use std::time::Instant;

use criterion::Criterion;
use dhumbal_bots::{Bot, HardBot, new_bot};
use dhumbal_engine::{Difficulty, Game, Phase, Preset, SeatView, Settings};

/// Every view a hard bot decided from in `matches` seeded matches of `settings`.
fn decision_points(settings: &Settings, matches: u8) -> Vec<SeatView> {
    let mut views = Vec::new();
    for m in 0..matches {
        let mut game = Game::new(settings.clone(), [m; 32]).expect("a valid preset");
        let mut bots: Vec<Box<dyn Bot>> = (0..settings.players)
            .map(|s| new_bot(Difficulty::Hard, u64::from(s)))
            .collect();
        while !game.is_over() {
            if game.phase() == Phase::RoundOver {
                game.next_round().expect("the round is over");
                continue;
            }
            let seat = game.turn();
            let view = game.view(seat);
            let action = bots[seat].choose(&view);
            views.push(view);
            game.apply(seat, action).expect("bots play legally");
        }
    }
    views
}

fn decide(c: &mut Criterion) {
    for preset in Preset::ALL {
        let views = decision_points(&preset.settings(), 8);
        let mut bot = HardBot::new(0);
        let mut i = 0;
        c.bench_function(&format!("hard_choose_{}", preset.name()), |b| {
            b.iter(|| {
                i = (i + 1) % views.len();
                black_box(bot.choose(black_box(&views[i])))
            })
        });
    }
}

/// The median and 99th percentile of single decisions, timed one by one.
fn percentiles() {
    for preset in Preset::ALL {
        let views = decision_points(&preset.settings(), 30);
        let mut bot = HardBot::new(0);
        let mut times: Vec<f64> = Vec::with_capacity(views.len() * 5);
        for _ in 0..5 {
            for view in &views {
                let start = Instant::now();
                black_box(bot.choose(black_box(view)));
                times.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        println!(
            "hard bot decision, {}: {} decisions, median {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            preset.name(),
            times.len(),
            at(0.5),
            at(0.99),
            at(1.0)
        );
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    decide(&mut criterion);
    criterion.final_summary();
    percentiles();
}
