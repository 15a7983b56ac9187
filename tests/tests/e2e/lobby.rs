//! The lobby: seats, bots, presets and the host's powers.

use dhumbal_engine::{Difficulty, Preset};
use dhumbal_protocol::{
    ClientMessage, Hello, PROTOCOL_VERSION, RoomState, SeatKind, ServerMessage, Stage, codes,
};
use dhumbal_tests::{Client, TestServer};

async fn next_room(client: &mut Client) -> RoomState {
    client
        .recv_until(|m| match m {
            ServerMessage::Room(room) => Some(room.clone()),
            _ => None,
        })
        .await
}

#[tokio::test]
async fn the_host_arranges_the_table_and_others_take_seats() {
    let server = TestServer::start().await;
    let room = server.create_room(&Default::default()).await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let first = next_room(&mut host).await;
    assert_eq!(
        (first.host, first.your_seat, first.stage),
        (Some(0), Some(0), Stage::Lobby)
    );
    let mut guest = Client::join(server.addr, &room.code, "Bina", None).await;
    assert_eq!(next_room(&mut guest).await.your_seat, Some(1));

    // The guest moves to seat 3; seat 1 is free again.
    guest.send(ClientMessage::TakeSeat { seat: 3 }).await;
    let moved = next_room(&mut guest).await;
    assert_eq!(moved.your_seat, Some(3));
    assert_eq!(moved.seats[1].kind, SeatKind::Empty);
    guest.send(ClientMessage::TakeSeat { seat: 0 }).await;
    assert_eq!(guest.expect_error().await.code, codes::SEAT_TAKEN);
    guest.send(ClientMessage::TakeSeat { seat: 9 }).await;
    assert_eq!(guest.expect_error().await.code, codes::NO_SUCH_SEAT);

    // The host puts an easy bot in seat 1, then chooses the household preset (five seats).
    host.send(ClientMessage::AddBot {
        seat: 1,
        difficulty: Some(Difficulty::Easy),
    })
    .await;
    let with_bot = host
        .recv_until(|m| match m {
            ServerMessage::Room(r) if r.seats[1].kind == SeatKind::Bot => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(with_bot.seats[1].difficulty, Some(Difficulty::Easy));
    host.send(ClientMessage::AddBot {
        seat: 3,
        difficulty: None,
    })
    .await;
    assert_eq!(host.expect_error().await.code, codes::SEAT_TAKEN);
    host.send(ClientMessage::SetPreset {
        preset: Preset::Household,
    })
    .await;
    let household = host
        .recv_until(|m| match m {
            ServerMessage::Room(r) if r.seats.len() == 5 => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(household.settings, Preset::Household.settings());
    // Three seats would leave the person in seat 3 without a chair.
    let mut three = Preset::Standard.settings();
    three.players = 3;
    host.send(ClientMessage::SetSettings {
        settings: three.clone(),
    })
    .await;
    assert_eq!(host.expect_error().await.code, codes::SEATS_OCCUPIED);
    three.players = 4;
    three.cards = 6;
    host.send(ClientMessage::SetSettings { settings: three })
        .await;
    assert_eq!(host.expect_error().await.code, "bad_cards");

    // The host moves the guest to watching; the guest's view of the room says so.
    host.send(ClientMessage::ClearSeat { seat: 3 }).await;
    let watching = guest
        .recv_until(|m| match m {
            ServerMessage::Room(r) if r.your_seat.is_none() => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(watching.seats[3].kind, SeatKind::Empty);
    host.send(ClientMessage::ClearSeat { seat: 0 }).await;
    assert_eq!(host.expect_error().await.code, codes::OWN_SEAT);

    // A watcher who sits down gets a seat token of its own.
    guest.send(ClientMessage::TakeSeat { seat: 4 }).await;
    let welcome = guest.expect_welcome_skipping_rooms().await;
    assert_eq!(welcome.seat, Some(4));
    assert!(welcome.token.is_some());

    // Start: the empty seats get bots of the table's difficulty; the lobby is closed.
    host.send(ClientMessage::Start).await;
    let started = host
        .recv_until(|m| match m {
            ServerMessage::Room(r) if r.started => Some(r.clone()),
            _ => None,
        })
        .await;
    let kinds: Vec<SeatKind> = started.seats.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            SeatKind::Human,
            SeatKind::Bot,
            SeatKind::Bot,
            SeatKind::Bot,
            SeatKind::Human
        ]
    );
    host.send(ClientMessage::AddBot {
        seat: 1,
        difficulty: None,
    })
    .await;
    assert_eq!(
        host.expect_error_skipping_play().await.code,
        codes::ALREADY_STARTED
    );

    // Nobody new can sit now, but anyone with the code can watch, without a hand.
    let mut late = Client::connect(server.addr).await;
    let hello = Hello {
        protocol: PROTOCOL_VERSION,
        room: room.code.clone(),
        name: "Late".into(),
        token: None,
        spectator: false,
        host_secret: None,
    };
    late.send(ClientMessage::Hello(hello.clone())).await;
    assert_eq!(late.expect_error().await.code, codes::ROOM_FULL);
    late.send(ClientMessage::Hello(Hello {
        spectator: true,
        ..hello
    }))
    .await;
    assert_eq!(late.expect_welcome().await.seat, None);
    let view = late.recv_state_where(|_| true).await;
    assert!(view.seat.is_none() && view.hand.is_empty());
    server.stop().await;
}
