//! The Redis store against a real `redis-server` (skipped without one, but under `CI=true`):
//! the log round-trips through a claim as it would through a restart, a claim fences off the
//! node that held the room before, a gap or a repeated seq is refused, a deleted room leaves no
//! key, and a restart of Redis does not stop a room.

use std::sync::Arc;
use std::time::Duration;

use dhumbal_server::metrics::Metrics;
use dhumbal_server::store::{KeptMatch, RedisConfig, Store, StoreConfig, StoreError, StoredRoom};
use dhumbal_tests::redis::RedisServer;

/// A node's store on `redis`, with its metrics.
fn node(redis: &RedisServer, id: &str) -> (Store, Arc<Metrics>) {
    node_with(redis, id, Duration::from_secs(10))
}

/// A node's store on `redis` with this lease.
fn node_with(redis: &RedisServer, id: &str, lease: Duration) -> (Store, Arc<Metrics>) {
    let metrics = Arc::new(Metrics::for_node(Some(id)));
    let config = StoreConfig::Redis(RedisConfig {
        url: redis.url(),
        node: id.to_owned(),
        lease,
        room_ttl: Duration::from_secs(60),
        keep_matches: Duration::from_secs(3600),
    });
    let store = Store::open(&config, Arc::clone(&metrics)).expect("the Redis store opens");
    (store, metrics)
}

/// The value of `series` (with the node's label) in `metrics`.
fn sample(metrics: &Metrics, series: &str, node: &str) -> f64 {
    let name = format!("{series}{{node=\"{node}\"}} ");
    metrics
        .render(0)
        .lines()
        .find_map(|line| line.strip_prefix(&name)?.parse().ok())
        .unwrap_or_else(|| panic!("no {series} in the metrics"))
}

/// Input `seq` of room `code`: distinct bytes, so that a mix-up shows.
fn input(code: &str, seq: u64) -> Vec<u8> {
    format!("{code}:{seq}").into_bytes()
}

