//! Where what the server sends goes: an answer to the request awaiting it, a question to the
//! [`ClientHandler`] (whose answer goes back through the transport), a notification to the
//! progress listener of its request and to the notification stream. A question or log message
//! the server relates to one of the client's requests (one that came on that request's HTTP
//! stream; on stdio, the only request in flight that can take it, or requests all made for the
//! same owner) goes to that request's own handler or log listener. What is not MCP is
//! recorded as an anomaly, never a crash. The server's requests are handled a bounded number
//! at a time, and their answers wait in a bounded queue: a server that asks without end and
//! stops reading is refused, then no longer read, instead of filling the client's memory.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{Semaphore, mpsc, oneshot};
use wharf_protocol::{
    Envelope, ErrorCode, ErrorMessage, ErrorObject, JsonRpc2, LoggingMessageParams, ProgressParams, RequestId,
    ResponseMessage, ServerNotification, ServerRequest,
};

use crate::handler::ClientHandler;

/// What a request receives: its raw result, or the error the server answered with.
pub(crate) type Reply = Result<Box<RawValue>, ErrorObject>;

/// Sees each notification as the server sent it: its method and raw params.
pub(crate) type NotificationObserver = Arc<dyn Fn(&str, Option<&RawValue>) + Send + Sync>;

/// How many notifications wait for a slow reader before new ones are dropped.
const NOTIFICATION_BACKLOG: usize = 4096;

/// How many abandoned requests are remembered.
const MAX_ABANDONED: usize = 1024;

/// How often, and after what pause, a question no request takes is looked at again.
const PLACING_TRIES: usize = 100;
const PLACING_PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

/// How many anomalies are kept; later ones are counted only.
const KEPT_ANOMALIES: usize = 100;

/// The code of a server's request refused because too many are being handled: JSON-RPC's
/// implementation-defined server error, as a server's own concurrency limit answers.
const TOO_MANY_REQUESTS: ErrorCode = ErrorCode(-32000);

/// A map keyed by request ids, which this client makes itself (numbers in order): a hash of a
/// few multiplications, not SipHash, which guards against keys chosen by an attacker.
type ById<T> = HashMap<RequestId, T, BuildHasherDefault<IdHasher>>;

/// Hashes what a `RequestId` writes (a discriminant and an integer, or the bytes of a string).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.write_u64(u64::from(*byte));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_i64(&mut self, word: i64) {
        self.write_u64(word as u64);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn write_isize(&mut self, word: isize) {
        self.write_u64(word as u64);
    }
}

/// What one request of the client takes of what the server relates to it: the server's
/// questions, answered by its own handler, and log messages, sent to its own listener. `owner`
/// says for whom it was made: on a transport that does not say which request a message is
/// related to, requests of one owner may take each other's.
#[derive(Clone, Default)]
pub(crate) struct Scope {
    pub(crate) handler: Option<Arc<dyn ClientHandler>>,
    pub(crate) log: Option<mpsc::UnboundedSender<LoggingMessageParams>>,
    pub(crate) owner: Option<Arc<str>>,
    /// The task the request is about (`tasks/result` and the like): the server's messages
    /// marked `related-task` with it are the request's (2025-11-25 tasks).
    pub(crate) task: Option<Arc<str>>,
}

impl Scope {
    pub(crate) fn is_empty(&self) -> bool {
        self.handler.is_none() && self.log.is_none()
    }
}

pub(crate) struct Router {
    /// `None` once the connection is gone: nothing more will be answered.
    pending: Mutex<Option<ById<oneshot::Sender<Reply>>>>,
    progress: Mutex<ById<mpsc::UnboundedSender<ProgressParams>>>,
    scopes: Arc<Mutex<ById<Scope>>>,
    /// Set once a request opened a scope: a question not placed at once may be for a request
    /// about to open one.
    scopes_used: std::sync::atomic::AtomicBool,
    /// Requests given up on (timed out, dropped), whose late answers are expected.
    abandoned: Mutex<HashSet<RequestId>>,
    notifications: Mutex<Option<mpsc::Sender<ServerNotification>>>,
    anomalies: Mutex<(Vec<String>, usize)>,
    handler: Arc<dyn ClientHandler>,
    observer: Option<NotificationObserver>,
    answers: mpsc::Sender<Bytes>,
    /// One permit for each of the server's requests that may be handled at once.
    handling: Arc<Semaphore>,
    max_handling: usize,
}

