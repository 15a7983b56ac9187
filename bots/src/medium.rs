//! The medium bot: keeps pairs, throws the heaviest group it can, takes the pile when that helps,
//! remembers recent pick-ups, and calls 1 under the limit.
//!
//! - Throwing: the heaviest legal group (sets, runs and jokers included) that does not break up
//!   a set it holds; ties go to the group with more real cards, so the hand shrinks and jokers
//!   (worth nothing) stay.
//! - Drawing: the pile card when it completes a set with the hand, or when the hand after the
//!   throw would be lighter than with an average blind card from the stock.
//! - Memory: what each opponent took from the pile in the last [`MEMORY_WINDOW`] throws of the
//!   table. It lands its throws so that the card on top does not pair with something the next
//!   player was seen taking, and it does not call while a short-handed opponent was recently
//!   seen taking a low card.
//! - Calling: at 1 under the limit (4 at a table with no limit).

use dhumbal_engine::{
    Action, Card, Difficulty, Event, PublicHistory, SeatView, Settings, full_deck,
};

use crate::Bot;
use crate::easy::OPEN_TABLE_LIMIT;
use crate::groups::{legal_groups, total, value};
use crate::memory::Memory;
use crate::turn::{Step, draw, next_player, opponents, step};

/// How many of the table's throws a pick-up is remembered for.
pub const MEMORY_WINDOW: u32 = 8;

/// The medium bot. See the [module documentation](self).
#[derive(Clone, Debug, Default)]
pub struct MediumBot {
    /// The round's public facts; only the recent pick-ups are consulted.
    memory: Memory,
}

impl MediumBot {
    /// A medium bot. It makes no random choices, so the seed does not change its play; it is
    /// taken for symmetry with the other difficulties.
    pub fn new(_seed: u64) -> MediumBot {
        MediumBot::default()
    }

    fn wants_call(&self, view: &SeatView) -> bool {
        let limit = view.settings.call_limit.unwrap_or(OPEN_TABLE_LIMIT);
        if !view.can_call || view.hand_total + 1 > limit {
            return false;
        }
        // Hold back while a short-handed opponent was just seen taking a low card.
        !opponents(view).into_iter().any(|o| {
            view.card_counts[o] <= 2
                && self
                    .memory
                    .recent_pickups(o, MEMORY_WINDOW)
                    .any(|c| value(c, &view.settings) <= view.hand_total)
        })
    }

    /// The mean value of a card this seat has not seen (no counting: only its hand and the
    /// visible pile are excluded).
    fn mean_unseen(view: &SeatView) -> f64 {
        let deck = full_deck(view.settings.jokers);
        let seen = |c: &Card| view.hand.contains(c) || view.top_throw.contains(c);
        let unseen: Vec<u32> = deck
            .iter()
            .filter(|c| !seen(c))
            .map(|&c| value(c, &view.settings))
            .collect();
        f64::from(unseen.iter().sum::<u32>()) / unseen.len().max(1) as f64
    }

    /// The pile card to take, if any.
    fn pile_choice(&self, view: &SeatView) -> Option<Card> {
        // With an empty hand at the start of a draw-then-throw turn, a pile card could not be
        // thrown this turn, and there would be nothing else to throw.
        let empty_start = view.hand.is_empty() && view.phase == dhumbal_engine::Phase::Start;
        if view.takeable.is_empty() || empty_start {
            return None;
        }
        let settings = &view.settings;
        let mean = Self::mean_unseen(view);
        let best = |card: Card| -> f64 {
            match view.phase {
                dhumbal_engine::Phase::Start => {
                    let mut hand = view.hand.clone();
                    hand.push(card);
                    let throw = heaviest_group(&hand, Some(card), settings);
                    f64::from(total(&hand, settings) - total(&throw, settings))
                }
                _ => f64::from(view.hand_total + value(card, settings)),
            }
        };
        let stock = match view.phase {
            dhumbal_engine::Phase::Start => {
                let throw = heaviest_group(&view.hand, None, settings);
                f64::from(view.hand_total - total(&throw, settings)) + mean
            }
            _ => f64::from(view.hand_total) + mean,
        };
        let completes =
            |card: Card| card.rank().is_some() && view.hand.iter().any(|h| h.rank() == card.rank());
        if let Some(&card) = view.takeable.iter().find(|&&c| completes(c)) {
            return Some(card);
        }
        view.takeable
            .iter()
            .copied()
            .map(|c| (best(c), c))
            .filter(|&(after, _)| after < stock)
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, c)| c)
    }

    fn throw(&self, view: &SeatView) -> Vec<Card> {
        let mut group = heaviest_group(&view.hand, view.barred, &view.settings);
        let next = next_player(view);
        let taken: Vec<Card> = self.memory.recent_pickups(next, MEMORY_WINDOW).collect();
        let pairs_with = |c: &Card| taken.iter().any(|t| t.rank() == c.rank());
        // Put a card the next player is not collecting on top (the last card lands on top).
        if let Some(at) = group.iter().rposition(|c| !pairs_with(c)) {
            let top = group.remove(at);
            group.push(top);
        }
        group
    }
}

