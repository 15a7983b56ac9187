//! `loadgen play`: rooms of people playing random legal actions, the relays and echo baselines, and the store comparison.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dhumbal_engine::{Difficulty, Phase};
use dhumbal_protocol::{
    ClientEnvelope, ClientMessage, CreatedRoom, HeldView, Hello, PROTOCOL_VERSION, Patch,
    ServerMessage,
};
use dhumbal_tests::random_action;
use hdrhistogram::Histogram;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::sync::Semaphore;

use crate::report::{Measure, Unit, command_line, spread_cell, table_row};
use crate::server::{
    Counts, Server, cpu_seconds, cpu_split, histogram_quantile, metrics_text, store_cpu_seconds,
};
use crate::sockets::{Peek, Ws, connect, create_room, recv, recv_text, send, source};
use crate::{Bots, MAX_CLIENTS, PlayArgs, SETUP_LIMIT, StoreChoice};

/// What one client or room measured.
pub(crate) struct Tally {
    /// Latency from an action to its resulting state (or echo), in microseconds.
    pub(crate) latency: Histogram<u64>,
    /// Actions answered.
    pub(crate) actions: u64,
    /// Matches finished (seen by the room's first seat).
    matches: u64,
    /// Errors, by kind.
    pub(crate) errors: BTreeMap<String, u64>,
    /// Clients that connected.
    pub(crate) connected: u64,
    /// Bytes of text the clients received while playing (WebSocket payloads).
    received: u64,
    /// Rooms whose clients these are (people's rooms only: those beside bots are in
    /// `beside_bots`).
    rooms: u64,
    /// The people in rooms of bots (`--bot-rooms`): their latency and actions, kept apart from
    /// everyone else's.
    beside_bots: Option<Box<Tally>>,
}

impl Tally {
    pub(crate) fn new() -> Tally {
        Tally {
            latency: Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid bounds"),
            actions: 0,
            matches: 0,
            errors: BTreeMap::new(),
            connected: 0,
            received: 0,
            rooms: 0,
            beside_bots: None,
        }
    }

    /// This tally, counted as that of people beside bots.
    fn beside_bots(self) -> Tally {
        let mut apart = Tally::new();
        apart.beside_bots = Some(Box::new(self));
        apart
    }

    /// Counts an action answered, `sent` being when it was sent.
    fn answered(&mut self, sent: Instant) {
        let micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.latency.saturating_record(micros.max(1));
        self.actions += 1;
    }

    fn error(&mut self, kind: impl Into<String>) {
        *self.errors.entry(kind.into()).or_default() += 1;
    }

    fn add(&mut self, other: Tally) {
        self.latency.add(&other.latency).expect("same bounds");
        self.received += other.received;
        self.rooms += other.rooms;
        self.actions += other.actions;
        self.matches += other.matches;
        self.connected += other.connected;
        for (kind, n) in other.errors {
            *self.errors.entry(kind).or_default() += n;
        }
        if let Some(other) = other.beside_bots {
            match &mut self.beside_bots {
                Some(mine) => mine.add(*other),
                None => self.beside_bots = Some(other),
            }
        }
    }

