//! Scoring a round at the show, and the match standings.
//!
//! A round ends in one of three ways ([`Ending`]): a right call, a caught call, or the throw cap.
//! At the show the game turns the hands into the rows of the score dialog, a [`RoundResult`]:
//! Hand (what each seat holds), Took (what each seat is charged), and the change to each Total —
//! the zero-sum Paid row in settlement scoring, or the points added in cumulative scoring.
//!
//! The charges themselves — who takes the round and the Took row ([`charges`]), and what a
//! caught caller pays ([`caught_charge`]) — are public pure functions of the hand totals, so that
//! the bots' play-outs and call values charge a round exactly as the show does.

use serde::{Deserialize, Serialize};

use crate::card::{Card, hand_total};
use crate::settings::{PenaltyMode, Scoring, Settings};

/// How a round ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    /// A seat called. `caught` is true when another hand matched or beat it.
    Call {
        /// The seat that called.
        caller: usize,
        /// Whether the caller was matched or beaten.
        caught: bool,
    },
    /// Nobody called before the throw cap; the lightest hand took the round.
    ThrowCap,
}

/// Everything the score dialog shows about one round. Every row has one entry per seat; seats
/// out of the match (eliminated) have zeros and `active` false.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct RoundResult {
    /// The round's number, from 1.
    pub round: u32,
    /// The seat that dealt it.
    pub dealer: usize,
    /// How it ended.
    pub ending: Ending,
    /// The seat that took the round (charged nothing).
    pub taker: usize,
    /// Every hand at the show, face up.
    pub hands: Vec<Vec<Card>>,
    /// The Hand row: each hand's total.
    pub hand: Vec<u32>,
    /// The Took row: what each seat was charged (in cumulative scoring, the points it adds).
    pub took: Vec<u32>,
    /// The change to each Total: the Paid row in settlement scoring (sums to zero); the points
    /// added in cumulative scoring, after any score reset.
    pub paid: Vec<i64>,
    /// Seats whose total landed on a multiple of 50 and dropped by 50 (score reset).
    pub reset: Vec<bool>,
    /// Every Total after this round.
    pub total: Vec<i64>,
    /// Seats that played this round.
    pub active: Vec<bool>,
    /// Seats eliminated by this round.
    pub eliminated: Vec<usize>,
}

/// The first seat met walking round the table in its direction from the seat after the dealer
/// (where the deal started) among `candidates` with the lowest hand.
fn lightest(
    settings: &Settings,
    hand: &[u32],
    dealer: usize,
    candidates: impl Fn(usize) -> bool,
) -> usize {
    let min = (0..hand.len())
        .filter(|&s| candidates(s))
        .map(|s| hand[s])
        .min()
        .expect("a round always has a candidate");
    settings
        .direction
        .seats_after(dealer, hand.len())
        .find(|&s| candidates(s) && hand[s] == min)
        .expect("the minimum is held by a candidate")
}

/// What a caught caller is charged when its hand total is `caller_hand` and the lightest other
/// hand undercuts (or matches) it by `margin`: the penalty — doubled to
/// [`crate::DoublePenalty::amount`] when the margin is above the table's double-penalty margin —
/// instead of the hand, or on top of it ([`PenaltyMode`]).
pub fn caught_charge(settings: &Settings, caller_hand: u32, margin: u32) -> u32 {
    let base = match settings.double_penalty {
        Some(double) if margin > double.margin => double.amount,
        _ => settings.penalty,
    };
    match settings.penalty_mode {
        PenaltyMode::Instead => base,
        PenaltyMode::OnTop => caller_hand + base,
    }
}

/// What the end of a round charges, before it is added to the totals: see [`charges`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Charges {
    /// How the round ended.
    pub ending: Ending,
    /// The seat that took the round (charged nothing).
    pub taker: usize,
    /// The Took row: what each seat is charged (in cumulative scoring, the points it adds before
    /// any score reset); zero for the taker and for seats out of the match.
    pub took: Vec<u32>,
}

impl Charges {
    /// The change to `seat`'s Total in settlement scoring (the Paid row): the taker collects
    /// every charge, every other seat pays its own.
    pub fn settlement_paid(&self, seat: usize) -> i64 {
        if seat == self.taker {
            self.took
                .iter()
                .enumerate()
                .filter(|&(s, _)| s != self.taker)
                .map(|(_, &t)| i64::from(t))
                .sum()
        } else {
            -i64::from(self.took[seat])
        }
    }
}

