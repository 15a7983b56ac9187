//! The cluster harness (issue 18, "Proof"): three server nodes sharing one Redis, HAProxy in
//! front, rooms of people and bots played through HAProxy while nodes are killed, restarted
//! and paused. Nobody may lose what they had received.
//!
//! [`run`] starts three nodes of the real binary on 127.0.0.2, 127.0.0.3 and 127.0.0.4 (each
//! with `--store` the given Redis and a node id of its own) and [`Haproxy`] in front, opens
//! rooms of all three presets through HAProxy (one to three people each, bots in the other
//! seats; more than asked for, up to three times as many, until every node holds one), and lets every person play random legal moves, asking for a rematch after each
//! match. Each person behaves like the web page: it sends no WebSocket pings of its own (it
//! answers the server's, as a browser does), and it reconnects through HAProxy whenever its
//! socket closes; each reconnection is checked exactly as the crash harness checks one
//! ([`crate::crash`]: what the client had received must come back). Meanwhile:
//!
//! 1. **Spread**: every node holds some of the rooms (read from each node's `/metrics`).
//! 2. **SIGKILL** the node holding the most rooms: only its rooms move, claimed by the nodes
//!    HAProxy now sends their sockets to.
//! 3. **Restart** it on the same address: once HAProxy sees it healthy, a spectator knocks on
//!    every room through HAProxy, so the rooms whose hash is the node's come back to it (their
//!    other node is fenced and closes their sockets with 4006, `room_moved`).
//! 4. **SIGSTOP** another node for longer than its lease. While it is still paused, every
//!    person must be sent a new state: the paused node's people too, which only happens if
//!    HAProxy, seeing the node down, shuts their sockets (`on-marked-down shutdown-sessions`)
//!    so that they reconnect to the room's new node, which claims it. (Without that, a page
//!    that sends no pings of its own stays frozen for the whole stall.) Then knock on every
//!    room while it is paused, then **SIGCONT**: its next write is fenced, or its lease
//!    renewal fails, and it stops those rooms (their sockets, if any are left, closed with
//!    4006).
//! 5. **Restart Redis** (SIGKILL, back from its append-only file, every write fsynced): the
//!    nodes reconnect to it and play on.
//!
//! Then every room plays its last match to its end, and the report counts what the crash
//! harness counts, with the rooms each node held.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dhumbal_engine::{Phase, Preset, Rounds};
use dhumbal_protocol::{
    ClientMessage, Hello, PROTOCOL_VERSION, RoomSummary, SeatKind, ServerMessage,
};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::crash::{self, Person, Read, Report, Until};
use crate::haproxy::Haproxy;
use crate::process::ServerProcess;
use crate::redis::RedisServer;
use crate::{Client, PATIENCE, http};

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The server binary.
    pub server: PathBuf,
    /// How many rooms are played.
    pub rooms: usize,
    /// The seed of every random choice the harness makes.
    pub seed: u64,
    /// The longest a person thinks before each move.
    pub think: Duration,
    /// How long play runs between the steps.
    pub play: Duration,
    /// The nodes' lease on the rooms they hold (`--lease`).
    pub lease: Duration,
    /// The most rounds a match lasts, in place of a preset's own (Yaniv's match runs until one
    /// player remains, dozens of rounds): the last step waits for every room's match to end.
    /// `None` keeps the presets' matches.
    pub rounds: Option<u32>,
}

/// Three nodes and HAProxy in front of them.
struct Cluster {
    /// The server binary.
    program: String,
    /// The flags every node gets.
    args: Vec<String>,
    /// The nodes, by number (`None` while one is down).
    nodes: Vec<Option<ServerProcess>>,
    /// Where each node listens (kept to restart it there).
    addrs: Vec<SocketAddr>,
    /// HAProxy.
    front: Haproxy,
}

