//! Protocol 5 over real sockets: after the first whole view every change comes as a `patch`, the
//! views the clients rebuild agree with each other and with a watcher's, a person who comes back
//! gets the whole view first, `resync` sends it again, `ping` is answered with `pong` (and counted
//! against the rate), and a page that speaks protocol 4 is refused.

use dhumbal_engine::{Event, Phase, SeatView};
use dhumbal_protocol::{ClientMessage, CreateRoom, Hello, PROTOCOL_VERSION, ServerMessage, codes};
use dhumbal_tests::{Client, TestServer};

use crate::common::{play_on_to_the_end, room_with, standard_for};

/// A view with its seat's own fields cleared: what every seat and a watcher share.
fn shared(view: &SeatView) -> SeatView {
    SeatView {
        seat: None,
        hand: Vec::new(),
        hand_total: 0,
        hand_values: Vec::new(),
        takeable: Vec::new(),
        can_call: false,
        can_draw: false,
        can_throw: false,
        ..view.clone()
    }
}

/// Whole `state`s among what `client` received (each `patch` is handed on as a `state` too).
fn whole_states(client: &Client) -> usize {
    let states = client
        .received
        .iter()
        .filter(|m| matches!(m, ServerMessage::State { .. }))
        .count();
    states - client.patches
}

/// A watcher of `code`, once its first view has come.
async fn watcher(server: &TestServer, code: &str) -> Client {
    let mut dev = Client::connect(server.addr).await;
    dev.send(ClientMessage::from(Hello {
        spectator: true,
        ..dhumbal_tests::client::hello(code, "Dev")
    }))
    .await;
    dev.recv_state_where(|_| true).await;
    dev
}

/// Two people, two bots and a watcher play a whole match through real sockets: each client
/// gets one whole view and then only patches; every view they rebuild agrees with the watcher's
/// at the end; Bina goes away mid-match and comes back with her token to the whole view (then
/// patches again). Prints the bytes each client received per action.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_is_told_in_patches_and_a_returning_person_gets_the_whole_view_first() {
    let server = TestServer::start().await;
    let room = server.create_room(&room_with(standard_for(4))).await;
    let mut asha = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut bina = Client::join(server.addr, &room.code, "Bina", None).await;
    asha.send(ClientMessage::Start).await;
    asha.recv_state_where(|_| true).await;
    let first = bina.recv_state_where(|_| true).await;
    let mut dev = watcher(&server, &room.code).await;

    // Bina plays a little, goes away and comes back: the whole view first, then patches.
    let asha_task = tokio::spawn(play_on_to_the_end(asha, 1));
    let token = bina.token().expect("a seat token");
    let mut seen = 0;
    while seen < 6 {
        let view = bina.recv_state_where(|_| true).await;
        if view.round != first.round || view.phase == Phase::RoundOver {
            break;
        }
        seen += 1;
        if view.my_turn() {
            let mut rng = rand::rng();
            bina.send(dhumbal_tests::random_action(&view, &mut rng))
                .await;
        }
    }
    assert_eq!(whole_states(&bina), 1, "one whole view, then patches");
    bina.close().await;
    let mut bina = Client::connect(server.addr).await;
    bina.send(ClientMessage::from(Hello {
        token: Some(token),
        ..dhumbal_tests::client::hello(&room.code, "Bina")
    }))
    .await;
    bina.expect_welcome_skipping_rooms().await;
    let history_then_state = bina
        .recv_until(|m| match m {
            ServerMessage::History { .. } => Some(true),
            ServerMessage::State { .. } => Some(false),
            _ => None,
        })
        .await;
    assert!(history_then_state, "the history before the view");
    bina.recv_state_where(|_| true).await;
    assert_eq!(bina.patches, 0, "the whole view first");
    let bina_task = tokio::spawn(play_on_to_the_end(bina, 2));
    let dev_task = tokio::spawn(async move {
        loop {
            if let ServerMessage::MatchResult(_) = dev.recv().await {
                return dev;
            }
        }
    });
    let (asha, _) = asha_task.await.unwrap();
    let (bina, _) = bina_task.await.unwrap();
    let dev = dev_task.await.unwrap();

    for (name, client) in [("Asha", &asha), ("Bina", &bina), ("Dev", &dev)] {
        assert_eq!(
            whole_states(client),
            1,
            "{name}: one whole view, then patches"
        );
        assert!(client.patches > 50, "{name}: {} patches", client.patches);
    }
    let end = shared(dev.view());
    assert_eq!(end.phase, Phase::MatchOver);
    assert_eq!(shared(asha.view()), end, "Asha's rebuilt view");
    assert_eq!(shared(bina.view()), end, "Bina's rebuilt view");
    assert_eq!(asha.view().seat, Some(0));
    assert_eq!(asha.view().hand.len(), asha.view().card_counts[0]);

    // Per action: every draw, pick-up, throw and call the watcher heard of, the whole match.
    let actions = dev
        .received
        .iter()
        .flat_map(|m| match m {
            ServerMessage::State { events, .. } => events.as_slice(),
            _ => &[],
        })
        .filter(|e| {
            matches!(
                e,
                Event::DrewFromStock { .. }
                    | Event::TookFromPile { .. }
                    | Event::Threw { .. }
                    | Event::Called { .. }
            )
        })
        .count();
    println!(
        "standard table, 2 people + 2 bots + a watcher, one match: {actions} actions; bytes per \
         action: Asha {:.0}, Dev {:.0} (everything each received, from welcome to match_result)",
        asha.bytes as f64 / actions as f64,
        dev.bytes as f64 / actions as f64,
    );
    server.stop().await;
}

