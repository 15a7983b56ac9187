//! Fits the belief's lean table ([`dhumbal_bots::belief::LEAN`]) on recorded rounds.
//!
//! ```text
//! cargo run --release -p dhumbal-bots --example fit_belief -- [matches] [seed]
//! ```
//!
//! Plays `matches` (default 3000) four-seat standard matches of hard bots. At the start of each
//! turn of seat 0 it records, for every opponent, the throws it has made, how many of its cards
//! are unknown, the values of the unseen cards and the values of its true unknown cards. Then,
//! for every (throws, unknown) cell, it picks the lean (0 to 0.8 in steps of 0.02) under which
//! the true unknown cards are most likely, and prints the table as Rust, with the mean
//! log-likelihood per card under the fitted table and under the uniform guess (lean 0).

use dhumbal_bots::arena::play_out_watched;
use dhumbal_bots::belief::{LEAN_CARDS, LEAN_THROWS};
use dhumbal_bots::groups::value;
use dhumbal_bots::turn::{Step, opponents, step};
use dhumbal_bots::{Bot, Memory, new_bot};
use dhumbal_engine::{Difficulty, Game, Preset};

/// One opponent at one decision: the unseen values' counts and its true unknown values.
struct Sample {
    pool: [u32; 14],
    truth: Vec<usize>,
}

fn log_likelihood(sample: &Sample, lean: f64) -> f64 {
    let w = |v: usize| (-lean * v as f64).exp();
    let sum: f64 = (0..14).map(|v| f64::from(sample.pool[v]) * w(v)).sum();
    sample.truth.iter().map(|&v| (w(v) / sum).ln()).sum()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let matches: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3000);
    let seed: u8 = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let settings = Preset::Standard.settings();
    let mut cells: Vec<Vec<Sample>> = (0..LEAN_THROWS * LEAN_CARDS).map(|_| Vec::new()).collect();
    for m in 0..matches {
        let mut key = [seed; 32];
        key[..4].copy_from_slice(&m.to_le_bytes());
        let mut game = Game::new(settings.clone(), key).expect("a valid preset");
        let mut bots: Vec<Box<dyn Bot>> = (0..4u64).map(|s| new_bot(Difficulty::Hard, s)).collect();
        let mut memory = Memory::new();
        play_out_watched(&mut game, &mut bots, |d| {
            if d.seat != 0 || step(d.view) != Step::CallOrDraw {
                return;
            }
            memory.sync(d.view, d.game.public_history());
            let unseen = memory.unseen(d.view);
            let mut pool = [0u32; 14];
            for c in &unseen {
                pool[value(*c, &settings) as usize] += 1;
            }
            for o in opponents(d.view) {
                let known = memory.held(o);
                let truth: Vec<usize> = d
                    .game
                    .hand(o)
                    .iter()
                    .filter(|c| !known.contains(c))
                    .map(|c| value(*c, &settings) as usize)
                    .collect();
                let throws = (memory.throws_by(o) as usize).min(LEAN_THROWS - 1);
                let unknown = truth.len().min(LEAN_CARDS - 1);
                cells[throws * LEAN_CARDS + unknown].push(Sample { pool, truth });
            }
        })
        .expect("bots play legally");
    }
    let grid: Vec<f64> = (0..=40).map(|i| f64::from(i) * 0.02).collect();
    let mut fitted = vec![0.0; LEAN_THROWS * LEAN_CARDS];
    let (mut ll_fit, mut ll_uniform, mut cards) = (0.0, 0.0, 0usize);
    for (i, samples) in cells.iter().enumerate() {
        if samples.iter().all(|s| s.truth.is_empty()) {
            // No unknown cards, or no data (more cards than a five-card deal leaves): the row's
            // last fitted value stands for larger hands below.
            let u = i % LEAN_CARDS;
            if u > 0 {
                fitted[i] = fitted[i - 1];
            }
            continue;
        }
        let score = |lean: f64| samples.iter().map(|s| log_likelihood(s, lean)).sum::<f64>();
        let best = grid
            .iter()
            .copied()
            .max_by(|&a, &b| score(a).total_cmp(&score(b)))
            .unwrap_or(0.0);
        fitted[i] = best;
        ll_fit += score(best);
        ll_uniform += score(0.0);
        cards += samples.iter().map(|s| s.truth.len()).sum::<usize>();
    }
    println!("pub const LEAN: [[f64; LEAN_CARDS]; LEAN_THROWS] = [");
    for t in 0..LEAN_THROWS {
        let row: Vec<String> = (0..LEAN_CARDS)
            .map(|u| format!("{:.2}", fitted[t * LEAN_CARDS + u]))
            .collect();
        let counts: Vec<String> = (0..LEAN_CARDS)
            .map(|u| cells[t * LEAN_CARDS + u].len().to_string())
            .collect();
        println!("    [{}], // samples {}", row.join(", "), counts.join(" "));
    }
    println!("];");
    println!(
        "mean log-likelihood per unknown card: fitted {:.4}, uniform {:.4} ({cards} cards)",
        ll_fit / cards as f64,
        ll_uniform / cards as f64
    );
}
