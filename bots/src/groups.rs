//! Which groups a hand can throw, and how much a hand can shed in one throw.
//!
//! [`legal_groups`] lists every legal group (by subset, checked with the engine's
//! [`classify`]); [`best_shed`] is the fast answer to "how many points could this hand throw in
//! one go", which the bots' look-ahead asks thousands of times per decision.

use dhumbal_engine::{Card, Settings, classify};

/// What `card` is worth at this table.
pub fn value(card: Card, settings: &Settings) -> u32 {
    card.value(settings.court)
}

/// The total of `cards` at this table.
pub fn total(cards: &[Card], settings: &Settings) -> u32 {
    cards.iter().map(|&c| value(c, settings)).sum()
}

/// Every legal group that `hand` can throw, never containing `barred`, each listed once in hand
/// order.
pub fn legal_groups(hand: &[Card], barred: Option<Card>, settings: &Settings) -> Vec<Vec<Card>> {
    let n = hand.len().min(16);
    let mut out = Vec::new();
    let mut group = Vec::with_capacity(n);
    for mask in 1u32..(1 << n) {
        group.clear();
        group.extend((0..n).filter(|i| mask & (1 << i) != 0).map(|i| hand[i]));
        if barred.is_some_and(|b| group.contains(&b)) {
            continue;
        }
        if classify(&group, settings).is_some() {
            out.push(group.clone());
        }
    }
    out
}

/// The most points `hand` could throw as one legal group (0 for an empty hand).
///
/// Fast: singles and sets come from per-rank sums, runs from per-suit bit masks; only a hand with
/// a joker at a table where jokers extend runs falls back to trying every subset.
pub fn best_shed(hand: &[Card], settings: &Settings) -> u32 {
    let court = settings.court;
    let mut rank_sum = [0u32; 14];
    let mut suit_mask = [0u16; 4];
    let mut jokers = 0usize;
    for card in hand {
        match (card.rank(), card.suit()) {
            (Some(rank), Some(suit)) => {
                rank_sum[usize::from(rank.number())] += court.value(rank);
                suit_mask[suit as usize] |= 1 << rank.number();
            }
            _ => jokers += 1,
        }
    }
    let mut best = rank_sum.iter().copied().max().unwrap_or(0);
    if settings.runs {
        if settings.jokers_in_runs && jokers > 0 {
            for group in legal_groups(hand, None, settings) {
                best = best.max(total(&group, settings));
            }
            return best;
        }
        for mask in suit_mask {
            best = best.max(best_run_in(mask, settings));
        }
    }
    best
}

/// The heaviest run (three or more consecutive ranks) among the ranks set in `mask` (bit `r` for
/// rank number `r`).
fn best_run_in(mask: u16, settings: &Settings) -> u32 {
    let mut best = 0;
    let mut len = 0;
    let mut sum = 0;
    for r in 1..=14u8 {
        if r <= 13 && mask & (1 << r) != 0 {
            len += 1;
            sum += settings
                .court
                .value(dhumbal_engine::Rank::new(r).expect("1..=13 is a rank"));
        } else {
            if len >= 3 {
                best = best.max(sum);
            }
            len = 0;
            sum = 0;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::{Preset, parse_cards};

    fn cards(s: &str) -> Vec<Card> {
        parse_cards(s).unwrap()
    }

    #[test]
    fn best_shed_matches_the_heaviest_legal_group() {
        let standard = Preset::Standard.settings();
        let household = Preset::Household.settings();
        let yaniv = Preset::Yaniv.settings();
        for (hand, settings) in [
            ("KH KS 3D 4C", &standard),
            ("5H 6H 7H KS", &household),
            ("5H 6H 7H KS", &standard),
            ("5H RJ 7H 2S", &yaniv),
            ("JH QH KH 2S", &household),
            ("AS", &standard),
            ("", &standard),
        ] {
            let hand = cards(hand);
            let slow = legal_groups(&hand, None, settings)
                .iter()
                .map(|g| total(g, settings))
                .max()
                .unwrap_or(0);
            assert_eq!(best_shed(&hand, settings), slow, "{hand:?}");
        }
    }

    #[test]
    fn legal_groups_skip_the_barred_card() {
        let settings = Preset::Standard.settings();
        let hand = cards("7H 7S 2D");
        let barred = hand[0];
        let groups = legal_groups(&hand, Some(barred), &settings);
        assert_eq!(groups, vec![cards("7S"), cards("2D")]);
        assert_eq!(legal_groups(&hand, None, &settings).len(), 4);
    }
}
