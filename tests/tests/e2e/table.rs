//! A person who is connected but not playing: the turn timer hands a timed-out turn to a
//! stand-in (everyone hears of it; the person is told what it did), and the host hands a seat to
//! a bot or removes a person during the match, after which the match still finishes.

use dhumbal_engine::Settings;
use dhumbal_protocol::{
    CLOSE_REMOVED, ClientMessage, Hello, Notice, PROTOCOL_VERSION, SeatKind, ServerMessage,
    TurnClock, WhileAway, codes,
};
use dhumbal_tests::client::Closed;
use dhumbal_tests::{Client, TestServer};

use crate::common::{play_on_to_the_end, room_where, room_with, standard_for};

/// The next notice `client` receives.
async fn next_notice(client: &mut Client) -> Notice {
    client
        .recv_until(|m| match m {
            ServerMessage::Notice(notice) => Some(notice.clone()),
            _ => None,
        })
        .await
}

/// The clock of the next `state` that has one.
async fn next_clock(client: &mut Client) -> TurnClock {
    client
        .recv_until(|m| match m {
            ServerMessage::State {
                clock: Some(clock), ..
            } => Some(*clock),
            _ => None,
        })
        .await
}

/// How long one second of the turn timer lasts where a turn is only left to run out (a 15-second
/// timer, 4.5 s).
const SECOND_MS: u64 = 300;

#[tokio::test]
async fn a_turn_left_to_run_out_is_played_by_a_stand_in_and_its_person_is_told() {
    let server = TestServer::with_fast_turns(SECOND_MS).await;
    let settings = Settings {
        turn_timer: Some(15),
        ..standard_for(2)
    };
    let room = server.create_room(&room_with(settings)).await;
    let mut asha = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut bina = Client::join(server.addr, &room.code, "Bina", None).await;
    asha.send(ClientMessage::Start).await;
    // Both see the turn's clock, whole or nearly so (15 of the timer's seconds, each
    // `SECOND_MS` long on this server).
    let clock = next_clock(&mut asha).await;
    assert_eq!(next_clock(&mut bina).await.seat, clock.seat);
    assert_eq!(clock.total_ms, 15 * SECOND_MS);
    assert!(
        (10 * SECOND_MS..=15 * SECOND_MS).contains(&clock.left_ms),
        "{clock:?}"
    );
    let (idle, other) = if clock.seat == 0 {
        (&mut asha, &mut bina)
    } else {
        (&mut bina, &mut asha)
    };
    // Nobody moves: the time runs out, and both hear it.
    for client in [&mut *idle, &mut *other] {
        let notice = next_notice(client).await;
        assert_eq!(
            notice,
            Notice::TimedOut {
                seat: clock.seat,
                name: if clock.seat == 0 { "Asha" } else { "Bina" }.into(),
                away: false,
            }
        );
    }
    // A stand-in plays the turn (its states say so); then the person is told what it did, and
    // the other seat's clock starts.
    let summary: WhileAway = idle
        .recv_until(|m| match m {
            ServerMessage::WhileAway(summary) => Some(summary.clone()),
            ServerMessage::State {
                events, stand_in, ..
            } if !events.is_empty() => {
                assert_eq!(*stand_in, Some(clock.seat), "{events:?}");
                None
            }
            _ => None,
        })
        .await;
    assert_eq!(summary.turns, 1);
    assert_eq!(summary.events.len(), 2, "a draw and a throw: {summary:?}");
    let next = next_clock(other).await;
    assert_eq!(next.seat, 1 - clock.seat);
    // The history a newcomer gets marks the stand-in's moves.
    let mut watcher = Client::connect(server.addr).await;
    watcher
        .send(ClientMessage::from(Hello {
            spectator: true,
            ..dhumbal_tests::client::hello(&room.code, "Dev")
        }))
        .await;
    let marks = watcher
        .recv_until(|m| match m {
            ServerMessage::History { stand_in, .. } => Some(stand_in.clone()),
            _ => None,
        })
        .await;
    assert_eq!(
        marks,
        [1, 2],
        "the deal is not the stand-in's; its draw and throw are"
    );
}

