//! Diagnostic WebSockets, served only with `--ws-echo`: an echo at `GET /ws-echo` and a relay at
//! `GET /ws-relay/{group}`.
//!
//! The echo exists so that a WebSocket conformance suite (Autobahn, which expects a peer that
//! echoes) can test this server's WebSocket stack: the same axum upgrade, the same limits and
//! buffer sizes from the same [`Config`](crate::Config) ([`crate::api::ws_limits`]), and the same
//! closing discipline as the game's connections: after a close frame, keep reading until the
//! socket ends, so that the close reply is flushed before the TCP connection is dropped.
//!
//! The relay is the bare baseline of the load benchmark: every text message a socket sends goes
//! to every socket of its group, itself included, the way an action's answer goes to every seat
//! of a room. It is built like a game connection (a reader, and a writer draining a bounded
//! queue with the same batched writes) but has no rules, no room actor and no JSON, so the
//! benchmark's ratio of the game to the relay is the cost of the game itself.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::AppState;
use crate::api::ws_limits;
use crate::conn::write_batch;
use crate::room::client::{Outgoing, Text};

/// The diagnostic routes (merged into the app only with `--ws-echo`).
pub fn routes() -> Router<Arc<AppState>> {
    let relay = Arc::new(Relay::default());
    Router::new().route("/ws-echo", get(upgrade)).route(
        "/ws-relay/{group}",
        get(
            move |State(app): State<Arc<AppState>>,
                  Path(group): Path<String>,
                  ws: WebSocketUpgrade| {
                let relay = Arc::clone(&relay);
                async move {
                    let queue = app.config.client_queue;
                    ws_limits(ws, &app.config)
                        .on_upgrade(move |socket| relay_socket(socket, relay, group, queue))
                }
            },
        ),
    )
}

/// One member of a relay group: its number and its outbound queue.
type Member = (u64, mpsc::Sender<Outgoing>);

/// The relay's groups of sockets, by group name.
#[derive(Default)]
struct Relay {
    groups: Mutex<HashMap<String, Vec<Member>>>,
    next: AtomicU64,
}

impl Relay {
    /// The groups, locked.
    fn groups(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Member>>> {
        self.groups
            .lock()
            .expect("the relay's lock is never poisoned")
    }
}

/// Serves one relay socket: joins `group`, sends every text message it reads to every member's
/// queue (a member whose queue is full misses it), and leaves the group when the socket ends.
async fn relay_socket(socket: WebSocket, relay: Arc<Relay>, group: String, queue: usize) {
    let me = relay.next.fetch_add(1, Ordering::Relaxed);
    let (mut sink, mut stream) = socket.split();
    let (tx, mut outbox) = mpsc::channel::<Outgoing>(queue.max(1));
    relay
        .groups()
        .entry(group.clone())
        .or_default()
        .push((me, tx));
    let writer = tokio::spawn(async move {
        // Only texts are queued here, so nothing is ever held back.
        let mut held = None;
        let mut texts = Vec::new();
        while let Some(Outgoing::Text(text)) = outbox.recv().await {
            if write_batch(&mut sink, text, &mut outbox, &mut held, None, &mut texts)
                .await
                .is_none()
            {
                break;
            }
        }
    });
    while let Some(frame) = stream.next().await {
        match frame {
            Ok(Message::Text(text)) => {
                // One copy, shared by every member as a room's broadcast is.
                let text = Text::from(text.as_str());
                let groups = relay.groups();
                for (_, member) in groups.get(&group).into_iter().flatten() {
                    let _ = member.try_send(Outgoing::Text(text.clone()));
                }
            }
            // A close is answered by the socket, and the next read ends the loop.
            Ok(_) => {}
            Err(_) => break,
        }
    }
    {
        let mut groups = relay.groups();
        if let Some(members) = groups.get_mut(&group) {
            members.retain(|(n, _)| *n != me);
            if members.is_empty() {
                groups.remove(&group);
            }
        }
    }
    // With its queue's only sender gone, the writer sends what is left and ends.
    let _ = writer.await;
}

/// `GET /ws-echo`: the WebSocket upgrade, with the game socket's limits.
async fn upgrade(State(app): State<Arc<AppState>>, ws: WebSocketUpgrade) -> Response {
    ws_limits(ws, &app.config).on_upgrade(echo)
}

/// Sends back every text and binary message until the socket ends.
async fn echo(mut socket: WebSocket) {
    while let Some(frame) = socket.recv().await {
        let reply = match frame {
            Ok(Message::Text(text)) => Message::Text(text),
            Ok(Message::Binary(data)) => Message::Binary(data),
            // Pings are answered by the WebSocket itself; a close is answered too, and the next
            // read ends the loop once the reply is out.
            Ok(Message::Ping(_) | Message::Pong(_) | Message::Close(_)) => continue,
            Err(_) => break,
        };
        if socket.send(reply).await.is_err() {
            break;
        }
    }
}
