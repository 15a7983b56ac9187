//! Provably fair deals over real sockets: the commitment is published before the first deal,
//! each person's client seeds are bound into the deals they are in force for, the seed is
//! revealed at the end, and the hand history downloads (with a seat token or the revealed seed)
//! and verifies.

use dhumbal_engine::fair::commitment;
use dhumbal_engine::{Event, HandHistory, Hex32, Phase, Rounds, verify};
use dhumbal_protocol::{ClientMessage, Hello, MatchResult, SeedAnswer, ServerMessage, codes};
use dhumbal_tests::client::hello;
use dhumbal_tests::http::{get, get_with};
use dhumbal_tests::{Client, TestServer, random_action};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::common::{room_with, standard_for};

/// The client seeds of the `dealt` event for `round` that `client` received.
fn dealt_client_seeds(client: &Client, round: u32) -> Vec<Option<Hex32>> {
    client
        .events()
        .find_map(|e| match e {
            Event::Dealt {
                round: r,
                client_seeds,
                ..
            } if *r == round => Some(client_seeds.clone()),
            _ => None,
        })
        .expect("the round was dealt")
}

/// `seed` answering `commitment`, as a page sends it.
fn answer(seed: Hex32, commitment: &str) -> SeedAnswer {
    SeedAnswer {
        seed,
        commitment: commitment.parse().expect("a commitment is 64 hex digits"),
    }
}

/// The next `client_seed_taken` the client receives: its commitment and seed.
async fn next_taken(client: &mut Client) -> (Hex32, Hex32) {
    client
        .recv_until(|m| match m {
            ServerMessage::ClientSeedTaken {
                commitment,
                client_seed,
                ..
            } => Some((*commitment, *client_seed)),
            ServerMessage::Error(error) => panic!("a client seed was refused: {error:?}"),
            _ => None,
        })
        .await
}

