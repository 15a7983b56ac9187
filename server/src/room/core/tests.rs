//! The core without a runtime: inputs in, effects and records out, and a replay of the
//! records that gives the same room.

use dhumbal_engine::{Action, Event, Preset, Rounds};
use dhumbal_protocol::{
    CLOSE_REMOVED, CLOSE_WATCHING_OFF, PROTOCOL_VERSION, SeedAnswer, ServerMessage, codes,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::log::count_match;
use super::*;
use crate::room::record::hash_secret;
use crate::room::testing::{TIMING, setup};

/// Randomness from a seed, for tests that replay.
struct TestEntropy(StdRng);

impl Entropy for TestEntropy {
    fn seed(&mut self) -> Result<[u8; 32], String> {
        Ok(self.0.random())
    }

    fn token(&mut self) -> String {
        format!("token-{:x}", self.0.random::<u64>())
    }

    fn bot_seed(&mut self) -> u64 {
        self.0.random()
    }
}

fn hello(name: &str, token: Option<String>, host: bool) -> Hello {
    Hello {
        protocol: PROTOCOL_VERSION,
        room: "TESTROOM23".into(),
        name: name.into(),
        token,
        spectator: false,
        host_secret: host.then(|| "secret".to_owned()),
        client_seed: None,
    }
}

/// A client seed answering the commitment the room shows now, as a page sends it.
fn seed_for(core: &RoomCore, seed: [u8; 32]) -> SeedAnswer {
    let (_, commitment) = core.shown_commitment().expect("a commitment is shown");
    SeedAnswer {
        seed: Hex32(seed),
        commitment,
    }
}

/// A room being played, with its log as the actor would write it.
struct Played {
    setup: Setup,
    core: RoomCore,
    entropy: TestEntropy,
    now: Instant,
    log: Vec<(u64, Vec<Record>)>,
    snapshot: Option<(u64, Snapshot)>,
    /// Whether a bot sent to think thinks at once, in line (as if the pool answered at once);
    /// otherwise its job is left among the effects for the test to run.
    think_in_line: bool,
}

impl Played {
    fn new(settings: Settings, seed: u64) -> Played {
        Played::with_timing(settings, seed, TIMING)
    }

    fn with_timing(settings: Settings, seed: u64, timing: Timing) -> Played {
        let now = Instant::now();
        let setup = setup("TESTROOM23", settings);
        Played {
            core: RoomCore::new(&setup, timing, Arc::default(), now),
            setup,
            entropy: TestEntropy(StdRng::seed_from_u64(seed)),
            now,
            log: Vec::new(),
            snapshot: None,
            think_in_line: true,
        }
    }

    /// What the actor does after every input: settle, log the records, take the effects (and,
    /// thinking in line, run each bot sent to think and hand its thought back).
    fn step(&mut self) -> Vec<Effect> {
        self.core.settle(self.now);
        let records = self.core.take_records();
        if !records.is_empty() {
            let seq = self.log.last().map_or(0, |(s, _)| *s) + 1;
            if let Some(snapshot) = self.core.take_snapshot() {
                self.snapshot = Some((seq - 1, snapshot));
                self.log.clear();
            }
            self.log.push((seq, records));
        }
        let effects = self.core.take_effects();
        if !self.think_in_line {
            return effects;
        }
        let mut out = Vec::new();
        for effect in effects {
            match effect {
                Effect::Think(job) => out.extend(self.input(Input::Thought(Box::new(job.run()))).1),
                other => out.push(other),
            }
        }
        out
    }

    fn input(&mut self, input: Input) -> (bool, Vec<Effect>) {
        let joined = self.core.handle(input, self.now, &mut self.entropy) == Handled::Joined;
        (joined, self.step())
    }

    fn message(&mut self, conn: ConnId, message: ClientMessage) -> Vec<Effect> {
        self.input(Input::Message(Request {
            conn,
            id: None,
            message,
        }))
        .1
    }

    /// Lets time pass until the next timer and fires it.
    fn tick(&mut self) -> Vec<Effect> {
        if let Some(due) = self.core.next_due() {
            self.now = self.now.max(due);
        }
        self.core.wake(self.now, &mut self.entropy);
        self.step()
    }

    fn restored(&self) -> RoomCore {
        RoomCore::restore(
            &self.setup,
            self.snapshot.as_ref().map(|(_, s)| s.clone()),
            self.log.clone(),
            TIMING,
            Arc::default(),
            self.now,
            &mut TestEntropy(StdRng::seed_from_u64(0)),
        )
        .expect("the log replays")
    }
}

/// The errors among the effects for `conn`.
fn errors(effects: &[Effect], conn: ConnId) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send { to, text } if *to == conn => {
                let value: serde_json::Value = serde_json::from_str(text.as_str()).ok()?;
                (value["type"] == "error").then(|| value["code"].as_str().unwrap().to_owned())
            }
            _ => None,
        })
        .collect()
}

fn join(played: &mut Played, conn: ConnId, hello: Hello) -> (bool, Vec<Effect>) {
    played.input(Input::Join(Joining {
        conn,
        hello: hello.into(),
        id: None,
        token_only: false,
        address: std::net::Ipv4Addr::LOCALHOST.into(),
    }))
}

#[test]
fn a_refused_input_changes_nothing_and_logs_nothing() {
    let mut played = Played::new(Preset::Standard.settings(), 1);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    let entries = played.log.len();
    let before = played.core.durable();
    // Not the host, not started, no such seat: each refused, none logged.
    assert!(join(&mut played, 2, hello("Bina", None, false)).0);
    let entries_after_join = played.log.len();
    assert_eq!(entries_after_join, entries + 1);
    let before_refusals = played.core.durable();
    for message in [
        ClientMessage::Start,
        ClientMessage::Call,
        ClientMessage::TakeSeat { seat: 9 },
        ClientMessage::Readmit { removed: 0 },
    ] {
        let effects = played.message(2, message);
        assert_eq!(errors(&effects, 2).len(), 1, "{effects:?}");
    }
    assert_eq!(played.log.len(), entries_after_join);
    assert_eq!(played.core.durable(), before_refusals);
    assert_ne!(before, before_refusals);
}

#[test]
fn nothing_is_sent_to_anyone_but_through_effects() {
    let mut played = Played::new(Preset::Standard.settings(), 2);
    let (joined, effects) = join(&mut played, 1, hello("Asha", None, true));
    assert!(joined);
    // welcome, then room: both for the joining connection, none sent yet.
    assert!(
        effects
            .iter()
            .all(|e| matches!(e, Effect::Send { to: 1, .. })),
        "{effects:?}"
    );
    assert_eq!(effects.len(), 2);
    // Its records hold the token's hash, never the token.
    let Some((_, records)) = played.log.last() else {
        panic!("nothing logged");
    };
    let welcome: serde_json::Value = match &effects[0] {
        Effect::Send { text, .. } => serde_json::from_str(text.as_str()).unwrap(),
        Effect::Close { .. } | Effect::KeepMatch(_) | Effect::Think(_) | Effect::Coach(_) => {
            panic!("not a message")
        }
    };
    let token = welcome["token"].as_str().unwrap();
    let logged = serde_json::to_string(records).unwrap();
    assert!(!logged.contains(token), "{logged}");
    assert!(logged.contains(&hash_secret(token)), "{logged}");
}

