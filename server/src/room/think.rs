//! Where bots think. An expert's decision is a search of milliseconds (at most its budget, 50 ms
//! by default), too long to run on a room's task: the runtime's few worker threads also carry
//! every other room and every socket. So a room sends such a bot out as a [`ThinkJob`], and
//! [`Thinkers`] runs it on the blocking pool, never more at once than it has permits, so that
//! searches never take every core from the rooms of people. What the bot chose comes back to
//! its room as an ordinary input, checked there against the table as it then stands.
//!
//! Measured (`docs/performance.md`, "Expert bots on the server"): dedicated threads at a lower priority (nice
//! 10, 19) gave the people beside busy experts a lower median but a higher p99 than this pool,
//! and nice 0 threads were worse on both; the pool is also the least code.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};
use tracing::warn;

use super::core::{ThinkJob, Thought};

/// The server's pool of thinking bots: a cloneable handle on how many may think at once.
#[derive(Clone, Debug)]
pub struct Thinkers {
    /// One permit per search that may run at once.
    permits: Arc<Semaphore>,
}

impl Thinkers {
    /// A pool that lets `at_once` bots think at the same time (at least one).
    pub fn new(at_once: usize) -> Thinkers {
        Thinkers {
            permits: Arc::new(Semaphore::new(at_once.max(1))),
        }
    }

    /// A pool for this machine: one search fewer than it has cores (at least one), so a core
    /// always stays for the rooms of people.
    pub fn for_this_machine() -> Thinkers {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Thinkers::new(cores.saturating_sub(1))
    }

    /// A pool whose bots never get to think (no permit is ever free): for tests of a room whose
    /// bot is thinking.
    #[cfg(test)]
    pub(crate) fn stalled() -> Thinkers {
        Thinkers {
            permits: Arc::new(Semaphore::new(0)),
        }
    }

    /// Lets `job`'s bot think on the blocking pool once a permit is free, and sends what it
    /// chose to `back` (a room that has closed meanwhile no longer listens; that is fine).
    pub fn think(&self, job: ThinkJob, back: mpsc::UnboundedSender<Thought>) {
        let permits = Arc::clone(&self.permits);
        tokio::spawn(async move {
            let Ok(_permit) = permits.acquire_owned().await else {
                return;
            };
            match tokio::task::spawn_blocking(move || job.run()).await {
                Ok(thought) => {
                    let _ = back.send(thought);
                }
                Err(e) => warn!(error = %e, "a thinking bot's thread failed"),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_pool_has_at_least_one_permit() {
        assert_eq!(Thinkers::new(0).permits.available_permits(), 1);
        assert_eq!(Thinkers::new(3).permits.available_permits(), 3);
        assert!(Thinkers::for_this_machine().permits.available_permits() >= 1);
    }
}