/// The end of a round scored as the engine scores it, from each seat's hand total (`hand`), the
/// dealer (ties for the lightest hand go to the first seat after the dealer in the table's
/// direction), the seats still in the match (`active`) and the seat that called, if any (`None`:
/// the throw cap). A call is caught when another active hand matches or beats it; the caught
/// caller is charged [`caught_charge`] and the lightest other hand takes the round. Everyone
/// else active is charged its hand — except in cumulative scoring, where a caught call charges
/// the caller alone. This is the one implementation: the game's show uses it, and so do the
/// bots' play-outs.
///
/// # Panics
/// When no seat is active, or a caller has no active opponent.
pub fn charges(
    settings: &Settings,
    hand: &[u32],
    dealer: usize,
    active: &[bool],
    caller: Option<usize>,
) -> Charges {
    let seats = hand.len();
    let mut took = vec![0u32; seats];
    let (ending, taker) = match caller {
        Some(caller) => {
            let others = |s: usize| active[s] && s != caller;
            let best_other = lightest(settings, hand, dealer, others);
            if hand[caller] < hand[best_other] {
                (
                    Ending::Call {
                        caller,
                        caught: false,
                    },
                    caller,
                )
            } else {
                let margin = hand[caller] - hand[best_other];
                took[caller] = caught_charge(settings, hand[caller], margin);
                (
                    Ending::Call {
                        caller,
                        caught: true,
                    },
                    best_other,
                )
            }
        }
        None => (
            Ending::ThrowCap,
            lightest(settings, hand, dealer, |s| active[s]),
        ),
    };
    // Everyone but the taker (and a caught caller, charged above) is charged the hand — except in
    // cumulative scoring, where a caught call charges the caller alone.
    let caught_caller = match ending {
        Ending::Call {
            caller,
            caught: true,
        } => Some(caller),
        _ => None,
    };
    if caught_caller.is_none() || settings.scoring == Scoring::Settlement {
        for s in (0..seats).filter(|&s| active[s] && s != taker && Some(s) != caught_caller) {
            took[s] = hand[s];
        }
    }
    Charges {
        ending,
        taker,
        took,
    }
}

/// The input of [`score_round`]: the state of the table at the show.
pub(crate) struct Show<'a> {
    pub(crate) settings: &'a Settings,
    pub(crate) round: u32,
    pub(crate) dealer: usize,
    pub(crate) hands: &'a [Vec<Card>],
    pub(crate) active: &'a [bool],
    pub(crate) totals: &'a [i64],
    pub(crate) caller: Option<usize>,
}

/// Scores the show: every row of the round's result, the new totals and any eliminations.
pub(crate) fn score_round(show: Show<'_>) -> RoundResult {
    let Show {
        settings,
        round,
        dealer,
        hands,
        active,
        totals,
        caller,
    } = show;
    let seats = hands.len();
    let hand: Vec<u32> = hands
        .iter()
        .map(|h| hand_total(h, settings.court))
        .collect();
    let charged = charges(settings, &hand, dealer, active, caller);
    let took = &charged.took;
    let mut total = totals.to_vec();
    let mut paid = vec![0i64; seats];
    let mut reset = vec![false; seats];
    let mut eliminated = Vec::new();
    match settings.scoring {
        Scoring::Settlement => {
            for s in 0..seats {
                paid[s] = charged.settlement_paid(s);
                total[s] += paid[s];
            }
        }
        Scoring::Cumulative => {
            for s in 0..seats {
                let before = total[s];
                total[s] += i64::from(took[s]);
                if settings.score_reset && took[s] > 0 && total[s] % 50 == 0 {
                    total[s] -= 50;
                    reset[s] = true;
                }
                paid[s] = total[s] - before;
                if let Some(threshold) = settings.elimination {
                    if active[s] && total[s] >= i64::from(threshold) {
                        eliminated.push(s);
                    }
                }
            }
        }
    }
    RoundResult {
        round,
        dealer,
        ending: charged.ending,
        taker: charged.taker,
        hands: hands.to_vec(),
        hand,
        took: charged.took.clone(),
        paid,
        reset,
        total,
        active: active.to_vec(),
        eliminated,
    }
}

/// One seat's place in the match standings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Standing {
    /// The seat.
    pub seat: usize,
    /// Its place, from 1; equal Totals share a place (1, 1, 3, …).
    pub place: usize,
    /// Its Total (final once the match is over).
    pub total: i64,
    /// Whether it was eliminated during the match.
    pub eliminated: bool,
}

/// The standings for these totals: highest first in settlement scoring, lowest first in
/// cumulative scoring. Equal totals share a place.
pub fn standings(totals: &[i64], eliminated: &[bool], scoring: Scoring) -> Vec<Standing> {
    let mut out = Vec::with_capacity(totals.len());
    standings_into(totals, eliminated, scoring, &mut out);
    out
}

