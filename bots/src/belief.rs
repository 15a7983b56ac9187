//! What a seat believes about each opponent's hidden cards, from public facts only.
//!
//! An opponent's hand is the cards it is known to hold (taken off the pile and not thrown since,
//! from [`Memory`]) plus `unknown` cards the seat cannot see. Each unknown card is modelled as a
//! card from the unseen pool ([`Memory::unseen`]: the pack less this seat's hand, the pile and
//! every card known to be elsewhere), weighted by `exp(-lean × value)`: a player who has been
//! throwing keeps its low cards, so the longer it has thrown and the fewer cards it holds, the
//! more its unknown cards lean low. The lean comes from [`LEAN`], fitted offline by maximum
//! likelihood on recorded rounds of hard bots (`cargo run --release -p dhumbal-bots --example
//! fit_belief`), indexed by the opponent's throws this round and its unknown-card count.
//!
//! [`Belief::new`] turns that into the distribution of each opponent's hand total (unknown cards
//! drawn independently, a close approximation for a handful of cards out of dozens), which is
//! what a call needs: the chance every opponent is heavier than a total, and how much they hold
//! when they are. [`SeatBelief::log_likelihood`] scores a hand the model did not see, for the
//! test that the belief beats the uniform guess on recorded rounds.

use dhumbal_engine::{Card, SeatView, Settings, TurnOrder};

use crate::groups::{total, value};
use crate::memory::Memory;
use crate::turn::opponents;

/// Throws counted in [`LEAN`]'s rows: 0 to `LEAN_THROWS - 1`, the last row for that many or more.
pub const LEAN_THROWS: usize = 12;
/// Unknown cards counted in [`LEAN`]'s columns: 0 to `LEAN_CARDS - 1`, the last for more.
pub const LEAN_CARDS: usize = 8;

/// How strongly an opponent's unknown cards lean low, per point of value, by the throws it has
/// made this round (row) and how many unknown cards it holds (column). Fitted by
/// `examples/fit_belief.rs` on 3,000 four-seat standard matches of hard bots (seed 7): a mean
/// log-likelihood per unknown card of −2.998, against −3.322 for the uniform guess. (Those hard
/// bots called by [`crate::hard::CallRule::ORIGINAL`]; refitted on today's hard bots the table
/// moves by at most 0.06 per cell.) Columns 6 and 7 (seven-card deals) repeat column 5.
pub const LEAN: [[f64; LEAN_CARDS]; LEAN_THROWS] = [
    [0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00],
    [0.00, 0.00, 0.00, 0.00, 0.04, 0.10, 0.10, 0.10],
    [0.00, 0.00, 0.00, 0.06, 0.12, 0.16, 0.16, 0.16],
    [0.00, 0.00, 0.06, 0.12, 0.18, 0.20, 0.20, 0.20],
    [0.00, 0.04, 0.14, 0.20, 0.22, 0.24, 0.24, 0.24],
    [0.00, 0.10, 0.20, 0.24, 0.26, 0.28, 0.28, 0.28],
    [0.00, 0.16, 0.22, 0.26, 0.30, 0.32, 0.32, 0.32],
    [0.00, 0.18, 0.24, 0.28, 0.30, 0.32, 0.32, 0.32],
    [0.00, 0.18, 0.22, 0.28, 0.28, 0.30, 0.30, 0.30],
    [0.00, 0.26, 0.36, 0.46, 0.50, 0.56, 0.56, 0.56],
    [0.00, 0.54, 0.60, 0.70, 0.70, 0.68, 0.68, 0.68],
    [0.00, 0.76, 0.64, 0.68, 0.66, 0.60, 0.60, 0.60],
];

/// The lean of an opponent that has thrown `throws` times and holds `unknown` unseen cards.
pub fn lean(throws: u32, unknown: usize) -> f64 {
    LEAN[(throws as usize).min(LEAN_THROWS - 1)][unknown.min(LEAN_CARDS - 1)]
}

