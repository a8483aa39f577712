//! Middleware at the MCP request level: a [`Layer`] sees each request (its method, target,
//! params, era, principal and session), passes it on with [`Next::run`], answers it itself, or
//! wraps what comes back; it can also watch what handlers send the client.

mod future;
mod outbound;
mod request;
mod response;
mod served;

use std::pin::Pin;

use crate::session_end::SessionEnd;

pub use future::LayerFuture;
pub use outbound::{OutboundKind, OutboundMessage};
pub use request::{McpRequest, Subject};
pub(crate) use request::{RequestParts, ToolFacts};
pub use response::McpResponse;
pub(crate) use served::RequestCell;
use served::{Served, ServerWork};

/// Middleware around every request a server answers, on every transport and in both eras.
///
/// Layers are added with [`ServerBuilder::layer`](crate::ServerBuilder::layer); the first one
/// added is the outermost, as with tower's `ServiceBuilder`: it sees each request first and its
/// answer last. A layer that does not call [`Next::run`] answers the request itself, and no
/// layer or handler after it runs.
///
/// ```
/// use wharf_server::{McpResponse, Layer, LayerFuture, McpRequest, Next};
///
/// /// Counts the requests that failed.
/// #[derive(Default)]
/// struct CountFailures(std::sync::atomic::AtomicU64);
///
/// impl Layer for CountFailures {
///     fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
///         LayerFuture::new(async move {
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
    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a>;

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

    /// Whether this layer reads what the transport kept of a request
    /// ([`McpRequest::transport_data`]: an HTTP request's headers and extensions). A transport
    /// keeps them, at a copy of the headers per request, only when some layer does. True unless
    /// a layer says otherwise.
    fn reads_transport_data(&self) -> bool {
        true
    }
}

/// A layer made of a function: `layer_fn(|request, next| next.run(request))`, or
/// `layer_fn(|request, next| LayerFuture::new(async move { ... }))`.
pub fn layer_fn<F>(handle: F) -> impl Layer
where
    F: for<'a> Fn(McpRequest<'a>, Next<'a>) -> LayerFuture<'a> + Send + Sync + 'static,
{
    FnLayer(handle)
}

struct FnLayer<F>(F);

impl<F> Layer for FnLayer<F>
where
    F: for<'a> Fn(McpRequest<'a>, Next<'a>) -> LayerFuture<'a> + Send + Sync + 'static,
{
    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        (self.0)(request, next)
    }
}

/// The rest of the chain after a layer: the layers inside it, then the server.
pub struct Next<'a> {
    layers: &'a [Box<dyn Layer>],
    cell: &'a RequestCell,
    work: Pin<&'a mut (dyn ServerWork + 'a)>,
}

impl<'a> Next<'a> {
    /// Passes the request to the next layer, or to the server after the last one.
    pub fn run(self, request: McpRequest<'a>) -> LayerFuture<'a> {
        match self.layers.split_first() {
            Some((layer, inner)) => layer.handle(request, Next { layers: inner, ..self }),
            None => LayerFuture::served(Served::new(self.cell, request, self.work)),
        }
    }
}

/// Runs `request` through `layers`; the last one passes it to `work` through `cell`. `work` is
/// the server's future, made before the layers ran, which takes the request from `cell` when
/// it is first polled.
pub(crate) fn run_chain<'a, W: ServerWork + 'a>(
    layers: &'a [Box<dyn Layer>],
    request: McpRequest<'a>,
    cell: &'a RequestCell,
    work: Pin<&'a mut W>,
) -> LayerFuture<'a> {
    Next { layers, cell, work }.run(request)
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("layers", &self.layers.len()).finish_non_exhaustive()
    }
}
