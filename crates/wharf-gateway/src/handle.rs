//! [`GatewayHandle`]: the mounts of a gateway that serves, changed while it serves: a mount added
//! or taken away without touching the others (and their clients' sessions).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use wharf_server::{Layer, LayerFuture, McpRequest, Next, Server, SessionEnd};

use crate::attach::{Attached, attach};
use crate::claims::Claims;
use crate::component::{add_each, remove};
use crate::connection::Connection;
use crate::error::{GatewayError, GatewayErrorKind};
use crate::health::Health;
use crate::mount::Mount;
use crate::parked::Parking;
use crate::subscribe::{Subscribed, SubscribedMounts};
use crate::watch::{self, Watcher};

/// How long a gateway that stops gives its upstreams, all together, to end on their own: a
/// client that started the gateway waits for it to exit, and some programs never end at
/// their input's end.
const CLOSE_GRACE: Duration = Duration::from_millis(800);

/// Changes the mounts of a gateway while it serves; from
/// [`Gateway::build_with_handle`](crate::Gateway::build_with_handle). Cheap to clone.
#[derive(Clone)]
pub struct GatewayHandle {
    inner: Arc<Inner>,
}

struct Inner {
    server: Server,
    claims: Arc<Mutex<Claims>>,
    parking: Arc<Parking>,
    separator: String,
    health: Health,
    subscribed: SubscribedMounts,
    mounted: Mutex<HashMap<String, Mounted>>,
    /// Lazy mounts not started yet (or whose start failed, tried again).
    lazy: Mutex<Vec<Mount>>,
}

/// What a mount that serves has running.
struct Mounted {
    watcher: Watcher,
    connection: Arc<Connection>,
}

/// A [`GatewayHandle`] that does not keep the gateway alive.
#[derive(Clone)]
pub(crate) struct WeakHandle(std::sync::Weak<Inner>);

impl WeakHandle {
    /// The handle, while the gateway lives.
    pub(crate) fn upgrade(&self) -> Option<GatewayHandle> {
        self.0.upgrade().map(|inner| GatewayHandle { inner })
    }
}

impl std::fmt::Debug for GatewayHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayHandle").field("mounts", &self.mounts()).finish()
    }
}

impl GatewayHandle {
    pub(crate) fn new(
        server: Server,
        claims: Arc<Mutex<Claims>>,
        parking: Arc<Parking>,
        separator: String,
        subscribed: SubscribedMounts,
        health: Health,
        lazy: Vec<Mount>,
    ) -> GatewayHandle {
        for mount in &lazy {
            health.add_lazy(&mount.name);
        }
        let lazy = Mutex::new(lazy);
        let mounted = Mutex::default();
        let inner = Inner { server, claims, parking, separator, health, subscribed, mounted, lazy };
        GatewayHandle { inner: Arc::new(inner) }
    }

    /// Starts the lazy mounts not started yet, one at a time; how many could not be started
    /// (they stay pending, to be tried again).
    pub(crate) async fn start_lazy(&self) -> usize {
        let mut failed = Vec::new();
        loop {
            let next = self.inner.lazy.lock().unwrap_or_else(PoisonError::into_inner).pop();
            let Some(mount) = next else { break };
            let name = mount.name.clone();
            match self.mount(mount.clone()).await {
                Ok(()) => tracing::info!(mount = %name, "a lazy mount started"),
                Err(err) => {
                    tracing::warn!(mount = %name, error = %err, "a lazy mount could not be started; tried again later");
                    self.inner.health.lazy_failed(&name, err.to_string());
                    failed.push(mount);
                }
            }
        }
        let count = failed.len();
        self.inner.lazy.lock().unwrap_or_else(PoisonError::into_inner).extend(failed);
        count
    }

    /// Forgets the lazy mount `name` if it has not started; whether there was one.
    fn forget_lazy(&self, name: &str) -> bool {
        let mut lazy = self.inner.lazy.lock().unwrap_or_else(PoisonError::into_inner);
        let before = lazy.len();
        lazy.retain(|mount| mount.name != name);
        let forgotten = lazy.len() < before;
        if forgotten {
            self.inner.health.remove(name);
        }
        forgotten
    }

    /// A handle that does not keep the gateway alive, for what the gateway's own server holds
    /// (its layers).
    pub(crate) fn downgrade(&self) -> WeakHandle {
        WeakHandle(Arc::downgrade(&self.inner))
    }

    /// The mounts' health, for a health endpoint.
    pub fn health(&self) -> Health {
        self.inner.health.clone()
    }

    /// The names of the mounts that serve now, sorted.
    pub fn mounts(&self) -> Vec<String> {
        let mut names: Vec<String> = self.lock().keys().cloned().collect();
        names.sort();
        names
    }

