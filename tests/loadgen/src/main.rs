//! `loadgen`: a load benchmark of the Dhumbal server over real loopback sockets.
//!
//! It starts the server binary as a child process (`dhumbal-server`, by default the one built
//! beside `loadgen`), so that it can read the server's resident memory from `/proc`, and spreads
//! its client sockets over several loopback source addresses (127.0.0.2, 127.0.0.3, …) so that
//! ephemeral ports do not run out. Every run is bounded: in clients by its flags, in time by
//! `--seconds` and by a deadline on each connection. It prints figures and asserts nothing.
//!
//! - `loadgen play --rooms 500 --humans 4 --seconds 20` opens the rooms, seats `humans` people
//!   in each, starts the matches and plays random legal actions as fast as the server answers
//!   (bots have no delay; every seat here is a person), `ready` between rounds and `rematch`
//!   after each match. It prints the clients connected, actions per second, the latency from
//!   sending an action to receiving the state that results (p50, p99, max), errors, and the
//!   server's resident memory before and after. With `--echo` it then runs two bare baselines
//!   built from the same crates and prints the game's cost as ratios to each: the same workload
//!   against the relay (`/ws-relay/{group}`: the same rooms of sockets taking turns, each message
//!   as large as what each client received per action in the game, sent to the whole room), and
//!   the simplest one against the echo (`/ws-echo`: one action-sized message back to its sender).
//! - `loadgen play --store both --pairs 5` plays the game on the memory store, then on the
//!   SQLite log, five times over, each on a fresh server, printing each run and the log's cost
//!   as ratios (throughput, p99, the server's CPU per action, and the CPU of the store's writer
//!   and checkpointer threads, read from `/proc/PID/task`), then a Markdown table of each
//!   figure's median and range over the pairs, the ratios computed within each pair.
//! - `loadgen idle --connections 10000` opens that many WebSockets and holds them without a
//!   word, then prints how many are held and the server's memory per connection.
//! - `loadgen report --runs 3 --rooms 500 --humans 4 --seconds 15` measures every figure of the
//!   performance table of `docs/performance.md`: in each of `--runs` runs, `play --echo` saturated (no think
//!   time), then `play --echo` paced (`--think-ms`, 20 by default), then `idle` at
//!   `--idle-connections` (10000 by default), each on a fresh server and printing what it
//!   prints alone. At the end it prints a Markdown table to paste into `docs/performance.md`: for the game,
//!   the relay and the echo, saturated and paced, the actions per second, the p50 and p99
//!   latency, the server's CPU per action and its resident memory after the run, and the
//!   ratios game / relay and game / echo of the p99 and of the CPU per action (each computed
//!   within a run); and the memory per idle connection. Each cell is the median of the runs and
//!   their range, `median (min–max)`. Then the command line that produced it, and any errors or
//!   missing clients, run by run.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use dhumbal_engine::{Difficulty, Phase, Preset, Settings};
use dhumbal_protocol::{
    ClientEnvelope, ClientMessage, CreateRoom, CreatedRoom, Hello, PROTOCOL_VERSION, ServerMessage,
};
use dhumbal_tests::{http, random_action};
use futures_util::{SinkExt, StreamExt};
use hdrhistogram::Histogram;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Deserialize;
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::timeout_at;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "loadgen",
    about = "Load benchmark of the Dhumbal server over loopback"
)]
struct Cli {
    /// What to measure.
    #[command(subcommand)]
    mode: Mode,
}

/// What to measure.
#[derive(Debug, Subcommand)]
enum Mode {
    /// Rooms of people playing random legal actions as fast as the server answers.
    Play(PlayArgs),
    /// Idle WebSocket connections held open: how many, and memory per connection.
    Idle(IdleArgs),
    /// Every figure of the performance table in `docs/performance.md`, as the median and range of several runs.
    Report(ReportArgs),
}

/// What every mode needs.
#[derive(Clone, Debug, Args)]
struct Common {
    /// The server binary to start (default: `dhumbal-server` beside this program).
    #[arg(long)]
    server: Option<PathBuf>,
    /// How many loopback source addresses to spread clients over (127.0.0.2 and up).
    #[arg(long, default_value_t = 8)]
    sources: u8,
    /// How many connections may be opening at once.
    #[arg(long, default_value_t = 128)]
    connecting: usize,
    /// Play against a server already running at this address (HAProxy in front of a cluster,
    /// say) instead of starting one: its rooms must allow this load (rate limits, room
    /// creations per address), and its CPU and memory are not measured. Not with `--echo`.
    #[arg(long)]
    connect: Option<SocketAddr>,
    /// The server's `--bot-delay-ms`: how long each bot waits before it acts (0: at once, which
    /// makes rooms with bots play as fast as the server lets them).
    #[arg(long, default_value_t = 0)]
    bot_delay_ms: u64,
    /// Run the server on CPU 0 alone and this program on the others (through `taskset`, from
    /// util-linux), so that the load generator never takes the server's CPU: the server then
    /// saturates its one core, and its figures are its own. Without it, both share every core,
    /// and whatever makes the load generator work harder counts against the server too.
    #[arg(long)]
    pin: bool,
}

/// The play mode's flags.
#[derive(Debug, Args)]
struct PlayArgs {
    #[command(flatten)]
    common: Common,
    /// Rooms to open.
    #[arg(long, default_value_t = 500)]
    rooms: usize,
    /// People seated in each room (2 to 6; every seat is a person).
    #[arg(long, default_value_t = 4)]
    humans: u8,
    /// Seconds of play once every room has started.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// Then run the same workload against the server's bare relay and its echo, and print ratios.
    #[arg(long)]
    echo: bool,
    /// Milliseconds each player thinks before each action (0: act as soon as the state
    /// arrives, which keeps one action in flight per room and saturates the machine).
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// Where the server keeps its rooms: `memory`, `sqlite` (a fresh log in a temporary
    /// folder), or `both`: the game on each, one after the other, with the cost of the log as
    /// ratios (and the append latency from the server's `/metrics`).
    #[arg(long, value_enum, default_value_t = StoreChoice::Memory)]
    store: StoreChoice,
    /// With `--store both`: play this many pairs, memory then SQLite each time, each on a fresh
    /// server, and end with the median and range of each figure over the pairs (the ratio
    /// computed within each pair). On a shared machine one pair is noise; five say something.
    #[arg(long, default_value_t = 1)]
    pairs: usize,
    /// Beside the rooms of people, rooms of one person and three bots (of `--bots`): their bots
    /// play while the people's rooms are measured, so the people's figures show what the bots
    /// cost other rooms (compare `--bots expert` with `--bots hard`, which never searches). The
    /// person in each bot room is measured apart: how fast a room answers its person while its
    /// bots think.
    #[arg(long, default_value_t = 0)]
    bot_rooms: usize,
    /// The bots of the `--bot-rooms`.
    #[arg(long, value_enum, default_value_t = Bots::Expert)]
    bots: Bots,
}

