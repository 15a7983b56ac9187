//! What the public events tell a seat.
//!
//! [`Memory`] follows the round's events: which cards lie in the pile (and so are out of play
//! until a reshuffle), which cards each seat is known to hold because it took them off the pile
//! and has not thrown them since, and every pick-up with the throw count at which it happened.
//! It is fed by [`Memory::observe`]; [`Memory::sync`] checks it against the view and rebuilds it
//! from the public log when events were missed (a bot that takes over a seat mid-round).

use dhumbal_engine::{Card, Event, PublicHistory, SeatView, full_deck};

/// One card taken off the pile, in view of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pickup {
    /// The table's throw count when it happened.
    pub at_throw: u32,
    /// Who took it.
    pub seat: usize,
    /// The card.
    pub card: Card,
}

/// The public facts of the current round, as one seat has seen them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// The round these facts are about.
    round: u32,
    /// How many events of this round's log have been taken in.
    seen: usize,
    /// The pile, bottom first, as far as the events tell (all of it: every card in it was seen).
    pile: Vec<Card>,
    /// Per seat, the cards it took from the pile and has not thrown since.
    held: Vec<Vec<Card>>,
    /// Every pick-up this round, oldest first.
    pickups: Vec<Pickup>,
    /// Per seat, the throws it made this round.
    throws_by: Vec<u32>,
    /// Throws made this round across the table.
    throws: u32,
    /// Per seat, its last turn this round, if it has had one.
    last_turn: Vec<Option<LastTurn>>,
}

/// What one seat did on its last turn of a throw-then-draw round: what it threw, then what it
/// drew.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastTurn {
    /// The cards it threw.
    pub thrown: Vec<Card>,
    /// What it drew after: `None` before it drew, `Some(None)` the stock's top, `Some(Some(card))`
    /// that card off the pile.
    pub drawn: Option<Option<Card>>,
}

impl Memory {
    /// An empty memory.
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Takes in one public event.
    pub fn observe(&mut self, event: &Event) {
        match event {
            Event::Dealt {
                round, pile_top, ..
            } => {
                *self = Memory {
                    round: *round,
                    pile: vec![*pile_top],
                    ..Memory::default()
                };
            }
            Event::Threw { seat, cards } => {
                self.pile.extend_from_slice(cards);
                let held = self.held_mut(*seat);
                held.retain(|c| !cards.contains(c));
                self.throws += 1;
                self.grow(*seat);
                self.throws_by[*seat] += 1;
                self.last_turn[*seat] = Some(LastTurn {
                    thrown: cards.clone(),
                    drawn: None,
                });
            }
            Event::TookFromPile { seat, card } => {
                if let Some(at) = self.pile.iter().rposition(|c| c == card) {
                    self.pile.remove(at);
                }
                self.held_mut(*seat).push(*card);
                if let Some(turn) = self.last_turn[*seat].as_mut() {
                    turn.drawn = Some(Some(*card));
                }
                self.pickups.push(Pickup {
                    at_throw: self.throws,
                    seat: *seat,
                    card: *card,
                });
            }
            Event::Reshuffled { stock } => {
                // Everything but the kept top of the pile went back face down.
                let kept = self.pile.len().saturating_sub(*stock);
                self.pile.drain(..self.pile.len() - kept);
            }
            Event::DrewFromStock { seat } => {
                self.grow(*seat);
                if let Some(turn) = self.last_turn[*seat].as_mut() {
                    turn.drawn = Some(None);
                }
            }
            Event::Called { .. } | Event::RoundEnded { .. } | Event::MatchEnded { .. } => {}
        }
        self.seen += 1;
    }

    /// Makes sure the memory holds every event of the view's round, rebuilding it from the
    /// history's public log if any were missed.
    pub fn sync(&mut self, view: &SeatView, history: &PublicHistory) {
        if self.round == view.round && self.seen == history.log.len() {
            return;
        }
        *self = Memory::default();
        for event in &history.log {
            self.observe(event);
        }
    }

