//! `dhumbal-server`: the game server's binary.
//!
//! Reads the configuration from flags and the environment ([`dhumbal_server::Config`]; `--help`
//! lists them), logs with `tracing` (filtered by `RUST_LOG`, default `info`), binds the listen
//! address and serves until Ctrl-C or SIGTERM.

use clap::Parser;
use dhumbal_server::{Config, run};
use tokio::net::TcpListener;
use tracing::info;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let config = Config::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let listener = TcpListener::bind(config.addr).await?;
    info!(addr = %listener.local_addr()?, "dhumbal server listening");
    run(listener, config, shutdown_signal()).await?;
    info!("dhumbal server stopped");
    Ok(())
}

/// Completes on Ctrl-C or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
