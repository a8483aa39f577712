//! Upstream requests parked between the rounds of a 2026-07-28 request: the upstream asked a
//! question, the gateway's client was asked for it in an `InputRequiredResult`, and the
//! upstream request waits here, still running, for the client's retry. Each is found again by
//! the id the sealed `requestState` carries, and given up (cancelled upstream) when the retry
//! does not come in time.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use wharf_client::ClientError;
use wharf_protocol::{InputRequest, LoggingMessageParams, ProgressParams};
use wharf_server::{Bus, RpcError};

use crate::ids::IdSource;
use crate::relay::Question;
use crate::replica::Replicas;

/// How many upstream requests may wait for their clients' retries at once.
const MAX_PARKED: usize = 10_000;

/// What a round of a 2026-07-28 request keeps in its sealed `requestState`: which parked
/// upstream request it continues; with replicas, which one holds it and what it asked.
#[derive(Serialize, Deserialize)]
pub(crate) struct ParkedRound {
    pub(crate) parked: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) at: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "wharf_protocol::through_value")]
    pub(crate) asked: Vec<(String, InputRequest)>,
}

/// An upstream request running on its own task, with what it sends while it runs.
pub(crate) struct Running {
    /// The mount it went to, for errors.
    pub(crate) mount: Arc<str>,
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
    /// Its answer, once it came, while what it sent before is still passed on.
    pub(crate) finished: Option<Result<Value, RpcError>>,
}

/// A task aborted when this is dropped: an upstream request nobody waits for any more is
/// cancelled upstream.
pub(crate) struct AbortOnDrop<T>(pub(crate) JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The parked upstream requests of one gateway, and the other replicas, when it has them.
pub(crate) struct Parking {
    parked: Mutex<HashMap<String, Running>>,
    lifetime: Duration,
    ids: IdSource,
    replicas: Option<Replicas>,
    /// What listens to the other replicas, stopped with the gateway.
    listener: std::sync::OnceLock<tokio::task::AbortHandle>,
}

impl Drop for Parking {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.get() {
            listener.abort();
        }
    }
}

impl Parking {
    /// Parking for requests of at most `lifetime`; with `bus`, among the replicas on it.
    pub(crate) fn new(lifetime: Duration, bus: Option<Arc<dyn Bus>>) -> Arc<Parking> {
        let replicas = bus.map(Replicas::new);
        Arc::new(Parking {
            parked: Mutex::default(),
            lifetime,
            ids: IdSource::new(),
            replicas,
            listener: std::sync::OnceLock::new(),
        })
    }

    /// Keeps what listens to the other replicas, to stop it when the gateway goes.
    pub(crate) fn set_listener(&self, listener: tokio::task::AbortHandle) {
        let _ = self.listener.set(listener);
    }

    /// The other replicas of this gateway, when it has a bus to them.
    pub(crate) fn replicas(&self) -> Option<&Replicas> {
        self.replicas.as_ref()
    }

    /// Parks `running` until its retry, or its lifetime ends; the round that finds it again,
    /// or `None` when too many wait already.
    pub(crate) fn park(self: &Arc<Parking>, running: Running) -> Option<ParkedRound> {
        let id = self.ids.next();
        let round = ParkedRound {
            parked: id.clone(),
            at: self.replicas.as_ref().map(|replicas| replicas.name().to_owned()),
            // Another replica asks the client again from the round alone.
            asked: match self.replicas {
                Some(_) => {
                    running.asked.iter().map(|(key, question)| (key.clone(), question.request.clone())).collect()
                }
                None => Vec::new(),
            },
        };
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
        Some(round)
    }

    /// The upstream request parked under `id`, taken out; `None` when there is none (it was
    /// given up, taken by an earlier retry, or parked by another process).
    pub(crate) fn take(&self, id: &str) -> Option<Running> {
        let running = self.parked.lock().unwrap_or_else(PoisonError::into_inner).remove(id)?;
        running.parked.store(false, Ordering::Release);
        Some(running)
    }
}
