//! Dropped connections, stand-in bots for away people, and spectators. The tests of the grace
//! period run on paused tokio time, so the 30 seconds pass at once, guarded by a [`Watchdog`].

use std::time::Duration;

use dhumbal_engine::{Difficulty, Event, Phase};
use dhumbal_protocol::{
    CLOSE_REPLACED, ClientMessage, CreateRoom, DrawFrom, Hello, PROTOCOL_VERSION, ServerMessage,
    codes,
};
use dhumbal_server::Config;
use dhumbal_tests::client::Closed;
use dhumbal_tests::{Client, TestServer, Watchdog};
use tokio::time::Instant;

use crate::common::{deck_starting, room_where, room_with, standard_for};

fn draw_stock() -> ClientMessage {
    ClientMessage::Draw {
        from: DrawFrom::Stock,
        card: None,
    }
}

const GRACE: Duration = Duration::from_secs(30);

/// How long a paused-time test may run, in real time, before the watchdog ends it.
const LIMIT: Duration = Duration::from_secs(120);

async fn server_with_grace(grace: Duration) -> TestServer {
    TestServer::with_config(Config {
        bot_delay_ms: 0,
        takeover_after: grace,
        allow_test_decks: true,
        ..Config::default()
    })
    .await
}

/// Opens a new connection presenting `token`, expecting the welcome back to `seat`.
async fn come_back(server: &TestServer, code: &str, token: Option<String>, seat: usize) -> Client {
    let mut client = Client::connect(server.addr).await;
    client
        .send(ClientMessage::from(Hello {
            protocol: PROTOCOL_VERSION,
            room: code.into(),
            name: "Back".into(),
            token,
            spectator: false,
            host_secret: None,
            client_seed: None,
        }))
        .await;
    assert_eq!(client.expect_welcome().await.seat, Some(seat));
    client
}

