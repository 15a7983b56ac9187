//! The cluster, bounded for CI: three nodes of the real binary sharing one real `redis-server`,
//! real `haproxy` in front, 24 rooms of people and bots played through HAProxy while the busiest
//! node is SIGKILLed and restarted, another is paused past its lease, and Redis is restarted. Nothing a client had
//! received may be lost, every room comes back wherever HAProxy sends its sockets, the people
//! (clients that behave like the page: no pings of their own, a reconnection whenever the socket
//! closes) of the paused node get back to their rooms and play on while it is still paused, and
//! every match ends. See [`dhumbal_tests::cluster`].
//!
//! Without `redis-server` or `haproxy` the test says it is skipped and why; with `CI=true` it
//! fails instead (`.ci/run` installs both).

use std::path::PathBuf;
use std::time::Duration;

use dhumbal_tests::cluster::{Options, run};
use dhumbal_tests::redis::RedisServer;

#[cfg_attr(
    any(missing_redis, missing_haproxy),
    ignore = "needs redis-server and haproxy: apt-get install redis-server haproxy"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_survive_a_node_killed_restarted_and_paused_behind_haproxy() {
    let Some(mut redis) = RedisServer::start_or_skip("the cluster test") else {
        return;
    };
    let options = Options {
        server: PathBuf::from(env!("CARGO_BIN_EXE_server-under-test")),
        // Enough for every node to hold rooms through every step; each room plays (and asks
        // for rematches) the whole run, so the test's CPU grows with them.
        // `DHUMBAL_CLUSTER_ROOMS=60` is the heavier run the harness was first measured with.
        rooms: std::env::var("DHUMBAL_CLUSTER_ROOMS")
            .ok()
            .and_then(|rooms| rooms.parse().ok())
            .unwrap_or(24),
        // A run's seed is in its report; `DHUMBAL_CLUSTER_SEED` plays that run's choices again.
        seed: std::env::var("DHUMBAL_CLUSTER_SEED")
            .ok()
            .and_then(|seed| seed.parse().ok())
            .unwrap_or_else(rand::random),
        think: Duration::from_millis(5),
        play: Duration::from_millis(700),
        lease: Duration::from_millis(1200),
        rounds: Some(3),
    };
    let out = run(&options, &mut redis).await;
    if let Some(why) = &out.skipped {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{why}: with CI=true the cluster test must run"
        );
        eprintln!("skipped the cluster test: {why}");
        return;
    }
    let report = &out.report;
    println!("{report}");
    println!(
        "rooms held by node: {:?} at first, {:?} after the kill, {:?} after the restart; {} of {} people played on while a node was paused; the paused node stopped {} rooms claimed from it; {} of {} lookups through HAProxy saw every person connected; {} of {} logs unbroken in Redis",
        out.spread,
        out.after_kill,
        out.after_restart,
        out.played_on_while_paused.0,
        out.played_on_while_paused.1,
        out.fenced,
        out.lookups.1,
        out.lookups.0,
        out.logs_unbroken.0,
        out.logs_unbroken.1
    );
    assert_eq!(
        out.lookups.1, out.lookups.0,
        "every lookup through HAProxy reached the room's node, which saw its people connected"
    );
    assert_eq!(out.plain_ws.0, 421, "{}", out.plain_ws.1);
    assert_eq!(
        out.logs_unbroken.0, out.logs_unbroken.1,
        "every room's log in Redis is one unbroken sequence"
    );
    let killed = out.after_kill.iter().position(|&n| n == 0);
    assert!(
        (0..3)
            .filter(|&n| Some(n) != killed)
            .all(|n| out.after_kill[n] >= out.spread[n]),
        "only the killed node's rooms moved: {:?} then {:?}",
        out.spread,
        out.after_kill
    );
    assert!(
        out.plain_ws
            .1
            .contains(dhumbal_protocol::codes::ROOM_PATH_REQUIRED)
    );
    assert!(
        out.spread.iter().all(|&n| n > 0),
        "every node holds rooms: {:?}",
        out.spread
    );
    assert!(
        out.after_kill.iter().filter(|&&n| n == 0).count() == 1,
        "the killed node holds none, the others hold them all: {:?}",
        out.after_kill
    );
    assert!(
        out.after_restart.iter().all(|&n| n > 0),
        "the restarted node has its rooms back: {:?}",
        out.after_restart
    );
    assert_eq!(
        out.played_on_while_paused.0, out.played_on_while_paused.1,
        "every person, the paused node's too, played on while the node was still paused \
         (HAProxy shut its sockets and they reconnected to the room's new node)"
    );
    assert!(
        out.fenced > 0,
        "the paused node, once it went on, stopped the rooms claimed from it"
    );
    assert!(out.redis_restarted);
    assert!(report.reconnections > 0, "{report}");
    assert_eq!(report.acknowledged_lost, 0, "{report}");
    assert_eq!(report.not_restored, 0, "every room comes back: {report}");
    assert_eq!(
        report.rooms_finished, report.rooms,
        "every last match ends: {report}"
    );
    assert!(report.passed(), "{report}");
}
