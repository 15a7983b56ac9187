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
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::task::AtomicWaker;
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
    /// The same signal for [`Listener`]s: a flag, and the waker of every task listening.
    signal: Arc<Signal>,
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
        self.signal.begun.store(true, Ordering::SeqCst);
        let listeners = std::mem::take(&mut *self.signal.lock());
        for listener in listeners.iter().filter_map(Weak::upgrade) {
            listener.wake();
        }
    }

    /// An ear for the signal, for one task that waits on it many times (a connection's reader
    /// each time its socket has nothing, a room's task each time it has no command): waiting
    /// looks at a flag and swaps the task's waker, where a child token's wait takes its lock.
    pub fn listener(&self) -> Listener {
        let waker = Arc::new(AtomicWaker::new());
        let mut listeners = self.signal.lock();
        // The wakers of listeners dropped since are let go of whenever the list has doubled.
        if listeners.len() >= self.signal.prune_at.load(Ordering::Relaxed) {
            listeners.retain(|w| w.strong_count() > 0);
            self.signal
                .prune_at
                .store((listeners.len() * 2).max(64), Ordering::Relaxed);
        }
        listeners.push(Arc::downgrade(&waker));
        drop(listeners);
        Listener {
            signal: Arc::clone(&self.signal),
            waker,
        }
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

/// [`Shutdown`]'s signal as its [`Listener`]s see it.
#[derive(Debug, Default)]
struct Signal {
    /// Whether shutdown has begun.
    begun: AtomicBool,
    /// Every listener's waker (those of listeners dropped since, until they are let go of).
    listeners: Mutex<Vec<Weak<AtomicWaker>>>,
    /// The list's length at which the dropped listeners' wakers are next let go of.
    prune_at: std::sync::atomic::AtomicUsize,
}

impl Signal {
    /// The listeners' list (a poisoned lock's too: a list of wakers cannot be left half-made).
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Weak<AtomicWaker>>> {
        self.listeners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One task's ear for the shutdown ([`Shutdown::listener`]).
#[derive(Debug)]
pub struct Listener {
    /// The signal.
    signal: Arc<Signal>,
    /// This listener's task, woken when shutdown begins.
    waker: Arc<AtomicWaker>,
}

impl Listener {
    /// Completes when shutdown begins (at once if it has). One task at a time waits on a
    /// listener: a second waiter takes the first one's place.
    pub fn stopped(&self) -> FlagWait<'_> {
        FlagWait::new(&self.signal.begun, &self.waker)
    }
}

/// Waits until a flag is set; meanwhile an [`AtomicWaker`] holds the waiting task's waker, for
/// whoever sets the flag to wake (the waiting of a [`Listener`] and of a connection's kick).
///
/// A wait polled again and again (a connection's reader polls its kick and the shutdown every
/// time it runs out of work) registers the task's waker only when it is not the one it
/// registered last: a task's waker stays the same from poll to poll, and nothing takes it from
/// the `AtomicWaker` but the wake that comes with the flag, so the wait then reads the flag
/// alone, not the waker's line and its two atomic swaps. One task at a time waits on a flag:
/// a second waiter takes the first one's place, and the first must not wait on after it.
#[derive(Debug)]
pub struct FlagWait<'a> {
    /// The flag.
    flag: &'a AtomicBool,
    /// Where the waiting task's waker is, for whoever sets the flag.
    waker: &'a AtomicWaker,
    /// The waker this wait last registered there.
    registered: Option<Waker>,
}

impl<'a> FlagWait<'a> {
    /// A wait for `flag`, the task's waker kept in `waker`.
    pub(crate) fn new(flag: &'a AtomicBool, waker: &'a AtomicWaker) -> FlagWait<'a> {
        FlagWait {
            flag,
            waker,
            registered: None,
        }
    }
}

impl Future for FlagWait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        poll_flag(this.flag, this.waker, &mut this.registered, cx)
    }
}

