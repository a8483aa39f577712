//! Upstream requests parked between the rounds of a 2026-07-28 request: the upstream asked a
//! question, the gateway's client was asked for it in an `InputRequiredResult`, and the
//! upstream request waits here, still running, for the client's retry. Each is found again by
//! the id the sealed `requestState` carries, and given up (cancelled upstream) when the retry
//! does not come in time.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use wharf_client::ClientError;
use wharf_protocol::{LoggingMessageParams, ProgressParams};

use crate::relay::Question;

/// How many upstream requests may wait for their clients' retries at once.
const MAX_PARKED: usize = 10_000;

/// An upstream request running on its own task, with what it sends while it runs.
pub(crate) struct Running {
    pub(crate) task: AbortOnDrop<Result<Value, ClientError>>,
    pub(crate) questions: mpsc::UnboundedReceiver<Question>,
    pub(crate) progress: mpsc::UnboundedReceiver<ProgressParams>,
    pub(crate) logs: mpsc::UnboundedReceiver<LoggingMessageParams>,
    /// Questions asked of the client under these keys, whose answers the retry brings.
    pub(crate) asked: Vec<(String, Question)>,
    /// True while parked: its relay then takes no question the upstream does not relate to it.
    pub(crate) parked: Arc<AtomicBool>,
    /// Becomes true when the upstream made a task of the call (a 2025-11-25 upstream).
    pub(crate) upstream_task: watch::Receiver<bool>,
    /// The keys this request has asked under, in every round.
    pub(crate) keys: HashSet<String>,
}

/// A task aborted when this is dropped: an upstream request nobody waits for any more is
/// cancelled upstream.
pub(crate) struct AbortOnDrop<T>(pub(crate) JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The parked upstream requests of one gateway.
pub(crate) struct Parking {
    parked: Mutex<HashMap<String, Running>>,
    lifetime: Duration,
    ids: IdSource,
}

impl Parking {
    pub(crate) fn new(lifetime: Duration) -> Arc<Parking> {
        Arc::new(Parking { parked: Mutex::default(), lifetime, ids: IdSource::new() })
    }

    /// Parks `running` until its retry, or its lifetime ends; the id to find it by, or `None`
    /// when too many wait already.
    pub(crate) fn park(self: &Arc<Parking>, running: Running) -> Option<String> {
        let id = self.ids.next();
        {
            let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
            if parked.len() >= MAX_PARKED {
                return None;
            }
            running.parked.store(true, Ordering::Release);
            parked.insert(id.clone(), running);
        }
        let (parking, expiring) = (Arc::downgrade(self), id.clone());
        let lifetime = self.lifetime;
        tokio::spawn(async move {
            tokio::time::sleep(lifetime).await;
            if let Some(parking) = parking.upgrade() {
                let given_up = parking.parked.lock().unwrap_or_else(PoisonError::into_inner).remove(&expiring);
                if given_up.is_some() {
                    tracing::debug!(id = %expiring, "a parked upstream request was given up: no retry came");
                }
            }
        });
        Some(id)
    }

    /// The upstream request parked under `id`, taken out; `None` when there is none (it was
    /// given up, taken by an earlier retry, or parked by another process).
    pub(crate) fn take(&self, id: &str) -> Option<Running> {
        let running = self.parked.lock().unwrap_or_else(PoisonError::into_inner).remove(id)?;
        running.parked.store(false, Ordering::Release);
        Some(running)
    }
}

/// Ids no one can guess or meet again: 128 bits from the process's random hash keys, and a
/// counter.
struct IdSource {
    keys: RandomState,
    salt: RandomState,
    count: AtomicU64,
}

impl IdSource {
    fn new() -> IdSource {
        IdSource { keys: RandomState::new(), salt: RandomState::new(), count: AtomicU64::new(0) }
    }

    fn next(&self) -> String {
        let count = self.count.fetch_add(1, Ordering::Relaxed);
        format!("{:016x}{:016x}", self.keys.hash_one(count), self.salt.hash_one(count))
    }
}