impl Router {
    /// A router whose answers to the server's questions go to `answers`, for the transport to
    /// send; at most `max_handling` questions are handled at once.
    pub(crate) fn new(
        handler: Arc<dyn ClientHandler>,
        observer: Option<NotificationObserver>,
        answers: mpsc::Sender<Bytes>,
        max_handling: usize,
    ) -> Router {
        Router {
            pending: Mutex::new(Some(ById::default())),
            progress: Mutex::default(),
            scopes: Arc::default(),
            scopes_used: std::sync::atomic::AtomicBool::new(false),
            abandoned: Mutex::default(),
            notifications: Mutex::default(),
            anomalies: Mutex::default(),
            handler,
            observer,
            answers,
            handling: Arc::new(Semaphore::new(max_handling)),
            max_handling,
        }
    }

    /// Waits for the answer to request `id`, which the transport routes here.
    pub(crate) fn expect(&self, id: RequestId) -> oneshot::Receiver<Reply> {
        let (sender, receiver) = oneshot::channel();
        if let Some(pending) = lock(&self.pending).as_mut() {
            pending.insert(id, sender);
        }
        receiver
    }

    /// Stops waiting for request `id`.
    pub(crate) fn forget(&self, id: &RequestId) {
        let waited = lock(&self.pending).as_mut().and_then(|pending| pending.remove(id));
        if waited.is_some() {
            let mut abandoned = lock(&self.abandoned);
            if abandoned.len() >= MAX_ABANDONED {
                abandoned.clear();
            }
            abandoned.insert(id.clone());
        }
        lock(&self.progress).remove(id);
        lock(&self.scopes).remove(id);
    }

