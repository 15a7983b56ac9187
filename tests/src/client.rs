//! A WebSocket client for tests: it keeps what the server told it and scans every frame.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};

use dhumbal_engine::{Event, SeatView};
use dhumbal_protocol::{
    ClientEnvelope, ClientMessage, ErrorMessage, HeldView, Hello, History, MessageId,
    PROTOCOL_VERSION, RoomState, ServerMessage, Stale, Welcome,
};
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, client_async, connect_async};

use crate::LeakCheck;

/// A connected WebSocket client. Every message it receives is scanned for leaks and remembered:
/// the last `welcome`, `room` and view. A `patch` is applied to the view held and handed to the
/// test (and kept in `received`) as the whole `state` it makes, with the patch's version. It keeps the history the way a client must
/// ([`History::follow`]), so a test reads the round's log and the match's results as the client
/// has them in `history`.
pub struct Client {
    /// The socket.
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// A compressed socket's stream ([`Client::connect_compressed`]).
    inflate: Option<Inflate>,
    /// The scan of every frame received.
    pub leaks: LeakCheck,
    /// The last `welcome`.
    pub welcome: Option<Welcome>,
    /// The last `room`.
    pub room: Option<RoomState>,
    /// The last view (a `state`, or a `patch` applied to the view held).
    pub view: Option<SeatView>,
    /// The view as the client follows it ([`HeldView`]): a `patch` that does not build on it
    /// fails the test.
    pub held: HeldView,
    /// How many `patch` messages arrived (each is handed to the test as the `state` it makes).
    pub patches: usize,
    /// The bytes of every message payload received (as compressed, on a compressed socket).
    pub bytes: usize,
    /// The history as this client keeps it.
    pub history: History,
    /// Every message received, in order.
    pub received: Vec<ServerMessage>,
}

/// A compressed socket's inflater, and the messages inflated and not yet read.
struct Inflate {
    /// The raw DEFLATE stream.
    stream: dhumbal_server::conn::Inflater,
    /// Messages of frames already inflated.
    lines: VecDeque<String>,
}

/// A `hello` to `room` as a new person named `name` (no token, no host secret, seated): change
/// what a test needs with `..hello(room, name)`.
pub fn hello(room: &str, name: &str) -> Hello {
    Hello {
        protocol: PROTOCOL_VERSION,
        room: room.into(),
        name: name.into(),
        token: None,
        spectator: false,
        host_secret: None,
        client_seed: None,
    }
}

/// What ended a socket from the server's side.
#[derive(Debug, PartialEq, Eq)]
pub enum Closed {
    /// A close frame with this code.
    Code(u16),
    /// The socket ended without a close frame, or with an empty one.
    NoCode,
}

/// The path of a room's WebSocket, `/ws/{code}` (the code percent-encoded, so that a test may
/// pass one as a person typed it).
pub fn room_path(code: &str) -> String {
    let mut path = String::from("/ws/");
    for byte in code.bytes() {
        if byte.is_ascii_alphanumeric() {
            path.push(char::from(byte));
        } else {
            path.push_str(&format!("%{byte:02X}"));
        }
    }
    path
}

impl Client {
    /// A client over an open socket of text frames.
    fn over(ws: WebSocketStream<MaybeTlsStream<TcpStream>>) -> Client {
        Client {
            ws,
            inflate: None,
            leaks: LeakCheck::default(),
            welcome: None,
            room: None,
            view: None,
            held: HeldView::default(),
            patches: 0,
            bytes: 0,
            history: History::default(),
            received: Vec::new(),
        }
    }

    /// Opens a compressed WebSocket to `path` (`/ws`, or a room's `/ws/{code}`): it asks for
    /// `?compress=deflate-raw` and inflates the server's binary frames into their messages
    /// (`bytes` counts the compressed bytes).
    pub async fn connect_compressed(addr: SocketAddr, path: &str) -> Client {
        let join = if path.contains('?') { '&' } else { '?' };
        let path = format!("{path}{join}compress=deflate-raw");
        let mut client = Client::connect_to(addr, &path).await;
        client.inflate = Some(Inflate {
            stream: dhumbal_server::conn::Inflater::new(),
            lines: VecDeque::new(),
        });
        client
    }

    /// Opens a WebSocket to the server's `/ws` (the socket for any room).
    pub async fn connect(addr: SocketAddr) -> Client {
        Client::connect_to(addr, "/ws").await
    }

