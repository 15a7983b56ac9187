//! The crash harness, bounded for CI: 10 kills of the real server (SIGKILL at a random moment)
//! while 8 rooms play, and nothing a client had received may be lost. The full run is the
//! `crash` binary (`target/release/crash --kills 100`); both are [`dhumbal_tests::crash::run`].
//!
//! Beside it, the real server on a data directory it must not use (issue 35): one another
//! server holds, and one mounted read-only. Each refuses to start, with a message that says
//! why, and exits with a failure.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dhumbal_tests::crash::{Mount, Options, run};
use dhumbal_tests::process::ServerProcess;
use dhumbal_tests::{PATIENCE, http};

/// The server binary.
fn server() -> String {
    env!("CARGO_BIN_EXE_server-under-test").to_owned()
}

/// Ten kills, eight rooms: every room comes back after every kill with everything its clients
/// had received, and every match is played to its end with the invariants holding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_loses_nothing_acknowledged() {
    let server = PathBuf::from(server());
    let mut options = Options::new(server, rand::random());
    options.kills = 10;
    options.rooms = 8;
    let report = run(&options).await;
    println!("{report}");
    assert_eq!(report.kills, 10, "{report}");
    assert_eq!(report.acknowledged_lost, 0, "{report}");
    assert_eq!(report.not_restored, 0, "every room is restored: {report}");
    assert!(report.acknowledged_checked > 0, "{report}");
    assert_eq!(report.rooms_finished, 8, "every last match ends: {report}");
    assert!(report.passed(), "{report}");
}

/// The flags of a server keeping its rooms in `dir`.
fn on(dir: &Path) -> [&str; 4] {
    [
        "--store",
        "sqlite",
        "--data-dir",
        dir.to_str().expect("a UTF-8 temp path"),
    ]
}

/// Starts a server on `dir` that must refuse to: answers its error line's `error` field, having
/// seen it exit with a failure.
fn refused(dir: &Path) -> String {
    let mut second = ServerProcess::start(&server(), &on(dir));
    // Within a bounded time, however much else it logs: a server that starts serving instead
    // fails the test rather than hanging it.
    let give_up = Instant::now() + PATIENCE;
    let failed = loop {
        let found = second.drain_logs().into_iter().find_map(|line| {
            let value: serde_json::Value = serde_json::from_str(&line).ok()?;
            (value["fields"]["message"] == "the server failed").then_some(value)
        });
        if let Some(failed) = found {
            break failed;
        }
        assert!(
            Instant::now() < give_up,
            "the server started on {} instead of refusing to",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(failed["level"], "ERROR", "{failed}");
    assert!(!second.wait(), "the refused server exits with a failure");
    failed["fields"]["error"]
        .as_str()
        .expect("the error line says why")
        .to_owned()
}

/// Issue 35, item 10: a second server started on the data directory of one that is running (a
/// blue/green deploy on one volume) refuses to start, naming the folder and the process that
/// holds it; the first plays on, its room untouched.
#[tokio::test]
async fn a_second_server_on_the_same_data_directory_refuses_to_start() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let first = ServerProcess::start(&server(), &on(dir.path()));
    let (status, created) = http::post(first.addr, "/api/rooms", "{}").await;
    assert_eq!(status, 201, "{created}");
    let code = serde_json::from_str::<serde_json::Value>(&created).unwrap()["code"]
        .as_str()
        .unwrap()
        .to_owned();

    let error = refused(dir.path());
    assert!(
        error.contains("in use by another dhumbal-server")
            && error.contains("process ")
            && error.contains(&dir.path().display().to_string()),
        "{error}"
    );
    // The first server never noticed.
    assert_eq!(http::get(first.addr, "/readyz").await.0, 200);
    let (status, summary) = http::get(first.addr, &format!("/api/rooms/{code}")).await;
    assert_eq!(status, 200, "{summary}");
}

/// Issue 35, item 12: a data directory mounted read-only (with a room log in it from an earlier
/// run) is refused at start, with a message that says it cannot be written, instead of a server
/// that says it is ready and then loses every room at its first move. Root ignores permission
/// bits, so the folder is a read-only bind mount; without the right to mount, the test is
/// skipped (but under `CI=true`).
#[cfg_attr(not_root, ignore = "needs root (it mounts a file system)")]
#[tokio::test]
async fn a_read_only_data_directory_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("a temp dir");
    // A room log from an earlier run that ended without closing it: the database, its WAL
    // and its `-shm` are all there.
    let mut earlier = ServerProcess::start(&server(), &on(dir.path()));
    let (status, created) = http::post(earlier.addr, "/api/rooms", "{}").await;
    assert_eq!(status, 201, "{created}");
    earlier.kill();
    let Some(_read_only) =
        Mount::read_only_or_skip("a_read_only_data_directory_is_refused_at_start", dir.path())
    else {
        return;
    };
    let error = refused(dir.path());
    assert!(
        error.contains("cannot be written") && error.contains(&dir.path().display().to_string()),
        "{error}"
    );
}
