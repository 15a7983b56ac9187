//! What a `state` message costs the server: building one seat's view and writing it as JSON, at
//! positions taken from random play through whole matches. `state` is sent to every seat after
//! every action, so this is the per-seat, per-action cost of telling the table what happened.
//!
//! `with_history` is the same message carrying the round's log and the match's results as well,
//! which protocol 1 sent in every state; `without_history` is protocol 2's state. Each prints the
//! mean size of its messages once.
//!
//! Run with `cargo bench -p dhumbal-protocol --bench state`.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use dhumbal_engine::{Game, Phase, Preset, Rounds, Settings};
use dhumbal_protocol::ServerMessage;

/// A small deterministic generator (SplitMix64) for choosing actions.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// Every 7th position of random legal play through a whole three-round match of `preset`.
fn positions(preset: Preset) -> Vec<Game> {
    let settings = Settings {
        rounds: Rounds::Fixed(3),
        ..preset.settings()
    };
    let mut game = Game::new(settings, [7; 32]).expect("valid settings");
    let mut rng = Rng(2026);
    let mut out = Vec::new();
    for step in 0usize.. {
        match game.phase() {
            Phase::MatchOver => break,
            Phase::RoundOver => {
                game.next_round().expect("the round is over");
            }
            _ => {
                if step % 7 == 0 {
                    out.push(game.clone());
                }
                let seat = game.turn();
                let mut actions = game.legal_actions(seat);
                let action = actions.swap_remove(rng.below(actions.len()));
                game.apply(seat, action).expect("a legal action");
            }
        }
    }
    out
}

/// What protocol 1 paid for a state: the whole view, its log and results included, as JSON.
fn with_history(game: &Game, seat: usize) -> String {
    let view = game.view(seat);
    serde_json::to_string(&(&view, game.log(), game.results())).expect("JSON")
}

fn bench(c: &mut Criterion) {
    let games = positions(Preset::Standard);
    let seats = games[0].seats();
    let messages = (games.len() * seats) as u64;
    let mean = |f: &dyn Fn(&Game, usize) -> usize| {
        let total: usize = games
            .iter()
            .flat_map(|g| (0..seats).map(move |s| (g, s)))
            .map(|(g, s)| f(g, s))
            .sum();
        total / (games.len() * seats)
    };
    println!(
        "{} positions x {seats} seats; mean bytes: without_history {}, with_history {}",
        games.len(),
        mean(&|g, s| ServerMessage::state(g, Some(s), None, 0).to_json().len()),
        mean(&|g, s| with_history(g, s).len()),
    );
    let mut group = c.benchmark_group("state_message");
    group.throughput(Throughput::Elements(messages));
    group.bench_function("without_history", |b| {
        b.iter(|| {
            for game in &games {
                for seat in 0..seats {
                    black_box(ServerMessage::state(game, Some(seat), None, 0).to_json());
                }
            }
        });
    });
    group.bench_function("with_history", |b| {
        b.iter(|| {
            for game in &games {
                for seat in 0..seats {
                    black_box(with_history(game, seat));
                }
            }
        });
    });
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
