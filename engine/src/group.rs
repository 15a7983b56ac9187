//! Which cards may be thrown together.
//!
//! A legal group is one card; or two or more cards of one rank (part of a set is fine); with runs
//! on, three or more cards of consecutive rank in one suit, ace low, no wrap; with jokers on, a
//! joker stands in for the rank of a set beside at least one real card, and the two jokers alone
//! may go as a pair. With jokers in runs on, a joker may also fill a gap in, or extend, a run of
//! one suit beside at least two real cards. The order a group is listed in does not change whether
//! it is legal; it only decides which card lands on top.

use serde::{Deserialize, Serialize};

use crate::card::Card;
use crate::settings::Settings;

/// What kind of group a legal throw is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GroupKind {
    /// One card.
    Single,
    /// Two or more cards of one rank (jokers standing in), or the two jokers.
    Set,
    /// Three or more cards of consecutive rank in one suit.
    Run,
}

/// Classifies `cards` as a group under `settings`, or `None` if they may not be thrown together.
///
/// The cards are assumed distinct (the game checks that first).
pub fn classify(cards: &[Card], settings: &Settings) -> Option<GroupKind> {
    match cards.len() {
        0 => return None,
        1 => return Some(GroupKind::Single),
        _ => {}
    }
    let mut jokers = 0usize;
    let mut rank = None;
    let mut same_rank = true;
    for card in cards {
        match card.rank() {
            None => jokers += 1,
            Some(r) => match rank {
                None => rank = Some(r),
                Some(first) => same_rank &= first == r,
            },
        }
    }
    if jokers > 0 && !settings.jokers {
        return None;
    }
    // A set: one rank among the real cards (a joker beside at least one real card), or the two
    // jokers alone as a pair.
    if same_rank && (rank.is_some() || jokers == cards.len()) {
        return Some(GroupKind::Set);
    }
    if settings.runs && is_run(cards, jokers, settings.jokers_in_runs) {
        return Some(GroupKind::Run);
    }
    None
}

/// The two end cards of a thrown group, as the [`PickUp::Ends`](crate::PickUp::Ends) rule sees
/// them (`None` for an empty group).
///
/// For a run, the ends are the lowest and the highest places of the run, whatever order it was
/// listed in: a listed order of 6-4-5 still offers the 4 and the 6, never the middle card. A
/// joker that extends a run is its end; spare jokers extend the run upward while it fits under
/// the king, then downward. For any other group (a set, a single card) the ends are its first
/// and last cards as listed.
pub fn group_ends(cards: &[Card], settings: &Settings) -> Option<(Card, Card)> {
    let (&first, &last) = (cards.first()?, cards.last()?);
    if cards.len() < 3 || classify(cards, settings) != Some(GroupKind::Run) {
        return Some((first, last));
    }
    let mut real: Vec<(u8, Card)> = cards
        .iter()
        .filter_map(|&c| c.rank().map(|r| (r.number(), c)))
        .collect();
    real.sort_unstable();
    let jokers: Vec<Card> = cards.iter().copied().filter(|c| c.is_joker()).collect();
    let (low, high) = (real[0], real[real.len() - 1]);
    let span = usize::from(high.0 - low.0) + 1;
    let spare = jokers.len() - (span - real.len());
    let upward = spare.min(usize::from(13 - high.0));
    let downward = spare - upward;
    let low_end = if downward > 0 { jokers[0] } else { low.1 };
    let high_end = if upward > 0 {
        jokers[jokers.len() - 1]
    } else {
        high.1
    };
    Some((low_end, high_end))
}

