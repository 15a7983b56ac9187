//! The coach over real sockets: a hint on your turn at a table that allows hints (and a clear
//! refusal everywhere else, changing nothing), and the review of a finished match: your own
//! seat at the table, any seat with the revealed match seed over HTTP.

use dhumbal_engine::{Rounds, Settings};
use dhumbal_protocol::coach::{Advice, Move, Review};
use dhumbal_protocol::{ClientMessage, Hello, ServerMessage, codes};
use dhumbal_tests::client::hello;
use dhumbal_tests::http::get_with;
use dhumbal_tests::{Client, TestServer};

use crate::common::{play_on_to_the_end, room_with, standard_for};

/// Dev, a watcher of room `code`, once welcomed.
async fn watch(server: &TestServer, code: &str) -> Client {
    let mut dev = Client::connect(server.addr).await;
    dev.send(ClientMessage::from(Hello {
        spectator: true,
        ..hello(code, "Dev")
    }))
    .await;
    dev.expect_welcome().await;
    dev
}

/// The next `hint`, with the version it is for.
async fn next_hint(client: &mut Client) -> (u64, Advice) {
    client
        .recv_until(|m| match m {
            ServerMessage::Hint { v, advice } => Some((*v, advice.clone())),
            ServerMessage::Error(e) => panic!("the hint was refused: {e:?}"),
            _ => None,
        })
        .await
}

/// The next `error`'s code and `id`.
async fn next_error(client: &mut Client) -> (String, Option<dhumbal_protocol::MessageId>) {
    client
        .recv_until(|m| match m {
            ServerMessage::Error(e) => Some((e.code.clone(), e.id.clone())),
            _ => None,
        })
        .await
}

/// Two people at a table of two. With hints off, a hint is refused (`hints_off`, with the
/// message's `id`) and nothing else is sent. With hints on: the person whose turn it is not is
/// refused (`not_your_turn`), a watcher too (`not_seated`); the person on turn is told, alone,
/// the moves weighed for the view they hold, best first, naming no card they have not been
/// shown (the client's leak check scans every frame), and the best move is legal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hint_comes_on_your_turn_at_a_table_that_allows_hints() {
    let server = TestServer::start().await;
    for hints in [false, true] {
        let settings = Settings {
            hints,
            ..standard_for(2)
        };
        let room = server.create_room(&room_with(settings)).await;
        let mut asha = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
        let mut bina = Client::join(server.addr, &room.code, "Bina", None).await;
        let mut dev = watch(&server, &room.code).await;
        asha.send(ClientMessage::Start).await;
        asha.recv_state_where(|_| true).await;
        bina.recv_state_where(|_| true).await;
        let (mut on_turn, mut waiting) = if asha.view().my_turn() {
            (asha, bina)
        } else {
            (bina, asha)
        };
        if !hints {
            on_turn.send_with_id(ClientMessage::Hint, 5).await;
            let (code, id) = next_error(&mut on_turn).await;
            assert_eq!(code, codes::HINTS_OFF);
            assert_eq!(id, Some(dhumbal_protocol::MessageId::Number(5)));
            let before = on_turn.received.len();
            on_turn
                .recv_until_quiet(std::time::Duration::from_millis(300))
                .await;
            assert_eq!(on_turn.received.len(), before, "a refused hint sent more");
            continue;
        }
        waiting.send(ClientMessage::Hint).await;
        assert_eq!(next_error(&mut waiting).await.0, "not_your_turn");
        dev.send(ClientMessage::Hint).await;
        assert_eq!(next_error(&mut dev).await.0, codes::NOT_SEATED);

        // Two turns of hints: the first at the start of the turn, the second after the draw.
        for _ in 0..2 {
            let held = on_turn.held.v;
            on_turn.send(ClientMessage::Hint).await;
            let (v, advice) = next_hint(&mut on_turn).await;
            assert_eq!(v, held, "the hint is for the view held");
            assert!(!advice.moves.is_empty());
            assert!(
                advice.moves.windows(2).all(|w| w[0].behind <= w[1].behind),
                "{advice:?}"
            );
            let best = advice.best().clone();
            let message = match best {
                Move::Call => ClientMessage::Call,
                Move::Draw { card: None } => ClientMessage::Draw {
                    from: dhumbal_protocol::DrawFrom::Stock,
                    card: None,
                },
                Move::Draw { card: Some(card) } => ClientMessage::Draw {
                    from: dhumbal_protocol::DrawFrom::Pile,
                    card: Some(card),
                },
                Move::Throw { cards } => ClientMessage::Throw { cards },
            };
            on_turn.send(message).await;
            // The move is taken: a new version of the view comes, and no error.
            let after = on_turn.recv_state_where(|_| true).await;
            assert!(on_turn.held.v > held, "{after:?}");
            if !after.my_turn() {
                break;
            }
        }
        // Nobody else heard of the hints.
        for client in [&waiting, &dev] {
            assert!(
                !client
                    .received
                    .iter()
                    .any(|m| matches!(m, ServerMessage::Hint { .. })),
                "a hint reached another client"
            );
        }
    }
    server.stop().await;
}

