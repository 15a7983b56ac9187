//! The server's metrics, served at `GET /metrics` in the Prometheus text format.
//!
//! Each server has its own recorder ([`Metrics::new`]): the handles below are registered on it
//! directly instead of through the `metrics` crate's process-wide recorder, so that several
//! servers in one process (the tests start many) each count only what happened to them. Such a
//! recorder has no upkeep task of its own; [`crate::run`] calls [`Metrics::upkeep`] every
//! [`UPKEEP_INTERVAL`], so that memory stays flat whether or not anyone scrapes.
//!
//! Every series it serves, with its type and what it counts, is in the metrics table of
//! `docs/operations.md`; `tests::the_operations_doc_lists_every_metric` holds that table equal to
//! what `/metrics` serves, so there is one list and it cannot drift.
//!
//! A histogram value recorded at the very instant a scrape drains the histogram can be lost
//! (metrics-util's `AtomicBucket::clear_with` reads a block a writer may still push into);
//! counters and gauges never lose one. A histogram's `_count` is therefore at most a few below
//! the counter of the same events under frequent scrapes.
//!
//! With a node id (`--node-id`, or any server on a shared store), every series carries a
//! `node` label with it ([`Metrics::for_node`]).
//!
//! The series counted on every message (messages in and out, bytes out, the action
//! histogram) are counted first in a slot per thread (`sharded`: [`Tally`], [`Timings`]) and
//! published into the exporter's before each scrape and at each upkeep, so that the server's
//! workers do not pass one cache line between their cores for every message.

mod sharded;

pub use sharded::{Tally, Timings};

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Label, Metadata, Recorder, SharedString};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};

use crate::AppState;

/// How often [`Metrics::upkeep`] runs ([`crate::run`] runs it).
pub const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

/// The buckets of the action latency histogram, in seconds: 10 µs to 1 s.
const ACTION_BUCKETS: &[f64] = &[
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 1.0,
];

/// The buckets of the store's append latency histogram, in seconds: 10 µs to 2.5 s. An append
/// waits for its group commit, which a slow disk can stretch well past an action's time.
const STORE_BUCKETS: &[f64] = &[
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 1.0, 2.5,
];

/// What held the SQLite log's writer, for [`Metrics::store_held`]: while it runs, no append
/// commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// One batch's transaction, from its `BEGIN` to its `COMMIT`.
    Commit,
    /// One step of a pass deleting the log's dead inputs, in a transaction of its own.
    Pass,
    /// A RESTART checkpoint, which copies the rest of the WAL into the database.
    Restart,
}

/// Who seats a count of [`Metrics::seated`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seated {
    /// A person (present or away).
    Human,
    /// A bot chosen for the seat (not a stand-in for an away person).
    Bot,
}

