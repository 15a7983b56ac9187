//! Bots and stand-ins: the bot whose turn it is, a person's stand-in when they are away or out of
//! time, the turn's clock, seats handed back, and the seat metrics.

use std::time::Duration;

use dhumbal_bots::Bot;
use dhumbal_engine::{Action, Difficulty, Event, Game, Phase, PublicHistory, SeatView};
use dhumbal_protocol::{Notice, ServerMessage, Stage, TurnClock};
use tracing::{debug, info, warn};

use super::cover::Handing;
use super::{BotSeat, Effect, Entropy, RoomCore, Seat, bot_knowing, millis};
use crate::metrics::Seated;
use crate::room::record::Record;

impl RoomCore {
    /// Tells each person who got their seat back what the stand-in did for them.
    pub(super) fn tell_while_away(&mut self) {
        for (conn, summary) in self.outbox.take_while_away() {
            self.send_to(conn, &ServerMessage::WhileAway(summary));
        }
    }

    /// Gives seats back to their people where a stand-in's work is done: a person who returned
    /// (and is not marked away) gets it unless a turn is half played for them; a stand-in that
    /// played one timed-out turn leaves once that turn is over. Each person who gets their seat
    /// back hears what the stand-in did. Returns whether any seat changed hands.
    pub(super) fn hand_back(&mut self) -> bool {
        let turn = self.turn_being_played();
        let mid_turn = self
            .game
            .as_ref()
            .is_some_and(|g| matches!(g.phase(), Phase::Throw | Phase::Draw));
        let mut told = Vec::new();
        for (seat, occupant) in self.seats.iter_mut().enumerate() {
            // Most seats have no stand-in: they are passed over at once (this runs twice an
            // action).
            let Seat::Human(human) = occupant else {
                continue;
            };
            if !human.cover.is_covered() {
                continue;
            }
            let finishing = turn == Some(seat) && mid_turn;
            let handing = Handing {
                turn_over: turn != Some(seat),
                free: human.conn.is_some() && !finishing,
            };
            if let Some(summary) = human.cover.hand_back(handing) {
                info!(room = %self.code, seat, "seat handed back");
                told.push((human.conn, summary));
            }
        }
        let handed_back = !told.is_empty();
        for (conn, summary) in told {
            if let Some(conn) = conn.filter(|_| summary.turns > 0 || !summary.events.is_empty()) {
                self.outbox.while_away(conn, summary);
            }
        }
        handed_back
    }

    /// Brings the turn timer up to date after `events` (none for a change outside the game): a
    /// person's turn gets a fresh clock when it begins, keeps it through the turn, and has none
    /// while a stand-in plays it. Returns whether the clock started anew or stopped.
    pub(super) fn sync_clock(&mut self, events: &[Event]) -> bool {
        let person = self
            .turn_being_played()
            .filter(|&seat| self.human(seat).is_some_and(|h| !h.cover.is_covered()));
        let time = self
            .settings
            .turn_timer
            .map(|seconds| self.timing.turn_time(seconds));
        let dealt = events.iter().any(|e| matches!(e, Event::Dealt { .. }));
        self.timers
            .set_turn_clock(person.zip(time), dealt, self.now)
    }

    /// The turn's clock as clients see it, now.
    pub(super) fn clock(&self) -> Option<TurnClock> {
        let (seat, due) = self.timers.turn_clock()?;
        let total = self.timing.turn_time(self.settings.turn_timer?);
        Some(TurnClock {
            seat,
            left_ms: millis(due.saturating_duration_since(self.now)),
            total_ms: millis(total),
        })
    }

    /// Gives each bot seat of the match that has no bot yet (the match has just begun, a person
    /// was just removed from it, or the room was just replayed from its log) a new one, with a
    /// seed from `entropy`, that has seen the round's public log so far.
    pub(super) fn seat_bots(&mut self, entropy: &mut dyn Entropy) {
        let Some(game) = &self.game else {
            return;
        };
        for seat in &mut self.seats {
            if let Seat::Bot(BotSeat {
                difficulty,
                bot: bot @ None,
            }) = seat
            {
                *bot = Some(bot_knowing(*difficulty, game, entropy));
            }
        }
    }

    /// The seat whose turn a bot plays now (a bot's seat, or an away person's stand-in).
    pub(super) fn bot_to_play(&self) -> Option<usize> {
        let seat = self.turn_being_played()?;
        match &self.seats[seat] {
            Seat::Bot(_) => Some(seat),
            Seat::Human(human) if human.cover.is_covered() => Some(seat),
            Seat::Human(_) | Seat::Empty => None,
        }
    }

    /// The seat to play, while a round is being played.
    pub(super) fn turn_being_played(&self) -> Option<usize> {
        let game = self.game.as_ref()?;
        let playing = matches!(game.phase(), Phase::Start | Phase::Throw | Phase::Draw);
        (self.stage() == Stage::Playing && playing).then(|| game.turn())
    }