/// `ping` is answered with `pong` carrying its `id`, before and after `hello`, in order with
/// everything else; it counts against the message rate like any message.
#[tokio::test]
async fn a_ping_is_answered_with_its_id_and_counted_against_the_rate() {
    let server = TestServer::with_config(dhumbal_server::Config {
        message_burst: 10,
        messages_per_sec: 1,
        rate_limit_strikes: 50,
        ..dhumbal_server::Config::default()
    })
    .await;
    let room = server.create_room(&CreateRoom::default()).await;
    let mut client = Client::connect(server.addr).await;
    client.send_with_id(ClientMessage::Ping, 7).await;
    match client.recv().await {
        ServerMessage::Pong { id } => {
            assert_eq!(id, Some(dhumbal_protocol::MessageId::Number(7)));
        }
        other => panic!("expected a pong, got {other:?}"),
    }
    client
        .send(ClientMessage::from(dhumbal_tests::client::hello(
            &room.code, "Asha",
        )))
        .await;
    client.expect_welcome().await;
    client.send_text(r#"{"type":"ping","id":"p1"}"#).await;
    client
        .recv_until(|m| match m {
            ServerMessage::Pong { id } => {
                assert_eq!(*id, Some(dhumbal_protocol::MessageId::Text("p1".into())));
                Some(())
            }
            _ => None,
        })
        .await;
    // A flood of pings meets the rate limit.
    for _ in 0..20 {
        client.send(ClientMessage::Ping).await;
    }
    let limited = client
        .recv_until(|m| match m {
            ServerMessage::Error(e) => Some(e.code.clone()),
            _ => None,
        })
        .await;
    assert_eq!(limited, codes::RATE_LIMITED);
    server.stop().await;
}

/// `resync` in a match sends the history and the whole view again, of the version the last
/// patch made; in the lobby it sends nothing. A page of protocol 4 (whole views, no patches) is
/// told it speaks an unsupported protocol.
#[tokio::test]
async fn resync_sends_the_whole_view_again_and_an_old_page_is_refused() {
    let server = TestServer::start().await;
    let room = server
        .create_room(&room_with(dhumbal_engine::Settings {
            rounds: dhumbal_engine::Rounds::Fixed(1),
            ..standard_for(2)
        }))
        .await;
    let mut asha = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    // In the lobby there is no view to send: the pong after it is the next message.
    asha.send(ClientMessage::Resync).await;
    asha.send(ClientMessage::Ping).await;
    loop {
        match asha.recv().await {
            ServerMessage::Pong { .. } => break,
            ServerMessage::Room(_) => {}
            other => panic!("nothing but the room and the pong, got {other:?}"),
        }
    }
    asha.send(ClientMessage::Start).await;
    let view = asha.recv_state_where(|v| v.my_turn()).await;
    asha.send(dhumbal_tests::random_action(&view, &mut rand::rng()))
        .await;
    asha.recv_state_where(|v| !v.can_draw).await;
    let held = asha.held.clone();
    let patches = asha.patches;
    asha.send(ClientMessage::Resync).await;
    asha.recv_until(|m| matches!(m, ServerMessage::History { .. }).then_some(()))
        .await;
    let again = asha
        .recv_until(|m| match m {
            ServerMessage::State { v, view, .. } => Some((*v, (**view).clone())),
            _ => None,
        })
        .await;
    assert_eq!(asha.patches, patches, "a whole view, not a patch");
    assert_eq!(again.0, held.v, "the same version");
    assert_eq!(Some(again.1), held.view, "the same view");
    let (_, result) = play_on_to_the_end(asha, 3).await;
    assert_eq!(result.results.len(), 1);

    let mut old = Client::connect(server.addr).await;
    old.send(ClientMessage::from(Hello {
        protocol: PROTOCOL_VERSION - 1,
        ..dhumbal_tests::client::hello(&room.code, "Chandra")
    }))
    .await;
    assert_eq!(old.expect_error().await.code, codes::UNSUPPORTED_PROTOCOL);
    server.stop().await;
}
