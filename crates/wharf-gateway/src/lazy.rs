//! Mounts that start with the gateway's first request ([`Mount::start_lazily`]): a layer holds
//! every request until they are mounted, once, so that the first answer (`initialize`'s
//! capabilities, a list) already counts them; after that it passes requests straight on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use wharf_server::{Layer, LayerFuture, McpRequest, Next};

use crate::handle::WeakHandle;
use crate::mount::Mount;

/// The lazy mounts of one gateway, until they are started.
#[derive(Default)]
pub(crate) struct LazyMounts {
    pending: tokio::sync::Mutex<Vec<Mount>>,
    started: AtomicBool,
    handle: OnceLock<WeakHandle>,
}

impl LazyMounts {
    /// Lazy mounts of `mounts`, started through the gateway `handle` will name.
    pub(crate) fn new(mounts: Vec<Mount>) -> Arc<LazyMounts> {
        let started = AtomicBool::new(mounts.is_empty());
        Arc::new(LazyMounts { pending: tokio::sync::Mutex::new(mounts), started, handle: OnceLock::new() })
    }

    /// The gateway the mounts join, once it is built.
    pub(crate) fn set_handle(&self, handle: WeakHandle) {
        let _ = self.handle.set(handle);
    }

    /// Mounts every pending mount, once; requests that come meanwhile wait for it.
    async fn start(&self) {
        let mut pending = self.pending.lock().await;
        let Some(handle) = self.handle.get().and_then(WeakHandle::upgrade) else { return };
        for mount in std::mem::take(&mut *pending) {
            let name = mount.name.clone();
            match handle.mount(mount).await {
                Ok(()) => {
                    handle.health().lazy_started(&name, None);
                    tracing::info!(mount = %name, "a lazy mount started with the gateway's first request");
                }
                Err(err) => {
                    handle.health().lazy_started(&name, Some(err.to_string()));
                    tracing::warn!(mount = %name, error = %err, "a lazy mount could not be started; left out");
                }
            }
        }
        self.started.store(true, Ordering::Release);
    }
}

/// Holds requests until the lazy mounts are started.
pub(crate) struct StartLazily {
    pub(crate) mounts: Arc<LazyMounts>,
}

impl Layer for StartLazily {
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
