//! The history a client keeps: the current round's log and the match's finished results.
//!
//! The server sends the history once, in `history`, when a client arrives in a started match;
//! after that a `state` no longer repeats it, and the client follows the events each `state`
//! carries instead. [`History::follow`] is that rule, for Rust clients; the web
//! client does the same in `server/web/session.js`.

use dhumbal_engine::{Event, RoundResult};

use crate::ServerMessage;

/// The round's log and the match's results, as a client keeps them from the server's messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// The public log of the current round: its `dealt` event and every event since.
    pub log: Vec<Event>,
    /// Every finished round's result in this match, in order.
    pub results: Vec<RoundResult>,
    /// The places in `log` of the events a stand-in bot played for an away person.
    pub stand_in: Vec<usize>,
}

impl History {
    /// Brings the history up to date with one message from the server: `history` replaces it;
    /// each event of a `state` or a `patch` is added to the log, except `dealt`, which starts a new log (and,
    /// for round 1, a new match with no results); a `round_ended` also adds its result to the
    /// results; the events a stand-in played are marked in `stand_in`. Other messages change
    /// nothing. (A `patch` that does not build on the view a client holds is not followed: see
    /// [`crate::HeldView`].)
    pub fn follow(&mut self, message: &ServerMessage) {
        match message {
            ServerMessage::History {
                log,
                results,
                stand_in,
            } => {
                self.log.clone_from(log);
                self.results.clone_from(results);
                self.stand_in.clone_from(stand_in);
            }
            ServerMessage::State {
                events, stand_in, ..
            }
            | ServerMessage::Patch(crate::Patch {
                events, stand_in, ..
            }) => {
                for event in events {
                    self.add(event);
                    if stand_in.is_some() {
                        self.stand_in.push(self.log.len() - 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// Adds one public event.
    pub fn add(&mut self, event: &Event) {
        match event {
            Event::Dealt { round, .. } => {
                self.log.clear();
                self.stand_in.clear();
                if *round == 1 {
                    self.results.clear();
                }
            }
            Event::RoundEnded { result } => self.results.push((**result).clone()),
            _ => {}
        }
        self.log.push(event.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::{Game, Phase, Preset, Rounds, Settings};

    /// The message the server sends a client after a change that caused `events`.
    fn messages(game: &Game, events: Vec<Event>) -> Vec<ServerMessage> {
        vec![ServerMessage::State {
            v: 0,
            events,
            stand_in: None,
            clock: None,
            view: Box::new(game.spectator_view()),
        }]
    }

    /// A client that arrives at any point and follows the messages from then on keeps exactly
    /// the engine's log and results, through whole matches of every preset and a rematch.
    #[test]
    fn following_the_messages_keeps_the_engines_history() {
        for preset in Preset::ALL {
            let settings = Settings {
                rounds: Rounds::Fixed(3),
                ..preset.settings()
            };
            for (n, arrive_at) in [0usize, 7, 40].into_iter().enumerate() {
                let mut kept = History::default();
                let mut arrived = false;
                for rematch in 0..2u8 {
                    let mut game = Game::new(settings.clone(), [n as u8 + rematch; 32]).unwrap();
                    let mut pending = messages(&game, game.log().to_vec());
                    for step in 0..20_000usize {
                        if !arrived && step >= arrive_at {
                            kept.follow(&ServerMessage::history(&game, &[]));
                            arrived = true;
                        } else if arrived {
                            pending.iter().for_each(|m| kept.follow(m));
                        }
                        if arrived {
                            assert_eq!(kept.log, game.log(), "{preset:?}, step {step}");
                            assert_eq!(kept.results, game.results(), "{preset:?}, step {step}");
                        }
                        pending = match game.phase() {
                            Phase::MatchOver => break,
                            Phase::RoundOver => {
                                let events = game.next_round().unwrap();
                                messages(&game, events)
                            }
                            _ => {
                                let seat = game.turn();
                                let actions = game.legal_actions(seat);
                                let action = actions[(step * 7 + n) % actions.len()].clone();
                                let events = game.apply(seat, action).unwrap();
                                messages(&game, events)
                            }
                        };
                    }
                    assert!(game.is_over(), "{preset:?} did not finish");
                }
            }
        }
    }

    /// The view in a `state` leaves the history out of its JSON.
    #[test]
    fn a_state_does_not_carry_the_history() {
        let game = Game::new(Preset::Standard.settings(), [5; 32]).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&ServerMessage::state(&game, Some(0), None, 1).to_json()).unwrap();
        let view = json["view"].as_object().unwrap();
        assert!(!view.contains_key("log") && !view.contains_key("results"));
        assert!(view.contains_key("hand") && view.contains_key("totals"));
    }
}
