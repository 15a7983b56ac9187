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

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use dhumbal_engine::{Action, Phase, Preset, Source};
use dhumbal_protocol::{ClientMessage, DrawFrom, Hello, PROTOCOL_VERSION, parse_client_message};
use dhumbal_server::room::core::{Effect, Handled, Input, OsEntropy, Request};
use dhumbal_server::room::record::{Entry, FORMAT, Setup, encode, hash_secret};
use dhumbal_server::room::{RoomCore, Timing};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Four people, timers that never fire during the bench.
const TIMING: Timing = Timing {
    bot_delay: Duration::ZERO,
    takeover_after: Duration::from_secs(3600),
    idle_ttl: Duration::from_secs(3600),
    lobby_ttl: Duration::from_secs(3600),
    unjoined_ttl: Duration::from_secs(3600),
    max_watchers: 20,
    turn_second: Duration::from_secs(1),
};

/// How many rooms the cold-cache case plays in turn (as `loadgen play --rooms 500`).
const ROOMS: u64 = 500;

/// A room with four people seated (connections 0–3, seat `n` for connection `n`), the
/// first of them the host, and its first match begun.
fn room() -> RoomCore {
    let setup = Setup {
        format: FORMAT,
        code: "BENCHROOM2".into(),
        host_secret_hash: hash_secret("secret"),
        settings: Preset::Standard.settings(),
        decks: None,
        seed: Some([9; 32]),
    };
    let now = tokio::time::Instant::now();
    let mut core = RoomCore::new(&setup, TIMING, Arc::default(), now);
    for conn in 0..4u64 {
        let joined = core.handle(
            Input::Join {
                conn,
                hello: Hello {
                    protocol: PROTOCOL_VERSION,
                    room: "BENCHROOM2".into(),
                    name: format!("Player {conn}"),
                    token: None,
                    spectator: false,
                    host_secret: (conn == 0).then(|| "secret".to_owned()),
                    client_seed: None,
                },
                id: None,
                token_only: false,
                address: std::net::Ipv4Addr::LOCALHOST.into(),
            },
            now,
            &mut OsEntropy,
        );
        assert_eq!(joined, Handled::Joined, "seat {conn} joined");
    }
    send(&mut core, 0, &text(&ClientMessage::Start));
    core
}

/// A client message as a client sends it.
fn text(message: &ClientMessage) -> String {
    serde_json::to_string(message).expect("client messages serialise")
}

/// The action the seat whose turn it is would send, as text, and from which connection (seat
/// `n` is connection `n`); `None` between rounds and after the match.
fn next(core: &RoomCore, rng: &mut StdRng) -> Option<(u64, String)> {
    let game = core.game()?;
    if matches!(game.phase(), Phase::RoundOver | Phase::MatchOver) {
        return None;
    }
    let seat = game.turn();
    let actions = game.legal_actions(seat);
    let message = match actions[rng.random_range(0..actions.len())].clone() {
        Action::Call => ClientMessage::Call,
        Action::Draw { from } => {
            let (from, card) = match from {
                Source::Stock => (DrawFrom::Stock, None),
                Source::Pile => (DrawFrom::Pile, None),
                Source::PileCard(card) => (DrawFrom::Pile, Some(card)),
            };
            ClientMessage::Draw { from, card }
        }
        Action::Throw { cards } => ClientMessage::Throw { cards },
    };
    Some((seat as u64, text(&message)))
}

/// What the room's task does with one client text: parse, handle, settle, encode the log
/// entry, take the effects. Returns the effects, to be dropped outside the timing.
fn send(core: &mut RoomCore, conn: u64, text: &str) -> Vec<Effect> {
    let envelope = parse_client_message(text).expect("a well-formed message");
    let now = tokio::time::Instant::now();
    core.handle(
        Input::Message(Request {
            conn,
            id: envelope.id,
            message: envelope.message,
        }),
        now,
        &mut OsEntropy,
    );
    core.settle(now);
    let records = core.take_records();
    if !records.is_empty() {
        black_box(encode(&Entry {
            format: FORMAT,
            records,
        }));
        black_box(core.take_snapshot());
    }
    core.take_effects()
}

/// A room being played, with the messages its clients are about to send.
struct Table {
    core: RoomCore,
    rng: StdRng,
    /// The next messages and their connections: one action, or every seat's vote between
    /// rounds and matches.
    queue: VecDeque<(u64, String)>,
}

impl Table {
    fn new(seed: u64) -> Table {
        Table {
            core: room(),
            rng: StdRng::seed_from_u64(seed),
            queue: VecDeque::new(),
        }
    }

    /// Sends the next message, timing what the room does with it; returns the time and how
    /// many frames it sent.
    fn step(&mut self) -> (Duration, usize) {
        if self.queue.is_empty() {
            match next(&self.core, &mut self.rng) {
                Some(one) => self.queue.push_back(one),
                None => {
                    let vote = match self.core.game().map(|g| g.phase()) {
                        Some(Phase::RoundOver) => ClientMessage::Ready { client_seed: None },
                        _ => ClientMessage::Rematch { client_seed: None },
                    };
                    let vote = text(&vote);
                    self.queue.extend((0..4).map(|conn| (conn, vote.clone())));
                }
            }
        }
        let (conn, message) = self.queue.pop_front().expect("a message to send");
        let started = Instant::now();
        let effects = send(&mut self.core, conn, &message);
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
