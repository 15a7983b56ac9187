//! How well variants of the expert's belief judge the call: plays matches of an expert (seat 0)
//! against hard bots and, at each of the expert's turns where it may call on a hand of at most
//! `--at`, compares each variant's chance of being strictly the lightest with the truth (the
//! real hands). It prints, per variant, the mean log loss and Brier score of that chance (lower
//! is sharper and better calibrated) and its calibration by tenths.
//!
//! ```text
//! cargo run --release -p dhumbal-bots --example belief_check -- --preset household \
//!     --games 500 --seed 5 --at 18 --variants 'lean=1;lean=1,pass=0.8;lean=1.3'
//! ```
//!
//! A variant is `lean=k` (the fitted lean times `k`), optionally with `pass=w` and `shift=s`
//! ([`Pass`]: passes at hard's calling total moved by `s`, with chance `w`).

use dhumbal_bots::arena::play_out_watched;
use dhumbal_bots::belief::{Belief, Pass, lean};
use dhumbal_bots::groups::total;
use dhumbal_bots::hard::CallRule;
use dhumbal_bots::turn::{Step, opponents, step};
use dhumbal_bots::{Bot, Memory, new_bot};
use dhumbal_engine::{Difficulty, Game, Preset};

/// One belief variant.
#[derive(Clone, Copy, Debug)]
struct Variant {
    lean: f64,
    pass: f64,
    shift: i64,
}

/// Log loss, Brier score and calibration bins (predicted sum, true count, count).
#[derive(Default)]
struct Score {
    log: f64,
    brier: f64,
    bins: [(f64, u32, u32); 10],
}

fn parse(text: &str) -> Result<Vec<Variant>, String> {
    text.split(';')
        .map(|v| {
            let mut out = Variant {
                lean: 1.0,
                pass: 0.0,
                shift: 0,
            };
            for kv in v.split(',').filter(|s| !s.is_empty()) {
                let (k, x) = kv
                    .split_once('=')
                    .ok_or(format!("`{kv}` is not key=value"))?;
                let x: f64 = x.parse().map_err(|_| format!("`{x}` is not a number"))?;
                match k {
                    "lean" => out.lean = x,
                    "pass" => out.pass = x,
                    "shift" => out.shift = x as i64,
                    _ => return Err(format!("no `{k}`")),
                }
            }
            Ok(out)
        })
        .collect()
}

fn main() -> Result<(), String> {
    let mut preset = Preset::Household;
    let mut games = 500u32;
    let mut seed = 5u8;
    let mut at = 18u32;
    let mut variants = parse("lean=1")?;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--preset" => preset = Preset::from_name(&value).ok_or("unknown preset")?,
            "--games" => games = value.parse().map_err(|_| "bad --games")?,
            "--seed" => seed = value.parse().map_err(|_| "bad --seed")?,
            "--at" => at = value.parse().map_err(|_| "bad --at")?,
            "--variants" => variants = parse(&value)?,
            _ => return Err(format!("unknown argument {arg}")),
        }
    }
    let settings = preset.settings();
    let players = settings.players;
    let call_at = CallRule::default().call_at(&settings).unwrap_or(0);
    let mut scores: Vec<Score> = variants.iter().map(|_| Score::default()).collect();
    let mut n = 0u32;
    for m in 0..games {
        let mut key = [seed; 32];
        key[..4].copy_from_slice(&m.to_le_bytes());
        let mut game = Game::new(settings.clone(), key).expect("a valid preset");
        let mut bots: Vec<Box<dyn Bot>> = (0..players as u64)
            .map(|s| {
                let d = if s == 0 {
                    Difficulty::Expert
                } else {
                    Difficulty::Hard
                };
                new_bot(d, s + u64::from(m) * 16)
            })
            .collect();
        let mut memory = Memory::new();
        play_out_watched(&mut game, &mut bots, |d| {
            let view = d.view;
            if d.seat != 0
                || !matches!(step(view), Step::CallOrThrow | Step::CallOrDraw)
                || !view.can_call
                || view.hand_total > at
            {
                return;
            }
            memory.sync(view, d.game.public_history());
            let mine = view.hand_total;
            let truth = opponents(view)
                .into_iter()
                .all(|o| total(d.game.hand(o), &settings) > mine);
            n += 1;
            for (v, score) in variants.iter().zip(&mut scores) {
                let pass = Pass {
                    at: (i64::from(call_at) + v.shift).max(0) as u32,
                    weight: v.pass,
                };
                let k = v.lean;
                let belief =
                    Belief::with_lean_and_passes(view, &memory, |t, u| k * lean(t, u), Some(pass));
                let p = belief.chance_lightest(mine).clamp(1e-4, 1.0 - 1e-4);
                let y = if truth { 1.0 } else { 0.0 };
                score.log -= if truth { p.ln() } else { (1.0 - p).ln() };
                score.brier += (p - y) * (p - y);
                let bin = &mut score.bins[((p * 10.0) as usize).min(9)];
                bin.0 += p;
                bin.1 += u32::from(truth);
                bin.2 += 1;
            }
        })
        .expect("bots play legally");
    }
    println!("{n} decisions");
    for (v, s) in variants.iter().zip(&scores) {
        let bins: Vec<String> = s
            .bins
            .iter()
            .filter(|b| b.2 > 0)
            .map(|b| {
                format!(
                    "{:.2}/{:.2}",
                    b.0 / f64::from(b.2),
                    f64::from(b.1) / f64::from(b.2)
                )
            })
            .collect();
        println!(
            "lean×{} pass {} shift {}: log loss {:.4}, brier {:.4}; predicted/true {}",
            v.lean,
            v.pass,
            v.shift,
            s.log / f64::from(n),
            s.brier / f64::from(n),
            bins.join(" ")
        );
    }
    Ok(())
}
