//! Where bots think. An expert's decision is a search of milliseconds (at most its budget, 50 ms
//! by default), too long to run on a room's task: the runtime's few worker threads also carry
//! every other room and every socket. So a room sends such a bot out as a [`ThinkJob`], and
//! [`Thinkers`] runs it on threads of its own: one fewer than the machine has cores (at least
//! one), each at a lower scheduling priority (nice [`THINK_NICE`] on Linux), so that searches
//! take only the CPU the rooms of people leave. What the bot chose comes back to its room as an
//! ordinary input, checked there against the table as it then stands.

use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc;
use tracing::{debug, warn};

use super::core::{ThinkJob, Thought};

/// The nice value of a thinking thread: well below the runtime's workers, so that the kernel
/// prefers them whenever both are ready to run.
pub const THINK_NICE: i32 = 10;

/// A bot to think about, and the way back to its room.
type Task = (ThinkJob, mpsc::UnboundedSender<Thought>);

/// The server's thinking threads: a cloneable handle on their queue. The threads end once every
/// handle is gone.
#[derive(Clone, Debug)]
pub struct Thinkers {
    /// Where jobs wait for a free thread.
    jobs: std_mpsc::Sender<Task>,
}

impl Thinkers {
    /// Starts `threads` thinking threads (at least one).
    pub fn new(threads: usize) -> Thinkers {
        let (jobs, queue) = std_mpsc::channel::<Task>();
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..threads.max(1) {
            let queue = Arc::clone(&queue);
            std::thread::Builder::new()
                .name(format!("dhumbal-think-{n}"))
                .spawn(move || think_on(&queue))
                .expect("a thinking thread starts");
        }
        Thinkers { jobs }
    }

    /// Thinking threads for this machine: one fewer than it has cores (at least one), so a core
    /// always stays for the rooms of people.
    pub fn for_this_machine() -> Thinkers {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Thinkers::new(cores.saturating_sub(1))
    }

    /// Queues `job`; the first free thread lets its bot think and sends what it chose to `back`
    /// (a room that has closed meanwhile no longer listens; that is fine).
    pub fn think(&self, job: ThinkJob, back: mpsc::UnboundedSender<Thought>) {
        if self.jobs.send((job, back)).is_err() {
            // Every thread has ended, which only a panic outside the bot could cause.
            warn!("no thread is left to think; the bot's turn waits for its room's next input");
        }
    }
}

/// A thinking thread: lowers its own priority, then runs jobs until every handle is gone.
fn think_on(queue: &Mutex<std_mpsc::Receiver<Task>>) {
    lower_priority();
    loop {
        let task = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((job, back)) = task else {
            return;
        };
        let _ = back.send(job.run());
    }
}

/// Gives the calling thread the nice value [`THINK_NICE`], unless it is already nicer (a server
/// started with `nice` keeps that). On Linux a thread's nice value is its own; elsewhere it would
/// be the whole process's, so there the threads keep the default.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpriority_process, setpriority_process};
        let now = getpriority_process(None).unwrap_or(0);
        if now < THINK_NICE {
            if let Err(e) = setpriority_process(None, THINK_NICE) {
                debug!(error = %e, "a thinking thread keeps its priority");
            }
        }
    }
}

/// The calling thread's nice value (Linux; tests).
#[cfg(all(test, target_os = "linux"))]
fn nice_of_this_thread() -> i32 {
    rustix::process::getpriority_process(None).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn a_thinking_thread_runs_at_a_lower_priority() {
        let (tx, rx) = std_mpsc::channel();
        let base = nice_of_this_thread();
        std::thread::spawn(move || {
            lower_priority();
            tx.send(nice_of_this_thread()).unwrap();
        });
        let nice = rx.recv().unwrap();
        assert_eq!(nice, base.max(THINK_NICE), "base {base}");
        assert_eq!(nice_of_this_thread(), base, "only that thread");
    }
}
