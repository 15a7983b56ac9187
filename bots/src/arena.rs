//! Playing bots against each other, and the statistics of many matches.
//!
//! [`play_match`] plays one match between bots and returns the finished game. [`run`] plays many,
//! on several threads, rotating the entries round the table so that no entry keeps a seat: match
//! `g` puts entry `i` in seat `(i + g) mod n`, and the `n` matches of one rotation share one deal
//! seed, so every entry plays every seat's cards of the same deals (duplicate play, which also
//! narrows the confidence intervals). [`Summary`] holds what the `arena` binary prints: per
//! entry the mean score per round, the same per seat (counted from the dealer's left, since seats
//! differ), calls and how often they were caught, and how long each decision took;
//! [`Summary::margin`] compares two groups of entries with a paired confidence interval.
//!
//! Identical deterministic bots rotated over the same deals come out exactly equal, which proves
//! nothing: compare different bots, interleaved (`expert,hard,hard,hard` or
//! `hard,hard,expert,expert`), and read the per-seat figures. [`run_with`] builds the bots with
//! any factory, so a variant of a bot can be measured without becoming a difficulty.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use dhumbal_engine::{
    Action, Difficulty, Ending, Game, Phase, RuleError, Scoring, SeatView, Seed, Settings,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::{Bot, new_bot};

/// The most rounds [`play_match`] plays before it gives up on a match that does not end.
pub const MAX_MATCH_ROUNDS: u32 = 10_000;

/// Why a match between bots could not be played to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchError {
    /// A bot chose an action the game refused (a bot bug).
    Refused {
        /// The seat whose bot chose it.
        seat: usize,
        /// The action.
        action: Action,
        /// Why the game refused it.
        error: RuleError,
    },
    /// The settings are not playable.
    Settings(dhumbal_engine::SettingsError),
    /// The match ran past [`MAX_MATCH_ROUNDS`].
    TooLong,
}

impl std::fmt::Display for MatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatchError::Refused {
                seat,
                action,
                error,
            } => write!(f, "seat {seat} chose {action:?}, refused: {error}"),
            MatchError::Settings(e) => write!(f, "unplayable settings: {e}"),
            MatchError::TooLong => write!(f, "the match ran past {MAX_MATCH_ROUNDS} rounds"),
        }
    }
}

impl std::error::Error for MatchError {}

/// Plays `game` to its end with `bots[seat]` playing each seat, telling every bot every public
/// event (the opening deal included) and asking each only for its own turns.
pub fn play_out(game: &mut Game, bots: &mut [Box<dyn Bot>]) -> Result<(), MatchError> {
    play_out_timed(game, bots, &mut [])
}

/// [`play_out`], adding how long each decision of seat `s` took, in microseconds, to
/// `times[s]` (seats beyond `times` are not timed).
pub fn play_out_timed(
    game: &mut Game,
    bots: &mut [Box<dyn Bot>],
    times: &mut [Vec<f32>],
) -> Result<(), MatchError> {
    play_out_watched(game, bots, |decided| {
        if let Some(times) = times.get_mut(decided.seat) {
            times.push(decided.micros);
        }
    })
}

/// One decision of a match that [`play_out_watched`] plays: the game as the seat decided (its
/// action not yet applied, so every hand is as it was), the seat, its view, what its bot chose
/// and how long the choice took.
#[derive(Clone, Copy, Debug)]
pub struct Decided<'a> {
    /// The game before the action.
    pub game: &'a Game,
    /// The seat that decided.
    pub seat: usize,
    /// Its view, as its bot saw it.
    pub view: &'a SeatView,
    /// What its bot chose.
    pub action: &'a Action,
    /// How long the choice took, in microseconds.
    pub micros: f32,
}