/// [`standings`] made in `out`, in place: a view refreshed after every action keeps the memory
/// of the standings it had.
pub fn standings_into(
    totals: &[i64],
    eliminated: &[bool],
    scoring: Scoring,
    out: &mut Vec<Standing>,
) {
    let key = |t: i64| match scoring {
        Scoring::Settlement => -t,
        Scoring::Cumulative => t,
    };
    out.clear();
    out.extend(totals.iter().enumerate().map(|(seat, &total)| Standing {
        seat,
        place: 0,
        total,
        eliminated: eliminated[seat],
    }));
    out.sort_by_key(|s| (key(s.total), s.seat));
    // Sorted by total, so a seat's place is one more than the first seat of its total's.
    for i in 0..out.len() {
        out[i].place = if i > 0 && key(out[i - 1].total) == key(out[i].total) {
            out[i - 1].place
        } else {
            i + 1
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{DoublePenalty, Preset};

    #[test]
    fn standings_share_places_on_equal_totals() {
        let st = standings(&[5, 10, 5, -20], &[false; 4], Scoring::Settlement);
        let places: Vec<(usize, usize)> = st.iter().map(|s| (s.seat, s.place)).collect();
        assert_eq!(places, vec![(1, 1), (0, 2), (2, 2), (3, 4)]);
        let st = standings(&[30, 10, 10], &[false; 3], Scoring::Cumulative);
        let places: Vec<(usize, usize)> = st.iter().map(|s| (s.seat, s.place)).collect();
        assert_eq!(places, vec![(1, 1), (2, 1), (0, 3)]);
    }

    /// In place, over what a longer table left, the standings are the same.
    #[test]
    fn standings_made_in_place_are_the_same() {
        let mut out = standings(&[1, 2, 3, 4, 5, 6], &[true; 6], Scoring::Cumulative);
        for (totals, scoring) in [
            (&[5, 10, 5, -20][..], Scoring::Settlement),
            (&[30, 10, 10][..], Scoring::Cumulative),
            (&[0, 0][..], Scoring::Settlement),
        ] {
            let eliminated = vec![false, true, false, true][..totals.len()].to_vec();
            standings_into(totals, &eliminated, scoring, &mut out);
            assert_eq!(out, standings(totals, &eliminated, scoring));
        }
    }

    fn totals_for(hands: &[u32], caller: Option<usize>, settings: &Settings) -> RoundResult {
        // Build hands of the wanted totals from tens and small cards.
        let hands: Vec<Vec<Card>> = hands
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let suit = crate::card::Suit::ALL[i % 4];
                let mut cards = Vec::new();
                let mut left = t;
                let mut rank = 10u8;
                while left > 0 {
                    let v = left.min(u32::from(rank)) as u8;
                    cards.push(Card::new(crate::card::Rank::new(v).unwrap(), suit));
                    left -= u32::from(v);
                    rank = v - 1;
                }
                cards
            })
            .collect();
        let n = hands.len();
        score_round(Show {
            settings,
            round: 1,
            dealer: n - 1,
            hands: &hands,
            active: &vec![true; n],
            totals: &vec![0; n],
            caller,
        })
    }

    #[test]
    fn the_double_penalty_applies_above_its_margin_only() {
        let settings = Settings {
            double_penalty: Some(DoublePenalty {
                amount: 50,
                margin: 5,
            }),
            ..Preset::Standard.settings()
        };
        // Caller 9 against 4: undercut by 5 → ordinary penalty.
        assert_eq!(totals_for(&[9, 4], Some(0), &settings).took[0], 25);
        // Caller 10 against 4: undercut by 6 → doubled.
        assert_eq!(totals_for(&[10, 4], Some(0), &settings).took[0], 50);
    }

    #[test]
    fn penalty_on_top_adds_the_hand() {
        let settings = Settings {
            penalty: 30,
            penalty_mode: PenaltyMode::OnTop,
            ..Preset::Standard.settings()
        };
        let r = totals_for(&[7, 3, 12], Some(0), &settings);
        assert_eq!(r.took, vec![37, 0, 12]);
        assert_eq!(r.paid, vec![-37, 49, -12]);
    }

    #[test]
    fn cumulative_caught_charges_only_the_caller() {
        let settings = Preset::Household.settings();
        let r = totals_for(&[6, 6, 20], Some(0), &settings);
        assert_eq!(
            r.ending,
            Ending::Call {
                caller: 0,
                caught: true
            }
        );
        assert_eq!(r.took, vec![25, 0, 0]);
        assert_eq!(r.total, vec![25, 0, 0]);
        let r = totals_for(&[3, 6, 20], Some(0), &settings);
        assert_eq!(r.took, vec![0, 6, 20]);
    }
}