    pub(crate) fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// The first word of an error, to group errors by kind.
pub(crate) fn kind(error: &str) -> String {
    error.split([':', ' ']).next().unwrap_or(error).to_owned()
}

/// Opens a room of people, `--humans` of them (the first is the host). Returns their sockets.
pub(crate) async fn seat_room(
    args: &PlayArgs,
    server: SocketAddr,
    room: usize,
    gate: &Semaphore,
) -> Result<Vec<Ws>, String> {
    let created = create_room(server, args.humans, Difficulty::Medium).await?;
    seat_people(args, server, room, gate, &created, args.humans).await
}

/// Opens one room of a person (the host) and three bots of `--bots`. Returns the person's socket.
pub(crate) async fn seat_bot_room(
    args: &PlayArgs,
    server: SocketAddr,
    room: usize,
    gate: &Semaphore,
) -> Result<Vec<Ws>, String> {
    let created = create_room(server, 4, args.bots.difficulty()).await?;
    seat_people(args, server, room, gate, &created, 1).await
}

/// Joins `people` people to the room `created` (the first is the host), each on a socket of
/// its own. Returns their sockets.
pub(crate) async fn seat_people(
    args: &PlayArgs,
    server: SocketAddr,
    room: usize,
    gate: &Semaphore,
    created: &CreatedRoom,
    people: u8,
) -> Result<Vec<Ws>, String> {
    let mut seats = Vec::new();
    let deadline = tokio::time::Instant::now() + SETUP_LIMIT;
    for n in 0..usize::from(people) {
        let from = source(&args.common, room * usize::from(args.humans) + n);
        let mut ws = {
            let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
            connect(server, from, &created.ws, args.compress).await?
        };
        let hello = Hello {
            protocol: PROTOCOL_VERSION,
            room: created.code.clone(),
            name: format!("P{n}"),
            token: None,
            spectator: false,
            host_secret: (n == 0).then(|| created.host_secret.clone()),
            client_seed: None,
        };
        send(&mut ws, ClientMessage::from(hello)).await?;
        loop {
            match recv(&mut ws, deadline).await? {
                Some(ServerMessage::Welcome(_)) => break,
                Some(ServerMessage::Error(e)) => return Err(format!("hello: {}", e.code)),
                Some(_) => {}
                None => return Err("no welcome in time".into()),
            }
        }
        seats.push(ws);
    }
    Ok(seats)
}

/// Prints how the people beside bots were answered, and how long the server's experts thought
/// (from its `/metrics`).
pub(crate) async fn print_beside_bots(
    game: &Run,
    rooms: usize,
    bots: Bots,
    server: SocketAddr,
) -> Result<(), String> {
    let ms = |v: u64| v as f64 / 1000.0;
    if let Some(apart) = &game.tally.beside_bots {
        let l = &apart.latency;
        println!(
            "beside bots:        {rooms} rooms of a person and 3 {bots:?} bots: {} of the person's actions, latency (ms) p50 {:.3}  p99 {:.3}  max {:.3}; {} matches, {} errors",
            apart.actions,
            ms(l.value_at_quantile(0.5)),
            ms(l.value_at_quantile(0.99)),
            ms(l.max()),
            apart.matches,
            apart.error_count()
        );
    }
    print_histogram(
        server,
        "dhumbal_bot_think_seconds",
        "experts thinking:  ",
        "decisions sent to think",
    )
    .await
}

/// Prints the p50, p99 and largest bucket bounds of the server's histogram `series` (its name,
/// and its labels if it has any), if it has any samples: `what` heads the line, and `counted`
/// says what its samples are.
pub(crate) async fn print_histogram(
    server: SocketAddr,
    series: &str,
    what: &str,
    counted: &str,
) -> Result<(), String> {
    let text = metrics_text(server).await?;
    if let (Some((p50, n)), Some((p99, _)), Some((max, _))) = (
        histogram_quantile(&text, series, 0.5),
        histogram_quantile(&text, series, 0.99),
        histogram_quantile(&text, series, 1.0),
    ) {
        println!(
            "{what} p50 <= {:.3} ms, p99 <= {:.3} ms, max <= {:.3} ms over {n} {counted} \
             (bucket bounds, /metrics)",
            p50 * 1000.0,
            p99 * 1000.0,
            max * 1000.0
        );
    }
    Ok(())
}

/// Plays one seat until `deadline`: random legal actions on its turns, `ready` between rounds,
/// `rematch` after each match.
pub(crate) async fn play_seat(
    mut ws: Ws,
    seed: u64,
    think: Duration,
    deadline: tokio::time::Instant,
) -> Tally {
    let mut tally = Tally::new();
    tally.connected = 1;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pending: Option<Instant> = None;
    let mut ready_for = 0;
    let mut held = HeldView::default();
    // Only what is read while playing counts: not the welcome and the views before.
    ws.wire = 0;
    loop {
        let text = match recv_text(&mut ws, deadline).await {
            Ok(Some(text)) => text,
            Ok(None) => break,
            Err(e) => {
                tally.error(kind(&e));
                tally.received += ws.wire;
                return tally;
            }
        };
        // Room updates need no answer: skip them unparsed.
        if text.as_str().starts_with(r#"{"type":"room""#) {
            continue;
        }
        // A patch, nearly every message while playing, is read once and straight into its
        // struct: read as the tagged `ServerMessage` (after a first look at its type), serde
        // buffers the whole message and reads it again, and this client's CPU is taken from the
        // two cores the server runs on.
        let patch = text.as_str().starts_with(r#"{"type":"patch","#);
        let peek: Peek = if patch {
            Peek {
                kind: "patch".to_owned(),
                code: None,
            }
        } else {
            match serde_json::from_str(text.as_str()) {
                Ok(peek) => peek,
                Err(e) => {
                    tally.error(format!("bad message {e}"));
                    continue;
                }
            }
        };
        let answer = match peek.kind.as_str() {
            "state" | "patch" => {
                if let Some(sent) = pending.take() {
                    tally.answered(sent);
                }
                // The whole view, or what changed in it: the view held follows both.
                let message = if patch {
                    serde_json::from_str::<Patch>(text.as_str()).map(ServerMessage::Patch)
                } else {
                    serde_json::from_str::<ServerMessage>(text.as_str())
                };
                let followed = message
                    .map_err(|e| e.to_string())
                    .and_then(|m| held.follow(&m).map_err(|s| format!("stale patch {s:?}")));
                let view = match (followed, &held.view) {
                    (Ok(_), Some(view)) => view,
                    (Err(e), _) => {
                        tally.error(e);
                        if let Err(e) = send(&mut ws, ClientMessage::Resync).await {
                            tally.error(kind(&e));
                            tally.received += ws.wire;
                            return tally;
                        }
                        continue;
                    }
                    (Ok(_), None) => continue,
                };
                if view.my_turn() {
                    if !think.is_zero() {
                        tokio::time::sleep(think).await;
                    }
                    pending = Some(Instant::now());
                    Some(random_action(view, &mut rng))
                } else if view.phase == Phase::RoundOver && ready_for < view.round {
                    ready_for = view.round;
                    Some(ClientMessage::Ready { client_seed: None })
                } else {
                    None
                }
            }
            "match_result" => {
                tally.matches += 1;
                ready_for = 0;
                Some(ClientMessage::Rematch { client_seed: None })
            }
            "error" => {
                tally.error(format!("error {}", peek.code.unwrap_or_default()));
                pending = None;
                None
            }
            _ => None,
        };
        if let Some(answer) = answer {
            if let Err(e) = send(&mut ws, answer).await {
                tally.error(kind(&e));
                tally.received += ws.wire;
                return tally;
            }
        }
    }
    tally.received += ws.wire;
    ws.close().await;
    tally
}

/// The same shape of load against a diagnostic route: each room's sockets take turns sending
/// `message`, until `deadline`. The sender's own copy back ends its wait; with `whole_room` (the
/// relay sends each message to every socket of the room) every socket reads its copy before the
/// next turn.
pub(crate) async fn take_turns(
    mut seats: Vec<Ws>,
    message: String,
    whole_room: bool,
    think: Duration,
    deadline: tokio::time::Instant,
) -> Tally {
    let mut tally = Tally::new();
    tally.connected = seats.len() as u64;
    tally.rooms = 1;
    let readers = if whole_room { seats.len() } else { 1 };
    let mut turn = 0;
    'play: while tokio::time::Instant::now() < deadline {
        if !think.is_zero() {
            tokio::time::sleep(think).await;
        }
        let sent = Instant::now();
        if let Err(e) = seats[turn].send_text(message.clone()).await {
            tally.error(kind(&e));
            break;
        }
        for n in 0..readers {
            let seat = (turn + n) % seats.len();
            match recv_text(&mut seats[seat], deadline).await {
                Ok(Some(_)) => {}
                Ok(None) => break 'play,
                Err(e) => {
                    tally.error(kind(&e));
                    break 'play;
                }
            }
            if n == 0 {
                tally.answered(sent);
            }
        }
        turn = (turn + 1) % seats.len();
    }
    for mut ws in seats {
        tally.received += ws.wire;
        ws.close().await;
    }
    tally
}

/// A bare baseline of the game, on the server's diagnostic routes (`--ws-echo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Baseline {
    /// `/ws-room-relay/{group}`: each message of a room's socket goes through a task per room
    /// (as a game room's does) to every socket of the room.
    RoomRelay,
    /// `/ws-relay/{group}`: each message of a room's socket goes from its reader straight to
    /// every socket of the room.
    Relay,
    /// `/ws-echo`: each message goes back to its sender.
    Echo,
}