#[cfg_attr(
    missing_redis,
    ignore = "needs redis-server: apt-get install redis-server"
)]
#[tokio::test]
async fn a_claim_restores_what_was_written_as_the_memory_store_does() {
    let Some(redis) = RedisServer::start_or_skip("redis_store::a_claim_restores") else {
        return;
    };
    let (a, metrics) = node(&redis, "node-a");
    let memory = Store::open(&StoreConfig::Memory, Arc::new(Metrics::new())).unwrap();
    assert!(a.is_shared() && a.is_durable() && !memory.is_shared());
    assert_eq!(a.node(), Some("node-a"));
    // Nothing is loaded at start: rooms are claimed on demand.
    assert_eq!(a.load().unwrap().rooms, []);
    for store in [&a, &memory] {
        store
            .create_room("CLAIMME22", b"setup".to_vec())
            .await
            .unwrap();
    }
    // A created room is held by no node: writing to it before claiming it is fenced.
    assert!(matches!(
        a.append("CLAIMME22", 1, input("CLAIMME22", 1)).await,
        Err(StoreError::Fenced { .. })
    ));
    let claimed = a
        .claim("CLAIMME22")
        .await
        .unwrap()
        .expect("the room is there");
    assert_eq!(
        claimed,
        StoredRoom {
            code: "CLAIMME22".into(),
            setup: b"setup".to_vec(),
            snapshot: None,
            inputs: Vec::new(),
        }
    );
    for store in [&a, &memory] {
        for seq in 1..=3 {
            store
                .append("CLAIMME22", seq, input("CLAIMME22", seq))
                .await
                .unwrap();
        }
        store
            .snapshot("CLAIMME22", 2, b"after 2".to_vec())
            .await
            .unwrap();
        store
            .append("CLAIMME22", 4, input("CLAIMME22", 4))
            .await
            .unwrap();
    }
    let expected = memory.load().unwrap().rooms.remove(0);
    assert_eq!(expected.snapshot, Some((2, b"after 2".to_vec())));
    assert_eq!(
        expected.inputs,
        [(3, input("CLAIMME22", 3)), (4, input("CLAIMME22", 4))]
    );
    // Another node sees the same log, without claiming it, and after claiming it.
    let (b, _) = node(&redis, "node-b");
    assert_eq!(b.peek("CLAIMME22").await.unwrap(), Some(expected.clone()));
    assert_eq!(b.claim("CLAIMME22").await.unwrap(), Some(expected.clone()));
    // The snapshot replaced the inputs it covers.
    let log = "dhumbal:room:{CLAIMME22}:log";
    assert_eq!(redis.command(&format!("XLEN {log}")), ":2");
    // A room's keys expire unless a node writes to them or renews its lease.
    let ttl: i64 = redis
        .command("PTTL dhumbal:room:{CLAIMME22}:setup")
        .trim_start_matches(':')
        .parse()
        .unwrap();
    assert!(ttl > 0 && ttl <= 60_000, "{ttl}");
    // No such room: nothing to claim or read.
    assert_eq!(a.claim("NOSUCHROOM").await.unwrap(), None);
    assert_eq!(a.peek("NOSUCHROOM").await.unwrap(), None);
    // A code in the store is taken.
    assert!(matches!(
        a.create_room("CLAIMME22", b"other".to_vec()).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(sample(&metrics, "dhumbal_room_claims_total", "node-a"), 1.0);
    assert!(sample(&metrics, "dhumbal_store_append_seconds_count", "node-a") >= 4.0);
}

#[cfg_attr(
    missing_redis,
    ignore = "needs redis-server: apt-get install redis-server"
)]
#[tokio::test]
async fn a_claim_fences_off_the_node_that_held_the_room() {
    let Some(redis) = RedisServer::start_or_skip("redis_store::a_claim_fences") else {
        return;
    };
    let (a, a_metrics) = node(&redis, "node-a");
    let (b, b_metrics) = node(&redis, "node-b");
    a.create_room("FENCED22", b"setup".to_vec()).await.unwrap();
    a.claim("FENCED22").await.unwrap().unwrap();
    a.append("FENCED22", 1, input("FENCED22", 1)).await.unwrap();
    a.renew("FENCED22").await.unwrap();
    assert_eq!(
        redis.command("GET dhumbal:room:{FENCED22}:owner"),
        "$6",
        "the owner is a node id of six bytes"
    );
    // B claims the room: it reads what A wrote, and A may write no more.
    let stored = b.claim("FENCED22").await.unwrap().unwrap();
    assert_eq!(stored.inputs, [(1, input("FENCED22", 1))]);
    let fenced = a.append("FENCED22", 2, input("FENCED22", 2)).await;
    assert!(
        matches!(fenced, Err(StoreError::Fenced { .. })),
        "{fenced:?}"
    );
    assert!(matches!(
        a.snapshot("FENCED22", 1, b"state".to_vec()).await,
        Err(StoreError::Fenced { .. })
    ));
    assert!(matches!(
        a.renew("FENCED22").await,
        Err(StoreError::Fenced { .. })
    ));
    // A closing the room for good does not delete B's room.
    assert!(matches!(
        a.delete_room("FENCED22").await,
        Err(StoreError::Fenced { .. })
    ));
    // B goes on where A stopped.
    b.append("FENCED22", 2, input("FENCED22", 2)).await.unwrap();
    b.renew("FENCED22").await.unwrap();
    let (c, _) = node(&redis, "node-c");
    let seen = c.peek("FENCED22").await.unwrap().unwrap();
    assert_eq!(
        seen.inputs,
        [(1, input("FENCED22", 1)), (2, input("FENCED22", 2))]
    );
    // A letting go of the room does not take B's lease.
    a.release("FENCED22").await.unwrap();
    assert_eq!(redis.command("EXISTS dhumbal:room:{FENCED22}:owner"), ":1");
    b.release("FENCED22").await.unwrap();
    assert_eq!(redis.command("EXISTS dhumbal:room:{FENCED22}:owner"), ":0");
    assert_eq!(
        sample(&a_metrics, "dhumbal_fenced_appends_total", "node-a"),
        1.0
    );
    assert_eq!(
        sample(&a_metrics, "dhumbal_lease_renewal_failures_total", "node-a"),
        1.0
    );
    assert_eq!(
        sample(&a_metrics, "dhumbal_lease_renewals_total", "node-a"),
        1.0
    );
    assert_eq!(
        sample(&b_metrics, "dhumbal_room_claims_total", "node-b"),
        1.0
    );
    assert_eq!(
        sample(&b_metrics, "dhumbal_fenced_appends_total", "node-b"),
        0.0
    );
}