/// Ready once `flag` is set; else `waker` holds this task's waker, registered there unless it
/// is `registered`, the one registered last ([`FlagWait`]).
pub(crate) fn poll_flag(
    flag: &AtomicBool,
    waker: &AtomicWaker,
    registered: &mut Option<Waker>,
    cx: &mut Context<'_>,
) -> Poll<()> {
    if flag.load(Ordering::SeqCst) {
        return Poll::Ready(());
    }
    if registered
        .as_ref()
        .is_some_and(|last| last.will_wake(cx.waker()))
    {
        return Poll::Pending;
    }
    waker.register(cx.waker());
    *registered = Some(cx.waker().clone());
    // Looked at again once registered: the flag may have been set, and the waker there before
    // (perhaps not this task's) woken, in between.
    if flag.load(Ordering::SeqCst) {
        Poll::Ready(())
    } else {
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wait registers a task's waker once, not again for each poll by the same task, and
    /// registers another task's when that one polls it: the flag's wake goes to the last.
    #[test]
    fn a_flag_wait_registers_a_new_waker_and_not_the_same_one_again() {
        use std::sync::atomic::AtomicUsize;
        struct Count(AtomicUsize);
        impl std::task::Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let flag = AtomicBool::new(false);
        let waker = AtomicWaker::new();
        let (a, b) = (
            Arc::new(Count(AtomicUsize::new(0))),
            Arc::new(Count(AtomicUsize::new(0))),
        );
        let (wa, wb) = (Waker::from(Arc::clone(&a)), Waker::from(Arc::clone(&b)));
        let mut wait = std::pin::pin!(FlagWait::new(&flag, &waker));
        assert!(
            wait.as_mut()
                .poll(&mut Context::from_waker(&wa))
                .is_pending()
        );
        assert!(waker.take().is_some(), "the first poll registers the waker");
        assert!(
            wait.as_mut()
                .poll(&mut Context::from_waker(&wa))
                .is_pending()
        );
        assert!(
            waker.take().is_none(),
            "the same waker was registered again"
        );
        assert!(
            wait.as_mut()
                .poll(&mut Context::from_waker(&wb))
                .is_pending()
        );
        flag.store(true, Ordering::SeqCst);
        waker.wake();
        assert_eq!(b.0.load(Ordering::SeqCst), 1);
        assert_eq!(a.0.load(Ordering::SeqCst), 0);
        assert!(wait.as_mut().poll(&mut Context::from_waker(&wb)).is_ready());
    }

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

    #[tokio::test]
    async fn every_listener_hears_the_signal_and_one_made_after_it_at_once() {
        let shutdown = Shutdown::new();
        let mut waiting = Vec::new();
        for _ in 0..100 {
            let listener = shutdown.listener();
            waiting.push(tokio::spawn(async move { listener.stopped().await }));
        }
        // Dropped listeners are let go of as the list grows.
        for _ in 0..1000 {
            drop(shutdown.listener());
        }
        assert!(shutdown.signal.lock().len() < 400);
        tokio::task::yield_now().await;
        assert!(waiting.iter().all(|w| !w.is_finished()));
        shutdown.begin();
        for w in waiting {
            w.await.unwrap();
        }
        shutdown.listener().stopped().await;
        assert!(shutdown.signal.lock().len() <= 1);
    }

    #[test]
    fn a_listener_waits_until_the_signal() {
        let shutdown = Shutdown::new();
        let listener = shutdown.listener();
        let mut stopped = std::pin::pin!(listener.stopped());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(stopped.as_mut().poll(&mut cx).is_pending());
        assert!(stopped.as_mut().poll(&mut cx).is_pending());
        shutdown.begin();
        assert!(stopped.as_mut().poll(&mut cx).is_ready());
    }

    #[tokio::test(start_paused = true)]
    async fn wait_gives_up_on_a_task_that_never_ends() {
        let shutdown = Shutdown::new();
        shutdown.spawn(std::future::pending::<()>());
        shutdown.begin();
        assert!(!shutdown.wait(Duration::from_secs(5)).await);
    }
}
