//! Each kind of bad input gets its own error, to the sender only, and leaves the game as it was.

use dhumbal_engine::{Card, Phase, SeatView};
use dhumbal_protocol::{
    CLOSE_REPLACED, CLOSE_TOO_BIG, ClientMessage, DrawFrom, Hello, MessageId, ServerMessage, codes,
};
use dhumbal_tests::client::Closed;
use dhumbal_tests::{Client, TestServer};

use crate::common::{room_with, standard_for};
use dhumbal_tests::client::hello;

/// Takes `client`'s seat back on a new connection and returns the new client and the view it
/// is given, which shows the game as it is now.
async fn fresh_view(addr: std::net::SocketAddr, code: &str, client: &Client) -> (Client, SeatView) {
    let mut again = Client::connect(addr).await;
    again
        .send(ClientMessage::from(Hello {
            token: client.token(),
            ..hello(code, "Again")
        }))
        .await;
    let welcome = again.expect_welcome().await;
    assert_eq!(welcome.seat, client.seat());
    let view = again.recv_state_where(|_| true).await;
    (again, view)
}

/// Checks that the next messages `client` receives, up to the first that `until` accepts, are
/// only room updates: nothing that a refused message could have caused.
async fn nothing_but_room_updates_until(
    client: &mut Client,
    until: impl Fn(&ServerMessage) -> bool,
) -> ServerMessage {
    loop {
        let message = client.recv().await;
        if until(&message) {
            return message;
        }
        assert!(
            matches!(message, ServerMessage::Room(_)),
            "a refused message changed something: {message:?}"
        );
    }
}