    /// An away person's turn has waited the grace period: a bot of the table's difficulty plays
    /// for them, knowing what the round's public log tells.
    pub(super) fn take_over(&mut self, seat: usize, entropy: &mut dyn Entropy) {
        let difficulty = self.settings.difficulty;
        let Some(game) = &self.game else {
            return;
        };
        let Seat::Human(human) = &mut self.seats[seat] else {
            return;
        };
        if human.conn.is_some() || human.cover.is_covered() {
            return;
        }
        human
            .cover
            .take_over(bot_knowing(difficulty, game, entropy));
        self.metrics.bot_takeovers.increment(1);
        info!(room = %self.code, seat, "a bot plays for an away person");
        self.broadcast_room();
    }

    /// A connected person's turn timer ran out: a stand-in plays this turn, and after two in a
    /// row every turn until they act again. Everyone hears of it. (A person who has gone plays
    /// by the usual takeover, without counting.)
    pub(super) fn time_out(&mut self, seat: usize, entropy: &mut dyn Entropy) {
        let difficulty = self.settings.difficulty;
        let Some(game) = &self.game else {
            return;
        };
        let Seat::Human(human) = &mut self.seats[seat] else {
            return;
        };
        if human.cover.is_covered() {
            return;
        }
        if human.conn.is_none() {
            self.take_over(seat, entropy);
            return;
        }
        let away = human.cover.time_out(bot_knowing(difficulty, game, entropy));
        let notice = Notice::TimedOut {
            seat,
            name: human.name.clone(),
            away,
        };
        self.metrics.bot_takeovers.increment(1);
        info!(room = %self.code, seat, "a turn ran out of time");
        self.broadcast(&ServerMessage::Notice(notice));
        self.broadcast_room();
    }

    /// The bot whose turn it is chooses, and its action is committed like anyone's. A bot that
    /// thinks for milliseconds (an expert) is not asked here: a copy of it goes out with the
    /// seat's view as an [`Effect::Think`], and what it chose comes back as [`Input::Thought`].
    pub(super) fn bot_step(&mut self, entropy: &mut dyn Entropy) {
        let Some(seat) = self.bot_to_play() else {
            return;
        };
        let Some(position) = self.position() else {
            return;
        };
        let Some(game) = &self.game else {
            return;
        };
        let view = game.view(seat);
        let Some(bot) = self.seats[seat].playing_bot() else {
            return;
        };
        if bot.difficulty() == Difficulty::Expert {
            self.tickets += 1;
            let ticket = Ticket {
                number: self.tickets,
                seat,
                position,
            };
            let job = ThinkJob {
                ticket,
                bot: bot.fork(),
                view,
                history: game.public_history().clone(),
            };
            self.thinking = Some(ticket);
            self.outbox.push(Effect::Think(Box::new(job)));
            return;
        }
        // A bot must never stall the table: a panic is caught, and `play_bot` plays the first
        // legal action for it.
        let history = game.public_history();
        let chosen =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bot.choose(&view, history)))
                .ok();
        self.play_bot(seat, chosen, entropy);
    }

    /// A bot that went away to think has chosen. If the table is where it was, the bot (as it
    /// now stands, with what it worked out) takes its seat's place again and its action is
    /// played; otherwise the thought is dropped and the turn, if still a bot's, is scheduled
    /// afresh by [`RoomCore::settle`].
    pub(super) fn on_thought(&mut self, thought: Thought, entropy: &mut dyn Entropy) {
        let Thought {
            ticket,
            bot,
            action,
            took,
        } = thought;
        self.metrics.bot_thought(took);
        if self.thinking != Some(ticket) || !self.still_thinking(ticket) {
            debug!(room = %self.code, seat = ticket.seat, "a bot's thought came too late");
            return;
        }
        self.thinking = None;
        if action.is_some() {
            if let Some(slot) = self.seats[ticket.seat].playing_bot() {
                *slot = bot;
            }
        }
        self.play_bot(ticket.seat, action, entropy);
    }

    /// Whether the bot sent to think with `ticket` still has its turn, at the same place.
    pub(super) fn still_thinking(&self, ticket: Ticket) -> bool {
        self.bot_to_play() == Some(ticket.seat) && self.position() == Some(ticket.position)
    }

    /// Where the match stands: which match, which round, and how many events into it.
    fn position(&self) -> Option<(u32, u32, usize)> {
        let game = self.game.as_ref()?;
        Some((self.matches, game.round(), game.log().len()))
    }

    /// Commits the action a bot chose for `seat`. A bot that failed (`None`: it panicked) or
    /// chose an illegal action has its mistake logged, and the first legal action is played
    /// for it: a bot never stalls the table.
    fn play_bot(&mut self, seat: usize, chosen: Option<Action>, entropy: &mut dyn Entropy) {
        let before = self.stage();
        let played = match chosen {
            Some(action) => match self.commit(Record::Acted {
                seat,
                action: action.clone(),
            }) {
                Ok(events) => Some(events),
                Err(e) => {
                    warn!(room = %self.code, seat, ?action, error = %e, "bot chose an illegal action");
                    None
                }
            },
            None => {
                warn!(room = %self.code, seat, "bot failed to choose an action");
                None
            }
        };
        let events = match played {
            Some(events) => events,
            None => {
                let Some(first) = self
                    .game
                    .as_ref()
                    .and_then(|g| g.legal_actions(seat).into_iter().next())
                else {
                    return;
                };
                match self.commit(Record::Acted {
                    seat,
                    action: first,
                }) {
                    Ok(events) => events,
                    Err(e) => {
                        warn!(room = %self.code, seat, error = %e, "a legal action failed");
                        return;
                    }
                }
            }
        };
        let stand_in = self.note_stand_in_move(seat, &events);
        self.after_change(events, before, stand_in, entropy);
    }

    /// When `seat` is a person's, adds a stand-in's move to what they will be told and returns
    /// the seat (the events are the stand-in's); `None` for a bot's own seat.
    pub(super) fn note_stand_in_move(&mut self, seat: usize, events: &[Event]) -> Option<usize> {
        let next_turn = self.game.as_ref().map(Game::turn);
        let Seat::Human(human) = &mut self.seats[seat] else {
            return None;
        };
        if let Some(stand_in) = human.cover.stand_in_mut() {
            let summary = &mut stand_in.while_away;
            let mut round_ended = false;
            for event in events {
                match event {
                    Event::RoundEnded { .. } => round_ended = true,
                    Event::MatchEnded { .. } | Event::Dealt { .. } => {}
                    _ => summary.events.push(event.clone()),
                }
            }
            if round_ended || next_turn != Some(seat) {
                summary.turns += 1;
            }
            summary.rounds_ended += u32::from(round_ended);
        }
        Some(seat)
    }

    /// Brings the metrics' seat counts up to date with this room's seats (to zero when the room
    /// is `closing`).
    pub(super) fn report_seats(&mut self, closing: bool) {
        let (mut humans, mut bots) = (0, 0);
        if !closing {
            for seat in &self.seats {
                match seat {
                    Seat::Human(_) => humans += 1,
                    Seat::Bot(_) => bots += 1,
                    Seat::Empty => {}
                }
            }
        }
        let (was_humans, was_bots) = self.reported_seats;
        if humans != was_humans {
            self.metrics.seated(Seated::Human, humans - was_humans);
        }
        if bots != was_bots {
            self.metrics.seated(Seated::Bot, bots - was_bots);
        }
        self.reported_seats = (humans, bots);
    }
}

