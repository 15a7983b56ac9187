//! The crash harness (issue 13, "Proof"): the real server, killed with SIGKILL at random moments
//! while rooms are being played, must give every client back what it had received.
//!
//! [`run`] starts the server binary with a fresh data directory (the SQLite room log), opens
//! rooms of all three presets, each with one to three people (WebSocket clients) and bots, and
//! lets the people play random legal actions (and ask for a rematch after each match, so that
//! every room is always playing). Then, `kills` times: play for a random while,
//! SIGKILL the server, read every socket to its end (so that each client holds everything the
//! server managed to send), restart the server on the same address and data directory, wait for
//! `/readyz`, and reconnect every person with its seat token.
//!
//! # The check
//!
//! What a client has received before the kill is what it has *acknowledged*: its kept history
//! ([`History`]: the round results and the current round's log) and its last view. The server
//! appends an input before anything it causes is sent, so all of it must come back:
//!
//! - the restored results must begin with the client's results, and, when no new round result
//!   appeared, the restored log must begin with the client's log;
//! - if the restored history is exactly the client's, the restored view must equal the client's
//!   last view (when the last thing the client received was a view: a kill between an event and
//!   the view it causes leaves a view that is one step behind);
//! - a longer history is allowed: inputs committed before the kill whose effects were not yet
//!   sent, or moves the bots made after the restart before the client was back (a round scored
//!   since, or the next deal after a round the client had the result of). These are counted
//!   separately ("committed, unsent, recovered"), and so is the case of a client that had asked
//!   for a rematch after a finished match and comes back to the new match.
//!
//! Anything else (a room that does not come back, a shorter history, a different event, a
//! different view with the same history) is a loss, counted in acknowledged items: the client's
//! results and log events from the first difference on.
//!
//! After the last kill every room's match is played to its end (no rematch). Throughout, the
//! engine's invariants are checked on what the clients see: every view holds the whole pack (hands, stock and pile), a
//! seat's hand has as many cards as the table says, the shown hands hold no card twice, the
//! Paid row sums to zero in settlement scoring, every Total is the previous one plus Paid, and
//! every match ends with a `match_result` whose results and standings agree with the rounds.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dhumbal_engine::{Event, HandHistory, Phase, Preset, RoundResult, Scoring, SeatView, Settings};
use dhumbal_protocol::{
    ClientEnvelope, ClientMessage, CreateRoom, CreatedRoom, Hello, History, MatchResult,
    PROTOCOL_VERSION, ServerMessage, Stage,
};
use futures_util::{SinkExt, StreamExt};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio_tungstenite::tungstenite::Message;

use crate::process::ServerProcess;
use crate::{Client, PATIENCE, answer, http, random_action};

/// The flags of a server played by harnesses at machine speed: bots act at once, and the limits
/// meant for people (message rate, room creations and rooms per address) are out of the way.
pub(crate) const AT_MACHINE_SPEED: [&str; 10] = [
    "--bot-delay-ms",
    "0",
    "--message-burst",
    "1000000",
    "--messages-per-sec",
    "1000000",
    "--room-creations-per-minute",
    "100000",
    "--max-rooms-per-address",
    "100000",
];

/// The people's names, one per seat a person takes.
const NAMES: [&str; 3] = ["Asha", "Bina", "Chandra"];

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// How many times the server is killed.
    pub kills: u32,
    /// How many rooms are played.
    pub rooms: usize,
    /// The seed of every random choice the harness makes (rooms, moves, when to kill). The
    /// moment a kill lands in the server's work still depends on timing.
    pub seed: u64,
    /// The server binary.
    pub server: PathBuf,
    /// The shortest time play runs between a restart and the next kill.
    pub min_play: Duration,
    /// The longest time play runs between a restart and the next kill.
    pub max_play: Duration,
    /// The longest a person thinks before each move (a random time up to this); zero plays as
    /// fast as the server answers, which keeps it busiest when the kill lands.
    pub think: Duration,
    /// Whether to print a line per kill.
    pub verbose: bool,
}