/// The heaviest legal group of `hand` (never containing `barred`) that does not break up a set:
/// a group holding some but not all of the cards of a rank that the hand has two or more of is
/// only chosen when nothing else is legal. Ties go to more real cards, then fewer jokers.
pub(crate) fn heaviest_group(
    hand: &[Card],
    barred: Option<Card>,
    settings: &Settings,
) -> Vec<Card> {
    let groups = legal_groups(hand, barred, settings);
    let count_rank = |cards: &[Card], card: Card| {
        cards
            .iter()
            .filter(|c| c.rank().is_some() && c.rank() == card.rank())
            .count()
    };
    let breaks_set = |group: &[Card]| {
        group.iter().any(|&c| {
            let held = count_rank(hand, c);
            held >= 2 && count_rank(group, c) < held
        })
    };
    let key = |g: &Vec<Card>| {
        let jokers = g.iter().filter(|c| c.is_joker()).count();
        (
            !breaks_set(g),
            total(g, settings),
            g.len() - jokers,
            usize::MAX - jokers,
        )
    };
    groups
        .into_iter()
        .max_by_key(key)
        .expect("a hand can always throw")
}

impl Bot for MediumBot {
    fn difficulty(&self) -> Difficulty {
        Difficulty::Medium
    }

    fn fork(&self) -> Box<dyn Bot> {
        Box::new(self.clone())
    }

    fn observe(&mut self, event: &Event) {
        self.memory.observe(event);
    }

    fn choose(&mut self, view: &SeatView, history: &PublicHistory) -> Action {
        self.memory.sync(view, history);
        match step(view) {
            Step::CallOrDraw | Step::CallOrThrow if self.wants_call(view) => Action::Call,
            Step::CallOrDraw | Step::Draw => draw(view, self.pile_choice(view)),
            Step::CallOrThrow | Step::Throw => Action::Throw {
                cards: self.throw(view),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::{Preset, parse_cards};

    /// Seat 0's view of a fresh `settings` table, holding `hand` after drawing (or at the start
    /// of its turn with `phase` Start), with a bot that saw seat 1 take `taken` from the pile.
    fn seat_zero(
        settings: Settings,
        hand: &str,
        phase: dhumbal_engine::Phase,
        taken: &str,
    ) -> (SeatView, MediumBot) {
        let game = dhumbal_engine::Game::new(settings, [6; 32]).unwrap();
        let mut view = game.view(0);
        view.hand = parse_cards(hand).unwrap();
        view.hand_total = total(&view.hand, &view.settings);
        view.phase = phase;
        let mut bot = MediumBot::new(0);
        let mut history = game.public_history().clone();
        bot.memory.sync(&view, &history);
        bot.memory.observe(&Event::TookFromPile {
            seat: 1,
            card: taken.parse().unwrap(),
        });
        // The log must match what the bot saw, or it would rebuild from the log.
        history.log.push(Event::TookFromPile {
            seat: 1,
            card: taken.parse().unwrap(),
        });
        bot.memory.sync(&view, &history);
        (view, bot)
    }

    #[test]
    fn the_top_card_does_not_pair_with_a_recent_pick_up_of_the_next_player() {
        let settings = Settings {
            runs: true,
            ..Preset::Standard.settings()
        };
        let (view, bot) = seat_zero(settings, "5H 6H 7H AS", dhumbal_engine::Phase::Throw, "7S");
        let group = bot.throw(&view);
        assert_eq!(group.len(), 3);
        assert_ne!(group.last().unwrap().to_string(), "7H");
    }

    #[test]
    fn takes_the_pile_to_complete_a_set_or_lower_the_hand() {
        let settings = Preset::Standard.settings();
        let start = dhumbal_engine::Phase::Start;
        let (mut view, bot) = seat_zero(settings, "KH 9S 8D 3C 2C", start, "5S");
        view.takeable = parse_cards("KS").unwrap();
        assert_eq!(
            bot.pile_choice(&view),
            Some(view.takeable[0]),
            "completes kings"
        );
        view.takeable = parse_cards("AD").unwrap();
        assert_eq!(
            bot.pile_choice(&view),
            Some(view.takeable[0]),
            "an ace lowers it"
        );
        view.takeable = parse_cards("QD").unwrap();
        assert_eq!(bot.pile_choice(&view), None, "a queen does not");
    }

    #[test]
    fn keeps_a_pair_when_a_single_is_heavier() {
        let settings = Preset::Standard.settings();
        let hand = parse_cards("KH KS 3D 3C QC").unwrap();
        // The pile's king is barred: throwing the other king would break the pair.
        let group = heaviest_group(&hand, Some(hand[0]), &settings);
        assert_eq!(group, parse_cards("QC").unwrap());
        assert_eq!(
            heaviest_group(&hand, None, &settings),
            parse_cards("KH KS").unwrap()
        );
    }
}