#[tokio::test]
async fn every_kind_of_bad_input_gets_its_own_error_and_changes_nothing() {
    let server = TestServer::start().await;
    let addr = server.addr;
    let room = server.create_room(&room_with(standard_for(2))).await;
    let code = room.code.as_str();
    let mut host = Client::join(addr, code, "Asha", Some(&room.host_secret)).await;
    let mut guest = Client::join(addr, code, "Bina", None).await;

    // Unknown room.
    let mut stranger = Client::connect(addr).await;
    stranger
        .send_with_id(ClientMessage::from(hello("NOSUCHROOM", "Chandra")), 1)
        .await;
    let error = stranger.expect_error().await;
    assert_eq!(
        (error.code.as_str(), error.id),
        (codes::UNKNOWN_ROOM, Some(MessageId::Number(1)))
    );

    // Full room: both seats are taken.
    stranger
        .send(ClientMessage::from(hello(code, "Chandra")))
        .await;
    assert_eq!(stranger.expect_error().await.code, codes::ROOM_FULL);

    // Anything before hello.
    let mut early = Client::connect(addr).await;
    early.send(ClientMessage::Call).await;
    assert_eq!(early.expect_error().await.code, codes::HELLO_FIRST);

    // A wrong protocol version, a token from nowhere, a wrong host secret.
    early
        .send(ClientMessage::from(Hello {
            protocol: 99,
            ..hello(code, "Chandra")
        }))
        .await;
    assert_eq!(early.expect_error().await.code, codes::UNSUPPORTED_PROTOCOL);
    early
        .send(ClientMessage::from(Hello {
            token: Some("not-a-token".into()),
            ..hello(code, "Chandra")
        }))
        .await;
    assert_eq!(early.expect_error().await.code, codes::BAD_TOKEN);
    early
        .send(ClientMessage::from(Hello {
            host_secret: Some("guess".into()),
            ..hello(code, "Chandra")
        }))
        .await;
    assert_eq!(early.expect_error().await.code, codes::BAD_HOST_SECRET);

    // Malformed JSON and an unknown type, before and after joining.
    early.send_text("{\"type\":").await;
    assert_eq!(early.expect_error().await.code, codes::BAD_MESSAGE);
    guest.send_text("{oops").await;
    nothing_but_room_updates_until(
        &mut guest,
        |m| matches!(m, ServerMessage::Error(e) if e.code == codes::BAD_MESSAGE),
    )
    .await;
    guest.send_text(r#"{"type":"dance","id":"d1"}"#).await;
    let error = guest.expect_error().await;
    assert_eq!(
        (error.code.as_str(), error.id),
        (codes::UNKNOWN_TYPE, Some(MessageId::Text("d1".into())))
    );
    guest.send_text(r#"{"type":"throw","cards":["ZZ"]}"#).await;
    assert_eq!(guest.expect_error().await.code, codes::BAD_MESSAGE);

    // A spectator may watch but not act.
    let mut watcher = Client::connect(addr).await;
    watcher
        .send(ClientMessage::from(Hello {
            spectator: true,
            ..hello(code, "Dev")
        }))
        .await;
    assert_eq!(watcher.expect_welcome().await.seat, None);

    // The non-host cannot start, or change anything in the lobby.
    guest.send_with_id(ClientMessage::Start, 2).await;
    let error = guest.expect_error().await;
    assert_eq!(
        (error.code.as_str(), error.id),
        (codes::NOT_HOST, Some(MessageId::Number(2)))
    );
    guest
        .send(ClientMessage::SetPreset {
            preset: dhumbal_engine::Preset::Household,
        })
        .await;
    assert_eq!(guest.expect_error().await.code, codes::NOT_HOST);
    // Play before the start.
    host.send(ClientMessage::Call).await;
    nothing_but_room_updates_until(
        &mut host,
        |m| matches!(m, ServerMessage::Error(e) if e.code == codes::NOT_STARTED),
    )
    .await;

    host.send(ClientMessage::Start).await;
    let start = host.recv_state_where(|v| v.my_turn()).await;
    assert_eq!(start.seat, Some(0));
    guest.recv_state_where(|v| v.round == 1).await;

    // Already joined.
    host.send(ClientMessage::from(hello(code, "Asha"))).await;
    assert_eq!(host.expect_error().await.code, codes::ALREADY_JOINED);

    // The wrong seat's turn: seat 1 tries to draw while seat 0 is to play.
    guest
        .send_with_id(
            ClientMessage::Draw {
                from: DrawFrom::Stock,
                card: None,
            },
            3,
        )
        .await;
    let error = guest.expect_error().await;
    assert_eq!(
        (error.code.as_str(), error.id),
        (codes::NOT_YOUR_TURN, Some(MessageId::Number(3)))
    );

    // The spectator cannot act either.
    watcher.send(ClientMessage::Call).await;
    assert_eq!(
        watcher.expect_error_skipping_play().await.code,
        codes::NOT_SEATED
    );

    // Throwing before drawing, then an illegal group after drawing.
    let hand = start.hand.clone();
    host.send(ClientMessage::Throw {
        cards: vec![hand[0]],
    })
    .await;
    assert_eq!(host.expect_error().await.code, "must_draw_first");
    host.send(ClientMessage::Draw {
        from: DrawFrom::Stock,
        card: None,
    })
    .await;
    let drawn = host.recv_state_where(|v| v.phase == Phase::Throw).await;
    let first = drawn.hand[0];
    let other_rank: Card = *drawn
        .hand
        .iter()
        .find(|c| c.rank() != first.rank())
        .expect("no hand holds six cards of one rank");
    host.send_with_id(
        ClientMessage::Throw {
            cards: vec![first, other_rank],
        },
        4,
    )
    .await;
    let error = host.expect_error().await;
    assert_eq!(
        (error.code.as_str(), error.id),
        ("illegal_group", Some(MessageId::Number(4)))
    );

    // The game is as it was before the refused messages: a fresh view of both seats shows it.
    let (new_host, view) = fresh_view(addr, code, &host).await;
    assert_eq!(&view, &drawn);
    assert_eq!(
        host.expect_closed().await,
        Closed::Code(CLOSE_REPLACED),
        "the new connection replaced the old"
    );
    let mut host = new_host;
    let guest_before = guest.view().clone();
    let (new_guest, guest_view) = fresh_view(addr, code, &guest).await;
    assert_eq!(guest_view.hand, guest_before.hand);
    assert_eq!(guest_view.phase, Phase::Throw);
    let mut guest = new_guest;

    // The other seat was told nothing about the refusals: its next game news is the legal throw.
    host.send(ClientMessage::Throw { cards: vec![first] }).await;
    let news = nothing_but_room_updates_until(
        &mut guest,
        |m| matches!(m, ServerMessage::State { events, .. } if !events.is_empty()),
    )
    .await;
    let ServerMessage::State { events, view, .. } = news else {
        unreachable!("a state")
    };
    assert!(
        matches!(events[..], [dhumbal_engine::Event::Threw { seat: 0, .. }]),
        "{events:?}"
    );
    assert!(view.my_turn());
    assert_eq!(view.pile_top, Some(first));
    server.stop().await;
}

#[tokio::test]
async fn a_message_over_the_size_cap_closes_the_socket_with_1009() {
    let server = TestServer::start().await;
    let room = server.create_room(&room_with(standard_for(2))).await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let big = format!(r#"{{"type":"call","pad":"{}"}}"#, "x".repeat(17 * 1024));
    host.send_text(&big).await;
    assert_eq!(host.expect_closed().await, Closed::Code(CLOSE_TOO_BIG));
    server.stop().await;
}