    /// True once the connection is gone.
    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.pending).is_none()
    }

    /// Ends every wait: the connection is gone, and their receivers see it closed.
    pub(crate) fn close_all(&self) {
        *lock(&self.pending) = None;
        lock(&self.progress).clear();
        lock(&self.scopes).clear();
        // The notification stream ends with the connection.
        *lock(&self.notifications) = None;
    }

    /// Sends `notifications/progress` whose token is `token` to `listener`.
    pub(crate) fn listen_progress(&self, token: RequestId, listener: mpsc::UnboundedSender<ProgressParams>) {
        lock(&self.progress).insert(token, listener);
    }

    /// Sends what the server relates to request `id` to `scope`, until the request is forgotten.
    pub(crate) fn open_scope(&self, id: RequestId, scope: Scope) {
        self.scopes_used.store(true, std::sync::atomic::Ordering::Relaxed);
        lock(&self.scopes).insert(id, scope);
    }

    /// The scope of the request a message of the server is for: `related`, when the transport
    /// knows it; else the only request in flight that `takes` it, or the oldest of several made
    /// for one owner. `None` when no request takes it, or it could be for requests of several
    /// owners: it is not given to any.
    fn scope_for(&self, related: Related<'_>, takes: impl Fn(&Scope) -> bool) -> Option<Scope> {
        place(&self.scopes, related, takes)
    }
    /// A new stream of the server's notifications; the previous one ends.
    pub(crate) fn subscribe(&self) -> mpsc::Receiver<ServerNotification> {
        let (sender, receiver) = mpsc::channel(NOTIFICATION_BACKLOG);
        *lock(&self.notifications) = Some(sender);
        receiver
    }

    /// Records something the server did that is not MCP.
    pub(crate) fn anomaly(&self, what: String) {
        tracing::warn!(target: "wharf_client", "{what}");
        let mut anomalies = lock(&self.anomalies);
        if anomalies.0.len() < KEPT_ANOMALIES {
            anomalies.0.push(what);
        }
        anomalies.1 += 1;
    }

    /// What the server did that is not MCP (the first hundred), and how many in all.
    pub(crate) fn anomalies(&self) -> (Vec<String>, usize) {
        lock(&self.anomalies).clone()
    }

    /// Routes one message the server sent. It waits only while the queue of answers to the
    /// server is full: the transport then stops reading what the server sends.
    pub(crate) async fn route_bytes(&self, bytes: &[u8]) {
        match Envelope::parse(bytes) {
            Ok(envelope) => self.route(envelope, None).await,
            Err(err) => self.anomaly(format!(
                "the server sent a message that is not JSON-RPC ({}): {}",
                err.error.message,
                excerpt(bytes)
            )),
        }
    }

    /// Routes one decoded message (see [`Router::route_bytes`]); `related` is the request it
    /// is related to, when the transport knows it (it came on that request's stream).
    pub(crate) async fn route(&self, envelope: Envelope<'_>, related: Option<&RequestId>) {
        match envelope {
            Envelope::Response { id, result } => self.answer(&id, Ok(result.to_owned())),
            Envelope::Error { id: Some(id), error } => self.answer(&id, Err(error)),
            Envelope::Error { id: None, error } => {
                self.anomaly(format!("the server sent an error without an id: {} {}", error.code.0, error.message))
            }
            Envelope::Notification { method, params } => self.notify(&method, params, related),
            Envelope::Request { id, method, params } => self.ask(id, &method, params, related).await,
        }
    }

    fn answer(&self, id: &RequestId, reply: Reply) {
        let waiting = lock(&self.pending).as_mut().and_then(|pending| pending.remove(id));
        match waiting {
            Some(waiting) => {
                let _ = waiting.send(reply);
            }
            None if lock(&self.abandoned).remove(id) => {
                tracing::debug!(target: "wharf_client", "a late answer to request {id}, given up on");
            }
            None => self.anomaly(format!("the server answered request {id}, which nothing awaits")),
        }
    }

    fn notify(&self, method: &str, params: Option<&RawValue>, related: Option<&RequestId>) {
        if let Some(observer) = &self.observer {
            observer(method, params);
        }
        let notification = match ServerNotification::decode(method, params) {
            Ok(notification) => notification,
            Err(err) => {
                // Servers may send notifications of extensions this client does not know.
                if ServerNotification::is_known_method(method) {
                    self.anomaly(format!("the server sent `{method}` with invalid params: {err}"));
                } else {
                    tracing::debug!(target: "wharf_client", "ignored a notification `{method}`");
                }
                return;
            }
        };
        if let ServerNotification::Progress(progress) = &notification
            && let Some(listener) = lock(&self.progress).get(&progress.progress_token)
        {
            let _ = listener.send(progress.clone());
        }
        if let ServerNotification::Message(message) = &notification
            && let Some(Scope { log: Some(listener), .. }) =
                self.scope_for(Related { request: related, task: None }, |scope| {
                    scope.log.is_some()
                        && scope
                            .handler
                            .as_ref()
                            .is_none_or(|handler| related.is_some() || handler.takes_unrelated_questions())
                })
            && listener.send(message.clone()).is_ok()
        {
            return;
        }
        let sender = lock(&self.notifications).clone();
        if let Some(sender) = sender
            && sender.try_send(notification).is_err()
        {
            tracing::debug!(target: "wharf_client", "a notification was dropped: nobody reads them fast enough");
        }
    }

    /// Hands a question to the handler, on a task of its own that keeps its permit until the
    /// answer is queued; a question past the limit is refused at once.
    async fn ask(&self, id: RequestId, method: &str, params: Option<&RawValue>, related: Option<&RequestId>) {
        let Ok(permit) = self.handling.clone().try_acquire_owned() else {
            tracing::debug!(target: "wharf_client", "refused the server's `{method}` {id}: too many at once");
            let message = format!(
                "Too many requests: this client already handles {} requests of the server at once \
                 (ClientOptions::max_server_requests); retry when one ends",
                self.max_handling
            );
            if let Some(bytes) = encode_answer(&id, Err(ErrorObject::new(TOO_MANY_REQUESTS, message))) {
                let _ = self.answers.send(bytes).await;
            }
            return;
        };
        let request = ServerRequest::decode(method, params);
        let takes = |scope: &Scope| {
            scope.handler.as_ref().is_some_and(|handler| related.is_some() || handler.takes_unrelated_questions())
        };
        let task =
            if self.scopes_used.load(std::sync::atomic::Ordering::Relaxed) { related_task(params) } else { None };
        let placed =
            self.scope_for(Related { request: related, task: task.as_deref() }, takes).and_then(|scope| scope.handler);
        // Unplaced, it may be for a request about to be sent (the result of a task its server
        // created a moment ago, on stdio): looked for again a few times before the client's
        // own handler takes it.
        let retry =
            (placed.is_none() && related.is_none() && self.scopes_used.load(std::sync::atomic::Ordering::Relaxed))
                .then(|| self.scopes.clone());
        let fallback = self.handler.clone();
        let answers = self.answers.clone();
        tokio::spawn(async move {
            let mut handler = placed;
            if let Some(scopes) = retry {
                for _ in 0..PLACING_TRIES {
                    tokio::time::sleep(PLACING_PAUSE).await;
                    let takes = |scope: &Scope| {
                        scope.handler.as_ref().is_some_and(|handler| handler.takes_unrelated_questions())
                    };
                    let related = Related { request: None, task: task.as_deref() };
                    handler = place(&scopes, related, takes).and_then(|scope| scope.handler);
                    if handler.is_some() {
                        break;
                    }
                }
            }
            let handler = handler.unwrap_or(fallback);
            let answer = match request {
                Ok(request) => answer(handler.as_ref(), request).await,
                Err(err) => Err(err.to_error_object()),
            };
            if let Some(bytes) = encode_answer(&id, answer) {
                let _ = answers.send(bytes).await;
            }
            drop(permit);
        });
    }
}