impl Cluster {
    /// Starts three nodes on the Redis at `redis` and HAProxy. `None` when `haproxy` is missing.
    fn start(options: &Options, redis: &str) -> Option<Cluster> {
        let program = options.server.display().to_string();
        let lease = format!("{}ms", options.lease.as_millis());
        let mut args: Vec<String> = [
            "--store",
            redis,
            "--lease",
            &lease,
            "--max-join-attempts",
            "100000",
            // Every person comes through HAProxy from 127.0.0.1, one address to every node: when
            // a paused node's people all reconnect at once to the others, they are more than
            // one address may hold by default.
            "--max-connections-per-address",
            "100000",
            "--trusted-proxies",
            "127.0.0.1/32",
            // A person who has played their last match stops reading; if their room moves
            // after that, they are away there, and the others' last turns would wait the
            // default 30 s for them each time before a stand-in plays.
            "--takeover-after",
            "2s",
        ]
        .map(str::to_owned)
        .to_vec();
        args.extend(crash::AT_MACHINE_SPEED.map(str::to_owned));
        let mut nodes = Vec::new();
        let mut addrs = Vec::new();
        for n in 0..3u8 {
            let node = start_node(
                &program,
                &args,
                n,
                SocketAddr::from(([127, 0, 0, 2 + n], 0)),
            );
            addrs.push(node.addr);
            nodes.push(Some(node));
        }
        let front = Haproxy::start(&addrs)?;
        Some(Cluster {
            program,
            args,
            nodes,
            addrs,
            front,
        })
    }

    /// How many rooms each node holds now (its `dhumbal_rooms`; 0 for a node that is down).
    async fn rooms_held(&self) -> Vec<u64> {
        let mut held = Vec::new();
        for (n, node) in self.nodes.iter().enumerate() {
            held.push(match node {
                Some(_) => gauge(self.addrs[n], "dhumbal_rooms").await,
                None => 0,
            });
        }
        held
    }
}

/// Starts node `n` of the cluster on `addr`.
fn start_node(program: &str, args: &[String], n: u8, addr: SocketAddr) -> ServerProcess {
    let id = format!("node{}", n + 1);
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend(["--node-id", &id]);
    ServerProcess::start_on(program, addr, &all)
}