/// Plays the client's seat to the end, sending `ready` with `next_seed` (answering
/// `commitment`) between rounds (after first trying a client seed that is not hex, which is
/// refused and changes nothing).
async fn play_with_seeds(
    mut client: Client,
    next_seed: Hex32,
    commitment: &str,
) -> (Client, MatchResult) {
    let mut rng = StdRng::seed_from_u64(11);
    let mut ready_for_round = 0;
    loop {
        match client.recv().await {
            ServerMessage::State { view, .. } => {
                if view.my_turn() {
                    client.send(random_action(&view, &mut rng)).await;
                } else if view.phase == Phase::RoundOver && ready_for_round < view.round {
                    ready_for_round = view.round;
                    client
                        .send_text(&format!(
                            r#"{{"type":"ready","client_seed":{{"seed":"not hex","commitment":"{commitment}"}}}}"#
                        ))
                        .await;
                    let error = client.expect_error_skipping_play().await;
                    assert_eq!(error.code, codes::BAD_MESSAGE);
                    // A bare seed, as protocol 3 sent it, is not a message of protocol 4.
                    client
                        .send_text(&format!(
                            r#"{{"type":"ready","client_seed":"{next_seed}"}}"#
                        ))
                        .await;
                    let error = client.expect_error_skipping_play().await;
                    assert_eq!(error.code, codes::BAD_MESSAGE);
                    client
                        .send(ClientMessage::Ready {
                            client_seed: Some(answer(next_seed, commitment)),
                        })
                        .await;
                }
            }
            ServerMessage::MatchResult(result) => return (client, result),
            ServerMessage::Error(error) => panic!("a legal action was refused: {error:?}"),
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_commits_before_the_deal_binds_client_seeds_and_its_history_verifies() {
    let server = TestServer::start().await;
    let addr = server.addr;
    let settings = dhumbal_engine::Settings {
        rounds: Rounds::Fixed(2),
        ..standard_for(4)
    };
    let room = server.create_room(&room_with(settings)).await;
    let first_seed = Hex32([0x5a; 32]);
    let second_seed = Hex32([0xc3; 32]);
    let mut host = Client::connect(addr).await;
    host.send(ClientMessage::from(Hello {
        host_secret: Some(room.host_secret.clone()),
        ..hello(&room.code, "Asha")
    }))
    .await;
    host.expect_welcome().await;
    let token = host.token().expect("a seat token");
    // The first match's commitment is public from the lobby on: the server chose its seed
    // before any client seed reached it.
    let in_the_lobby = host
        .recv_until(|m| match m {
            ServerMessage::Room(room) => Some(room.clone()),
            _ => None,
        })
        .await;
    assert_eq!(in_the_lobby.stage, dhumbal_protocol::Stage::Lobby);
    let lobby_commitment = in_the_lobby.fairness.expect("a commitment in the lobby");
    assert_eq!(lobby_commitment.match_number, 1);
    // A seed answering it is taken, and the server says so.
    host.send(ClientMessage::ClientSeed {
        client_seed: answer(first_seed, &lobby_commitment.commitment),
    })
    .await;
    assert_eq!(
        next_taken(&mut host).await,
        (lobby_commitment.commitment.parse().unwrap(), first_seed)
    );
    let mut watcher = Client::connect(addr).await;
    watcher
        .send(ClientMessage::from(Hello {
            spectator: true,
            client_seed: Some(answer(Hex32([1; 32]), &lobby_commitment.commitment)),
            ..hello(&room.code, "Wangmo")
        }))
        .await;
    watcher.expect_welcome().await;

    host.send(ClientMessage::Start).await;
    // The commitment comes in the room state, before the first card is dealt.
    let published = host
        .recv_until(|m| match m {
            ServerMessage::Room(room) => room.fairness.clone(),
            ServerMessage::State { .. } => panic!("dealt before the commitment was published"),
            _ => None,
        })
        .await;
    assert_eq!(published, lobby_commitment);
    let path = format!("/api/rooms/{}/matches/1/history", room.code);
    let bearer = format!("Bearer {token}");
    let auth = [("Authorization", bearer.as_str())];
    let (status, body) = get_with(addr, &path, &auth).await;
    assert_eq!(
        (status, body.contains(codes::UNKNOWN_MATCH)),
        (404, true),
        "not before the end"
    );

    let (host, result) = play_with_seeds(host, second_seed, &published.commitment).await;
    // Round 1 was dealt with the seed sent in the lobby; round 2 with the one sent with ready. The
    // spectator's seed counts for nothing, and bots send none.
    assert_eq!(
        dealt_client_seeds(&host, 1),
        [Some(first_seed), None, None, None]
    );
    assert_eq!(
        dealt_client_seeds(&host, 2),
        [Some(second_seed), None, None, None]
    );

    // The reveal: the seed gives the commitment published at the start.
    assert_eq!(result.match_number, 1);
    assert_eq!(
        result.commitment.as_deref(),
        Some(published.commitment.as_str())
    );
    let seed: Hex32 = result.seed.as_deref().expect("revealed").parse().unwrap();
    assert_eq!(commitment(&seed.0).to_string(), published.commitment);
    // Nothing before the reveal named the match seed or a deck seed.
    let secrets: Vec<String> = std::iter::once(seed.to_string())
        .chain(result.seeds.iter().cloned())
        .collect();
    assert_eq!(secrets.len(), 3);
    let before_the_end = host
        .received
        .iter()
        .take_while(|m| !matches!(m, ServerMessage::MatchResult(_)));
    for message in before_the_end {
        let text = serde_json::to_string(message).unwrap();
        for secret in &secrets {
            assert!(
                !text.contains(secret.as_str()),
                "a seed before the end: {text}"
            );
        }
    }

    // The hand history: refused without a credential that fits, or for a match not kept.
    let (status, body) = get(addr, &path).await;
    assert_eq!((status, body.contains(codes::UNAUTHORIZED)), (401, true));
    // A credential that does not fit is answered as a match that is not kept (issue 35).
    let (status, _) = get_with(addr, &path, &[("Authorization", "Bearer not-a-token")]).await;
    assert_eq!(status, 404);
    let wrong_seed = format!("Bearer {}", Hex32([7; 32]));
    let (status, _) = get_with(addr, &path, &[("Authorization", wrong_seed.as_str())]).await;
    assert_eq!(status, 404);
    let other = format!("/api/rooms/{}/matches/2/history", room.code);
    assert_eq!(get_with(addr, &other, &auth).await.0, 404);
    let garbage = format!("/api/rooms/{}/matches/first/history", room.code);
    assert_eq!(get_with(addr, &garbage, &auth).await.0, 404);

    // With the seat token: the whole match, which the engine verifies.
    let (status, body) = get_with(addr, &path, &auth).await;
    assert_eq!(status, 200, "{body}");
    let history: HandHistory = serde_json::from_str(&body).expect("a hand history");
    let verification = verify(&history);
    assert!(verification.is_ok(), "{verification:?}");
    assert_eq!(history.room, room.code);
    assert_eq!(history.players[0], "Asha");
    assert_eq!(history.rounds.len(), 2);
    assert_eq!(history.rounds[1].client_seeds[0], Some(second_seed));
    assert_eq!(
        history.commitment.map(|c| c.to_string()),
        Some(published.commitment.clone())
    );
    // Dealing the recorded deck gave the hand the host was shown.
    let first_view = host
        .received
        .iter()
        .find_map(|m| match m {
            ServerMessage::State { view, .. } => Some(view.hand.clone()),
            _ => None,
        })
        .expect("a state");
    assert_eq!(first_view, history.rounds[0].hands[0]);

    // Whoever saw the end (the spectator) may download it with the revealed seed.
    let by_seed = format!("Bearer {seed}");
    let (status, same) = get_with(addr, &path, &[("Authorization", by_seed.as_str())]).await;
    assert_eq!((status, same), (200, body));

    // The next match's commitment is shown as this one ends; the client seeds sent before it
    // no longer count, and one sent after it does.
    let mut host = host;
    let next = host
        .recv_until(|m| match m {
            ServerMessage::Room(room) if room.stage == dhumbal_protocol::Stage::MatchOver => {
                room.fairness.clone()
            }
            _ => None,
        })
        .await;
    assert_eq!(next.match_number, 2);
    assert_ne!(next.commitment, published.commitment);
    let third_seed = Hex32([0x77; 32]);
    // A seed answering the last match's commitment is refused, and a rematch carrying one
    // changes nothing (no vote).
    host.send(ClientMessage::ClientSeed {
        client_seed: answer(third_seed, &published.commitment),
    })
    .await;
    assert_eq!(host.expect_error().await.code, codes::STALE_COMMITMENT);
    host.send(ClientMessage::Rematch {
        client_seed: Some(answer(third_seed, &published.commitment)),
    })
    .await;
    assert_eq!(host.expect_error().await.code, codes::STALE_COMMITMENT);
    host.send(ClientMessage::ClientSeed {
        client_seed: answer(third_seed, &next.commitment),
    })
    .await;
    assert_eq!(
        next_taken(&mut host).await,
        (next.commitment.parse().unwrap(), third_seed)
    );
    host.send(ClientMessage::Rematch { client_seed: None })
        .await;
    let seeds = host
        .recv_event(|e| match e {
            Event::Dealt { client_seeds, .. } => Some(client_seeds.clone()),
            _ => None,
        })
        .await;
    assert_eq!(seeds, [Some(third_seed), None, None, None]);
    assert_eq!(
        host.room.as_ref().and_then(|r| r.fairness.clone()),
        Some(next.clone()),
        "match 2 is dealt under the commitment shown when match 1 ended"
    );
    // A spectator's client seed is refused.
    watcher
        .send(ClientMessage::ClientSeed {
            client_seed: answer(third_seed, &next.commitment),
        })
        .await;
    let refused = watcher
        .recv_until(|m| match m {
            ServerMessage::Error(error) => Some(error.code.clone()),
            _ => None,
        })
        .await;
    assert_eq!(refused, codes::NOT_SEATED);
    watcher.close().await;
    server.stop().await;
}

/// A seed sent in `hello` that does not answer the commitment the room shows (a page that had
/// not seen it yet, or a server-chosen one) never counts: a server that saw it could have
/// ground its match seed against it. The seat is taken all the same, and `stale_commitment`
/// says why the seed was not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_sent_before_the_commitment_was_shown_never_counts() {
    let server = TestServer::start().await;
    let settings = dhumbal_engine::Settings {
        rounds: Rounds::Fixed(1),
        ..standard_for(4)
    };
    let room = server.create_room(&room_with(settings)).await;
    let mut host = Client::connect(server.addr).await;
    host.send(ClientMessage::from(Hello {
        host_secret: Some(room.host_secret.clone()),
        client_seed: Some(answer(Hex32([0x5a; 32]), &Hex32([0; 32]).to_string())),
        ..hello(&room.code, "Asha")
    }))
    .await;
    host.expect_welcome().await;
    let refused = host
        .recv_until(|m| match m {
            ServerMessage::Error(error) => Some(error.code.clone()),
            ServerMessage::ClientSeedTaken { .. } => panic!("a stale seed was taken"),
            _ => None,
        })
        .await;
    assert_eq!(refused, codes::STALE_COMMITMENT);
    host.send(ClientMessage::Start).await;
    let seeds = host
        .recv_event(|e| match e {
            Event::Dealt { client_seeds, .. } => Some(client_seeds.clone()),
            _ => None,
        })
        .await;
    assert_eq!(seeds, [None, None, None, None], "the hello seed counted");
    server.stop().await;
}

/// Every seed taken is acknowledged to its socket, in order, and a deal carries the latest one
/// acknowledged before it: a `hello` seed answering the commitment counts like any other, a
/// later `client_seed` replaces it, and a seed taken after a deal counts only from the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_seed_taken_is_acknowledged_and_a_deal_carries_the_latest_acknowledged() {
    let server = TestServer::start().await;
    let settings = dhumbal_engine::Settings {
        rounds: Rounds::Fixed(2),
        ..standard_for(4)
    };
    let room = server.create_room(&room_with(settings)).await;
    let mut host = Client::connect(server.addr).await;
    host.send(ClientMessage::from(Hello {
        host_secret: Some(room.host_secret.clone()),
        ..hello(&room.code, "Asha")
    }))
    .await;
    host.expect_welcome().await;
    let token = host.token().unwrap();
    let shown = host
        .recv_until(|m| match m {
            ServerMessage::Room(room) => room.fairness.clone(),
            _ => None,
        })
        .await
        .commitment;
    host.close().await;
    // Back with a seed in hello that answers the commitment this page saw: taken, after the
    // welcome and the room.
    let (a, b, c) = (Hex32([0xa1; 32]), Hex32([0xb2; 32]), Hex32([0xc3; 32]));
    let mut host = Client::connect(server.addr).await;
    host.send(ClientMessage::from(Hello {
        token: Some(token),
        client_seed: Some(answer(a, &shown)),
        ..hello(&room.code, "Asha")
    }))
    .await;
    host.expect_welcome().await;
    assert_eq!(next_taken(&mut host).await.1, a);
    host.send(ClientMessage::ClientSeed {
        client_seed: answer(b, &shown),
    })
    .await;
    assert_eq!(next_taken(&mut host).await.1, b);
    // The same seed again is acknowledged again (it is still the one in force).
    host.send(ClientMessage::ClientSeed {
        client_seed: answer(b, &shown),
    })
    .await;
    assert_eq!(next_taken(&mut host).await.1, b);
    host.send(ClientMessage::Start).await;
    let seeds = host
        .recv_event(|e| match e {
            Event::Dealt { client_seeds, .. } => Some(client_seeds.clone()),
            _ => None,
        })
        .await;
    assert_eq!(seeds, [Some(b), None, None, None]);
    // Mid-round: taken now, in force from round 2's deal, which comes after its ack.
    host.send(ClientMessage::ClientSeed {
        client_seed: answer(c, &shown),
    })
    .await;
    let mut order = Vec::new();
    let mut rng = StdRng::seed_from_u64(5);
    // Round 1 is seat 0's to lead.
    let first = host.view().clone();
    if first.my_turn() {
        host.send(random_action(&first, &mut rng)).await;
    }
    loop {
        match host.recv().await {
            ServerMessage::ClientSeedTaken { client_seed, .. } => order.push(Ok(client_seed)),
            ServerMessage::State { events, view, .. } => {
                for e in &events {
                    if let Event::Dealt {
                        round,
                        client_seeds,
                        ..
                    } = e
                    {
                        order.push(Err((*round, client_seeds[0])));
                    }
                }
                if order.len() == 2 {
                    break;
                }
                if view.my_turn() {
                    host.send(random_action(&view, &mut rng)).await;
                } else if view.phase == Phase::RoundOver {
                    host.send(ClientMessage::Ready { client_seed: None }).await;
                }
            }
            ServerMessage::Error(error) => panic!("refused: {error:?}"),
            _ => {}
        }
    }
    assert_eq!(order, [Ok(c), Err((2, Some(c)))]);
    // Back mid-match with a seed in hello: its acknowledgement comes after the history and the
    // state, so the page knows the deal it hears of there was dealt before that seed.
    let token = host.token().unwrap();
    host.close().await;
    let d = Hex32([0xd4; 32]);
    let mut host = Client::connect(server.addr).await;
    host.send(ClientMessage::from(Hello {
        token: Some(token),
        client_seed: Some(answer(d, &shown)),
        ..hello(&room.code, "Asha")
    }))
    .await;
    let mut kinds = Vec::new();
    loop {
        match host.recv().await {
            ServerMessage::Welcome(_) => kinds.push("welcome"),
            ServerMessage::History { .. } => kinds.push("history"),
            ServerMessage::State { .. } if !kinds.contains(&"state") => kinds.push("state"),
            ServerMessage::ClientSeedTaken { client_seed, .. } => {
                assert_eq!(client_seed, d);
                kinds.push("taken");
                break;
            }
            ServerMessage::Error(error) => panic!("refused: {error:?}"),
            _ => {}
        }
    }
    assert_eq!(kinds, ["welcome", "history", "state", "taken"]);
    server.stop().await;
}