/// [`play_out`], showing `watch` every decision before it is applied: the loop that the arena,
/// the examples that record decisions and the decision bench share.
pub fn play_out_watched(
    game: &mut Game,
    bots: &mut [Box<dyn Bot>],
    mut watch: impl FnMut(Decided<'_>),
) -> Result<(), MatchError> {
    for event in game.log() {
        for bot in bots.iter_mut() {
            bot.observe(event);
        }
    }
    while !game.is_over() {
        if game.phase() == Phase::RoundOver {
            if game.round() >= MAX_MATCH_ROUNDS {
                return Err(MatchError::TooLong);
            }
            let events = game.next_round().expect("the round is over");
            for event in &events {
                for bot in bots.iter_mut() {
                    bot.observe(event);
                }
            }
            continue;
        }
        let seat = game.turn();
        let view = game.view(seat);
        let started = Instant::now();
        let action = bots[seat].choose(&view, game.public_history());
        watch(Decided {
            game,
            seat,
            view: &view,
            action: &action,
            micros: started.elapsed().as_secs_f32() * 1e6,
        });
        let events = game
            .apply(seat, action.clone())
            .map_err(|error| MatchError::Refused {
                seat,
                action,
                error,
            })?;
        for event in &events {
            for bot in bots.iter_mut() {
                bot.observe(event);
            }
        }
    }
    Ok(())
}

/// Plays one match of `settings` from `seed` with `bots[seat]` in each seat.
pub fn play_match(
    settings: &Settings,
    seed: Seed,
    bots: &mut [Box<dyn Bot>],
) -> Result<Game, MatchError> {
    let mut game = Game::new(settings.clone(), seed).map_err(MatchError::Settings)?;
    play_out(&mut game, bots)?;
    Ok(game)
}

/// What to play in [`run`].
#[derive(Clone, Debug)]
pub struct Config {
    /// The table (its `players` must equal the number of entries).
    pub settings: Settings,
    /// The bots, one per seat before rotation.
    pub entries: Vec<Difficulty>,
    /// How many matches.
    pub games: u64,
    /// The seed every deal and every bot's seed derive from.
    pub seed: u64,
    /// How many threads play.
    pub threads: usize,
}

/// One entry's tallies over many matches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Rounds played (rounds it was still in the match for).
    pub rounds: u64,
    /// Matches played.
    pub matches: u64,
    /// The sum of its round scores, signed so that higher is better: Paid in settlement
    /// scoring, minus the points added in cumulative scoring.
    pub score: f64,
    /// Per match: (rounds, score) — for the confidence interval, which treats matches as the
    /// independent units.
    per_match: Vec<(f64, f64)>,
    /// Matches won; a first place shared by k seats counts 1/k.
    pub wins: f64,
    /// Calls it made.
    pub calls: u64,
    /// Calls it made and was caught on.
    pub caught: u64,
    /// Per seat counted from the dealer's left in the table's direction (0 is the seat after the
    /// dealer, `n - 1` the dealer):
    /// (rounds, score).
    pub by_seat: Vec<(u64, f64)>,
    /// How long each of its decisions took, in microseconds (unordered).
    pub decision_us: Vec<f32>,
}

impl Tally {
    /// The mean score per round, higher is better.
    pub fn mean(&self) -> f64 {
        self.score / self.rounds.max(1) as f64
    }

    /// The half-width of the 95% confidence interval of [`Tally::mean`], from the spread of the
    /// per-match means (a ratio estimator with matches as the units).
    pub fn ci95(&self) -> f64 {
        let n = self.per_match.len() as f64;
        if n < 2.0 {
            return f64::INFINITY;
        }
        let mean = self.mean();
        let rounds_mean = self.rounds as f64 / n;
        let ss: f64 = self
            .per_match
            .iter()
            .map(|&(r, s)| ((s - mean * r) / rounds_mean).powi(2))
            .sum();
        1.96 * (ss / (n * (n - 1.0))).sqrt()
    }

    /// The mean score per round in seat `k` from the dealer's left, if it sat there.
    pub fn seat_mean(&self, k: usize) -> Option<f64> {
        self.by_seat
            .get(k)
            .filter(|(r, _)| *r > 0)
            .map(|&(r, s)| s / r as f64)
    }