impl Baseline {
    /// Every baseline, in the order they run and are printed.
    pub(crate) const ALL: [Baseline; 3] = [Baseline::RoomRelay, Baseline::Relay, Baseline::Echo];

    /// Its name in what is printed.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Baseline::RoomRelay => "room relay",
            Baseline::Relay => "relay",
            Baseline::Echo => "echo",
        }
    }

    /// Whether every socket of the room gets each message (the relays), not only its sender.
    fn whole_room(self) -> bool {
        self != Baseline::Echo
    }

    /// The path a socket of room number `room` opens.
    fn path(self, room: usize) -> String {
        match self {
            Baseline::RoomRelay => format!("/ws-room-relay/room{room}"),
            Baseline::Relay => format!("/ws-relay/room{room}"),
            Baseline::Echo => "/ws-echo".to_owned(),
        }
    }

    /// What its run is, as printed above its figures; `size` is the relays' message size.
    fn describe(self, size: usize) -> String {
        match self {
            Baseline::RoomRelay => format!(
                "room relay: the same rooms against /ws-room-relay, each message of {size} bytes \
                 through the room's task to the whole room"
            ),
            Baseline::Relay => format!(
                "relay: the same rooms against /ws-relay, each message of {size} bytes to the \
                 whole room"
            ),
            Baseline::Echo => {
                "echo: the same rooms of sockets against /ws-echo, one action-sized message back"
                    .to_owned()
            }
        }
    }
}

/// What each diagnostic baseline sends: an action-sized message to the echo, or a message of
/// `size` bytes to a relay.
pub(crate) fn diagnostic_message(baseline: Baseline, size: usize) -> String {
    if baseline.whole_room() {
        let frame = r#"{"type":"relay","pad":""}"#;
        format!(
            r#"{{"type":"relay","pad":"{}"}}"#,
            "x".repeat(size.saturating_sub(frame.len()))
        )
    } else {
        serde_json::to_string(&ClientEnvelope::from(ClientMessage::Draw {
            from: dhumbal_protocol::DrawFrom::Stock,
            card: None,
        }))
        .expect("serializes")
    }
}

/// Opens the sockets of one room on a diagnostic route: `/ws-echo`, or a relay's group named
/// after the room.
pub(crate) async fn seat_diagnostic_room(
    args: &PlayArgs,
    server: SocketAddr,
    room: usize,
    gate: &Semaphore,
    baseline: Baseline,
) -> Result<Vec<Ws>, String> {
    let path = baseline.path(room);
    let mut seats = Vec::new();
    for n in 0..usize::from(args.humans) {
        let from = source(&args.common, room * usize::from(args.humans) + n);
        let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
        seats.push(connect(server, from, &path, false).await?);
    }
    Ok(seats)
}

