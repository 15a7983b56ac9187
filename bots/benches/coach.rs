//! What the coach costs: a hint (one decision weighed, [`CoachParams::HINT`]) and a review of
//! one seat's three-round match ([`CoachParams::REVIEW`]), at every preset.
//!
//! Plain timing loops on one thread (the coach's work is single-threaded, so wall time on an
//! idle core is its CPU time); it prints figures and asserts nothing. Run it with
//! `cargo bench -p dhumbal-bots --bench coach`. The targets: a hint within 100 ms at the
//! 99th percentile, a review of a three-round match within 2 s of CPU.

use std::hint::black_box;
use std::time::{Duration, Instant};

use dhumbal_bots::arena::play_match;
use dhumbal_bots::coach::{CoachParams, advise, review};
use dhumbal_bots::{Bot, new_bot};
use dhumbal_engine::{
    Difficulty, HandHistory, Preset, PublicHistory, Rounds, SeatView, Settings, replay,
};

/// Seats' difficulties round the table.
const SEATS: [Difficulty; 4] = [
    Difficulty::Easy,
    Difficulty::Medium,
    Difficulty::Hard,
    Difficulty::Expert,
];

/// Plays a seeded three-round match of `settings`; returns its hand history and every view a
/// seat decided from, with the public history then (read back through the engine's replay).
fn play(settings: &Settings, seed: u8) -> (HandHistory, Vec<(SeatView, PublicHistory)>) {
    let settings = Settings {
        rounds: Rounds::Fixed(3),
        elimination: None,
        ..settings.clone()
    };
    let mut bots: Vec<Box<dyn Bot>> = (0..settings.players)
        .map(|s| new_bot(SEATS[usize::from(s) % SEATS.len()], u64::from(s)))
        .collect();
    let game = play_match(&settings, [seed; 32], &mut bots).expect("bots play legally");
    let record = game.hand_history().expect("a fair match's history");
    let mut points = Vec::new();
    replay(&record, |game, step| {
        points.push((game.view(step.seat), game.public_history().clone()));
    })
    .expect("it replays");
    (record, points)
}

/// The value at quantile `q` of sorted `times`.
fn at(times: &[Duration], q: f64) -> Duration {
    times[((times.len() - 1) as f64 * q).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    println!(
        "| preset | hints timed | p50 (ms) | p99 (ms) | max (ms) | reviews | mean (s) | max (s) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for preset in Preset::ALL {
        let settings = preset.settings();
        let mut hints = Vec::new();
        let mut reviews = Vec::new();
        for seed in 0..3u8 {
            let (record, points) = play(&settings, seed);
            for (k, (view, history)) in points.iter().enumerate() {
                let started = Instant::now();
                black_box(advise(view, history, None, &CoachParams::HINT, k as u64));
                hints.push(started.elapsed());
            }
            for seat in 0..usize::from(settings.players) {
                let started = Instant::now();
                black_box(review(&record, seat, &CoachParams::REVIEW).expect("it replays"));
                reviews.push(started.elapsed());
            }
        }
        hints.sort();
        let mean = reviews.iter().sum::<Duration>() / reviews.len() as u32;
        let max = reviews.iter().max().copied().unwrap_or_default();
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {} | {:.2} | {:.2} |",
            preset.name(),
            hints.len(),
            ms(at(&hints, 0.5)),
            ms(at(&hints, 0.99)),
            ms(at(&hints, 1.0)),
            reviews.len(),
            mean.as_secs_f64(),
            max.as_secs_f64(),
        );
    }
}