/// Plays a room to its end (or `steps` inputs) with people who join, sit, leave, come back,
/// act at random and vote, and bots; after every input the replay of the log so far equals
/// the room.
/// Returns whether a rematch cut the log short along the way.
fn replay_equals_the_room(settings: Settings, seed: u64, steps: usize) -> bool {
    let mut played = Played::new(settings, seed);
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    let (_, effects) = join(&mut played, 1, hello("Asha", None, true));
    let token = effects.iter().find_map(|e| match e {
        Effect::Send { text, .. } => serde_json::from_str::<serde_json::Value>(text.as_str())
            .ok()?["token"]
            .as_str()
            .map(str::to_owned),
        Effect::Close { .. } | Effect::KeepMatch(_) | Effect::Think(_) | Effect::Coach(_) => None,
    });
    join(&mut played, 2, hello("Bina", None, false));
    played.message(
        1,
        ClientMessage::AddBot {
            seat: 2,
            difficulty: Some(Difficulty::Easy),
        },
    );
    played.message(1, ClientMessage::Start);
    let mut next_conn = 10;
    let mut asha = Some(1);
    for _ in 0..steps {
        // Now and then Asha drops and comes back with her token.
        if rng.random_ratio(1, 20) {
            if let Some(conn) = asha.take() {
                played.input(Input::Leave { conn });
            } else {
                next_conn += 1;
                let (joined, _) = join(&mut played, next_conn, hello("Asha", token.clone(), true));
                assert!(joined);
                asha = Some(next_conn);
            }
        }
        // Now and then Bina says something, and the host mutes or unmutes her.
        if rng.random_ratio(1, 10) {
            played.message(
                2,
                ClientMessage::Chat {
                    text: format!("line {}", rng.random::<u16>()),
                },
            );
        }
        if let (Some(conn), true) = (asha, rng.random_ratio(1, 30)) {
            let muted = rng.random();
            played.message(conn, ClientMessage::Mute { seat: 1, muted });
        }
        let game = played.core.game.clone().expect("a match");
        let turn = game.turn();
        let phase = game.phase();
        let conn_of = |seat: usize| match seat {
            0 => asha,
            1 => Some(2),
            _ => None,
        };
        match phase {
            Phase::RoundOver => {
                for seat in 0..2 {
                    if let Some(conn) = conn_of(seat) {
                        let client_seed = rng
                            .random::<bool>()
                            .then(|| seed_for(&played.core, rng.random()));
                        played.message(conn, ClientMessage::Ready { client_seed });
                    }
                }
                played.tick();
            }
            Phase::MatchOver => {
                // Now and then the host takes the table back to the lobby and starts again
                // from there (the log restarts at the lobby).
                if let (Some(conn), true) = (asha, rng.random_ratio(1, 2)) {
                    played.message(conn, ClientMessage::ToLobby);
                    assert_eq!(played.core.stage(), Stage::Lobby);
                    assert_eq!(played.restored().durable(), played.core.durable());
                    played.message(conn, ClientMessage::Start);
                    continue;
                }
                for seat in 0..2 {
                    if let Some(conn) = conn_of(seat) {
                        let client_seed = rng
                            .random::<bool>()
                            .then(|| seed_for(&played.core, rng.random()));
                        played.message(conn, ClientMessage::Rematch { client_seed });
                    }
                }
                played.tick();
            }
            _ => match conn_of(turn) {
                Some(conn)
                    if played
                        .core
                        .human(turn)
                        .is_some_and(|h| !h.cover.is_covered()) =>
                {
                    let legal = game.legal_actions(turn);
                    let action = legal[rng.random_range(0..legal.len())].clone();
                    let message = match action {
                        Action::Call => ClientMessage::Call,
                        Action::Throw { cards } => ClientMessage::Throw { cards },
                        Action::Draw { from } => match from {
                            dhumbal_engine::Source::Stock => ClientMessage::Draw {
                                from: dhumbal_protocol::DrawFrom::Stock,
                                card: None,
                            },
                            dhumbal_engine::Source::Pile => ClientMessage::Draw {
                                from: dhumbal_protocol::DrawFrom::Pile,
                                card: None,
                            },
                            dhumbal_engine::Source::PileCard(card) => ClientMessage::Draw {
                                from: dhumbal_protocol::DrawFrom::Pile,
                                card: Some(card),
                            },
                        },
                    };
                    let effects = played.message(conn, message);
                    assert!(errors(&effects, conn).is_empty(), "{effects:?}");
                }
                // A bot, or a stand-in for someone away.
                _ => {
                    played.tick();
                }
            },
        }
        assert_eq!(played.restored().durable(), played.core.durable());
    }
    played.snapshot.is_some()
}

#[test]
fn the_log_replays_to_the_same_room_at_every_step() {
    let standard = Settings {
        players: 3,
        rounds: Rounds::Fixed(2),
        ..Preset::Standard.settings()
    };
    let household = Settings {
        players: 3,
        ..Preset::Household.settings()
    };
    let yaniv = Settings {
        players: 3,
        ..Preset::Yaniv.settings()
    };
    let mut rematches = 0;
    for (i, settings) in [standard, household, yaniv].into_iter().enumerate() {
        rematches += usize::from(replay_equals_the_room(settings, 40 + i as u64, 400));
    }
    assert!(
        rematches > 0,
        "no match ended in a rematch: the snapshot went untested"
    );
}

#[test]
fn a_log_that_does_not_replay_names_its_input() {
    let played = Played::new(Preset::Standard.settings(), 3);
    let bad = vec![(
        1,
        vec![Record::Acted {
            seat: 0,
            action: Action::Call,
        }],
    )];
    let Err(why) = RoomCore::restore(
        &setup("TESTROOM23", Preset::Standard.settings()),
        None,
        bad,
        TIMING,
        Arc::default(),
        played.now,
        &mut TestEntropy(StdRng::seed_from_u64(0)),
    ) else {
        panic!("an action before the match replayed");
    };
    assert!(why.contains("input 1"), "{why}");
}

/// Everything sent to `conn` among the effects, as JSON.
fn sent(effects: &[Effect], conn: ConnId) -> Vec<serde_json::Value> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send { to, text } if *to == conn => serde_json::from_str(text.as_str()).ok(),
            _ => None,
        })
        .collect()
}

/// A two-seat standard table with a turn timer: Asha (the host, connection 1) and Bina
/// (connection 2), started.
fn timed_table(seed: u64) -> Played {
    timed_table_with(seed, TIMING)
}

/// [`timed_table`] with these timings.
fn timed_table_with(seed: u64, timing: Timing) -> Played {
    let settings = Settings {
        players: 2,
        turn_timer: Some(15),
        ..Preset::Standard.settings()
    };
    let mut played = Played::with_timing(settings, seed, timing);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    assert!(join(&mut played, 2, hello("Bina", None, false)).0);
    let effects = played.message(1, ClientMessage::Start);
    assert!(errors(&effects, 1).is_empty(), "{effects:?}");
    played
}

/// Whose turn it is.
fn turn(played: &Played) -> usize {
    played.core.game.as_ref().unwrap().turn()
}

/// Plays one legal move for `seat`'s person (the first legal action that is not a call).
fn move_for(played: &mut Played, seat: usize) -> Vec<Effect> {
    let game = played.core.game.as_ref().unwrap();
    let action = game
        .legal_actions(seat)
        .into_iter()
        .find(|a| *a != Action::Call)
        .unwrap();
    let message = match action {
        Action::Draw { from } => ClientMessage::Draw {
            from: match from {
                dhumbal_engine::Source::Stock => dhumbal_protocol::DrawFrom::Stock,
                _ => dhumbal_protocol::DrawFrom::Pile,
            },
            card: None,
        },
        Action::Throw { cards } => ClientMessage::Throw { cards },
        Action::Call => unreachable!(),
    };
    played.message(seat as ConnId + 1, message)
}

/// The last `state` or `patch` among `messages`.
fn last_state(messages: &[serde_json::Value]) -> &serde_json::Value {
    messages
        .iter()
        .rev()
        .find(|m| m["type"] == "state" || m["type"] == "patch")
        .expect("a state or a patch")
}

