//! Middleware at the MCP request level: a [`Layer`] sees each request (its method, target,
//! params, era, principal and session), passes it on with [`Next::run`], answers it itself, or
//! wraps what comes back; it can also watch what handlers send the client.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::Serialize;
use wharf_protocol::{ClientRequest, CompletionReference, ProtocolVersion, RequestId};

use crate::cancel::Cancellation;
use crate::delivery::Delivery;
use crate::error::RpcError;
use crate::extensions::Extensions;
use crate::principal::Principal;
use crate::session::{Session, Transport};
use crate::session_end::SessionEnd;
use crate::wire::respond;

/// The future a [`Layer`] returns: boxed, and free to borrow the layer and the rest of the chain.
pub type LayerFuture<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

/// Middleware around every request a server answers, on every transport and in both eras.
///
/// Layers are added with [`ServerBuilder::layer`](crate::ServerBuilder::layer); the first one
/// added is the outermost, as with tower's `ServiceBuilder`: it sees each request first and its
/// answer last. A layer that does not call [`Next::run`] answers the request itself, and no
/// layer or handler after it runs.
///
/// ```
/// use wharf_server::{Answer, Layer, LayerFuture, McpRequest, Next};
///
/// /// Counts the requests that failed.
/// #[derive(Default)]
/// struct CountFailures(std::sync::atomic::AtomicU64);
///
/// impl Layer for CountFailures {
///     fn handle<'a>(&'a self, request: McpRequest, next: Next<'a>) -> LayerFuture<'a> {
///         Box::pin(async move {
///             let answer = next.run(request).await;
///             if answer.is_error() || answer.is_tool_error() {
///                 self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///             }
///             answer
///         })
///     }
/// }
/// ```
pub trait Layer: Send + Sync + 'static {
    /// Handles one request: usually `next.run(request)`, with something before or after.
    fn handle<'a>(&'a self, request: McpRequest, next: Next<'a>) -> LayerFuture<'a>;

    /// Sees each message a handler sends the client while it works (progress, log messages,
    /// and in a 2025 session elicitation, sampling and roots requests), just before it is
    /// queued. It cannot change or stop the message. Input a 2026-07-28 handler asks for is not
    /// a message (it goes back in the result), so it is not seen here. Called on the handler's
    /// task, so it should be quick.
    fn outbound(&self, message: &OutboundMessage<'_>) {
        let _ = message;
    }

    /// Hears that a 2025 session ended, and why: its stream closed, it was deleted, expired
    /// or evicted, or the server stopped. Called once per session that `initialize` opened,
    /// on whatever thread ended it (an expired HTTP session ends when it is next looked up,
    /// when a new session is made, or when the server stops), so it should be quick.
    fn session_ended(&self, end: &SessionEnd<'_>) {
        let _ = end;
    }
}

/// A layer made of a function: `layer_fn(|request, next| Box::pin(async move { ... }))`.
pub fn layer_fn<F>(handle: F) -> impl Layer
where
    F: for<'a> Fn(McpRequest, Next<'a>) -> LayerFuture<'a> + Send + Sync + 'static,
{
    FnLayer(handle)
}

struct FnLayer<F>(F);

impl<F> Layer for FnLayer<F>
where
    F: for<'a> Fn(McpRequest, Next<'a>) -> LayerFuture<'a> + Send + Sync + 'static,
{
    fn handle<'a>(&'a self, request: McpRequest, next: Next<'a>) -> LayerFuture<'a> {
        (self.0)(request, next)
    }
}

/// What serves a request once every layer passed it on: the server's own dispatch.
pub(crate) trait Endpoint: Send + Sync {
    fn serve(&self, request: McpRequest) -> LayerFuture<'_>;
}

/// The rest of the chain after a layer: the layers inside it, then the server.
pub struct Next<'a> {
    layers: &'a [Box<dyn Layer>],
    endpoint: &'a dyn Endpoint,
}

impl<'a> Next<'a> {
    pub(crate) fn new(layers: &'a [Box<dyn Layer>], endpoint: &'a dyn Endpoint) -> Next<'a> {
        Next { layers, endpoint }
    }

    /// Passes the request to the next layer, or to the server after the last one.
    pub fn run(self, request: McpRequest) -> LayerFuture<'a> {
        match self.layers.split_first() {
            Some((layer, inner)) => layer.handle(request, Next { layers: inner, endpoint: self.endpoint }),
            None => self.endpoint.serve(request),
        }
    }
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("layers", &self.layers.len()).finish_non_exhaustive()
    }
}