#[tokio::test]
async fn a_dropped_player_comes_back_mid_turn_to_the_same_state() {
    // A grace period longer than any test: no bot steps in here.
    let server = server_with_grace(Duration::from_secs(24 * 3600)).await;
    let room = server.create_room(&room_with(standard_for(2))).await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut guest = Client::join(server.addr, &room.code, "Bina", None).await;
    host.send(ClientMessage::Start).await;
    host.recv_state_where(|v| v.my_turn()).await;
    host.send(ClientMessage::Draw {
        from: DrawFrom::Stock,
        card: None,
    })
    .await;
    let before = host.recv_state_where(|v| v.phase == Phase::Throw).await;
    let had = host.history.clone();
    let token = host.token();

    // The connection drops mid-turn; the other seat sees it marked away.
    host.close().await;
    room_where(&mut guest, |r| !r.seats[0].connected).await;

    // Back on a new connection with the token: the same seat, the same state, the round's log.
    let mut host = come_back(&server, &room.code, token.clone(), 0).await;
    let after = host.recv_state_where(|_| true).await;
    assert_eq!(after, before);
    assert_eq!(
        (&host.history.log, &host.history.results),
        (&had.log, &had.results)
    );
    assert!(
        host.history
            .log
            .iter()
            .any(|e| matches!(e, Event::DrewFromStock { seat: 0 }))
    );
    room_where(&mut guest, |r| r.seats[0].connected).await;

    // A second connection with the same token replaces the first, which is told why.
    let mut again = come_back(&server, &room.code, token, 0).await;
    assert_eq!(again.recv_state_where(|_| true).await, before);
    assert_eq!(host.expect_closed().await, Closed::Code(CLOSE_REPLACED));

    // And the turn goes on from where it was.
    again
        .send(ClientMessage::Throw {
            cards: vec![before.hand[0]],
        })
        .await;
    let view = guest.recv_state_where(|v| v.my_turn()).await;
    assert_eq!(view.pile_top, Some(before.hand[0]));
    server.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_bot_plays_an_away_persons_turn_after_the_grace_period_and_hands_it_back() {
    let _watchdog = Watchdog::start("a_bot_plays_an_away_persons_turn…", LIMIT);
    let server = server_with_grace(GRACE).await;
    // Heavy hands, so that nobody can call in the turns this test plays:
    //   seat 0: KS KH KD KC QS   seat 1: QH QD QC JS JH; the pile 10S; the stock AS 2S 3S …
    let room = server
        .create_room(&CreateRoom {
            settings: Some(standard_for(2)),
            decks: Some(vec![deck_starting("KS QH KH QD KD QC KC JS QS JH 10S")]),
            ..CreateRoom::default()
        })
        .await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let guest = Client::join(server.addr, &room.code, "Bina", None).await;
    let token = guest.token();
    host.send(ClientMessage::Start).await;
    guest.close().await;
    room_where(&mut host, |r| !r.seats[1].connected).await;

    // The host plays; then the away guest's turn waits out the grace period, and a bot of the
    // table's difficulty plays it, shown to everyone as such.
    let start = host.recv_state_where(|v| v.my_turn()).await;
    host.send(draw_stock()).await;
    host.recv_state_where(|v| v.phase == Phase::Throw).await;
    let waiting = Instant::now();
    host.send(ClientMessage::Throw {
        cards: vec![start.hand[0]],
    })
    .await;
    let taken = room_where(&mut host, |r| r.seats[1].stand_in.is_some()).await;
    assert!(
        waiting.elapsed() >= GRACE,
        "the bot came before the grace period"
    );
    assert_eq!(taken.seats[1].stand_in, Some(Difficulty::Medium));
    assert!(!taken.seats[1].connected);
    // The stand-in's throw comes with the host's view of its turn.
    let view = host
        .recv_until(|m| match m {
            ServerMessage::State { events, view, .. }
                if events
                    .iter()
                    .any(|e| matches!(e, Event::Threw { seat: 1, .. })) =>
            {
                Some((**view).clone())
            }
            _ => None,
        })
        .await;
    assert!(view.my_turn());

    // The guest comes back while it is the host's turn: the seat is theirs again at once.
    let mut guest = come_back(&server, &room.code, token, 1).await;
    let back = room_where(&mut guest, |r| r.seats[1].connected).await;
    if back.seats[1].stand_in.is_some() {
        room_where(&mut guest, |r| r.seats[1].stand_in.is_none()).await;
    }

    // The host plays again; then it is the guest's turn, and the guest plays it, not a bot.
    host.send(draw_stock()).await;
    host.recv_state_where(|v| v.phase == Phase::Throw).await;
    host.send(ClientMessage::Throw {
        cards: vec![view.hand[0]],
    })
    .await;
    let mine = guest.recv_state_where(|v| v.my_turn()).await;
    assert_eq!(mine.phase, Phase::Start);
    guest.send(draw_stock()).await;
    let drawn = guest.recv_state_where(|v| v.phase == Phase::Throw).await;
    assert_eq!(drawn.turn, 1);
    assert_eq!(drawn.hand.len(), mine.hand.len() + 1);
    server.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_match_whose_people_all_left_still_ends_and_a_spectator_sees_no_hand() {
    let _watchdog = Watchdog::start("a_match_whose_people_all_left…", LIMIT);
    let server = server_with_grace(GRACE).await;
    let room = server.create_room(&Default::default()).await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let guest = Client::join(server.addr, &room.code, "Bina", None).await;
    let mut watcher = Client::connect(server.addr).await;
    watcher
        .send(ClientMessage::from(Hello {
            protocol: PROTOCOL_VERSION,
            room: room.code.clone(),
            name: "Dev".into(),
            token: None,
            spectator: true,
            host_secret: None,
            client_seed: None,
        }))
        .await;
    assert_eq!(watcher.expect_welcome().await.seat, None);
    host.send(ClientMessage::Start).await;
    host.recv_state_where(|_| true).await;
    host.close().await;
    guest.close().await;

    // Nobody is left to play or to say ready: stand-ins play every person's turn.
    let result = watcher
        .recv_until(|m| match m {
            ServerMessage::MatchResult(result) => Some(result.clone()),
            _ => None,
        })
        .await;
    assert_eq!(result.results.len(), 3);
    // The spectator was never shown a hand (the leak scan checked every frame, too).
    let states: Vec<_> = watcher
        .received
        .iter()
        .filter_map(|m| match m {
            ServerMessage::State { view, .. } => Some(view),
            _ => None,
        })
        .collect();
    assert!(!states.is_empty());
    assert!(states.iter().all(|v| v.seat.is_none() && v.hand.is_empty()));
    // Nor can it act.
    watcher
        .send(ClientMessage::Rematch { client_seed: None })
        .await;
    assert_eq!(
        watcher.expect_error_skipping_play().await.code,
        codes::NOT_SEATED
    );
    server.stop().await;
}