#[test]
fn a_turn_runs_out_a_stand_in_plays_it_and_the_seat_comes_back_with_a_summary() {
    let mut played = timed_table(11);
    let seat = turn(&played);
    let other = 1 - seat;
    let (me, them) = (seat as ConnId + 1, other as ConnId + 1);
    // The clock is in the state both people got when the match began.
    let due = played.core.timers.turn_clock().unwrap();
    assert_eq!(due.0, seat);
    let clock = played.core.clock().unwrap();
    assert_eq!((clock.seat, clock.total_ms), (seat, 15_000));
    // Time runs out: everyone hears it, and a stand-in covers this one turn.
    let effects = played.tick();
    assert_eq!(played.now, due.1);
    let notices: Vec<_> = sent(&effects, them)
        .into_iter()
        .filter(|m| m["type"] == "notice")
        .collect();
    assert_eq!(notices.len(), 1, "{effects:?}");
    assert_eq!(notices[0]["kind"], "timed_out");
    assert_eq!(notices[0]["away"], false);
    // Its move refuses nothing of mine until it has begun; it plays the turn out.
    let mut effects = Vec::new();
    while turn(&played) == seat {
        effects.extend(played.tick());
    }
    let mine = sent(&effects, me);
    let states: Vec<_> = mine
        .iter()
        .filter(|m| m["type"] == "state" || m["type"] == "patch")
        .collect();
    assert!(states.iter().all(|s| s["stand_in"] == seat), "{states:?}");
    // The seat is mine again, and I am told what it did; the other person's clock runs.
    let summary = mine.iter().find(|m| m["type"] == "while_away").unwrap();
    assert_eq!(summary["turns"], 1);
    assert_eq!(summary["events"].as_array().unwrap().len(), 2, "{summary}");
    assert_eq!(last_state(&mine)["clock"]["seat"], other);
    assert!(!played.core.human(seat).unwrap().cover.is_covered());
    // The history marks the stand-in's moves.
    assert_eq!(played.core.stand_in_marks.len(), 2);
    // The other person moves; my new turn has a fresh, whole clock.
    while turn(&played) == other {
        let effects = move_for(&mut played, other);
        assert!(errors(&effects, them).is_empty(), "{effects:?}");
    }
    let clock = played.core.clock().unwrap();
    assert_eq!((clock.seat, clock.left_ms), (seat, 15_000));
    // A move of my own resets the count of timed-out turns.
    let effects = move_for(&mut played, seat);
    assert!(errors(&effects, me).is_empty(), "{effects:?}");
    assert!(matches!(
        played.core.human(seat).unwrap().cover,
        Cover::Own { timed_out: false }
    ));
}

#[test]
fn a_test_servers_turn_second_scales_the_turn_clock_and_what_clients_are_told() {
    // One second of the timer lasts 20 ms: a 15-second turn, 300 ms.
    let timing = Timing {
        turn_second: Duration::from_millis(20),
        ..TIMING
    };
    let mut played = timed_table_with(11, timing);
    let start = played.now;
    let seat = turn(&played);
    let (_, due) = played.core.timers.turn_clock().unwrap();
    assert_eq!(due, start + Duration::from_millis(300));
    let clock = played.core.clock().unwrap();
    assert_eq!(
        (clock.seat, clock.total_ms, clock.left_ms),
        (seat, 300, 300)
    );
    // Half of it later, a state sent says half is left, of 300 ms.
    played.now = start + Duration::from_millis(150);
    let told = sent(&played.message(1, ClientMessage::Resync), 1);
    let clock = &last_state(&told)["clock"];
    assert_eq!(
        (&clock["total_ms"], &clock["left_ms"]),
        (&serde_json::json!(300), &serde_json::json!(150)),
        "{told:?}"
    );
    // It runs out at 300 ms, not 15 s.
    let effects = played.tick();
    assert_eq!(played.now, start + Duration::from_millis(300));
    let notices: Vec<_> = sent(&effects, 1)
        .into_iter()
        .filter(|m| m["type"] == "notice")
        .collect();
    assert_eq!(notices.len(), 1, "{effects:?}");
    assert_eq!(notices[0]["kind"], "timed_out");
}

#[test]
fn two_timed_out_turns_mark_a_person_away_until_they_are_back() {
    let mut played = timed_table(12);
    let seat = turn(&played);
    let other = 1 - seat;
    let me = seat as ConnId + 1;
    let mut away_notice = None;
    for _ in 0..2 {
        // My turn runs out; the stand-in plays it; the other person moves.
        while turn(&played) == seat {
            let effects = played.tick();
            if let Some(n) = sent(&effects, me)
                .into_iter()
                .find(|m| m["type"] == "notice")
            {
                away_notice = Some(n);
            }
        }
        while turn(&played) == other {
            move_for(&mut played, other);
        }
    }
    assert_eq!(away_notice.unwrap()["away"], true);
    let human = played.core.human(seat).unwrap();
    assert!(human.cover.is_away() && human.cover.is_covered());
    // Marked away, the stand-in plays this turn too, with no clock for it.
    assert!(played.core.timers.turn_clock().is_none());
    let room = played.core.room_state(Some(seat));
    assert!(room.seats[seat].away);
    // `back` from someone no bot covers is refused; mine is taken, and the seat is mine
    // again at once since the stand-in has not begun the turn, with a fresh clock.
    let effects = played.message(other as ConnId + 1, ClientMessage::Back);
    assert_eq!(errors(&effects, other as ConnId + 1), ["not_away"]);
    let effects = played.message(me, ClientMessage::Back);
    assert!(errors(&effects, me).is_empty(), "{effects:?}");
    let human = played.core.human(seat).unwrap();
    assert!(!human.cover.is_covered());
    assert_eq!(played.core.timers.turn_clock().map(|c| c.0), Some(seat));
    let mine = sent(&effects, me);
    assert_eq!(last_state(&mine)["clock"]["seat"], seat);
    assert!(mine.iter().any(|m| m["type"] == "while_away"));
}

#[test]
fn a_person_marked_away_who_moves_at_the_start_of_their_turn_has_their_seat_back() {
    let mut played = timed_table(13);
    // The host hands Bina's seat to a bot; we wait until that seat's turn begins.
    let bina = 1;
    let effects = played.message(1, ClientMessage::HandToBot { seat: bina });
    assert!(errors(&effects, 1).is_empty(), "{effects:?}");
    let notice = sent(&effects, 2)
        .into_iter()
        .find(|m| m["type"] == "notice")
        .unwrap();
    assert_eq!(
        (notice["kind"].as_str(), notice["seat"].as_u64()),
        (Some("handed_to_bot"), Some(1))
    );
    // Get to the start of Bina's turn without the bot moving: Asha moves if it is hers.
    while turn(&played) != bina {
        move_for(&mut played, 0);
    }
    // The stand-in is due but has not moved yet: Bina's own move takes her seat back.
    assert!(played.core.human(bina).unwrap().cover.is_covered());
    let effects = move_for(&mut played, bina);
    assert!(errors(&effects, 2).is_empty(), "{effects:?}");
    let human = played.core.human(bina).unwrap();
    assert!(!human.cover.is_covered());
}

#[test]
fn the_host_hands_a_seat_to_a_bot_or_removes_a_person_only_as_the_rules_allow() {
    let settings = Settings {
        players: 3,
        ..Preset::Standard.settings()
    };
    let mut played = Played::new(settings, 14);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    assert!(join(&mut played, 2, hello("Bina", None, false)).0);
    // Not before the match.
    let effects = played.message(1, ClientMessage::HandToBot { seat: 1 });
    assert_eq!(errors(&effects, 1), ["not_started"]);
    played.message(1, ClientMessage::Start);
    let before = played.core.durable();
    let entries = played.log.len();
    for (conn, message, code) in [
        (2, ClientMessage::HandToBot { seat: 0 }, "not_host"),
        (1, ClientMessage::HandToBot { seat: 0 }, "own_seat"),
        (1, ClientMessage::HandToBot { seat: 2 }, "not_a_person"),
        (1, ClientMessage::HandToBot { seat: 7 }, "no_such_seat"),
        (1, ClientMessage::ClearSeat { seat: 2 }, "not_a_person"),
        (1, ClientMessage::ClearSeat { seat: 0 }, "own_seat"),
        (2, ClientMessage::ClearSeat { seat: 0 }, "not_host"),
    ] {
        let effects = played.message(conn, message.clone());
        assert_eq!(errors(&effects, conn), [code], "{message:?}");
    }
    let effects = played.message(1, ClientMessage::HandToBot { seat: 1 });
    assert!(errors(&effects, 1).is_empty());
    let effects = played.message(1, ClientMessage::HandToBot { seat: 1 });
    assert_eq!(errors(&effects, 1), ["already_stand_in"]);
    assert_eq!(played.log.len(), entries);
    assert_eq!(played.core.durable(), before);
    // Removing Bina mid-match: she is told and closed, a bot plays her seat, and the log
    // replays to the same room.
    let effects = played.message(1, ClientMessage::ClearSeat { seat: 1 });
    assert!(errors(&effects, 1).is_empty(), "{effects:?}");
    let to_bina = sent(&effects, 2);
    assert!(
        to_bina
            .iter()
            .any(|m| m["type"] == "bye" && m["reason"] == "removed")
    );
    let to_asha = sent(&effects, 1);
    assert!(
        to_asha
            .iter()
            .any(|m| m["type"] == "notice" && m["kind"] == "removed" && m["name"] == "Bina"),
        "{to_asha:?}"
    );
    assert!(matches!(played.core.seats[1], Seat::Bot(_)));
    assert_eq!(played.core.removed.len(), 1);
    assert_eq!(played.restored().durable(), played.core.durable());
    // The bot plays on: the match still finishes with Asha moving.
    for _ in 0..2_000 {
        if played.core.game.as_ref().unwrap().is_over() {
            break;
        }
        if played.core.stage() == Stage::BetweenRounds {
            played.message(1, ClientMessage::Ready { client_seed: None });
        } else if turn(&played) == 0 {
            move_for(&mut played, 0);
        } else {
            played.tick();
        }
    }
    assert!(played.core.game.as_ref().unwrap().is_over());
}

