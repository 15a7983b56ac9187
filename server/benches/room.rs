//! What one action costs the room itself, with no socket, task or channel: the part of the
//! game's server CPU per action that the bare relay of `loadgen play --echo` does not have.
//!
//! A room of four people plays whole matches of the standard table, each seat choosing a
//! random legal action as a client would. Timed, per action, is what the room's task does with
//! it: parse the client's text (the reader's part), take the input (the rules, the records),
//! settle, encode the log entry, and build every client's `state` (the effects). Choosing the
//! action is not timed.
//!
//! - `room/action`: all of the above, per message (`ready` and `rematch` between rounds and
//!   matches included, as the load generator counts them), in one room; it prints once how
//!   many frames an action sends on average.
//! - `room/action_500_rooms`: the same, one message in each of 500 rooms in turn (the load
//!   benchmark's rooms), so that each room's state has left the CPU's caches since its last.
//!
//! Run with `cargo bench -p dhumbal-server --bench room`.

mod common;

use std::time::{Duration, Instant};

use common::{Clients, room_action, seated_room, text};
use criterion::{Criterion, Throughput};
use dhumbal_protocol::ClientMessage;
use dhumbal_server::room::RoomCore;
use dhumbal_server::room::core::{Effect, OsEntropy};

/// How many rooms the cold-cache case plays in turn (as `loadgen play --rooms 500`).
const ROOMS: u64 = 500;

/// A room being played, with the clients about to send it their messages.
struct Table {
    core: RoomCore,
    clients: Clients,
}

impl Table {
    /// Four people seated and their first match begun; the clients' choices follow `seed`.
    fn new(seed: u64) -> Table {
        let mut core = seated_room(&mut OsEntropy);
        drop(room_action(
            &mut core,
            &mut OsEntropy,
            0,
            &text(&ClientMessage::Start),
        ));
        Table {
            core,
            clients: Clients::new(seed),
        }
    }

    /// Sends the next message, timing what the room does with it; returns the time and how
    /// many frames it sent.
    fn step(&mut self) -> (Duration, usize) {
        let (conn, message) = self.clients.next(&self.core);
        let started = Instant::now();
        let effects = room_action(&mut self.core, &mut OsEntropy, conn, &message);
        let took = started.elapsed();
        let frames = effects
            .iter()
            .filter(|e| matches!(e, Effect::Send { .. }))
            .count();
        // Dropped outside the timing, as the connections' writers drop what they sent.
        drop(effects);
        (took, frames)
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let mut table = Table::new(2026);
    // How many frames a message makes the room send, on average, printed once.
    let frames: usize = (0..10_000).map(|_| table.step().1).sum();
    println!(
        "room/action: {:.2} frames sent per message",
        frames as f64 / 10_000.0
    );
    let mut group = criterion.benchmark_group("room");
    group.throughput(Throughput::Elements(1));
    group.bench_function("action", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| table.step().0).sum());
    });
    // The load benchmark's 500 rooms, one message in each in turn: what the same work costs
    // when each room's state has left the CPU's caches since its last.
    let mut tables: Vec<Table> = (0..ROOMS).map(Table::new).collect();
    let mut turn = 0;
    group.bench_function("action_500_rooms", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    turn = (turn + 1) % tables.len();
                    tables[turn].step().0
                })
                .sum()
        });
    });
    group.finish();
    criterion.final_summary();
}
