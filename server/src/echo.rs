//! Diagnostic WebSockets, served only with `--ws-echo`: an echo at `GET /ws-echo`, a relay at
//! `GET /ws-relay/{group}`, and a room relay at `GET /ws-room-relay/{group}`.
//!
//! The echo exists so that a WebSocket conformance suite (Autobahn, which expects a peer that
//! echoes) can test this server's WebSocket stack: the same axum upgrade, the same limits and
//! buffer sizes from the same [`Config`](crate::Config) ([`crate::api::ws_limits`]), and the same
//! closing discipline as the game's connections: after a close frame, keep reading until the
//! socket ends, so that the close reply is flushed before the TCP connection is dropped.
//!
//! The two relays are the bare baselines of the load benchmark: every text message a socket
//! sends goes to every socket of its group, itself included, the way an action's answer goes to
//! every seat of a room. Each socket is built like a game connection (a reader, and a writer
//! draining a bounded queue with the same batched writes), with no rules and no JSON:
//!
//! - the **relay**'s reader puts each message in its group's queues itself: the floor of any
//!   server that sends a room's messages to its sockets;
//! - the **room relay**'s reader hands each message to its group's task, as the game's reader
//!   hands each message to its room's task, and that task puts it in the queues. It is the floor
//!   of a server with a task per room, the design the game keeps (it makes a room replayable).
//!
//! So the benchmark's ratio of the game to the room relay is the cost of the game's own work,
//! and the room relay's to the relay is the cost of the room's task.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{MethodRouter, get};
use futures_util::StreamExt;
use futures_util::stream::{SplitSink, SplitStream};
use tokio::sync::mpsc::{self, error::TrySendError};

use crate::AppState;
use crate::api::ws_limits;
use crate::conn::write_batch;
use crate::room::client::{Outgoing, Text};

/// How many messages a room relay's task holds before its readers wait: a game room's.
const ROOM_RELAY_QUEUE: usize = crate::room::ROOM_QUEUE;

/// The diagnostic routes (merged into the app only with `--ws-echo`).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/ws-echo", get(upgrade))
        .route(
            "/ws-relay/{group}",
            relay_route(Relay::default(), relay_socket),
        )
        .route(
            "/ws-room-relay/{group}",
            relay_route(RoomRelay::default(), room_relay_socket),
        )
}

/// The route of a relay whose groups are `groups`: the WebSocket upgrade, with the game socket's
/// limits, and then `serve` of the socket, its groups, its group's name and its queue's size.
fn relay_route<G, S, F>(groups: G, serve: S) -> MethodRouter<Arc<AppState>>
where
    G: Send + Sync + 'static,
    S: Fn(WebSocket, Arc<G>, String, usize) -> F + Copy + Send + Sync + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let groups = Arc::new(groups);
    get(
        move |State(app): State<Arc<AppState>>, Path(group): Path<String>, ws: WebSocketUpgrade| {
            let groups = Arc::clone(&groups);
            async move {
                let queue = app.config.client_queue;
                ws_limits(ws, &app.config)
                    .on_upgrade(move |socket| serve(socket, groups, group, queue))
            }
        },
    )
}

/// One member of a relay group: its number and its outbound queue.
type Member = (u64, mpsc::Sender<Outgoing>);

/// Groups of something by name, behind one lock, and the next member's number.
struct Groups<T> {
    /// The groups.
    groups: Mutex<HashMap<String, T>>,
    /// The number the next member takes.
    next: AtomicU64,
}

impl<T> Default for Groups<T> {
    fn default() -> Self {
        Self {
            groups: Mutex::default(),
            next: AtomicU64::new(0),
        }
    }
}

impl<T> Groups<T> {
    /// The groups, locked.
    fn lock(&self) -> MutexGuard<'_, HashMap<String, T>> {
        self.groups
            .lock()
            .expect("the relay's lock is never poisoned")
    }

    /// A number for a new member.
    fn member(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }
}

/// The relay's groups: each group's members.
type Relay = Groups<Vec<Member>>;

/// The room relay's groups: the queue of each group's task.
type RoomRelay = Groups<mpsc::Sender<Relayed>>;

/// What a room relay's task is told.
enum Relayed {
    /// A member joined: send it every message from now on.
    Join(Member),
    /// The member with this number left.
    Leave(u64),
    /// A message to every member.
    Text(Text),
}

/// Splits a relay `socket` and starts its writer, with a queue of `queue` messages. Returns the
/// socket's reading half (read its texts with [`next_text`]), the way to its writer (to give to
/// the group), and the writer, which sends what is queued and ends once every sender of the
/// queue is dropped (the member has left its group).
fn start(
    socket: WebSocket,
    queue: usize,
) -> (
    SplitStream<WebSocket>,
    mpsc::Sender<Outgoing>,
    tokio::task::JoinHandle<()>,
) {
    let (sink, stream) = socket.split();
    let (tx, outbox) = mpsc::channel::<Outgoing>(queue.max(1));
    (stream, tx, tokio::spawn(write_queue(sink, outbox)))
}