/// What a play run measured.
pub(crate) struct Run {
    /// What the clients counted.
    pub(crate) tally: Tally,
    /// Seconds of play.
    pub(crate) seconds: f64,
    /// The server's resident memory and its peak (KiB) before the clients connected.
    pub(crate) memory_before: (u64, u64),
    /// The same halfway through the play.
    pub(crate) memory_during: (u64, u64),
    /// The same once every room had stopped playing.
    pub(crate) memory_after: (u64, u64),
    /// CPU seconds the server and this program used while playing.
    pub(crate) cpu: (f64, f64),
    /// Of the server's, the seconds spent in the kernel (system time, from `/proc/PID/stat`):
    /// its sockets' work, mostly.
    pub(crate) server_system: f64,
    /// CPU seconds the SQLite store's writer and checkpointer threads used while playing (0
    /// with another store, or a server this program did not start).
    pub(crate) store_cpu: (f64, f64),
    /// What callgrind counted in the server while playing, with `--callgrind`.
    pub(crate) counts: Option<Counts>,
}

impl Run {
    /// The server's instructions per action answered, with `--callgrind`.
    pub(crate) fn instructions_per_action(&self) -> Option<f64> {
        self.counts.map(|c| self.per_action(c.instructions))
    }

    /// The server's simulated cache misses per action answered (first-level instruction,
    /// first-level data, last level), with `--callgrind --cache-sim`.
    pub(crate) fn misses_per_action(&self) -> Option<[f64; 3]> {
        let m = self.counts?.misses?;
        Some([m.l1_instruction, m.l1_data, m.last_level].map(|n| self.per_action(n)))
    }

    /// A count divided by the actions answered.
    fn per_action(&self, count: u64) -> f64 {
        count as f64 / self.tally.actions.max(1) as f64
    }

    /// Actions answered per second of play.
    pub(crate) fn actions_per_second(&self) -> f64 {
        self.tally.actions as f64 / self.seconds
    }

    /// The median latency, in milliseconds.
    pub(crate) fn p50_ms(&self) -> f64 {
        self.tally.latency.value_at_quantile(0.5) as f64 / 1000.0
    }

    /// The 99th percentile of latency, in milliseconds.
    pub(crate) fn p99_ms(&self) -> f64 {
        self.tally.latency.value_at_quantile(0.99) as f64 / 1000.0
    }

    /// The server's CPU time per action answered, in microseconds.
    pub(crate) fn cpu_per_action_us(&self) -> f64 {
        1e6 * self.cpu.0 / self.tally.actions.max(1) as f64
    }

    /// The server's CPU time per action answered in user space and in the kernel, in
    /// microseconds.
    pub(crate) fn cpu_split_per_action_us(&self) -> (f64, f64) {
        (self.user_per_action_us(), self.system_per_action_us())
    }

    /// The server's CPU time per action answered in user space, in microseconds.
    pub(crate) fn user_per_action_us(&self) -> f64 {
        self.cpu_per_action_us() - self.system_per_action_us()
    }

    /// The server's CPU time per action answered in the kernel, in microseconds.
    pub(crate) fn system_per_action_us(&self) -> f64 {
        1e6 * self.server_system / self.tally.actions.max(1) as f64
    }

    /// The SQLite store's writer thread's CPU time per action answered, in microseconds.
    fn writer_per_action_us(&self) -> f64 {
        1e6 * self.store_cpu.0 / self.tally.actions.max(1) as f64
    }

    /// The SQLite store's checkpointer thread's CPU time per action answered, in microseconds.
    fn checkpointer_per_action_us(&self) -> f64 {
        1e6 * self.store_cpu.1 / self.tally.actions.max(1) as f64
    }

    /// Bytes each client received per action of its room, on average: every WebSocket payload
    /// a client read while playing, divided by its room's actions (the actions ÷ the rooms ×
    /// the clients).
    pub(crate) fn bytes_per_client_per_action(&self) -> f64 {
        let t = &self.tally;
        let clients_per_room = t.connected as f64 / t.rooms.max(1) as f64;
        t.received as f64 / (t.actions.max(1) as f64 * clients_per_room.max(1.0))
    }

    /// The server's resident memory once the rooms had stopped playing, in KiB.
    pub(crate) fn memory_after_kib(&self) -> f64 {
        self.memory_after.0 as f64
    }

