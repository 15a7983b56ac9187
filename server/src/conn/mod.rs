//! One WebSocket connection: a reader and a writer that only do IO.
//!
//! - `writer` holds the socket's sending half (`Socket`), which a sender writes to straight away
//!   when it takes a frame at once and nothing queued is still unwritten; its task drains the
//!   connection's bounded outbound queue onto the socket (batching what is queued into one
//!   write), finishes what the socket did not take at once, and pings the client every
//!   `--ping-interval`.
//! - `reader` checks each incoming message's rate, size and shape, handles `hello` (through
//!   `hello`, which must name the room of the socket's path when it was opened at
//!   `/ws/{code}`), hands every other message to the room, notices silence, a missing `hello`, a
//!   kick and the shutdown, and says goodbye as each requires.
//!
//! - `deflate` is the compressed stream of a socket opened with `?compress=deflate-raw`
//!   ([`Framing`]): each batch of the writer's texts becomes one binary frame of it.
//! - `raw` is the TCP stream under every connection the listener serves ([`TcpIo`]): a plain
//!   WebSocket lets whoever sends to it write each text frame straight onto the stream
//!   ([`RawSocket`]), header and payload in one write, past the WebSocket library's buffer.
//!
//! [`serve`] runs both over an upgraded socket; `serve_streams` is the same over any sink and
//! stream of messages, which is how the tests drive a connection without a socket. Whichever
//! side ends first ends the other, and the room is told the connection has gone (its seat is
//! kept). When the server shuts down, the client is told `bye` and closed with 1001 (or 1012
//! when its room is kept for the restart).

mod deflate;
mod hello;
mod raw;
mod reader;
#[cfg(test)]
mod tests;
mod writer;

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket};
use futures_util::{Sink, Stream, StreamExt};
use tokio::sync::mpsc;
use tracing::debug;

pub use deflate::{Deflater, FLUSH_TAIL, Inflater};
pub use raw::{RawSocket, TcpIo};
pub(crate) use writer::write_batch;

use crate::AppState;
use crate::code::normalize;
use crate::error::Refusal;
use crate::limits::{AddressSlot, Slot};
use crate::listener::Held;
use crate::room::Command;
use crate::room::client::{ClientTx, Direct, HoldsKick, Kick, Outgoing};
use reader::{Reader, ReaderEnd};

/// A WebSocket's places under the caps, given back when it ends: held, never read (dropping
/// them frees the places).
#[derive(Debug)]
pub struct Places {
    /// Its place under `--max-connections`.
    #[expect(dead_code, reason = "held until the connection ends")]
    server: Slot,
    /// Its place in its client address's count.
    #[expect(dead_code, reason = "held until the connection ends")]
    address: AddressSlot,
    /// Its TCP connection's places ([`crate::listener`]), when it came through the listener.
    #[expect(dead_code, reason = "held until the connection ends")]
    tcp: Option<Held>,
}

impl Places {
    /// The places a WebSocket holds: under `--max-connections`, in its address's count, and its
    /// TCP connection's when it came through the listener.
    pub fn new(server: Slot, address: AddressSlot, tcp: Option<Held>) -> Places {
        Places {
            server,
            address,
            tcp,
        }
    }
}

/// How the server's messages travel on a socket, as its opening asked (`?compress=…`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Framing {
    /// Each message in a text frame of its own (the default).
    #[default]
    Text,
    /// One raw DEFLATE stream for the socket's life, each binary frame a piece of it holding one
    /// or more messages, each followed by a newline ([`Deflater`]).
    DeflateRaw,
}

impl Framing {
    /// The framing a socket's query string asks for: `compress=deflate-raw`, or nothing; any
    /// other value of `compress` is refused (other parameters are left to others).
    pub fn from_query(query: Option<&str>) -> Result<Framing, Refusal> {
        let mut framing = Framing::Text;
        for pair in query.unwrap_or_default().split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if key == "compress" {
                framing = match value {
                    "deflate-raw" => Framing::DeflateRaw,
                    _ => return Err(Refusal::UnsupportedCompression),
                };
            }
        }
        Ok(framing)
    }
}

/// How long a socket closed on purpose stays open so that the client can read the close frame.
const CLOSE_LINGER: Duration = Duration::from_secs(1);

