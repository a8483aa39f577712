//! A mount's connection to its upstream, kept up: the client while the upstream is up; when it
//! went away (a program that exited, was killed, or could not be started), why and since when,
//! while the gateway starts it again after a growing pause. Requests meanwhile get an error
//! naming the mount at once; the other mounts are not concerned.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use wharf_client::Client;
use wharf_server::RpcError;

use crate::error::{GatewayError, GatewayErrorKind};
use crate::mount::Mount;
use crate::upstream::connect;

/// Where a mount's upstream is.
enum State {
    Up { client: Client, since: SystemTime },
    Down { why: String, since: SystemTime, retry_at: Instant },
}

/// One mount's upstream, started again when it goes away.
pub(crate) struct Connection {
    mount: Mount,
    state: Mutex<State>,
    restarts: AtomicU64,
    /// Set once the mount is unmounted: it is never started again.
    closed: AtomicBool,
    /// The resources a 2025 upstream was sent `resources/subscribe` for: sent again after a
    /// restart.
    pub(crate) subscribed: Mutex<HashSet<String>>,
    /// The upstream session of each of the gateway's clients, by owner, when the mount gives
    /// each its own.
    owned: Mutex<HashMap<String, Client>>,
}

/// How many clients of the gateway's may have an upstream session of their own on one mount.
const MAX_OWNED_SESSIONS: usize = 256;

impl Connection {
    /// Connects to `mount`'s upstream.
    pub(crate) async fn open(mount: &Mount) -> Result<Connection, GatewayError> {
        let client = connect(mount).await?;
        Ok(Connection {
            mount: mount.clone(),
            state: Mutex::new(State::Up { client, since: SystemTime::now() }),
            restarts: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            subscribed: Mutex::default(),
            owned: Mutex::default(),
        })
    }

    /// The mount's name.
    pub(crate) fn mount(&self) -> &str {
        &self.mount.name
    }

    /// The client of the upstream that is up, even one whose connection just ended (which the
    /// watcher follows until it notices); `None` while it is down.
    pub(crate) fn current(&self) -> Option<Client> {
        match &*self.lock() {
            State::Up { client, .. } => Some(client.clone()),
            State::Down { .. } => None,
        }
    }

    /// The client while the upstream is up; else the error that names the mount and why.
    pub(crate) fn client(&self) -> Result<Client, RpcError> {
        match &*self.lock() {
            // Its connection ended a moment ago, before the watcher said so: down already.
            State::Up { client, .. } if client.is_closed() => Err(RpcError::internal(format!(
                "the mount `{}` is down (its connection ended); the gateway starts it again",
                self.mount.name
            ))),
            State::Up { client, .. } => Ok(client.clone()),
            State::Down { why, retry_at, .. } => {
                let wait = retry_at.saturating_duration_since(Instant::now()).as_secs();
                Err(RpcError::internal(format!(
                    "the mount `{}` is down ({why}); the gateway starts it again in {wait} s",
                    self.mount.name
                )))
            }
        }
    }

    /// The client for a request made for `owner` (a principal, a 2025 session): its own
    /// upstream session, made on first use, when the mount gives each client one; else the
    /// shared client.
    pub(crate) async fn client_for(&self, owner: Option<&str>) -> Result<Client, RpcError> {
        let shared = self.client()?;
        let Some(owner) = owner.filter(|_| self.mount.session_per_client) else { return Ok(shared) };
        {
            let mut owned = self.owned.lock().unwrap_or_else(PoisonError::into_inner);
            match owned.get(owner) {
                Some(client) if !client.is_closed() => return Ok(client.clone()),
                // Its program exited: the owner gets a new session.
                Some(_) => {
                    owned.remove(owner);
                }
                None => {}
            }
            if owned.len() >= MAX_OWNED_SESSIONS {
                return Err(RpcError::internal(format!(
                    "the mount `{}` has an upstream session for {MAX_OWNED_SESSIONS} clients already; retry when one ends",
                    self.mount.name
                )));
            }
        }
        // Boxed: connecting is rare, and its future large; a request's future stays small.
        let client = Box::pin(connect(&self.mount)).await.map_err(|err| RpcError::internal(err.to_string()))?;
        let kept =
            self.owned.lock().unwrap_or_else(PoisonError::into_inner).entry(owner.to_owned()).or_insert(client).clone();
        Ok(kept)
    }

    /// Ends the upstream session of `owner`, when it has one.
    pub(crate) async fn end_owner(&self, owner: &str) {
        let ended = self.owned.lock().unwrap_or_else(PoisonError::into_inner).remove(owner);
        if let Some(client) = ended {
            client.close().await;
        }
    }

    /// Records that the upstream went away, and when it is tried again.
    pub(crate) fn went_down(&self, why: String, retry_in: Duration) {
        tracing::warn!(mount = %self.mount.name, %why, retry_in_ms = retry_in.as_millis() as u64, "a mount is down");
        *self.lock() = State::Down { why, since: SystemTime::now(), retry_at: Instant::now() + retry_in };
    }

    /// Starts the upstream again: its new client, which requests get from now on.
    pub(crate) async fn restart(&self) -> Result<Client, GatewayError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(GatewayError::new(
                GatewayErrorKind::Mount,
                format!("the mount `{}` was unmounted", self.mount.name),
            ));
        }
        let client = connect(&self.mount).await?;
        self.restarts.fetch_add(1, Ordering::Relaxed);
        tracing::info!(mount = %self.mount.name, "a mount is up again");
        *self.lock() = State::Up { client: client.clone(), since: SystemTime::now() };
        Ok(client)
    }

    /// Ends the connection for good: a program is stopped.
    pub(crate) async fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let client = match &*self.lock() {
            State::Up { client, .. } => Some(client.clone()),
            State::Down { .. } => None,
        };
        *self.lock() = State::Down {
            why: "it was unmounted".to_owned(),
            since: SystemTime::now(),
            retry_at: Instant::now() + Duration::from_secs(u64::from(u32::MAX)),
        };
        if let Some(client) = client {
            client.close().await;
        }
        let owned: Vec<Client> =
            self.owned.lock().unwrap_or_else(PoisonError::into_inner).drain().map(|(_, client)| client).collect();
        for client in owned {
            client.close().await;
        }
    }

    /// What the health endpoint says of the mount.
    pub(crate) fn health(&self) -> Value {
        let restarts = self.restarts.load(Ordering::Relaxed);
        match &*self.lock() {
            State::Up { client, since } => {
                let mut report = json!({
                    "name": self.mount.name, "state": "up", "since": unix_seconds(*since), "restarts": restarts,
                });
                if let Some(pid) = client.server_pid() {
                    report["pid"] = json!(pid);
                }
                let owned = self.owned.lock().unwrap_or_else(PoisonError::into_inner);
                if self.mount.session_per_client {
                    let pids: Vec<u32> = owned.values().filter_map(Client::server_pid).collect();
                    report["client_sessions"] = json!(owned.len());
                    report["client_pids"] = json!(pids);
                }
                report
            }
            State::Down { why, since, .. } => json!({
                "name": self.mount.name, "state": "down", "since": unix_seconds(*since),
                "restarts": restarts, "error": why,
            }),
        }
    }

    /// True while the upstream is up.
    pub(crate) fn is_up(&self) -> bool {
        matches!(&*self.lock(), State::Up { .. })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}