/// What a seat believes about one opponent's hand.
#[derive(Clone, Debug, PartialEq)]
pub struct SeatBelief {
    /// The opponent.
    pub seat: usize,
    /// The total of the cards it is known to hold.
    pub known_total: u32,
    /// How many of its cards are unknown.
    pub unknown: usize,
    /// The lean of its unknown cards (see the [module documentation](self)).
    pub lean: f64,
    /// `total[t]`: the chance its whole hand totals `t`.
    pub total: Vec<f64>,
    /// Each unseen card's chance of being any one of its unknown cards.
    card_weight: Vec<(Card, f64)>,
}

impl SeatBelief {
    /// The chance its hand totals strictly more than `t`.
    pub fn above(&self, t: u32) -> f64 {
        self.total.iter().skip(t as usize + 1).sum()
    }

    /// The expected total of its hand when it is strictly more than `t` (0 when it cannot be).
    pub fn mean_above(&self, t: u32) -> f64 {
        let (mass, sum) = self
            .total
            .iter()
            .enumerate()
            .skip(t as usize + 1)
            .fold((0.0, 0.0), |(m, s), (v, &p)| (m + p, s + p * v as f64));
        if mass > 0.0 { sum / mass } else { 0.0 }
    }

    /// The chance its hand totals at most `t`.
    pub fn at_most(&self, t: u32) -> f64 {
        1.0 - self.above(t)
    }

    /// The log-likelihood of `unknown_cards` being its unknown cards, each drawn independently
    /// from the belief (`-inf` for a card the belief rules out).
    pub fn log_likelihood(&self, unknown_cards: &[Card]) -> f64 {
        unknown_cards
            .iter()
            .map(|c| {
                self.card_weight
                    .iter()
                    .find(|(k, _)| k == c)
                    .map_or(f64::NEG_INFINITY, |&(_, p)| p.ln())
            })
            .sum()
    }
}

/// What a seat believes about every opponent still in the round.
#[derive(Clone, Debug, PartialEq)]
pub struct Belief {
    /// One per opponent, in play order from the seat's left.
    pub opponents: Vec<SeatBelief>,
}

impl Belief {
    /// The belief of the seat whose `view` this is, with `memory` synced to it.
    pub fn new(view: &SeatView, memory: &Memory) -> Belief {
        Belief::with_lean(view, memory, lean)
    }

    /// [`Belief::new`] with another lean rule (`lean_of(throws, unknown)`): the uniform guess is
    /// `|_, _| 0.0`.
    pub fn with_lean(
        view: &SeatView,
        memory: &Memory,
        lean_of: impl Fn(u32, usize) -> f64,
    ) -> Belief {
        Belief::with_lean_and_passes(view, memory, lean_of, None)
    }

    /// [`Belief::new`] that also reads each opponent's passed call at a throw-then-draw table:
    /// an opponent that did not call on its last turn is taken to have held more than
    /// `pass.at` then (with chance `pass.weight`), so the cards it kept through that turn (its
    /// hand now less the card it drew) total more than `pass.at` less what it threw.
    pub fn with_passes(view: &SeatView, memory: &Memory, pass: Pass) -> Belief {
        Belief::with_lean_and_passes(view, memory, lean, Some(pass))
    }

    /// [`Belief::with_lean`] and [`Belief::with_passes`] at once (`pass` `None`: passes say
    /// nothing; they say nothing either at a draw-then-throw table).
    pub fn with_lean_and_passes(
        view: &SeatView,
        memory: &Memory,
        lean_of: impl Fn(u32, usize) -> f64,
        pass: Option<Pass>,
    ) -> Belief {
        Belief::with_inference(view, memory, lean_of, pass, 0.0)
    }