/// Which bot was sent to think about which position: a thought counts only while its ticket is
/// the room's current one and the table has not moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    /// This ticket's number in the room (a later ticket for the same position is another).
    number: u64,
    /// The seat the bot plays.
    seat: usize,
    /// The match, round and number of events into it when the bot was asked.
    position: (u32, u32, usize),
}

/// A bot to think, with what its seat sees: a copy, so the room's own bot stays in its seat
/// (and hears what happens) while this one thinks. Run it where blocking is allowed.
pub struct ThinkJob {
    /// The position it thinks about.
    ticket: Ticket,
    /// The copy that thinks.
    bot: Box<dyn Bot>,
    /// What its seat sees.
    view: SeatView,
    /// What the table has seen: the match's results and the round's public log.
    history: PublicHistory,
}

impl ThinkJob {
    /// Lets the bot choose (milliseconds, within its own budget); a panic is caught and comes
    /// back as no choice.
    pub fn run(mut self) -> Thought {
        let started = std::time::Instant::now();
        let (view, history) = (&self.view, &self.history);
        let bot = &mut self.bot;
        let action =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bot.choose(view, history)))
                .ok();
        Thought {
            ticket: self.ticket,
            bot: self.bot,
            action,
            took: started.elapsed(),
        }
    }
}

impl std::fmt::Debug for ThinkJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThinkJob")
            .field("ticket", &self.ticket)
            .finish_non_exhaustive()
    }
}

/// What a bot sent to think chose, and the bot as it stands after choosing.
pub struct Thought {
    /// The position it thought about.
    ticket: Ticket,
    /// The bot, with whatever it worked out (kept for the rest of its turn).
    bot: Box<dyn Bot>,
    /// Its choice; `None` if it failed.
    pub(super) action: Option<Action>,
    /// How long it thought.
    took: Duration,
}

impl std::fmt::Debug for Thought {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Thought")
            .field("ticket", &self.ticket)
            .field("action", &self.action)
            .field("took", &self.took)
            .finish_non_exhaustive()
    }
}