    /// Opens a WebSocket to `path` on the server: `/ws`, or a room's `/ws/{code}`
    /// ([`room_path`]).
    pub async fn connect_to(addr: SocketAddr, path: &str) -> Client {
        let (ws, _) = crate::guarded(
            "the WebSocket to open",
            connect_async(format!("ws://{addr}{path}")),
        )
        .await
        .expect("the WebSocket opens");
        Client::over(ws)
    }

    /// Opens a WebSocket to the server's `/ws` from the loopback address `from` (any of
    /// `127.0.0.0/8`), sending `Origin: origin` if given. A refused upgrade is returned as its
    /// HTTP status and body.
    pub async fn connect_from(
        addr: SocketAddr,
        from: IpAddr,
        origin: Option<&str>,
    ) -> Result<Client, (u16, String)> {
        let headers: Vec<(&str, &str)> = origin.map(|o| ("origin", o)).into_iter().collect();
        Client::connect_with(addr, from, &headers).await
    }

    /// Opens a WebSocket to the server's `/ws` from the loopback address `from`, with these
    /// extra request headers (an `Origin`, a proxy's `X-Forwarded-For`, …). A refused upgrade is
    /// returned as its HTTP status and body.
    pub async fn connect_with(
        addr: SocketAddr,
        from: IpAddr,
        headers: &[(&str, &str)],
    ) -> Result<Client, (u16, String)> {
        Client::connect_to_with(addr, "/ws", from, headers).await
    }