/// One server's metrics: a recorder of its own and the handles the server updates.
pub struct Metrics {
    /// The recorder the handles belong to; also registers the per-code counters on demand.
    recorder: PrometheusRecorder,
    /// Renders what the recorder holds.
    handle: PrometheusHandle,
    /// Set from the registry just before rendering.
    rooms: Gauge,
    /// Open WebSocket connections.
    pub connections: Gauge,
    /// Seats held by people.
    humans: Gauge,
    /// Seats held by bots.
    bots: Gauge,
    /// Messages received from clients.
    pub messages_in: Tally,
    /// Messages sent to clients.
    pub messages_out: Tally,
    /// Payload bytes sent to clients in text frames.
    pub bytes_out_text: Tally,
    /// Payload bytes sent to clients in frames of compressed streams.
    pub bytes_out_deflate: Tally,
    /// Clients dropped because they fell behind.
    pub slow_clients_dropped: Counter,
    /// Stand-in bots started for away people.
    pub bot_takeovers: Counter,
    /// Matches played to the end.
    pub matches_finished: Counter,
    /// Seconds a room takes to handle one client message.
    action_seconds: Timings,
    /// Seconds from a room's append to its commit: what durability adds to every action.
    store_append_seconds: Timings,
    /// Seconds the SQLite log's writer spent on one step that holds the appends, by
    /// [`Hold`]: commit, pass, restart.
    store_hold_seconds: [Histogram; 3],
    /// Seconds a bot sent to think away from its room (an expert) took to choose.
    bot_think_seconds: Histogram,
    /// Transactions the store's writer committed; fewer than the appends when group commit
    /// batches them.
    pub store_commits: Counter,
    /// Dead inputs (covered by a snapshot, or of a deleted room) that the SQLite log's passes
    /// deleted.
    pub store_collected: Counter,
    /// Pages (frames) in the SQLite log's WAL at the last checkpoint: what the WAL holds since
    /// it was last restarted.
    pub store_wal_frames: Gauge,
    /// Store writes that failed, rooms set aside at load, damaged database files moved aside:
    /// anything here deserves a look at the logs.
    pub store_errors: Counter,
    /// Rooms restored from the store: at start, and each room claimed from a shared store.
    pub restores: Counter,
    /// Rooms claimed from a shared store.
    pub claims: Counter,
    /// Appends refused because another node had claimed the room.
    pub fenced_appends: Counter,
    /// Leases renewed.
    pub lease_renewals: Counter,
    /// Lease renewals that failed.
    pub lease_failures: Counter,
    /// Rooms stopped because another node had claimed them.
    pub rooms_moved: Counter,
    /// Rooms waiting for the room log to take writes again.
    pub rooms_paused: Gauge,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

/// Where the handles say they were registered from (the exporter ignores it).
static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// What kind of series a metric is, for its `# TYPE` line.
#[derive(Clone, Copy)]
enum Kind {
    /// Goes up only.
    Counter,
    /// Goes up and down.
    Gauge,
    /// Seconds, in buckets.
    Seconds,
}

/// Every metric's name, kind and `# HELP` line.
const DESCRIPTIONS: &[(&str, Kind, &str)] = &[
    ("dhumbal_rooms", Kind::Gauge, "Rooms open."),
    (
        "dhumbal_connections",
        Kind::Gauge,
        "WebSocket connections open.",
    ),
    (
        "dhumbal_seated",
        Kind::Gauge,
        "Seats held, by people (human) and by bots (bot).",
    ),
    (
        "dhumbal_messages_in_total",
        Kind::Counter,
        "WebSocket messages received from clients.",
    ),
    (
        "dhumbal_messages_out_total",
        Kind::Counter,
        "WebSocket messages sent to clients.",
    ),
    (
        "dhumbal_bytes_out_total",
        Kind::Counter,
        "Payload bytes of the messages sent to clients, by framing: text frames (text) or a compressed stream (deflate_raw).",
    ),
    (
        "dhumbal_rejected_messages_total",
        Kind::Counter,
        "Client messages answered with an error, by the error's code.",
    ),
    (
        "dhumbal_slow_clients_dropped_total",
        Kind::Counter,
        "Clients disconnected because they fell behind.",
    ),
    (
        "dhumbal_bot_takeovers_total",
        Kind::Counter,
        "Turns of away people handed to a stand-in bot.",
    ),
    (
        "dhumbal_matches_finished_total",
        Kind::Counter,
        "Matches played to the end.",
    ),
    (
        "dhumbal_store_commits_total",
        Kind::Counter,
        "Transactions the room log's writer committed.",
    ),
    (
        "dhumbal_store_collected_total",
        Kind::Counter,
        "Dead inputs (covered by a snapshot, or of a deleted room) the SQLite room log deleted.",
    ),
    (
        "dhumbal_store_wal_frames",
        Kind::Gauge,
        "Pages in the SQLite room log's WAL at its last checkpoint.",
    ),
    (
        "dhumbal_store_errors_total",
        Kind::Counter,
        "Room log writes that failed, rooms set aside and damaged files moved aside.",
    ),
    (
        "dhumbal_room_restores_total",
        Kind::Counter,
        "Rooms restored from the room log (at start, and each room claimed).",
    ),
    (
        "dhumbal_room_claims_total",
        Kind::Counter,
        "Rooms this node claimed from the shared room log.",
    ),
    (
        "dhumbal_fenced_appends_total",
        Kind::Counter,
        "Appends refused because another node had claimed the room.",
    ),
    (
        "dhumbal_lease_renewals_total",
        Kind::Counter,
        "Leases on rooms held here renewed.",
    ),
    (
        "dhumbal_lease_renewal_failures_total",
        Kind::Counter,
        "Lease renewals that failed (Redis away, or the room claimed by another node).",
    ),
    (
        "dhumbal_rooms_moved_total",
        Kind::Counter,
        "Rooms stopped here because another node had claimed them.",
    ),
    (
        "dhumbal_rooms_waiting_for_store",
        Kind::Gauge,
        "Rooms waiting for the room log to take writes again (a full disk); their moves are refused.",
    ),
    (
        "dhumbal_store_append_seconds",
        Kind::Seconds,
        "Seconds from a room's append to the room log to its commit.",
    ),
    (
        "dhumbal_store_hold_seconds",
        Kind::Seconds,
        "Seconds the SQLite room log's writer spent on one step during which no append commits.",
    ),
    (
        "dhumbal_action_seconds",
        Kind::Seconds,
        "Seconds a room takes to handle one client message.",
    ),
    (
        "dhumbal_bot_think_seconds",
        Kind::Seconds,
        "Seconds a bot sent to think away from its room took to choose.",
    ),
];

/// Gives every metric of [`DESCRIPTIONS`] its kind and help line in `recorder`.
fn describe_all(recorder: &PrometheusRecorder) {
    for &(name, kind, help) in DESCRIPTIONS {
        let (name, help) = (KeyName::from_const_str(name), SharedString::from(help));
        match kind {
            Kind::Counter => recorder.describe_counter(name, None, help),
            Kind::Gauge => recorder.describe_gauge(name, None, help),
            Kind::Seconds => recorder.describe_histogram(name, Some(metrics::Unit::Seconds), help),
        }
    }
}

impl Metrics {
    /// A fresh set of metrics, all at zero, with a recorder of its own.
    pub fn new() -> Metrics {
        Metrics::for_node(None)
    }