    fn grow(&mut self, seat: usize) {
        if self.held.len() <= seat {
            self.held.resize(seat + 1, Vec::new());
            self.throws_by.resize(seat + 1, 0);
            self.last_turn.resize(seat + 1, None);
        }
    }

    fn held_mut(&mut self, seat: usize) -> &mut Vec<Card> {
        self.grow(seat);
        &mut self.held[seat]
    }

    /// The cards `seat` is known to hold: taken off the pile and not thrown since.
    pub fn held(&self, seat: usize) -> &[Card] {
        self.held.get(seat).map_or(&[], Vec::as_slice)
    }

    /// Every pick-up this round, oldest first.
    pub fn pickups(&self) -> &[Pickup] {
        &self.pickups
    }

    /// Pick-ups by `seat` within the last `window` throws of the table.
    pub fn recent_pickups(&self, seat: usize, window: u32) -> impl Iterator<Item = Card> + '_ {
        let since = self.throws.saturating_sub(window);
        self.pickups
            .iter()
            .filter(move |p| p.seat == seat && p.at_throw >= since)
            .map(|p| p.card)
    }

    /// What `seat` did on its last turn this round (meaningful at a throw-then-draw table, where
    /// a turn is a throw and then a draw), if it has had one.
    pub fn last_turn(&self, seat: usize) -> Option<&LastTurn> {
        self.last_turn.get(seat).and_then(Option::as_ref)
    }

    /// The cards in the pile, as far as the events tell.
    pub fn pile(&self) -> &[Card] {
        &self.pile
    }

    /// The throws `seat` has made this round.
    pub fn throws_by(&self, seat: usize) -> u32 {
        self.throws_by.get(seat).copied().unwrap_or(0)
    }

    /// The cards whose place this seat cannot know: the pack minus its own hand, the pile and
    /// every card another seat is known to hold. The stock and the other hands' unknown cards
    /// are drawn from these.
    pub fn unseen(&self, view: &SeatView) -> Vec<Card> {
        let mut out_of_play = [false; 54];
        let me = view.seat.unwrap_or(view.turn);
        let known = self
            .held
            .iter()
            .enumerate()
            .filter(|&(s, _)| s != me)
            .flat_map(|(_, cards)| cards);
        for card in view.hand.iter().chain(&self.pile).chain(known) {
            out_of_play[card.index()] = true;
        }
        full_deck(view.settings.jokers)
            .into_iter()
            .filter(|c| !out_of_play[c.index()])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::{Action, Game, Preset, Source};

    #[test]
    fn rebuilding_from_the_log_matches_following_the_events() {
        let mut game = Game::new(Preset::Standard.settings(), [9; 32]).unwrap();
        let mut followed = Memory::new();
        for event in game.log().to_vec() {
            followed.observe(&event);
        }
        for _ in 0..60 {
            let seat = game.turn();
            let from = if game.throws() % 3 == 0 {
                Source::Pile
            } else {
                Source::Stock
            };
            let mut events = game.apply(seat, Action::Draw { from }).unwrap();
            let barred = game.view(seat).barred;
            let card = *game
                .hand(seat)
                .iter()
                .find(|&&c| Some(c) != barred)
                .unwrap();
            events.extend(
                game.apply(seat, Action::Throw { cards: vec![card] })
                    .unwrap(),
            );
            for event in &events {
                followed.observe(event);
            }
        }
        let view = game.view(0);
        let mut rebuilt = Memory::new();
        rebuilt.sync(&view, game.public_history());
        assert_eq!(rebuilt, followed);
        assert_eq!(followed.pile().len(), view.pile_size);
        assert_eq!(followed.pile().last().copied(), view.pile_top);
        assert!(!followed.pickups().is_empty());
        // Every unseen card is really in the stock or in another hand.
        for card in followed.unseen(&view) {
            assert!(!view.hand.contains(&card) && !followed.pile().contains(&card));
        }
    }
}
