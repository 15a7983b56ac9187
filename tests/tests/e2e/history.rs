//! The history (the round's log and the match's results): a `state` never carries it; a client
//! arriving in a started match gets it whole in `history`, and a client that follows the
//! messages keeps exactly the same history as one that arrives later.

use dhumbal_engine::{Phase, Rounds, Settings};
use dhumbal_protocol::{ClientMessage, Hello, PROTOCOL_VERSION, ServerMessage};
use dhumbal_tests::{Client, TestServer, random_action};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::common::{room_with, standard_for};

/// Receives until this client's next `state`, returning it.
async fn next_state(client: &mut Client) -> dhumbal_engine::SeatView {
    client.recv_state_where(|_| true).await
}

/// A spectator that arrives now: it must get `welcome`, then (skipping room updates) `history`
/// right before its first `state`. Returns it once that state has arrived.
async fn arrive(server: &TestServer, code: &str) -> Client {
    let mut watcher = Client::connect(server.addr).await;
    watcher
        .send(ClientMessage::from(Hello {
            protocol: PROTOCOL_VERSION,
            room: code.into(),
            name: "Dev".into(),
            token: None,
            spectator: true,
            host_secret: None,
            client_seed: None,
        }))
        .await;
    watcher.expect_welcome().await;
    loop {
        match watcher.recv().await {
            ServerMessage::Room(_) => {}
            ServerMessage::History { .. } => break,
            other => panic!("expected the history before the first state, got {other:?}"),
        }
    }
    match watcher.recv().await {
        ServerMessage::State { .. } => {}
        other => panic!("expected a state right after the history, got {other:?}"),
    }
    watcher
}

/// Two people play two whole matches (a rematch between them) by turns, at a table of two, with
/// nothing else moving; at many points a spectator arrives, and the history it is sent is
/// exactly the history each player has kept from the events and results.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_arrival_gets_the_same_history_the_players_kept() {
    let server = TestServer::start().await;
    let settings = Settings {
        rounds: Rounds::Fixed(2),
        ..standard_for(2)
    };
    let room = server.create_room(&room_with(settings)).await;
    let host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let guest = Client::join(server.addr, &room.code, "Bina", None).await;
    let mut players = [host, guest];
    players[0].send(ClientMessage::Start).await;
    for player in &mut players {
        next_state(player).await;
    }
    let mut rng = StdRng::seed_from_u64(11);
    let (mut checked, mut matches) = (0, 0);
    let mut rematched = false;
    for step in 0..5_000 {
        let view = players[0].view().clone();
        if step % 13 == 0 || matches!(view.phase, Phase::RoundOver | Phase::MatchOver) {
            // Both players have every message of this change; nothing moves until they act.
            let watcher = arrive(&server, &room.code).await;
            assert_eq!(watcher.history, players[0].history, "step {step}");
            assert_eq!(watcher.history, players[1].history, "step {step}");
            assert_eq!(watcher.history.log, players[0].history.log);
            assert_eq!(watcher.history.results, players[0].history.results);
            watcher.close().await;
            checked += 1;
        }
        match view.phase {
            Phase::RoundOver => {
                for player in &mut players {
                    player
                        .send(ClientMessage::Ready { client_seed: None })
                        .await;
                }
            }
            Phase::MatchOver => {
                matches += 1;
                // The match's result follows the state that ends it.
                for player in &mut players {
                    let result = player
                        .recv_until(|m| match m {
                            ServerMessage::MatchResult(result) => Some(result.clone()),
                            _ => None,
                        })
                        .await;
                    assert_eq!(player.history.results, result.results);
                }
                if matches == 2 {
                    break;
                }
                for player in &mut players {
                    player
                        .send(ClientMessage::Rematch { client_seed: None })
                        .await;
                }
                rematched = true;
            }
            _ => {
                let seat = view.turn;
                let action = random_action(players[seat].view(), &mut rng);
                players[seat].send(action).await;
            }
        }
        for player in &mut players {
            next_state(player).await;
        }
        if std::mem::take(&mut rematched) {
            // The rematch's first deal started a new match: no results, a log of one deal.
            assert_eq!(players[0].view().round, 1);
            assert!(players[0].history.results.is_empty());
            assert_eq!(players[0].history.log.len(), 1);
        }
    }
    assert_eq!(matches, 2, "two matches were played");
    assert!(checked > 20, "only {checked} arrivals were checked");
}