impl Options {
    /// The defaults of the full harness: 100 kills, 20 rooms, play for 50–400 ms between kills.
    pub fn new(server: PathBuf, seed: u64) -> Options {
        Options {
            kills: 100,
            rooms: 20,
            seed,
            server,
            min_play: Duration::from_millis(50),
            max_play: Duration::from_millis(400),
            think: Duration::ZERO,
            verbose: false,
        }
    }
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The seed the run used.
    pub seed: u64,
    /// How many times the server was killed (and restarted).
    pub kills: u32,
    /// How many rooms were played.
    pub rooms: usize,
    /// How many rooms each preset had, by name.
    pub presets: BTreeMap<&'static str, usize>,
    /// How many people (WebSocket clients) played.
    pub people: usize,
    /// Reconnections made after restarts (one per person per kill).
    pub reconnections: u64,
    /// Reconnections refused or unanswered: the seat or the room did not come back.
    pub not_restored: u64,
    /// Acknowledged items checked: at each kill, each client's kept history (its round results
    /// and the current round's log events), summed.
    pub acknowledged_checked: u64,
    /// Acknowledged items missing after a restart: must be 0.
    pub acknowledged_lost: u64,
    /// Restored views compared with the client's last view (history unchanged).
    pub views_compared: u64,
    /// Restored views that differed from the client's last view with the same history: must
    /// be 0 (each is also counted as one lost item).
    pub views_differing: u64,
    /// Reconnections whose history came back exactly as the client had it, but whose last
    /// message was an event or a result rather than the view it causes (not comparable).
    pub views_behind: u64,
    /// Items in restored histories beyond what the client had received: inputs committed but
    /// not yet sent when the process died, and moves bots made after the restart.
    pub committed_unsent_recovered: u64,
    /// Of those, moves a person had sent and not yet seen answered that came back as its
    /// seat's next move.
    pub own_moves_recovered: u64,
    /// Moves a person had sent and not seen answered that were not in the restored history
    /// (never committed: allowed, and sent again).
    pub own_moves_not_committed: u64,
    /// Reconnections after a finished match for which the client had asked a rematch, where
    /// the restored history is the new match's (the rematch was committed, its deal not sent).
    pub rematches_recovered: u64,
    /// Reconnections that found the room at a later match than the client had left: the others
    /// asked a rematch while this person was away (a person away is not waited for). What the
    /// client had is then checked against the earlier match's hand history, kept by the server.
    pub later_match: u64,
    /// Events received by all clients over the run (every `event` message).
    pub events_received: u64,
    /// Matches played to their end (each room plays a match, then a rematch, and so on until
    /// the last kill; then its last match to its end).
    pub matches_finished: usize,
    /// Rooms whose last match was played to its end, with the same `match_result` for every
    /// person.
    pub rooms_finished: usize,
    /// Round results checked for the invariants.
    pub rounds_checked: u64,
    /// Views checked for the invariants.
    pub views_checked: u64,
    /// Refusals the people received (a random move refused, say); each is answered with
    /// another move.
    pub refusals: BTreeMap<String, u64>,
    /// Error lines in the server's logs.
    pub server_errors: Vec<String>,
    /// Every failed check, described.
    pub failures: Vec<String>,
    /// The longest time from a kill to every client being back in its seat (the restart, the
    /// restore of every room, `/readyz`, the reconnections).
    pub restart_max: Duration,
    /// The time from kills to every client being back, summed over the kills.
    pub restart_total: Duration,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Report {
    /// Adds what `other` counted over some reconnections (a cluster's person, say).
    pub fn absorb(&mut self, other: &Report) {
        self.reconnections += other.reconnections;
        self.not_restored += other.not_restored;
        self.acknowledged_checked += other.acknowledged_checked;
        self.acknowledged_lost += other.acknowledged_lost;
        self.views_compared += other.views_compared;
        self.views_differing += other.views_differing;
        self.views_behind += other.views_behind;
        self.committed_unsent_recovered += other.committed_unsent_recovered;
        self.own_moves_recovered += other.own_moves_recovered;
        self.own_moves_not_committed += other.own_moves_not_committed;
        self.rematches_recovered += other.rematches_recovered;
        self.later_match += other.later_match;
        self.failures.extend(other.failures.iter().cloned());
    }

    /// Whether every check held: nothing acknowledged lost, every room restored, every match
    /// finished, no invariant broken.
    pub fn passed(&self) -> bool {
        self.acknowledged_lost == 0
            && self.not_restored == 0
            && self.views_differing == 0
            && self.failures.is_empty()
            && self.rooms_finished == self.rooms
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let presets: Vec<String> = self
            .presets
            .iter()
            .map(|(p, n)| format!("{n} {p}"))
            .collect();
        writeln!(f, "seed                          {}", self.seed)?;
        writeln!(f, "kills (SIGKILL + restart)     {}", self.kills)?;
        writeln!(
            f,
            "rooms                         {} ({}), {} people, the other seats bots",
            self.rooms,
            presets.join(", "),
            self.people
        )?;
        writeln!(
            f,
            "reconnections                 {} ({} not restored)",
            self.reconnections, self.not_restored
        )?;
        writeln!(
            f,
            "acknowledged items checked    {} (results + log events held by clients at each kill)",
            self.acknowledged_checked
        )?;
        writeln!(
            f,
            "acknowledged items lost       {}",
            self.acknowledged_lost
        )?;
        writeln!(
            f,
            "views compared                {} equal, {} differing, {} not comparable (kill between an event and its view)",
            self.views_compared - self.views_differing,
            self.views_differing,
            self.views_behind
        )?;
        writeln!(
            f,
            "committed, unsent, recovered  {} items ({} a person's own unanswered move, {} a rematch); {} unanswered moves not committed",
            self.committed_unsent_recovered,
            self.own_moves_recovered,
            self.rematches_recovered,
            self.own_moves_not_committed
        )?;
        if self.later_match > 0 {
            writeln!(
                f,
                "back at a later match         {} (checked against the earlier match's hand history)",
                self.later_match
            )?;
        }
        writeln!(f, "events received               {}", self.events_received)?;
        writeln!(
            f,
            "invariants checked            {} views, {} round results",
            self.views_checked, self.rounds_checked
        )?;
        writeln!(
            f,
            "matches finished              {} ({} of {} rooms played their last match to the end)",
            self.matches_finished, self.rooms_finished, self.rooms
        )?;
        if !self.refusals.is_empty() {
            let refusals: Vec<String> = self
                .refusals
                .iter()
                .map(|(code, n)| format!("{n} {code}"))
                .collect();
            writeln!(f, "refused moves                 {}", refusals.join(", "))?;
        }
        writeln!(
            f,
            "server error lines            {}",
            self.server_errors.len()
        )?;
        for line in self.server_errors.iter().take(10) {
            writeln!(f, "  {line}")?;
        }
        let mean = self.restart_total / self.kills.max(1);
        writeln!(
            f,
            "kill to everyone back         {mean:.0?} on average, {:.0?} at most",
            self.restart_max
        )?;
        writeln!(f, "time                          {:.1?}", self.elapsed)?;
        for failure in self.failures.iter().take(50) {
            writeln!(f, "FAILED: {failure}")?;
        }
        if self.failures.len() > 50 {
            writeln!(f, "… and {} more failures", self.failures.len() - 50)?;
        }
        write!(
            f,
            "{}",
            if self.passed() {
                "PASSED: nothing acknowledged was lost"
            } else {
                "FAILED"
            }
        )
    }
}

/// Runs the harness and reports what it found. It does not panic on a failed check: every
/// failure is in the report (see [`Report::passed`]).
pub async fn run(options: &Options) -> Report {
    let started = Instant::now();
    let mut report = Report {
        seed: options.seed,
        rooms: options.rooms,
        ..Report::default()
    };
    let data = DataDir::create(options.seed);
    let mut harness = Harness::new(options, &data.0);
    let outcome = harness.run(&mut report).await;
    if let Err(failure) = outcome {
        report.failures.push(failure);
    }
    finish(&mut harness.people, &mut report);
    report.elapsed = started.elapsed();
    report
}

/// A temporary data directory, removed when dropped.
struct DataDir(PathBuf);

impl DataDir {
    fn create(seed: u64) -> DataDir {
        let path =
            std::env::temp_dir().join(format!("dhumbal-crash-{}-{seed:x}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create the data directory");
        DataDir(path)
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The harness's state: the server and the people.
struct Harness<'a> {
    options: &'a Options,
    program: String,
    args: Vec<String>,
    rng: StdRng,
    /// The people of every room (while they play, in their tasks).
    people: Vec<Person>,
}

/// A person at a table: a WebSocket client and what it needs to play and to be checked.
pub(crate) struct Person {
    /// The connection, with the history and view it keeps.
    pub(crate) client: Client,
    /// The room's code.
    pub(crate) code: String,
    /// The room's number in this run.
    room: usize,
    /// The person's name.
    name: String,
    /// The seat token.
    token: String,
    /// The seat.
    seat: usize,
    /// The table's pack size.
    deck_size: usize,
    /// The table's scoring.
    scoring: Scoring,
    /// The person's own random choices.
    rng: StdRng,
    /// The last round `ready` was sent for.
    ready_for: u32,
    /// Whether the last history-changing message or view received was a view.
    last_was_state: bool,
    /// Whether a move was sent and its event not yet received.
    pending: bool,
    /// Whether to answer the current view before reading (after a reconnection).
    pub(crate) answer_now: bool,
    /// The longest think time.
    think: Duration,
    /// How long the current play goes on: while it runs until the kill, a finished match is
    /// followed by a rematch; in the last play, it is not.
    pub(crate) until: Until,
    /// Whether `rematch` was sent for the current match.
    rematch_sent: bool,
    /// Whether the current match's `match_result` has arrived on this connection.
    pub(crate) match_over: bool,
    /// Every match's result, in order (each once).
    match_results: Vec<MatchResult>,
    /// Events received.
    events: u64,
    /// Views checked.
    views_checked: u64,
    /// Round results checked.
    rounds_checked: u64,
    /// Refusals received, by code.
    refusals: BTreeMap<String, u64>,
    /// Failed checks.
    pub(crate) failures: Vec<String>,
}

/// How a read ended.
// One `Read` at a time lives on a reader loop's stack and is matched at once; boxing the message
// (which grew with the table's settings) would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Read {
    /// A message.
    Message(ServerMessage),
    /// The socket closed (the server died, or closed it).
    Closed,
    /// Nothing for [`PATIENCE`].
    Stalled,
}

/// How long play goes on in a task.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Until {
    /// Until the socket closes (the server is killed).
    Closed,
    /// Until the match is over.
    MatchOver,
}

impl Harness<'_> {
    fn new<'a>(options: &'a Options, data_dir: &Path) -> Harness<'a> {
        let mut args: Vec<String> = [
            "--data-dir",
            &data_dir.display().to_string(),
            "--store",
            "sqlite",
        ]
        .map(str::to_owned)
        .to_vec();
        args.extend(AT_MACHINE_SPEED.map(str::to_owned));
        Harness {
            options,
            program: options.server.display().to_string(),
            args,
            rng: StdRng::seed_from_u64(options.seed),
            people: Vec::new(),
        }
    }

    /// Starts the server (on `addr`, or a free port), in a blocking task.
    async fn start(&self, addr: Option<SocketAddr>) -> Result<ServerProcess, String> {
        let program = self.program.clone();
        let args = self.args.clone();
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            match addr {
                Some(addr) => ServerProcess::start_on(&program, addr, &args),
                None => ServerProcess::start(&program, &args),
            }
        })
        .await
        .map_err(|e| format!("the server did not start: {e}"))
    }

    async fn run(&mut self, report: &mut Report) -> Result<(), String> {
        let mut server = self.start(None).await?;
        let addr = server.addr;
        ready(addr).await?;
        for room in 0..self.options.rooms {
            let preset = Preset::ALL[room % Preset::ALL.len()];
            *report.presets.entry(preset.name()).or_default() += 1;
            let people = open_room(
                addr,
                room,
                preset,
                preset.settings(),
                &mut self.rng,
                self.options.think,
            )
            .await?;
            self.people.extend(people);
            report.people = self.people.len();
        }
        for kill in 1..=self.options.kills {
            let play_for = self
                .rng
                .random_range(self.options.min_play..=self.options.max_play);
            let tasks: Vec<_> = self
                .people
                .drain(..)
                .map(|p| tokio::spawn(play(p, Until::Closed)))
                .collect();
            tokio::time::sleep(play_for).await;
            let killed = Instant::now();
            server = tokio::task::spawn_blocking(move || {
                server.kill();
                server
            })
            .await
            .map_err(|e| format!("killing the server: {e}"))?;
            collect_logs(&server, report);
            report.kills = kill;
            for task in tasks {
                match task.await {
                    Ok(person) => self.people.push(person),
                    Err(e) => report
                        .failures
                        .push(format!("kill {kill}: a client's task failed: {e}")),
                }
            }
            drop(server);
            server = self.start(Some(addr)).await?;
            ready(addr).await?;
            let before = report.acknowledged_lost;
            for person in &mut self.people {
                reconnect(person, addr, kill, report).await;
            }
            let back = killed.elapsed();
            report.restart_total += back;
            report.restart_max = report.restart_max.max(back);
            if self.options.verbose {
                println!(
                    "kill {kill:>3}: after {play_for:>4.0?} of play; everyone back in {back:>4.0?}; {} items checked so far, {} lost ({} this time)",
                    report.acknowledged_checked,
                    report.acknowledged_lost,
                    report.acknowledged_lost - before
                );
            }
        }
        // Play every match to its end.
        let tasks: Vec<_> = self
            .people
            .drain(..)
            .map(|p| tokio::spawn(play(p, Until::MatchOver)))
            .collect();
        for task in tasks {
            match task.await {
                Ok(person) => self.people.push(person),
                Err(e) => report
                    .failures
                    .push(format!("the last play: a client's task failed: {e}")),
            }
        }
        collect_logs(&server, report);
        server = tokio::task::spawn_blocking(move || {
            server.kill();
            server
        })
        .await
        .map_err(|e| format!("killing the server: {e}"))?;
        drop(server);
        Ok(())
    }
}

