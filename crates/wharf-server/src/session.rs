//! Per-connection state: the negotiated revision of a 2025 session, the log level, requests in
//! flight, requests this server sent and awaits answers to, and resource subscriptions.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use wharf_protocol::{ClientCapabilities, ErrorObject, Implementation, LoggingLevel, ProtocolVersion, RequestId};

use crate::cancel::Cancellation;
use crate::extensions::Extensions;
use crate::lazy_queue::LazyQueue;
use crate::principal::Principal;

/// The answer of [`Session::admits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// The request may start.
    Admitted,
    /// A request with the same id is running.
    DuplicateId,
    /// As many requests as the limit allows are running.
    TooMany,
}

/// What carries a connection's messages, as middleware sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Transport {
    /// Newline-delimited JSON on the process's stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Any other byte stream ([`serve_connection`](crate::serve_connection), the in-memory client).
    Stream,
}

/// Serialized JSON-RPC messages on their way to the client, one message per item.
///
/// A counted queue also keeps the number of messages sent into it and not yet written out,
/// which its writer lowers once they are written. A transport that writes some answers past
/// the queue (the stdio read thread) does so only while that number is zero, so that nothing
/// overtakes a message sent before it, such as a handler's progress ahead of its answer.
#[derive(Debug, Clone)]
pub struct Outbound {
    queue: Queue,
    unwritten: Option<Arc<AtomicUsize>>,
}

/// The queue itself: made with the session, or on its first message.
#[derive(Debug, Clone)]
enum Queue {
    Made(mpsc::Sender<Vec<u8>>),
    OnFirstUse(Arc<LazyQueue>),
}

impl Queue {
    fn sender(&self) -> Result<&mpsc::Sender<Vec<u8>>, Closed> {
        match self {
            Queue::Made(sender) => Ok(sender),
            Queue::OnFirstUse(queue) => queue.sender().ok_or(Closed),
        }
    }
}

/// The queue's reader is gone: the client went away.
#[derive(Debug)]
pub struct Closed;

impl Outbound {
    /// A queue whose messages are counted in `unwritten` until its writer writes them.
    pub(crate) fn counted(sender: mpsc::Sender<Vec<u8>>, unwritten: Arc<AtomicUsize>) -> Outbound {
        Outbound { queue: Queue::Made(sender), unwritten: Some(unwritten) }
    }

    /// Queues a message, waiting while the queue is full.
    pub(crate) async fn send(&self, message: Vec<u8>) -> Result<(), Closed> {
        // The count rises only once the message is sure to go in, so that a send given up
        // while waiting for room leaves nothing counted.
        let permit = self.queue.sender()?.reserve().await.map_err(|_| Closed)?;
        self.count_one();
        permit.send(message);
        Ok(())
    }

    /// Queues a message if there is room now.
    pub fn try_send(&self, message: Vec<u8>) -> Result<(), Closed> {
        let permit = self.queue.sender()?.try_reserve().map_err(|_| Closed)?;
        self.count_one();
        permit.send(message);
        Ok(())
    }

    fn count_one(&self) {
        if let Some(unwritten) = &self.unwritten {
            unwritten.fetch_add(1, Ordering::AcqRel);
        }
    }
}

impl From<mpsc::Sender<Vec<u8>>> for Outbound {
    /// A queue that is not counted: everything reaches the client through it.
    fn from(sender: mpsc::Sender<Vec<u8>>) -> Outbound {
        Outbound { queue: Queue::Made(sender), unwritten: None }
    }
}

impl From<Arc<LazyQueue>> for Outbound {
    /// A queue made on its first message, not counted: everything reaches the client through
    /// it, once its reader takes it.
    fn from(queue: Arc<LazyQueue>) -> Outbound {
        Outbound { queue: Queue::OnFirstUse(queue), unwritten: None }
    }
}

/// What `initialize` settled for a 2025 session.
#[derive(Debug)]
pub struct Negotiated {
    /// The protocol revision both sides speak.
    pub version: ProtocolVersion,
    /// When `initialize` opened the session.
    pub at: std::time::Instant,
    /// What the client said it can do.
    pub client_capabilities: Arc<ClientCapabilities>,
    /// Who the client said it is.
    pub client_info: Arc<Implementation>,
}

