//! What the input being handled leaves behind for the actor: what to send once it is in the
//! log ([`Effect`]s), what it changed for good ([`Record`]s), the snapshot the log restarts from,
//! and what stand-ins did for people who have just got their seats back, to tell them.

use dhumbal_protocol::WhileAway;

use super::{ConnId, Effect};
use crate::room::record::{Record, Snapshot};

/// The output of the input being handled, until the actor takes it.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    /// What to send once the current input is in the log.
    effects: Vec<Effect>,
    /// An empty list, handed back once its effects were delivered, to be the next input's: its
    /// memory is kept rather than made again for every action.
    spare_effects: Vec<Effect>,
    /// What the current input changed for good.
    records: Vec<Record>,
    /// An empty list, handed back once its records were in the log, kept as `spare_effects` is.
    spare_records: Vec<Record>,
    /// The room as it stood before a rematch (or a return to the lobby) in the current input,
    /// for the log to restart from.
    snapshot: Option<Snapshot>,
    /// What stand-ins did for people who just got their seats back, to tell them once the
    /// change's `state` has gone out.
    while_away: Vec<(ConnId, WhileAway)>,
}

impl Outbox {
    /// Something to do once the input is in the log.
    pub(super) fn push(&mut self, effect: Effect) {
        self.effects.push(effect);
    }

    /// Closes a connection with this code and reason, after what is already queued for it.
    pub(super) fn close(&mut self, to: ConnId, code: u16, reason: &'static str) {
        self.effects.push(Effect::Close { to, code, reason });
    }

    /// A durable change, for the log.
    pub(super) fn record(&mut self, record: Record) {
        self.records.push(record);
    }

    /// The log restarts from this room (a later one in the same input replaces it).
    pub(super) fn restart_log_from(&mut self, snapshot: Snapshot) {
        self.snapshot = Some(snapshot);
    }

    /// What a stand-in did for the person on `conn`, to tell them.
    pub(super) fn while_away(&mut self, conn: ConnId, summary: WhileAway) {
        self.while_away.push((conn, summary));
    }

    /// What to send, in order.
    pub(super) fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::replace(&mut self.effects, std::mem::take(&mut self.spare_effects))
    }

    /// A list [`Outbox::take_effects`] gave, its effects delivered, back for its memory.
    pub(super) fn recycle_effects(&mut self, mut list: Vec<Effect>) {
        list.clear();
        if list.capacity() > self.spare_effects.capacity() {
            self.spare_effects = list;
        }
    }

    /// What changed for good, in order.
    pub(super) fn take_records(&mut self) -> Vec<Record> {
        std::mem::replace(&mut self.records, std::mem::take(&mut self.spare_records))
    }

    /// A list [`Outbox::take_records`] gave, its records in the log, back for its memory.
    pub(super) fn recycle_records(&mut self, mut list: Vec<Record>) {
        list.clear();
        if list.capacity() > self.spare_records.capacity() {
            self.spare_records = list;
        }
    }

    /// The room the log restarts from, if it does.
    pub(super) fn take_snapshot(&mut self) -> Option<Snapshot> {
        self.snapshot.take()
    }

    /// What stand-ins did, for each person to be told.
    pub(super) fn take_while_away(&mut self) -> Vec<(ConnId, WhileAway)> {
        std::mem::take(&mut self.while_away)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_take_empties_what_it_takes_and_only_that() {
        let mut outbox = Outbox::default();
        outbox.close(3, 4000, "test");
        outbox.record(Record::NextRound);
        outbox.record(Record::ToLobby);
        outbox.while_away(3, WhileAway::default());
        assert_eq!(outbox.take_records(), [Record::NextRound, Record::ToLobby]);
        assert!(outbox.take_records().is_empty());
        assert!(matches!(
            outbox.take_effects()[..],
            [Effect::Close {
                to: 3,
                code: 4000,
                ..
            }]
        ));
        assert!(outbox.take_effects().is_empty());
        assert_eq!(outbox.take_while_away().len(), 1);
        assert!(outbox.take_snapshot().is_none());
    }

    #[test]
    fn a_recycled_list_is_the_next_inputs_emptied() {
        let mut outbox = Outbox::default();
        outbox.close(3, 4000, "test");
        outbox.close(4, 4000, "test");
        let taken = outbox.take_effects();
        let memory = taken.as_ptr();
        outbox.recycle_effects(taken);
        assert!(outbox.take_effects().is_empty());
        outbox.close(5, 4000, "test");
        let again = outbox.take_effects();
        assert_eq!(again.as_ptr(), memory);
        assert!(matches!(again[..], [Effect::Close { to: 5, .. }]));
        assert!(outbox.take_snapshot().is_none());
        // The records' list the same way.
        outbox.record(Record::NextRound);
        outbox.record(Record::ToLobby);
        let taken = outbox.take_records();
        let memory = taken.as_ptr();
        outbox.recycle_records(taken);
        assert!(outbox.take_records().is_empty());
        outbox.record(Record::NextRound);
        let again = outbox.take_records();
        assert_eq!(again.as_ptr(), memory);
        assert_eq!(again, [Record::NextRound]);
    }
}
