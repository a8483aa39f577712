//! A cancellation signal shared between the dispatcher and a running handler.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Tells a handler that its request was cancelled.
///
/// The dispatcher also stops the handler's task at its next `.await` when a request is
/// cancelled, so most handlers need not look at this; handlers that run blocking loops or hand
/// work to other tasks check [`Cancellation::is_cancelled`] or await
/// [`Cancellation::cancelled`].
#[derive(Debug, Clone, Default)]
pub struct Cancellation {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl Cancellation {
    /// A signal that is not yet cancelled.
    pub fn new() -> Cancellation {
        Cancellation::default()
    }

    /// Makes this signal as good as new, if nothing else holds it: the read loop reuses the
    /// signal of a request that finished at once instead of allocating one per request. False
    /// (and nothing changed) while some clone is still around.
    pub(crate) fn renew(&mut self) -> bool {
        match Arc::get_mut(&mut self.inner) {
            Some(inner) => {
                *inner = Inner::default();
                true
            }
            None => false,
        }
    }

    /// Cancels; every waiter wakes up.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes when cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_is_renewed_only_when_nothing_else_holds_it() {
        let mut signal = Cancellation::new();
        signal.cancel();
        let clone = signal.clone();
        assert!(!signal.renew(), "a clone still sees this signal");
        assert!(signal.is_cancelled() && clone.is_cancelled());
        drop(clone);
        assert!(signal.renew());
        assert!(!signal.is_cancelled());
    }
}