/// What a message of the server is related to, as far as the client can tell.
#[derive(Debug, Clone, Copy, Default)]
struct Related<'a> {
    /// The request on whose stream it came.
    request: Option<&'a RequestId>,
    /// The task its `_meta` names (`io.modelcontextprotocol/related-task`).
    task: Option<&'a str>,
}

/// The task a message's params name in `_meta["io.modelcontextprotocol/related-task"]`.
fn related_task(params: Option<&RawValue>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Meta>,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(rename = "io.modelcontextprotocol/related-task")]
        related: Option<Task>,
    }
    #[derive(serde::Deserialize)]
    struct Task {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    let params: Params = serde_json::from_str(params?.get()).ok()?;
    Some(params.meta?.related?.task_id)
}

/// The scope a message of the server is for, among `scopes` (see `Router::scope_for`).
fn place(scopes: &Mutex<ById<Scope>>, related: Related<'_>, takes: impl Fn(&Scope) -> bool) -> Option<Scope> {
    let scopes = lock(scopes);
    if let Some(id) = related.request {
        return scopes.get(id).filter(|scope| takes(scope)).cloned();
    }
    if let Some(task) = related.task
        && let Some(scope) = scopes.values().find(|scope| scope.task.as_deref() == Some(task) && takes(scope))
    {
        return Some(scope.clone());
    }
    let mut candidates = scopes.iter().filter(|(_, scope)| takes(scope));
    let (mut oldest_id, mut oldest) = candidates.next()?;
    for (id, scope) in candidates {
        if scope.owner.is_none() || scope.owner != oldest.owner {
            return None;
        }
        if id.as_number() < oldest_id.as_number() {
            (oldest_id, oldest) = (id, scope);
        }
    }
    Some(oldest.clone())
}

