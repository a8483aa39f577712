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