/// A relay socket's writer: the game connection's batched writes, until the queue closes or the
/// socket fails.
async fn write_queue(
    mut sink: SplitSink<WebSocket, Message>,
    mut outbox: mpsc::Receiver<Outgoing>,
) {
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
}

/// The next text message the socket sends, as one copy that every member's queue shares as a
/// room's broadcast is shared; `None` once the socket ends or fails. Other messages are
/// skipped: a close is answered by the socket, and the next read ends.
async fn next_text(stream: &mut SplitStream<WebSocket>) -> Option<Text> {
    loop {
        match stream.next().await? {
            Ok(Message::Text(text)) => return Some(Text::from(text.as_str())),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

/// Serves one relay socket: joins `group`, puts every text message it reads in every member's
/// queue (a member whose queue is full misses it), and leaves the group when the socket ends.
async fn relay_socket(socket: WebSocket, relay: Arc<Relay>, group: String, queue: usize) {
    let me = relay.member();
    let (mut stream, queue, writer) = start(socket, queue);
    relay
        .lock()
        .entry(group.clone())
        .or_default()
        .push((me, queue));
    while let Some(text) = next_text(&mut stream).await {
        let groups = relay.lock();
        for (_, member) in groups.get(&group).into_iter().flatten() {
            let _ = member.try_send(Outgoing::Text(text.clone()));
        }
    }
    {
        let mut groups = relay.lock();
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

/// Serves one room relay socket: joins `group` through its task, hands every text message it
/// reads to that task (as the game's reader hands a message to its room), and tells the task
/// it left when the socket ends.
async fn room_relay_socket(socket: WebSocket, rooms: Arc<RoomRelay>, group: String, queue: usize) {
    let me = rooms.member();
    let (mut stream, queue, writer) = start(socket, queue);
    let room = join_room(&rooms, &group, (me, queue)).await;
    while let Some(text) = next_text(&mut stream).await {
        if !send_to_room(&room, Relayed::Text(text)).await {
            break;
        }
    }
    send_to_room(&room, Relayed::Leave(me)).await;
    drop(room);
    // Once the task has dropped its copy of the queue's sender, the writer sends what is left
    // and ends.
    let _ = writer.await;
}

/// Sends `message` to a room relay's task the way the game's reader sends to its room: without
/// waiting if there is room in the queue, else waiting for room. Returns whether the task is
/// there to take it.
async fn send_to_room(room: &mpsc::Sender<Relayed>, message: Relayed) -> bool {
    match room.try_send(message) {
        Ok(()) => true,
        Err(TrySendError::Full(message)) => room.send(message).await.is_ok(),
        Err(TrySendError::Closed(_)) => false,
    }
}

/// Joins `group`'s task, starting it if the group has none, and returns the way to it.
///
/// The join is queued while the groups are locked, and a task whose last member has left ends
/// only if its queue is empty while it holds the same lock ([`room_relay_task`]): so a join is
/// never queued to a task that is ending. A full queue is waited out, the lock let go meanwhile.
async fn join_room(rooms: &Arc<RoomRelay>, group: &str, member: Member) -> mpsc::Sender<Relayed> {
    let mut join = Relayed::Join(member);
    loop {
        {
            let mut groups = rooms.lock();
            let room = groups.entry(group.to_owned()).or_insert_with(|| {
                let (room, inbox) = mpsc::channel(ROOM_RELAY_QUEUE);
                tokio::spawn(room_relay_task(Arc::clone(rooms), group.to_owned(), inbox));
                room
            });
            match room.try_send(join) {
                Ok(()) => return room.clone(),
                Err(TrySendError::Full(again)) => join = again,
                // Only if a task ended without taking its group out (it panicked): start anew.
                Err(TrySendError::Closed(again)) => {
                    groups.remove(group);
                    join = again;
                }
            }
        }
        tokio::task::yield_now().await;
    }
}

/// A room relay group's task: puts every message it is handed in every member's queue (a
/// member whose queue is full misses it), until its last member has left and nothing more is
/// queued; then it takes its group out of `rooms` and ends.
async fn room_relay_task(rooms: Arc<RoomRelay>, group: String, mut inbox: mpsc::Receiver<Relayed>) {
    let mut members: Vec<Member> = Vec::new();
    while let Some(message) = inbox.recv().await {
        match message {
            Relayed::Text(text) => {
                for (_, member) in &members {
                    let _ = member.try_send(Outgoing::Text(text.clone()));
                }
            }
            Relayed::Join(member) => members.push(member),
            Relayed::Leave(me) => {
                members.retain(|(n, _)| *n != me);
                if members.is_empty() {
                    let mut groups = rooms.lock();
                    if inbox.is_empty() {
                        groups.remove(&group);
                        return;
                    }
                }
            }
        }
    }
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