#[cfg_attr(
    missing_redis,
    ignore = "needs redis-server: apt-get install redis-server"
)]
#[tokio::test]
async fn a_gap_or_a_repeated_seq_is_refused() {
    let Some(redis) = RedisServer::start_or_skip("redis_store::a_gap_or_a_repeated_seq") else {
        return;
    };
    let (a, _) = node(&redis, "node-a");
    a.create_room("SEQROOM22", b"setup".to_vec()).await.unwrap();
    a.claim("SEQROOM22").await.unwrap().unwrap();
    a.append("SEQROOM22", 1, input("SEQROOM22", 1))
        .await
        .unwrap();
    for seq in [1, 3, 0] {
        let refused = a.append("SEQROOM22", seq, b"nope".to_vec()).await;
        assert!(
            matches!(&refused, Err(StoreError::Conflict(why)) if why.contains("not the next")),
            "{seq}: {refused:?}"
        );
    }
    a.append("SEQROOM22", 2, input("SEQROOM22", 2))
        .await
        .unwrap();
    // A snapshot may not cover inputs not logged, nor go back before the latest.
    assert!(matches!(
        a.snapshot("SEQROOM22", 3, b"s".to_vec()).await,
        Err(StoreError::Conflict(_))
    ));
    a.snapshot("SEQROOM22", 2, b"s".to_vec()).await.unwrap();
    assert!(matches!(
        a.snapshot("SEQROOM22", 1, b"s".to_vec()).await,
        Err(StoreError::Conflict(_))
    ));
    // After a snapshot that covers every input, the next is still the one after it.
    assert!(matches!(
        a.append("SEQROOM22", 2, b"again".to_vec()).await,
        Err(StoreError::Conflict(_))
    ));
    a.append("SEQROOM22", 3, input("SEQROOM22", 3))
        .await
        .unwrap();
    let stored = a.peek("SEQROOM22").await.unwrap().unwrap();
    assert_eq!(stored.snapshot, Some((2, b"s".to_vec())));
    assert_eq!(stored.inputs, [(3, input("SEQROOM22", 3))]);
    assert_eq!(stored.last_seq(), 3);
}

#[cfg_attr(
    missing_redis,
    ignore = "needs redis-server: apt-get install redis-server"
)]
#[tokio::test]
async fn a_deleted_room_leaves_no_key_and_a_room_set_aside_is_kept() {
    let Some(redis) = RedisServer::start_or_skip("redis_store::a_deleted_room") else {
        return;
    };
    let (a, _) = node(&redis, "node-a");
    a.create_room("GONEROOM2", b"setup".to_vec()).await.unwrap();
    a.claim("GONEROOM2").await.unwrap().unwrap();
    for seq in 1..=2 {
        a.append("GONEROOM2", seq, input("GONEROOM2", seq))
            .await
            .unwrap();
    }
    a.snapshot("GONEROOM2", 1, b"s".to_vec()).await.unwrap();
    assert_eq!(redis.command("KEYS dhumbal:room:{GONEROOM2}:*"), "*5");
    a.delete_room("GONEROOM2").await.unwrap();
    assert_eq!(redis.command("KEYS dhumbal:room:{GONEROOM2}:*"), "*0");
    assert_eq!(a.claim("GONEROOM2").await.unwrap(), None);
    // Deleting a room that is not there is not an error.
    a.delete_room("GONEROOM2").await.unwrap();

    // A room set aside is kept (no expiry), never claimed, and reported at every start.
    a.create_room("ASIDEROOM", b"setup".to_vec()).await.unwrap();
    a.claim("ASIDEROOM").await.unwrap().unwrap();
    a.set_aside("ASIDEROOM", "it does not replay")
        .await
        .unwrap();
    assert_eq!(a.claim("ASIDEROOM").await.unwrap(), None);
    assert_eq!(a.peek("ASIDEROOM").await.unwrap(), None);
    assert_eq!(redis.command("PTTL dhumbal:room:{ASIDEROOM}:setup"), ":-1");
    let (b, _) = node(&redis, "node-b");
    assert_eq!(
        b.load().unwrap().kept_aside,
        [("ASIDEROOM".to_owned(), "it does not replay".to_owned())]
    );
    assert!(matches!(
        a.create_room("ASIDEROOM", b"again".to_vec()).await,
        Err(StoreError::Conflict(_))
    ));
    a.delete_room("ASIDEROOM").await.unwrap();
    assert_eq!(b.load().unwrap().kept_aside, []);
    assert_eq!(redis.command("KEYS dhumbal:room:*"), "*0");
}

