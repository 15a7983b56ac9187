//! Client messages: permission first (a seat, the host, the stage), then the rules.

use dhumbal_engine::{Action, Difficulty, Settings};
use dhumbal_protocol::{ClientMessage, MessageId, Notice, ServerMessage, Stage, draw_source};
use tracing::info;

use super::{ConnId, Entropy, RoomCore, Seat, bot_knowing};
use crate::error::Refusal;
use crate::room::record::Record;

impl RoomCore {
    /// One message from a joined client: permission first, then the rules.
    pub(super) fn on_message(
        &mut self,
        conn: ConnId,
        id: Option<MessageId>,
        message: ClientMessage,
        entropy: &mut dyn Entropy,
    ) -> Result<(), Refusal> {
        let Some(client) = self.clients.get(&conn) else {
            return Ok(());
        };
        let seat = client.seat;
        match message {
            ClientMessage::Hello(_) => Err(Refusal::AlreadyJoined),
            ClientMessage::TakeSeat { seat: to } => self.take_seat(conn, to, entropy),
            ClientMessage::SetSettings { settings } => {
                self.require_host(seat)?;
                self.require_lobby()?;
                self.change_settings(*settings)
            }
            ClientMessage::SetPreset { preset } => {
                self.require_host(seat)?;
                self.require_lobby()?;
                // A preset is the rules; the turn timer and the hints are the table's own and
                // stay.
                let (turn_timer, hints) = (self.settings.turn_timer, self.settings.hints);
                self.change_settings(Settings {
                    turn_timer,
                    hints,
                    ..preset.settings()
                })
            }
            ClientMessage::AddBot {
                seat: at,
                difficulty,
            } => self.add_bot(seat, at, difficulty),
            ClientMessage::ClearSeat { seat: at } => self.clear_seat(seat, at, entropy),
            ClientMessage::HandToBot { seat: at } => self.hand_to_bot(seat, at, entropy),
            ClientMessage::Back => self.back(seat),
            ClientMessage::Readmit { removed } => self.readmit(seat, removed),
            ClientMessage::Start => {
                self.require_host(seat)?;
                self.require_lobby()?;
                self.begin_match(entropy)
            }
            ClientMessage::Call => self.play(seat, Action::Call, entropy),
            ClientMessage::Draw { from, card } => {
                let from = draw_source(from, card).map_err(|e| Refusal::BadBody(e.to_owned()))?;
                self.play(seat, Action::Draw { from }, entropy)
            }
            ClientMessage::Throw { cards } => self.play(seat, Action::Throw { cards }, entropy),
            ClientMessage::Ready { client_seed } => self.vote_at(
                conn,
                seat,
                client_seed,
                (Stage::BetweenRounds, Refusal::NotBetweenRounds),
            ),
            ClientMessage::Chat { text } => {
                let seat = self.require_seated(seat)?;
                self.say(seat, &text)
            }
            ClientMessage::React { reaction } => {
                let name = client.name.clone();
                self.react(seat, name, reaction)
            }
            ClientMessage::Mute { seat: at, muted } => self.mute(seat, at, muted),
            ClientMessage::RemoveWatcher { watcher } => self.remove_watcher(seat, watcher),
            ClientMessage::ReadmitWatcher { removed } => self.readmit_watcher(seat, removed),
            ClientMessage::SetWatching { allowed } => self.set_watching(seat, allowed),
            ClientMessage::ClientSeed { client_seed } => {
                let seat = self.require_seated(seat)?;
                self.take_client_seed(conn, seat, Some(client_seed))
            }
            ClientMessage::ToLobby => self.back_to_lobby(seat),
            ClientMessage::Resync => {
                self.resync(conn);
                Ok(())
            }
            // Answered by the connection itself, before the room; here only in the room's
            // own tests.
            ClientMessage::Ping => Ok(()),
            ClientMessage::Hint => self.ask_hint(conn, id, seat),
            ClientMessage::Review { seat: asked } => self.ask_review(conn, id, seat, asked),
            ClientMessage::Rematch { client_seed } => self.vote_at(
                conn,
                seat,
                client_seed,
                (Stage::MatchOver, Refusal::MatchNotOver),
            ),
        }
    }

    /// Lobby, host only: a bot in an empty seat (or another difficulty for a bot).
    fn add_bot(
        &mut self,
        seat: Option<usize>,
        at: usize,
        difficulty: Option<Difficulty>,
    ) -> Result<(), Refusal> {
        self.require_host(seat)?;
        self.require_lobby()?;
        self.require_seat(at)?;
        if matches!(self.seats[at], Seat::Human(_)) {
            return Err(Refusal::SeatTaken(at));
        }
        let difficulty = difficulty.unwrap_or(self.settings.difficulty);
        self.commit(Record::BotAdded {
            seat: at,
            difficulty,
        })
        .map_err(|e| self.internal(e))?;
        self.broadcast_room();
        Ok(())
    }

