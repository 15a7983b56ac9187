//! The room's timers: when the room closes on its own (nobody connected, nobody ever seated, a
//! match that never started), when the bot whose turn it is acts, when an away person's turn is
//! taken over, and when the turn's clock runs out; and which of them is due next.

use std::time::Duration;

use tokio::time::Instant;

use super::Timing;

/// What the timers need to know of the room when they are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Occupancy {
    /// No match is on (before the first, or back in the lobby after one): only then does the
    /// room's lifetime without a match count.
    pub(super) lobby: bool,
    /// Someone is connected (a person or a watcher): a room nobody has sat in waits for them.
    pub(super) connected: bool,
}

/// Why the room's own time is up, as [`Timers::expired`] finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expired {
    /// Nobody has been connected for `idle_ttl`.
    Idle,
    /// Nobody has ever sat in the room, nobody is connected, and `unjoined_ttl` has passed.
    Unjoined,
    /// The room's match has not started within `lobby_ttl`.
    Lobby,
}

/// Every timer of a room, and the timings they are set from.
#[derive(Debug)]
pub(super) struct Timers {
    /// The spans the timers are set from.
    timing: Timing,
    /// Since when nobody has been connected (`None` while someone is).
    idle_since: Option<Instant>,
    /// When the room closes if its match has not started by then.
    lobby_due: Instant,
    /// When the room closes if nobody has sat in it by then (and nobody is connected); `None`
    /// once someone has taken a seat.
    unjoined_due: Option<Instant>,
    /// When the bot whose turn it is acts next.
    bot_due: Option<Instant>,
    /// The seat of an away person whose turn it is, and when a stand-in bot takes it over.
    takeover_due: Option<(usize, Instant)>,
    /// With a turn timer: the seat of the person whose turn it is, and when their time runs out.
    turn_clock: Option<(usize, Instant)>,
}

impl Timers {
    /// The timers of a room created at `now`, with nobody in it yet.
    pub(super) fn new(timing: Timing, now: Instant) -> Timers {
        Timers {
            timing,
            idle_since: Some(now),
            lobby_due: now + timing.lobby_ttl,
            unjoined_due: Some(now + timing.unjoined_ttl),
            bot_due: None,
            takeover_due: None,
            turn_clock: None,
        }
    }