#[tokio::test]
async fn the_host_hands_a_seat_to_a_bot_and_removes_a_person_and_the_match_goes_on() {
    let server = TestServer::start().await;
    let room = server.create_room(&room_with(standard_for(3))).await;
    let mut asha = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut bina = Client::join(server.addr, &room.code, "Bina", None).await;
    let mut chandra = Client::join(server.addr, &room.code, "Chandra", None).await;
    // Only the host, only during the match.
    asha.send(ClientMessage::HandToBot { seat: 1 }).await;
    assert_eq!(asha.expect_error().await.code, codes::NOT_STARTED);
    asha.send(ClientMessage::Start).await;
    room_where(&mut asha, |r| r.started).await;
    bina.send(ClientMessage::HandToBot { seat: 2 }).await;
    assert_eq!(
        bina.expect_error_skipping_play().await.code,
        codes::NOT_HOST
    );
    bina.send(ClientMessage::Back).await;
    assert_eq!(
        bina.expect_error_skipping_play().await.code,
        codes::NOT_AWAY
    );

    // Bina's seat goes to a bot: everyone hears it and sees her away.
    asha.send(ClientMessage::HandToBot { seat: 1 }).await;
    for client in [&mut asha, &mut bina, &mut chandra] {
        assert_eq!(
            next_notice(client).await,
            Notice::HandedToBot {
                seat: 1,
                name: "Bina".into()
            }
        );
    }
    let away = room_where(&mut chandra, |r| r.seats[1].away).await;
    assert!(away.seats[1].stand_in.is_some());
    // She is back.
    bina.send(ClientMessage::Back).await;
    for client in [&mut asha, &mut bina] {
        assert_eq!(
            next_notice(client).await,
            Notice::Back {
                seat: 1,
                name: "Bina".into()
            }
        );
    }
    room_where(&mut asha, |r| !r.seats[1].away).await;

    // Chandra is removed: told, closed, and a bot plays her seat; everyone hears it.
    let token = chandra.token().expect("a seat token");
    asha.send(ClientMessage::ClearSeat { seat: 2 }).await;
    let bye = chandra
        .recv_until(|m| match m {
            ServerMessage::Bye(bye) => Some(bye.clone()),
            _ => None,
        })
        .await;
    assert_eq!(bye.reason, codes::REMOVED);
    assert_eq!(chandra.expect_closed().await, Closed::Code(CLOSE_REMOVED));
    assert_eq!(
        next_notice(&mut bina).await,
        Notice::Removed {
            seat: 2,
            name: "Chandra".into()
        }
    );
    let after = room_where(&mut asha, |r| r.seats[2].kind == SeatKind::Bot).await;
    assert_eq!(after.removed, ["Chandra"]);
    let mut again = Client::connect(server.addr).await;
    again
        .send(ClientMessage::from(Hello {
            protocol: PROTOCOL_VERSION,
            token: Some(token),
            ..dhumbal_tests::client::hello(&room.code, "Chandra")
        }))
        .await;
    assert_eq!(again.expect_error().await.code, codes::REMOVED);

    // The two people play on with the bot to the end of the match.
    let (a, b) = tokio::join!(play_on_to_the_end(asha, 1), play_on_to_the_end(bina, 2));
    assert_eq!(a.1, b.1);
    assert_eq!(a.1.standings.len(), 3);
}

#[tokio::test]
async fn after_a_match_the_host_takes_the_same_table_back_to_the_lobby_and_starts_again() {
    let server = TestServer::start().await;
    let settings = Settings {
        rounds: dhumbal_engine::Rounds::Fixed(1),
        ..standard_for(3)
    };
    let room = server.create_room(&room_with(settings.clone())).await;
    let mut asha = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let bina = Client::join(server.addr, &room.code, "Bina", None).await;
    // Not during a match, and never from a guest.
    asha.send(ClientMessage::ToLobby).await;
    assert_eq!(asha.expect_error().await.code, codes::MATCH_NOT_OVER);
    asha.send(ClientMessage::Start).await;
    let ((mut asha, _), (mut bina, _)) =
        tokio::join!(play_on_to_the_end(asha, 3), play_on_to_the_end(bina, 4));
    bina.send(ClientMessage::ToLobby).await;
    assert_eq!(bina.expect_error().await.code, codes::NOT_HOST);
    asha.send(ClientMessage::ToLobby).await;
    let lobby = room_where(&mut bina, |r| r.stage == dhumbal_protocol::Stage::Lobby).await;
    assert!(!lobby.started);
    let names: Vec<_> = lobby.seats.iter().map(|s| s.name.clone()).collect();
    assert_eq!(names[..2], [Some("Asha".into()), Some("Bina".into())]);
    // The host changes the settings there, and starts the next match: number 2.
    asha.send(ClientMessage::SetSettings {
        settings: Settings {
            turn_timer: Some(60),
            ..settings
        }
        .into(),
    })
    .await;
    room_where(&mut asha, |r| r.settings.turn_timer == Some(60)).await;
    // A preset sets the rules; the table keeps its timer.
    asha.send(ClientMessage::SetPreset {
        preset: dhumbal_engine::Preset::Yaniv,
    })
    .await;
    let yaniv = room_where(&mut asha, |r| r.settings.call_limit == Some(7)).await;
    assert_eq!(yaniv.settings.turn_timer, Some(60));
    asha.send(ClientMessage::Start).await;
    let started = room_where(&mut bina, |r| r.started).await;
    assert_eq!(started.fairness.map(|f| f.match_number), Some(2));
}

/// Expert bots think on the blocking pool, and each choice comes back to the room as an input:
/// a person plays a whole match with three of them, on a multi-threaded runtime as in the
/// server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_plays_a_match_with_three_thinking_experts() {
    let server = TestServer::start().await;
    let settings = Settings {
        difficulty: dhumbal_engine::Difficulty::Expert,
        rounds: dhumbal_engine::Rounds::Fixed(2),
        ..standard_for(4)
    };
    let room = server.create_room(&room_with(settings)).await;
    let mut asha = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    asha.send(ClientMessage::Start).await;
    let (_, result) = play_on_to_the_end(asha, 5).await;
    assert_eq!(result.standings.len(), 4);
    assert_eq!(result.results.len(), 2);
}
