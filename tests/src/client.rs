//! A WebSocket client for tests: it keeps what the server told it and scans every frame.

use std::net::SocketAddr;

use dhumbal_engine::SeatView;
use dhumbal_protocol::{
    ClientEnvelope, ClientMessage, ErrorMessage, Hello, MessageId, PROTOCOL_VERSION, RoomState,
    ServerMessage, Welcome,
};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

use crate::LeakCheck;

/// A connected WebSocket client. Every message it receives is scanned for leaks and remembered:
/// the last `welcome`, `room` and view.
pub struct Client {
    /// The socket.
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The scan of every frame received.
    pub leaks: LeakCheck,
    /// The last `welcome`.
    pub welcome: Option<Welcome>,
    /// The last `room`.
    pub room: Option<RoomState>,
    /// The last view (`state`).
    pub view: Option<SeatView>,
    /// Every message received, in order.
    pub received: Vec<ServerMessage>,
}

/// What ended a socket from the server's side.
#[derive(Debug, PartialEq, Eq)]
pub enum Closed {
    /// A close frame with this code.
    Code(u16),
    /// The socket ended without a close frame, or with an empty one.
    NoCode,
}

impl Client {
    /// Opens a WebSocket to the server's `/ws`.
    pub async fn connect(addr: SocketAddr) -> Client {
        let (ws, _) = crate::guarded(
            "the WebSocket to open",
            connect_async(format!("ws://{addr}/ws")),
        )
        .await
        .expect("the WebSocket opens");
        Client {
            ws,
            leaks: LeakCheck::default(),
            welcome: None,
            room: None,
            view: None,
            received: Vec::new(),
        }
    }

    /// Connects and says hello with a name (and the host secret, for the host), expecting a
    /// `welcome`.
    pub async fn join(
        addr: SocketAddr,
        room: &str,
        name: &str,
        host_secret: Option<&str>,
    ) -> Client {
        let mut client = Client::connect(addr).await;
        client
            .send(ClientMessage::Hello(Hello {
                protocol: PROTOCOL_VERSION,
                room: room.into(),
                name: name.into(),
                token: None,
                spectator: false,
                host_secret: host_secret.map(str::to_owned),
            }))
            .await;
        client.expect_welcome().await;
        client
    }

    /// This client's seat, from its `welcome` or, later, its `room`.
    pub fn seat(&self) -> Option<usize> {
        match &self.room {
            Some(room) => room.your_seat,
            None => self.welcome.as_ref().and_then(|w| w.seat),
        }
    }

    /// This client's seat token.
    pub fn token(&self) -> Option<String> {
        self.welcome.as_ref().and_then(|w| w.token.clone())
    }

    /// The last view; panics if there is none yet.
    pub fn view(&self) -> &SeatView {
        self.view.as_ref().expect("a state has arrived")
    }

    /// Sends a message without an id.
    pub async fn send(&mut self, message: ClientMessage) {
        self.send_envelope(ClientEnvelope::from(message)).await;
    }

    /// Sends a message with an id.
    pub async fn send_with_id(&mut self, message: ClientMessage, id: u64) {
        self.send_envelope(ClientEnvelope {
            id: Some(MessageId::Number(id)),
            message,
        })
        .await;
    }

    async fn send_envelope(&mut self, envelope: ClientEnvelope) {
        let text = serde_json::to_string(&envelope).expect("a message serializes");
        self.send_text(&text).await;
    }

    /// Sends raw text.
    pub async fn send_text(&mut self, text: &str) {
        self.ws
            .send(Message::text(text))
            .await
            .expect("the message is sent");
    }

    /// The next message from the server. Panics if none comes within [`crate::PATIENCE`] or the
    /// socket closes.
    pub async fn recv(&mut self) -> ServerMessage {
        loop {
            let frame = crate::guarded("a message from the server", self.ws.next())
                .await
                .expect("the socket is open")
                .expect("a frame");
            let text = match frame {
                Message::Text(text) => text,
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("expected a text message, got {other:?}"),
            };
            let value: serde_json::Value =
                serde_json::from_str(text.as_str()).expect("the server sends JSON");
            self.leaks.scan(&value);
            let message: ServerMessage =
                serde_json::from_value(value).expect("the server sends protocol messages");
            match &message {
                ServerMessage::Welcome(welcome) => self.welcome = Some(welcome.clone()),
                ServerMessage::Room(room) => self.room = Some(room.clone()),
                ServerMessage::State { view } => self.view = Some((**view).clone()),
                _ => {}
            }
            self.received.push(message.clone());
            return message;
        }
    }

    /// Receives until a message matches `pick`, returning what `pick` made of it.
    pub async fn recv_until<T>(&mut self, mut pick: impl FnMut(&ServerMessage) -> Option<T>) -> T {
        loop {
            let message = self.recv().await;
            if let Some(found) = pick(&message) {
                return found;
            }
        }
    }

    /// Receives until a `welcome`.
    pub async fn expect_welcome(&mut self) -> Welcome {
        let next = self.recv().await;
        match next {
            ServerMessage::Welcome(welcome) => welcome,
            other => panic!("expected a welcome, got {other:?}"),
        }
    }

    /// The next message other than a room update, which must be an `error`. (Room updates come
    /// whenever anyone joins or leaves, so they may arrive at any time.)
    pub async fn expect_error(&mut self) -> ErrorMessage {
        loop {
            match self.recv().await {
                ServerMessage::Error(error) => return error,
                ServerMessage::Room(_) => continue,
                other => panic!("expected an error, got {other:?}"),
            }
        }
    }

    /// The next message other than room updates, events and views, which must be an `error`:
    /// for refusals sent while a match is being played around the client.
    pub async fn expect_error_skipping_play(&mut self) -> ErrorMessage {
        loop {
            match self.recv().await {
                ServerMessage::Error(error) => return error,
                ServerMessage::Room(_)
                | ServerMessage::Event { .. }
                | ServerMessage::State { .. } => {}
                other => panic!("expected an error, got {other:?}"),
            }
        }
    }

    /// The next message other than a room update, which must be a `welcome`.
    pub async fn expect_welcome_skipping_rooms(&mut self) -> Welcome {
        loop {
            match self.recv().await {
                ServerMessage::Welcome(welcome) => return welcome,
                ServerMessage::Room(_) => {}
                other => panic!("expected a welcome, got {other:?}"),
            }
        }
    }

    /// Receives until a `state` for which `pick` holds.
    pub async fn recv_state_where(&mut self, mut pick: impl FnMut(&SeatView) -> bool) -> SeatView {
        self.recv_until(|m| match m {
            ServerMessage::State { view } if pick(view) => Some((**view).clone()),
            _ => None,
        })
        .await
    }

    /// Waits for the server to close the socket, returning how. Messages before the close are
    /// read and dropped.
    pub async fn expect_closed(&mut self) -> Closed {
        loop {
            let frame = crate::guarded("the socket to close", self.ws.next()).await;
            match frame {
                Some(Ok(Message::Close(Some(CloseFrame { code, .. })))) => {
                    return Closed::Code(code.into());
                }
                Some(Ok(Message::Close(None))) | None | Some(Err(_)) => return Closed::NoCode,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// Closes the socket.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}
