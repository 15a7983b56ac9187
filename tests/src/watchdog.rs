//! Failure guards that work under paused tokio time.
//!
//! A test that pauses tokio time (to let a 30-second grace period pass at once) cannot guard
//! its waits with tokio timeouts: while a socket has data in flight the runtime looks idle, and
//! paused time jumps straight to the next timer, firing the guard. Such a test starts a
//! [`Watchdog`] instead: a thread that ends the test process if the test is still running after
//! a real-time limit. While a watchdog runs on a test's thread, the helpers' waits
//! ([`guarded`]) use no tokio timeout.

use std::cell::Cell;
use std::future::Future;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

thread_local! {
    /// Whether a watchdog guards this thread's test.
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}

/// Ends the process if the test that started it runs longer than its limit; disarmed when
/// dropped.
pub struct Watchdog {
    /// Dropped (or sent to) to disarm the watchdog thread.
    disarm: Option<mpsc::Sender<()>>,
    /// The watchdog thread.
    thread: Option<thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Starts a watchdog for the test named `test`.
    pub fn start(test: &'static str, limit: Duration) -> Watchdog {
        WATCHED.with(|w| w.set(true));
        let (disarm, armed) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = armed.recv_timeout(limit) {
                eprintln!("test {test} is still running after {limit:?}: it hangs");
                std::process::exit(101);
            }
        });
        Watchdog {
            disarm: Some(disarm),
            thread: Some(thread),
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        WATCHED.with(|w| w.set(false));
        drop(self.disarm.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Awaits `future`, failing with `what` if it takes longer than [`crate::PATIENCE`] — or, under a
/// [`Watchdog`], leaving the guard to it.
pub async fn guarded<F: Future>(what: &str, future: F) -> F::Output {
    if WATCHED.with(Cell::get) {
        future.await
    } else {
        match tokio::time::timeout(crate::PATIENCE, future).await {
            Ok(output) => output,
            Err(_) => panic!("{what}: nothing within {:?}", crate::PATIENCE),
        }
    }
}