/// Creates a room of `preset` with these `settings` (the preset's own, or changed) at `addr`,
/// seats its people (the host first, one to three of them, each with a random think time up to
/// `think`) and starts the match.
pub(crate) async fn open_room(
    addr: SocketAddr,
    room: usize,
    preset: Preset,
    settings: Settings,
    rng: &mut StdRng,
    think: Duration,
) -> Result<Vec<Person>, String> {
    let create = CreateRoom {
        preset: Some(preset),
        settings: (settings != preset.settings()).then(|| settings.clone()),
        decks: None,
    };
    let body = serde_json::to_string(&create).expect("a request serializes");
    let (status, answer) = http::post(addr, "/api/rooms", &body).await;
    if status != 201 {
        return Err(format!("creating room {room}: {status} {answer}"));
    }
    let created: CreatedRoom =
        serde_json::from_str(&answer).map_err(|e| format!("creating room {room}: {e}"))?;
    let count = rng.random_range(1..=NAMES.len().min(usize::from(settings.players) - 1));
    let mut people = Vec::new();
    for (i, name) in NAMES.iter().take(count).enumerate() {
        let secret = (i == 0).then_some(created.host_secret.as_str());
        let client = Client::join(addr, &created.code, name, secret).await;
        let (Some(seat), Some(token)) = (client.seat(), client.token()) else {
            return Err(format!("room {room}: {name} has no seat"));
        };
        people.push(Person {
            client,
            code: created.code.clone(),
            room,
            name: (*name).to_owned(),
            token,
            seat,
            deck_size: settings.deck_size(),
            scoring: settings.scoring,
            rng: StdRng::seed_from_u64(rng.random()),
            ready_for: 0,
            last_was_state: false,
            pending: false,
            answer_now: false,
            think,
            until: Until::Closed,
            rematch_sent: false,
            match_over: false,
            match_results: Vec::new(),
            events: 0,
            views_checked: 0,
            rounds_checked: 0,
            refusals: BTreeMap::new(),
            failures: Vec::new(),
        });
    }
    people[0].send(ClientMessage::Start).await;
    Ok(people)
}

