//! [`Health`]: what each of a gateway's mounts is doing now, for a health endpoint.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::connection::Connection;

/// The state of a gateway's mounts, which [`Gateway::build_with_health`](crate::Gateway::build_with_health)
/// gives beside the server. Cheap to clone; it reads the mounts as they are when asked.
#[derive(Clone)]
pub struct Health {
    connections: Arc<Vec<Arc<Connection>>>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health").field("mounts", &self.connections.len()).finish()
    }
}

impl Health {
    pub(crate) fn new(connections: Vec<Arc<Connection>>) -> Health {
        Health { connections: Arc::new(connections) }
    }

    /// True when every mount's upstream is up.
    pub fn all_up(&self) -> bool {
        self.connections.iter().all(|connection| connection.is_up())
    }

    /// The report: `{"status": "up" | "degraded", "mounts": [{"name", "state": "up" | "down",
    /// "since" (Unix seconds), "restarts", "pid" (of a program, when up), "error" (when down)}]}`.
    pub fn report(&self) -> Value {
        let mounts: Vec<Value> = self.connections.iter().map(|connection| connection.health()).collect();
        json!({ "status": if self.all_up() { "up" } else { "degraded" }, "mounts": mounts })
    }
}