/// A match of one round between a person and a bot. Before its end a review is refused
/// (`no_review`). At its end the person's `review` is their own seat's, another seat is
/// `not_your_seat`, and a watcher may review any seat. Over HTTP, with the revealed seed, any
/// seat's review is the same answer the table gave; without a seat, with a seat not at the
/// table, with a seat token or with no credential, it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_match_is_reviewed_for_your_own_seat_or_by_its_seed() {
    let server = TestServer::start().await;
    let settings = Settings {
        rounds: Rounds::Fixed(1),
        difficulty: dhumbal_engine::Difficulty::Hard,
        ..standard_for(2)
    };
    let room = server.create_room(&room_with(settings)).await;
    let mut asha = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let token = asha.token().expect("a seat token");
    asha.send(ClientMessage::Start).await;
    asha.recv_state_where(|_| true).await;
    asha.send(ClientMessage::Review { seat: None }).await;
    assert_eq!(next_error(&mut asha).await.0, codes::NO_REVIEW);
    let (mut asha, result) = play_on_to_the_end(asha, 3).await;
    let seat = asha.seat().expect("seated");
    let other = 1 - seat;

    asha.send(ClientMessage::Review { seat: None }).await;
    let (number, mine) = asha
        .recv_until(|m| match m {
            ServerMessage::Review {
                match_number,
                review,
            } => Some((*match_number, review.clone())),
            ServerMessage::Error(e) => panic!("the review was refused: {e:?}"),
            _ => None,
        })
        .await;
    assert_eq!((number, mine.seat), (1, seat));
    assert!(mine.weighed > 0, "{mine:?}");
    let flagged: i32 = mine.flagged.iter().map(|d| d.cost.0).sum();
    assert_eq!(mine.cost.0, flagged);
    asha.send(ClientMessage::Review { seat: Some(other) }).await;
    assert_eq!(next_error(&mut asha).await.0, codes::NOT_YOUR_SEAT);

    // A watcher who arrives after the end reviews any seat.
    let mut dev = watch(&server, &room.code).await;
    dev.send(ClientMessage::Review { seat: None }).await;
    assert_eq!(next_error(&mut dev).await.0, codes::NOT_SEATED);
    dev.send(ClientMessage::Review { seat: Some(other) }).await;
    let theirs: Review = dev
        .recv_until(|m| match m {
            ServerMessage::Review { review, .. } => Some(review.clone()),
            ServerMessage::Error(e) => panic!("the review was refused: {e:?}"),
            _ => None,
        })
        .await;
    assert_eq!(theirs.seat, other);

    // Over HTTP, with the revealed seed: the same reviews.
    let seed = result.seed.expect("the seed is revealed");
    let by_seed = format!("Bearer {seed}");
    let path = |seat: &str| {
        format!(
            "/api/rooms/{}/matches/1/review{seat}",
            room.code.to_lowercase()
        )
    };
    for (s, review) in [(seat, &mine), (other, &theirs)] {
        let (status, body) = get_with(
            server.addr,
            &path(&format!("?seat={s}")),
            &[("Authorization", by_seed.as_str())],
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let answer: ServerMessage = serde_json::from_str(&body).unwrap();
        let ServerMessage::Review {
            match_number,
            review: got,
        } = answer
        else {
            panic!("not a review: {body}");
        };
        assert_eq!((match_number, &got), (1, review));
    }
    let refusals = [
        (path(""), by_seed.clone(), 400, codes::BAD_MESSAGE),
        (path("?seat=7"), by_seed.clone(), 400, codes::NO_SUCH_SEAT),
        (
            path(&format!("?seat={seat}")),
            format!("Bearer {token}"),
            404,
            codes::UNKNOWN_MATCH,
        ),
        (
            path(&format!("?seat={seat}")),
            String::new(),
            401,
            codes::UNAUTHORIZED,
        ),
    ];
    for (path, auth, status, code) in refusals {
        let headers: Vec<(&str, &str)> = if auth.is_empty() {
            Vec::new()
        } else {
            vec![("Authorization", auth.as_str())]
        };
        let (got, body) = get_with(server.addr, &path, &headers).await;
        assert_eq!((got, body.contains(code)), (status, true), "{path}: {body}");
    }
    server.stop().await;
}
