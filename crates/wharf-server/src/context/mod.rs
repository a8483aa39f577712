//! The request context handed to every handler: who is asking, in which revision, and the
//! channels back to the client (progress, logging, cancellation and requests for input).
//!
//! - this file: the context and what it tells a handler;
//! - [`outbound`]: what the handler sends the client while it works;
//! - [`ask`]: asking the client for input, in every era.

pub(crate) mod ask;
mod outbound;

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::Duration;

use wharf_protocol::{
    ClientCapabilities, Era, Implementation, InputRequiredResult, JsonObject, LoggingLevel, ProgressToken,
    ProtocolVersion, RequestId,
};

use crate::cancel::Cancellation;
use crate::delivery::{Delivery, StreamControl};
use crate::error::RpcError;
use crate::extensions::Extensions;
use crate::input::InputRound;
use crate::principal::Principal;
use crate::server_core::ServerCore;
use crate::session::{Outbound, Session};
use crate::task::Running;

/// Everything a handler may want to know about the request it serves, and its ways to talk
/// back to the client while it works.
///
/// Cloning is cheap; all clones refer to the same request.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

struct Inner {
    id: RequestId,
    server: Arc<dyn ServerCore>,
    session: Arc<Session>,
    version: ProtocolVersion,
    client: Client,
    progress_token: Option<ProgressToken>,
    /// The request's own `_meta` members, when it has any.
    meta: Option<Box<JsonObject>>,
    last_progress: Mutex<Option<f64>>,
    log_level: Option<LoggingLevel>,
    /// Where the request's messages go when not to the session's own queue.
    sink: Option<Outbound>,
    cancel: Cancellation,
    stream: Option<Arc<StreamControl>>,
    principal: Option<Principal>,
    client_address: Option<IpAddr>,
    /// Set on 2026-07-28 requests that may answer `InputRequiredResult`. Boxed: a round is
    /// larger than all the rest of the context, and most requests have none.
    input: Option<Box<InputRound>>,
    /// Set once the request became a task: input then waits for `tasks/update`.
    task: OnceLock<Arc<Running>>,
    /// Set once a 2025-11-25 request became a task: its response has been sent, so what the
    /// handler sends goes to the session instead, marked as the task's.
    session_task: OnceLock<LegacyTask>,
    /// Set when a `tools/call` answered `isError: true`, for middleware to see.
    tool_error: AtomicBool,
    /// How long a call that may become a task stays a plain call, when middleware said.
    task_after: Option<Duration>,
    /// Set when the handler asked to go on as a task without waiting out `task_after`.
    task_now: AtomicBool,
    /// Wakes what waits for the task the request is becoming.
    task_attached: tokio::sync::Notify,
}

/// The 2025-11-25 task a request became.
struct LegacyTask {
    id: String,
    running: Arc<Running>,
}

/// Who the client is.
///
/// A session request reads what `initialize` negotiated from its session when asked, instead
/// of holding clones of it: every clone and drop of an `Arc` is an atomic operation.
pub(crate) enum Client {
    /// The session's client: [`Session::negotiated`].
    Session,
    /// What a stateless request's `_meta` said.
    Stated { capabilities: Arc<ClientCapabilities>, info: Option<Arc<Implementation>> },
}

/// The capabilities of a client that declared none.
static NO_CAPABILITIES: LazyLock<ClientCapabilities> = LazyLock::new(ClientCapabilities::default);

/// The parts a dispatcher fills in to make a [`RequestContext`].
pub(crate) struct ContextParts {
    pub(crate) id: RequestId,
    pub(crate) server: Arc<dyn ServerCore>,
    pub(crate) session: Arc<Session>,
    pub(crate) version: ProtocolVersion,
    pub(crate) client: Client,
    pub(crate) progress_token: Option<ProgressToken>,
    /// The `_meta` members the protocol does not define, when there are any.
    pub(crate) meta: Option<Box<JsonObject>>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) delivery: Delivery,
    pub(crate) input: Option<Box<InputRound>>,
    pub(crate) task_after: Option<Duration>,
}

