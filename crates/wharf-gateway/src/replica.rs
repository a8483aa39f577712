//! The wire between the replicas of one gateway that share a [`Bus`]: a client's retry carried
//! to the replica whose upstream request waits for it, and what that request does next carried
//! back, each replica listening on a channel of its own name.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use wharf_protocol::{ErrorObject, InputRequest, LoggingMessageParams, ProgressParams};
use wharf_server::{Bus, BusError};

use crate::ids::IdSource;

/// One message between replicas.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Message {
    /// To the holder: a retry brought `answers` for the upstream request parked as `parked`;
    /// what it does next goes to the replica `from`, under `call`.
    Continue { parked: String, answers: HashMap<String, Answered>, from: String, call: u64 },
    /// To the holder: the request that sent `call` ended (its client cancelled or left).
    Cancel { from: String, call: u64 },
    /// To the replica that sent `call`: what the upstream request did.
    Event { call: u64, event: Event },
}

/// A client's answer to one question, or the error it answered with.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Answered {
    Result(Value),
    Error(ErrorObject),
}

/// What the upstream request held by another replica did.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Event {
    Progress(ProgressParams),
    Log(LoggingMessageParams),
    /// The upstream made a task of the call.
    BecameTask,
    /// Still running: sent now and then, so that a replica that died is noticed.
    Alive,
    /// It waits, parked again as `parked`, for answers under these keys.
    Asked {
        #[serde(deserialize_with = "wharf_protocol::through_value")]
        asked: Vec<(String, InputRequest)>,
        parked: String,
    },
    /// Its answer.
    Done(Answered),
    /// No upstream request waits under that id (given up, or taken by an earlier retry).
    Gone,
}

/// This replica among the others: its name, the calls it waits on, and the upstream requests
/// it runs on for other replicas.
pub(crate) struct Replicas {
    bus: Arc<dyn Bus>,
    name: String,
    next_call: AtomicU64,
    waiting: Mutex<HashMap<u64, mpsc::UnboundedSender<Event>>>,
    held: Mutex<HashMap<(String, u64), AbortHandle>>,
}

impl Replicas {
    /// This replica on `bus`, under a name of its own.
    pub(crate) fn new(bus: Arc<dyn Bus>) -> Replicas {
        let name = format!("gateway-{}", IdSource::new().next());
        Replicas { bus, name, next_call: AtomicU64::new(0), waiting: Mutex::default(), held: Mutex::default() }
    }

    /// The name other replicas reach this one by.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Sends `message` to the replica `to`; whether it listens.
    pub(crate) async fn send(&self, to: &str, message: &Message) -> Result<bool, BusError> {
        let bytes = serde_json::to_vec(message).map_err(|err| BusError::new(err.to_string()))?;
        Ok(self.bus.publish(to, bytes).await? > 0)
    }

    /// What the other replicas send this one.
    pub(crate) fn listen(&self) -> mpsc::Receiver<Vec<u8>> {
        self.bus.subscribe(&self.name)
    }

    /// A new call, and where its events arrive.
    pub(crate) fn open_call(&self) -> (u64, mpsc::UnboundedReceiver<Event>) {
        let call = self.next_call.fetch_add(1, Ordering::Relaxed);
        let (sender, events) = mpsc::unbounded_channel();
        lock(&self.waiting).insert(call, sender);
        (call, events)
    }

    pub(crate) fn close_call(&self, call: u64) {
        lock(&self.waiting).remove(&call);
    }

    /// Hands `event` to the call waiting for it; dropped when none does.
    pub(crate) fn deliver(&self, call: u64, event: Event) {
        if let Some(waiting) = lock(&self.waiting).get(&call) {
            let _ = waiting.send(event);
        }
    }

    /// The upstream requests this replica runs on for others, by their callers.
    pub(crate) fn held(&self) -> MutexGuard<'_, HashMap<(String, u64), AbortHandle>> {
        lock(&self.held)
    }
}

/// A message another replica sent, or `None` for bytes no Wharf gateway wrote.
pub(crate) fn decode(bytes: &[u8]) -> Option<Message> {
    serde_json::from_slice(bytes).ok()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
