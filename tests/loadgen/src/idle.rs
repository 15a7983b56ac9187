//! `loadgen idle`: many silent WebSockets held open, and the memory each costs the server.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::Message;

use crate::play::kind;
use crate::server::Server;
use crate::sockets::{connect, source};
use crate::{IdleArgs, MAX_IDLE_CONNECTIONS, SETUP_LIMIT};

/// What an idle run measured.
pub(crate) struct IdleFigures {
    /// Connections opened and held.
    pub(crate) held: usize,
    /// Of those, still open at the end of the hold.
    pub(crate) still_open: usize,
    /// Connections that could not be opened, by kind of error.
    pub(crate) errors: BTreeMap<String, u64>,
    /// The server's resident memory per held connection, in bytes.
    pub(crate) bytes_per_connection: f64,
}

impl IdleArgs {
    /// Whether `--connections` is within bounds: the cap, and the limit on open files (the
    /// server's, inherited from this program, and this program's own).
    pub(crate) fn check(&self) -> Result<(), String> {
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
pub(crate) async fn idle(args: IdleArgs) -> Result<IdleFigures, String> {
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
            tokio::time::timeout(SETUP_LIMIT, connect(addr, source(&common, n), "/ws", false))
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
        match tokio::time::timeout(Duration::from_millis(1), ws.socket.next()).await {
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