    /// [`Belief::with_lean_and_passes`] that also reads each opponent's last throw at a
    /// throw-then-draw table: an opponent that last threw a single card is taken to have kept
    /// cards no heavier than it, each unknown card it kept through that throw being heavier only
    /// with its weight times `1 - cap` (0: its throw says nothing; 1: it never keeps a heavier
    /// card). The card it drew from the stock after is not read.
    pub fn with_inference(
        view: &SeatView,
        memory: &Memory,
        lean_of: impl Fn(u32, usize) -> f64,
        pass: Option<Pass>,
        cap: f64,
    ) -> Belief {
        let throw_first = view.settings.turn_order == TurnOrder::ThrowThenDraw;
        let pass = pass.filter(|pass| {
            view.settings.turn_order == TurnOrder::ThrowThenDraw && pass.weight > 0.0
        });
        let settings = &view.settings;
        let unseen = memory.unseen(view);
        let opponents = opponents(view)
            .into_iter()
            .map(|seat| {
                let known = memory.held(seat);
                let unknown = view.card_counts[seat].saturating_sub(known.len());
                let lean = lean_of(memory.throws_by(seat), unknown);
                let kept = pass.and_then(|pass| {
                    let turn = memory.last_turn(seat)?;
                    let drawn = turn.drawn?;
                    let thrown = i64::from(total(&turn.thrown, settings));
                    Some(Kept {
                        above: i64::from(pass.at) + 1 - thrown,
                        weight: pass.weight,
                        drawn,
                    })
                });
                let capped = memory
                    .last_turn(seat)
                    .and_then(|turn| match turn.thrown[..] {
                        [card] if throw_first && cap > 0.0 => Some(Capped {
                            at: value(card, settings),
                            weight: cap,
                            from_stock: turn.drawn == Some(None),
                        }),
                        _ => None,
                    });
                seat_belief(
                    seat,
                    total(known, settings),
                    unknown,
                    lean,
                    &unseen,
                    settings,
                    kept,
                    capped,
                )
            })
            .collect();
        Belief { opponents }
    }

    /// The chance every opponent's hand is strictly heavier than `mine`.
    pub fn chance_lightest(&self, mine: u32) -> f64 {
        self.opponents.iter().map(|o| o.above(mine)).product()
    }

    /// The chance some opponent holds less than `mine - margin` (a call would be caught by more
    /// than `margin`).
    pub fn chance_undercut_by_more_than(&self, mine: u32, margin: u32) -> f64 {
        match mine.checked_sub(margin + 1) {
            Some(t) => {
                1.0 - self
                    .opponents
                    .iter()
                    .map(|o| 1.0 - o.at_most(t))
                    .product::<f64>()
            }
            None => 0.0,
        }
    }

    /// The expected sum of the opponents' hands given that every one is heavier than `mine`.
    pub fn mean_heavier_sum(&self, mine: u32) -> f64 {
        self.opponents.iter().map(|o| o.mean_above(mine)).sum()
    }
}

/// What an opponent's passed call says (see [`Belief::with_passes`]): it would have called on
/// its last turn had its hand then totalled at most `at`, with chance `weight`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pass {
    /// The highest total it is taken to call on.
    pub at: u32,
    /// The chance it calls on such a hand (0: a pass says nothing; 1: it always calls).
    pub weight: f64,
}

/// What one opponent's last turn says about the part of its hand it kept through that turn.
struct Kept {
    /// The least total the kept cards had to reach for the hand before the throw to exceed the
    /// pass's total (`at + 1 - thrown`).
    above: i64,
    /// The chance of the pass below that.
    weight: f64,
    /// The card it then took off the pile (which it still holds), or `None` for the stock.
    drawn: Option<Card>,
}

/// What one opponent's last throw of a single card says about the cards it kept through it.
struct Capped {
    /// The thrown card's value: the kept cards are taken to be no heavier.
    at: u32,
    /// How sure that is: a heavier card keeps `1 - weight` of its weight.
    weight: f64,
    /// Whether it then drew from the stock (one unknown card was not kept through the throw).
    from_stock: bool,
}

