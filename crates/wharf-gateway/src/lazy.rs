//! Mounts that start with the gateway's first request ([`Mount::start_lazily`](crate::Mount::start_lazily)):
//! a layer holds the requests that come before they are mounted, which happens once, on a task
//! of its own (a request that is cancelled meanwhile stops nothing), so that the first answer
//! (`initialize`'s capabilities, a list) already counts them; after that it passes requests
//! straight on. One that could not be started is tried again every few seconds.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::watch;
use wharf_server::{Layer, LayerFuture, McpRequest, Next};

use crate::handle::WeakHandle;

/// How long a lazy mount that could not be started waits before it is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// Starting a gateway's lazy mounts (which its [`GatewayHandle`](crate::GatewayHandle) holds).
pub(crate) struct LazyMounts {
    handle: OnceLock<WeakHandle>,
    /// True once the first round of starting them ended: requests pass straight on.
    started: AtomicBool,
    /// True once the task that starts them was spawned.
    spawned: AtomicBool,
    /// Becomes true when the first round ended.
    first_round: watch::Sender<bool>,
}

impl LazyMounts {
    pub(crate) fn new() -> Arc<LazyMounts> {
        Arc::new(LazyMounts {
            handle: OnceLock::new(),
            started: AtomicBool::new(false),
            spawned: AtomicBool::new(false),
            first_round: watch::Sender::new(false),
        })
    }

    /// The gateway whose lazy mounts these are, once it is built.
    pub(crate) fn set_handle(&self, handle: WeakHandle) {
        let _ = self.handle.set(handle);
    }

    /// Starts the lazy mounts (once, on a task of its own) and waits for the first round.
    async fn start(self: &Arc<LazyMounts>) {
        if !self.spawned.swap(true, Ordering::AcqRel) {
            tokio::spawn(start_in_rounds(self.clone()));
        }
        let mut first_round = self.first_round.subscribe();
        let _ = first_round.wait_for(|ended| *ended).await;
        self.started.store(true, Ordering::Release);
    }
}

/// Starts the pending lazy mounts, then those that failed every few seconds, for as long as
/// the gateway lives and some are pending.
async fn start_in_rounds(lazy: Arc<LazyMounts>) {
    loop {
        let Some(handle) = lazy.handle.get().and_then(WeakHandle::upgrade) else { break };
        let failed = handle.start_lazy().await;
        drop(handle);
        lazy.first_round.send_replace(true);
        if failed == 0 {
            return;
        }
        tokio::time::sleep(RETRY_AFTER).await;
    }
    lazy.first_round.send_replace(true);
}

/// Holds requests until the lazy mounts' first round of starting ended.
pub(crate) struct StartLazily {
    pub(crate) mounts: Arc<LazyMounts>,
}

impl Layer for StartLazily {
    fn reads_transport_data(&self) -> bool {
        false
    }

    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        if self.mounts.started.load(Ordering::Acquire) {
            return next.run(request);
        }
        LayerFuture::new(async move {
            self.mounts.start().await;
            next.run(request).await
        })
    }
}