/// The bots of the `--bot-rooms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Bots {
    /// Hard bots: microseconds a decision, in the room's task.
    Hard,
    /// Expert bots: a search of up to 50 ms a decision, on the server's thinking threads.
    Expert,
}

impl Bots {
    /// The engine's difficulty.
    fn difficulty(self) -> Difficulty {
        match self {
            Bots::Hard => Difficulty::Hard,
            Bots::Expert => Difficulty::Expert,
        }
    }
}

/// Where the server under load keeps its rooms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum StoreChoice {
    /// `--store memory`.
    Memory,
    /// `--store sqlite` in a fresh temporary folder.
    Sqlite,
    /// Memory, then SQLite.
    Both,
}

/// The idle mode's flags.
#[derive(Debug, Args)]
struct IdleArgs {
    #[command(flatten)]
    common: Common,
    /// Connections to open and hold.
    #[arg(long, default_value_t = 10_000)]
    connections: usize,
    /// Seconds to hold them after the last one opened, before measuring.
    #[arg(long, default_value_t = IDLE_HOLD_SECONDS)]
    hold: u64,
}

/// The report mode's flags.
#[derive(Debug, Args)]
struct ReportArgs {
    #[command(flatten)]
    common: Common,
    /// Rooms to open in each play run.
    #[arg(long, default_value_t = 500)]
    rooms: usize,
    /// People seated in each room (2 to 6; every seat is a person).
    #[arg(long, default_value_t = 4)]
    humans: u8,
    /// Seconds of play of each workload (game, relay, echo) in each play run.
    #[arg(long, default_value_t = 15)]
    seconds: u64,
    /// Runs of each measure: the table gives their median and range.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Milliseconds each player thinks before each action in the paced runs.
    #[arg(long, default_value_t = 20)]
    think_ms: u64,
    /// Idle connections to open and hold in each idle run.
    #[arg(long, default_value_t = 10_000)]
    idle_connections: usize,
}

/// The most clients any play run may open.
const MAX_CLIENTS: usize = 20_000;
/// The most connections an idle run may hold (each also needs an open file here and one in the
/// server, under the limit on open files).
const MAX_IDLE_CONNECTIONS: usize = 100_000;
/// Seconds an idle run holds its connections, unless told otherwise.
const IDLE_HOLD_SECONDS: u64 = 2;
/// How long setting up (connecting, joining, starting) may take before the run gives up.
const SETUP_LIMIT: Duration = Duration::from_secs(120);

fn main() -> Result<(), String> {
    let cli = Cli::parse();
    // Raise the soft limit on open files to the hard one; the server inherits it.
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => println!("open file limit: {limit}"),
        Err(e) => println!("open file limit unchanged: {e}"),
    }
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    match cli.mode {
        Mode::Play(args) => runtime.block_on(play(args)).map(drop),
        Mode::Idle(args) => runtime.block_on(idle(args)).map(drop),
        Mode::Report(args) => runtime.block_on(report(args)),
    }
}

// ----- The server process -----

/// The server as a child process, killed when dropped (and its data folder removed); or, with
/// `--connect`, a server already running elsewhere.
struct Server {
    /// The process; `None` for a server this program did not start.
    child: Option<Child>,
    /// Where it listens.
    addr: SocketAddr,
    /// Its SQLite log's folder, if it keeps one.
    data_dir: Option<PathBuf>,
}

/// Moves every thread of this program to the CPUs after the first (`--pin`), leaving CPU 0 to
/// the server; once (after that this program sees only its own CPUs).
fn pin_self() -> Result<(), String> {
    static PINNED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    PINNED.get_or_init(pin_once).clone()
}

/// [`pin_self`]'s work.
fn pin_once() -> Result<(), String> {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if cpus < 2 {
        return Err(
            "--pin needs two CPUs or more: one for the server, the rest for the load".into(),
        );
    }
    let status = Command::new("taskset")
        .args(["-a", "-p", "-c", &format!("1-{}", cpus - 1)])
        .arg(std::process::id().to_string())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("--pin runs `taskset` (util-linux), which would not start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`taskset` could not pin the load generator: {status}"
        ))
    }
}

