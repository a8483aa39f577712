//! [`Health`]: what each of a gateway's mounts is doing now, for a health endpoint.

use std::sync::{Arc, PoisonError, RwLock};

use serde_json::{Value, json};

use crate::connection::Connection;

/// The state of a gateway's mounts, which [`Gateway::build_with_health`](crate::Gateway::build_with_health)
/// gives beside the server. Cheap to clone; it reads the mounts as they are when asked.
#[derive(Clone, Default)]
pub struct Health {
    connections: Arc<RwLock<Vec<Arc<Connection>>>>,
    lazy: Arc<RwLock<Vec<LazyState>>>,
}

/// A lazy mount not started yet: its name, and why it could not be when it was tried.
type LazyState = (String, Option<String>);

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health").field("mounts", &self.read().len()).finish()
    }
}

impl Health {
    /// Reports `connection` from now on.
    pub(crate) fn add(&self, connection: Arc<Connection>) {
        self.forget_lazy(connection.mount());
        self.connections.write().unwrap_or_else(PoisonError::into_inner).push(connection);
    }

    /// Stops reporting the mount `name`.
    pub(crate) fn remove(&self, name: &str) {
        self.forget_lazy(name);
        self.connections
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|connection| connection.mount() != name);
    }

    fn forget_lazy(&self, name: &str) {
        self.lazy.write().unwrap_or_else(PoisonError::into_inner).retain(|(waiting, _)| waiting != name);
    }

    /// Reports the lazy mount `name` as waiting for the gateway's first request.
    pub(crate) fn add_lazy(&self, name: &str) {
        self.lazy.write().unwrap_or_else(PoisonError::into_inner).push((name.to_owned(), None));
    }

    /// The lazy mount `name` could not be started, for `why` (it is tried again).
    pub(crate) fn lazy_failed(&self, name: &str, why: String) {
        let mut lazy = self.lazy.write().unwrap_or_else(PoisonError::into_inner);
        match lazy.iter_mut().find(|(waiting, _)| waiting == name) {
            Some(entry) => entry.1 = Some(why),
            None => lazy.push((name.to_owned(), Some(why))),
        }
    }

    /// The connections of the mounts now.
    pub(crate) fn connections(&self) -> Vec<Arc<Connection>> {
        self.read().clone()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Connection>>> {
        self.connections.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// True when every mount's upstream is up, or is lazy and not asked for yet.
    pub fn all_up(&self) -> bool {
        let lazy_failed = self.lazy.read().unwrap_or_else(PoisonError::into_inner).iter().any(|(_, why)| why.is_some());
        !lazy_failed && self.read().iter().all(|connection| connection.is_up())
    }

    /// The report: `{"status": "up" | "degraded", "mounts": [{"name", "state": "up" | "down" |
    /// "lazy", "since" (Unix seconds), "restarts", "pid" (of a program, when up), "error" (when
    /// down), and for a mount with a session per client "client_sessions" and "client_pids"}]}`.
    /// A lazy mount is `lazy` until the gateway's first request starts it, and `down` with its
    /// error when it could not be started.
    pub fn report(&self) -> Value {
        let mut mounts: Vec<Value> = self.read().iter().map(|connection| connection.health()).collect();
        for (name, why) in self.lazy.read().unwrap_or_else(PoisonError::into_inner).iter() {
            mounts.push(match why {
                None => json!({"name": name, "state": "lazy"}),
                Some(why) => json!({"name": name, "state": "down", "error": why}),
            });
        }
        json!({ "status": if self.all_up() { "up" } else { "degraded" }, "mounts": mounts })
    }
}
