//! The easy bot: remembers nothing, throws its heaviest card or an obvious set, and calls on the
//! limit itself.
//!
//! It takes the pile only for a very low card, throws the heaviest of its single cards, its
//! complete sets (every card it holds of one rank) and, where runs are on, its complete runs,
//! and calls as soon as its total is at or under the limit (5 at a table with no limit). It
//! forgets every event: its decisions depend on the view of the moment alone.

use dhumbal_engine::{
    Action, Card, Difficulty, Event, PublicHistory, SeatView, Settings, classify,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Bot;
use crate::groups::{total, value};
use crate::turn::{Step, draw, step};

/// The limit the easy bot calls at when the table sets none.
pub const OPEN_TABLE_LIMIT: u32 = 5;

/// The most a pile card may be worth for the easy bot to take it.
const TAKE_AT_MOST: u32 = 3;

/// The easy bot. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct EasyBot {
    /// Breaks ties between equally heavy throws.
    rng: ChaCha8Rng,
}

impl EasyBot {
    /// An easy bot whose tie-breaks come from `seed`.
    pub fn new(seed: u64) -> EasyBot {
        EasyBot {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    fn wants_call(view: &SeatView) -> bool {
        let limit = view.settings.call_limit.unwrap_or(OPEN_TABLE_LIMIT);
        view.can_call && view.hand_total <= limit
    }

    /// The lowest pile card worth taking, if any.
    fn pile_choice(view: &SeatView) -> Option<Card> {
        view.takeable
            .iter()
            .copied()
            .filter(|&c| value(c, &view.settings) <= TAKE_AT_MOST)
            .min_by_key(|&c| value(c, &view.settings))
    }

    fn throw(&mut self, view: &SeatView) -> Vec<Card> {
        let candidates = obvious_groups(&view.hand, view.barred, &view.settings);
        let key = |g: &Vec<Card>| (total(g, &view.settings), g.len());
        let best = candidates
            .iter()
            .map(key)
            .max()
            .expect("a hand can always throw");
        let heaviest: Vec<&Vec<Card>> = candidates.iter().filter(|g| key(g) == best).collect();
        heaviest[self.rng.random_range(0..heaviest.len())].clone()
    }
}

/// The groups an easy player sees: each card alone, every complete set (all the cards held of
/// one rank, two or more) and, where runs are on, every complete run of real cards in one suit.
/// The barred card is left out of all of them.
pub(crate) fn obvious_groups(
    hand: &[Card],
    barred: Option<Card>,
    settings: &Settings,
) -> Vec<Vec<Card>> {
    let free: Vec<Card> = hand
        .iter()
        .copied()
        .filter(|&c| Some(c) != barred)
        .collect();
    let mut groups: Vec<Vec<Card>> = free.iter().map(|&c| vec![c]).collect();
    for rank in 1..=13u8 {
        let set: Vec<Card> = free
            .iter()
            .copied()
            .filter(|c| c.rank().map(|r| r.number()) == Some(rank))
            .collect();
        if set.len() >= 2 {
            groups.push(set);
        }
    }
    if settings.runs {
        for suit in dhumbal_engine::Suit::ALL {
            let mut in_suit: Vec<Card> = free
                .iter()
                .copied()
                .filter(|c| c.suit() == Some(suit))
                .collect();
            in_suit.sort();
            let mut start = 0;
            for end in 1..=in_suit.len() {
                let breaks =
                    end == in_suit.len() || in_suit[end].index() != in_suit[end - 1].index() + 1;
                if breaks {
                    let run = &in_suit[start..end];
                    if run.len() >= 3 && classify(run, settings).is_some() {
                        groups.push(run.to_vec());
                    }
                    start = end;
                }
            }
        }
    }
    groups
}

impl Bot for EasyBot {
    fn difficulty(&self) -> Difficulty {
        Difficulty::Easy
    }

    fn fork(&self) -> Box<dyn Bot> {
        Box::new(self.clone())
    }

    fn observe(&mut self, _event: &Event) {}

    fn choose(&mut self, view: &SeatView, _history: &PublicHistory) -> Action {
        match step(view) {
            Step::CallOrDraw if Self::wants_call(view) => Action::Call,
            Step::CallOrDraw | Step::Draw => draw(view, Self::pile_choice(view)),
            Step::CallOrThrow if Self::wants_call(view) => Action::Call,
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

    #[test]
    fn takes_only_a_very_low_pile_card_and_forgets_everything() {
        let game = dhumbal_engine::Game::new(Preset::Standard.settings(), [8; 32]).unwrap();
        let mut view = game.view(0);
        view.takeable = parse_cards("3H").unwrap();
        assert_eq!(EasyBot::pile_choice(&view), Some(view.takeable[0]));
        view.takeable = parse_cards("4H").unwrap();
        assert_eq!(EasyBot::pile_choice(&view), None);
        // The same view gets the same answer whatever the bot was told before.
        let mut told = EasyBot::new(3);
        told.observe(&Event::TookFromPile {
            seat: 1,
            card: view.takeable[0],
        });
        let history = game.public_history();
        assert_eq!(
            told.choose(&view, history),
            EasyBot::new(3).choose(&view, history)
        );
    }

    #[test]
    fn obvious_groups_are_singles_complete_sets_and_complete_runs() {
        let hand = parse_cards("7H 7S 5D 6D 8D KC").unwrap();
        let standard = Preset::Standard.settings();
        assert_eq!(obvious_groups(&hand, None, &standard).len(), 7);
        let household = Preset::Household.settings();
        let groups = obvious_groups(&hand, None, &household);
        assert_eq!(groups.len(), 7, "5D 6D 8D is not a run");
        let run = parse_cards("5D 6D 7D KC").unwrap();
        let groups = obvious_groups(&run, None, &household);
        assert!(groups.contains(&parse_cards("5D 6D 7D").unwrap()));
        let barred = obvious_groups(&hand, Some(hand[0]), &standard);
        assert!(barred.iter().all(|g| !g.contains(&hand[0])));
        assert_eq!(barred.len(), 5, "no set of sevens without the barred seven");
    }
}