    /// The next time something is due (a bot's action, a takeover, the turn's clock, the room's
    /// closing), for a room as `room` says.
    pub(super) fn next_due(&self, room: Occupancy) -> Option<Instant> {
        [
            self.unjoined_due(room),
            self.bot_due,
            self.takeover_due.map(|(_, due)| due),
            self.turn_clock.map(|(_, due)| due),
            self.idle_due(),
            self.lobby_due(room),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether the room's own time is up at `now`, and why (the first reason, in the order
    /// idle, never joined, match never started).
    pub(super) fn expired(&self, room: Occupancy, now: Instant) -> Option<Expired> {
        let up = |due: Option<Instant>| due.is_some_and(|due| due <= now);
        if up(self.idle_due()) {
            Some(Expired::Idle)
        } else if up(self.unjoined_due(room)) {
            Some(Expired::Unjoined)
        } else if up(self.lobby_due(room)) {
            Some(Expired::Lobby)
        } else {
            None
        }
    }

    /// When the room closes for want of anyone connected.
    fn idle_due(&self) -> Option<Instant> {
        self.idle_since.map(|since| since + self.timing.idle_ttl)
    }

    /// When the room closes for want of anyone ever seated: only while nobody is connected (a
    /// watcher, say; the room waits for them to go).
    fn unjoined_due(&self, room: Occupancy) -> Option<Instant> {
        self.unjoined_due.filter(|_| !room.connected)
    }

    /// When the room closes for want of a match: only a room with no match on has a lifetime
    /// of its own.
    fn lobby_due(&self, room: Occupancy) -> Option<Instant> {
        room.lobby.then_some(self.lobby_due)
    }

    /// Notes at `now` whether anyone is connected: the idle time counts from when the last one
    /// went.
    pub(super) fn note_connected(&mut self, connected: bool, now: Instant) {
        if connected {
            self.idle_since = None;
        } else {
            self.idle_since.get_or_insert(now);
        }
    }

    /// Someone has taken a seat: the room no longer closes as one nobody joined.
    pub(super) fn someone_sat(&mut self) {
        self.unjoined_due = None;
    }

    /// The room is back in its lobby at `now`: its lifetime without a match starts afresh.
    pub(super) fn lobby_again(&mut self, now: Instant) {
        self.lobby_due = now + self.timing.lobby_ttl;
    }

    /// Whose turn waits for a takeover: `away_turn` is the seat of an away person whose turn it
    /// is (a takeover already waiting for that seat keeps its time; one for another starts now),
    /// or `None` (no takeover waits).
    pub(super) fn wait_for_takeover(&mut self, away_turn: Option<usize>, now: Instant) {
        self.takeover_due = match (away_turn, self.takeover_due) {
            (Some(seat), Some((waiting, due))) if waiting == seat => Some((seat, due)),
            (Some(seat), _) => Some((seat, now + self.timing.takeover_after)),
            (None, _) => None,
        };
    }

    /// The seat whose takeover is due at `now`, if one is (the timer is then stopped).
    pub(super) fn takeover_fired(&mut self, now: Instant) -> Option<usize> {
        fired(&mut self.takeover_due, now)
    }

    /// A bot is to play the turn: it acts after the bot delay from `now`, or when it was due
    /// already.
    pub(super) fn bot_turn(&mut self, now: Instant) {
        self.bot_due.get_or_insert(now + self.timing.bot_delay);
    }

    /// No bot is to play the turn (or the one to play it has gone to think).
    pub(super) fn no_bot_turn(&mut self) {
        self.bot_due = None;
    }

    /// Whether the bot's action is due at `now` (the timer is then stopped).
    pub(super) fn bot_fired(&mut self, now: Instant) -> bool {
        let due = self.bot_due.is_some_and(|due| due <= now);
        if due {
            self.bot_due = None;
        }
        due
    }

    /// When the bot whose turn it is acts next.
    #[cfg(test)]
    pub(super) fn bot_due(&self) -> Option<Instant> {
        self.bot_due
    }

    /// Sets the turn's clock for `turn`, the seat of a person who plays their own turn now and
    /// the time they have for it (`None`: no clock; no turn timer, nobody's turn, or a
    /// stand-in's): a turn keeps its clock while it lasts, unless it is `fresh` (a deal); a new
    /// turn gets its time from `now`. Returns whether the clock started anew or stopped.
    pub(super) fn set_turn_clock(
        &mut self,
        turn: Option<(usize, Duration)>,
        fresh: bool,
        now: Instant,
    ) -> bool {
        let before = self.turn_clock;
        self.turn_clock = turn.map(|(seat, time)| match before {
            Some((running, due)) if running == seat && !fresh => (seat, due),
            _ => (seat, now + time),
        });
        self.turn_clock != before
    }

    /// The turn's clock: the seat whose time runs, and when it runs out.
    pub(super) fn turn_clock(&self) -> Option<(usize, Instant)> {
        self.turn_clock
    }

    /// The seat whose turn's time has run out at `now`, if one has (the clock is then stopped).
    pub(super) fn turn_clock_fired(&mut self, now: Instant) -> Option<usize> {
        fired(&mut self.turn_clock, now)
    }
}

/// The seat of a seat's timer that is due at `now`, which is then stopped.
fn fired(timer: &mut Option<(usize, Instant)>, now: Instant) -> Option<usize> {
    let (seat, due) = (*timer)?;
    if due > now {
        return None;
    }
    *timer = None;
    Some(seat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::room::testing::TIMING;

    const SECOND: Duration = Duration::from_secs(1);

    /// In the lobby, nobody connected.
    const EMPTY: Occupancy = Occupancy {
        lobby: true,
        connected: false,
    };

    #[test]
    fn a_new_room_closes_first_as_one_nobody_joined_unless_someone_is_connected() {
        let now = Instant::now();
        let timers = Timers::new(TIMING, now);
        // The test timings: never joined and idle both after 900 s, the lobby after 7200 s.
        assert_eq!(timers.next_due(EMPTY), Some(now + TIMING.unjoined_ttl));
        assert_eq!(timers.expired(EMPTY, now), None);
        let later = now + TIMING.idle_ttl;
        // Idle comes first in the order of reasons.
        assert_eq!(timers.expired(EMPTY, later), Some(Expired::Idle));
        let mut timers = timers;
        let watching = Occupancy {
            connected: true,
            ..EMPTY
        };
        timers.note_connected(true, now);
        assert_eq!(timers.next_due(watching), Some(now + TIMING.lobby_ttl));
        assert_eq!(timers.expired(watching, later), None);
        // The watcher goes: the idle time counts from then, and the unjoined one is due.
        timers.note_connected(false, now + SECOND);
        assert_eq!(timers.next_due(EMPTY), Some(now + TIMING.unjoined_ttl));
        assert_eq!(timers.expired(EMPTY, later), Some(Expired::Unjoined));
        // Going on with nobody connected does not restart the idle time.
        timers.note_connected(false, later);
        assert_eq!(
            timers.expired(EMPTY, now + SECOND + TIMING.idle_ttl),
            Some(Expired::Idle)
        );
    }

    #[test]
    fn a_seated_room_closes_when_its_lobby_time_is_up_and_never_during_a_match() {
        let now = Instant::now();
        let mut timers = Timers::new(TIMING, now);
        timers.someone_sat();
        timers.note_connected(true, now);
        let sitting = Occupancy {
            lobby: true,
            connected: true,
        };
        let due = now + TIMING.lobby_ttl;
        assert_eq!(timers.next_due(sitting), Some(due));
        assert_eq!(timers.expired(sitting, due), Some(Expired::Lobby));
        let playing = Occupancy {
            lobby: false,
            ..sitting
        };
        assert_eq!(timers.next_due(playing), None);
        assert_eq!(timers.expired(playing, due), None);
        // Back in the lobby later: its time starts again.
        timers.lobby_again(due);
        assert_eq!(timers.next_due(sitting), Some(due + TIMING.lobby_ttl));
    }

    #[test]
    fn a_takeover_keeps_its_time_for_the_same_seat_and_fires_once() {
        let now = Instant::now();
        let mut timers = Timers::new(TIMING, now);
        timers.note_connected(true, now);
        let playing = Occupancy {
            lobby: false,
            connected: true,
        };
        let due = now + TIMING.takeover_after;
        timers.wait_for_takeover(Some(2), now);
        timers.wait_for_takeover(Some(2), now + SECOND);
        assert_eq!(timers.next_due(playing), Some(due));
        assert_eq!(timers.takeover_fired(due - SECOND), None);
        // Another seat's turn waits afresh.
        timers.wait_for_takeover(Some(1), now + SECOND);
        assert_eq!(timers.next_due(playing), Some(due + SECOND));
        assert_eq!(timers.takeover_fired(due + SECOND), Some(1));
        assert_eq!(timers.takeover_fired(due + SECOND), None);
        assert_eq!(timers.next_due(playing), None);
        timers.wait_for_takeover(Some(1), now);
        timers.wait_for_takeover(None, now);
        assert_eq!(timers.next_due(playing), None);
    }

    #[test]
    fn a_bot_acts_after_its_delay_counted_from_when_its_turn_came() {
        let timing = Timing {
            bot_delay: SECOND,
            ..TIMING
        };
        let now = Instant::now();
        let mut timers = Timers::new(timing, now);
        timers.bot_turn(now);
        timers.bot_turn(now + SECOND / 2);
        assert_eq!(timers.bot_due(), Some(now + SECOND));
        assert!(!timers.bot_fired(now));
        assert!(timers.bot_fired(now + SECOND));
        assert!(!timers.bot_fired(now + SECOND));
        timers.bot_turn(now);
        timers.no_bot_turn();
        assert_eq!(timers.bot_due(), None);
    }

    #[test]
    fn a_turn_keeps_its_clock_until_another_turn_or_a_deal() {
        let now = Instant::now();
        let mut timers = Timers::new(TIMING, now);
        let time = 15 * SECOND;
        assert!(timers.set_turn_clock(Some((0, time)), false, now));
        assert!(!timers.set_turn_clock(Some((0, time)), false, now + SECOND));
        assert_eq!(timers.turn_clock(), Some((0, now + time)));
        // A deal gives the same seat a fresh clock.
        assert!(timers.set_turn_clock(Some((0, time)), true, now + SECOND));
        assert_eq!(timers.turn_clock(), Some((0, now + SECOND + time)));
        assert!(timers.set_turn_clock(Some((1, time)), false, now + SECOND));
        assert_eq!(timers.turn_clock_fired(now + time), None);
        assert_eq!(timers.turn_clock_fired(now + SECOND + time), Some(1));
        assert_eq!(timers.turn_clock(), None);
        assert!(timers.set_turn_clock(Some((1, time)), false, now));
        assert!(timers.set_turn_clock(None, false, now));
        assert!(!timers.set_turn_clock(None, true, now));
    }
}
