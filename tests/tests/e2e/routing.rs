//! The room's own socket, `/ws/{code}`: the path a load balancer routes a room's sockets by.
//! Joining through it, a `hello` to another room refused without effect, a code of no room
//! answered as at `/ws`, `/ws` itself unchanged, and the origin check on both.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use dhumbal_protocol::{
    ApiError, ClientMessage, Hello, MessageId, RoomSummary, ServerMessage, codes,
};
use dhumbal_server::Config;
use dhumbal_tests::client::{hello, room_path};
use dhumbal_tests::{Client, TestServer, http};

use crate::common::{room_with, standard_for};

/// A loopback address of its own, so that the test's per-address counts are its own.
fn loopback(n: u8) -> IpAddr {
    Ipv4Addr::new(127, 0, 0, n).into()
}

/// What `GET /api/rooms/{code}` says of a room.
async fn summary(server: &TestServer, code: &str) -> RoomSummary {
    let (status, body) = http::get(server.addr, &format!("/api/rooms/{code}")).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("a room summary")
}

#[tokio::test]
async fn a_room_is_joined_at_its_own_path_and_a_hello_to_another_changes_nothing() {
    // One failed lookup is all an address may have: a refusal that counted as one would lock the
    // address out of the rooms it then joins.
    let server = TestServer::with_config(Config {
        max_join_attempts: 1,
        bot_delay_ms: 0,
        ..Config::default()
    })
    .await;
    let first = server.create_room(&room_with(standard_for(4))).await;
    let second = server.create_room(&room_with(standard_for(4))).await;
    assert_eq!(first.ws, format!("/ws/{}", first.code), "where to connect");

    // The host joins at the room's path (Client::join connects to /ws/{code}).
    let mut host = Client::join(server.addr, &second.code, "Asha", Some(&second.host_secret)).await;
    assert_eq!(host.seat(), Some(0));
    host.recv_until_quiet(Duration::from_millis(200)).await;
    let before = summary(&server, &second.code).await;

    // A socket opened for the first room says hello to the second, with its host secret even:
    // refused, echoing the id, and nobody anywhere hears of it.
    let mut stray = Client::connect_to(server.addr, &first.ws).await;
    for id in 1..=3 {
        let message = ClientMessage::from(Hello {
            host_secret: Some(second.host_secret.clone()),
            ..hello(&second.code, "Bina")
        });
        stray.send_with_id(message, id).await;
        let refused = stray.expect_error().await;
        assert_eq!(refused.code, codes::ROOM_MISMATCH, "{refused:?}");
        assert_eq!(refused.id, Some(MessageId::Number(id)));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        summary(&server, &second.code).await,
        before,
        "the room is as it was"
    );
    assert_eq!(
        summary(&server, &first.code).await.free_seats,
        4,
        "and so is the other"
    );
    let before_len = host.received.len();
    host.recv_until_quiet(Duration::from_millis(200)).await;
    assert_eq!(host.received.len(), before_len, "the host heard nothing");

    // The same socket may still join the room it was opened for (failed attempts were not
    // counted, or this would be too_many_attempts), in any case of the code.
    stray.hello(&first.code.to_lowercase(), "Bina").await;
    let welcome = stray.expect_welcome().await;
    assert_eq!(
        (welcome.room.as_str(), welcome.seat),
        (first.code.as_str(), Some(0))
    );
    // The path's code in lower case finds the room too.
    let lower = room_path(&first.code.to_lowercase());
    let mut chandra = Client::connect_to(server.addr, &lower).await;
    chandra.hello(&first.code, "Chandra").await;
    assert_eq!(chandra.expect_welcome().await.seat, Some(1));

    // A seat token from one room cannot be carried into another through a path either.
    let mut carried = Client::connect_to(server.addr, &second.ws).await;
    carried
        .send(ClientMessage::from(Hello {
            token: stray.token(),
            ..hello(&first.code, "Bina")
        }))
        .await;
    assert_eq!(carried.expect_error().await.code, codes::ROOM_MISMATCH);
    server.stop().await;
}

#[tokio::test]
async fn a_code_of_no_room_in_the_path_is_unknown_room_and_ws_still_takes_any_room() {
    let server = TestServer::start().await;
    let room = server.create_room(&room_with(standard_for(3))).await;

    // A code of no room: the upgrade goes ahead, the hello is answered as at /ws.
    let mut nowhere = Client::connect_to(server.addr, &room_path("NOSUCHROOM")).await;
    nowhere.hello("NOSUCHROOM", "Asha").await;
    assert_eq!(nowhere.expect_error().await.code, codes::UNKNOWN_ROOM);
    let mut plain = Client::connect(server.addr).await;
    plain.hello("NOSUCHROOM", "Asha").await;
    assert_eq!(plain.expect_error().await.code, codes::UNKNOWN_ROOM);
    // An empty code is no room's path at all.
    let (status, _) = http::get(server.addr, "/ws/").await;
    assert_eq!(status, 404);

    // /ws, with the code only in the hello, joins as it always has, and a seat taken there comes
    // back through the room's path (and the other way round).
    plain.hello(&room.code, "Asha").await;
    let welcome = plain.expect_welcome().await;
    assert_eq!(welcome.seat, Some(0));
    plain.close().await;
    let mut back = Client::connect_to(server.addr, &room.ws).await;
    back.send(ClientMessage::from(Hello {
        token: welcome.token.clone(),
        ..hello(&room.code, "Asha")
    }))
    .await;
    assert_eq!(back.expect_welcome().await.seat, Some(0));
    let bina = Client::join(server.addr, &room.code, "Bina", None).await;
    let token = bina.token();
    bina.close().await;
    let mut again = Client::connect(server.addr).await;
    again
        .send(ClientMessage::from(Hello {
            token,
            ..hello(&room.code, "Bina")
        }))
        .await;
    assert_eq!(again.expect_welcome_skipping_rooms().await.seat, Some(1));
    // A room's socket that has joined refuses a second hello, as /ws does.
    back.hello(&room.code, "Asha").await;
    assert_eq!(back.expect_error().await.code, codes::ALREADY_JOINED);
    server.stop().await;
}

#[tokio::test]
async fn the_origin_check_guards_the_rooms_path_as_it_guards_ws() {
    let server = TestServer::with_config(Config {
        allowed_origins: vec!["https://friends.example".into()],
        ..Config::default()
    })
    .await;
    let room = server.create_room(&room_with(standard_for(4))).await;
    let from = loopback(3);
    for path in [room.ws.as_str(), "/ws/NOSUCHROOM"] {
        let refused = Client::connect_to_with(
            server.addr,
            path,
            from,
            &[("origin", "https://evil.example")],
        )
        .await;
        let Err((status, body)) = refused else {
            panic!("a foreign origin was let in at {path}");
        };
        assert_eq!(status, 403, "{path}");
        let error: ApiError = serde_json::from_str(&body).expect("an ApiError body");
        assert_eq!(error.code, codes::FORBIDDEN_ORIGIN);
    }
    let own = format!("http://{}", server.addr);
    for (origin, name) in [(own.as_str(), "Asha"), ("https://friends.example", "Bina")] {
        let mut client =
            Client::connect_to_with(server.addr, &room.ws, from, &[("origin", origin)])
                .await
                .unwrap_or_else(|refused| panic!("{origin} was refused: {refused:?}"));
        client.hello(&room.code, name).await;
        client.expect_welcome_skipping_rooms().await;
        assert!(
            client
                .received
                .iter()
                .all(|m| !matches!(m, ServerMessage::Error(_))),
            "{origin}"
        );
    }
    server.stop().await;
}
