//! Graceful shutdown: one signal that every connection and room listens to, and a tracker of
//! their tasks so that [`crate::run`] can wait for them to finish.
//!
//! axum's graceful shutdown waits for HTTP requests, but not for WebSocket connections (an
//! upgraded connection is no longer the HTTP server's) nor for room tasks. So every connection's
//! task and every room's task is spawned through [`Shutdown`]: when [`Shutdown::begin`] is
//! called, each connection tells its client `bye` and closes (`restarting` and 1012 when the
//! store keeps the rooms for the next start, `shutting_down` and 1001 with `--store memory`),
//! each room stops, and [`Shutdown::wait`] returns once they all have (or a grace period has passed).
//!
//! The order in [`crate::run`]: the signal arrives; readiness turns false
//! ([`crate::health::Readiness`]) and the server keeps serving for `--drain-delay`; then
//! [`Shutdown::begin`], and axum stops accepting; then [`Shutdown::wait`].

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The longest [`crate::run`] waits for connections and rooms to finish after shutdown began.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The shutdown signal and the tasks that must finish before the server stops. Cheap to clone;
/// every clone is the same signal and tracker.
#[derive(Clone, Debug, Default)]
pub struct Shutdown {
    /// Cancelled when shutdown begins.
    token: CancellationToken,
    /// Every connection's and room's task.
    tasks: TaskTracker,
}

impl Shutdown {
    /// A signal that has not been given, tracking no task yet.
    pub fn new() -> Shutdown {
        Shutdown::default()
    }

    /// Begins the shutdown: every connection and room is told to finish.
    pub fn begin(&self) {
        self.token.cancel();
    }

    /// Whether shutdown has begun.
    pub fn has_begun(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Completes when shutdown begins.
    pub async fn begun(&self) {
        self.token.cancelled().await;
    }

    /// A token cancelled when shutdown begins, for a `select!` that must not borrow `self`.
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// Spawns a task that shutdown waits for.
    pub fn spawn<F>(&self, task: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tasks.spawn(task)
    }

    /// Wraps a future (one spawned elsewhere, such as by the WebSocket upgrade) so that shutdown
    /// waits for it.
    pub fn track<F: Future>(&self, future: F) -> tokio_util::task::task_tracker::TrackedFuture<F> {
        self.tasks.track_future(future)
    }

    /// Waits until every tracked task has finished, at most `grace`; returns whether they all
    /// did. Tasks spawned after this is called are not waited for.
    pub async fn wait(&self, grace: Duration) -> bool {
        self.tasks.close();
        tokio::time::timeout(grace, self.tasks.wait()).await.is_ok()
    }

    /// How many tracked tasks are still running.
    pub fn running(&self) -> usize {
        self.tasks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wait_returns_once_the_tasks_have_seen_the_signal() {
        let shutdown = Shutdown::new();
        for _ in 0..3 {
            let listening = shutdown.clone();
            shutdown.spawn(async move { listening.begun().await });
        }
        assert_eq!(shutdown.running(), 3);
        assert!(!shutdown.has_begun());
        shutdown.begin();
        assert!(shutdown.wait(Duration::from_secs(60)).await);
        assert_eq!(shutdown.running(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn wait_gives_up_on_a_task_that_never_ends() {
        let shutdown = Shutdown::new();
        shutdown.spawn(std::future::pending::<()>());
        shutdown.begin();
        assert!(!shutdown.wait(Duration::from_secs(5)).await);
    }
}
