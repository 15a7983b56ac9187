//! What the room's benches share (`room` times it, `instructions` counts it): a room of four
//! people whose timers never fire, what its task does with one client message, and the
//! messages its clients send through whole matches of the standard table.

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use dhumbal_engine::{Action, Game, Phase, Preset, Source};
use dhumbal_protocol::{ClientMessage, DrawFrom, Hello, PROTOCOL_VERSION, parse_client_message};
use dhumbal_server::room::core::{Effect, Entropy, Handled, Input, Joining, Request};
use dhumbal_server::room::record::{Entry, FORMAT, Setup, hash_secret};
use dhumbal_server::room::{RoomCore, Timing};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Four people, timers that never fire during a bench.
pub(crate) const TIMING: Timing = Timing {
    bot_delay: Duration::ZERO,
    takeover_after: Duration::from_secs(3600),
    idle_ttl: Duration::from_secs(3600),
    lobby_ttl: Duration::from_secs(3600),
    unjoined_ttl: Duration::from_secs(3600),
    max_watchers: 20,
    turn_second: Duration::from_secs(1),
};

/// A room of the standard table with four people seated (connection `n` in seat `n`, the
/// first of them the host), its match not yet started: the host's `start` is the first
/// message a bench sends.
pub(crate) fn seated_room(entropy: &mut dyn Entropy) -> RoomCore {
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
            Input::Join(Joining {
                conn,
                hello: Hello {
                    protocol: PROTOCOL_VERSION,
                    room: "BENCHROOM2".into(),
                    name: format!("Player {conn}"),
                    token: None,
                    spectator: false,
                    host_secret: (conn == 0).then(|| "secret".to_owned()),
                    client_seed: None,
                }
                .into(),
                id: None,
                token_only: false,
                address: std::net::Ipv4Addr::LOCALHOST.into(),
            }),
            now,
            entropy,
        );
        assert_eq!(joined, Handled::Joined, "seat {conn} joined");
    }
    core
}

/// A client message as a client sends it.
pub(crate) fn text(message: &ClientMessage) -> String {
    serde_json::to_string(message).expect("client messages serialise")
}

/// What the room's task does with one client text: parse, handle, settle, encode the log
/// entry, take the snapshot and the effects. Returns the effects, for the caller to drop
/// outside what it measures, as the connections' writers drop what they sent.
pub(crate) fn room_action(
    core: &mut RoomCore,
    entropy: &mut dyn Entropy,
    conn: u64,
    text: &str,
) -> Vec<Effect> {
    let envelope = parse_client_message(text).expect("a well-formed message");
    let now = tokio::time::Instant::now();
    core.handle(
        Input::Message(Request {
            conn,
            id: envelope.id,
            message: envelope.message,
        }),
        now,
        entropy,
    );
    core.settle(now);
    let records = core.take_records();
    if !records.is_empty() {
        black_box(
            Entry {
                format: FORMAT,
                records,
            }
            .encode(),
        );
        black_box(core.take_snapshot());
    }
    core.take_effects()
}

/// A random legal action of the seat to play, from a seeded generator.
pub(crate) fn random_action(game: &Game, rng: &mut StdRng) -> (usize, Action) {
    let seat = game.turn();
    let mut actions = game.legal_actions(seat);
    let i = rng.random_range(0..actions.len());
    (seat, actions.swap_remove(i))
}

/// The four clients of a [`seated_room`]: each seat sends a random legal action on its turn,
/// as a client would, and every seat votes `ready` between rounds and `rematch` after a match.
pub(crate) struct Clients {
    /// Chooses the actions.
    rng: StdRng,
    /// The next messages and their connections: one action, or every seat's vote.
    queue: VecDeque<(u64, String)>,
}

impl Clients {
    /// Clients whose choices follow `seed`.
    pub(crate) fn new(seed: u64) -> Clients {
        Clients {
            rng: StdRng::seed_from_u64(seed),
            queue: VecDeque::new(),
        }
    }

    /// The next message to `core`, as text, and the connection that sends it.
    pub(crate) fn next(&mut self, core: &RoomCore) -> (u64, String) {
        if self.queue.is_empty() {
            match action(core, &mut self.rng) {
                Some(one) => self.queue.push_back(one),
                None => {
                    let vote = match core.game().map(|g| g.phase()) {
                        Some(Phase::RoundOver) => ClientMessage::Ready { client_seed: None },
                        _ => ClientMessage::Rematch { client_seed: None },
                    };
                    let vote = text(&vote);
                    self.queue.extend((0..4).map(|conn| (conn, vote.clone())));
                }
            }
        }
        self.queue.pop_front().expect("a message to send")
    }
}

/// The action the seat whose turn it is would send, as text, and from which connection (seat
/// `n` is connection `n`); `None` between rounds and after the match.
fn action(core: &RoomCore, rng: &mut StdRng) -> Option<(u64, String)> {
    let game = core.game()?;
    if matches!(game.phase(), Phase::RoundOver | Phase::MatchOver) {
        return None;
    }
    let (seat, action) = random_action(game, rng);
    let message = match action {
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