/// What a request is about, for the methods that name one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// `tools/call`: the tool's name.
    Tool(&'a str),
    /// `prompts/get`, or a completion of a prompt's argument: the prompt's name.
    Prompt(&'a str),
    /// `resources/read`, `resources/subscribe` and `resources/unsubscribe`, or a completion of a
    /// template's variable: the URI (or URI template).
    Resource(&'a str),
}

impl<'a> Target<'a> {
    /// The name or URI.
    pub fn as_str(&self) -> &'a str {
        match self {
            Target::Tool(name) | Target::Prompt(name) | Target::Resource(name) => name,
        }
    }
}

/// One request on its way through the layers: everything a layer may look at or change.
pub struct McpRequest {
    id: RequestId,
    request: ClientRequest,
    session: std::sync::Arc<Session>,
    delivery: Delivery,
    /// Decided by dispatch, which knows the registry.
    tool: ToolFacts,
    task_after: Option<Duration>,
}

/// What dispatch knows of a `tools/call`'s tool when the request enters the layers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ToolFacts {
    /// The server has the tool (it may still be removed before the call runs).
    pub(crate) known: bool,
    /// The call may become a task.
    pub(crate) may_become_task: bool,
}

impl McpRequest {
    pub(crate) fn new(
        id: RequestId,
        request: ClientRequest,
        session: std::sync::Arc<Session>,
        delivery: Delivery,
        tool: ToolFacts,
    ) -> McpRequest {
        McpRequest { id, request, session, delivery, tool, task_after: None }
    }

    pub(crate) fn into_parts(self) -> (RequestId, ClientRequest, std::sync::Arc<Session>, Delivery, Option<Duration>) {
        (self.id, self.request, self.session, self.delivery, self.task_after)
    }

    /// The JSON-RPC id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The method, such as `tools/call`.
    pub fn method(&self) -> &'static str {
        self.request.method()
    }

    /// The decoded params, by method.
    pub fn params(&self) -> &ClientRequest {
        &self.request
    }

    /// The params, to change before passing the request on. What a layer changes is checked
    /// as the client's own params are (a tool's arguments still meet its schema), except for
    /// what was checked before the layers ran: the HTTP `Mcp-Param-*` headers against the
    /// client's params, and [`McpRequest::may_become_task`] and
    /// [`McpRequest::is_known_tool`], which describe the tool the client named.
    pub fn params_mut(&mut self) -> &mut ClientRequest {
        &mut self.request
    }

    /// The tool, prompt or resource the request is about.
    pub fn target(&self) -> Option<Target<'_>> {
        match &self.request {
            ClientRequest::CallTool(params) => Some(Target::Tool(&params.name)),
            ClientRequest::GetPrompt(params) => Some(Target::Prompt(&params.name)),
            ClientRequest::ReadResource(params) => Some(Target::Resource(&params.uri)),
            ClientRequest::Subscribe(params) | ClientRequest::Unsubscribe(params) => {
                Some(Target::Resource(&params.uri))
            }
            ClientRequest::Complete(params) => match &params.reference {
                CompletionReference::Prompt { name, .. } => Some(Target::Prompt(name)),
                CompletionReference::ResourceTemplate { uri } => Some(Target::Resource(uri)),
            },
            _ => None,
        }
    }

    /// The tool a `tools/call` calls.
    pub fn tool_name(&self) -> Option<&str> {
        match &self.request {
            ClientRequest::CallTool(params) => Some(&params.name),
            _ => None,
        }
    }

    /// The arguments of a `tools/call`, as the client wrote them (JSON text; `{}` when the
    /// call has none). Not yet checked against the tool's schema.
    pub fn tool_arguments(&self) -> Option<&str> {
        match &self.request {
            ClientRequest::CallTool(params) => {
                Some(params.arguments.as_ref().map_or("{}", |arguments| arguments.as_str()))
            }
            _ => None,
        }
    }

    /// True for a 2026-07-28 stateless request; false for a request of a 2025 session.
    pub fn is_stateless(&self) -> bool {
        self.request.is_stateless()
    }

    /// The protocol revision: the one a stateless request names in `_meta`, or the one its
    /// session negotiated. `None` before `initialize` and for a revision Wharf does not serve
    /// (the request is then refused).
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        if self.is_stateless() {
            let named = self.request.meta()?.protocol_version.as_deref()?;
            return ProtocolVersion::parse(named).filter(|version| version.is_stateless());
        }
        if let ClientRequest::Initialize(params) = &self.request {
            return ProtocolVersion::parse(&params.protocol_version)
                .filter(|version| !version.is_stateless())
                .or(Some(ProtocolVersion::LATEST_SESSION));
        }
        self.session.negotiated().map(|negotiated| negotiated.version)
    }

    /// Who the request acts for, as the authentication in front of the server established it.
    pub fn principal(&self) -> Option<&Principal> {
        self.delivery.principal.as_ref()
    }

    /// Sets who the request acts for: a layer that authenticates requests itself. Handlers
    /// and the rest of the chain see it.
    pub fn set_principal(&mut self, principal: Principal) {
        self.delivery.principal = Some(principal);
    }

    /// The 2025 session the request belongs to: over HTTP its `Mcp-Session-Id`, over stdio and
    /// other streams the connection's id. `None` for a stateless request.
    pub fn session_id(&self) -> Option<&str> {
        if self.is_stateless() || self.session.id().is_empty() {
            return None;
        }
        Some(self.session.id())
    }

    /// The per-session values handlers keep (see
    /// [`RequestContext::extensions`](crate::RequestContext::extensions)); `None` for a
    /// stateless request, which has no session.
    pub fn session_extensions(&self) -> Option<&Extensions> {
        (!self.is_stateless()).then(|| self.session.extensions())
    }

    /// What carried the request.
    pub fn transport(&self) -> Transport {
        self.session.transport()
    }

    /// The request's cancellation, which the handler sees ([`Cancellation::is_cancelled`]).
    /// Cancelling it only raises the flag: a layer that gives up on a request also drops the
    /// future `next.run` gave it, which stops the handler (as [`Timeout`](crate::middleware::Timeout)
    /// does).
    pub fn cancellation(&self) -> &Cancellation {
        &self.delivery.cancel
    }

    /// The headers of the HTTP request that carried this request; `None` on other transports.
    #[cfg(feature = "http")]
    pub fn http_headers(&self) -> Option<&http::HeaderMap> {
        self.delivery.http.as_ref().map(|parts| &parts.headers)
    }

    /// The extensions of the HTTP request that carried this request (what tower layers in
    /// front of [`McpService`](crate::McpService) inserted); `None` on other transports.
    #[cfg(feature = "http")]
    pub fn http_extensions(&self) -> Option<&http::Extensions> {
        self.delivery.http.as_ref().map(|parts| &parts.extensions)
    }

    /// True when this `tools/call` may become a task: a stateless call of a registered tool
    /// that runs as a task, from a client that declared the tasks extension on it.
    pub fn may_become_task(&self) -> bool {
        self.tool.may_become_task
    }

    /// True for a `tools/call` of a tool the server has. Calls of unknown tools are answered
    /// with an error; middleware that keeps something per tool name should not keep it for
    /// names a client made up.
    pub fn is_known_tool(&self) -> bool {
        self.tool.known
    }

    /// For a call that [may become a task](McpRequest::may_become_task): it stays a plain call
    /// for `wait`, and only if its handler is still running then does it go on as a task.
    /// Without this, such a call becomes a task as soon as its handler waits for anything.
    pub fn become_task_after(&mut self, wait: Duration) {
        self.task_after = Some(wait);
    }
}