/// Waits for `GET /readyz` to answer 200.
async fn ready(addr: SocketAddr) -> Result<(), String> {
    let give_up = Instant::now() + PATIENCE;
    loop {
        let (status, _) = http::get(addr, "/readyz").await;
        if status == 200 {
            return Ok(());
        }
        if Instant::now() > give_up {
            return Err(format!("/readyz still answers {status} after {PATIENCE:?}"));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Keeps the server's error lines.
fn collect_logs(server: &ServerProcess, report: &mut Report) {
    for line in server.drain_logs() {
        let level = serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .and_then(|v| v["level"].as_str().map(str::to_owned));
        if level.as_deref() == Some("ERROR") {
            report.server_errors.push(line);
        }
    }
}

/// Plays `person`'s seat until the socket closes or, with [`Until::MatchOver`], until its
/// match is over.
async fn play(mut person: Person, until: Until) -> Person {
    person.until = until;
    if person.answer_now {
        person.answer_now = false;
        person.respond().await;
    }
    loop {
        let over = person
            .client
            .view
            .as_ref()
            .is_some_and(|v| v.phase == Phase::MatchOver);
        if until == Until::MatchOver && person.match_over && over {
            // Leave, as the cluster's people do (`cluster::keep_playing`): a `rematch` sent
            // before may still start another match, which must not wait for this socket.
            person.client.leave().await;
            return person;
        }
        match person.read().await {
            Read::Message(message) => person.handle(message).await,
            Read::Closed => {
                if until == Until::MatchOver {
                    let failure = format!("{}: the socket closed before the match ended", person);
                    person.failures.push(failure);
                }
                return person;
            }
            Read::Stalled => {
                let failure = format!("{}: nothing received for {PATIENCE:?}", person);
                person.failures.push(failure);
                return person;
            }
        }
    }
}

impl fmt::Display for Person {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "room {} ({}) seat {} ({})",
            self.room, self.code, self.seat, self.name
        )
    }
}

impl Person {
    /// Sends a message, ignoring a dead socket (the server may have just been killed).
    async fn send(&mut self, message: ClientMessage) {
        let text = serde_json::to_string(&ClientEnvelope::from(message)).expect("serializes");
        let _ = self.client.socket().send(Message::text(text)).await;
    }

    /// The next message, kept the way [`Client::recv`] keeps it (history, view, leak scan), or
    /// how the socket ended.
    pub(crate) async fn read(&mut self) -> Read {
        loop {
            let frame = tokio::time::timeout(PATIENCE, self.client.socket().next()).await;
            let text = match frame {
                Err(_) => return Read::Stalled,
                Ok(None | Some(Err(_)) | Some(Ok(Message::Close(_)))) => return Read::Closed,
                Ok(Some(Ok(Message::Text(text)))) => text,
                Ok(Some(Ok(_))) => continue,
            };
            let value: serde_json::Value = match serde_json::from_str(text.as_str()) {
                Ok(value) => value,
                Err(e) => {
                    self.failures
                        .push(format!("{self}: not JSON ({e}): {text}"));
                    continue;
                }
            };
            self.client.leaks.scan(&value);
            let message: ServerMessage = match serde_json::from_value(value) {
                Ok(message) => message,
                Err(e) => {
                    let failure = format!("{self}: not a protocol message ({e}): {text}");
                    self.failures.push(failure);
                    continue;
                }
            };
            let message = match self.client.follow(message) {
                Ok(message) => message,
                Err(stale) => {
                    let failure =
                        format!("{self}: a patch not on the view held ({stale:?}): {text}");
                    self.failures.push(failure);
                    continue;
                }
            };
            return Read::Message(message);
        }
    }

    /// Checks a message and answers it.
    pub(crate) async fn handle(&mut self, message: ServerMessage) {
        match message {
            ServerMessage::History { .. } => {
                self.last_was_state = false;
                self.check_results();
            }
            ServerMessage::State { events, view, .. } => {
                let mut shows = 0;
                for event in &events {
                    self.events += 1;
                    if event_seat(event) == Some(self.seat) {
                        self.pending = false;
                    }
                    match event {
                        Event::Dealt { round: 1, .. } => {
                            // A new match.
                            self.ready_for = 0;
                            self.rematch_sent = false;
                            self.match_over = false;
                        }
                        Event::RoundEnded { .. } => shows += 1,
                        _ => {}
                    }
                }
                if shows > 0 {
                    self.rounds_checked += shows;
                    self.check_results();
                }
                self.last_was_state = true;
                self.check_view(&view);
                self.respond().await;
            }
            ServerMessage::MatchResult(result) => {
                self.check_match(&result);
                if self.match_results.last() != Some(&result) {
                    self.match_results.push(result);
                }
                self.match_over = true;
                // Live, the result comes before the view of the finished match (which is then
                // answered); on arrival, after it.
                let over = self.client.view.as_ref().map(|v| v.phase) == Some(Phase::MatchOver);
                if over {
                    self.respond().await;
                }
            }
            ServerMessage::Error(error) => {
                *self.refusals.entry(error.code.clone()).or_default() += 1;
                // A refused move changes nothing: try another.
                if self.client.view.as_ref().is_some_and(SeatView::my_turn) {
                    let view = self.client.view.clone().expect("a view");
                    let action = random_action(&view, &mut self.rng);
                    self.pending = true;
                    self.send(action).await;
                }
            }
            _ => {}
        }
    }

    /// Answers the current view: a move on this seat's turn, `ready` between rounds, and
    /// `rematch` after the match (unless this is the last play).
    pub(crate) async fn respond(&mut self) {
        let Some(view) = self.client.view.as_ref() else {
            return;
        };
        let rematch = view.phase == Phase::MatchOver
            && self.match_over
            && !self.rematch_sent
            && self.until == Until::Closed;
        let message = if rematch {
            self.rematch_sent = true;
            ClientMessage::Rematch { client_seed: None }
        } else {
            match answer(view, &mut self.rng, &mut self.ready_for) {
                Some(message) => message,
                None => return,
            }
        };
        if !self.think.is_zero() {
            let think = self.rng.random_range(Duration::ZERO..=self.think);
            tokio::time::sleep(think).await;
        }
        if !matches!(
            message,
            ClientMessage::Ready { .. } | ClientMessage::Rematch { .. }
        ) {
            self.pending = true;
        }
        self.send(message).await;
    }

    /// The invariants every view must keep.
    fn check_view(&mut self, view: &SeatView) {
        self.views_checked += 1;
        let held: usize = view.card_counts.iter().sum();
        let cards = held + view.stock_size + view.pile_size;
        if cards != self.deck_size {
            let failure = format!(
                "{self}: round {} holds {cards} cards (hands {held}, stock {}, pile {}), not {}",
                view.round, view.stock_size, view.pile_size, self.deck_size
            );
            self.failures.push(failure);
        }
        if view.card_counts.get(self.seat) != Some(&view.hand.len()) {
            let failure = format!(
                "{self}: round {} the hand has {} cards, the table says {:?}",
                view.round,
                view.hand.len(),
                view.card_counts.get(self.seat)
            );
            self.failures.push(failure);
        }
    }

    /// The invariants of the match's results so far.
    fn check_results(&mut self) {
        let problems = results_problems(&self.client.history.results, self.scoring);
        for problem in problems {
            let failure = format!("{self}: {problem}");
            self.failures.push(failure);
        }
    }

    /// The `match_result` agrees with the rounds the client kept.
    fn check_match(&mut self, result: &MatchResult) {
        if result.results != self.client.history.results {
            let failure = format!(
                "{self}: the match result's {} rounds differ from the {} the client kept",
                result.results.len(),
                self.client.history.results.len()
            );
            self.failures.push(failure);
        }
        let last = result.results.last().map(|r| r.total.clone());
        for standing in &result.standings {
            let total = last.as_ref().and_then(|t| t.get(standing.seat));
            if total != Some(&standing.total) {
                let failure = format!(
                    "{self}: seat {} stands at {} but its last Total is {total:?}",
                    standing.seat, standing.total
                );
                self.failures.push(failure);
            }
        }
    }
}

/// The seat an event is a move of.
fn event_seat(event: &Event) -> Option<usize> {
    match event {
        Event::Called { seat }
        | Event::DrewFromStock { seat }
        | Event::TookFromPile { seat, .. }
        | Event::Threw { seat, .. } => Some(*seat),
        _ => None,
    }
}

/// What is wrong with a match's results: rounds numbered from 1, Paid summing to zero in
/// settlement scoring, every Total the previous one plus Paid, no card shown twice.
fn results_problems(results: &[RoundResult], scoring: Scoring) -> Vec<String> {
    let mut problems = Vec::new();
    let mut totals: Vec<i64> = Vec::new();
    for (i, result) in results.iter().enumerate() {
        let round = result.round;
        if usize::try_from(round).ok() != Some(i + 1) {
            problems.push(format!("result {} is for round {round}", i + 1));
        }
        if totals.is_empty() {
            totals = vec![0; result.total.len()];
        }
        if scoring == Scoring::Settlement && result.paid.iter().sum::<i64>() != 0 {
            problems.push(format!(
                "round {round}: Paid {:?} does not sum to zero",
                result.paid
            ));
        }
        let expected: Vec<i64> = totals
            .iter()
            .zip(&result.paid)
            .map(|(t, p)| t + p)
            .collect();
        if expected != result.total || result.paid.len() != totals.len() {
            problems.push(format!(
                "round {round}: Totals {:?} are not the previous {totals:?} plus Paid {:?}",
                result.total, result.paid
            ));
        }
        totals.clone_from(&result.total);
        let mut shown: Vec<_> = result.hands.iter().flatten().collect();
        let count = shown.len();
        shown.sort();
        shown.dedup();
        if shown.len() != count {
            problems.push(format!(
                "round {round}: a card is shown twice: {:?}",
                result.hands
            ));
        }
    }
    problems
}

/// Opens a socket to the person's room through `addr` (`/ws/{code}`), says hello with the seat
/// token, and reads until the room's `history` and `state` have come. Returns the view, or why
/// the person is not back in their seat.
async fn rejoin(person: &mut Person, addr: SocketAddr) -> Result<SeatView, String> {
    let path = format!("/ws/{}", person.code);
    person.client = Client::connect_to_with(addr, &path, [127, 0, 0, 1].into(), &[])
        .await
        .map_err(|(status, body)| format!("the socket was refused: {status} {body}"))?;
    let hello = ClientMessage::from(Hello {
        protocol: PROTOCOL_VERSION,
        room: person.code.clone(),
        name: person.name.clone(),
        token: Some(person.token.clone()),
        spectator: false,
        host_secret: None,
        client_seed: None,
    });
    person.send(hello).await;
    let mut got_history = false;
    loop {
        match person.read().await {
            Read::Message(ServerMessage::State { view, .. }) if got_history => return Ok(*view),
            Read::Message(ServerMessage::State { .. }) => {
                return Err("a state but no history after the hello".into());
            }
            Read::Message(ServerMessage::History { .. }) => got_history = true,
            Read::Message(ServerMessage::Welcome(welcome)) if welcome.seat != Some(person.seat) => {
                return Err(format!("the token gave seat {:?}", welcome.seat));
            }
            Read::Message(ServerMessage::Error(error)) => {
                return Err(format!(
                    "the hello with the token was refused: {} ({})",
                    error.code, error.message
                ));
            }
            Read::Message(_) => {}
            Read::Closed | Read::Stalled => return Err("no state after the hello".into()),
        }
    }
}

/// Reconnects `person` to the restarted server with its token and checks what comes back
/// against what it had acknowledged.
async fn reconnect(person: &mut Person, addr: SocketAddr, kill: u32, report: &mut Report) {
    reconnect_within(person, addr, kill, report, Duration::ZERO).await;
}

/// Reconnects `person` through `addr` with its seat token, trying again for up to `patience`
/// while the room is not back yet (a cluster moving it to another node), and checks that what
/// it had received came back (see the module's overview).
pub(crate) async fn reconnect_within(
    person: &mut Person,
    addr: SocketAddr,
    kill: u32,
    report: &mut Report,
    patience: Duration,
) {
    report.reconnections += 1;
    let had = person.client.history.clone();
    let had_view = person.client.view.clone();
    let had_items = (had.results.len() + had.log.len()) as u64;
    report.acknowledged_checked += had_items;
    let last_was_state = person.last_was_state;
    let pending = person.pending;
    let had_match = match_number(&person.client);
    let asked_rematch = person.rematch_sent
        && had_view
            .as_ref()
            .is_some_and(|v| v.phase == Phase::MatchOver);

    let give_up = Instant::now() + patience;
    let view = loop {
        match rejoin(person, addr).await {
            Ok(view) => break Some(view),
            Err(_) if Instant::now() < give_up => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(why) => {
                person
                    .failures
                    .push(format!("kill {kill}: {person}: {why}"));
                break None;
            }
        }
    };
    let Some(view) = view else {
        report.not_restored += 1;
        report.acknowledged_lost += had_items;
        return;
    };
    person.check_results();
    person.check_view(&view);
    person.last_was_state = true;
    person.pending = false;
    person.answer_now = true;
    // The match's result comes again after the state, if it is over.
    person.match_over = false;
    // A `ready` or a `rematch` lost with the process is sent again.
    let seat_ready = person
        .client
        .room
        .as_ref()
        .and_then(|room| room.seats.get(person.seat))
        .is_some_and(|s| s.ready);
    let stage = person.client.room.as_ref().map(|room| room.stage);
    person.ready_for = match stage {
        Some(Stage::BetweenRounds) if seat_ready => view.round,
        _ => view.round.saturating_sub(1),
    };
    person.rematch_sent = stage == Some(Stage::MatchOver) && seat_ready;

    let got = person.client.history.clone();
    let mut comparison = compare(&had, &got);
    if let Some(earlier) = had_match
        && match_number(&person.client).is_some_and(|now| now > earlier)
    {
        report.later_match += 1;
        comparison = against_kept_match(addr, person, earlier, &had).await;
    }
    // The client had asked for a rematch after a finished match, and the rematch was
    // committed: the history restored is the new match's.
    let other_match = got.results.is_empty() || got.results.first() != had.results.first();
    if asked_rematch && other_match && matches!(comparison, Comparison::Lost { .. }) {
        report.rematches_recovered += 1;
        comparison = Comparison::Longer {
            extra: (got.results.len() + got.log.len()) as u64,
            next: None,
        };
    }
    match comparison {
        Comparison::Same => {
            if pending {
                report.own_moves_not_committed += 1;
            }
            if !last_was_state {
                report.views_behind += 1;
            } else if let Some(had_view) = had_view {
                report.views_compared += 1;
                let restored = person.client.view.as_ref().expect("a view");
                if *restored != had_view {
                    report.views_differing += 1;
                    report.acknowledged_lost += 1;
                    let failure = format!(
                        "kill {kill}: {person}: the same history ({} results, {} events) but a different view:\n  had {}\n  got {}",
                        had.results.len(),
                        had.log.len(),
                        brief(&had_view),
                        brief(restored)
                    );
                    person.failures.push(failure);
                }
            }
        }
        Comparison::Longer { extra, next } => {
            report.committed_unsent_recovered += extra;
            if pending {
                match next {
                    Some(event) if event_seat(&event) == Some(person.seat) => {
                        report.own_moves_recovered += 1;
                    }
                    Some(_) => {}
                    None => report.own_moves_not_committed += 1,
                }
            }
        }
        Comparison::Lost { lost, what } => {
            report.acknowledged_lost += lost;
            let failure = format!("kill {kill}: {person}: {lost} acknowledged items lost: {what}");
            person.failures.push(failure);
        }
    }
}

/// The number of the match the client's room is at (`None` before the first, or for fixed
/// test decks, which have no commitment).
fn match_number(client: &Client) -> Option<u32> {
    Some(client.room.as_ref()?.fairness.as_ref()?.match_number)
}

/// Checks what a client had of match `number` (`had`) against that match's hand history, which
/// the room kept when the match ended: the results the client had must be the match's first,
/// and the events of the round it was in the first of that round's.
async fn against_kept_match(
    addr: SocketAddr,
    person: &Person,
    number: u32,
    had: &History,
) -> Comparison {
    let path = format!("/api/rooms/{}/matches/{number}/history", person.code);
    let bearer = format!("Bearer {}", person.token);
    let (status, body) = http::get_with(addr, &path, &[("authorization", &bearer)]).await;
    let lost = (had.results.len() + had.log.len()) as u64;
    if status != 200 {
        return Comparison::Lost {
            lost,
            what: format!(
                "match {number} ended while the person was away, and its hand history answers {status}: {body}"
            ),
        };
    }
    let kept: HandHistory = match serde_json::from_str(&body) {
        Ok(kept) => kept,
        Err(e) => {
            return Comparison::Lost {
                lost,
                what: format!("match {number}'s hand history does not read: {e}"),
            };
        }
    };
    let results: Vec<&RoundResult> = kept
        .rounds
        .iter()
        .filter_map(|r| r.result.as_ref())
        .collect();
    let same = had
        .results
        .iter()
        .zip(&results)
        .take_while(|(a, b)| a == *b)
        .count();
    if same < had.results.len() {
        return Comparison::Lost {
            lost: (had.results.len() - same + had.log.len()) as u64,
            what: format!(
                "match {number}'s hand history has {} results, {same} of them the client's {}",
                results.len(),
                had.results.len()
            ),
        };
    }
    if let Some(Event::Dealt { round, .. }) = had.log.first() {
        let events: Vec<&Event> = kept
            .rounds
            .iter()
            .find(|r| r.round == *round)
            .map(|r| r.steps.iter().flat_map(|step| &step.events).collect())
            .unwrap_or_default();
        let same = had.log[1..]
            .iter()
            .zip(&events)
            .take_while(|(a, b)| a == *b)
            .count();
        if same < had.log.len() - 1 {
            return Comparison::Lost {
                lost: (had.log.len() - 1 - same) as u64,
                what: format!(
                    "round {round} of match {number}: the hand history has {} events, {same} of them the client's {}",
                    events.len(),
                    had.log.len() - 1
                ),
            };
        }
    }
    Comparison::Longer {
        extra: 0,
        next: None,
    }
}

/// A view, for a failure message.
fn brief(view: &SeatView) -> String {
    serde_json::to_string(view).unwrap_or_default()
}

/// How a restored history compares with the one a client had.
enum Comparison {
    /// The same.
    Same,
    /// What the client had, and more.
    Longer {
        /// How many items more (results, and events of the current round).
        extra: u64,
        /// The first event after the client's log, when still in the same round.
        next: Option<Event>,
    },
    /// Something the client had is missing or different.
    Lost {
        /// How many of the client's items, from the first difference on.
        lost: u64,
        /// What differs.
        what: String,
    },
}

/// Compares the history a client had (`had`) with the one restored (`got`).
fn compare(had: &History, got: &History) -> Comparison {
    let same_results = had
        .results
        .iter()
        .zip(&got.results)
        .take_while(|(a, b)| a == b)
        .count();
    if same_results < had.results.len() {
        let lost = (had.results.len() - same_results + had.log.len()) as u64;
        let what = if same_results < got.results.len() {
            format!("round {}'s result differs", had.results[same_results].round)
        } else {
            format!(
                "the client had {} round results, the server {}",
                had.results.len(),
                got.results.len()
            )
        };
        return Comparison::Lost { lost, what };
    }
    let had_round = match had.log.first() {
        Some(Event::Dealt { round, .. }) => Some(*round),
        _ => None,
    };
    let got_round = match got.log.first() {
        Some(Event::Dealt { round, .. }) => Some(*round),
        _ => None,
    };
    // The client's log is of a round it has the result of: the next deal may have come since.
    let scored = had_round.and_then(|r| usize::try_from(r).ok()) == Some(had.results.len());
    if got.results.len() == had.results.len() && scored && got_round != had_round {
        if got_round.zip(had_round).is_some_and(|(g, h)| g == h + 1) {
            return Comparison::Longer {
                extra: got.log.len() as u64,
                next: None,
            };
        }
        return Comparison::Lost {
            lost: had.log.len() as u64,
            what: format!(
                "the client had round {had_round:?} scored, the server's log is of round {got_round:?}"
            ),
        };
    }
    if got.results.len() == had.results.len() {
        let same_log = had
            .log
            .iter()
            .zip(&got.log)
            .take_while(|(a, b)| a == b)
            .count();
        if same_log < had.log.len() {
            let lost = (had.log.len() - same_log) as u64;
            let what = format!(
                "the log differs at event {same_log} of {}: had {:?}, got {:?}",
                had.log.len(),
                had.log.get(same_log),
                got.log.get(same_log)
            );
            return Comparison::Lost { lost, what };
        }
        if got.log.len() == had.log.len() {
            return Comparison::Same;
        }
        return Comparison::Longer {
            extra: (got.log.len() - had.log.len()) as u64,
            next: got.log.get(had.log.len()).cloned(),
        };
    }
    // New rounds were scored: the client's log must be of the round scored next, or of a
    // round it already had the result of.
    let round = had_round;
    let next_scored = got.results[had.results.len()].round;
    let fits = match round {
        None => had.log.is_empty(),
        Some(round) => {
            round == next_scored || usize::try_from(round).ok() == Some(had.results.len())
        }
    };
    if !fits {
        return Comparison::Lost {
            lost: had.log.len() as u64,
            what: format!(
                "the client's log is of round {round:?}, but the next round scored is {next_scored}"
            ),
        };
    }
    Comparison::Longer {
        extra: (got.results.len() - had.results.len() + got.log.len()) as u64,
        next: None,
    }
}

/// Checks that every room's last match ended, for every person, with the same result; and adds
/// up the people's figures.
pub(crate) fn finish(people: &mut [Person], report: &mut Report) {
    let mut rooms: BTreeMap<usize, Vec<&Person>> = BTreeMap::new();
    for person in people.iter() {
        rooms.entry(person.room).or_default().push(person);
        report.events_received += person.events;
        report.views_checked += person.views_checked;
        report.rounds_checked += person.rounds_checked;
        for (code, n) in &person.refusals {
            *report.refusals.entry(code.clone()).or_default() += n;
        }
        report.failures.extend(person.failures.iter().cloned());
    }
    for (room, people) in rooms {
        let over = people.iter().all(|p| {
            p.match_over
                && p.client
                    .view
                    .as_ref()
                    .is_some_and(|v| v.phase == Phase::MatchOver)
        });
        if !over {
            report
                .failures
                .push(format!("room {room}: the last match did not end"));
            continue;
        }
        // A person who stopped at the end of a match is away if the room moves after that, and
        // the others may play one more (a person away is not waited for): every match the
        // people both saw end must have ended alike.
        let disagree = people.iter().flat_map(|p| &p.match_results).find(|result| {
            people.iter().any(|q| {
                q.match_results
                    .iter()
                    .any(|r| r.match_number == result.match_number && r != *result)
            })
        });
        if let Some(result) = disagree {
            report.failures.push(format!(
                "room {room}: the people's results of match {} differ",
                result.match_number
            ));
            continue;
        }
        report.rooms_finished += 1;
        report.matches_finished += people
            .iter()
            .map(|p| p.match_results.len())
            .max()
            .unwrap_or(0);
    }
}

/// A file system mounted for a test (a small tmpfs, a read-only bind), unmounted when dropped.
/// Mounting needs root (or `CAP_SYS_ADMIN`): where it is not allowed, [`Mount::tmpfs_or_skip`]
/// and [`Mount::read_only_or_skip`] answer `None` and the test says it is skipped and why, but
/// with `CI=true`, where that fails the test.
#[derive(Debug)]
pub struct Mount {
    /// Where it is mounted.
    pub path: PathBuf,
    /// The folder it is mounted on, removed after the unmount when it was made for it.
    _dir: Option<tempfile::TempDir>,
}

impl Mount {
    /// A tmpfs of `bytes` bytes on a fresh folder: a disk that fills quickly.
    pub fn tmpfs_or_skip(test: &str, bytes: u64) -> Option<Mount> {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().to_owned();
        let size = format!("size={bytes}");
        let mounted = mount(
            test,
            &["-t", "tmpfs", "-o", &size, "tmpfs", &path_str(&path)],
        )?;
        debug_assert!(mounted);
        Some(Mount {
            path,
            _dir: Some(dir),
        })
    }

    /// `dir` mounted read-only on itself (a bind mount, then a read-only remount): what a volume
    /// mounted `:ro` looks like. Root cannot write it either, unlike a folder without write
    /// permission.
    pub fn read_only_or_skip(test: &str, dir: &Path) -> Option<Mount> {
        let path = path_str(dir);
        mount(test, &["--bind", &path, &path])?;
        let remount = Mount {
            path: dir.to_owned(),
            _dir: None,
        };
        let status = std::process::Command::new("mount")
            .args(["-o", "remount,bind,ro", &path])
            .status()
            .expect("run mount");
        assert!(status.success(), "the read-only remount of {path} failed");
        Some(remount)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        // Lazily: a server the test dropped may still hold files there for a moment.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.path)
            .status();
    }
}

/// A path as an argument.
fn path_str(path: &Path) -> String {
    path.to_str().expect("a UTF-8 temp path").to_owned()
}

/// Runs `mount` with `args`; `None` (the test skipped, but under `CI=true`) when it fails.
fn mount(test: &str, args: &[&str]) -> Option<bool> {
    let output = std::process::Command::new("mount").args(args).output();
    let reason = match output {
        Ok(output) if output.status.success() => return Some(true),
        Ok(output) => format!(
            "mount {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        Err(e) => format!("mount cannot run: {e}"),
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{reason}: with CI=true this test must run (as root, or with CAP_SYS_ADMIN)"
    );
    eprintln!("skipped {test}: {reason} (it needs root, or CAP_SYS_ADMIN)");
    None
}