    /// Mounts `mount` while the gateway serves: its components join the gateway's lists (its
    /// clients hear `list_changed`). Fails, changing nothing, when a mount has its name, its
    /// upstream cannot be reached, or one of its names is taken.
    pub async fn mount(&self, mount: Mount) -> Result<(), GatewayError> {
        // Mounted now, it is no longer one to start lazily.
        self.forget_lazy(&mount.name);
        if self.lock().contains_key(&mount.name) {
            return Err(GatewayError::new(
                GatewayErrorKind::Mount,
                format!("a mount is named `{}` already", mount.name),
            ));
        }
        let inner = &self.inner;
        let attached = attach(&mount, &inner.claims, &inner.parking, &inner.separator).await?;
        let Attached { upstream, components, held, notifications } = attached;
        let added = inner.server.update(|update| add_each(update, &mount.name, components));
        if let Err(err) = added {
            inner.claims.lock().unwrap_or_else(PoisonError::into_inner).release_all(&mount.name);
            upstream.link.connection.close().await;
            return Err(GatewayError::new(GatewayErrorKind::Server, err.to_string()));
        }
        self.register(Attached { upstream, components: Vec::new(), held, notifications });
        Ok(())
    }

    /// Takes the mount `name` away while the gateway serves: its components leave the lists,
    /// its program is stopped. False when there is no such mount.
    pub async fn unmount(&self, name: &str) -> bool {
        if self.forget_lazy(name) {
            return true;
        }
        let Some(mounted) = self.lock().remove(name) else { return false };
        let inner = &self.inner;
        let removed = {
            // The claims stay locked through the server's update, as a refresh holds them
            // through its own: the watcher, stopped under them, adds nothing back.
            let mut claims = inner.claims.lock().unwrap_or_else(PoisonError::into_inner);
            mounted.watcher.stop();
            let released = claims.release_all(name);
            inner.server.update(|update| {
                for (kind, held) in &released {
                    remove(update, *kind, held);
                }
                Ok(())
            })
        };
        if let Err(err) = removed {
            tracing::warn!(mount = name, %err, "the gateway could not take a mount's components away");
        }
        inner.subscribed.write().unwrap_or_else(PoisonError::into_inner).retain(|mount| *mount.mount != *name);
        inner.health.remove(name);
        mounted.connection.close().await;
        true
    }

    /// Stops every mount, for a gateway that is shutting down: each program's stdin is closed
    /// and it is given a moment to exit, each URL upstream's session ended, all at once; what
    /// is still running 0.8 s later is killed. The server's lists are left as they
    /// are.
    pub async fn close(&self) {
        self.inner.lazy.lock().unwrap_or_else(PoisonError::into_inner).clear();
        let mounted: Vec<Mounted> = self.lock().drain().map(|(_, mounted)| mounted).collect();
        let mut closing = tokio::task::JoinSet::new();
        for Mounted { watcher, connection } in mounted {
            watcher.stop();
            closing.spawn(async move { connection.close().await });
        }
        let all_closed = async { while closing.join_next().await.is_some() {} };
        if tokio::time::timeout(CLOSE_GRACE, all_closed).await.is_err() {
            // A close aborted drops its program's handle, which kills the program; waited for,
            // so that each is killed before the gateway goes on to exit.
            closing.abort_all();
            while closing.join_next().await.is_some() {}
        }
    }

    /// Starts watching an attached mount whose components the server has: its list changes,
    /// its subscriptions, its health, its restarts.
    pub(crate) fn register(&self, attached: Attached) {
        let Attached { upstream, held, notifications, .. } = attached;
        let inner = &self.inner;
        let connection = upstream.link.connection.clone();
        let (listened_sender, listened) = tokio::sync::watch::channel(BTreeSet::new());
        let subscribed = Arc::new(Subscribed {
            mount: upstream.link.mount.clone(),
            prefix: upstream.prefix.clone(),
            connection: connection.clone(),
            listened: listened_sender,
        });
        inner.subscribed.write().unwrap_or_else(PoisonError::into_inner).push(subscribed);
        inner.health.add(connection.clone());
        let name = upstream.link.mount.to_string();
        let watcher = watch::spawn(inner.server.clone(), upstream, inner.claims.clone(), held, listened, notifications);
        self.lock().insert(name, Mounted { watcher, connection });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Mounted>> {
        self.inner.mounted.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Ends, with each 2025 session of the gateway's, the upstream sessions it had of its own.
pub(crate) struct SessionEnds {
    pub(crate) health: Health,
}

impl Layer for SessionEnds {
    fn reads_transport_data(&self) -> bool {
        false
    }

    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        next.run(request)
    }

    fn session_ended(&self, end: &SessionEnd<'_>) {
        let owner = format!("session {}", end.id());
        let connections = self.health.connections();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                for connection in connections {
                    connection.end_owner(&owner).await;
                }
            });
        }
    }
}
