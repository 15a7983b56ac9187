//! What durability costs an action: the time from a room's append to its answer, in the SQLite
//! room log (WAL, `synchronous=NORMAL`, one writer with group commit) and in the memory store.
//!
//! - `single`: one room appends and waits, again and again: one commit per append.
//! - `rooms_64`: 64 rooms, each its own task, each appending and waiting as a room does; one
//!   iteration is one append from every room, so its time is the latency each append sees while
//!   63 others are in flight. Group commit shares each commit between the appends queued
//!   together; the mean number of appends per commit is printed once.
//!
//! Run with `cargo bench -p dhumbal-server --bench store`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use dhumbal_server::metrics::Metrics;
use dhumbal_server::store::{Store, StoreConfig};

/// How many rooms append at once in `rooms_64`.
const ROOMS: usize = 64;

/// An input of a typical size (a move, a few dozen bytes of JSON).
const INPUT: &[u8] = br#"{"type":"discard","cards":["7H","7S"],"pick":"deck"}"#;

/// A store of `kind` ("sqlite" in a temporary folder, or "memory"), its metrics, and the folder
/// to keep alive.
fn open(kind: &str) -> (Store, Arc<Metrics>, Option<tempfile::TempDir>) {
    let metrics = Arc::new(Metrics::new());
    let (config, dir) = if kind == "sqlite" {
        let dir = tempfile::tempdir().expect("a temp dir");
        let config = StoreConfig::Sqlite {
            data_dir: dir.path().to_owned(),
            sync: dhumbal_server::store::SyncMode::Normal,
        };
        (config, Some(dir))
    } else {
        (StoreConfig::Memory, None)
    };
    let store = Store::open(&config, Arc::clone(&metrics)).expect("the store opens");
    (store, metrics, dir)
}

/// The value of the sample line that starts with `series`.
fn sample(metrics: &Metrics, series: &str) -> f64 {
    metrics
        .render(0)
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

fn single(c: &mut Criterion, runtime: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("store_append/single");
    group.throughput(Throughput::Elements(1));
    for kind in ["sqlite", "memory"] {
        let (store, _metrics, _dir) = open(kind);
        runtime
            .block_on(store.create_room("BNCH", b"setup".to_vec()))
            .expect("created");
        let mut seq = 0;
        group.bench_function(kind, |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        seq += 1;
                        store
                            .append("BNCH", seq, INPUT.to_vec())
                            .await
                            .expect("appended");
                    }
                    start.elapsed()
                })
            });
        });
        runtime.block_on(store.close());
    }
    group.finish();
}

fn rooms_64(c: &mut Criterion, runtime: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("store_append/rooms_64");
    group.throughput(Throughput::Elements(ROOMS as u64));
    for kind in ["sqlite", "memory"] {
        let (store, metrics, _dir) = open(kind);
        let codes: Vec<String> = (0..ROOMS).map(|room| format!("R{room:03}")).collect();
        for code in &codes {
            runtime
                .block_on(store.create_room(code, b"setup".to_vec()))
                .expect("created");
        }
        let commits = sample(&metrics, "dhumbal_store_commits_total");
        let mut next = 1;
        let mut appends = 0;
        group.bench_function(kind, |b| {
            b.iter_custom(|iters| {
                let first = next;
                next += iters;
                appends += iters * ROOMS as u64;
                runtime.block_on(async {
                    let start = Instant::now();
                    let rooms: Vec<_> = codes
                        .iter()
                        .map(|code| {
                            let store = store.clone();
                            let code = code.clone();
                            tokio::spawn(async move {
                                for seq in first..first + iters {
                                    store
                                        .append(&code, seq, INPUT.to_vec())
                                        .await
                                        .expect("appended");
                                }
                            })
                        })
                        .collect();
                    for room in rooms {
                        room.await.expect("the room's task ends");
                    }
                    start.elapsed()
                })
            });
        });
        if kind == "sqlite" {
            let commits = sample(&metrics, "dhumbal_store_commits_total") - commits;
            println!(
                "sqlite, {ROOMS} rooms: {appends} appends in {commits} commits, {:.1} appends per commit",
                appends as f64 / commits.max(1.0)
            );
        }
        runtime.block_on(store.close());
    }
    group.finish();
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut c = Criterion::default()
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    single(&mut c, &runtime);
    rooms_64(&mut c, &runtime);
    c.final_summary();
}
