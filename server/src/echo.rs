//! A diagnostic WebSocket echo at `GET /ws-echo`, served only with `--ws-echo`.
//!
//! It exists so that a WebSocket conformance suite (Autobahn, which expects a peer that echoes)
//! can test this server's WebSocket stack: the same axum upgrade, the same limits and buffer
//! sizes from the same [`Config`](crate::Config) ([`crate::api::ws_limits`]), and the same
//! closing discipline as the game's connections: after a close frame, keep reading until the
//! socket ends, so that the close reply is flushed before the TCP connection is dropped.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use axum::routing::get;

use crate::AppState;
use crate::api::ws_limits;

/// The echo route (merged into the app only with `--ws-echo`).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/ws-echo", get(upgrade))
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
