//! The crash harness, bounded for CI: 10 kills of the real server (SIGKILL at a random moment)
//! while 8 rooms play, and nothing a client had received may be lost. The full run is the
//! `crash` binary (`target/release/crash --kills 100`); both are [`dhumbal_tests::crash::run`].

use std::path::PathBuf;

use dhumbal_tests::crash::{Options, run};

/// Ten kills, eight rooms: every room comes back after every kill with everything its clients
/// had received, and every match is played to its end with the invariants holding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_loses_nothing_acknowledged() {
    let server = PathBuf::from(env!("CARGO_BIN_EXE_server-under-test"));
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