#[cfg_attr(
    missing_redis,
    ignore = "needs redis-server: apt-get install redis-server"
)]
#[tokio::test]
async fn hand_histories_are_kept_once_and_expire() {
    let Some(redis) = RedisServer::start_or_skip("redis_store::hand_histories") else {
        return;
    };
    let (a, _) = node(&redis, "node-a");
    let (b, _) = node(&redis, "node-b");
    let kept = KeptMatch {
        code: "HISTROOM2".into(),
        number: 1,
        commitment: "ab".repeat(32),
        token_hashes: vec!["11".repeat(32), "22".repeat(32)],
        history: "{\"room\":\"HISTROOM2\"}".into(),
    };
    a.keep_match(kept.clone()).await.unwrap();
    a.keep_match(KeptMatch {
        history: "another".into(),
        ..kept.clone()
    })
    .await
    .unwrap();
    assert_eq!(b.find_match("HISTROOM2", 1).await.unwrap(), Some(kept));
    assert_eq!(b.find_match("HISTROOM2", 2).await.unwrap(), None);
    let ttl: i64 = redis
        .command("PTTL dhumbal:match:{HISTROOM2}:1")
        .trim_start_matches(':')
        .parse()
        .unwrap();
    assert!(ttl > 3_500_000 && ttl <= 3_600_000, "{ttl}");
    // They expire by themselves: forgetting old ones has nothing to do.
    b.forget_matches(Duration::ZERO).await.unwrap();
    assert!(a.find_match("HISTROOM2", 1).await.unwrap().is_some());
}

#[cfg_attr(
    missing_redis,
    ignore = "needs redis-server: apt-get install redis-server"
)]
#[tokio::test]
async fn a_restart_of_redis_does_not_stop_a_room() {
    let Some(mut redis) = RedisServer::start_or_skip("redis_store::a_restart_of_redis") else {
        return;
    };
    let (a, metrics) = node_with(&redis, "node-a", Duration::from_secs(20));
    a.create_room("RESTART22", b"setup".to_vec()).await.unwrap();
    a.claim("RESTART22").await.unwrap().unwrap();
    a.append("RESTART22", 1, input("RESTART22", 1))
        .await
        .unwrap();
    redis.restart();
    // The connection comes back by itself, and the scripts are loaded again.
    a.append("RESTART22", 2, input("RESTART22", 2))
        .await
        .unwrap();
    a.renew("RESTART22").await.unwrap();
    // Redis away for a moment while an append is under way: it is tried again until it lands.
    redis.stop();
    let pending = a.append("RESTART22", 3, input("RESTART22", 3));
    tokio::time::sleep(Duration::from_millis(500)).await;
    redis.restart();
    pending.await.unwrap();
    let stored = a.peek("RESTART22").await.unwrap().unwrap();
    assert_eq!(stored.last_seq(), 3);
    assert_eq!(
        sample(&metrics, "dhumbal_fenced_appends_total", "node-a"),
        0.0
    );
}
