//! The timer hyper is given for the header-read timeout, which is also how idle connections are
//! closed: each connection keeps its one deadline in a slot of its own, and one task sweeps the
//! slots a few times per timeout, waking the connections whose deadline passed. hyper asks for
//! a new sleep for the head of every request on a kept-alive connection; tokio's timer would
//! put each in its wheel and take it out again under the driver's lock, which the bare server
//! (no timeout at all) does not pay.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

/// The slots of an endpoint's connections, how often they are swept, and the time of the last
/// sweep, which is the connections' clock: a deadline is set from it without reading the
/// system's clock for every request, and so falls within a tick of the timeout.
pub(crate) struct HeadTimers {
    slots: Mutex<Vec<Weak<Slot>>>,
    tick: Duration,
    epoch: Instant,
    /// Milliseconds from `epoch` to the last sweep.
    swept_at: AtomicU64,
}

/// What a connection waits for: the deadline of the head it is reading, and its task's waker.
#[derive(Default)]
struct Slot {
    waiting: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    deadline: Option<Instant>,
    waker: Option<Waker>,
    /// Set by the sweep once `deadline` passed: the sleep with that deadline is over.
    passed: bool,
}

impl HeadTimers {
    /// Timers for deadlines `timeout` away, kept within an eighth of it (and a second) either
    /// way: set from the last sweep's time, and found passed at a sweep.
    pub(crate) fn new(timeout: Duration) -> Arc<HeadTimers> {
        let tick = (timeout / 8).clamp(Duration::from_millis(10), Duration::from_secs(1));
        Arc::new(HeadTimers { slots: Mutex::default(), tick, epoch: Instant::now(), swept_at: AtomicU64::new(0) })
    }

    /// The timer of one new connection.
    pub(crate) fn connection_timer(self: &Arc<Self>) -> ConnectionTimer {
        let slot = Arc::new(Slot::default());
        lock(&self.slots).push(Arc::downgrade(&slot));
        ConnectionTimer { slot, timers: self.clone() }
    }

    /// The time of the last sweep.
    fn now(&self) -> Instant {
        self.epoch + Duration::from_millis(self.swept_at.load(Ordering::Relaxed))
    }

    /// Sweeps the slots every tick, for as long as it is polled: the endpoint's accept loop
    /// drops it when serving ends.
    pub(crate) async fn sweep(self: Arc<Self>) {
        let mut interval = tokio::time::interval(self.tick);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            self.wake_past(Instant::now());
        }
    }

    /// Wakes each connection whose deadline is before `now`, and forgets closed connections.
    fn wake_past(&self, now: Instant) {
        let since_epoch = u64::try_from(now.saturating_duration_since(self.epoch).as_millis()).unwrap_or(u64::MAX);
        self.swept_at.fetch_max(since_epoch, Ordering::Relaxed);
        let mut woken = Vec::new();
        lock(&self.slots).retain(|slot| {
            let Some(slot) = slot.upgrade() else { return false };
            let mut waiting = lock(&slot.waiting);
            if !waiting.passed && waiting.deadline.is_some_and(|deadline| deadline <= now) {
                waiting.passed = true;
                woken.extend(waiting.waker.take());
            }
            true
        });
        woken.into_iter().for_each(Waker::wake);
    }
}

/// A connection's timer, as hyper's `Timer`: every sleep it makes shares the connection's slot
/// (hyper has one head, so one sleep, at a time per connection).
#[derive(Clone)]
pub(crate) struct ConnectionTimer {
    slot: Arc<Slot>,
    timers: Arc<HeadTimers>,
}

impl Timer for ConnectionTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn now(&self) -> Instant {
        self.timers.now()
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(HeadSleep { deadline, slot: self.slot.clone() })
    }
}

/// A sleep until `deadline`, over once a sweep finds its deadline passed.
struct HeadSleep {
    deadline: Instant,
    slot: Arc<Slot>,
}

impl Future for HeadSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        let mut waiting = lock(&self.slot.waiting);
        if waiting.deadline == Some(self.deadline) && waiting.passed {
            return Poll::Ready(());
        }
        if waiting.deadline != Some(self.deadline) {
            waiting.deadline = Some(self.deadline);
            waiting.passed = false;
        }
        match &mut waiting.waker {
            Some(waker) if waker.will_wake(context.waker()) => {}
            waker => *waker = Some(context.waker().clone()),
        }
        Poll::Pending
    }
}

impl Sleep for HeadSleep {}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Counted(AtomicUsize);

    impl Wake for Counted {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_sleep_is_over_once_a_sweep_finds_its_deadline_passed_and_a_newer_one_is_not() {
        let timers = HeadTimers::new(Duration::from_secs(30));
        let timer = timers.connection_timer();
        let counted = Arc::new(Counted(AtomicUsize::new(0)));
        let waker = Waker::from(counted.clone());
        let mut context = Context::from_waker(&waker);
        let start = Instant::now();
        let mut first = timer.sleep_until(start + Duration::from_secs(30));
        assert!(first.as_mut().poll(&mut context).is_pending());
        timers.wake_past(start + Duration::from_secs(29));
        assert_eq!(counted.0.load(Ordering::SeqCst), 0, "not woken before its deadline");
        assert!(first.as_mut().poll(&mut context).is_pending());
        timers.wake_past(start + Duration::from_secs(31));
        assert_eq!(counted.0.load(Ordering::SeqCst), 1, "woken once past it");
        assert!(first.as_mut().poll(&mut context).is_ready());
        // The connection's next head: a new deadline, not over because the last one was.
        drop(first);
        let mut second = timer.sleep_until(start + Duration::from_secs(60));
        assert!(second.as_mut().poll(&mut context).is_pending());
        timers.wake_past(start + Duration::from_secs(31));
        assert!(second.as_mut().poll(&mut context).is_pending());
        assert_eq!(counted.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_connections_clock_is_the_time_of_the_last_sweep() {
        let timers = HeadTimers::new(Duration::from_secs(30));
        let timer = timers.connection_timer();
        let before = timer.now();
        timers.wake_past(timers.epoch + Duration::from_secs(5));
        assert_eq!(timer.now(), timers.epoch + Duration::from_secs(5));
        assert!(timer.now() > before);
        // A sweep that ran late never sets it back.
        timers.wake_past(timers.epoch + Duration::from_secs(4));
        assert_eq!(timer.now(), timers.epoch + Duration::from_secs(5));
    }

    #[test]
    fn a_closed_connections_slot_is_forgotten_at_the_next_sweep() {
        let timers = HeadTimers::new(Duration::from_secs(30));
        let kept = timers.connection_timer();
        drop(timers.connection_timer());
        assert_eq!(lock(&timers.slots).len(), 2);
        timers.wake_past(Instant::now());
        assert_eq!(lock(&timers.slots).len(), 1);
        drop(kept);
    }
}