    /// A fresh set of metrics, all at zero, with a recorder of its own; with a node id, every
    /// series carries it as its `node` label, so that a cluster's nodes can be told apart.
    pub fn for_node(node: Option<&str>) -> Metrics {
        let builder = match node {
            Some(node) => PrometheusBuilder::new().add_global_label("node", node),
            None => PrometheusBuilder::new(),
        };
        let recorder = [
            ("dhumbal_action_seconds", ACTION_BUCKETS),
            ("dhumbal_store_append_seconds", STORE_BUCKETS),
            ("dhumbal_store_hold_seconds", STORE_BUCKETS),
            ("dhumbal_bot_think_seconds", ACTION_BUCKETS),
        ]
        .into_iter()
        .fold(builder, |builder, (name, buckets)| {
            builder
                .set_buckets_for_metric(
                    metrics_exporter_prometheus::Matcher::Full(name.into()),
                    buckets,
                )
                .expect("the bucket list is not empty")
        })
        .build_recorder();
        let handle = recorder.handle();
        describe_all(&recorder);
        let counter =
            |name: &'static str| recorder.register_counter(&Key::from_static_name(name), &METADATA);
        let gauge = |key: Key| recorder.register_gauge(&key, &METADATA);
        let seated = |kind: &'static str| {
            gauge(Key::from_parts(
                "dhumbal_seated",
                vec![Label::from_static_parts("kind", kind)],
            ))
        };
        let framed = |framing: &'static str| {
            recorder.register_counter(
                &Key::from_parts(
                    "dhumbal_bytes_out_total",
                    vec![Label::from_static_parts("framing", framing)],
                ),
                &METADATA,
            )
        };
        Metrics {
            rooms: gauge(Key::from_static_name("dhumbal_rooms")),
            connections: gauge(Key::from_static_name("dhumbal_connections")),
            humans: seated("human"),
            bots: seated("bot"),
            messages_in: Tally::new(counter("dhumbal_messages_in_total")),
            messages_out: Tally::new(counter("dhumbal_messages_out_total")),
            bytes_out_text: Tally::new(framed("text")),
            bytes_out_deflate: Tally::new(framed("deflate_raw")),
            slow_clients_dropped: counter("dhumbal_slow_clients_dropped_total"),
            bot_takeovers: counter("dhumbal_bot_takeovers_total"),
            matches_finished: counter("dhumbal_matches_finished_total"),
            action_seconds: Timings::new(
                ACTION_BUCKETS,
                recorder.register_histogram(
                    &Key::from_static_name("dhumbal_action_seconds"),
                    &METADATA,
                ),
            ),
            store_append_seconds: Timings::new(
                STORE_BUCKETS,
                recorder.register_histogram(
                    &Key::from_static_name("dhumbal_store_append_seconds"),
                    &METADATA,
                ),
            ),
            store_hold_seconds: ["commit", "pass", "restart"].map(|step| {
                recorder.register_histogram(
                    &Key::from_parts(
                        "dhumbal_store_hold_seconds",
                        vec![Label::from_static_parts("step", step)],
                    ),
                    &METADATA,
                )
            }),
            bot_think_seconds: recorder.register_histogram(
                &Key::from_static_name("dhumbal_bot_think_seconds"),
                &METADATA,
            ),
            store_commits: counter("dhumbal_store_commits_total"),
            store_collected: counter("dhumbal_store_collected_total"),
            store_wal_frames: gauge(Key::from_static_name("dhumbal_store_wal_frames")),
            store_errors: counter("dhumbal_store_errors_total"),
            restores: counter("dhumbal_room_restores_total"),
            claims: counter("dhumbal_room_claims_total"),
            fenced_appends: counter("dhumbal_fenced_appends_total"),
            lease_renewals: counter("dhumbal_lease_renewals_total"),
            lease_failures: counter("dhumbal_lease_renewal_failures_total"),
            rooms_moved: counter("dhumbal_rooms_moved_total"),
            rooms_paused: gauge(Key::from_static_name("dhumbal_rooms_waiting_for_store")),
            recorder,
            handle,
        }
    }

    /// Counts a client message answered with an `error` of this code.
    pub fn rejected(&self, code: &str) {
        let key = Key::from_parts(
            "dhumbal_rejected_messages_total",
            vec![Label::new("code", code.to_owned())],
        );
        self.recorder.register_counter(&key, &METADATA).increment(1);
    }

    /// Moves the count of seats held by `kind` by `change` (negative when seats are left).
    pub fn seated(&self, kind: Seated, change: i64) {
        let gauge = match kind {
            Seated::Human => &self.humans,
            Seated::Bot => &self.bots,
        };
        // Seat counts are small; the conversion is exact.
        #[allow(clippy::cast_precision_loss)]
        gauge.increment(change as f64);
    }

    /// Records how long a room took to handle one client message.
    pub fn action_handled(&self, took: Duration) {
        self.action_seconds.record(took);
    }

    /// Records how long a bot sent to think took to choose.
    pub fn bot_thought(&self, took: Duration) {
        self.bot_think_seconds.record(took.as_secs_f64());
    }

    /// Records how long an append took from being called to being committed.
    pub fn store_appended(&self, took: Duration) {
        self.store_append_seconds.record(took);
    }

    /// Records how long the SQLite log's writer spent on one step that holds the appends.
    pub fn store_held(&self, step: Hold, took: Duration) {
        let index = match step {
            Hold::Commit => 0,
            Hold::Pass => 1,
            Hold::Restart => 2,
        };
        self.store_hold_seconds[index].record(took.as_secs_f64());
    }

    /// Moves the histogram values recorded since the last scrape or upkeep into the histogram's
    /// buckets. The exporter keeps each recorded value until then, so a server that nobody
    /// scrapes would otherwise hold on to every action it has handled, 8 bytes or more each.
    pub fn upkeep(&self) {
        self.publish();
        self.handle.run_upkeep();
    }

    /// Adds what each thread counted into the exporter's series ([`sharded`]).
    fn publish(&self) {
        for tally in [
            &self.messages_in,
            &self.messages_out,
            &self.bytes_out_text,
            &self.bytes_out_deflate,
        ] {
            tally.publish();
        }
        self.action_seconds.publish();
        self.store_append_seconds.publish();
    }

    /// The metrics in the Prometheus text format, with the room count set to `rooms`.
    pub fn render(&self, rooms: usize) -> String {
        // Room counts are far below 2^53; the conversion is exact.
        #[allow(clippy::cast_precision_loss)]
        self.rooms.set(rooms as f64);
        self.publish();
        self.handle.render()
    }
}

