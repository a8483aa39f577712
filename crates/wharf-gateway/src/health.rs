//! [`Health`]: what each of a gateway's mounts is doing now, for a health endpoint.

use std::sync::{Arc, PoisonError, RwLock};

use serde_json::{Value, json};

use crate::connection::Connection;

/// The state of a gateway's mounts, which [`Gateway::build_with_health`](crate::Gateway::build_with_health)
/// gives beside the server. Cheap to clone; it reads the mounts as they are when asked.
#[derive(Clone, Default)]
pub struct Health {
    connections: Arc<RwLock<Vec<Arc<Connection>>>>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health").field("mounts", &self.read().len()).finish()
    }
}

impl Health {
    /// Reports `connection` from now on.
    pub(crate) fn add(&self, connection: Arc<Connection>) {
        self.connections.write().unwrap_or_else(PoisonError::into_inner).push(connection);
    }

    /// Stops reporting the mount `name`.
    pub(crate) fn remove(&self, name: &str) {
        self.connections
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|connection| connection.mount() != name);
    }

    /// The connections of the mounts now.
    pub(crate) fn connections(&self) -> Vec<Arc<Connection>> {
        self.read().clone()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Connection>>> {
        self.connections.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// True when every mount's upstream is up.
    pub fn all_up(&self) -> bool {
        self.read().iter().all(|connection| connection.is_up())
    }

    /// The report: `{"status": "up" | "degraded", "mounts": [{"name", "state": "up" | "down",
    /// "since" (Unix seconds), "restarts", "pid" (of a program, when up), "error" (when down), and
    /// for a mount with a session per client "client_sessions" and "client_pids"}]}`.
    pub fn report(&self) -> Value {
        let mounts: Vec<Value> = self.read().iter().map(|connection| connection.health()).collect();
        json!({ "status": if self.all_up() { "up" } else { "degraded" }, "mounts": mounts })
    }
}