    /// The `q` quantile (0 to 1) of its decision times, in microseconds (0 with none).
    pub fn decision_quantile(&self, q: f64) -> f64 {
        if self.decision_us.is_empty() {
            return 0.0;
        }
        let mut sorted = self.decision_us.clone();
        sorted.sort_by(f32::total_cmp);
        f64::from(sorted[((sorted.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize])
    }

    /// The share of matches it won.
    pub fn win_rate(&self) -> f64 {
        self.wins / self.matches.max(1) as f64
    }

    fn merge(&mut self, other: Tally) {
        self.rounds += other.rounds;
        self.matches += other.matches;
        self.score += other.score;
        self.per_match.extend(other.per_match);
        self.wins += other.wins;
        self.calls += other.calls;
        self.caught += other.caught;
        if self.by_seat.len() < other.by_seat.len() {
            self.by_seat.resize(other.by_seat.len(), (0, 0.0));
        }
        for (sum, part) in self.by_seat.iter_mut().zip(other.by_seat) {
            sum.0 += part.0;
            sum.1 += part.1;
        }
        self.decision_us.extend(other.decision_us);
    }
}

/// Everything [`run`] measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Per entry, in the order of [`Config::entries`].
    pub tallies: Vec<Tally>,
    /// Matches played.
    pub matches: u64,
    /// Rounds played.
    pub rounds: u64,
    /// Rounds ended by the throw cap.
    pub throw_cap_rounds: u64,
}

impl Summary {
    /// The mean score per round of the entries in `a` less that of the entries in `b`, with the
    /// half-width of its 95% confidence interval. Matches are the units: every entry played the
    /// same matches, so the difference is taken within each match (paired), which removes the
    /// deals' luck.
    pub fn margin(&self, a: &[usize], b: &[usize]) -> (f64, f64) {
        let pooled = |group: &[usize]| {
            let matches = self.tallies.first().map_or(0, |t| t.per_match.len());
            let per_match: Vec<(f64, f64)> = (0..matches)
                .map(|g| {
                    group.iter().fold((0.0, 0.0), |(r, s), &e| {
                        let (er, es) = self.tallies[e].per_match[g];
                        (r + er, s + es)
                    })
                })
                .collect();
            let rounds: f64 = per_match.iter().map(|p| p.0).sum();
            let score: f64 = per_match.iter().map(|p| p.1).sum();
            (per_match, score / rounds.max(1.0), rounds)
        };
        let (pa, ma, ra) = pooled(a);
        let (pb, mb, rb) = pooled(b);
        let n = pa.len() as f64;
        if n < 2.0 {
            return (ma - mb, f64::INFINITY);
        }
        let (ra, rb) = (ra / n, rb / n);
        let ss: f64 = pa
            .iter()
            .zip(&pb)
            .map(|(&(r1, s1), &(r2, s2))| ((s1 - ma * r1) / ra - (s2 - mb * r2) / rb).powi(2))
            .sum();
        (ma - mb, 1.96 * (ss / (n * (n - 1.0))).sqrt())
    }
}

/// A 32-byte seed drawn from `(seed, a, b)`.
fn derive(seed: u64, a: u64, b: u64) -> Seed {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&a.to_le_bytes());
    key[16..24].copy_from_slice(&b.to_le_bytes());
    let mut out = [0u8; 32];
    ChaCha20Rng::from_seed(key).fill_bytes(&mut out);
    out
}

/// Plays match `g` of `config` with bots from `make(entry, seed)` and adds it to `summary`.
fn play_one(
    config: &Config,
    make: &(impl Fn(usize, u64) -> Box<dyn Bot> + Sync),
    g: u64,
    summary: &mut Summary,
) -> Result<(), MatchError> {
    let n = config.entries.len();
    let rotation = (g % n as u64) as usize;
    let deal_seed = derive(config.seed, g / n as u64, 0);
    // entry i sits at seat (i + rotation) mod n.
    let entry_at = |seat: usize| (seat + n - rotation) % n;
    let mut bots: Vec<Box<dyn Bot>> = (0..n)
        .map(|seat| {
            let entry = entry_at(seat);
            let bot_seed = u64::from_le_bytes(
                derive(config.seed, g, 1 + entry as u64)[..8]
                    .try_into()
                    .expect("8 bytes"),
            );
            make(entry, bot_seed)
        })
        .collect();
    let mut game = Game::new(config.settings.clone(), deal_seed).map_err(MatchError::Settings)?;
    let mut times = vec![Vec::new(); n];
    play_out_timed(&mut game, &mut bots, &mut times)?;
    for (seat, times) in times.into_iter().enumerate() {
        summary.tallies[entry_at(seat)].decision_us.extend(times);
    }
    let sign = match config.settings.scoring {
        Scoring::Settlement => 1.0,
        Scoring::Cumulative => -1.0,
    };
    let mut per_entry = vec![(0.0, 0.0); n];
    for result in game.results() {
        summary.rounds += 1;
        if result.ending == Ending::ThrowCap {
            summary.throw_cap_rounds += 1;
        }
        for seat in (0..n).filter(|&s| result.active[s]) {
            let tally = &mut summary.tallies[entry_at(seat)];
            tally.rounds += 1;
            let score = sign * result.paid[seat] as f64;
            tally.score += score;
            // Counted in the table's direction: 0 is the seat after the dealer.
            let from_left = config
                .settings
                .direction
                .seats_after(result.dealer, n)
                .position(|s| s == seat)
                .expect("every seat is met once");
            if tally.by_seat.len() < n {
                tally.by_seat.resize(n, (0, 0.0));
            }
            tally.by_seat[from_left].0 += 1;
            tally.by_seat[from_left].1 += score;
            per_entry[entry_at(seat)].0 += 1.0;
            per_entry[entry_at(seat)].1 += score;
        }
        if let Ending::Call { caller, caught } = result.ending {
            let tally = &mut summary.tallies[entry_at(caller)];
            tally.calls += 1;
            tally.caught += u64::from(caught);
        }
    }
    let standings = game.standings();
    let first = standings.iter().filter(|s| s.place == 1).count() as f64;
    for standing in &standings {
        if standing.place == 1 {
            summary.tallies[entry_at(standing.seat)].wins += 1.0 / first;
        }
    }
    for (entry, tally) in summary.tallies.iter_mut().enumerate() {
        tally.matches += 1;
        tally.per_match.push(per_entry[entry]);
    }
    summary.matches += 1;
    Ok(())
}