/// A room of one person and one bot of `difficulty` at the standard table, started, with bots
/// sent to think left for the test to run.
fn with_a_bot(difficulty: Difficulty, seed: u64) -> Played {
    let settings = Settings {
        players: 2,
        difficulty,
        ..Preset::Standard.settings()
    };
    let mut played = Played::new(settings, seed);
    played.think_in_line = false;
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    played.message(1, ClientMessage::Start);
    played
}

/// Plays the person's turns until the bot's turn has come and its timer fired; returns the
/// effects of that firing.
fn until_the_bot_is_asked(played: &mut Played) -> Vec<Effect> {
    for _ in 0..20 {
        if turn(played) == 0 {
            move_for(played, 0);
        } else {
            return played.tick();
        }
    }
    panic!("the bot's turn never came");
}

fn think_jobs(effects: Vec<Effect>) -> Vec<ThinkJob> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Think(job) => Some(*job),
            _ => None,
        })
        .collect()
}

#[test]
fn only_an_expert_is_sent_away_to_think() {
    for (difficulty, thinks) in [(Difficulty::Expert, true), (Difficulty::Hard, false)] {
        let mut played = with_a_bot(difficulty, 15);
        let jobs = think_jobs(until_the_bot_is_asked(&mut played));
        let game = played.core.game.as_ref().unwrap();
        // The person's turn ended with a draw and a throw (or a call); the bot's began.
        let events = game.log().len();
        if thinks {
            // Nothing is played, logged or scheduled until the thought comes back.
            assert_eq!(jobs.len(), 1, "{difficulty:?}");
            assert_eq!(game.turn(), 1);
            assert_eq!(game.log().len(), events);
            assert!(played.core.timers.bot_due().is_none());
            let before = played.log.len();
            played.input(Input::Thought(Box::new(
                jobs.into_iter().next().unwrap().run(),
            )));
            let game = played.core.game.as_ref().unwrap();
            assert!(game.log().len() > events, "the thought was played");
            assert_eq!(played.log.len(), before + 1, "and logged");
        } else {
            assert!(jobs.is_empty(), "{difficulty:?}");
            let (_, last) = played.log.last().unwrap();
            assert!(
                matches!(last[..], [Record::Acted { seat: 1, .. }]),
                "the bot played in line: {last:?}"
            );
        }
    }
}

#[test]
fn a_bot_that_fails_while_thinking_does_not_stall_the_table() {
    let mut played = with_a_bot(Difficulty::Expert, 16);
    let job = think_jobs(until_the_bot_is_asked(&mut played))
        .pop()
        .unwrap();
    let mut thought = job.run();
    thought.action = None;
    let events = played.core.game.as_ref().unwrap().log().len();
    played.input(Input::Thought(Box::new(thought)));
    assert!(
        played.core.game.as_ref().unwrap().log().len() > events,
        "the first legal action was played for it"
    );
}

#[test]
fn a_stand_ins_thought_is_dropped_when_its_person_takes_the_turn_back() {
    let settings = Settings {
        players: 2,
        difficulty: Difficulty::Expert,
        ..Preset::Standard.settings()
    };
    let mut played = Played::new(settings, 18);
    played.think_in_line = false;
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    assert!(join(&mut played, 2, hello("Bina", None, false)).0);
    played.message(1, ClientMessage::Start);
    while turn(&played) == 0 {
        move_for(&mut played, 0);
    }
    played.message(1, ClientMessage::HandToBot { seat: 1 });
    let job = think_jobs(played.tick())
        .pop()
        .expect("Bina's stand-in thinks");
    // Bina comes back before the stand-in has chosen: the turn is hers again.
    let back = played.message(2, ClientMessage::Back);
    assert!(errors(&back, 2).is_empty(), "{back:?}");
    let events = played.core.game.as_ref().unwrap().log().len();
    played.input(Input::Thought(Box::new(job.run())));
    assert_eq!(played.core.game.as_ref().unwrap().log().len(), events);
    assert!(played.core.thinking.is_none() && played.core.timers.bot_due().is_none());
    assert!(
        errors(&move_for(&mut played, 1), 2).is_empty(),
        "she plays her own turn"
    );
}

/// Issue 35, item 17: the household guide's tables are for 2 to 5 players. The host cannot set
/// a sixth seat at a table playing its rules (refused, nothing logged), while a room stored with
/// a six-seat household table before the rule still restores and replays.
#[test]
fn a_six_seat_guide_table_is_refused_but_one_stored_before_still_replays() {
    let mut played = Played::new(Preset::Standard.settings(), 35);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    let entries = played.log.len();
    let six = Settings {
        players: 6,
        ..Preset::Household.settings()
    };
    let effects = played.message(
        1,
        ClientMessage::SetSettings {
            settings: six.clone().into(),
        },
    );
    assert_eq!(errors(&effects, 1), vec!["guide_players".to_owned()]);
    assert_eq!(played.log.len(), entries, "a refused change is not logged");
    let five = Settings {
        players: 5,
        ..six.clone()
    };
    let effects = played.message(
        1,
        ClientMessage::SetSettings {
            settings: five.into(),
        },
    );
    assert!(errors(&effects, 1).is_empty(), "{effects:?}");
    // A room created with six household seats before the rule: it restores from its log.
    let mut stored = Played::new(six, 36);
    assert!(join(&mut stored, 1, hello("Asha", None, true)).0);
    stored.message(1, ClientMessage::Start);
    assert_eq!(stored.restored().durable(), stored.core.durable());
}

/// A log written before protocol 4 keeps client seeds without the commitment they answer: it
/// replays as it was played (the seed counts for the next deal), while a seed recorded as
/// answering another commitment does not count.
#[test]
fn a_client_seed_from_an_older_log_replays_as_it_was_played() {
    let setup = setup("TESTROOM23", Preset::Standard.settings());
    let seed = Hex32([0x42; 32]);
    let old: Record = serde_json::from_str(&format!(
        r#"{{"type":"client_seed","seat":0,"seed":"{seed}"}}"#
    ))
    .expect("an old record reads");
    assert_eq!(
        old,
        Record::ClientSeed {
            seat: 0,
            seed,
            commitment: None
        }
    );
    let seated = Record::Seated {
        seat: 0,
        name: "Asha".into(),
        token_hash: hash_secret("t"),
    };
    let dealt_seeds = |client_seed: Record| {
        let log = vec![(
            1,
            vec![
                seated.clone(),
                client_seed,
                Record::MatchBegun { seed: setup.seed },
            ],
        )];
        let core = RoomCore::restore(
            &setup,
            None,
            log,
            TIMING,
            Arc::default(),
            Instant::now(),
            &mut TestEntropy(StdRng::seed_from_u64(0)),
        )
        .expect("the log replays");
        match &core.game.as_ref().expect("a match").log()[0] {
            Event::Dealt { client_seeds, .. } => client_seeds.clone(),
            other => panic!("not a deal: {other:?}"),
        }
    };
    assert_eq!(dealt_seeds(old)[0], Some(seed));
    let other = Record::ClientSeed {
        seat: 0,
        seed,
        commitment: Some(Hex32([1; 32])),
    };
    assert_eq!(dealt_seeds(other)[0], None);
    let answering = Record::ClientSeed {
        seat: 0,
        seed,
        commitment: Some(dhumbal_engine::fair::commitment(&setup.seed.unwrap())),
    };
    assert_eq!(dealt_seeds(answering)[0], Some(seed));
}