/// Whether `cards` (with `jokers` of them jokers) form a run.
fn is_run(cards: &[Card], jokers: usize, jokers_in_runs: bool) -> bool {
    if cards.len() < 3 || (jokers > 0 && !jokers_in_runs) {
        return false;
    }
    let real = cards.len() - jokers;
    if real < 2 {
        return false;
    }
    let mut suit = None;
    let mut mask = 0u16;
    for card in cards.iter().filter(|c| !c.is_joker()) {
        let (Some(r), Some(s)) = (card.rank(), card.suit()) else {
            return false;
        };
        if *suit.get_or_insert(s) != s {
            return false;
        }
        let bit = 1u16 << r.number();
        if mask & bit != 0 {
            return false;
        }
        mask |= bit;
    }
    let low = mask.trailing_zeros() as usize;
    let high = 15 - mask.leading_zeros() as usize;
    let span = high - low + 1;
    // The gaps inside the span are filled by jokers; any jokers left over extend the run at either
    // end, which is possible while the whole run still fits between ace and king.
    span - real <= jokers && cards.len() <= 13
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::parse_cards;
    use crate::settings::Preset;

    fn kind(text: &str, settings: &Settings) -> Option<GroupKind> {
        classify(&parse_cards(text).unwrap(), settings)
    }

    fn table(runs: bool, jokers: bool, jokers_in_runs: bool) -> Settings {
        Settings {
            runs,
            jokers,
            jokers_in_runs,
            ..Preset::Standard.settings()
        }
    }

    #[test]
    fn singles_sets_and_part_sets() {
        let s = table(false, false, false);
        assert_eq!(kind("KH", &s), Some(GroupKind::Single));
        assert_eq!(kind("7H 7S", &s), Some(GroupKind::Set));
        assert_eq!(kind("7H 7S 7D 7C", &s), Some(GroupKind::Set));
        assert_eq!(kind("7H 8H", &s), None);
        assert_eq!(kind("", &s), None);
    }

    #[test]
    fn runs_only_when_on_ace_low_no_wrap() {
        let off = table(false, false, false);
        let on = table(true, false, false);
        assert_eq!(kind("4H 5H 6H", &off), None);
        assert_eq!(kind("4H 5H 6H", &on), Some(GroupKind::Run));
        assert_eq!(
            kind("6H 4H 5H", &on),
            Some(GroupKind::Run),
            "listed order is free"
        );
        assert_eq!(kind("8S 9S 10S JS", &on), Some(GroupKind::Run));
        assert_eq!(kind("AS 2S 3S", &on), Some(GroupKind::Run));
        assert_eq!(kind("QS KS AS", &on), None, "no wrap");
        assert_eq!(kind("KS AS 2S", &on), None, "no wrap");
        assert_eq!(kind("4H 5H", &on), None, "two cards are not a run");
        assert_eq!(kind("4H 5S 6H", &on), None, "one suit");
        assert_eq!(kind("4H 6H 7H", &on), None, "no gaps");
    }

    #[test]
    fn jokers_in_sets_beside_a_real_card_and_as_a_pair() {
        let s = table(true, true, false);
        assert_eq!(kind("7H RJ", &s), Some(GroupKind::Set));
        assert_eq!(kind("RJ 7H 7S BJ", &s), Some(GroupKind::Set));
        assert_eq!(kind("RJ BJ", &s), Some(GroupKind::Set));
        assert_eq!(kind("RJ", &s), Some(GroupKind::Single));
        assert_eq!(kind("4H RJ 6H", &s), None, "never in a run");
        assert_eq!(kind("4H 5H RJ", &s), None, "never extends a run");
        assert_eq!(
            kind("7H RJ", &table(false, false, false)),
            None,
            "jokers off"
        );
    }

    #[test]
    fn run_ends_are_its_lowest_and_highest_places_whatever_the_listed_order() {
        let on = table(true, true, true);
        let ends = |text: &str| {
            let (a, b) = group_ends(&parse_cards(text).unwrap(), &on).unwrap();
            format!("{a} {b}")
        };
        assert_eq!(ends("6H 4H 5H"), "4H 6H");
        assert_eq!(
            ends("4H RJ 6H"),
            "4H 6H",
            "a joker filling a gap is not an end"
        );
        assert_eq!(ends("RJ 4H 5H"), "4H RJ", "a spare joker extends upward");
        assert_eq!(
            ends("QS RJ KS"),
            "RJ KS",
            "no room above the king: downward"
        );
        assert_eq!(ends("7C 7S 7H"), "7C 7H", "a set: first and last as listed");
        assert_eq!(ends("9D"), "9D 9D");
        assert_eq!(group_ends(&[], &on), None);
    }

    #[test]
    fn jokers_in_runs_when_that_option_is_on() {
        let s = table(true, true, true);
        assert_eq!(kind("4H RJ 6H", &s), Some(GroupKind::Run));
        assert_eq!(kind("4H 5H RJ", &s), Some(GroupKind::Run));
        assert_eq!(kind("4H RJ BJ 7H", &s), Some(GroupKind::Run));
        assert_eq!(
            kind("QS KS RJ", &s),
            Some(GroupKind::Run),
            "extends downward to J"
        );
        assert_eq!(
            kind("4H RJ BJ", &s),
            Some(GroupKind::Set),
            "one real card: a set, not a run"
        );
        assert_eq!(kind("4H RJ 8H", &s), None, "one joker cannot fill two gaps");
        assert_eq!(kind("4H RJ 6S", &s), None, "one suit");
    }
}