/// One opponent's belief: `unknown` cards from `unseen` leaning low by `lean`, on top of
/// `known_total`; with `kept`, conditioned on its passed call; with `capped`, the cards it kept
/// through its last throw weighed by it.
#[allow(clippy::too_many_arguments)]
fn seat_belief(
    seat: usize,
    known_total: u32,
    unknown: usize,
    lean: f64,
    unseen: &[Card],
    settings: &Settings,
    kept: Option<Kept>,
    capped: Option<Capped>,
) -> SeatBelief {
    let mut card_weight: Vec<(Card, f64)> = unseen
        .iter()
        .map(|&c| (c, (-lean * f64::from(value(c, settings))).exp()))
        .collect();
    let sum: f64 = card_weight.iter().map(|(_, w)| w).sum();
    let mut single = vec![0.0; 14];
    if sum > 0.0 {
        for (c, w) in &mut card_weight {
            *w /= sum;
            let v = value(*c, settings) as usize;
            if single.len() <= v {
                single.resize(v + 1, 0.0);
            }
            single[v] += *w;
        }
    } else {
        // Nothing unseen (cannot happen in play): the unknown cards count for nothing.
        single[0] = 1.0;
    }
    // The distribution of one unknown card kept through its last throw, and how many of its
    // unknown cards were (the others come from the stock after).
    let (kept_single, kept_count) = match &capped {
        Some(c) => {
            let mut d: Vec<f64> = single
                .iter()
                .enumerate()
                .map(|(v, &p)| {
                    if v as u32 > c.at {
                        p * (1.0 - c.weight)
                    } else {
                        p
                    }
                })
                .collect();
            let mass: f64 = d.iter().sum();
            if mass > 0.0 {
                d.iter_mut().for_each(|p| *p /= mass);
            } else {
                d = single.clone();
            }
            (d, unknown.saturating_sub(usize::from(c.from_stock)))
        }
        None => (single.clone(), unknown),
    };
    let unknown_sum = |count: usize| -> Vec<f64> {
        let kept = count.min(kept_count);
        convolve(&sum_of(&kept_single, kept), &sum_of(&single, count - kept))
    };
    let total = match kept {
        // The hand before its last draw, less what it threw, is at least `above` with the
        // pass's weight; the drawn card comes on top.
        Some(kept) if kept.drawn.is_some() || unknown > 0 => {
            let (rest_known, rest_unknown, on_top) = match kept.drawn {
                Some(card) => {
                    let v = value(card, settings);
                    (known_total.saturating_sub(v), unknown, vec_at(v as usize))
                }
                None => (known_total, unknown - 1, single.clone()),
            };
            let mut rest = shifted(rest_known, &unknown_sum(rest_unknown));
            let below = kept.above.clamp(0, rest.len() as i64) as usize;
            for p in rest.iter_mut().take(below) {
                *p *= 1.0 - kept.weight;
            }
            let mass: f64 = rest.iter().sum();
            if mass > 0.0 {
                rest.iter_mut().for_each(|p| *p /= mass);
                convolve(&rest, &on_top)
            } else {
                shifted(known_total, &unknown_sum(unknown))
            }
        }
        _ => shifted(known_total, &unknown_sum(unknown)),
    };
    SeatBelief {
        seat,
        known_total,
        unknown,
        lean,
        total,
        card_weight,
    }
}

/// The distribution that is `v` for certain.
fn vec_at(v: usize) -> Vec<f64> {
    let mut out = vec![0.0; v + 1];
    out[v] = 1.0;
    out
}

/// `dist` moved up by `by`.
fn shifted(by: u32, dist: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; by as usize];
    out.extend_from_slice(dist);
    out
}

/// The distribution of the sum of two independent totals.
fn convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.len() + b.len() - 1];
    for (i, &p) in a.iter().enumerate() {
        if p == 0.0 {
            continue;
        }
        for (j, &q) in b.iter().enumerate() {
            out[i + j] += p * q;
        }
    }
    out
}