impl RequestContext {
    pub(crate) fn new(parts: ContextParts) -> RequestContext {
        RequestContext {
            inner: Arc::new(Inner {
                id: parts.id,
                server: parts.server,
                session: parts.session,
                version: parts.version,
                client: parts.client,
                progress_token: parts.progress_token,
                meta: parts.meta,
                last_progress: Mutex::new(None),
                log_level: parts.log_level,
                sink: parts.delivery.sink,
                cancel: parts.delivery.cancel,
                stream: parts.delivery.stream,
                principal: parts.delivery.principal,
                client_address: parts.delivery.client_address,
                input: parts.input,
                task: OnceLock::new(),
                session_task: OnceLock::new(),
                tool_error: AtomicBool::new(false),
                task_after: parts.task_after,
                task_now: AtomicBool::new(false),
                task_attached: tokio::sync::Notify::new(),
            }),
        }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The id of the connection (stdio) or session (HTTP) the request arrived on.
    pub fn session_id(&self) -> &str {
        self.inner.session.id()
    }

    /// The protocol revision of this request: the session's, or the one in `_meta`.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// What the client declared it can do.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        match &self.inner.client {
            Client::Session => {
                self.inner.session.negotiated().map_or(&*NO_CAPABILITIES, |negotiated| &*negotiated.client_capabilities)
            }
            Client::Stated { capabilities, .. } => capabilities,
        }
    }

    /// The client's name and version, when it sent them.
    pub fn client_info(&self) -> Option<&Implementation> {
        match &self.inner.client {
            Client::Session => self.inner.session.negotiated().map(|negotiated| &*negotiated.client_info),
            Client::Stated { info, .. } => info.as_deref(),
        }
    }

    /// What the request reaches of its server; the server itself is [`RequestContext::server`].
    pub(crate) fn server_core(&self) -> &Arc<dyn ServerCore> {
        &self.inner.server
    }

    /// The shared state of type `S` given to the server builder (`ServerBuilder::state`), for
    /// prompt and resource handlers; tools take it as `State<S>`.
    pub fn state<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.inner.server.state().get::<S>()
    }

    /// The user's own per-session data. On 2026-07-28 stateless requests every request is its
    /// own session as far as the protocol goes; the map then lives as long as the connection.
    pub fn extensions(&self) -> &Extensions {
        self.inner.session.extensions()
    }

    /// The request's cancellation signal.
    pub fn cancellation(&self) -> &Cancellation {
        &self.inner.cancel
    }

    /// Closes the HTTP response stream of this request before the response is ready, when the
    /// transport allows it (Streamable HTTP, sessions of revision 2025-11-25 and later). The
    /// client reconnects with `Last-Event-ID` and receives what the handler sends afterwards,
    /// the response included. Returns false, and does nothing, elsewhere.
    pub fn close_sse_stream(&self) -> bool {
        match &self.inner.stream {
            Some(stream) => {
                stream.request_close();
                true
            }
            None => false,
        }
    }

    /// True once the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// The request's `_meta` members other than those Wharf reads itself (its progress token,
    /// revision, capabilities, client info and log level): a trace context, a client's own keys,
    /// and any other `io.modelcontextprotocol/` member (such as a 2025-11-25 `related-task`).
    /// `None` when there are none. A gateway passes the client's own on, not the protocol's.
    pub fn meta(&self) -> Option<&JsonObject> {
        self.inner.meta.as_deref()
    }

    /// The `progressToken` the client sent, if it asked for progress notifications.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.inner.progress_token.as_ref()
    }

    /// True when the client asked for progress notifications (it sent a `progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.inner.progress_token.is_some()
    }

    /// True if a message at `level` would reach the client.
    pub fn logs_at(&self, level: LoggingLevel) -> bool {
        if self.inner.version.era() == Era::Stateless {
            // 2026-07-28: only when the request's `_meta` asked for a level.
            self.inner.log_level.is_some_and(|wanted| level >= wanted)
        } else {
            self.inner.session.log_level().is_none_or(|wanted| level >= wanted)
        }
    }

    /// Who the request acts for, when authentication in front of the server said so.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_ref()
    }

    /// The client's network address, when the transport knows it (HTTP served by
    /// `wharf_http::serve`): quotas count anonymous callers by it.
    pub(crate) fn client_address(&self) -> Option<IpAddr> {
        self.inner.client_address
    }

    /// The `InputRequiredResult` a 2026-07-28 request answers with, when its handler asked for
    /// input it has no answer to; the error, when the client answered with something malformed.
    pub(crate) fn input_required(&self) -> Result<Option<InputRequiredResult>, RpcError> {
        let Some(round) = self.inner.input.as_ref() else { return Ok(None) };
        let server = &*self.inner.server;
        round.finish(server.sealer(), server.options().request_state_lifetime)
    }

    /// True when the handler asked this round for input it has no answer to (2026-07-28).
    pub(crate) fn lacks_input(&self) -> bool {
        self.inner.input.as_ref().is_some_and(|round| round.lacks_input())
    }

    /// Notes that the tool call answered a tool error (`isError: true`).
    pub(crate) fn mark_tool_error(&self) {
        self.inner.tool_error.store(true, Ordering::Relaxed);
    }

    /// How long a call that may become a task stays a plain call, when middleware said.
    pub(crate) fn task_after(&self) -> Option<Duration> {
        self.inner.task_after
    }

    /// Goes on as a task now: for a call that may become a task and that middleware keeps a
    /// plain call for a while ([`McpRequest::become_task_after`](crate::McpRequest::become_task_after)),
    /// at the handler's next wait instead of when that time is out. A gateway calls it when the
    /// server it forwards the call to answered with a task. Does nothing to other requests.
    pub fn become_task_now(&self) {
        self.inner.task_now.store(true, Ordering::Relaxed);
    }

    /// Completes once the client's input on the connection the request came on has ended
    /// (stdin closed): it will send nothing more.
    pub(crate) async fn client_input_ended(&self) {
        self.inner.session.input_ended().await;
    }

    /// True once the handler asked to go on as a task now.
    pub(crate) fn wants_task_now(&self) -> bool {
        self.inner.task_now.load(Ordering::Relaxed)
    }

    /// True once the tool call answered a tool error.
    pub(crate) fn is_tool_error(&self) -> bool {
        self.inner.tool_error.load(Ordering::Relaxed)
    }

    /// From now on, input this request asks for waits for the task's `tasks/update`.
    pub(crate) fn attach_task(&self, running: Arc<Running>) {
        let _ = self.inner.task.set(running);
        self.inner.task_attached.notify_waiters();
    }

    /// Waits for the task this request is becoming ([`RequestContext::become_task_now`]), so
    /// that input it asks for meanwhile waits for `tasks/update` instead of a round. Returns
    /// at once for a request that is not becoming one.
    pub(crate) async fn task_to_come(&self) {
        while self.wants_task_now() && self.inner.task.get().is_none() {
            let attached = self.inner.task_attached.notified();
            if self.inner.task.get().is_some() {
                return;
            }
            attached.await;
        }
    }

    /// From now on, what the handler sends goes to the session, with the task's id in its
    /// `_meta`: the request was answered with `CreateTaskResult` (2025-11-25 tasks), and its
    /// own stream is gone.
    pub(crate) fn became_task(&self, id: String, running: Arc<Running>) {
        let _ = self.inner.session_task.set(LegacyTask { id, running });
    }
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.inner.id)
            .field("session", &self.inner.session.id())
            .field("version", &self.inner.version)
            .finish_non_exhaustive()
    }
}
