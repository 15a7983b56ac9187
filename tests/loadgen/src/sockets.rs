//! The client sockets: spread over loopback source addresses, and the messages sent and read on them.

use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr};

use dhumbal_engine::{Difficulty, Preset, Settings};
use dhumbal_protocol::{ClientEnvelope, ClientMessage, CreateRoom, CreatedRoom, ServerMessage};
use dhumbal_server::conn::Inflater;
use dhumbal_tests::http;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::timeout_at;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::Common;
use crate::server::local;

/// A client's WebSocket, and its compressed stream when it asked for one.
pub(crate) struct Ws {
    /// The socket.
    pub(crate) socket: WebSocketStream<TcpStream>,
    /// The inflater of a socket opened with `?compress=deflate-raw`.
    inflate: Option<Inflater>,
    /// Messages inflated from a frame and not yet handed on.
    lines: VecDeque<String>,
    /// The bytes of every payload read from the server, as they came on the wire (compressed or
    /// not).
    pub(crate) wire: u64,
}

impl Ws {
    /// Sends a text frame.
    pub(crate) async fn send_text(&mut self, text: String) -> Result<(), String> {
        self.socket
            .send(Message::text(text))
            .await
            .map_err(|e| e.to_string())
    }

    /// Closes the socket.
    pub(crate) async fn close(&mut self) {
        let _ = self.socket.close(None).await;
    }

    /// Inflates one binary frame of the compressed stream into its messages.
    fn inflate(&mut self, frame: &[u8]) -> Result<(), String> {
        let Some(inflate) = &mut self.inflate else {
            return Err("a binary frame on a text socket".into());
        };
        self.lines.extend(inflate.messages(frame)?);
        Ok(())
    }
}

/// The loopback source address for the `n`th client.
pub(crate) fn source(common: &Common, n: usize) -> Ipv4Addr {
    let sources = usize::from(common.sources.max(1));
    let last = u8::try_from(2 + n % sources).expect("at most 255 sources");
    Ipv4Addr::new(127, 0, 0, last)
}

/// Opens a WebSocket to `path` on the server from the loopback address `from`; with `compress`,
/// one that asks for the compressed stream (`?compress=deflate-raw`).
pub(crate) async fn connect(
    server: SocketAddr,
    from: Ipv4Addr,
    path: &str,
    compress: bool,
) -> Result<Ws, String> {
    let socket = TcpSocket::new_v4().map_err(|e| e.to_string())?;
    socket
        .bind(SocketAddr::from((from, 0)))
        .map_err(|e| format!("bind {from}: {e}"))?;
    let stream = socket
        .connect(server)
        .await
        .map_err(|e| format!("connect from {from}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    // tungstenite's default read buffer (128 KiB, zeroed as it is reserved) would make the load
    // generator spend more time clearing memory than reading messages of under a kilobyte.
    let config = WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0);
    let query = if compress {
        "?compress=deflate-raw"
    } else {
        ""
    };
    let (socket, _) = tokio_tungstenite::client_async_with_config(
        format!("ws://{server}{path}{query}"),
        stream,
        Some(config),
    )
    .await
    .map_err(|e| format!("upgrade: {e}"))?;
    Ok(Ws {
        socket,
        inflate: compress.then(Inflater::new),
        lines: VecDeque::new(),
        wire: 0,
    })
}

/// Sends one client message.
pub(crate) async fn send(ws: &mut Ws, message: ClientMessage) -> Result<(), String> {
    let text = serde_json::to_string(&ClientEnvelope::from(message)).map_err(|e| e.to_string())?;
    ws.send_text(text).await
}

/// The next server message, or `None` at the deadline.
pub(crate) async fn recv(
    ws: &mut Ws,
    deadline: tokio::time::Instant,
) -> Result<Option<ServerMessage>, String> {
    match recv_text(ws, deadline).await? {
        Some(text) => serde_json::from_str(text.as_str())
            .map(Some)
            .map_err(|e| format!("not a server message: {e}")),
        None => Ok(None),
    }
}

/// The next text message from the server (a text frame, or the next message of the compressed
/// stream), or `None` at the deadline.
pub(crate) async fn recv_text(
    ws: &mut Ws,
    deadline: tokio::time::Instant,
) -> Result<Option<tokio_tungstenite::tungstenite::Utf8Bytes>, String> {
    loop {
        if let Some(line) = ws.lines.pop_front() {
            return Ok(Some(line.into()));
        }
        let frame = match timeout_at(deadline, ws.socket.next()).await {
            Err(_) => return Ok(None),
            Ok(None) => return Err("the server ended the socket".into()),
            Ok(Some(Err(e))) => return Err(e.to_string()),
            Ok(Some(Ok(frame))) => frame,
        };
        match frame {
            Message::Text(text) => {
                ws.wire += text.len() as u64;
                return Ok(Some(text));
            }
            Message::Binary(frame) => {
                ws.wire += frame.len() as u64;
                ws.inflate(&frame)?;
            }
            Message::Close(frame) => return Err(format!("closed by the server: {frame:?}")),
            _ => {}
        }
    }
}

/// Just enough of a server message to decide what a player does next; the full view is parsed
/// only on the seat's own turn, as a light client would.
#[derive(Deserialize)]
pub(crate) struct Peek {
    /// The message's type.
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// An `error`'s code.
    pub(crate) code: Option<String>,
}

/// `POST /api/rooms` for a standard table of `players` seats, with bots of `difficulty`.
pub(crate) async fn create_room(
    server: SocketAddr,
    players: u8,
    difficulty: Difficulty,
) -> Result<CreatedRoom, String> {
    let request = CreateRoom {
        settings: Some(Settings {
            players,
            difficulty,
            ..Preset::Standard.settings()
        }),
        ..CreateRoom::default()
    };
    let body = serde_json::to_string(&request).map_err(|e| e.to_string())?;
    let (status, body) = http::exchange(local(), server, "POST", "/api/rooms", &[], &body).await?;
    if status != 201 {
        return Err(format!("room creation: {status} {body}"));
    }
    serde_json::from_str(&body).map_err(|e| format!("created room: {e}"))
}