/// A request this server is handling.
#[derive(Debug)]
pub(crate) struct InFlight {
    pub(crate) cancel: Cancellation,
    pub(crate) abort: Option<AbortHandle>,
}

/// State of one connection (stdio) or one session (HTTP).
#[derive(Debug)]
pub struct Session {
    id: String,
    transport: Transport,
    negotiated: OnceLock<Negotiated>,
    /// The principal whose `initialize` opened the session, which decides the list changes
    /// it hears of.
    principal: OnceLock<Principal>,
    initialized: AtomicBool,
    /// The level set with `logging/setLevel`, as an index into `LoggingLevel::ALL`; `u8::MAX`
    /// means the client never set one and every message is sent.
    log_level: AtomicU8,
    in_flight: Mutex<HashMap<RequestId, InFlight>>,
    /// How many entries `in_flight` has, kept beside it under its lock, so that the read loop
    /// can see that nothing is in flight without taking the lock (most requests on stdio are
    /// answered before the next is read, and never enter the map).
    in_flight_count: AtomicUsize,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>>,
    next_request: AtomicU64,
    subscriptions: Mutex<HashSet<String>>,
    extensions: Extensions,
    outbound: Outbound,
    /// Set once the client's input ended (stdin closed): listen streams end then, instead of
    /// keeping the server running for a client that is gone. Made when first needed: an HTTP
    /// session's input never ends this way, and most sessions have no listen stream.
    input_ended: OnceLock<tokio::sync::watch::Sender<bool>>,
}