/// The answer to the server's request `id`, as the message to send.
fn encode_answer(id: &RequestId, answer: Result<serde_json::Value, ErrorObject>) -> Option<Bytes> {
    let bytes = match answer {
        Ok(result) => serde_json::to_vec(&ResponseMessage { jsonrpc: JsonRpc2, id, result }),
        Err(error) => serde_json::to_vec(&ErrorMessage { id: Some(id), error: &error }),
    };
    bytes.ok().map(Bytes::from)
}

/// The handler's answer to one question, as the JSON of its result.
pub(crate) async fn answer(
    handler: &dyn ClientHandler,
    request: ServerRequest,
) -> Result<serde_json::Value, ErrorObject> {
    match request {
        ServerRequest::Ping(_) => Ok(serde_json::json!({})),
        ServerRequest::Elicit(params) => to_value(handler.elicit(params).await?),
        ServerRequest::CreateMessage(params) => to_value(handler.create_message(params).await?),
        ServerRequest::ListRoots(_) => to_value(handler.list_roots().await?),
        other => Err(crate::handler::unsupported(other.method())),
    }
}

fn to_value(result: impl Serialize) -> Result<serde_json::Value, ErrorObject> {
    serde_json::to_value(result)
        .map_err(|err| ErrorObject::new(wharf_protocol::ErrorCode::INTERNAL_ERROR, err.to_string()))
}

/// The start of a message, for an anomaly report.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
    if bytes.len() > 200 { format!("{text}…") } else { text.into_owned() }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler::NoHandler;

    /// A handler that takes unrelated questions or not, as a gateway's parked request does not.
    struct Taking(bool);

    impl ClientHandler for Taking {
        fn takes_unrelated_questions(&self) -> bool {
            self.0
        }
    }

    fn router() -> Router {
        Router::new(Arc::new(NoHandler), None, mpsc::channel(1).0, 1)
    }

    fn scope(owner: Option<&str>, takes: bool) -> Scope {
        Scope { handler: Some(Arc::new(Taking(takes))), log: None, owner: owner.map(Into::into), task: None }
    }

    fn placed(router: &Router, related: Option<&RequestId>) -> Option<Option<Arc<str>>> {
        let takes = |scope: &Scope| {
            scope.handler.as_ref().is_some_and(|handler| related.is_some() || handler.takes_unrelated_questions())
        };
        router.scope_for(Related { request: related, task: None }, takes).map(|scope| scope.owner)
    }

    #[test]
    fn a_question_goes_to_its_request_or_to_one_owner_never_across_owners() {
        let router = router();
        assert_eq!(placed(&router, None), None, "no request in flight");
        router.open_scope(RequestId::number(1), scope(Some("ada"), true));
        assert_eq!(placed(&router, None), Some(Some("ada".into())), "the only request in flight");
        router.open_scope(RequestId::number(2), scope(Some("ada"), true));
        assert_eq!(placed(&router, None), Some(Some("ada".into())), "requests of one owner");
        router.open_scope(RequestId::number(3), scope(Some("alan"), true));
        assert_eq!(placed(&router, None), None, "requests of two owners: not placed");
        assert_eq!(placed(&router, Some(&RequestId::number(3))), Some(Some("alan".into())), "related: its own");
        router.forget(&RequestId::number(3));
        router.open_scope(RequestId::number(4), scope(Some("alan"), false));
        assert_eq!(placed(&router, None), Some(Some("ada".into())), "one not taking is passed over");
        router.forget(&RequestId::number(1));
        router.forget(&RequestId::number(2));
        router.open_scope(RequestId::number(5), scope(None, true));
        router.open_scope(RequestId::number(6), scope(None, true));
        assert_eq!(placed(&router, None), None, "two without an owner may be anyone's");
        let following = Scope { task: Some("t1".into()), ..scope(Some("grace"), true) };
        router.open_scope(RequestId::number(7), following);
        let related = Related { request: None, task: Some("t1") };
        let takes = |scope: &Scope| scope.handler.is_some();
        let owner = router.scope_for(related, takes).and_then(|scope| scope.owner);
        assert_eq!(owner.as_deref(), Some("grace"), "marked with a task: the request about that task");
    }
}