/// The metrics route.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/metrics", get(scrape))
}

/// `GET /metrics`: every metric in the Prometheus text format.
async fn scrape(State(app): State<Arc<AppState>>) -> impl IntoResponse {
    let text = app.metrics.render(app.rooms.len());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample line that starts with `series`.
    fn sample(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    #[test]
    fn each_server_counts_alone() {
        let one = Metrics::new();
        let two = Metrics::new();
        one.messages_in.increment(3);
        one.rejected("not_your_turn");
        one.rejected("not_your_turn");
        one.seated(Seated::Human, 4);
        one.seated(Seated::Human, -1);
        one.action_handled(Duration::from_micros(30));
        two.messages_in.increment(1);
        let text = one.render(7);
        assert_eq!(sample(&text, "dhumbal_messages_in_total"), Some(3.0));
        assert_eq!(
            sample(
                &text,
                "dhumbal_rejected_messages_total{code=\"not_your_turn\"}"
            ),
            Some(2.0)
        );
        assert_eq!(sample(&text, "dhumbal_seated{kind=\"human\"}"), Some(3.0));
        assert_eq!(sample(&text, "dhumbal_rooms"), Some(7.0));
        assert_eq!(sample(&text, "dhumbal_action_seconds_count"), Some(1.0));
        assert_eq!(
            sample(&text, "dhumbal_action_seconds_bucket{le=\"0.00005\"}"),
            Some(1.0)
        );
        assert!(text.contains("# TYPE dhumbal_action_seconds histogram"));
        assert_eq!(
            sample(&two.render(0), "dhumbal_messages_in_total"),
            Some(1.0)
        );
    }

    #[test]
    fn store_series_are_rendered() {
        let metrics = Metrics::new();
        let text = metrics.render(0);
        assert_eq!(sample(&text, "dhumbal_store_commits_total"), Some(0.0));
        assert_eq!(sample(&text, "dhumbal_store_errors_total"), Some(0.0));
        assert!(text.contains("# TYPE dhumbal_store_append_seconds histogram"));
        metrics.store_commits.increment(2);
        metrics.store_errors.increment(1);
        metrics.store_appended(Duration::from_micros(300));
        metrics.store_appended(Duration::from_millis(2));
        metrics.store_held(Hold::Pass, Duration::from_micros(700));
        metrics.store_held(Hold::Restart, Duration::from_millis(8));
        metrics.store_held(Hold::Restart, Duration::from_millis(30));
        let text = metrics.render(0);
        for (step, count) in [("commit", 0.0), ("pass", 1.0), ("restart", 2.0)] {
            assert_eq!(
                sample(
                    &text,
                    &format!("dhumbal_store_hold_seconds_count{{step=\"{step}\"}}")
                ),
                Some(count),
                "{step}"
            );
        }
        assert_eq!(
            sample(
                &text,
                "dhumbal_store_hold_seconds_bucket{step=\"restart\",le=\"0.01\"}"
            ),
            Some(1.0)
        );
        assert_eq!(sample(&text, "dhumbal_store_commits_total"), Some(2.0));
        assert_eq!(sample(&text, "dhumbal_store_errors_total"), Some(1.0));
        assert_eq!(
            sample(&text, "dhumbal_store_append_seconds_count"),
            Some(2.0)
        );
        assert_eq!(
            sample(&text, "dhumbal_store_append_seconds_bucket{le=\"0.0005\"}"),
            Some(1.0)
        );
        assert_eq!(
            sample(&text, "dhumbal_store_append_seconds_bucket{le=\"2.5\"}"),
            Some(2.0)
        );
    }

    #[test]
    fn a_node_label_goes_on_every_series() {
        let metrics = Metrics::for_node(Some("node-a:8080"));
        metrics.claims.increment(2);
        metrics.rejected("not_your_turn");
        metrics.action_handled(Duration::from_micros(30));
        let text = metrics.render(3);
        assert_eq!(
            sample(&text, "dhumbal_rooms{node=\"node-a:8080\"}"),
            Some(3.0)
        );
        assert_eq!(
            sample(&text, "dhumbal_room_claims_total{node=\"node-a:8080\"}"),
            Some(2.0)
        );
        for series in [
            "dhumbal_fenced_appends_total",
            "dhumbal_room_restores_total",
            "dhumbal_lease_renewals_total",
            "dhumbal_lease_renewal_failures_total",
            "dhumbal_rooms_moved_total",
        ] {
            assert_eq!(
                sample(&text, &format!("{series}{{node=\"node-a:8080\"}}")),
                Some(0.0),
                "{series}"
            );
        }
        let samples = text.lines().filter(|line| !line.starts_with('#'));
        for line in samples.filter(|line| !line.is_empty()) {
            assert!(line.contains("node=\"node-a:8080\""), "{line}");
        }
        assert!(!Metrics::new().render(0).contains("node="));
    }

    #[test]
    fn upkeep_keeps_every_value_in_the_histogram() {
        let metrics = Metrics::new();
        for micros in [5, 30, 400, 20_000] {
            metrics.action_handled(Duration::from_micros(micros));
        }
        metrics.upkeep();
        metrics.action_handled(Duration::from_micros(30));
        metrics.upkeep();
        metrics.upkeep();
        let text = metrics.render(0);
        assert_eq!(sample(&text, "dhumbal_action_seconds_count"), Some(5.0));
        assert_eq!(
            sample(&text, "dhumbal_action_seconds_bucket{le=\"0.00005\"}"),
            Some(3.0)
        );
        assert_eq!(
            sample(&text, "dhumbal_action_seconds_bucket{le=\"0.025\"}"),
            Some(5.0)
        );
    }

    /// Each metric's name and label keys (`le` aside) as `name{key,…}`, from rendered text.
    fn series_shapes(text: &str) -> std::collections::BTreeSet<String> {
        let mut names =
            std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let name = rest.split(' ').next().unwrap_or_default();
                names.entry(name.to_owned()).or_default();
            }
        }
        for line in text.lines().filter(|line| !line.starts_with('#')) {
            let Some((series, _)) = line.split_once(' ') else {
                continue;
            };
            let (name, labels) = series.split_once('{').unwrap_or((series, ""));
            let name = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| name.strip_suffix(suffix).filter(|n| names.contains_key(*n)))
                .unwrap_or(name);
            let keys = labels
                .trim_end_matches('}')
                .split(',')
                .filter_map(|label| label.split_once('=').map(|(key, _)| key.to_owned()))
                .filter(|key| key != "le");
            names.entry(name.to_owned()).or_default().extend(keys);
        }
        names
            .into_iter()
            .map(|(name, keys)| match keys.len() {
                0 => name,
                _ => format!(
                    "{name}{{{}}}",
                    keys.into_iter().collect::<Vec<_>>().join(",")
                ),
            })
            .collect()
    }

    /// The metrics table of `docs/operations.md` names exactly the metrics the server
    /// registers, with their labels: a metric added, renamed or removed fails here until the
    /// doc says so.
    #[test]
    fn the_operations_doc_lists_every_metric() {
        let table = crate::operations_doc_section("Metrics");
        let documented: std::collections::BTreeSet<String> = table
            .lines()
            .filter_map(|line| line.strip_prefix("| `")?.split('`').next())
            .filter(|name| name.starts_with("dhumbal_"))
            .map(str::to_owned)
            .collect();
        // Every labelled series shows once something is counted under it.
        let metrics = Metrics::new();
        metrics.rejected("not_your_turn");
        let served = series_shapes(&metrics.render(0));
        assert_eq!(
            documented, served,
            "docs/operations.md's metrics table (left) and the metrics the server serves (right)"
        );
        let described: std::collections::BTreeSet<&str> =
            DESCRIPTIONS.iter().map(|(name, _, _)| *name).collect();
        let served_names: std::collections::BTreeSet<&str> = served
            .iter()
            .map(|shape| shape.split('{').next().unwrap_or_default())
            .collect();
        assert_eq!(
            described, served_names,
            "every metric served has a description"
        );
    }
}