const LEVEL_UNSET: u8 = u8::MAX;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Session {
    /// A session of `transport` named `id`, whose messages to the client go to `outbound`.
    pub fn new(id: String, transport: Transport, outbound: impl Into<Outbound>) -> Arc<Session> {
        Arc::new(Session {
            id,
            transport,
            negotiated: OnceLock::new(),
            principal: OnceLock::new(),
            initialized: AtomicBool::new(false),
            log_level: AtomicU8::new(LEVEL_UNSET),
            in_flight: Mutex::new(HashMap::new()),
            in_flight_count: AtomicUsize::new(0),
            pending: Mutex::new(HashMap::new()),
            next_request: AtomicU64::new(1),
            subscriptions: Mutex::new(HashSet::new()),
            extensions: Extensions::new(),
            outbound: outbound.into(),
            input_ended: OnceLock::new(),
        })
    }

    fn input_ended_signal(&self) -> &tokio::sync::watch::Sender<bool> {
        self.input_ended.get_or_init(|| tokio::sync::watch::channel(false).0)
    }

    /// Records that the client's input ended: it sends nothing more.
    pub(crate) fn end_input(&self) {
        self.input_ended_signal().send_replace(true);
    }

    /// Completes once the client's input has ended.
    pub(crate) async fn input_ended(&self) {
        let mut ended = self.input_ended_signal().subscribe();
        let _ = ended.wait_for(|ended| *ended).await;
    }

    /// The session's id: `Mcp-Session-Id` over HTTP, a connection's own name otherwise.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn transport(&self) -> Transport {
        self.transport
    }

    /// The queue of the session's messages to the client.
    pub fn outbound(&self) -> &Outbound {
        &self.outbound
    }

    pub(crate) fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// What `initialize` settled; `None` before it.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.get()
    }

    /// Records the outcome of `initialize`, and who sent it; false if the session was already
    /// initialized.
    pub fn negotiate(&self, negotiated: Negotiated, principal: Option<&Principal>) -> bool {
        let first = self.negotiated.set(negotiated).is_ok();
        if first && let Some(principal) = principal {
            let _ = self.principal.set(principal.clone());
        }
        first
    }

    /// The principal that opened the session, if it had one.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.get()
    }

    /// Records that the client sent `notifications/initialized`.
    pub fn mark_initialized(&self) {
        self.initialized.store(true, Ordering::Release);
    }

    /// True once the client sent `notifications/initialized`; only then does the server start
    /// sending notifications of its own accord.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    /// Records the level `logging/setLevel` asked for.
    pub fn set_log_level(&self, level: LoggingLevel) {
        let index = LoggingLevel::ALL.iter().position(|candidate| *candidate == level).unwrap_or(0);
        self.log_level.store(index as u8, Ordering::Relaxed);
    }

    /// The least severe level the client wants; `None` when it never said, which means all.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        LoggingLevel::ALL.get(self.log_level.load(Ordering::Relaxed) as usize).copied()
    }

    /// True while a request with this id is registered as in flight.
    pub(crate) fn is_in_flight(&self, id: &RequestId) -> bool {
        // The count changes under the lock with the map. Only the read loop asks this, and it
        // is the only one to add ids on its connection, so a zero it reads means the map holds
        // nothing it could be asking about.
        self.in_flight_count.load(Ordering::Acquire) != 0 && lock(&self.in_flight).contains_key(id)
    }

    /// Whether a new request with this id may start: no request with the same id is running,
    /// and fewer than `limit` are.
    pub fn admits(&self, id: &RequestId, limit: usize) -> Admission {
        let in_flight = lock(&self.in_flight);
        if in_flight.contains_key(id) {
            Admission::DuplicateId
        } else if in_flight.len() >= limit {
            Admission::TooMany
        } else {
            Admission::Admitted
        }
    }

    /// Registers a request in flight; false if a request with the same id is still running.
    pub fn begin(&self, id: &RequestId, cancel: Cancellation) -> bool {
        let mut in_flight = lock(&self.in_flight);
        if in_flight.contains_key(id) {
            return false;
        }
        in_flight.insert(id.clone(), InFlight { cancel, abort: None });
        self.in_flight_count.store(in_flight.len(), Ordering::Release);
        true
    }

    /// Attaches the task running a request, so that cancellation can stop it.
    pub fn attach(&self, id: &RequestId, abort: AbortHandle) {
        // If the request already finished there is nothing to attach to.
        if let Some(entry) = lock(&self.in_flight).get_mut(id) {
            entry.abort = Some(abort);
        }
    }

    /// Forgets a request that finished.
    pub fn finish(&self, id: &RequestId) {
        self.take_in_flight(id);
    }

    /// Removes a request from the in-flight map, keeping the count beside it.
    fn take_in_flight(&self, id: &RequestId) -> Option<InFlight> {
        let mut in_flight = lock(&self.in_flight);
        let entry = in_flight.remove(id);
        self.in_flight_count.store(in_flight.len(), Ordering::Release);
        entry
    }

    /// Cancels a request in flight: signals the handler and stops its task. Returns false if no
    /// such request was running, which the protocol says to ignore.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        let Some(entry) = self.take_in_flight(id) else { return false };
        entry.cancel.cancel();
        if let Some(abort) = entry.abort {
            abort.abort();
        }
        true
    }

    /// Numbers this copy's requests to the client from `first` on: copies of one shared session
    /// on several instances start far apart, so that an answer names the request of one only.
    pub fn number_requests_from(&self, first: u64) {
        self.next_request.store(first, Ordering::Relaxed);
    }

    /// Allocates an id for a server-to-client request and registers where its answer goes.
    pub(crate) fn expect_answer(&self) -> (RequestId, oneshot::Receiver<Result<Value, ErrorObject>>) {
        let number = self.next_request.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::string(format!("wharf-{number}"));
        let (sender, receiver) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), sender);
        (id, receiver)
    }

    /// Delivers the client's answer to a server-to-client request. False if none was awaited.
    pub(crate) fn answer(&self, id: &RequestId, answer: Result<Value, ErrorObject>) -> bool {
        match lock(&self.pending).remove(id) {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
    }

    pub(crate) fn forget_answer(&self, id: &RequestId) {
        lock(&self.pending).remove(id);
    }

    pub(crate) fn subscribe(&self, uri: &str) {
        lock(&self.subscriptions).insert(uri.to_owned());
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.subscriptions).remove(uri);
    }

    /// Makes the subscriptions exactly `uris`: a shared session's, as another instance left them.
    pub fn replace_subscriptions(&self, uris: impl IntoIterator<Item = String>) {
        let mut subscriptions = lock(&self.subscriptions);
        subscriptions.clear();
        subscriptions.extend(uris);
    }

    /// True when the client subscribed to `uri`.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).contains(uri)
    }
}
