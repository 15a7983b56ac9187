//! Benchmarks of random legal play: (a) applying pre-recorded actions of whole rounds (actions
//! per second), and (b) whole rounds per second including choosing random legal actions.
//!
//! Run with `cargo bench -p dhumbal-engine --bench play`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput};
use dhumbal_engine::{Action, Game, Phase, Preset};

/// A small deterministic generator (SplitMix64) for choosing actions.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A random legal action of the seat to play.
fn random_action(game: &Game, rng: &mut Rng) -> (usize, Action) {
    let seat = game.turn();
    let mut actions = game.legal_actions(seat);
    let i = rng.below(actions.len());
    (seat, actions.swap_remove(i))
}

/// Plays the current round to its end with random legal actions, returning the actions.
fn play_round(game: &mut Game, rng: &mut Rng) -> Vec<(usize, Action)> {
    let mut actions = Vec::new();
    while matches!(game.phase(), Phase::Start | Phase::Throw | Phase::Draw) {
        let (seat, action) = random_action(game, rng);
        game.apply(seat, action.clone()).expect("legal");
        actions.push((seat, action));
    }
    actions
}

/// Freshly dealt games and the recorded actions of one whole round of each.
fn recorded_rounds(preset: Preset, rounds: u64) -> Vec<(Game, Vec<(usize, Action)>)> {
    (0..rounds)
        .map(|i| {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&i.to_le_bytes());
            let start = Game::new(preset.settings(), seed).expect("valid preset");
            let mut game = start.clone();
            let actions = play_round(&mut game, &mut Rng(i));
            (start, actions)
        })
        .collect()
}

fn apply_only(c: &mut Criterion) {
    let mut group = c.benchmark_group("apply");
    for preset in Preset::ALL {
        let rounds = recorded_rounds(preset, 64);
        let actions: usize = rounds.iter().map(|(_, a)| a.len()).sum();
        group.throughput(Throughput::Elements(actions as u64));
        group.bench_function(preset.name(), |b| {
            b.iter_batched(
                || rounds.clone(),
                |rounds| {
                    // The games are returned so that dropping them is not measured.
                    let mut games = Vec::with_capacity(rounds.len());
                    for (mut game, actions) in rounds {
                        for (seat, action) in actions {
                            black_box(game.apply(seat, action).is_ok());
                        }
                        games.push(game);
                    }
                    games
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

fn whole_rounds(c: &mut Criterion) {
    let mut group = c.benchmark_group("round");
    group.throughput(Throughput::Elements(1));
    for preset in Preset::ALL {
        let starts: Vec<Game> = recorded_rounds(preset, 64)
            .into_iter()
            .map(|(game, _)| game)
            .collect();
        let mut rng = Rng(7);
        let mut i = 0;
        group.bench_function(preset.name(), |b| {
            b.iter_batched(
                || {
                    i = (i + 1) % starts.len();
                    starts[i].clone()
                },
                |mut game| black_box(play_round(&mut game, &mut rng).len()),
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    apply_only(&mut criterion);
    whole_rounds(&mut criterion);
    criterion.final_summary();
}