/// The value of the gauge or counter `name` in `addr`'s `/metrics` (summed over its series).
async fn gauge(addr: SocketAddr, name: &str) -> u64 {
    let (status, text) = http::get(addr, "/metrics").await;
    if status != 200 {
        return 0;
    }
    let total: f64 = text
        .lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{'))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    // Counts are whole numbers.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let total = total as u64;
    total
}

/// Waits until `addr` answers `/readyz` with 200.
async fn ready(addr: SocketAddr) -> Result<(), String> {
    let give_up = Instant::now() + PATIENCE;
    while http::get(addr, "/readyz").await.0 != 200 {
        if Instant::now() > give_up {
            return Err(format!("{addr} is not ready after {PATIENCE:?}"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// What the cluster run found: the crash harness's counts, and the rooms each node held.
#[derive(Debug, Default)]
pub struct ClusterReport {
    /// The checks of every reconnection and of every room's end.
    pub report: Report,
    /// Rooms each node held after the rooms opened.
    pub spread: Vec<u64>,
    /// Rooms each node held after one was killed (that one is 0).
    pub after_kill: Vec<u64>,
    /// Rooms each node held after the killed node came back and every room was knocked on.
    pub after_restart: Vec<u64>,
    /// The rooms the paused node stopped once it went on, because another node had claimed
    /// them (a fenced append or lease renewal; their clients told `room_moved`).
    pub fenced: u64,
    /// Whether Redis was restarted while the rooms played.
    pub redis_restarted: bool,
    /// Rooms looked up through HAProxy (`GET /api/rooms/{code}`) while their people played,
    /// and how many of those answered every person as connected: the lookup reached the node
    /// that holds the room, not one that read it from Redis.
    pub lookups: (usize, usize),
    /// What HAProxy answered a socket opened at `/ws` (no room in its path): status and body.
    pub plain_ws: (u16, String),
    /// Rooms whose log, read back from Redis at the end as a node would restore it, is one
    /// unbroken sequence after its snapshot; and the rooms read.
    pub logs_unbroken: (usize, usize),
    /// While a node was paused: the people who were sent a new state (or got back to their
    /// room) after it stopped and before it went on, and the people playing.
    pub played_on_while_paused: (usize, usize),
    /// Whether the run was skipped (no `haproxy`), and why.
    pub skipped: Option<String>,
}

impl ClusterReport {
    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.report.passed()
    }
}

/// Runs the cluster harness on `redis`, which it restarts once (on a multi-threaded runtime).
pub async fn run(options: &Options, redis: &mut RedisServer) -> ClusterReport {
    let mut out = ClusterReport::default();
    let Some(mut cluster) = tokio::task::spawn_blocking({
        let (options, url) = (options.clone(), redis.url());
        move || Cluster::start(&options, &url)
    })
    .await
    .expect("the cluster starts") else {
        out.skipped = Some("`haproxy` is not installed".into());
        return out;
    };
    if let Err(failure) = steps(&mut cluster, options, redis, &mut out).await {
        out.report.failures.push(failure);
    }
    out
}

/// The run's steps; an `Err` is a failure that stops it.
async fn steps(
    cluster: &mut Cluster,
    options: &Options,
    redis: &mut RedisServer,
    out: &mut ClusterReport,
) -> Result<(), String> {
    let started = Instant::now();
    let front = cluster.front.addr;
    for addr in &cluster.addrs {
        ready(*addr).await?;
    }
    ready(front).await?;
    out.report.seed = options.seed;
    let mut rng = StdRng::seed_from_u64(options.seed);
    let mut people = Vec::new();
    let mut codes = Vec::new();
    // Codes are random, so a few rooms may all hash away from a node: open more (up to three
    // times as many) until every node holds one.
    let mut room = 0;
    while room < options.rooms
        || (room < options.rooms * 3 && cluster.rooms_held().await.contains(&0))
    {
        let preset = Preset::ALL[room % Preset::ALL.len()];
        *out.report.presets.entry(preset.name()).or_default() += 1;
        let mut settings = preset.settings();
        if let Some(most) = options.rounds {
            settings.rounds = match settings.rounds {
                Rounds::Fixed(n) => Rounds::Fixed(n.min(most)),
                Rounds::UntilOneRemains => Rounds::Fixed(most),
            };
        }
        let opened =
            crash::open_room(front, room, preset, settings, &mut rng, options.think).await?;
        codes.push(opened[0].code.clone());
        people.extend(opened);
        room += 1;
    }
    out.report.rooms = room;
    out.report.people = people.len();
    let stop = Arc::new(AtomicBool::new(false));
    let played: Vec<Arc<AtomicU64>> = people.iter().map(|_| Arc::default()).collect();
    let tasks: Vec<_> = people
        .into_iter()
        .zip(&played)
        .map(|(p, states)| {
            tokio::spawn(keep_playing(
                p,
                front,
                Arc::clone(&stop),
                Arc::clone(states),
            ))
        })
        .collect();

    progress(started, "opened");
    // 1. Spread; every room's lookup goes to its node; `/ws` is refused at the front.
    tokio::time::sleep(options.play).await;
    out.spread = cluster.rooms_held().await;
    for code in &codes {
        let (status, body) = http::get(front, &format!("/api/rooms/{code}")).await;
        let summary = (status == 200)
            .then(|| serde_json::from_str::<RoomSummary>(&body).ok())
            .flatten();
        out.lookups.0 += 1;
        if summary.is_some_and(|s| {
            s.seats
                .iter()
                .filter(|seat| seat.kind == SeatKind::Human)
                .all(|seat| seat.connected)
        }) {
            out.lookups.1 += 1;
        }
    }
    out.plain_ws = http::get(front, "/ws").await;
    progress(started, "spread");
    // 2. Kill the node holding the most rooms.
    let killed = (0..3).max_by_key(|&n| out.spread[n]).unwrap_or(0);
    let mut node = cluster.nodes[killed].take().expect("the node runs");
    let node = tokio::task::spawn_blocking(move || {
        node.kill();
        node
    })
    .await
    .map_err(|e| format!("killing a node: {e}"))?;
    drop(node);
    out.report.kills = 1;
    tokio::time::sleep(options.play * 2).await;
    out.after_kill = cluster.rooms_held().await;
    progress(started, "killed");
    // 3. Restart it where it was; knock on every room so the rooms of its hash come back.
    let restarted = tokio::task::spawn_blocking({
        let (program, args, addr) = (
            cluster.program.clone(),
            cluster.args.clone(),
            cluster.addrs[killed],
        );
        move || start_node(&program, &args, u8::try_from(killed).unwrap_or(0), addr)
    })
    .await
    .map_err(|e| format!("restarting a node: {e}"))?;
    cluster.nodes[killed] = Some(restarted);
    ready(cluster.addrs[killed]).await?;
    // HAProxy takes a node back after two good checks, 200 ms apart; until it has, a knock
    // still reaches the rooms' other nodes, so knock until the node holds rooms again.
    let give_up = Instant::now() + PATIENCE / 2;
    loop {
        tokio::time::sleep(Duration::from_millis(400)).await;
        knock_on_every_room(front, &codes).await;
        if cluster.rooms_held().await[killed] > 0 || Instant::now() > give_up {
            break;
        }
    }
    tokio::time::sleep(options.play).await;
    out.after_restart = cluster.rooms_held().await;
    progress(started, "restarted");
    // 4. Pause another node for longer than its lease; its rooms are claimed elsewhere (knock
    // until the other nodes have claimed some: HAProxy must first see the node down).
    let paused = (killed + 1) % 3;
    let others: Vec<usize> = (0..3).filter(|&n| n != paused).collect();
    let claims = async |cluster: &Cluster| {
        let mut total = 0;
        for &n in &others {
            total += gauge(cluster.addrs[n], "dhumbal_room_claims_total").await;
        }
        total
    };
    let claimed_before = claims(cluster).await;
    let node = cluster.nodes[paused].as_ref().expect("the node runs");
    node.signal("STOP");
    // What the node sent just before it stopped has arrived within a second: counted from then,
    // a state comes to its people only from the room's new node.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before: Vec<u64> = played.iter().map(|n| n.load(Ordering::Relaxed)).collect();
    // Every person plays on while the node is still paused: its own people once HAProxy has
    // shut their sockets and they have come back through it to the room's new node.
    let give_up = Instant::now() + PATIENCE / 2;
    let played_on = || {
        played
            .iter()
            .zip(&before)
            .filter(|(now, before)| now.load(Ordering::Relaxed) > **before)
            .count()
    };
    while played_on() < played.len() && Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    out.played_on_while_paused = (played_on(), played.len());
    progress(started, "played on while a node is paused");
    tokio::time::sleep(options.lease * 2).await;
    let give_up = Instant::now() + PATIENCE / 2;
    loop {
        knock_on_every_room(front, &codes).await;
        if claims(cluster).await > claimed_before || Instant::now() > give_up {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(options.play).await;
    let node = cluster.nodes[paused].as_ref().expect("the node runs");
    node.signal("CONT");
    // It learns of it at its next append or lease renewal (every third of a lease).
    let give_up = Instant::now() + PATIENCE / 2;
    loop {
        tokio::time::sleep(options.lease / 3).await;
        out.fenced = gauge(cluster.addrs[paused], "dhumbal_rooms_moved_total").await;
        if out.fenced > 0 || Instant::now() > give_up {
            break;
        }
    }
    progress(started, "paused and continued");
    // 5. Restart Redis (SIGKILL; it comes back from its append-only file): the nodes reconnect
    // to it and the rooms play on.
    tokio::task::block_in_place(|| redis.restart());
    out.redis_restarted = true;
    tokio::time::sleep(options.play * 2).await;

    progress(started, "redis restarted");
    // Every room plays its last match to its end.
    stop.store(true, Ordering::Relaxed);
    let mut people = Vec::new();
    for task in tasks {
        match task.await {
            Ok((person, report)) => {
                out.report.absorb(&report);
                people.push(person);
            }
            Err(e) => out
                .report
                .failures
                .push(format!("a client's task failed: {e}")),
        }
    }
    progress(started, "every last match over");
    crash::finish(&mut people, &mut out.report);
    out.logs_unbroken = read_logs(&redis.url(), &codes).await?;
    out.report.elapsed = started.elapsed();
    Ok(())
}

/// Reads every room's log back from Redis, as a node restores it (without claiming it), and
/// counts the rooms whose inputs follow their snapshot (or their setup) without a gap or a
/// repeat: answers (unbroken, read).
async fn read_logs(url: &str, codes: &[String]) -> Result<(usize, usize), String> {
    use dhumbal_server::store::{RedisConfig, Store, StoreConfig};
    let config = StoreConfig::Redis(RedisConfig {
        url: url.to_owned(),
        node: "checker".into(),
        lease: Duration::from_secs(10),
        room_ttl: Duration::from_secs(60),
        keep_matches: Duration::from_secs(60),
    });
    let metrics = Arc::new(dhumbal_server::metrics::Metrics::for_node(Some("checker")));
    let store = Store::open(&config, metrics).map_err(|e| format!("opening Redis: {e}"))?;
    let mut unbroken = 0;
    for code in codes {
        let room = store
            .peek(code)
            .await
            .map_err(|e| format!("reading room {code} from Redis: {e}"))?
            .ok_or_else(|| format!("room {code} is not in Redis"))?;
        let first = room.snapshot.as_ref().map_or(0, |(seq, _)| *seq) + 1;
        if room
            .inputs
            .iter()
            .zip(first..)
            .all(|((seq, _), expected)| *seq == expected)
        {
            unbroken += 1;
        }
    }
    store.close().await;
    Ok((unbroken, codes.len()))
}

/// Says on standard error when a step began, past the test harness's capture (it writes to
/// the stream itself rather than through `eprintln!`), so that CI's log shows where a slow run
/// spent its time even when the test passes.
fn progress(started: Instant, step: &str) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "cluster: {step} at {:.1?}",
        started.elapsed()
    );
}

/// A spectator says hello to every room through `front` and leaves once it has the room's
/// state: the node HAProxy sends the socket to claims the room if it does not hold it.
async fn knock_on_every_room(front: SocketAddr, codes: &[String]) {
    for code in codes {
        let path = format!("/ws/{code}");
        let from: IpAddr = [127, 0, 0, 1].into();
        let Ok(mut client) = Client::connect_to_with(front, &path, from, &[]).await else {
            continue;
        };
        client
            .send(ClientMessage::from(Hello {
                protocol: PROTOCOL_VERSION,
                room: code.clone(),
                name: "Watcher".into(),
                token: None,
                spectator: true,
                host_secret: None,
                client_seed: None,
            }))
            .await;
        let give_up = Instant::now() + Duration::from_secs(10);
        while Instant::now() < give_up {
            match tokio::time::timeout(Duration::from_secs(10), client.recv()).await {
                Ok(ServerMessage::State { .. } | ServerMessage::Error(_)) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
}

/// Plays `person`'s seat through `front` as the page does (no pings of its own), reconnecting
/// whenever its socket closes, until `stop` is set and its match is over; counts in `states`
/// every state it is sent and every reconnection that brought it back. Returns the person and
/// what its reconnections found.
async fn keep_playing(
    mut person: Person,
    front: SocketAddr,
    stop: Arc<AtomicBool>,
    states: Arc<AtomicU64>,
) -> (Person, Report) {
    let mut report = Report::default();
    let mut moves = 0;
    person.until = Until::Closed;
    loop {
        if stop.load(Ordering::Relaxed) {
            person.until = Until::MatchOver;
        }
        if person.answer_now {
            person.answer_now = false;
            person.respond().await;
        }
        let over = person
            .client
            .view
            .as_ref()
            .is_some_and(|v| v.phase == Phase::MatchOver);
        if person.until == Until::MatchOver && person.match_over && over {
            // Leave, not just stop reading: a `rematch` sent before the stop may still start
            // another match with the others, which would wait at its first show for this
            // person's `ready` until the server's pings found the socket unread (50 s).
            person.client.leave().await;
            return (person, report);
        }
        match person.read().await {
            Read::Message(message) => {
                if matches!(message, ServerMessage::State { .. }) {
                    states.fetch_add(1, Ordering::Relaxed);
                }
                person.handle(message).await;
            }
            Read::Closed => {
                moves += 1;
                let lost = report.not_restored;
                crash::reconnect_within(&mut person, front, moves, &mut report, PATIENCE / 2).await;
                if report.not_restored > lost {
                    return (person, report);
                }
                states.fetch_add(1, Ordering::Relaxed);
            }
            Read::Stalled => {
                let failure = format!("{person}: nothing received for {PATIENCE:?}");
                person.failures.push(failure);
                return (person, report);
            }
        }
    }
}