    /// Host only: empties a seat in the lobby; removes a person, in the lobby or during the
    /// match (a bot then plays their seat).
    fn clear_seat(
        &mut self,
        seat: Option<usize>,
        at: usize,
        entropy: &mut dyn Entropy,
    ) -> Result<(), Refusal> {
        self.require_host(seat)?;
        self.require_other_seat(seat, at)?;
        let person = match &self.seats[at] {
            Seat::Human(human) => Some((human.conn, human.name.clone())),
            _ => None,
        };
        if self.stage() != Stage::Lobby && person.is_none() {
            return Err(Refusal::NotAPerson(at));
        }
        self.commit(Record::Cleared { seat: at })
            .map_err(|e| self.internal(e))?;
        self.seat_bots(entropy);
        if let Some((conn, name)) = person {
            self.tell_removed(conn);
            info!(room = %self.code, %name, "removed by the host");
            if self.stage() != Stage::Lobby {
                self.broadcast(&ServerMessage::Notice(Notice::Removed { seat: at, name }));
            }
        }
        self.broadcast_room();
        Ok(())
    }

    /// During a match, host only: a stand-in plays this person's turns until they act again.
    fn hand_to_bot(
        &mut self,
        seat: Option<usize>,
        at: usize,
        entropy: &mut dyn Entropy,
    ) -> Result<(), Refusal> {
        self.require_host(seat)?;
        let Some(game) = &self.game else {
            return Err(Refusal::NotStarted);
        };
        self.require_other_seat(seat, at)?;
        let difficulty = self.settings.difficulty;
        let Some(Seat::Human(human)) = self.seats.get_mut(at) else {
            return Err(Refusal::NotAPerson(at));
        };
        if !human
            .cover
            .mark_away(|| bot_knowing(difficulty, game, entropy))
        {
            return Err(Refusal::AlreadyStandIn(at));
        }
        let name = human.name.clone();
        info!(room = %self.code, seat = at, "handed to a bot by the host");
        self.broadcast(&ServerMessage::Notice(Notice::HandedToBot {
            seat: at,
            name,
        }));
        self.broadcast_room();
        Ok(())
    }

    /// A person whose turns a stand-in plays takes their seat back.
    fn back(&mut self, seat: Option<usize>) -> Result<(), Refusal> {
        let at = self.require_seated(seat)?;
        let Some(Seat::Human(human)) = self.seats.get_mut(at) else {
            return Err(Refusal::NotSeated);
        };
        if !human.cover.back() {
            return Err(Refusal::NotAway);
        }
        let name = human.name.clone();
        info!(room = %self.code, seat = at, "back");
        self.broadcast(&ServerMessage::Notice(Notice::Back { seat: at, name }));
        // The seat comes back when `settle` finds the stand-in's turn done.
        Ok(())
    }

    /// Host only: lets a removed person back into the room.
    fn readmit(&mut self, seat: Option<usize>, removed: usize) -> Result<(), Refusal> {
        self.require_host(seat)?;
        if removed >= self.removed.len() {
            return Err(Refusal::NotRemoved(removed));
        }
        let name = self.removed[removed].name.clone();
        self.commit(Record::Readmitted { index: removed })
            .map_err(|e| self.internal(e))?;
        info!(room = %self.code, %name, "let back in");
        self.broadcast_room();
        Ok(())
    }

    /// Host only: mutes (or unmutes) a person.
    fn mute(&mut self, seat: Option<usize>, at: usize, muted: bool) -> Result<(), Refusal> {
        self.require_host(seat)?;
        self.require_other_seat(seat, at)?;
        if self.human(at).is_none() {
            return Err(Refusal::NotAPerson(at));
        }
        self.commit(Record::Muted { seat: at, muted })
            .map_err(|e| self.internal(e))?;
        self.broadcast_room();
        Ok(())
    }

    /// After the match, host only: the same table back to the lobby.
    fn back_to_lobby(&mut self, seat: Option<usize>) -> Result<(), Refusal> {
        self.require_host(seat)?;
        if self.stage() != Stage::MatchOver {
            return Err(Refusal::MatchNotOver);
        }
        self.commit(Record::ToLobby).map_err(|e| self.internal(e))?;
        // The log restarts from the room in its lobby.
        self.outbox.restart_log_from(self.snapshot_now());
        self.timers.lobby_again(self.now);
        info!(room = %self.code, "back to the lobby");
        self.broadcast_room();
        Ok(())
    }
}
