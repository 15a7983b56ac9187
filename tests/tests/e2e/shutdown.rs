//! Graceful shutdown in process: when `run`'s shutdown future completes, every client (seated,
//! watching, or not yet in a room) is told `bye` and its socket closed with 1001, the rooms stop,
//! and `run` returns `Ok` (it answers an error when a connection or room outlives the grace
//! period). The binary's own signal handling is tested in `server/tests/signals.rs`.

use dhumbal_protocol::{
    CLOSE_GOING_AWAY, ClientMessage, Hello, PROTOCOL_VERSION, ServerMessage, codes,
};
use dhumbal_tests::client::Closed;
use dhumbal_tests::{Client, TestServer, guarded};

use crate::common::{room_with, standard_for};

/// Reads until the `bye`, which must say the server is shutting down, then the close: 1001.
async fn expect_bye_and_1001(client: &mut Client) {
    let bye = client
        .recv_until(|m| match m {
            ServerMessage::Bye(bye) => Some(bye.clone()),
            _ => None,
        })
        .await;
    assert_eq!(bye.reason, codes::SHUTTING_DOWN);
    assert_eq!(client.expect_closed().await, Closed::Code(CLOSE_GOING_AWAY));
}

#[tokio::test]
async fn shutdown_tells_every_client_bye_closes_with_1001_and_run_returns() {
    let server = TestServer::start().await;
    let addr = server.addr;
    // A match under way with two people and two bots, a spectator, and a socket that has not
    // said hello yet.
    let room = server.create_room(&room_with(standard_for(4))).await;
    let mut host = Client::join(addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut guest = Client::join(addr, &room.code, "Bina", None).await;
    let mut watcher = Client::connect(addr).await;
    watcher
        .send(ClientMessage::from(Hello {
            protocol: PROTOCOL_VERSION,
            room: room.code.clone(),
            name: "Chandra".into(),
            token: None,
            spectator: true,
            host_secret: None,
            client_seed: None,
        }))
        .await;
    watcher.expect_welcome().await;
    let mut lurker = Client::connect(addr).await;
    host.send(ClientMessage::Start).await;
    guest.recv_state_where(|_| true).await;
    // A second room, in its lobby.
    let other = server.create_room(&room_with(standard_for(2))).await;
    let mut other_host = Client::join(addr, &other.code, "Dipa", Some(&other.host_secret)).await;

    // `stop` completes the shutdown future and waits for `run`, which must answer `Ok`: every
    // connection and room finished within the grace period.
    let stopping = tokio::spawn(server.stop());
    for client in [
        &mut host,
        &mut guest,
        &mut watcher,
        &mut lurker,
        &mut other_host,
    ] {
        expect_bye_and_1001(client).await;
    }
    guarded("run to return", stopping)
        .await
        .expect("the server stopped cleanly");
    // Nothing listens any more.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}