    /// Prints what the run measured, under the title `what`.
    fn print(&self, what: &str) {
        let t = &self.tally;
        let ms = |v: u64| v as f64 / 1000.0;
        println!("== {what}");
        println!("clients connected:  {}", t.connected);
        println!(
            "actions:            {} in {:.1} s = {:.0} actions/s",
            t.actions,
            self.seconds,
            self.actions_per_second()
        );
        println!(
            "latency (ms):       mean {:.3}  p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
            t.latency.mean() / 1000.0,
            ms(t.latency.value_at_quantile(0.5)),
            ms(t.latency.value_at_quantile(0.9)),
            ms(t.latency.value_at_quantile(0.99)),
            ms(t.latency.value_at_quantile(0.999)),
            ms(t.latency.max())
        );
        println!(
            "bytes received:     {} in all, {:.0} per client per action",
            t.received,
            self.bytes_per_client_per_action()
        );
        if t.matches > 0 {
            println!("matches finished:   {} (counted by every seat)", t.matches);
        }
        println!("errors:             {} {:?}", t.error_count(), t.errors);
        println!(
            "server RSS (KiB):   before {}  during {}  after {}  (peak {})",
            self.memory_before.0, self.memory_during.0, self.memory_after.0, self.memory_after.1
        );
        let (user, system) = self.cpu_split_per_action_us();
        println!(
            "CPU while playing:  server {:.1} s ({:.0}% of a core, {:.0} us per action: user {user:.0}, \
             system {system:.0}), loadgen {:.1} s",
            self.cpu.0,
            100.0 * self.cpu.0 / self.seconds,
            self.cpu_per_action_us(),
            self.cpu.1
        );
        if let (Some(counts), Some(per_action)) = (self.counts, self.instructions_per_action()) {
            println!(
                "instructions:       {} in the server's threads while playing (callgrind), {per_action:.0} per action",
                counts.instructions
            );
        }
        if let Some([i1, d1, last]) = self.misses_per_action() {
            println!(
                "cache misses:       {i1:.0} L1 instruction, {d1:.0} L1 data, {last:.0} last level (2 MiB) per action (simulated)"
            );
        }
        if self.store_cpu != (0.0, 0.0) {
            println!(
                "store threads:      writer {:.1} us per action, checkpointer {:.2} us per action",
                self.writer_per_action_us(),
                self.checkpointer_per_action_us()
            );
        }
    }
}

/// Runs one workload of `rooms` rooms: `seat` opens each room's sockets, `drive` plays them
/// until the deadline.
pub(crate) async fn run_rooms<S, SF, D, DF>(
    args: &PlayArgs,
    rooms: usize,
    server: &Server,
    seat: S,
    drive: D,
) -> Result<Run, String>
where
    S: Fn(usize, Arc<Semaphore>) -> SF,
    SF: std::future::Future<Output = Result<Vec<Ws>, String>> + Send + 'static,
    D: Fn(Vec<Ws>, u64, tokio::time::Instant) -> DF,
    DF: std::future::Future<Output = Tally> + Send + 'static,
{
    let memory_before = server.memory();
    let gate = Arc::new(Semaphore::new(args.common.connecting));
    let setup = std::time::Instant::now();
    let mut opening = tokio::task::JoinSet::new();
    for room in 0..rooms {
        let seated = seat(room, Arc::clone(&gate));
        opening.spawn(async move { (room, seated.await) });
    }
    let mut rooms = Vec::new();
    let mut tally = Tally::new();
    while let Some(joined) = opening.join_next().await {
        match joined {
            Ok((room, Ok(seats))) => rooms.push((room, seats)),
            Ok((_, Err(e))) => tally.error(format!("setup {}", kind(&e))),
            Err(e) => tally.error(format!("setup task {e}")),
        }
    }
    println!(
        "{} rooms seated in {:.1} s",
        rooms.len(),
        setup.elapsed().as_secs_f64()
    );
    server.count_from_now()?;
    let started = Instant::now();
    let cpu_before = (cpu_seconds(server.pid()), cpu_seconds(std::process::id()));
    let system_before = cpu_split(server.pid()).1;
    let store_before = store_cpu_seconds(server.pid());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(args.seconds);
    let mut playing = tokio::task::JoinSet::new();
    for (room, seats) in rooms {
        playing.spawn(drive(seats, room as u64, deadline));
    }
    // Memory while every client is connected and playing: halfway through.
    tokio::time::sleep(Duration::from_secs(args.seconds) / 2).await;
    let memory_during = server.memory();
    while let Some(done) = playing.join_next().await {
        match done {
            Ok(room_tally) => tally.add(room_tally),
            Err(e) => tally.error(format!("task {e}")),
        }
    }
    let cpu = (
        cpu_seconds(server.pid()) - cpu_before.0,
        cpu_seconds(std::process::id()) - cpu_before.1,
    );
    let server_system = cpu_split(server.pid()).1 - system_before;
    let store_after = store_cpu_seconds(server.pid());
    let store_cpu = (
        store_after.0 - store_before.0,
        store_after.1 - store_before.1,
    );
    let memory_after = server.memory();
    let counts = server.counted()?;
    Ok(Run {
        tally,
        cpu,
        server_system,
        store_cpu,
        counts,
        seconds: started
            .elapsed()
            .as_secs_f64()
            .min(args.seconds as f64)
            .max(0.001),
        memory_before,
        memory_during,
        memory_after,
    })
}

/// What a play run measured: the game (on the last store, with `--store both`) and, with
/// `--echo`, its three baselines.
pub(crate) struct PlayFigures {
    /// The game's workload.
    pub(crate) game: Run,
    /// The same rooms against the room relay, the relay and the echo, with `--echo`.
    pub(crate) baselines: Option<Baselines>,
}

