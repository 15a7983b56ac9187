//! Whole matches over real sockets.

use dhumbal_engine::{Card, Difficulty, Event, Preset, full_deck, shuffle::shuffle};
use dhumbal_protocol::{ClientMessage, CreateRoom, SeatKind, ServerMessage, Stage};
use dhumbal_tests::{Client, TestServer};
use tokio::task::JoinSet;

use crate::common::play_to_the_end;

/// The `pile_top` of every `dealt` event a client received, in order.
fn dealt_pile_tops(client: &Client) -> Vec<Card> {
    client
        .events()
        .filter_map(|e| match e {
            Event::Dealt { pile_top, .. } => Some(*pile_top),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_and_two_bots_play_a_whole_match() {
    let server = TestServer::start().await;
    let room = server
        .create_room(&CreateRoom {
            preset: Some(Preset::Standard),
            ..CreateRoom::default()
        })
        .await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let guest = Client::join(server.addr, &room.code, "Bina", None).await;
    assert_eq!(host.seat(), Some(0));
    assert_eq!(guest.seat(), Some(1));
    assert!(host.welcome.as_ref().unwrap().host);
    assert!(!guest.welcome.as_ref().unwrap().host);

    host.send(ClientMessage::AddBot {
        seat: 2,
        difficulty: Some(Difficulty::Hard),
    })
    .await;
    host.send(ClientMessage::Start).await;
    let ((host, result), (guest, guest_result)) =
        tokio::join!(play_to_the_end(host, 1), play_to_the_end(guest, 2));

    // Both people saw the same end: three rounds, standings, and the seeds.
    assert_eq!(result, guest_result);
    assert_eq!(result.results.len(), 3);
    assert_eq!(result.standings.len(), 4);
    assert_eq!(result.seeds.len(), 3);
    let totals: i64 = result.results[2].total.iter().sum();
    assert_eq!(totals, 0, "settlement sums to zero");

    // The revealed seeds are the real ones: each deals the pile card every seat saw turned up.
    let pile_tops = dealt_pile_tops(&host);
    assert_eq!(pile_tops.len(), 3);
    for (seed, pile_top) in result.seeds.iter().zip(&pile_tops) {
        let bytes: Vec<u8> = (0..32)
            .map(|i| u8::from_str_radix(&seed[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let mut deck = full_deck(false);
        shuffle(&mut deck, &bytes.try_into().unwrap(), 0);
        assert_eq!(deck[20], *pile_top, "4 seats × 5 cards, then the pile card");
    }

    // The room says the match is over; the bots the host chose and the one the start added are
    // in their seats.
    let mut host = host;
    let room = host
        .recv_until(|m| match m {
            ServerMessage::Room(room) if room.stage == Stage::MatchOver => Some(room.clone()),
            _ => None,
        })
        .await;
    let seats = &room.seats;
    let kinds: Vec<SeatKind> = seats.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            SeatKind::Human,
            SeatKind::Human,
            SeatKind::Bot,
            SeatKind::Bot
        ]
    );
    assert_eq!(seats[2].difficulty, Some(Difficulty::Hard));
    assert_eq!(seats[3].difficulty, Some(Difficulty::Medium));

    // Every frame was scanned for leaks (the scan panics on one).
    assert!(host.leaks.frames > 50 && guest.leaks.frames > 50);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_rooms_play_whole_matches_at_once() {
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut rooms = JoinSet::new();
    for i in 0..50u64 {
        let room = server.create_room(&CreateRoom::default()).await;
        rooms.spawn(async move {
            let mut host = Client::join(addr, &room.code, "Host", Some(&room.host_secret)).await;
            host.send(ClientMessage::Start).await;
            let (_, result) = play_to_the_end(host, i).await;
            result
        });
    }
    let mut finished = 0;
    while let Some(result) = rooms.join_next().await {
        let result = result.expect("a room's player did not panic");
        assert_eq!(result.results.len(), 3);
        assert_eq!(result.standings.len(), 4);
        finished += 1;
    }
    assert_eq!(finished, 50);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rematch_starts_a_new_match_in_the_same_room() {
    let server = TestServer::start().await;
    let room = server
        .create_room(&crate::common::room_with(dhumbal_engine::Settings {
            rounds: dhumbal_engine::Rounds::Fixed(1),
            ..crate::common::standard_for(2)
        }))
        .await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    host.send(ClientMessage::Start).await;
    let (mut host, first) = play_to_the_end(host, 7).await;
    assert_eq!(first.results.len(), 1);
    host.send(ClientMessage::Rematch { client_seed: None })
        .await;
    // The room goes back to playing; the new match's first deal follows.
    host.recv_until(|m| match m {
        ServerMessage::Room(room) if room.stage == Stage::Playing => Some(()),
        _ => None,
    })
    .await;
    let (_, second) = play_to_the_end(host, 8).await;
    assert_eq!(second.results.len(), 1);
    assert_eq!(
        second.results[0].round, 1,
        "the new match counts its rounds afresh"
    );
    assert_ne!(first.seeds, second.seeds, "a new match is a new shuffle");
    server.stop().await;
}

/// Every action reaches each client as exactly one frame (a `state` carrying the action's
/// events), and a page that speaks protocol 2 (separate `event` frames) is told to reload.
#[tokio::test]
async fn an_action_costs_each_client_one_frame_and_an_old_page_is_refused() {
    let server = TestServer::start().await;
    let room = server
        .create_room(&CreateRoom {
            preset: Some(Preset::Standard),
            ..CreateRoom::default()
        })
        .await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut guest = Client::join(server.addr, &room.code, "Bina", None).await;
    for seat in 2..4 {
        host.send(ClientMessage::AddBot {
            seat,
            difficulty: Some(Difficulty::Easy),
        })
        .await;
    }
    host.send(ClientMessage::Start).await;
    let start = host.recv_state_where(|v| v.my_turn()).await;
    guest.recv_state_where(|v| v.round == 1).await;
    let quiet = std::time::Duration::from_millis(300);
    host.recv_until_quiet(quiet).await;
    guest.recv_until_quiet(quiet).await;
    let before = (host.received.len(), guest.received.len());
    host.send(ClientMessage::Draw {
        from: dhumbal_protocol::DrawFrom::Stock,
        card: None,
    })
    .await;
    host.recv_until_quiet(quiet).await;
    guest.recv_until_quiet(quiet).await;
    for (client, from) in [(&host, before.0), (&guest, before.1)] {
        let frames = &client.received[from..];
        assert_eq!(frames.len(), 1, "{frames:?}");
        let ServerMessage::State { events, view, .. } = &frames[0] else {
            panic!("not a state: {frames:?}");
        };
        assert!(
            matches!(events[..], [Event::DrewFromStock { seat: 0 }]),
            "{events:?}"
        );
        assert_eq!(view.phase, dhumbal_engine::Phase::Throw);
    }
    assert_eq!(host.view().hand.len(), start.hand.len() + 1);

    let mut old = Client::connect(server.addr).await;
    old.send(ClientMessage::from(dhumbal_protocol::Hello {
        protocol: 2,
        ..dhumbal_tests::client::hello(&room.code, "Chandra")
    }))
    .await;
    assert_eq!(
        old.expect_error().await.code,
        dhumbal_protocol::codes::UNSUPPORTED_PROTOCOL
    );
    server.stop().await;
}