    /// Opens a WebSocket to `path` (`/ws`, or a room's `/ws/{code}`) from the loopback address
    /// `from`, with these extra request headers. A refused upgrade is returned as its HTTP status
    /// and body.
    pub async fn connect_to_with(
        addr: SocketAddr,
        path: &str,
        from: IpAddr,
        headers: &[(&str, &str)],
    ) -> Result<Client, (u16, String)> {
        let mut request = format!("ws://{addr}{path}")
            .into_client_request()
            .expect("a WebSocket request");
        for (name, value) in headers {
            let value = HeaderValue::from_str(value).expect("a header value");
            let name =
                tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes())
                    .expect("a header name");
            request.headers_mut().insert(name, value);
        }
        let open = async {
            let socket = TcpSocket::new_v4().expect("a socket");
            socket
                .bind(SocketAddr::new(from, 0))
                .expect("bind a loopback address");
            let stream = socket.connect(addr).await.expect("connect to the server");
            client_async(request, MaybeTlsStream::Plain(stream)).await
        };
        match crate::guarded("the WebSocket to open", open).await {
            Ok((ws, _)) => Ok(Client::over(ws)),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                let status = response.status().as_u16();
                let body = response.body().clone().unwrap_or_default();
                Err((status, String::from_utf8_lossy(&body).into_owned()))
            }
            Err(e) => panic!("the WebSocket failed to open: {e}"),
        }
    }

    /// The socket, for tests that send frames a well-behaved client would not (pings, say).
    pub fn socket(&mut self) -> &mut WebSocketStream<MaybeTlsStream<TcpStream>> {
        &mut self.ws
    }

    /// Says hello to `room` as a new person named `name`, without waiting for the answer.
    pub async fn hello(&mut self, room: &str, name: &str) {
        self.send(ClientMessage::from(hello(room, name))).await;
    }

    /// Connects to the room's own socket (`/ws/{code}`, as the web client does) and says hello
    /// with a name (and the host secret, for the host), expecting a `welcome`.
    pub async fn join(
        addr: SocketAddr,
        room: &str,
        name: &str,
        host_secret: Option<&str>,
    ) -> Client {
        let mut client = Client::connect_to(addr, &room_path(room)).await;
        client
            .send(ClientMessage::from(Hello {
                host_secret: host_secret.map(str::to_owned),
                ..hello(room, name)
            }))
            .await;
        client.expect_welcome().await;
        client
    }

    /// Every public event this client has received, in order (the events of its `state`s).
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.received.iter().flat_map(|m| match m {
            ServerMessage::State { events, .. } => events.as_slice(),
            _ => &[],
        })
    }

    /// Receives until a `state` carries an event that `pick` makes something of.
    pub async fn recv_event<T>(&mut self, mut pick: impl FnMut(&Event) -> Option<T>) -> T {
        self.recv_until(|m| match m {
            ServerMessage::State { events, .. } => events.iter().find_map(&mut pick),
            _ => None,
        })
        .await
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

    /// Whether a state has arrived yet.
    pub fn has_view(&self) -> bool {
        self.view.is_some()
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
            if let Some(line) = self.inflate.as_mut().and_then(|i| i.lines.pop_front()) {
                return self.read(&line);
            }
            let frame = crate::guarded("a message from the server", self.ws.next())
                .await
                .expect("the socket is open")
                .expect("a frame");
            let text = match frame {
                Message::Text(text) => text,
                Message::Binary(frame) if self.inflate.is_some() => {
                    self.bytes += frame.len();
                    if let Some(inflate) = &mut self.inflate {
                        let messages = inflate.stream.messages(&frame);
                        inflate
                            .lines
                            .extend(messages.expect("the server's frame reads"));
                    }
                    continue;
                }
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("expected a text message, got {other:?}"),
            };
            self.bytes += text.len();
            return self.read(text.as_str());
        }
    }

    /// Reads one message's text: scans it, keeps what it says, and hands it on.
    fn read(&mut self, text: &str) -> ServerMessage {
        let value: serde_json::Value = serde_json::from_str(text).expect("the server sends JSON");
        self.leaks.scan(&value);
        if value["type"] == "state" {
            let view = &value["view"];
            assert!(
                view.get("log").is_none() && view.get("results").is_none(),
                "a state repeats the history: {text}"
            );
        }
        let message: ServerMessage =
            serde_json::from_value(value).expect("the server sends protocol messages");
        let message = self.follow(message).unwrap_or_else(|stale| {
            panic!("a patch that does not build on the view held ({stale:?}): {text}")
        });
        self.received.push(message.clone());
        message
    }

    /// Keeps what one message from the server says: the history, the view held, the last
    /// `welcome` and `room`. A `patch` comes back as the whole `state` it makes (of its
    /// version); one that does not build on the view held is [`Stale`] and changes nothing.
    pub fn follow(&mut self, message: ServerMessage) -> Result<ServerMessage, Stale> {
        self.held.follow(&message)?;
        self.history.follow(&message);
        let message = match message {
            ServerMessage::Patch(patch) => {
                self.patches += 1;
                ServerMessage::State {
                    v: patch.v,
                    events: patch.events,
                    stand_in: patch.stand_in,
                    clock: patch.clock,
                    view: Box::new(self.held.view.clone().expect("a patched view")),
                }
            }
            other => other,
        };
        match &message {
            ServerMessage::Welcome(welcome) => self.welcome = Some(welcome.clone()),
            ServerMessage::Room(room) => self.room = Some(room.clone()),
            ServerMessage::State { view, .. } => self.view = Some((**view).clone()),
            _ => {}
        }
        Ok(message)
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

    /// Receives (and keeps, as [`Client::recv`] does) every message until none has come for
    /// `quiet`.
    pub async fn recv_until_quiet(&mut self, quiet: std::time::Duration) {
        while tokio::time::timeout(quiet, self.recv()).await.is_ok() {}
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
                ServerMessage::Room(_) | ServerMessage::State { .. } => {}
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
            ServerMessage::State { view, .. } if pick(view) => Some((**view).clone()),
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

    /// Waits for the server to close the socket while answering nothing (not even its pings:
    /// the bytes are read off the TCP stream, past the WebSocket), and returns the code of the
    /// close frame that ends what the server sent. For a client that plays dead.
    pub async fn expect_closed_unanswered(&mut self) -> Closed {
        use tokio::io::AsyncReadExt;
        let MaybeTlsStream::Plain(tcp) = self.ws.get_mut() else {
            panic!("test clients use plain TCP");
        };
        let mut sent = Vec::new();
        crate::guarded("the server to close the socket", tcp.read_to_end(&mut sent))
            .await
            .expect("read the socket to its end");
        // The last frame: 0x88 (a final close frame, unmasked), a payload length under 126, then
        // the code and the reason.
        (2..=125usize)
            .filter(|len| sent.len() >= len + 2)
            .find_map(|len| {
                let frame = &sent[sent.len() - len - 2..];
                (frame[0] == 0x88 && usize::from(frame[1]) == len)
                    .then(|| Closed::Code(u16::from_be_bytes([frame[2], frame[3]])))
            })
            .unwrap_or(Closed::NoCode)
    }

    /// Closes the socket.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }

    /// Closes the socket and keeps what it received (the view, the room): a person who has
    /// finished playing leaves, so the server never waits for them.
    pub async fn leave(&mut self) {
        let _ = self.ws.close(None).await;
    }
}
