//! One WebSocket connection: a reader and a writer that only do IO.
//!
//! The writer task drains the connection's bounded outbound queue onto the socket. The reader
//! (the connection's own task) checks each incoming message's size (the socket refuses a message
//! over the cap and is closed with 1009) and shape ([`parse_client_message`]), handles `hello` by
//! finding the room, and hands every other message to the room. Whichever side ends first ends
//! the other, and the room is told the connection has gone.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use dhumbal_protocol::{
    CLOSE_TOO_BIG, ClientMessage, PROTOCOL_VERSION, ServerMessage, codes, parse_client_message,
};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::AppState;
use crate::code::normalize;
use crate::room::{ClientTx, Command, Outgoing, RoomHandle};

/// How long a socket closed for a message over the cap stays open so that the client can read
/// the close frame.
const CLOSE_LINGER: Duration = Duration::from_secs(1);

/// How long a closing connection's writer may take to flush what is left.
const WRITER_GRACE: Duration = Duration::from_secs(5);

/// Serves one upgraded WebSocket until either side ends it.
pub async fn serve(socket: WebSocket, app: Arc<AppState>) {
    let conn = app.next_conn.fetch_add(1, Ordering::Relaxed);
    app.metrics.connections.increment(1.0);
    let (mut sink, mut stream) = socket.split();
    let (queue, mut outbox) = mpsc::channel::<Outgoing>(app.config.client_queue);
    let kick = CancellationToken::new();
    let tx = ClientTx {
        queue,
        kick: kick.clone(),
    };

    let writer_kick = kick.clone();
    let metrics = Arc::clone(&app.metrics);
    let writer = tokio::spawn(async move {
        loop {
            let next = tokio::select! {
                biased;
                next = outbox.recv() => next,
                () = writer_kick.cancelled() => None,
            };
            match next {
                Some(Outgoing::Text(text)) => {
                    // A socket that stops taking data must not keep this task alive once kicked.
                    let sent = tokio::select! {
                        sent = sink.send(Message::Text(text)) => sent.is_ok(),
                        () = writer_kick.cancelled() => false,
                    };
                    if !sent {
                        break;
                    }
                    metrics.messages_out.increment(1);
                }
                Some(Outgoing::Close(code, reason)) => {
                    let frame = CloseFrame {
                        code,
                        reason: reason.into(),
                    };
                    let _ = sink.send(Message::Close(Some(frame))).await;
                    break;
                }
                None => {
                    let _ = sink.send(Message::Close(None)).await;
                    break;
                }
            }
        }
        writer_kick.cancel();
    });

    let mut room: Option<RoomHandle> = None;
    let mut too_big = false;
    loop {
        let frame = tokio::select! {
            frame = stream.next() => frame,
            () = kick.cancelled() => break,
        };
        let text = match frame {
            None => break,
            // The socket answers the close frame on the next read, which then ends: reading on
            // until then closes cleanly instead of dropping the connection before the answer.
            Some(Ok(Message::Close(_))) => continue,
            Some(Err(e)) => {
                if is_too_big(e) {
                    let _ = tx
                        .queue
                        .try_send(Outgoing::Close(CLOSE_TOO_BIG, "message too big"));
                    too_big = true;
                }
                break;
            }
            Some(Ok(Message::Text(text))) => {
                app.metrics.messages_in.increment(1);
                text
            }
            Some(Ok(Message::Binary(_))) => {
                app.metrics.messages_in.increment(1);
                refuse(
                    &app,
                    &tx,
                    &ServerMessage::error(
                        codes::BAD_MESSAGE,
                        "send JSON in text messages, not binary ones",
                        None,
                    ),
                );
                continue;
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
        };
        let envelope = match parse_client_message(text.as_str()) {
            Ok(envelope) => envelope,
            Err(e) => {
                debug!(conn, code = e.code, "bad message");
                refuse(&app, &tx, &ServerMessage::error(e.code, e.message, e.id));
                continue;
            }
        };
        let id = envelope.id;
        match (envelope.message, &room) {
            (ClientMessage::Hello(hello), None) => {
                if hello.protocol != PROTOCOL_VERSION {
                    refuse(
                        &app,
                        &tx,
                        &ServerMessage::error(
                            codes::UNSUPPORTED_PROTOCOL,
                            format!("this server speaks protocol {PROTOCOL_VERSION}"),
                            id,
                        ),
                    );
                    continue;
                }
                let Some(handle) = app.rooms.get(&normalize(&hello.room)) else {
                    refuse(
                        &app,
                        &tx,
                        &ServerMessage::error(
                            codes::UNKNOWN_ROOM,
                            "there is no room with that code",
                            id,
                        ),
                    );
                    continue;
                };
                let (reply, joined) = oneshot::channel();
                let join = Command::Join {
                    conn,
                    hello,
                    id: id.clone(),
                    client: tx.clone(),
                    reply,
                };
                if !handle.send(join).await {
                    // The room closed between the lookup and the hello.
                    refuse(
                        &app,
                        &tx,
                        &ServerMessage::error(
                            codes::UNKNOWN_ROOM,
                            "there is no room with that code",
                            id,
                        ),
                    );
                } else if joined.await == Ok(true) {
                    room = Some(handle);
                }
            }
            (ClientMessage::Hello(_), Some(_)) => {
                refuse(
                    &app,
                    &tx,
                    &ServerMessage::error(
                        codes::ALREADY_JOINED,
                        "this connection has already joined a room",
                        id,
                    ),
                );
            }
            (_, None) => {
                refuse(
                    &app,
                    &tx,
                    &ServerMessage::error(
                        codes::HELLO_FIRST,
                        "say hello first: {\"type\":\"hello\",\"protocol\":1,\"room\":…,\"name\":…,\"token\":null}",
                        id,
                    ),
                );
            }
            (message, Some(handle)) => {
                if !handle.send(Command::Message { conn, id, message }).await {
                    break;
                }
            }
        }
    }
    if let Some(handle) = room {
        handle.send(Command::Leave { conn }).await;
    }
    // Once the room has let go of the queue, the writer sends what is left (a close frame, say)
    // and ends; a writer stuck on a dead socket is stopped.
    drop(tx);
    let mut writer = writer;
    if tokio::time::timeout(WRITER_GRACE, &mut writer)
        .await
        .is_err()
    {
        kick.cancel();
        let _ = writer.await;
    }
    if too_big {
        // The rest of the refused message is still unread; closing the TCP connection now would
        // reset it and could destroy the close frame on its way. Give the client time to read it.
        tokio::time::sleep(CLOSE_LINGER).await;
    }
    app.metrics.connections.decrement(1.0);
    debug!(conn, "connection closed");
}

/// Sends a refusal (an `error`) to the client and counts it.
fn refuse(app: &AppState, tx: &ClientTx, error: &ServerMessage) {
    if let ServerMessage::Error(e) = error {
        app.metrics.rejected(&e.code);
    }
    tx.send_message(error);
}

/// Whether a read error is the socket refusing a message over the size cap.
fn is_too_big(error: axum::Error) -> bool {
    matches!(
        error
            .into_inner()
            .downcast::<tungstenite::Error>()
            .map(|e| *e),
        Ok(tungstenite::Error::Capacity(_))
    )
}
