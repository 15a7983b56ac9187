//! The `hello` step: check the protocol version, check that `hello` names the room of the
//! socket's path when it was opened at `/ws/{code}`, find the room (counting codes of no room
//! against the address, [`crate::limits::JoinAttempts`]), and ask the room to let the
//! connection in.

use std::net::IpAddr;

use dhumbal_protocol::{Hello, MessageId, PROTOCOL_VERSION};
use tokio::sync::oneshot;

use super::ClientTx;
use crate::AppState;
use crate::code::normalize;
use crate::error::Refusal;
use crate::room::{Command, Joining, RoomHandle};

/// Joins the room `hello` names. `path_room` is the code in the socket's path (`/ws/{code}`,
/// normalised), if it had one: `hello` must name that room, or it is refused with
/// `room_mismatch` before any lookup (a load balancer routed the socket by that code, so it may
/// not join another room here). `Ok(Some(room))` when the room let the connection in; `Ok(None)`
/// when the room refused it (and has told the client why); `Err` for a refusal the connection
/// must send itself.
pub(super) async fn join(
    app: &AppState,
    conn: u64,
    ip: IpAddr,
    tx: &ClientTx,
    path_room: Option<&str>,
    hello: Box<Hello>,
    id: Option<MessageId>,
) -> Result<Option<RoomHandle>, Refusal> {
    if hello.protocol != PROTOCOL_VERSION {
        return Err(Refusal::UnsupportedProtocol);
    }
    if path_room.is_some_and(|path| path != normalize(&hello.room)) {
        return Err(Refusal::RoomMismatch);
    }
    // An address that failed too many lookups may still come back to its seat: with a token,
    // the room itself decides (a valid token is never refused). Anything else is answered
    // alike whether the room exists or not.
    let blocked = app.join_attempts.check(ip).is_err();
    if blocked && hello.token.is_none() {
        return Err(Refusal::TooManyAttempts);
    }
    // A room this node does not hold is claimed from a shared store (Redis) here.
    let found = app.rooms.find(&normalize(&hello.room)).await;
    let found = found.map_err(|e| Refusal::store("claiming a room from the store failed", &e))?;
    let Some(handle) = found else {
        if blocked {
            return Err(Refusal::TooManyAttempts);
        }
        app.join_attempts.fail(ip);
        return Err(Refusal::UnknownRoom);
    };
    let (reply, joined) = oneshot::channel();
    let join = Command::Join {
        joining: Joining {
            conn,
            hello,
            id,
            token_only: blocked,
            address: ip,
        },
        client: tx.clone(),
        reply,
    };
    if !handle.send(join).await {
        // The room closed between the lookup and the hello.
        return Err(Refusal::UnknownRoom);
    }
    Ok((joined.await == Ok(true)).then_some(handle))
}