impl std::fmt::Debug for McpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest")
            .field("id", &self.id)
            .field("method", &self.method())
            .field("target", &self.target())
            .finish_non_exhaustive()
    }
}

/// How a request ended: its encoded result, or its error.
#[derive(Debug)]
pub struct Answer {
    outcome: Result<Vec<u8>, RpcError>,
    tool_error: bool,
}

impl Answer {
    /// An error answer: a layer that refuses the request.
    pub fn error(error: RpcError) -> Answer {
        Answer { outcome: Err(error), tool_error: false }
    }

    /// A result answer to `request`, written as given: a layer that answers the request itself
    /// (a 2026-07-28 result should carry `resultType`).
    pub fn result<R: Serialize>(request: &McpRequest, result: &R) -> Answer {
        Answer { outcome: Ok(respond(&request.id, result)), tool_error: false }
    }

    /// This answer as the future a layer returns, for a layer that answers without waiting:
    /// `return Answer::error(denied).ready();`.
    pub fn ready<'a>(self) -> LayerFuture<'a> {
        Box::pin(std::future::ready(self))
    }

    pub(crate) fn from_outcome(outcome: Result<Vec<u8>, RpcError>, tool_error: bool) -> Answer {
        Answer { outcome, tool_error }
    }

    pub(crate) fn into_outcome(self) -> Result<Vec<u8>, RpcError> {
        self.outcome
    }

    /// True when the answer is a JSON-RPC error.
    pub fn is_error(&self) -> bool {
        self.outcome.is_err()
    }

    /// The JSON-RPC error, if the answer is one.
    pub fn error_object(&self) -> Option<&RpcError> {
        self.outcome.as_ref().err()
    }

    /// True when a `tools/call` answered a result with `isError: true`: the tool failed, and
    /// the model is told so.
    pub fn is_tool_error(&self) -> bool {
        self.tool_error
    }

    /// The whole JSON-RPC response (`{"jsonrpc":"2.0","id":…,"result":…}`), when the answer is
    /// a result.
    pub fn response_bytes(&self) -> Option<&[u8]> {
        self.outcome.as_deref().ok()
    }
}

/// What kind of message a handler sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutboundKind {
    /// A notification (progress, a log message, ...).
    Notification,
    /// A request the client is to answer (elicitation, sampling, roots).
    Request,
}

/// A message a handler sends the client while it works, as [`Layer::outbound`] sees it.
#[derive(Debug)]
pub struct OutboundMessage<'a> {
    pub(crate) kind: OutboundKind,
    pub(crate) method: &'a str,
    pub(crate) request_id: &'a RequestId,
    pub(crate) bytes: &'a [u8],
}

impl<'a> OutboundMessage<'a> {
    /// A notification or a request.
    pub fn kind(&self) -> OutboundKind {
        self.kind
    }

    /// The message's method, such as `notifications/progress`.
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The id of the client's request whose handler sent the message (unique within its
    /// session).
    pub fn request_id(&self) -> &'a RequestId {
        self.request_id
    }

    /// The whole message as it goes out (JSON).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}