// ----- Watchers -----

/// A watcher's `hello` from `address`.
fn watch(played: &mut Played, conn: ConnId, name: &str, address: [u8; 4]) -> (bool, Vec<Effect>) {
    played.input(Input::Join(Joining {
        conn,
        hello: Hello {
            spectator: true,
            client_seed: None,
            ..hello(name, None, false)
        }
        .into(),
        id: None,
        token_only: false,
        address: std::net::Ipv4Addr::from(address).into(),
    }))
}

/// The connections closed among the effects, with their close codes.
fn closed(effects: &[Effect]) -> Vec<(ConnId, u16)> {
    let mut closed: Vec<(ConnId, u16)> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Close { to, code, .. } => Some((*to, *code)),
            _ => None,
        })
        .collect();
    closed.sort_unstable();
    closed
}

/// The reasons of the `bye`s sent to `conn`.
fn byes(effects: &[Effect], conn: ConnId) -> Vec<String> {
    sent(effects, conn)
        .iter()
        .filter(|m| m["type"] == "bye")
        .map(|m| m["reason"].as_str().unwrap().to_owned())
        .collect()
}

/// The watchers the last `room` sent to `conn` lists, by name.
fn watchers_seen(effects: &[Effect], conn: ConnId) -> Vec<String> {
    let rooms: Vec<serde_json::Value> = sent(effects, conn)
        .into_iter()
        .filter(|m| m["type"] == "room")
        .collect();
    let room = rooms.last().expect("a room message");
    room["watchers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn watchers_are_capped_and_named_like_people() {
    let mut played = Played::new(Preset::Standard.settings(), 7);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    // Named like people: no look-alike of a seated person, of another watcher, or of a bot.
    let (joined, effects) = watch(&mut played, 2, "Dev", [10, 0, 0, 2]);
    assert!(joined);
    assert_eq!(watchers_seen(&effects, 1), ["Dev"]);
    for (name, code) in [
        ("Asha", codes::NAME_TAKEN),
        ("\u{410}sha", codes::NAME_TAKEN),
        ("D\u{435}v", codes::NAME_TAKEN),
        ("DEV", codes::NAME_TAKEN),
        ("B\u{43E}t 2", codes::BAD_NAME),
        ("\u{200F}Ek", codes::BAD_NAME),
    ] {
        let (joined, effects) = watch(&mut played, 3, name, [10, 0, 0, 3]);
        assert!(!joined, "{name:?}");
        assert_eq!(errors(&effects, 3), [code], "{name:?}");
    }
    // A newcomer to a seat may not pose as a watcher either; a watcher who sits down keeps
    // their own name.
    let (joined, effects) = join(&mut played, 4, hello("Dev", None, false));
    assert!(!joined);
    assert_eq!(errors(&effects, 4), [codes::NAME_TAKEN]);
    let effects = played.message(2, ClientMessage::TakeSeat { seat: 2 });
    assert_eq!(errors(&effects, 2), Vec::<String>::new());
    assert_eq!(watchers_seen(&effects, 1), Vec::<String>::new());
    // The cap: `max_watchers` at once, then `watchers_full`; a place frees when one leaves.
    for n in 0..TIMING.max_watchers {
        let conn = 10 + n as ConnId;
        let (joined, _) = watch(&mut played, conn, &format!("W{n}"), [10, 0, 1, n as u8]);
        assert!(joined, "watcher {n}");
    }
    let (joined, effects) = watch(&mut played, 99, "Late", [10, 0, 2, 1]);
    assert!(!joined);
    assert_eq!(errors(&effects, 99), [codes::WATCHERS_FULL]);
    played.input(Input::Leave { conn: 10 });
    assert!(watch(&mut played, 99, "Late", [10, 0, 2, 1]).0);
}

#[test]
fn the_host_removes_a_watcher_whose_address_stays_out_until_let_back() {
    let mut played = Played::new(Preset::Standard.settings(), 8);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    assert!(join(&mut played, 2, hello("Bina", None, false)).0);
    assert!(watch(&mut played, 3, "Dev", [10, 0, 0, 3]).0);
    assert!(watch(&mut played, 4, "Dev too", [10, 0, 0, 3]).0);
    assert!(watch(&mut played, 5, "Ek", [10, 0, 0, 5]).0);
    // Only the host, and only a watcher there is.
    let effects = played.message(2, ClientMessage::RemoveWatcher { watcher: 1 });
    assert_eq!(errors(&effects, 2), [codes::NOT_HOST]);
    let effects = played.message(1, ClientMessage::RemoveWatcher { watcher: 9 });
    assert_eq!(errors(&effects, 1), [codes::NO_SUCH_WATCHER]);
    let entries = played.log.len();
    let effects = played.message(1, ClientMessage::RemoveWatcher { watcher: 1 });
    assert_eq!(played.log.len(), entries + 1, "the removal is logged");
    // Dev and the other watcher from Dev's address are told and closed; Ek watches on.
    assert_eq!(byes(&effects, 3), [codes::REMOVED]);
    assert_eq!(byes(&effects, 4), [codes::REMOVED]);
    assert_eq!(closed(&effects), [(3, CLOSE_REMOVED), (4, CLOSE_REMOVED)]);
    assert_eq!(watchers_seen(&effects, 1), ["Ek"]);
    let room = sent(&effects, 5)
        .into_iter()
        .rfind(|m| m["type"] == "room")
        .unwrap();
    assert_eq!(room["removed_watchers"], serde_json::json!(["Dev"]));
    // Nobody new from that address, to watch or to sit, until the host lets it back; a seat
    // token still works from anywhere.
    let (joined, effects) = watch(&mut played, 6, "Someone", [10, 0, 0, 3]);
    assert!(!joined);
    assert_eq!(errors(&effects, 6), [codes::REMOVED]);
    let seat_hello = Hello {
        client_seed: None,
        ..hello("Someone", None, false)
    };
    let (joined, effects) = played.input(Input::Join(Joining {
        conn: 6,
        hello: seat_hello.into(),
        id: None,
        token_only: false,
        address: std::net::Ipv4Addr::new(10, 0, 0, 3).into(),
    }));
    assert!(!joined);
    assert_eq!(errors(&effects, 6), [codes::REMOVED]);
    // A restored room keeps them out too.
    let restored = played.restored();
    assert_eq!(restored.durable(), played.core.durable());
    assert_eq!(restored.removed_watchers.len(), 1);
    // Let back: they may watch again.
    let effects = played.message(1, ClientMessage::ReadmitWatcher { removed: 1 });
    assert_eq!(errors(&effects, 1), [codes::NOT_REMOVED]);
    played.message(1, ClientMessage::ReadmitWatcher { removed: 0 });
    assert!(watch(&mut played, 7, "Dev", [10, 0, 0, 3]).0);
    assert_eq!(played.restored().durable(), played.core.durable());
}

#[test]
fn the_host_turns_watching_off_and_a_restored_room_keeps_it_off() {
    let mut played = Played::new(Preset::Standard.settings(), 9);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    assert!(join(&mut played, 2, hello("Bina", None, false)).0);
    assert!(watch(&mut played, 3, "Dev", [10, 0, 0, 3]).0);
    let effects = played.message(2, ClientMessage::SetWatching { allowed: false });
    assert_eq!(errors(&effects, 2), [codes::NOT_HOST]);
    let effects = played.message(1, ClientMessage::SetWatching { allowed: false });
    assert_eq!(byes(&effects, 3), [codes::WATCHING_OFF]);
    assert_eq!(closed(&effects), [(3, CLOSE_WATCHING_OFF)]);
    // Everyone sees that watching is off; the players stay.
    let room = sent(&effects, 2)
        .into_iter()
        .rfind(|m| m["type"] == "room")
        .unwrap();
    assert_eq!(room["watching"], false);
    let (joined, effects) = watch(&mut played, 4, "Ek", [10, 0, 0, 4]);
    assert!(!joined);
    assert_eq!(errors(&effects, 4), [codes::WATCHING_OFF]);
    let mut restored = played.restored();
    assert_eq!(restored.durable(), played.core.durable());
    let mut entropy = TestEntropy(StdRng::seed_from_u64(1));
    let refused = restored.handle(
        Input::Join(Joining {
            conn: 4,
            hello: Hello {
                spectator: true,
                ..hello("Ek", None, false)
            }
            .into(),
            id: None,
            token_only: false,
            address: std::net::Ipv4Addr::new(10, 0, 0, 4).into(),
        }),
        played.now,
        &mut entropy,
    );
    assert_eq!(
        refused,
        Handled::Taken,
        "a restored room keeps watching off"
    );
    // On again: people may watch.
    played.message(1, ClientMessage::SetWatching { allowed: true });
    assert!(watch(&mut played, 4, "Ek", [10, 0, 0, 4]).0);
}

#[test]
fn many_watchers_cannot_flood_the_table_with_reactions() {
    let mut played = Played::new(Preset::Standard.settings(), 10);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    for n in 0..TIMING.max_watchers {
        assert!(
            watch(
                &mut played,
                10 + n as ConnId,
                &format!("W{n}"),
                [10, 0, 1, n as u8]
            )
            .0
        );
    }
    let reactions = |effects: &[Effect]| {
        sent(effects, 1)
            .iter()
            .filter(|m| m["type"] == "reaction")
            .count()
    };
    // Every watcher sends 10 reactions at once: the host sees the watchers' share, no more,
    // and the rest are refused to their senders alone.
    let mut shown = 0;
    let mut refused = 0;
    for round in 0..10 {
        for n in 0..TIMING.max_watchers {
            let conn = 10 + n as ConnId;
            let effects = played.message(
                conn,
                ClientMessage::React {
                    reaction: dhumbal_protocol::Reaction::Laugh,
                },
            );
            shown += reactions(&effects);
            refused += errors(&effects, conn)
                .iter()
                .filter(|c| *c == codes::TOO_MANY_REACTIONS)
                .count();
            assert!(errors(&effects, 1).is_empty(), "round {round}");
        }
    }
    assert_eq!(shown, 8);
    assert_eq!(refused, 10 * TIMING.max_watchers - 8);
    // The players' reactions still get through.
    let effects = played.message(
        1,
        ClientMessage::React {
            reaction: dhumbal_protocol::Reaction::Clap,
        },
    );
    assert_eq!(reactions(&effects), 1);
    // A second later the watchers have a little more.
    played.now += Duration::from_secs(1);
    let mut later = 0;
    for n in 0..TIMING.max_watchers {
        later += reactions(&played.message(
            10 + n as ConnId,
            ClientMessage::React {
                reaction: dhumbal_protocol::Reaction::Wow,
            },
        ));
    }
    assert_eq!(later, 4);
}

/// The `ledger` of the last `room` message sent to `conn` among the effects, if any.
fn ledger_sent(effects: &[Effect], conn: ConnId) -> Option<serde_json::Value> {
    sent(effects, conn)
        .into_iter()
        .rev()
        .find(|m| m["type"] == "room")
        .map(|m| m["ledger"].clone())
}

/// Plays the match on to its end: Asha (seat 0, connection 1) calls when she may and otherwise
/// makes her first legal move, says `ready` between rounds; the bots play on the timer. Returns
/// the effects of the input that ended it.
fn play_out(played: &mut Played) -> Vec<Effect> {
    for _ in 0..20_000 {
        let game = played.core.game.clone().expect("a match");
        let effects = match game.phase() {
            Phase::MatchOver => panic!("the match is already over"),
            Phase::RoundOver => {
                played.message(1, ClientMessage::Ready { client_seed: None });
                played.tick()
            }
            _ if game.turn() == 0 && game.can_call(0) => played.message(1, ClientMessage::Call),
            _ if game.turn() == 0 => move_for(played, 0),
            _ => played.tick(),
        };
        if played.core.stage() == Stage::MatchOver {
            return effects;
        }
    }
    panic!("the match never ended");
}

/// The ledger a room should show after matches with these final standings.
fn expected_ledger(matches: &[Vec<dhumbal_engine::Standing>], names: &[&str]) -> serde_json::Value {
    let seats = matches[0].len();
    let rows: Vec<serde_json::Value> = (0..seats)
        .map(|seat| {
            let of_seat = || matches.iter().flatten().filter(|s| s.seat == seat);
            serde_json::json!({
                "seat": seat,
                "name": names[seat],
                "played": of_seat().count(),
                "won": of_seat().filter(|s| s.place == 1).count(),
                "points": of_seat().map(|s| s.total).sum::<i64>(),
            })
        })
        .collect();
    serde_json::Value::from(rows)
}

#[test]
fn the_ledger_counts_each_finished_match_and_a_replay_gives_the_same_ledger() {
    let settings = Settings {
        players: 3,
        rounds: Rounds::Fixed(2),
        ..Preset::Standard.settings()
    };
    let mut played = Played::new(settings, 77);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    played.message(1, ClientMessage::Start);
    assert!(played.core.ledger.is_empty());
    let names = ["Asha", "Bot 2", "Bot 3"];
    let mut finished = Vec::new();
    for number in 1..=2 {
        // Mid-match nothing is counted for it: the ledger is the finished matches'.
        assert_eq!(
            serde_json::to_value(played.core.ledger_rows()).unwrap(),
            if finished.is_empty() {
                serde_json::json!([])
            } else {
                expected_ledger(&finished, &names)
            },
            "during match {number}"
        );
        assert_eq!(played.restored().ledger, played.core.ledger);
        let effects = play_out(&mut played);
        finished.push(played.core.game.as_ref().unwrap().standings());
        // Everyone hears of it in the `room` that says the match is over.
        assert_eq!(
            ledger_sent(&effects, 1),
            Some(expected_ledger(&finished, &names)),
            "after match {number}"
        );
        // The replay of the match counts it too.
        assert_eq!(played.restored().ledger, played.core.ledger);
        assert_eq!(played.restored().durable(), played.core.durable());
        played.message(1, ClientMessage::Rematch { client_seed: None });
        played.tick();
        assert_eq!(
            played.core.stage(),
            Stage::Playing,
            "match {number} rematched"
        );
        // The log restarted from a snapshot that holds the ledger.
        let (_, snapshot) = played.snapshot.clone().expect("a rematch snapshot");
        assert_eq!(snapshot.ledger, played.core.ledger);
        assert_eq!(played.restored().ledger, played.core.ledger);
    }
    let points: i64 = played.core.ledger.iter().map(|r| r.points).sum();
    let totals: i64 = finished.iter().flatten().map(|s| s.total).sum();
    assert_eq!(points, totals);
    assert!(played.core.ledger.iter().all(|r| r.played == 2));
    assert!(played.core.ledger.iter().map(|r| r.won).sum::<u32>() >= 2);
}

#[test]
fn a_shared_first_place_is_a_win_for_each_seat_that_shares_it() {
    use dhumbal_engine::Standing;
    let standing = |seat, place, total| Standing {
        seat,
        place,
        total,
        eliminated: false,
    };
    let mut ledger = Vec::new();
    count_match(
        &mut ledger,
        &[standing(2, 1, 20), standing(0, 1, 20), standing(1, 3, -40)],
    );
    count_match(
        &mut ledger,
        &[standing(1, 1, 30), standing(0, 2, -5), standing(2, 3, -25)],
    );
    let line = |seat, played, won, points| LedgerRecord {
        seat,
        played,
        won,
        points,
    };
    assert_eq!(
        ledger,
        vec![line(0, 2, 1, 15), line(1, 2, 1, -10), line(2, 2, 1, -5)]
    );
}

#[test]
fn a_person_who_moves_seats_in_the_lobby_takes_their_line_of_the_ledger() {
    let settings = Settings {
        players: 3,
        rounds: Rounds::Fixed(1),
        ..Preset::Standard.settings()
    };
    let mut played = Played::new(settings, 78);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    assert!(join(&mut played, 2, hello("Bina", None, false)).0);
    played.message(1, ClientMessage::Start);
    // Bina says ready whenever a round ends: only Asha's moves and votes are driven here.
    played.message(2, ClientMessage::Ready { client_seed: None });
    while played.core.stage() != Stage::MatchOver {
        let game = played.core.game.clone().unwrap();
        match game.phase() {
            Phase::RoundOver => {
                played.message(1, ClientMessage::Ready { client_seed: None });
                played.message(2, ClientMessage::Ready { client_seed: None });
            }
            _ if game.can_call(game.turn()) && game.turn() < 2 => {
                played.message(game.turn() as ConnId + 1, ClientMessage::Call);
            }
            _ if game.turn() < 2 => {
                move_for(&mut played, game.turn());
            }
            _ => {
                played.tick();
            }
        }
    }
    let bina = played.core.ledger[1];
    played.message(1, ClientMessage::ToLobby);
    let effects = played.message(1, ClientMessage::ClearSeat { seat: 2 });
    assert!(errors(&effects, 1).is_empty(), "{effects:?}");
    let effects = played.message(2, ClientMessage::TakeSeat { seat: 2 });
    assert!(errors(&effects, 2).is_empty(), "{effects:?}");
    let rows = played.core.ledger_rows();
    let moved = rows.iter().find(|r| r.seat == 2).unwrap();
    assert_eq!(moved.name.as_deref(), Some("Bina"));
    assert_eq!(
        (moved.played, moved.won, moved.points),
        (bina.played, bina.won, bina.points)
    );
    // The seat she left has the bot's old line, and nobody's name.
    let left = rows.iter().find(|r| r.seat == 1).unwrap();
    assert_eq!(left.name, None);
    assert_eq!(played.restored().ledger, played.core.ledger);
}

// ----- The view as a patch -----

/// What the test's clients hold: each connection's view as it follows its messages, and its
/// seat.
#[derive(Default)]
struct Clients {
    held: HashMap<ConnId, (Option<usize>, dhumbal_protocol::HeldView)>,
    /// How many `patch`es and whole `state`s were followed, and their bytes.
    patches: (usize, usize),
    states: (usize, usize),
    /// Connections that saw a patch that does not build on their view (they ask for the whole
    /// view).
    stale: Vec<ConnId>,
    /// Connections that missed a patch and have not yet had a whole view since (they notice at
    /// the next patch).
    behind: Vec<ConnId>,
    /// A connection that is to miss its next patch.
    drop_next: Option<ConnId>,
}

impl Clients {
    /// Follows every message `effects` sends; the connection in `drop_next` misses the next
    /// `patch` it is sent.
    fn follow(&mut self, effects: &[Effect]) {
        for effect in effects {
            let Effect::Send { to, text } = effect else {
                continue;
            };
            let Some((_, held)) = self.held.get_mut(to) else {
                continue;
            };
            let message: ServerMessage = serde_json::from_str(text.as_str()).unwrap();
            match &message {
                ServerMessage::Patch(_) if self.drop_next == Some(*to) => {
                    self.drop_next = None;
                    self.behind.push(*to);
                    continue;
                }
                ServerMessage::Patch(_) => {
                    if std::env::var("SHOW_PATCHES").is_ok() && self.patches.0 < 40 {
                        println!("{to}: {text}");
                    }
                    self.patches.0 += 1;
                    self.patches.1 += text.len();
                }
                ServerMessage::State { .. } => {
                    self.states.0 += 1;
                    self.states.1 += text.len();
                    self.behind.retain(|c| c != to);
                }
                _ => {}
            }
            if held.follow(&message).is_err() && !self.stale.contains(to) {
                self.stale.push(*to);
            }
        }
    }

    /// Each connection's view is the engine's for its seat (a spectator's for a watcher).
    fn check(&self, core: &RoomCore, at: &str) {
        let Some(game) = &core.game else {
            return;
        };
        for (conn, (seat, held)) in &self.held {
            if self.behind.contains(conn) {
                continue;
            }
            let view = held
                .view
                .as_ref()
                .unwrap_or_else(|| panic!("{at}: {conn} has no view"));
            assert_eq!(
                *view,
                game.view_of(*seat),
                "{at}: connection {conn}, seat {seat:?}"
            );
        }
    }
}

/// The message that asks for `action`.
fn as_message(action: Action) -> ClientMessage {
    match action {
        Action::Call => ClientMessage::Call,
        Action::Draw { from } => {
            let (from, card) = match from {
                dhumbal_engine::Source::Stock => (dhumbal_protocol::DrawFrom::Stock, None),
                dhumbal_engine::Source::Pile => (dhumbal_protocol::DrawFrom::Pile, None),
                dhumbal_engine::Source::PileCard(card) => {
                    (dhumbal_protocol::DrawFrom::Pile, Some(card))
                }
            };
            ClientMessage::Draw { from, card }
        }
        Action::Throw { cards } => ClientMessage::Throw { cards },
    }
}

/// Every client's view, as it follows its messages (whole `state`s, then `patch`es), is the
/// engine's view for its seat after every input: whole matches (and a rematch) of every preset
/// at 2, 4 and 6 seats, people in two seats and bots in the rest, a watcher, a turn timer at
/// some tables (a stand-in plays a turn that runs out), a person who goes away and comes back
/// (a whole view again), `resync` asked at random, and a connection that misses one patch,
/// sees the next one does not build on its view, and asks for the whole view again.
#[test]
fn every_clients_patched_view_is_the_engines_at_every_step() {
    let mut patch_bytes = (0, 0);
    for preset in Preset::ALL {
        for players in [2u8, 4, 6] {
            let settings = Settings {
                players,
                rounds: Rounds::Fixed(2),
                turn_timer: (players == 6).then_some(15),
                ..preset.settings()
            };
            if settings.validate().is_err() {
                continue;
            }
            let at = |step: usize| format!("{preset:?} at {players} seats, step {step}");
            let mut played = Played::new(settings, u64::from(players));
            let mut rng = StdRng::seed_from_u64(u64::from(players) * 7);
            let mut clients = Clients::default();
            clients.held.insert(1, (Some(0), Default::default()));
            clients.held.insert(2, (Some(1), Default::default()));
            let (_, effects) = join(&mut played, 1, hello("Asha", None, true));
            clients.follow(&effects);
            let (_, effects) = join(&mut played, 2, hello("Bina", None, false));
            clients.follow(&effects);
            let token = |effects: &[Effect], conn| {
                sent(effects, conn)
                    .iter()
                    .find(|m| m["type"] == "welcome")
                    .and_then(|m| m["token"].as_str().map(str::to_owned))
            };
            let mut bina = token(&effects, 2);
            let effects = played.message(1, ClientMessage::Start);
            clients.follow(&effects);
            clients.held.insert(99, (None, Default::default()));
            let (_, effects) = watch(&mut played, 99, "Dev", [10, 0, 0, 1]);
            clients.follow(&effects);
            let mut bina_conn = 2;
            let mut next_conn = 3;
            let mut matches = 0;
            let mut resyncs = 0;
            for step in 0..40_000usize {
                let game = played.core.game.clone().expect("a match");
                if step % 29 == 10 {
                    clients.drop_next = Some(1);
                }
                let effects = match game.phase() {
                    Phase::MatchOver => {
                        matches += 1;
                        if matches == 2 {
                            break;
                        }
                        let mut effects =
                            played.message(1, ClientMessage::Rematch { client_seed: None });
                        effects.extend(
                            played.message(bina_conn, ClientMessage::Rematch { client_seed: None }),
                        );
                        effects
                    }
                    Phase::RoundOver => {
                        let mut effects =
                            played.message(1, ClientMessage::Ready { client_seed: None });
                        effects.extend(
                            played.message(bina_conn, ClientMessage::Ready { client_seed: None }),
                        );
                        effects.extend(played.tick());
                        effects
                    }
                    _ if step % 41 == 20 && bina_conn != 0 => {
                        // Bina goes away (a stand-in may play her turns) ...
                        clients.held.remove(&bina_conn);
                        let effects = played.input(Input::Leave { conn: bina_conn }).1;
                        bina_conn = 0;
                        effects
                    }
                    _ if step % 41 == 30 && bina_conn == 0 => {
                        // ... and comes back on a new connection: a whole view again.
                        bina_conn = next_conn;
                        next_conn += 1;
                        clients
                            .held
                            .insert(bina_conn, (Some(1), Default::default()));
                        let (joined, effects) =
                            join(&mut played, bina_conn, hello("Bina", bina.clone(), false));
                        assert!(joined, "{}", at(step));
                        if let Some(new) = token(&effects, bina_conn) {
                            bina = Some(new);
                        }
                        effects
                    }
                    _ if rng.random_ratio(1, 60) => played.message(1, ClientMessage::Resync),
                    _ => {
                        let turn = game.turn();
                        let conn = match turn {
                            0 => 1,
                            1 if bina_conn != 0 && !rng.random_ratio(1, 8) => bina_conn,
                            _ => 0,
                        };
                        if conn == 0 {
                            played.tick()
                        } else {
                            let actions = game.legal_actions(turn);
                            let action = actions[rng.random_range(0..actions.len())].clone();
                            played.message(conn, as_message(action))
                        }
                    }
                };
                clients.follow(&effects);
                // A client that missed a patch asks for the whole view, as the page does.
                for conn in std::mem::take(&mut clients.stale) {
                    resyncs += 1;
                    let effects = played.message(conn, ClientMessage::Resync);
                    clients.follow(&effects);
                }
                clients.check(&played.core, &at(step));
            }
            assert_eq!(matches, 2, "{}: the matches did not end", at(0));
            assert!(resyncs > 0, "{}: no patch was missed", at(0));
            assert!(clients.behind.is_empty(), "{}: still behind", at(0));
            if players == 4 && preset == Preset::Standard {
                patch_bytes = (
                    clients.patches.1 / clients.patches.0.max(1),
                    clients.states.1 / clients.states.0.max(1),
                );
            }
            assert!(
                clients.patches.0 > 10 * clients.states.0,
                "{}: mostly patches",
                at(0)
            );
        }
    }
    println!(
        "standard table, 4 seats: mean patch {} bytes, mean whole state {} bytes",
        patch_bytes.0, patch_bytes.1
    );
}

/// The coach's jobs from the core's side. A hint goes out with the asker's own view (exactly the
/// engine's `view(seat)`) and the public history, and nothing else; off the asker's turn, at a
/// table without hints or from a watcher it is refused, with no job and no record. A review is
/// refused before the match's end, and a person may not ask for another seat's.
#[test]
fn the_coach_gets_the_askers_view_alone_and_refusals_make_no_job() {
    let jobs = |effects: &[Effect]| {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Coach(job) => Some(job.conn),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    for hints in [false, true] {
        let settings = Settings {
            players: 2,
            hints,
            ..Preset::Standard.settings()
        };
        let mut played = Played::new(settings, 5);
        join(&mut played, 1, hello("Asha", None, true));
        join(&mut played, 2, hello("Bina", None, false));
        join(
            &mut played,
            3,
            Hello {
                spectator: true,
                ..hello("Dev", None, false)
            },
        );
        played.message(1, ClientMessage::Start);
        let turn = played.core.game.as_ref().unwrap().turn();
        let (on, off) = if turn == 0 { (1, 2) } else { (2, 1) };
        let logged = played.log.len();
        // A table without hints says so to anyone seated, whoever's turn it is.
        let (turn_code, on_code) = if hints {
            ("not_your_turn", "")
        } else {
            ("hints_off", "hints_off")
        };
        for (conn, code) in [(off, turn_code), (3, "not_seated"), (on, on_code)] {
            let effects = played.message(conn, ClientMessage::Hint);
            if code.is_empty() {
                assert_eq!(jobs(&effects), [conn]);
                let Some(Effect::Coach(job)) =
                    effects.iter().find(|e| matches!(e, Effect::Coach(_)))
                else {
                    unreachable!()
                };
                let game = played.core.game.as_ref().unwrap();
                match &job.ask {
                    Ask::Hint { view, history, .. } => {
                        assert_eq!(**view, game.view(turn));
                        assert_eq!(**history, *game.public_history());
                    }
                    Ask::Review { .. } => panic!("a review for a hint"),
                }
            } else {
                assert_eq!(errors(&effects, conn), [code], "{conn}");
                assert!(jobs(&effects).is_empty());
            }
        }
        assert_eq!(played.log.len(), logged, "a hint logs nothing");
        let effects = played.message(on, ClientMessage::Review { seat: None });
        assert_eq!(errors(&effects, on), ["no_review"]);
        assert!(jobs(&effects).is_empty());
    }
}

/// The room is written once for everyone: each seated client's text is the message made for its
/// seat, byte for byte, even when a name holds the text its seat is spliced at; the watchers
/// share one text, made for no seat.
#[test]
fn the_room_written_once_is_each_clients_own() {
    let mut played = Played::new(Preset::Standard.settings(), 11);
    assert!(join(&mut played, 1, hello("Asha", None, true)).0);
    let tricky = "\"your_seat\":null é";
    let (joined, effects) = join(&mut played, 2, hello(tricky, None, false));
    assert!(joined, "{:?}", errors(&effects, 2));
    assert!(watch(&mut played, 3, "Dev", [10, 0, 0, 3]).0);
    assert!(watch(&mut played, 4, "Ela", [10, 0, 0, 4]).0);
    played.core.broadcast_room();
    let effects = played.step();
    let mut watchers = Vec::new();
    for conn in 1..=4 {
        let texts: Vec<&Text> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { to, text } if *to == conn => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(texts.len(), 1, "one room for {conn}");
        let seat = played.core.clients[&conn].seat;
        let expected = ServerMessage::Room(played.core.room_state(seat)).to_json();
        assert_eq!(texts[0].as_str(), expected, "connection {conn}");
        if seat.is_none() {
            watchers.push(texts[0].clone().into_bytes().as_ptr());
        }
    }
    assert_eq!(watchers.len(), 2);
    assert_eq!(watchers[0], watchers[1], "the watchers share one text");
    assert!(super::tell::split_at_your_seat("{\"type\":\"room\"}").is_none());
    // The settings' JSON the room keeps is written again when the settings change.
    let host = (1..=2)
        .find(|c| played.core.clients[c].seat == played.core.host_seat())
        .unwrap();
    let effects = played.message(
        host,
        ClientMessage::SetPreset {
            preset: Preset::Yaniv,
        },
    );
    assert!(
        errors(&effects, host).is_empty(),
        "{:?}",
        errors(&effects, host)
    );
    assert_ne!(played.core.settings, Preset::Standard.settings());
    played.core.broadcast_room();
    let effects = played.step();
    for conn in 1..=4 {
        let seat = played.core.clients[&conn].seat;
        let expected = ServerMessage::Room(played.core.room_state(seat)).to_json();
        let text = effects.iter().find_map(|e| match e {
            Effect::Send { to, text } if *to == conn => Some(text.as_str()),
            _ => None,
        });
        assert_eq!(
            text,
            Some(expected.as_str()),
            "connection {conn}, new settings"
        );
    }
}

/// Consecutive connection numbers hash apart, in the high bits a map's tags are made of too.
#[test]
fn connection_numbers_hash_apart() {
    use std::hash::BuildHasher;
    let hasher = std::hash::BuildHasherDefault::<ConnHasher>::default();
    let hashes: Vec<u64> = (0..1000u64).map(|c| hasher.hash_one(c)).collect();
    let mut distinct = hashes.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), hashes.len());
    let mut tags: Vec<u64> = hashes.iter().take(16).map(|h| h >> 57).collect();
    tags.sort_unstable();
    tags.dedup();
    assert!(tags.len() > 8, "{tags:?}");
    let mut map = ConnMap::default();
    map.insert(7, "seven");
    assert_eq!(map.get(&7), Some(&"seven"));
    assert_ne!(hasher.hash_one("ab"), hasher.hash_one("ba"));
}