/// The distribution of the sum of `count` independent cards, each valued by `single`.
fn sum_of(single: &[f64], count: usize) -> Vec<f64> {
    let max = (single.len() - 1) * count;
    let mut dist = vec![0.0; max + 1];
    dist[0] = 1.0;
    for k in 0..count {
        let reach = (single.len() - 1) * k;
        let mut next = vec![0.0; max + 1];
        for (s, &p) in dist.iter().enumerate().take(reach + 1) {
            if p == 0.0 {
                continue;
            }
            for (v, &q) in single.iter().enumerate() {
                next[s + v] += p * q;
            }
        }
        dist = next;
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::{Game, Preset};

    #[test]
    fn the_total_distribution_sums_to_one_and_respects_the_known_cards() {
        let game = Game::new(Preset::Standard.settings(), [3; 32]).unwrap();
        let view = game.view(0);
        let mut memory = Memory::new();
        memory.sync(&view, game.public_history());
        let belief = Belief::new(&view, &memory);
        assert_eq!(belief.opponents.len(), 3);
        for o in &belief.opponents {
            assert!((o.total.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            assert_eq!(o.unknown, 5);
            // Five cards total at least 5.
            assert!(o.at_most(4) < 1e-12);
            assert!(o.mean_above(4) > 20.0);
        }
        let p = belief.chance_lightest(3);
        assert!(p > 0.9 && p <= 1.0, "{p}");
        assert!(belief.chance_lightest(30) < p);
    }

    /// Seat 0's view and memory at a household table dealt from `seed`, once every other seat
    /// has thrown its lowest card and drawn from the stock.
    fn after_low_single_throws(seed: u8) -> (SeatView, Memory) {
        use dhumbal_engine::{Action, Source};
        let mut game = Game::new(Preset::Household.settings(), [seed; 32]).unwrap();
        let mut memory = Memory::new();
        while game.turn() != 0 || memory.throws_by(1) == 0 {
            let seat = game.turn();
            let low = *game
                .hand(seat)
                .iter()
                .min_by_key(|&&c| value(c, game.settings()))
                .unwrap();
            game.apply(seat, Action::Throw { cards: vec![low] })
                .unwrap();
            game.apply(
                seat,
                Action::Draw {
                    from: Source::Stock,
                },
            )
            .unwrap();
            memory.sync(&game.view(0), game.public_history());
        }
        let view = game.view(0);
        memory.sync(&view, game.public_history());
        (view, memory)
    }

    #[test]
    fn a_single_low_throw_makes_the_cards_kept_through_it_lighter() {
        let (view, memory) = after_low_single_throws(9);
        let plain = Belief::new(&view, &memory);
        let silent = Belief::with_inference(&view, &memory, lean, None, 0.0);
        assert_eq!(plain, silent);
        let capped = Belief::with_inference(&view, &memory, lean, None, 1.0);
        for (p, o) in plain.opponents.iter().zip(&capped.opponents) {
            assert!((o.total.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            let thrown = &memory.last_turn(o.seat).unwrap().thrown;
            assert_eq!(thrown.len(), 1);
            // Lighter: more chance of a low total.
            assert!(
                o.at_most(12) > p.at_most(12),
                "{} {}",
                o.at_most(12),
                p.at_most(12)
            );
        }
    }

    #[test]
    fn a_passed_call_makes_an_opponent_that_threw_low_heavier() {
        let (view, memory) = after_low_single_throws(5);
        let plain = Belief::new(&view, &memory);
        let silent = Belief::with_passes(
            &view,
            &memory,
            Pass {
                at: 15,
                weight: 0.0,
            },
        );
        assert_eq!(plain, silent);
        let passed = Belief::with_passes(
            &view,
            &memory,
            Pass {
                at: 15,
                weight: 0.9,
            },
        );
        for (p, o) in plain.opponents.iter().zip(&passed.opponents) {
            assert!((o.total.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            let turn = memory.last_turn(o.seat).unwrap();
            assert_eq!(turn.thrown.len(), 1);
            assert_eq!(turn.drawn, Some(None));
            // Heavier: less chance of any low total.
            assert!(
                o.at_most(12) < p.at_most(12),
                "{} {}",
                o.at_most(12),
                p.at_most(12)
            );
        }
    }
}