/// Plays `config.games` matches on `config.threads` threads, calling `progress` with the number
/// of matches finished after each one.
pub fn run(config: &Config, progress: impl Fn(u64) + Sync) -> Result<Summary, MatchError> {
    run_with(
        config,
        |entry, seed| new_bot(config.entries[entry], seed),
        progress,
    )
}

/// [`run`] with the bots built by `make(entry, seed)` instead of from [`Config::entries`]
/// (whose length still gives the number of seats): for measuring variants of a bot.
pub fn run_with(
    config: &Config,
    make: impl Fn(usize, u64) -> Box<dyn Bot> + Sync,
    progress: impl Fn(u64) + Sync,
) -> Result<Summary, MatchError> {
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let total = Mutex::new(Summary {
        tallies: vec![Tally::default(); config.entries.len()],
        ..Summary::default()
    });
    let failure: Mutex<Option<MatchError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..config.threads.max(1) {
            scope.spawn(|| {
                let mut local = Summary {
                    tallies: vec![Tally::default(); config.entries.len()],
                    ..Summary::default()
                };
                loop {
                    let g = next.fetch_add(1, Ordering::Relaxed);
                    if g >= config.games || failure.lock().expect("no panics").is_some() {
                        break;
                    }
                    if let Err(e) = play_one(config, &make, g, &mut local) {
                        *failure.lock().expect("no panics") = Some(e);
                        break;
                    }
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                }
                let mut total = total.lock().expect("no panics");
                total.matches += local.matches;
                total.rounds += local.rounds;
                total.throw_cap_rounds += local.throw_cap_rounds;
                for (sum, part) in total.tallies.iter_mut().zip(local.tallies) {
                    sum.merge(part);
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("no panics") {
        return Err(e);
    }
    Ok(total.into_inner().expect("no panics"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::Preset;

    #[test]
    fn a_small_run_adds_up() {
        let config = Config {
            settings: Preset::Standard.settings(),
            entries: vec![
                Difficulty::Hard,
                Difficulty::Medium,
                Difficulty::Easy,
                Difficulty::Easy,
            ],
            games: 8,
            seed: 1,
            threads: 2,
        };
        let summary = run(&config, |_| {}).unwrap();
        assert_eq!(summary.matches, 8);
        assert_eq!(summary.rounds, 24);
        // Settlement is zero-sum.
        let sum: f64 = summary.tallies.iter().map(|t| t.score).sum();
        assert!(sum.abs() < 1e-9);
        let wins: f64 = summary.tallies.iter().map(|t| t.wins).sum();
        assert!((wins - 8.0).abs() < 1e-9);
        // The same seed gives the same figures, whatever the threads.
        let again = run(
            &Config {
                threads: 1,
                ..config
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(again.rounds, summary.rounds);
        for (a, b) in again.tallies.iter().zip(&summary.tallies) {
            assert_eq!((a.score, a.calls, a.caught), (b.score, b.calls, b.caught));
        }
    }
}