/// The game's baselines on the same server, in the order of [`Baseline::ALL`].
pub(crate) type Baselines = [Run; 3];

/// `a / b`, or NaN if `b` is not positive (a baseline that answered nothing).
pub(crate) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

impl PlayArgs {
    /// How many clients the run opens, if its flags are within bounds.
    pub(crate) fn clients(&self) -> Result<usize, String> {
        let clients = self.rooms * usize::from(self.humans) + self.bot_rooms;
        if clients > MAX_CLIENTS || !(2..=6).contains(&self.humans) {
            return Err(format!(
                "at most {MAX_CLIENTS} clients and 2 to 6 people a room"
            ));
        }
        Ok(clients)
    }
}

/// The play mode: prints what it measures, and returns it.
pub(crate) async fn play(args: PlayArgs) -> Result<PlayFigures, String> {
    let clients = args.clients()?;
    if args.common.connect.is_some() && (args.echo || args.store != StoreChoice::Memory) {
        return Err("--connect plays the game on that server: not with --echo or --store".into());
    }
    if args.pairs == 0 || (args.pairs > 1 && (args.store != StoreChoice::Both || args.echo)) {
        return Err(
            "--pairs counts pairs of runs (1 or more); more than one needs --store both, \
                    and plays no baselines (not with --echo)"
                .into(),
        );
    }
    let args = Arc::new(args);
    let stores: &[bool] = match args.store {
        StoreChoice::Memory => &[false],
        StoreChoice::Sqlite => &[true],
        StoreChoice::Both => &[false, true],
    };
    // Every game run, in order: with `--store both`, memory then SQLite, pair after pair.
    let mut runs = Vec::new();
    let mut last = None;
    for pair in 1..=args.pairs {
        if args.pairs > 1 {
            println!("== pair {pair} of {}", args.pairs);
        }
        for &sqlite in stores {
            if last.take().is_some() {
                // Let the previous server's sockets finish closing first.
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            let server =
                Server::start(&args.common, args.rooms + args.bot_rooms, clients, sqlite).await?;
            let game = play_game(&args, &server, clients, sqlite).await?;
            runs.push(game);
            last = Some(server);
        }
        if let ([_, _], [.., memory, sqlite]) = (stores, &runs[..]) {
            print_store_cost(memory, sqlite);
        }
    }
    let server = last.ok_or("no store to play on")?;
    if args.pairs > 1 {
        println!();
        println!(
            "{} pairs of {} s runs, memory then SQLite in each, median (min–max){}:",
            args.pairs,
            args.seconds,
            if args.common.pin {
                "; the server on CPU 0 alone"
            } else {
                ""
            }
        );
        println!();
        println!("{}", store_table(&runs));
        println!();
        println!("Command: `{}`", command_line());
    }
    let game = runs.pop().ok_or("no game run")?;
    if !args.echo {
        return Ok(PlayFigures {
            game,
            baselines: None,
        });
    }
    let addr = server.addr;
    let think = Duration::from_millis(args.think_ms);
    // What each client received per action, on average: the relay sends that much.
    let size = (game.tally.received / (game.tally.actions.max(1) * u64::from(args.humans))).max(1)
        as usize;
    let mut baselines = Vec::new();
    for baseline in Baseline::ALL {
        // Let the previous run's sockets finish closing first.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let inner = Arc::clone(&args);
        let run = run_rooms(
            &args,
            args.rooms,
            &server,
            move |room, gate| {
                let args = Arc::clone(&inner);
                async move { seat_diagnostic_room(&args, addr, room, &gate, baseline).await }
            },
            move |seats, _room, deadline| {
                take_turns(
                    seats,
                    diagnostic_message(baseline, size),
                    baseline.whole_room(),
                    think,
                    deadline,
                )
            },
        )
        .await?;
        run.print(&baseline.describe(size));
        baselines.push((baseline.name(), run));
    }
    for (name, baseline) in &baselines {
        print_ratios(("game", &game), (name, baseline));
    }
    // What a room's task costs by itself: the room relay against the relay; and what the game's
    // own work costs beyond it.
    if let [(room, room_relay), (relay, bare), _] = &baselines[..] {
        print_ratios((room, room_relay), (relay, bare));
        print_own_work(&game, room_relay);
    }
    let baselines: Baselines = baselines
        .into_iter()
        .map(|(_, run)| run)
        .collect::<Vec<_>>()
        .try_into()
        .map_err(|_| "a baseline is missing")?;
    Ok(PlayFigures {
        game,
        baselines: Some(baselines),
    })
}

/// Prints the game's own work: what its action costs beyond the room relay's, which has the
/// same sockets, writers and task per room and no rules, log or views. In CPU (a difference
/// within one run) and, under Valgrind, in instructions and simulated cache misses, counts the
/// machine's load cannot move.
fn print_own_work(game: &Run, room_relay: &Run) {
    println!("== the game's own work (game - room relay)");
    println!(
        "server CPU per action: {:.1} us ({:.1} - {:.1})",
        game.cpu_per_action_us() - room_relay.cpu_per_action_us(),
        game.cpu_per_action_us(),
        room_relay.cpu_per_action_us()
    );
    let ((game_user, game_system), (relay_user, relay_system)) = (
        game.cpu_split_per_action_us(),
        room_relay.cpu_split_per_action_us(),
    );
    println!(
        "of which user: {:.1} us ({game_user:.1} - {relay_user:.1}), system: {:.1} us \
         ({game_system:.1} - {relay_system:.1})",
        game_user - relay_user,
        game_system - relay_system
    );
    for (what, g, r) in counts_of_both(game, room_relay) {
        println!("server {what}: {:.0} ({g:.0} - {r:.0})", g - r);
    }
}

/// What Valgrind counted per action in both `a` and `b`, each with what it is: instructions
/// (with `--callgrind`) and the three simulated caches' misses (with `--cache-sim`).
fn counts_of_both(a: &Run, b: &Run) -> Vec<(String, f64, f64)> {
    let mut counts = Vec::new();
    if let (Some(x), Some(y)) = (a.instructions_per_action(), b.instructions_per_action()) {
        counts.push(("instructions per action (callgrind)".to_owned(), x, y));
    }
    if let (Some(x), Some(y)) = (a.misses_per_action(), b.misses_per_action()) {
        for ((cache, x), y) in ["L1 instruction", "L1 data", "last level"]
            .iter()
            .zip(x)
            .zip(y)
        {
            counts.push((format!("{cache} misses per action (simulated)"), x, y));
        }
    }
    counts
}

/// Prints the ratios of `a`'s figures to `b`'s (each a name and its run): throughput, p99
/// latency, CPU per action and, under Valgrind, instructions and simulated cache misses.
fn print_ratios((a_name, a): (&str, &Run), (b_name, b): (&str, &Run)) {
    println!("== {a_name} / {b_name}");
    println!(
        "throughput: {b_name} {:.0} actions/s / {a_name} {:.0} actions/s = {:.2}x",
        b.actions_per_second(),
        a.actions_per_second(),
        b.actions_per_second() / a.actions_per_second()
    );
    println!(
        "p99 latency: {a_name} {:.3} ms / {b_name} {:.3} ms = {:.2}x",
        a.p99_ms(),
        b.p99_ms(),
        ratio(a.p99_ms(), b.p99_ms())
    );
    println!(
        "server CPU per action: {a_name} {:.0} us / {b_name} {:.0} us = {:.2}x",
        a.cpu_per_action_us(),
        b.cpu_per_action_us(),
        ratio(a.cpu_per_action_us(), b.cpu_per_action_us())
    );
    let ((a_user, a_system), (b_user, b_system)) =
        (a.cpu_split_per_action_us(), b.cpu_split_per_action_us());
    println!(
        "  in user space: {a_name} {a_user:.1} us / {b_name} {b_user:.1} us = {:.2}x; in the kernel: \
         {a_name} {a_system:.1} us / {b_name} {b_system:.1} us = {:.2}x",
        ratio(a_user, b_user),
        ratio(a_system, b_system)
    );
    for (what, x, y) in counts_of_both(a, b) {
        println!(
            "server {what}: {a_name} {x:.0} / {b_name} {y:.0} = {:.2}x",
            ratio(x, y)
        );
    }
}

/// Prints what the SQLite log cost in one pair of runs: the ratios of its figures to the
/// memory store's.
pub(crate) fn print_store_cost(memory: &Run, sqlite: &Run) {
    println!("== the SQLite log's cost (sqlite / memory)");
    println!(
        "throughput: sqlite {:.0} actions/s / memory {:.0} actions/s = {:.2}x ({:+.1}%)",
        sqlite.actions_per_second(),
        memory.actions_per_second(),
        ratio(sqlite.actions_per_second(), memory.actions_per_second()),
        (ratio(sqlite.actions_per_second(), memory.actions_per_second()) - 1.0) * 100.0
    );
    println!(
        "p99 latency: sqlite {:.3} ms / memory {:.3} ms = {:.2}x",
        sqlite.p99_ms(),
        memory.p99_ms(),
        ratio(sqlite.p99_ms(), memory.p99_ms())
    );
    println!(
        "server CPU per action: sqlite {:.0} us / memory {:.0} us (+{:.0} us; the writer {:.1}, \
         the checkpointer {:.2})",
        sqlite.cpu_per_action_us(),
        memory.cpu_per_action_us(),
        sqlite.cpu_per_action_us() - memory.cpu_per_action_us(),
        sqlite.writer_per_action_us(),
        sqlite.checkpointer_per_action_us()
    );
}

/// The Markdown table of `--pairs`, from the runs in pairs (memory, then SQLite): a row per
/// figure, the memory store's and SQLite's median (min–max) over the pairs, and their ratio
/// computed within each pair (figures of the store's own threads: SQLite's alone).
pub(crate) fn store_table(runs: &[Run]) -> String {
    let pairs: Vec<(&Run, &Run)> = runs
        .chunks_exact(2)
        .map(|pair| (&pair[0], &pair[1]))
        .collect();
    // The flag: whether both stores have the figure, and so a ratio.
    let rows: [Measure; 5] = [
        ("actions/s", Unit::Whole, Run::actions_per_second, true),
        ("p99 latency (ms)", Unit::Significant, Run::p99_ms, true),
        (
            "server CPU per action (µs)",
            Unit::Significant,
            Run::cpu_per_action_us,
            true,
        ),
        (
            "the writer's CPU per action (µs)",
            Unit::Significant,
            Run::writer_per_action_us,
            false,
        ),
        (
            "the checkpointer's CPU per action (µs)",
            Unit::Significant,
            Run::checkpointer_per_action_us,
            false,
        ),
    ];
    let mut lines = vec![
        "| median (min–max) | memory | SQLite | SQLite / memory |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    for (label, unit, figure, both) in rows {
        let memory: Vec<f64> = pairs.iter().map(|(memory, _)| figure(memory)).collect();
        let sqlite: Vec<f64> = pairs.iter().map(|(_, sqlite)| figure(sqlite)).collect();
        let ratios: Vec<f64> = pairs
            .iter()
            .map(|(memory, sqlite)| ratio(figure(sqlite), figure(memory)))
            .collect();
        lines.push(table_row(&[
            label.to_owned(),
            if both {
                spread_cell(&memory, unit)
            } else {
                String::new()
            },
            spread_cell(&sqlite, unit),
            if both {
                spread_cell(&ratios, Unit::Ratio)
            } else {
                String::new()
            },
        ]));
    }
    lines.join("\n")
}

/// Plays the game's workload against `server` and prints what it measured (and, against a
/// SQLite server, the append latency from its `/metrics`).
pub(crate) async fn play_game(
    args: &Arc<PlayArgs>,
    server: &Server,
    clients: usize,
    sqlite: bool,
) -> Result<Run, String> {
    println!(
        "server {} (pid {}, {} store{}); {} rooms x {} people = {clients} clients over {} source addresses, {} s",
        server.addr,
        server.pid(),
        if sqlite { "sqlite" } else { "memory" },
        if args.common.pin {
            ", on CPU 0 alone, the load on the others"
        } else {
            ""
        },
        args.rooms,
        args.humans,
        args.common.sources,
        args.seconds
    );
    let addr = server.addr;
    let think = Duration::from_millis(args.think_ms);
    let game = {
        let inner = Arc::clone(args);
        let people_rooms = args.rooms;
        run_rooms(
            args,
            args.rooms + args.bot_rooms,
            server,
            move |room, gate| {
                let args = Arc::clone(&inner);
                async move {
                    if room < args.rooms {
                        seat_room(&args, addr, room, &gate).await
                    } else {
                        seat_bot_room(&args, addr, room, &gate).await
                    }
                }
            },
            move |seats, room, deadline| async move {
                let mut start_with = seats;
                // The host starts the match once everyone is seated.
                let mut host = start_with.remove(0);
                let mut tally = Tally::new();
                tally.rooms = 1;
                if let Err(e) = send(&mut host, ClientMessage::Start).await {
                    tally.error(kind(&e));
                }
                start_with.insert(0, host);
                let mut seats = tokio::task::JoinSet::new();
                for (n, ws) in start_with.into_iter().enumerate() {
                    seats.spawn(play_seat(ws, room * 16 + n as u64, think, deadline));
                }
                while let Some(seat) = seats.join_next().await {
                    match seat {
                        Ok(seat) => tally.add(seat),
                        Err(e) => tally.error(format!("seat task {e}")),
                    }
                }
                if room >= people_rooms as u64 {
                    tally.beside_bots()
                } else {
                    tally
                }
            },
        )
        .await?
    };
    game.print(if sqlite {
        "game (sqlite store): rooms of people playing"
    } else {
        "game (memory store): rooms of people playing"
    });
    if args.think_ms == 0 {
        // Each room has an action waiting at almost every moment (all but between rounds), so
        // the throughput bounds the mean latency, whatever the scheduling: Little's law.
        println!(
            "closed loop:        {} rooms, at most one action waiting in each: mean latency <= {} / {:.0} actions/s = {:.1} ms",
            args.rooms,
            args.rooms,
            game.actions_per_second(),
            args.rooms as f64 / game.actions_per_second() * 1000.0
        );
    }
    if args.bot_rooms > 0 {
        print_beside_bots(&game, args.bot_rooms, args.bots, server.addr).await?;
    }
    if sqlite {
        print_histogram(
            server.addr,
            "dhumbal_store_append_seconds",
            "append latency:    ",
            "appends",
        )
        .await?;
        // What held the appends up in the writer.
        for (step, what, counted) in [
            ("commit", "writer commits:    ", "transactions"),
            (
                "pass",
                "writer pass steps: ",
                "steps of passes over dead inputs",
            ),
            (
                "restart",
                "writer restarts:   ",
                "RESTART checkpoints of the WAL",
            ),
        ] {
            print_histogram(
                server.addr,
                &format!("dhumbal_store_hold_seconds{{step=\"{step}\"}}"),
                what,
                counted,
            )
            .await?;
        }
    }
    Ok(game)
}
