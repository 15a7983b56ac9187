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

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::{Semaphore, mpsc};
use tracing::warn;

use super::client::{ClientTx, Text};
use super::core::{CoachJob, ThinkJob, Thought};
use crate::error::Refusal;

/// How many reviews the pool keeps (each a few kilobytes of JSON).
const KEPT_REVIEWS: usize = 256;

/// The server's pool of thinking bots: a cloneable handle on how many may think at once.
///
/// The coach thinks here too ([`Thinkers::coach`]): a hint or a review takes a permit if one is
/// free and is refused with `coach_busy` if none is, so the coach never makes a bot wait long
/// nor a person wait for nothing. A review, once made, is kept (the last 256), so
/// asking again, from the table or from Replay, costs nothing.
#[derive(Clone, Debug)]
pub struct Thinkers {
    /// One permit per search that may run at once.
    permits: Arc<Semaphore>,
    /// Reviews made, by room, match and seat.
    reviews: Arc<Mutex<Reviews>>,
}

/// The reviews kept, and the order they came in (the oldest leaves first).
#[derive(Debug, Default)]
struct Reviews {
    made: HashMap<(String, u32, usize), Text>,
    order: VecDeque<(String, u32, usize)>,
}

impl Reviews {
    fn keep(&mut self, key: (String, u32, usize), text: Text) {
        if self.made.insert(key.clone(), text).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > KEPT_REVIEWS {
            if let Some(old) = self.order.pop_front() {
                self.made.remove(&old);
            }
        }
    }
}

impl Thinkers {
    /// A pool that lets `at_once` bots think at the same time (at least one).
    pub fn new(at_once: usize) -> Thinkers {
        Thinkers {
            permits: Arc::new(Semaphore::new(at_once.max(1))),
            reviews: Arc::default(),
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
            reviews: Arc::default(),
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

    /// Asks the coach `job`, on the blocking pool if a permit is free now, and sends its answer
    /// to `to` (the client that asked); with no permit free, `to` is told `coach_busy` at once.
    /// A review already made is sent again without thinking.
    pub fn coach(&self, job: CoachJob, to: ClientTx) {
        let key = job.cache_key();
        if let Some(text) = key.as_ref().and_then(|k| self.kept_review(k)) {
            to.send(text);
            return;
        }
        let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() else {
            to.send_message(&Refusal::CoachBusy.message(job.id.clone()));
            return;
        };
        let reviews = Arc::clone(&self.reviews);
        tokio::spawn(async move {
            let made = tokio::task::spawn_blocking(move || job.run()).await;
            // The coach is free again before the person hears its advice: whoever asks again
            // as soon as it arrives finds it free, not `coach_busy`.
            drop(permit);
            match made {
                Ok(text) => {
                    if let Some(key) = key {
                        lock(&reviews).keep(key, text.clone());
                    }
                    to.send(text);
                }
                Err(e) => warn!(error = %e, "the coach's thread failed"),
            }
        });
    }

    /// A review made before, by room, match and seat.
    pub fn kept_review(&self, key: &(String, u32, usize)) -> Option<Text> {
        lock(&self.reviews).made.get(key).cloned()
    }

    /// Runs `work` on the blocking pool if a permit is free now (`Err(Refusal::CoachBusy)` if
    /// none is), keeping its answer as the review of `key`: for `GET …/review`.
    pub async fn review(
        &self,
        key: (String, u32, usize),
        work: impl FnOnce() -> Result<Text, Refusal> + Send + 'static,
    ) -> Result<Text, Refusal> {
        if let Some(text) = self.kept_review(&key) {
            return Ok(text);
        }
        let _permit = Arc::clone(&self.permits)
            .try_acquire_owned()
            .map_err(|_| Refusal::CoachBusy)?;
        let text = tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| Refusal::internal("the coach's thread failed", &e))??;
        lock(&self.reviews).keep(key, text.clone());
        Ok(text)
    }
}

/// The reviews, whatever a panicking holder left (a map of finished answers stays whole).
fn lock(reviews: &Mutex<Reviews>) -> std::sync::MutexGuard<'_, Reviews> {
    reviews
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