/// Serves one upgraded WebSocket from the client at `ip` until either side ends it or the
/// server shuts down. `path_room` is the room code of the socket's path (`/ws/{code}`), which its
/// `hello` must name, or `None` (`/ws`: any room); `framing` how its messages travel. `places`
/// are the connection's places under the caps, given back at the end; `raw` its TCP stream,
/// when it came through the listener, which the room then writes its frames to straight.
pub async fn serve(
    socket: WebSocket,
    app: Arc<AppState>,
    ip: IpAddr,
    path_room: Option<String>,
    framing: Framing,
    places: Places,
    raw: Option<RawSocket>,
) {
    let _places = places;
    // A compressed stream's frames are made under the writer's lock: they go through the sink.
    let raw = raw.filter(|_| framing == Framing::Text);
    if let Some(raw) = &raw {
        raw.enable();
    }
    let (sink, stream) = socket.split();
    serve_streams(sink, stream, app, ip, path_room, framing, raw).await;
}

/// Serves one connection over `sink` and `stream` (a socket's halves, or channels in tests), and
/// `raw`, the TCP stream under them if frames are to be written to it straight.
pub(crate) async fn serve_streams<S, R>(
    sink: S,
    mut stream: R,
    app: Arc<AppState>,
    ip: IpAddr,
    path_room: Option<String>,
    framing: Framing,
    raw: Option<RawSocket>,
) where
    S: Sink<Message> + Unpin + Send + 'static,
    R: Stream<Item = Result<Message, axum::Error>> + Unpin,
{
    let conn = app.next_conn.fetch_add(1, Ordering::Relaxed);
    app.metrics.connections.increment(1.0);
    let (queue, outbox) = mpsc::channel::<Outgoing>(app.config.client_queue);
    let socket = Arc::new(writer::Socket::new(
        sink,
        raw,
        (framing == Framing::DeflateRaw).then(Deflater::new),
        Arc::clone(&app.metrics),
    ));
    // The kick's flag is in the socket's first line, beside what a straight write reads.
    let kick = Kick::of(Arc::clone(&socket) as Arc<dyn HoldsKick>);
    let tx = ClientTx {
        queue,
        kick: kick.clone(),
        direct: Some(Arc::clone(&socket) as Arc<dyn Direct>),
    };
    let mut writer = tokio::spawn(writer::run(socket, outbox));
    let path_room = path_room.map(|code| normalize(&code));
    let mut reader = Reader::new(conn, Arc::clone(&app), ip, path_room, tx);
    let ending = reader.run(&mut stream, &kick).await;
    if kick.is_cancelled() {
        // Kicked (it fell behind, or its seat was taken), or its writer has ended: nothing more
        // is sent, even if the socket is in the middle of a write it cannot finish.
        writer.abort();
    }
    reader.farewell(ending);
    let Reader { room, tx, .. } = reader;
    // A room that is stopping for the shutdown need not hear of it.
    if let (Some(room), false) = (room, ending == ReaderEnd::Shutdown) {
        room.send(Command::Leave { conn }).await;
    }
    // Once the room has let go of the queue, the writer sends what is left (a close frame, say)
    // and ends; a writer stuck on a dead socket is stopped.
    drop(tx);
    if tokio::time::timeout(writer::WRITER_GRACE, &mut writer)
        .await
        .is_err()
    {
        writer.abort();
        let _ = writer.await;
        kick.cancel();
    }
    linger(ending, &mut stream).await;
    app.metrics.connections.decrement(1.0);
    debug!(conn, "connection closed");
}

/// After a close the server sent on purpose, gives the client time to read the close frame: the
/// rest of a refused message over the cap is still unread (closing now would reset the
/// connection under the frame), and a client told `bye` is read on until it answers the close.
async fn linger<R>(ending: ReaderEnd, stream: &mut R)
where
    R: Stream<Item = Result<Message, axum::Error>> + Unpin,
{
    match ending {
        ReaderEnd::TooBig | ReaderEnd::NotUtf8 => tokio::time::sleep(CLOSE_LINGER).await,
        ReaderEnd::Shutdown
        | ReaderEnd::RateAbuse
        | ReaderEnd::NoHello
        | ReaderEnd::StoreUnavailable => {
            let _ = tokio::time::timeout(CLOSE_LINGER, async {
                while let Some(Ok(_)) = stream.next().await {}
            })
            .await;
        }
        ReaderEnd::Gone | ReaderEnd::Silent => {}
    }
}