impl Server {
    /// Starts the server binary on a free loopback port with bots that wait `--bot-delay-ms`
    /// (none by default), room for `rooms`
    /// rooms and `clients` connections, no per-connection message rate limit (the players here
    /// act as fast as the server answers, faster than the limit allows a person), and
    /// warnings-only logs, and waits until it answers its readiness check.
    async fn start(
        common: &Common,
        rooms: usize,
        clients: usize,
        sqlite: bool,
    ) -> Result<Server, String> {
        if let Some(addr) = common.connect {
            let server = Server {
                child: None,
                addr,
                data_dir: None,
            };
            server.until_ready().await?;
            return Ok(server);
        }
        let binary = match &common.server {
            Some(path) => path.clone(),
            None => std::env::current_exe()
                .map_err(|e| e.to_string())?
                .with_file_name("dhumbal-server"),
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let data_dir = sqlite
            .then(|| std::env::temp_dir().join(format!("loadgen-{}-{port}", std::process::id())));
        let store: Vec<String> = match &data_dir {
            Some(dir) => vec!["--data-dir".into(), dir.display().to_string()],
            None => vec!["--store".into(), "memory".into()],
        };
        let mut command = if common.pin {
            pin_self()?;
            let mut taskset = Command::new("taskset");
            taskset.args(["-c", "0"]).arg(&binary);
            taskset
        } else {
            Command::new(&binary)
        };
        let child = command
            .args(&store)
            .args([
                "--addr",
                &addr.to_string(),
                "--bot-delay-ms",
                &common.bot_delay_ms.to_string(),
                "--ws-echo",
            ])
            .args(["--max-rooms", &(rooms + 16).to_string()])
            .args(["--max-connections", &(clients + 64).to_string()])
            .args([
                "--messages-per-sec",
                "1000000",
                "--message-burst",
                "1000000",
            ])
            // Every client comes from a few loopback addresses, and creates rooms at machine
            // speed: the per-address caps are for people.
            .args([
                "--max-connections-per-address",
                &(clients + 64).to_string(),
                "--room-creations-per-minute",
                &(rooms + 16).to_string(),
                "--max-rooms-per-address",
                &(rooms + 16).to_string(),
            ])
            // The idle sockets never say hello: they are held, not closed after 10 s.
            .args(["--hello-timeout", "0s"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let server = Server {
            child: Some(child),
            addr,
            data_dir,
        };
        server.until_ready().await?;
        Ok(server)
    }

    /// Waits until the server answers its readiness check (30 s at most).
    async fn until_ready(&self) -> Result<(), String> {
        let addr = self.addr;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let up = tokio::task::spawn_blocking(move || {
                dhumbal_server::health::check(addr, "/readyz").is_ok()
            })
            .await
            .unwrap_or(false);
            if up {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err("the server did not become ready".into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The server's process id; 0 for a server this program did not start (whose CPU and memory
    /// then read as 0).
    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The server's resident memory now, and its peak, in KiB (from `/proc/PID/status`).
    fn memory(&self) -> (u64, u64) {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = &self.data_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The server's `/metrics` text.
async fn metrics_text(server: SocketAddr) -> Result<String, String> {
    let (status, text) = http::exchange(local(), server, "GET", "/metrics", &[], "").await?;
    if status != 200 {
        return Err(format!("GET /metrics: {status}"));
    }
    Ok(text)
}

/// The address requests to the server come from.
fn local() -> std::net::IpAddr {
    Ipv4Addr::LOCALHOST.into()
}

/// A quantile of a Prometheus histogram in the metrics text, in seconds: the upper bound of the
/// first bucket that holds it (so an upper estimate), and how many values it holds. `series` is
/// the histogram's name, with its labels if it has any (`name{label="value"}`).
fn histogram_quantile(text: &str, series: &str, quantile: f64) -> Option<(f64, u64)> {
    let prefix = match series.split_once('{') {
        Some((name, labels)) => format!("{name}_bucket{{{},le=\"", labels.trim_end_matches('}')),
        None => format!("{series}_bucket{{le=\""),
    };
    let mut buckets: Vec<(f64, u64)> = text
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(&prefix)?;
            let (le, count) = rest.split_once("\"} ")?;
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            Some((le, count.trim().parse().ok()?))
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = buckets.last()?.1;
    let wanted = (total as f64 * quantile).ceil() as u64;
    buckets
        .iter()
        .find(|(_, count)| *count >= wanted.max(1))
        .map(|(le, _)| (*le, total))
}

/// The CPU time (user and system) a process has used, in seconds, from `/proc/PID/stat`
/// (in clock ticks of 1/100 s, as on every Linux x86-64 build).
fn cpu_seconds(pid: u32) -> f64 {
    stat_cpu_seconds(&std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default())
}

/// The CPU time of the SQLite store's writer thread and of its checkpointer in process `pid`,
/// in seconds, found by their names in `/proc/PID/task/*/comm` (`dhumbal-store`,
/// `dhumbal-checkpoint` cut to 15 bytes); 0 for a thread that is not there.
fn store_cpu_seconds(pid: u32) -> (f64, f64) {
    let mut found = (0.0, 0.0);
    if pid == 0 {
        return found;
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return found;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let seconds =
            || stat_cpu_seconds(&std::fs::read_to_string(path.join("stat")).unwrap_or_default());
        match comm.trim_end() {
            "dhumbal-store" => found.0 += seconds(),
            "dhumbal-checkpo" => found.1 += seconds(),
            _ => {}
        }
    }
    found
}

/// The user and system CPU time in a `/proc/.../stat` line, in seconds.
fn stat_cpu_seconds(stat: &str) -> f64 {
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

// ----- Sockets -----

/// A client's WebSocket.
type Ws = WebSocketStream<TcpStream>;

/// The loopback source address for the `n`th client.
fn source(common: &Common, n: usize) -> Ipv4Addr {
    let sources = usize::from(common.sources.max(1));
    let last = u8::try_from(2 + n % sources).expect("at most 255 sources");
    Ipv4Addr::new(127, 0, 0, last)
}

/// Opens a WebSocket to `path` on the server from the loopback address `from`.
async fn connect(server: SocketAddr, from: Ipv4Addr, path: &str) -> Result<Ws, String> {
    let socket = TcpSocket::new_v4().map_err(|e| e.to_string())?;
    socket
        .bind(SocketAddr::from((from, 0)))
        .map_err(|e| format!("bind {from}: {e}"))?;
    let stream = socket
        .connect(server)
        .await
        .map_err(|e| format!("connect from {from}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    // tungstenite's default read buffer (128 KiB, zeroed as it is reserved) would make the load
    // generator spend more time clearing memory than reading messages of under a kilobyte.
    let config = WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0);
    let (ws, _) = tokio_tungstenite::client_async_with_config(
        format!("ws://{server}{path}"),
        stream,
        Some(config),
    )
    .await
    .map_err(|e| format!("upgrade: {e}"))?;
    Ok(ws)
}

/// Sends one client message.
async fn send(ws: &mut Ws, message: ClientMessage) -> Result<(), String> {
    let text = serde_json::to_string(&ClientEnvelope::from(message)).map_err(|e| e.to_string())?;
    ws.send(Message::text(text))
        .await
        .map_err(|e| e.to_string())
}

/// The next server message, or `None` at the deadline.
async fn recv(
    ws: &mut Ws,
    deadline: tokio::time::Instant,
) -> Result<Option<ServerMessage>, String> {
    match recv_text(ws, deadline).await? {
        Some(text) => serde_json::from_str(text.as_str())
            .map(Some)
            .map_err(|e| format!("not a server message: {e}")),
        None => Ok(None),
    }
}

/// The next text message from the server, or `None` at the deadline.
async fn recv_text(
    ws: &mut Ws,
    deadline: tokio::time::Instant,
) -> Result<Option<tokio_tungstenite::tungstenite::Utf8Bytes>, String> {
    loop {
        let frame = match timeout_at(deadline, ws.next()).await {
            Err(_) => return Ok(None),
            Ok(None) => return Err("the server ended the socket".into()),
            Ok(Some(Err(e))) => return Err(e.to_string()),
            Ok(Some(Ok(frame))) => frame,
        };
        match frame {
            Message::Text(text) => return Ok(Some(text)),
            Message::Close(frame) => return Err(format!("closed by the server: {frame:?}")),
            _ => {}
        }
    }
}

/// Just enough of a server message to decide what a player does next; the full view is parsed
/// only on the seat's own turn, as a light client would.
#[derive(Deserialize)]
struct Peek {
    /// The message's type.
    #[serde(rename = "type")]
    kind: String,
    /// A `state`'s view.
    view: Option<PeekView>,
    /// An `error`'s code.
    code: Option<String>,
}

/// The part of a view that says whose turn it is.
#[derive(Deserialize)]
struct PeekView {
    seat: Option<usize>,
    turn: usize,
    phase: Phase,
    round: u32,
}

/// `POST /api/rooms` for a standard table of `players` seats, with bots of `difficulty`.
async fn create_room(
    server: SocketAddr,
    players: u8,
    difficulty: Difficulty,
) -> Result<CreatedRoom, String> {
    let request = CreateRoom {
        settings: Some(Settings {
            players,
            difficulty,
            ..Preset::Standard.settings()
        }),
        ..CreateRoom::default()
    };
    let body = serde_json::to_string(&request).map_err(|e| e.to_string())?;
    let (status, body) = http::exchange(local(), server, "POST", "/api/rooms", &[], &body).await?;
    if status != 201 {
        return Err(format!("room creation: {status} {body}"));
    }
    serde_json::from_str(&body).map_err(|e| format!("created room: {e}"))
}

// ----- Play -----

/// What one client or room measured.
struct Tally {
    /// Latency from an action to its resulting state (or echo), in microseconds.
    latency: Histogram<u64>,
    /// Actions answered.
    actions: u64,
    /// Matches finished (seen by the room's first seat).
    matches: u64,
    /// Errors, by kind.
    errors: BTreeMap<String, u64>,
    /// Clients that connected.
    connected: u64,
    /// Bytes of text the clients received while playing.
    received: u64,
    /// The people in rooms of bots (`--bot-rooms`): their latency and actions, kept apart from
    /// everyone else's.
    beside_bots: Option<Box<Tally>>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            latency: Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid bounds"),
            actions: 0,
            matches: 0,
            errors: BTreeMap::new(),
            connected: 0,
            received: 0,
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

    fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// The first word of an error, to group errors by kind.
fn kind(error: &str) -> String {
    error.split([':', ' ']).next().unwrap_or(error).to_owned()
}

/// Opens a room of people, `--humans` of them (the first is the host). Returns their sockets.
async fn seat_room(
    args: &PlayArgs,
    server: SocketAddr,
    room: usize,
    gate: &Semaphore,
) -> Result<Vec<Ws>, String> {
    let created = create_room(server, args.humans, Difficulty::Medium).await?;
    seat_people(args, server, room, gate, &created, args.humans).await
}

/// Opens one room of a person (the host) and three bots of `--bots`. Returns the person's socket.
async fn seat_bot_room(
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
async fn seat_people(
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
            connect(server, from, &created.ws).await?
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
        send(&mut ws, ClientMessage::Hello(hello)).await?;
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
async fn print_beside_bots(
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
async fn print_histogram(
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
async fn play_seat(
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
    loop {
        let text = match recv_text(&mut ws, deadline).await {
            Ok(Some(text)) => text,
            Ok(None) => break,
            Err(e) => {
                tally.error(kind(&e));
                return tally;
            }
        };
        tally.received += text.len() as u64;
        // Room updates need no answer: skip them unparsed.
        if text.as_str().starts_with(r#"{"type":"room""#) {
            continue;
        }
        let peek: Peek = match serde_json::from_str(text.as_str()) {
            Ok(peek) => peek,
            Err(e) => {
                tally.error(format!("bad message {e}"));
                continue;
            }
        };
        let answer = match (peek.kind.as_str(), peek.view) {
            ("state", Some(view)) => {
                if let Some(sent) = pending.take() {
                    tally.answered(sent);
                }
                let my_turn = view.seat == Some(view.turn)
                    && matches!(view.phase, Phase::Start | Phase::Throw | Phase::Draw);
                if my_turn {
                    match serde_json::from_str::<ServerMessage>(text.as_str()) {
                        Ok(ServerMessage::State { view, .. }) => {
                            if !think.is_zero() {
                                tokio::time::sleep(think).await;
                            }
                            pending = Some(Instant::now());
                            Some(random_action(&view, &mut rng))
                        }
                        _ => {
                            tally.error("bad state");
                            None
                        }
                    }
                } else if view.phase == Phase::RoundOver && ready_for < view.round {
                    ready_for = view.round;
                    Some(ClientMessage::Ready { client_seed: None })
                } else {
                    None
                }
            }
            ("match_result", _) => {
                tally.matches += 1;
                ready_for = 0;
                Some(ClientMessage::Rematch { client_seed: None })
            }
            ("error", _) => {
                tally.error(format!("error {}", peek.code.unwrap_or_default()));
                pending = None;
                None
            }
            _ => None,
        };
        if let Some(answer) = answer {
            if let Err(e) = send(&mut ws, answer).await {
                tally.error(kind(&e));
                return tally;
            }
        }
    }
    let _ = ws.close(None).await;
    tally
}

/// The same shape of load against a diagnostic route: each room's sockets take turns sending
/// `message`, until `deadline`. The sender's own copy back ends its wait; with `whole_room` (the
/// relay sends each message to every socket of the room) every socket reads its copy before the
/// next turn.
async fn take_turns(
    mut seats: Vec<Ws>,
    message: String,
    whole_room: bool,
    think: Duration,
    deadline: tokio::time::Instant,
) -> Tally {
    let mut tally = Tally::new();
    tally.connected = seats.len() as u64;
    let readers = if whole_room { seats.len() } else { 1 };
    let mut turn = 0;
    'play: while tokio::time::Instant::now() < deadline {
        if !think.is_zero() {
            tokio::time::sleep(think).await;
        }
        let sent = Instant::now();
        if let Err(e) = seats[turn].send(Message::text(message.clone())).await {
            tally.error(kind(&e.to_string()));
            break;
        }
        for n in 0..readers {
            let seat = (turn + n) % seats.len();
            match recv_text(&mut seats[seat], deadline).await {
                Ok(Some(text)) => tally.received += text.len() as u64,
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
        let _ = ws.close(None).await;
    }
    tally
}

/// What each diagnostic baseline sends: an action-sized message to the echo, or a message of
/// `size` bytes to the relay.
fn diagnostic_message(relay: bool, size: usize) -> String {
    if relay {
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

/// Opens the sockets of one room on a diagnostic route: `/ws-echo`, or the relay group named
/// after the room.
async fn seat_diagnostic_room(
    args: &PlayArgs,
    server: SocketAddr,
    room: usize,
    gate: &Semaphore,
    relay: bool,
) -> Result<Vec<Ws>, String> {
    let path = if relay {
        format!("/ws-relay/room{room}")
    } else {
        "/ws-echo".to_owned()
    };
    let mut seats = Vec::new();
    for n in 0..usize::from(args.humans) {
        let from = source(&args.common, room * usize::from(args.humans) + n);
        let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
        seats.push(connect(server, from, &path).await?);
    }
    Ok(seats)
}

/// What a play run measured.
struct Run {
    /// What the clients counted.
    tally: Tally,
    /// Seconds of play.
    seconds: f64,
    /// The server's resident memory and its peak (KiB) before the clients connected.
    memory_before: (u64, u64),
    /// The same halfway through the play.
    memory_during: (u64, u64),
    /// The same once every room had stopped playing.
    memory_after: (u64, u64),
    /// CPU seconds the server and this program used while playing.
    cpu: (f64, f64),
    /// CPU seconds the SQLite store's writer and checkpointer threads used while playing (0
    /// with another store, or a server this program did not start).
    store_cpu: (f64, f64),
}

impl Run {
    /// Actions answered per second of play.
    fn actions_per_second(&self) -> f64 {
        self.tally.actions as f64 / self.seconds
    }

    /// The median latency, in milliseconds.
    fn p50_ms(&self) -> f64 {
        self.tally.latency.value_at_quantile(0.5) as f64 / 1000.0
    }

    /// The 99th percentile of latency, in milliseconds.
    fn p99_ms(&self) -> f64 {
        self.tally.latency.value_at_quantile(0.99) as f64 / 1000.0
    }

    /// The server's CPU time per action answered, in microseconds.
    fn cpu_per_action_us(&self) -> f64 {
        1e6 * self.cpu.0 / self.tally.actions.max(1) as f64
    }

    /// The SQLite store's writer thread's CPU time per action answered, in microseconds.
    fn writer_per_action_us(&self) -> f64 {
        1e6 * self.store_cpu.0 / self.tally.actions.max(1) as f64
    }

    /// The SQLite store's checkpointer thread's CPU time per action answered, in microseconds.
    fn checkpointer_per_action_us(&self) -> f64 {
        1e6 * self.store_cpu.1 / self.tally.actions.max(1) as f64
    }

    /// The server's resident memory once the rooms had stopped playing, in KiB.
    fn memory_after_kib(&self) -> f64 {
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
        if t.matches > 0 {
            println!("matches finished:   {} (counted by every seat)", t.matches);
        }
        println!("errors:             {} {:?}", t.error_count(), t.errors);
        println!(
            "server RSS (KiB):   before {}  during {}  after {}  (peak {})",
            self.memory_before.0, self.memory_during.0, self.memory_after.0, self.memory_after.1
        );
        println!(
            "CPU while playing:  server {:.1} s ({:.0}% of a core, {:.0} us per action), loadgen {:.1} s",
            self.cpu.0,
            100.0 * self.cpu.0 / self.seconds,
            self.cpu_per_action_us(),
            self.cpu.1
        );
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
async fn run_rooms<S, SF, D, DF>(
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
    let started = Instant::now();
    let cpu_before = (cpu_seconds(server.pid()), cpu_seconds(std::process::id()));
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
    let store_after = store_cpu_seconds(server.pid());
    let store_cpu = (
        store_after.0 - store_before.0,
        store_after.1 - store_before.1,
    );
    let memory_after = server.memory();
    Ok(Run {
        tally,
        cpu,
        store_cpu,
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
/// `--echo`, its two baselines.
struct PlayFigures {
    /// The game's workload.
    game: Run,
    /// The same rooms against the relay and against the echo, with `--echo`.
    baselines: Option<Baselines>,
}

/// The game's two baselines on the same server.
struct Baselines {
    /// The same rooms against `/ws-relay`.
    relay: Run,
    /// The same rooms against `/ws-echo`.
    echo: Run,
}

/// `a / b`, or NaN if `b` is not positive (a baseline that answered nothing).
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

impl PlayArgs {
    /// How many clients the run opens, if its flags are within bounds.
    fn clients(&self) -> Result<usize, String> {
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
async fn play(args: PlayArgs) -> Result<PlayFigures, String> {
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
    for relay in [true, false] {
        // Let the previous run's sockets finish closing first.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let inner = Arc::clone(&args);
        let run = run_rooms(
            &args,
            args.rooms,
            &server,
            move |room, gate| {
                let args = Arc::clone(&inner);
                async move { seat_diagnostic_room(&args, addr, room, &gate, relay).await }
            },
            move |seats, _room, deadline| {
                take_turns(
                    seats,
                    diagnostic_message(relay, size),
                    relay,
                    think,
                    deadline,
                )
            },
        )
        .await?;
        if relay {
            run.print(&format!(
                "relay: the same rooms against /ws-relay, each message of {size} bytes to the \
                 whole room"
            ));
            baselines.push(("relay", run));
        } else {
            run.print(
                "echo: the same rooms of sockets against /ws-echo, one action-sized message back",
            );
            baselines.push(("echo", run));
        }
    }
    for (name, baseline) in &baselines {
        println!("== game / {name}");
        println!(
            "throughput: {name} {:.0} actions/s / game {:.0} actions/s = {:.2}x",
            baseline.actions_per_second(),
            game.actions_per_second(),
            baseline.actions_per_second() / game.actions_per_second()
        );
        println!(
            "p99 latency: game {:.3} ms / {name} {:.3} ms = {:.2}x",
            game.p99_ms(),
            baseline.p99_ms(),
            ratio(game.p99_ms(), baseline.p99_ms())
        );
        println!(
            "server CPU per action: game {:.0} us / {name} {:.0} us = {:.2}x",
            game.cpu_per_action_us(),
            baseline.cpu_per_action_us(),
            ratio(game.cpu_per_action_us(), baseline.cpu_per_action_us())
        );
    }
    let (Some((_, echo)), Some((_, relay))) = (baselines.pop(), baselines.pop()) else {
        return Err("a baseline is missing".into());
    };
    Ok(PlayFigures {
        game,
        baselines: Some(Baselines { relay, echo }),
    })
}

/// Prints what the SQLite log cost in one pair of runs: the ratios of its figures to the
/// memory store's.
fn print_store_cost(memory: &Run, sqlite: &Run) {
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
fn store_table(runs: &[Run]) -> String {
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
async fn play_game(
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

// ----- Idle -----

/// What an idle run measured.
struct IdleFigures {
    /// Connections opened and held.
    held: usize,
    /// Of those, still open at the end of the hold.
    still_open: usize,
    /// Connections that could not be opened, by kind of error.
    errors: BTreeMap<String, u64>,
    /// The server's resident memory per held connection, in bytes.
    bytes_per_connection: f64,
}

impl IdleArgs {
    /// Whether `--connections` is within bounds: the cap, and the limit on open files (the
    /// server's, inherited from this program, and this program's own).
    fn check(&self) -> Result<(), String> {
        if self.connections > MAX_IDLE_CONNECTIONS {
            return Err(format!("at most {MAX_IDLE_CONNECTIONS} connections"));
        }
        let (open_files, _) =
            rlimit::getrlimit(rlimit::Resource::NOFILE).map_err(|e| e.to_string())?;
        if self.connections as u64 + 64 > open_files {
            return Err(format!(
                "{} connections need more than the limit of {open_files} open files \
                 (raise the hard limit: ulimit -Hn)",
                self.connections
            ));
        }
        Ok(())
    }
}

/// The idle mode: prints what it measures, and returns it.
async fn idle(args: IdleArgs) -> Result<IdleFigures, String> {
    args.check()?;
    let common = Arc::new(args.common);
    let server = Server::start(&common, 16, args.connections, false).await?;
    println!(
        "server {} (pid {}); opening {} idle WebSockets over {} source addresses",
        server.addr,
        server.pid(),
        args.connections,
        common.sources
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = server.memory();
    let gate = Arc::new(Semaphore::new(common.connecting));
    let started = Instant::now();
    let mut opening = tokio::task::JoinSet::new();
    for n in 0..args.connections {
        let gate = Arc::clone(&gate);
        let common = Arc::clone(&common);
        let addr = server.addr;
        opening.spawn(async move {
            let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
            tokio::time::timeout(SETUP_LIMIT, connect(addr, source(&common, n), "/ws"))
                .await
                .map_err(|_| "timed out".to_owned())?
        });
    }
    let mut held = Vec::with_capacity(args.connections);
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    while let Some(opened) = opening.join_next().await {
        match opened {
            Ok(Ok(ws)) => held.push(ws),
            Ok(Err(e)) => *errors.entry(kind(&e)).or_default() += 1,
            Err(e) => *errors.entry(format!("task {e}")).or_default() += 1,
        }
    }
    let opened_in = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(args.hold)).await;
    // Every held socket is still open: the server has not dropped any.
    let mut still_open = 0;
    for ws in &mut held {
        match tokio::time::timeout(Duration::from_millis(1), ws.next()).await {
            Err(_) => still_open += 1,
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => still_open += 1,
            Ok(_) => {}
        }
    }
    let after = server.memory();
    let per = (after.0.saturating_sub(before.0) * 1024) as f64 / held.len().max(1) as f64;
    println!("== idle WebSockets");
    println!(
        "connections held:   {} of {} (opened in {:.1} s), still open after {} s: {}",
        held.len(),
        args.connections,
        opened_in,
        args.hold,
        still_open
    );
    println!(
        "errors:             {} {errors:?}",
        errors.values().sum::<u64>()
    );
    println!(
        "server RSS (KiB):   before {}  after {}  (peak {})",
        before.0, after.0, after.1
    );
    println!(
        "memory per idle connection: {:.0} bytes ({:.1} KiB)",
        per,
        per / 1024.0
    );
    let held_count = held.len();
    drop(held);
    Ok(IdleFigures {
        held: held_count,
        still_open,
        errors,
        bytes_per_connection: per,
    })
}

// ----- Report -----

/// How a figure of the report's table is written.
#[derive(Clone, Copy)]
enum Unit {
    /// A whole number, with thousands separated by commas.
    Whole,
    /// A figure to about three significant digits (milliseconds, microseconds).
    Significant,
    /// A ratio, to two decimals, with a `×`.
    Ratio,
}

/// A measure of a play run: its row's label, how its figures are written, its figure for one
/// workload, and whether the table gives ratios for it (the report's, the game's to the
/// baselines; `--pairs`, SQLite's to the memory store's).
type Measure = (&'static str, Unit, fn(&Run) -> f64, bool);

/// The play runs' measures, one row of the table each for the saturated runs and again for the
/// paced ones.
const MEASURES: [Measure; 5] = [
    ("actions/s", Unit::Whole, Run::actions_per_second, false),
    ("p50 latency (ms)", Unit::Significant, Run::p50_ms, false),
    ("p99 latency (ms)", Unit::Significant, Run::p99_ms, true),
    (
        "server CPU per action (µs)",
        Unit::Whole,
        Run::cpu_per_action_us,
        true,
    ),
    (
        "server RSS after the run (KiB)",
        Unit::Whole,
        Run::memory_after_kib,
        false,
    ),
];

/// One play run of the report: the game and its two baselines.
struct Trio {
    /// The game's workload.
    game: Run,
    /// The same rooms against the relay and the echo.
    baselines: Baselines,
}

impl Trio {
    /// The runs of the table's first three columns: game, relay, echo.
    fn runs(&self) -> [(&'static str, &Run); 3] {
        [
            ("game", &self.game),
            ("relay", &self.baselines.relay),
            ("echo", &self.baselines.echo),
        ]
    }
}

/// The report mode: `--runs` times, a saturated play run, a paced one and an idle one; then
/// the table of their medians and ranges, the command line, and what went wrong in any run.
async fn report(args: ReportArgs) -> Result<(), String> {
    if args.runs == 0 {
        return Err("at least one run".into());
    }
    let play_args = |think_ms: u64| PlayArgs {
        common: args.common.clone(),
        rooms: args.rooms,
        humans: args.humans,
        seconds: args.seconds,
        echo: true,
        think_ms,
        store: StoreChoice::Memory,
        pairs: 1,
        bot_rooms: 0,
        bots: Bots::Expert,
    };
    let idle_args = || IdleArgs {
        common: args.common.clone(),
        connections: args.idle_connections,
        hold: IDLE_HOLD_SECONDS,
    };
    // Check every flag before the first run, not halfway through the report.
    let clients = play_args(0).clients()?;
    idle_args().check()?;
    let conditions = [
        ("saturated".to_owned(), 0),
        (
            format!("paced (`--think-ms {}`)", args.think_ms),
            args.think_ms,
        ),
    ];
    let started = Instant::now();
    let mut plays: [Vec<Trio>; 2] = [Vec::new(), Vec::new()];
    let mut idles = Vec::new();
    let mut notes = Vec::new();
    for run in 1..=args.runs {
        for ((name, think_ms), trios) in conditions.iter().zip(&mut plays) {
            println!(
                "== report: run {run} of {}, {name}: game, relay, echo ({:.0} s in)",
                args.runs,
                started.elapsed().as_secs_f64()
            );
            // Let the previous server's sockets finish closing first.
            tokio::time::sleep(Duration::from_secs(2)).await;
            let figures = play(play_args(*think_ms))
                .await
                .map_err(|e| format!("run {run}, {name}: {e}"))?;
            let baselines = figures
                .baselines
                .ok_or_else(|| format!("run {run}, {name}: no baselines"))?;
            let trio = Trio {
                game: figures.game,
                baselines,
            };
            let mut summary = Vec::new();
            for (workload, measured) in trio.runs() {
                summary.push(format!(
                    "{workload} {:.0} actions/s, p99 {:.3} ms, {:.0} us CPU",
                    measured.actions_per_second(),
                    measured.p99_ms(),
                    measured.cpu_per_action_us()
                ));
                let t = &measured.tally;
                if t.error_count() > 0 || t.connected < clients as u64 {
                    notes.push(format!(
                        "run {run}, {name}, {workload}: {} of {clients} clients connected, {} errors {:?}",
                        t.connected,
                        t.error_count(),
                        t.errors
                    ));
                }
            }
            println!("report: run {run}, {name}: {}", summary.join("; "));
            trios.push(trio);
        }
        println!(
            "== report: run {run} of {}, idle: {} connections ({:.0} s in)",
            args.runs,
            args.idle_connections,
            started.elapsed().as_secs_f64()
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
        let figures = idle(idle_args())
            .await
            .map_err(|e| format!("run {run}, idle: {e}"))?;
        println!(
            "report: run {run}, idle: {:.0} bytes per connection",
            figures.bytes_per_connection
        );
        let errors: u64 = figures.errors.values().sum();
        if errors > 0 || figures.held < args.idle_connections || figures.still_open < figures.held {
            notes.push(format!(
                "run {run}, idle: {} of {} connections held, {} still open, {errors} errors {:?}",
                figures.held, args.idle_connections, figures.still_open, figures.errors
            ));
        }
        idles.push(figures);
    }
    println!(
        "== report: {} runs in {:.0} s",
        args.runs,
        started.elapsed().as_secs_f64()
    );
    println!();
    println!(
        "{} rooms x {} people = {} clients, {} s of each workload, median (min–max) of {} runs; \
         server and loadgen on one machine of {} cores",
        args.rooms,
        args.humans,
        thousands(clients as f64),
        args.seconds,
        args.runs,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!(
        "{}",
        report_table(&conditions, &plays, &idles, args.idle_connections)
    );
    println!();
    println!("Command: `{}`", command_line());
    println!();
    if notes.is_empty() {
        println!("Every client connected, and no errors, in every run.");
    } else {
        println!("Errors or missing clients:");
        for note in notes {
            println!("- {note}");
        }
    }
    Ok(())
}

/// The report's Markdown table: a row per measure, saturated then paced, then idle; a column
/// per workload, then the game's ratios to the relay and to the echo.
fn report_table(
    conditions: &[(String, u64); 2],
    plays: &[Vec<Trio>; 2],
    idles: &[IdleFigures],
    idle_connections: usize,
) -> String {
    let mut lines = vec![
        "| median (min–max) | game | relay | echo | game / relay | game / echo |".to_owned(),
        "|---|---|---|---|---|---|".to_owned(),
    ];
    for ((name, _), trios) in conditions.iter().zip(plays) {
        for (label, unit, measure, ratios) in MEASURES {
            let mut cells: Vec<String> = (0..3)
                .map(|column| {
                    let values: Vec<f64> = trios
                        .iter()
                        .map(|trio| measure(trio.runs()[column].1))
                        .collect();
                    spread_cell(&values, unit)
                })
                .collect();
            for baseline in 1..3 {
                cells.push(if ratios {
                    let values: Vec<f64> = trios
                        .iter()
                        .map(|trio| {
                            let runs = trio.runs();
                            ratio(measure(runs[0].1), measure(runs[baseline].1))
                        })
                        .collect();
                    spread_cell(&values, Unit::Ratio)
                } else {
                    String::new()
                });
            }
            cells.insert(0, format!("{name}: {label}"));
            lines.push(table_row(&cells));
        }
    }
    let per_connection: Vec<f64> = idles.iter().map(|f| f.bytes_per_connection).collect();
    lines.push(table_row(&[
        format!(
            "idle: memory per connection at {} connections (bytes)",
            thousands(idle_connections as f64)
        ),
        spread_cell(&per_connection, Unit::Whole),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]));
    lines.join("\n")
}

/// A row of a Markdown table (an empty cell is written `| |`).
fn table_row(cells: &[String]) -> String {
    let mut row = "|".to_owned();
    for cell in cells {
        if !cell.is_empty() {
            row.push(' ');
            row.push_str(cell);
        }
        row.push_str(" |");
    }
    row
}

/// `median (min–max)` of `values`, written as `unit` says (empty if there are none).
fn spread_cell(values: &[f64], unit: Unit) -> String {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (Some(&min), Some(&max)) = (sorted.first(), sorted.last()) else {
        return String::new();
    };
    let middle = sorted.len() / 2;
    let median = if sorted.len() % 2 == 0 {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    } else {
        sorted[middle]
    };
    let write = |v: f64| match unit {
        Unit::Whole => thousands(v),
        Unit::Significant => {
            let decimals = if v >= 100.0 {
                0
            } else if v >= 10.0 {
                1
            } else if v >= 1.0 {
                2
            } else {
                3
            };
            format!("{v:.decimals$}")
        }
        Unit::Ratio => format!("{v:.2}×"),
    };
    format!("{} ({}–{})", write(median), write(min), write(max))
}

/// `v` rounded to a whole number, its thousands separated by commas.
fn thousands(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (n, digit) in digits.chars().enumerate() {
        if n > 0 && (digits.len() - n) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if v.round() < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// This program's command line, each argument quoted for a POSIX shell if it needs to be.
fn command_line() -> String {
    std::env::args()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                arg
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of `actions` in 10 s, whose latencies are all `latency_us`, with these CPU times.
    fn run(actions: u64, latency_us: u64, cpu: f64, store_cpu: (f64, f64)) -> Run {
        let mut tally = Tally::new();
        tally.actions = actions;
        tally
            .latency
            .record_n(latency_us, actions)
            .expect("within bounds");
        Run {
            tally,
            seconds: 10.0,
            memory_before: (0, 0),
            memory_during: (0, 0),
            memory_after: (0, 0),
            cpu: (cpu, 0.0),
            store_cpu,
        }
    }

    #[test]
    fn quantiles_are_read_from_plain_and_labelled_histograms() {
        let text = "\
dhumbal_store_append_seconds_bucket{le=\"0.001\"} 90
dhumbal_store_append_seconds_bucket{le=\"0.005\"} 99
dhumbal_store_append_seconds_bucket{le=\"0.05\"} 100
dhumbal_store_append_seconds_bucket{le=\"+Inf\"} 100
dhumbal_store_hold_seconds_bucket{step=\"commit\",le=\"0.0001\"} 3
dhumbal_store_hold_seconds_bucket{step=\"commit\",le=\"0.001\"} 4
dhumbal_store_hold_seconds_bucket{step=\"commit\",le=\"+Inf\"} 4
dhumbal_store_hold_seconds_bucket{step=\"pass\",le=\"0.0001\"} 0
dhumbal_store_hold_seconds_bucket{step=\"pass\",le=\"+Inf\"} 0
";
        let append = "dhumbal_store_append_seconds";
        assert_eq!(histogram_quantile(text, append, 0.5), Some((0.001, 100)));
        assert_eq!(histogram_quantile(text, append, 0.99), Some((0.005, 100)));
        assert_eq!(histogram_quantile(text, append, 1.0), Some((0.05, 100)));
        let commit = "dhumbal_store_hold_seconds{step=\"commit\"}";
        assert_eq!(histogram_quantile(text, commit, 0.5), Some((0.0001, 4)));
        assert_eq!(histogram_quantile(text, commit, 1.0), Some((0.001, 4)));
        // No samples, no quantile; and no such series at all, none either.
        let pass = "dhumbal_store_hold_seconds{step=\"pass\"}";
        assert_eq!(histogram_quantile(text, pass, 0.5), None);
        let restart = "dhumbal_store_hold_seconds{step=\"restart\"}";
        assert_eq!(histogram_quantile(text, restart, 0.5), None);
    }

    #[test]
    fn cpu_time_is_read_past_a_name_with_spaces_and_parentheses() {
        // utime 250 and stime 150 ticks: fields 14 and 15.
        let stat = "4242 (dhumbal (x) y) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0";
        assert!((stat_cpu_seconds(stat) - 4.0).abs() < 1e-9);
        assert!(stat_cpu_seconds("").abs() < 1e-9);
    }

    #[test]
    fn the_store_threads_are_found_by_name() {
        let pid = std::process::id();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let (busy, worked) = std::sync::mpsc::channel();
        // A thread named as the store's writer, which works until its own CPU time shows.
        let writer = std::thread::Builder::new()
            .name("dhumbal-store".into())
            .spawn(move || {
                let own = || {
                    stat_cpu_seconds(
                        &std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default(),
                    )
                };
                let mut spun = 0_u64;
                while own() < 0.03 {
                    spun = std::hint::black_box(spun.wrapping_add(1));
                }
                busy.send(()).expect("the test waits");
                stopped.recv().ok();
            })
            .expect("a thread");
        worked.recv().expect("the thread worked");
        let (writer_cpu, checkpointer_cpu) = store_cpu_seconds(pid);
        stop.send(()).expect("the thread waits");
        writer.join().expect("the thread ends");
        assert!(writer_cpu >= 0.03, "{writer_cpu} s");
        assert!(checkpointer_cpu.abs() < 1e-9, "{checkpointer_cpu} s");
        // A server this program did not start has no pid to read.
        assert_eq!(store_cpu_seconds(0), (0.0, 0.0));
    }

    #[test]
    fn the_pairs_table_gives_medians_ranges_and_ratios_within_pairs() {
        // Three pairs, each memory then SQLite.
        let runs = [
            run(200_000, 40_000, 8.0, (0.0, 0.0)),
            run(160_000, 44_000, 8.0, (0.4, 0.03)),
            run(250_000, 50_000, 8.0, (0.0, 0.0)),
            run(225_000, 45_000, 8.0, (0.45, 0.05)),
            run(220_000, 40_000, 8.0, (0.0, 0.0)),
            run(165_000, 40_000, 8.0, (0.33, 0.02)),
        ];
        let table = store_table(&runs);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 7, "{table}");
        // Ratios 0.80, 0.90 and 0.75, each within its pair: the median is 0.80.
        assert_eq!(
            lines[2],
            "| actions/s | 22,000 (20,000–25,000) | 16,500 (16,000–22,500) | 0.80× (0.75×–0.90×) |"
        );
        assert!(
            lines[3].starts_with("| p99 latency (ms) | 40.0 (40.0–50.0) |"),
            "{}",
            lines[3]
        );
        // The store's own threads have no memory-store figure and no ratio.
        assert_eq!(
            lines[5],
            "| the writer's CPU per action (µs) | | 2.00 (2.00–2.50) | |"
        );
    }

    #[test]
    fn pairs_are_refused_where_they_mean_nothing() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        for flags in [
            &["--pairs", "2"][..],
            &["--pairs", "2", "--store", "sqlite"],
            &["--pairs", "2", "--store", "both", "--echo"],
            &["--pairs", "0", "--store", "both"],
        ] {
            let cli = Cli::try_parse_from(["loadgen", "play"].iter().chain(flags))
                .expect("the flags parse");
            let Mode::Play(args) = cli.mode else {
                panic!("not the play mode")
            };
            let refused = runtime.block_on(play(args)).err().expect("refused");
            assert!(refused.contains("--pairs"), "{flags:?}: {refused}");
        }
    }
}
