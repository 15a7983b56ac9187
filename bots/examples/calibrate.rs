//! How far to trust the review's "points lost": plays arena matches, reviews every seat
//! ([`judge_match`], the review's own rule), and for each flagged decision (and a random share of
//! the unflagged ones) replays the match to that decision's real game state (the true stock and
//! hands), plays the rest of the round out `--plays` times with the move made and as many times
//! with the coach's best, with fresh bots of the table's difficulties and the same bot seeds in
//! both branches, and compares the measured difference of the seat's round score with the
//! review's estimate. Each sampled decision is also weighed a second time, on fresh samples
//! ([`reweigh`]), to measure the winner's curse. Flags here are the first estimate's (the
//! review's rule with [`CoachParams::recheck`] off), so every decision the review weighs again
//! is in the sample; "kept" counts those whose re-estimate stays at `flag_at` or more, as the
//! review's re-check keeps them (with the example's own seeds for the second samples).
//!
//! ```text
//! cargo run --release -p dhumbal-bots --example calibrate -- --preset standard --matches 200 \
//!     --seed 1 --seats easy,medium,hard,expert --plays 8 --share 0.1 --threads 1 [--json]
//! ```
//!
//! Scores are in the coach's unit ([`round_value`]): Paid at a settlement table, minus the points
//! taken at a cumulative one. A loss is the best's score less the made move's.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use dhumbal_bots::arena::play_match;
use dhumbal_bots::coach::{CoachParams, Judged, Move, judge_match, reweigh, round_value};
use dhumbal_bots::{Bot, new_bot};
use dhumbal_engine::{Action, Difficulty, Game, HandHistory, Phase, Preset, Settings, replay};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The command line.
#[derive(Clone, Debug)]
struct Options {
    preset: Preset,
    matches: u64,
    seed: u64,
    seats: Vec<Difficulty>,
    plays: u32,
    share: f64,
    threads: usize,
    json: bool,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        preset: Preset::Standard,
        matches: 20,
        seed: 1,
        seats: vec![
            Difficulty::Easy,
            Difficulty::Medium,
            Difficulty::Hard,
            Difficulty::Expert,
        ],
        plays: 8,
        share: 0.1,
        threads: 1,
        json: false,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        if arg == "--json" {
            options.json = true;
            continue;
        }
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        let bad = |_| format!("bad {arg}: `{value}`");
        match arg.as_str() {
            "--preset" => {
                options.preset =
                    Preset::from_name(&value).ok_or(format!("unknown preset {value}"))?;
            }
            "--matches" => options.matches = value.parse().map_err(bad)?,
            "--seed" => options.seed = value.parse().map_err(bad)?,
            "--plays" => options.plays = value.parse().map_err(bad)?,
            "--threads" => options.threads = value.parse::<usize>().map_err(bad)?.max(1),
            "--share" => {
                options.share = value.parse().map_err(|_| format!("bad {arg}: `{value}`"))?
            }
            "--seats" => {
                options.seats = value
                    .split(',')
                    .map(|name| {
                        [
                            Difficulty::Easy,
                            Difficulty::Medium,
                            Difficulty::Hard,
                            Difficulty::Expert,
                        ]
                        .into_iter()
                        .find(|d| d.name() == name)
                        .ok_or(format!("unknown bot `{name}`"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            _ => return Err(format!("unknown argument `{arg}`")),
        }
    }
    Ok(options)
}

/// A number drawn from the parts (SplitMix64 over them), for seeds.
fn mix(parts: &[u64]) -> u64 {
    let mut z = 0x9e37_79b9_7f4a_7c15u64;
    for &p in parts {
        z = z.wrapping_add(p).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
    }
    z
}

/// Applies `first` for the seat to play in `game` (a copy), then plays the rest of the round
/// with fresh bots `seats[s]` seeded `seeds[s]`, told the round's public log first as the arena
/// tells them; returns `seat`'s score for the round in the coach's unit.
fn play_rest(
    game: &Game,
    first: &Action,
    seat: usize,
    seats: &[Difficulty],
    seeds: &[u64],
) -> Result<f64, String> {
    let mut game = game.clone();
    let rounds = game.results().len();
    game.apply(game.turn(), first.clone())
        .map_err(|e| format!("{first:?} refused: {e}"))?;
    let mut bots: Vec<Box<dyn Bot>> = seats
        .iter()
        .zip(seeds)
        .map(|(&d, &s)| new_bot(d, s))
        .collect();
    for event in game.log() {
        for bot in &mut bots {
            bot.observe(event);
        }
    }
    while matches!(game.phase(), Phase::Start | Phase::Throw | Phase::Draw) {
        let turn = game.turn();
        let action = bots[turn].choose(&game.view(turn), game.public_history());
        let events = game
            .apply(turn, action.clone())
            .map_err(|e| format!("a bot's {action:?} refused: {e}"))?;
        for event in &events {
            for bot in &mut bots {
                bot.observe(event);
            }
        }
    }
    let result = game
        .results()
        .get(rounds)
        .ok_or("the round did not end with a result")?;
    Ok(round_value(result, seat, game.settings().scoring))
}

/// The scores of `made` and of `best` at the real game state `game` (for the seat to play):
/// the rest of the round played `plays` times after each, play `i` of both with the same bot
/// seeds (drawn from `seed` and `i`). Returns each play's (score after `made`, score after
/// `best`).
fn measure_pairs(
    game: &Game,
    made: &Action,
    best: &Action,
    seats: &[Difficulty],
    plays: u32,
    seed: u64,
) -> Result<Vec<(f64, f64)>, String> {
    let seat = game.turn();
    (0..plays)
        .map(|i| {
            let seeds: Vec<u64> = (0..seats.len())
                .map(|s| mix(&[seed, u64::from(i), s as u64]))
                .collect();
            let a = play_rest(game, made, seat, seats, &seeds)?;
            let b = play_rest(game, best, seat, seats, &seeds)?;
            Ok((a, b))
        })
        .collect()
}

/// The measured loss of `made` against `best` ([`measure_pairs`]): each play's score after
/// `best` less the score after `made`.
#[cfg(test)]
fn measure(
    game: &Game,
    made: &Action,
    best: &Action,
    seats: &[Difficulty],
    plays: u32,
    seed: u64,
) -> Result<Vec<f64>, String> {
    Ok(measure_pairs(game, made, best, seats, plays, seed)?
        .into_iter()
        .map(|(a, b)| b - a)
        .collect())
}

/// One decision calibrated.
#[derive(Clone, Debug, serde::Serialize)]
struct Sample {
    /// The deciding bot.
    bot: &'static str,
    flagged: bool,
    /// What kind of move was made and which the coach found best, as `made→best`.
    kinds: String,
    /// The move made was the coach's best (estimate and measured loss 0 by construction).
    best_made: bool,
    estimate: f64,
    error: f64,
    reestimate: f64,
    reerror: f64,
    measured: f64,
    /// The standard deviation of the plays' differences about `measured` (0 when every play
    /// of the decision ended alike).
    spread: f64,
    /// The first estimate's expected scores after the move made and after the best, and the
    /// measured means of both.
    values: [f64; 4],
}

/// What one match gave.
#[derive(Default)]
struct MatchOut {
    rounds: u64,
    /// Per difficulty (easy to expert): decisions weighed, flagged.
    weighed: [u64; 4],
    flagged: [u64; 4],
    samples: Vec<Sample>,
    /// Decisions whose best move the engine refused (should be none).
    refused: u64,
}

/// A move's kind: call, stock, pile or throw.
fn kind(play: &Move) -> &'static str {
    match play {
        Move::Call => "call",
        Move::Draw { card: None } => "stock",
        Move::Draw { card: Some(_) } => "pile",
        Move::Throw { .. } => "throw",
    }
}

fn index(d: Difficulty) -> usize {
    match d {
        Difficulty::Easy => 0,
        Difficulty::Medium => 1,
        Difficulty::Hard => 2,
        Difficulty::Expert => 3,
    }
}

/// The seats of match `g`: entry `i` sits in seat `(i + g) mod n`, as in the arena.
fn seats_of(entries: &[Difficulty], g: u64) -> Vec<Difficulty> {
    let n = entries.len();
    (0..n)
        .map(|s| entries[(s + n - (g % n as u64) as usize) % n])
        .collect()
}

/// Plays match `g`, judges every seat and calibrates the sampled decisions.
fn calibrate_match(settings: &Settings, options: &Options, g: u64) -> Result<MatchOut, String> {
    let seats = seats_of(&options.seats, g);
    let mut deal = [0u8; 32];
    ChaCha8Rng::seed_from_u64(mix(&[options.seed, g, 0])).fill(&mut deal);
    let mut bots: Vec<Box<dyn Bot>> = seats
        .iter()
        .enumerate()
        .map(|(s, &d)| new_bot(d, mix(&[options.seed, g, 1 + s as u64])))
        .collect();
    let game = play_match(settings, deal, &mut bots).map_err(|e| e.to_string())?;
    let record: HandHistory = game.hand_history().ok_or("no hand history")?;
    // The first estimate decides the flags here: every decision it flags is calibrated (and
    // re-estimated below, as the review's re-check does, on samples of its own).
    let params = CoachParams {
        recheck: false,
        ..CoachParams::REVIEW
    };
    let mut out = MatchOut {
        rounds: record.rounds.len() as u64,
        ..MatchOut::default()
    };
    // The decisions to calibrate, by step.
    let mut wanted: Vec<Option<Judged>> = Vec::new();
    for (seat, &difficulty) in seats.iter().enumerate() {
        for judged in judge_match(&record, seat, &params)? {
            out.weighed[index(difficulty)] += 1;
            out.flagged[index(difficulty)] += u64::from(judged.flagged);
            let mut rng = ChaCha8Rng::seed_from_u64(mix(&[options.seed, g, 2, judged.step as u64]));
            if judged.flagged || rng.random_bool(options.share.clamp(0.0, 1.0)) {
                let at = judged.step;
                if wanted.len() <= at {
                    wanted.resize(at + 1, None);
                }
                wanted[at] = Some(judged);
            }
        }
    }
    let mut index_of_step = 0usize;
    let mut failure = None;
    replay(&record, |game, step| {
        let at = index_of_step;
        index_of_step += 1;
        let Some(Some(judged)) = wanted.get(at) else {
            return;
        };
        let difficulty = seats[step.seat];
        let best_made = judged.best.same(&judged.chose);
        let (reestimate, reerror, measured, spread, scores) = if best_made {
            (0.0, 0.0, 0.0, 0.0, (0.0, 0.0))
        } else {
            let view = game.view(step.seat);
            let (re, re_error) = reweigh(
                &view,
                game.public_history(),
                &judged.best,
                &judged.chose,
                &params,
                mix(&[options.seed, g, 3, at as u64]),
            );
            let seed = mix(&[options.seed, g, 4, at as u64]);
            match measure_pairs(
                game,
                &step.action,
                &judged.best.action(),
                &seats,
                options.plays,
                seed,
            ) {
                Ok(pairs) => {
                    let n = pairs.len().max(1) as f64;
                    let diffs: Vec<f64> = pairs.iter().map(|(a, b)| b - a).collect();
                    let m = diffs.iter().sum::<f64>() / n;
                    let var =
                        diffs.iter().map(|d| (d - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
                    let made = pairs.iter().map(|p| p.0).sum::<f64>() / n;
                    let best = pairs.iter().map(|p| p.1).sum::<f64>() / n;
                    (re, re_error, m, var.sqrt(), (made, best))
                }
                Err(why) => {
                    out.refused += 1;
                    failure.get_or_insert(why);
                    return;
                }
            }
        };
        out.samples.push(Sample {
            bot: difficulty.name(),
            flagged: judged.flagged,
            kinds: format!("{}→{}", kind(&judged.chose), kind(&judged.best)),
            best_made,
            estimate: judged.cost.points(),
            error: judged.error.points(),
            reestimate,
            reerror,
            measured,
            spread,
            values: [
                judged.value_chose.points(),
                scores.0,
                judged.value_best.points(),
                scores.1,
            ],
        });
    })?;
    if let Some(why) = failure {
        eprintln!("match {g}: {why}");
    }
    Ok(out)
}

/// The loss bins' lower edges (the last is open).
const EDGES: [f64; 6] = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0];

fn bin_label(b: usize) -> String {
    match b {
        0 if EDGES.len() > 1 => "< 0.5".into(),
        b if b + 1 < EDGES.len() => format!("{}–{}", EDGES[b], EDGES[b + 1]),
        b => format!("≥ {}", EDGES[b]),
    }
}

fn bin_of(x: f64) -> usize {
    EDGES.iter().rposition(|&e| x >= e).unwrap_or(0)
}

/// Mean and 95% half-width (normal, decisions as the units).
fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, f64::INFINITY);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 1.96 * (var / n).sqrt())
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    s / n.max(1) as f64
}

/// One row of a calibration table.
#[derive(serde::Serialize)]
struct Row {
    group: String,
    bin: String,
    count: usize,
    estimate: f64,
    reestimate: f64,
    measured: f64,
    ci95: f64,
}

fn row(group: &str, bin: String, samples: &[&Sample]) -> Row {
    let measured: Vec<f64> = samples.iter().map(|s| s.measured).collect();
    let (m, ci) = mean_ci(&measured);
    Row {
        group: group.into(),
        bin,
        count: samples.len(),
        estimate: mean(samples.iter().map(|s| s.estimate)),
        reestimate: mean(samples.iter().map(|s| s.reestimate)),
        measured: m,
        ci95: ci,
    }
}

/// The tables: by the first estimate (unflagged behind, flagged) and, for the flagged, by the
/// re-estimate.
fn tables(samples: &[Sample]) -> (Vec<Row>, Vec<Row>) {
    let mut by_estimate = Vec::new();
    for (group, flagged) in [("unflagged", false), ("flagged", true)] {
        for b in 0..EDGES.len() {
            let these: Vec<&Sample> = samples
                .iter()
                .filter(|s| s.flagged == flagged && !s.best_made && bin_of(s.estimate) == b)
                .collect();
            if !these.is_empty() {
                by_estimate.push(row(group, bin_label(b), &these));
            }
        }
    }
    let flagged: Vec<&Sample> = samples.iter().filter(|s| s.flagged).collect();
    by_estimate.push(row("flagged", "all".into(), &flagged));
    let mut by_reestimate = Vec::new();
    let negative: Vec<&Sample> = flagged
        .iter()
        .copied()
        .filter(|s| s.reestimate < 0.0)
        .collect();
    if !negative.is_empty() {
        by_reestimate.push(row("flagged", "< 0".into(), &negative));
    }
    for b in 0..EDGES.len() {
        let these: Vec<&Sample> = flagged
            .iter()
            .copied()
            .filter(|s| s.reestimate >= 0.0 && bin_of(s.reestimate) == b)
            .collect();
        if !these.is_empty() {
            let label = if b == 0 {
                "0–0.5".into()
            } else {
                bin_label(b)
            };
            by_reestimate.push(row("flagged", label, &these));
        }
    }
    (by_estimate, by_reestimate)
}

/// The flagged decisions by the kinds of the move made and the best, most common first.
fn by_kinds(samples: &[Sample]) -> Vec<Row> {
    let mut kinds: Vec<&str> = samples
        .iter()
        .filter(|s| s.flagged)
        .map(|s| s.kinds.as_str())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    let mut rows: Vec<Row> = kinds
        .into_iter()
        .map(|k| {
            let these: Vec<&Sample> = samples
                .iter()
                .filter(|s| s.flagged && s.kinds == k)
                .collect();
            row("flagged", k.to_owned(), &these)
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.count));
    rows
}

fn main() -> Result<(), String> {
    let options = parse(std::env::args().skip(1))?;
    let settings = Settings {
        players: options.seats.len() as u8,
        ..options.preset.settings()
    };
    settings.validate().map_err(|e| e.to_string())?;
    let started = Instant::now();
    let next = AtomicU64::new(0);
    let outs: Mutex<Vec<(u64, MatchOut)>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..options.threads {
            scope.spawn(|| {
                loop {
                    let g = next.fetch_add(1, Ordering::Relaxed);
                    if g >= options.matches {
                        break;
                    }
                    match calibrate_match(&settings, &options, g) {
                        Ok(out) => {
                            let mut outs = outs.lock().expect("not poisoned");
                            outs.push((g, out));
                            let done = outs.len();
                            if done % 10 == 0 || done as u64 == options.matches {
                                let rounds: u64 = outs.iter().map(|(_, o)| o.rounds).sum();
                                let samples: usize =
                                    outs.iter().map(|(_, o)| o.samples.len()).sum();
                                eprintln!(
                                    "{done}/{} matches, {rounds} rounds, {samples} decisions sampled, {:.0} s",
                                    options.matches,
                                    started.elapsed().as_secs_f64()
                                );
                            }
                        }
                        Err(why) => errors.lock().expect("not poisoned").push(why),
                    }
                }
            });
        }
    });
    let mut outs = outs.into_inner().expect("not poisoned");
    outs.sort_by_key(|(g, _)| *g);
    let errors = errors.into_inner().expect("not poisoned");
    for why in &errors {
        eprintln!("a match failed: {why}");
    }
    let rounds: u64 = outs.iter().map(|(_, o)| o.rounds).sum();
    let refused: u64 = outs.iter().map(|(_, o)| o.refused).sum();
    let mut weighed = [0u64; 4];
    let mut flagged = [0u64; 4];
    for (_, out) in &outs {
        for k in 0..4 {
            weighed[k] += out.weighed[k];
            flagged[k] += out.flagged[k];
        }
    }
    let played = outs.len();
    let samples: Vec<Sample> = outs.into_iter().flat_map(|(_, o)| o.samples).collect();
    let (by_estimate, by_reestimate) = tables(&samples);
    let kinds = by_kinds(&samples);
    let names = ["easy", "medium", "hard", "expert"];
    // Per bot: the flag rate, and the flags' first estimate, re-estimate and measured loss.
    let per_bot: Vec<serde_json::Value> = (0..4)
        .filter(|&k| weighed[k] > 0)
        .map(|k| {
            let flags: Vec<&Sample> = samples
                .iter()
                .filter(|s| s.flagged && s.bot == names[k])
                .collect();
            let measured: Vec<f64> = flags.iter().map(|s| s.measured).collect();
            let (m, ci) = mean_ci(&measured);
            let kept = flags
                .iter()
                .filter(|s| s.reestimate >= CoachParams::REVIEW.flag_at)
                .count();
            serde_json::json!({
                "bot": names[k],
                "weighed": weighed[k],
                "flagged": flagged[k],
                "rate": flagged[k] as f64 / weighed[k] as f64,
                "kept_by_reestimate": kept,
                "estimate": mean(flags.iter().map(|s| s.estimate)),
                "reestimate": mean(flags.iter().map(|s| s.reestimate)),
                "measured": m,
                "ci95": ci,
            })
        })
        .collect();
    let elapsed = started.elapsed().as_secs_f64();
    if options.json {
        let report = serde_json::json!({
            "preset": options.preset.name(),
            "seats": options.seats.iter().map(|d| d.name()).collect::<Vec<_>>(),
            "matches": played,
            "failed_matches": errors.len(),
            "rounds": rounds,
            "seed": options.seed,
            "plays": options.plays,
            "share": options.share,
            "refused": refused,
            "seconds": elapsed,
            "by_estimate": by_estimate,
            "flagged_by_reestimate": by_reestimate,
            "flagged_by_kinds": kinds,
            "per_bot": per_bot,
        });
        println!("{report:#}");
        return Ok(());
    }
    println!(
        "{} · seats {} · {played} matches ({} failed), {rounds} rounds · {} plays a branch, \
         share {} · seed {} · {elapsed:.0} s · best moves refused: {refused}",
        options.preset.name(),
        options
            .seats
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(","),
        errors.len(),
        options.plays,
        options.share,
        options.seed,
    );
    let best_made = samples.iter().filter(|s| s.best_made).count();
    let played_out: Vec<&Sample> = samples.iter().filter(|s| !s.best_made).collect();
    println!(
        "\nDecisions played out: {} · spread of one decision's plays (sd of the differences): \
         mean {:.2}; all plays alike in {} of them",
        played_out.len(),
        mean(played_out.iter().map(|s| s.spread)),
        played_out.iter().filter(|s| s.spread == 0.0).count()
    );
    println!(
        "\nSampled decisions whose move was the coach's best (loss 0 by construction): {best_made}"
    );
    println!("\nBy the review's estimate (loss = best's score − the move's, points a round):\n");
    println!(
        "| decisions | estimate | n | mean estimate | mean re-estimate | mean measured | 95% |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in &by_estimate {
        println!(
            "| {} | {} | {} | {:.2} | {:.2} | {:.2} | ±{:.2} |",
            r.group, r.bin, r.count, r.estimate, r.reestimate, r.measured, r.ci95
        );
    }
    println!("\nFlagged decisions by the re-estimate (fresh samples, the same two moves):\n");
    println!("| re-estimate | n | mean estimate | mean re-estimate | mean measured | 95% |");
    println!("|---|---|---|---|---|---|");
    for r in &by_reestimate {
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | ±{:.2} |",
            r.bin, r.count, r.estimate, r.reestimate, r.measured, r.ci95
        );
    }
    println!("\nFlagged decisions by the move made → the coach's best:\n");
    println!("| made → best | n | mean estimate | mean re-estimate | mean measured | 95% |");
    println!("|---|---|---|---|---|---|");
    for r in &kinds {
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | ±{:.2} |",
            r.bin, r.count, r.estimate, r.reestimate, r.measured, r.ci95
        );
    }
    println!(
        "\nFlagged decisions by the move made → the coach's best: each branch's score for the \
         round, as the coach expected it and as measured:\n"
    );
    println!(
        "| made → best | n | made: expected | made: measured | best: expected | best: measured |"
    );
    println!("|---|---|---|---|---|---|");
    for r in &kinds {
        let these: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.flagged && s.kinds == r.bin)
            .collect();
        let v = |k: usize| mean(these.iter().map(|s| s.values[k]));
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} |",
            r.bin,
            r.count,
            v(0),
            v(1),
            v(2),
            v(3)
        );
    }
    println!("\nFlag rate per bot:\n");
    println!(
        "| bot | weighed | flagged | rate | kept (re-estimate ≥ {}) | mean estimate | mean re-estimate | mean measured | 95% |",
        CoachParams::REVIEW.flag_at
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for b in &per_bot {
        println!(
            "| {} | {} | {} | {:.1}% | {} | {:.2} | {:.2} | {:.2} | ±{:.2} |",
            b["bot"].as_str().unwrap_or(""),
            b["weighed"],
            b["flagged"],
            b["rate"].as_f64().unwrap_or(0.0) * 100.0,
            b["kept_by_reestimate"],
            b["estimate"].as_f64().unwrap_or(f64::NAN),
            b["reestimate"].as_f64().unwrap_or(f64::NAN),
            b["measured"].as_f64().unwrap_or(f64::NAN),
            b["ci95"].as_f64().unwrap_or(f64::NAN),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::Rounds;

    /// A one-round match of the standard table between `seats`, with the bots seeded `seeds`.
    fn one_round(seats: &[Difficulty], seeds: &[u64]) -> HandHistory {
        let settings = Settings {
            rounds: Rounds::Fixed(1),
            ..Preset::Standard.settings()
        };
        let mut bots: Vec<Box<dyn Bot>> = seats
            .iter()
            .zip(seeds)
            .map(|(&d, &s)| new_bot(d, s))
            .collect();
        let game = play_match(&settings, [4; 32], &mut bots).unwrap();
        game.hand_history().unwrap()
    }

    #[test]
    fn the_rest_of_the_round_from_the_first_step_with_the_matchs_bots_is_the_round_played() {
        let seats = [
            Difficulty::Hard,
            Difficulty::Medium,
            Difficulty::Easy,
            Difficulty::Hard,
        ];
        let seeds = [11, 12, 13, 14];
        let record = one_round(&seats, &seeds);
        let mut first = None;
        let end = replay(&record, |game, step| {
            if first.is_none() {
                first = Some((game.clone(), step.action.clone()));
            }
        })
        .unwrap();
        let (game, action) = first.unwrap();
        let result = end.results().last().unwrap();
        // `play_rest` scores the seat it is told of; the seat to play applies `action`.
        for seat in 0..4 {
            let score = play_rest(&game, &action, seat, &seats, &seeds).unwrap();
            assert_eq!(score, round_value(result, seat, game.settings().scoring));
        }
    }

    #[test]
    fn a_move_measured_against_itself_loses_exactly_nothing_and_plays_are_paired() {
        let seats = [
            Difficulty::Expert,
            Difficulty::Hard,
            Difficulty::Medium,
            Difficulty::Easy,
        ];
        let record = one_round(&seats, &[1, 2, 3, 4]);
        let mut checked = 0;
        let mut at = 0;
        replay(&record, |game, step| {
            at += 1;
            if at % 7 != 0 {
                return;
            }
            let legal = game.legal_actions(step.seat);
            let other = legal
                .iter()
                .find(|a| **a != step.action)
                .unwrap_or(&step.action);
            let same = measure(game, &step.action, &step.action, &seats, 3, at).unwrap();
            assert_eq!(same, vec![0.0; 3]);
            let once = measure(game, &step.action, other, &seats, 3, at).unwrap();
            let again = measure(game, &step.action, other, &seats, 3, at).unwrap();
            assert_eq!(once, again);
            // Swapping the branches negates every play's difference: the plays are paired.
            let swapped = measure(game, other, &step.action, &seats, 3, at).unwrap();
            assert_eq!(swapped, once.iter().map(|d| -d).collect::<Vec<_>>());
            checked += 1;
        })
        .unwrap();
        assert!(checked > 2);
    }

    #[test]
    fn bins_cover_the_losses_and_the_arguments_parse() {
        assert_eq!(bin_of(-1.0), 0);
        assert_eq!(bin_of(0.49), 0);
        assert_eq!(bin_of(0.5), 1);
        assert_eq!(bin_of(3.9), 3);
        assert_eq!(bin_of(8.0), 5);
        assert_eq!(bin_label(5), "≥ 8");
        let options = parse(
            "--preset yaniv --matches 3 --seats hard,expert --plays 2 --json"
                .split(' ')
                .map(String::from),
        )
        .unwrap();
        assert_eq!(options.preset, Preset::Yaniv);
        assert_eq!(options.seats, vec![Difficulty::Hard, Difficulty::Expert]);
        assert_eq!((options.matches, options.plays, options.json), (3, 2, true));
        assert!(parse(["--seats".to_owned(), "best".to_owned()].into_iter()).is_err());
    }
}
