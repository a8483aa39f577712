//! The transports a client speaks: a server process's stdin and stdout, and Streamable HTTP.
//! Each sends what the client encoded and hands what arrives to the [`Router`](crate::router).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::value::RawValue;
use wharf_protocol::RequestId;

use crate::error::{ClientError, ErrorKind};

#[cfg(feature = "http")]
pub(crate) mod connector;
#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "http")]
pub(crate) mod sse;
pub(crate) mod stdio;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What HTTP needs to know of a message besides its body (the 2026-07-28 headers), shared by
/// every send of a prepared request.
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "http"), allow(dead_code, reason = "what only HTTP reads"))]
pub(crate) struct Head {
    /// The method, for `Mcp-Method`; empty for an answer to the server.
    pub(crate) method: String,
    /// What `Mcp-Name` carries: the tool or prompt name, resource URI or task id.
    pub(crate) name: Option<String>,
    /// `Mcp-Param-*` headers of a `tools/call`.
    pub(crate) param_headers: Vec<(String, String)>,
}

/// One message on its way to the server, encoded.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    /// The request id; `None` for a notification or an answer.
    pub(crate) id: Option<RequestId>,
    pub(crate) head: Arc<Head>,
    /// The whole JSON-RPC message.
    pub(crate) body: Bytes,
}

impl Outgoing {
    /// A notification of `method`, or an answer to the server when `method` is empty.
    pub(crate) fn notification(method: &str, body: Bytes) -> Outgoing {
        let head = Head { method: method.to_owned(), ..Head::default() };
        Outgoing { id: None, head: Arc::new(head), body }
    }
}

/// When a request stops waiting for the server. The time a person takes to authorize the
/// client (a login in the browser) is not the server's: the deadline moves back by as long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    at: Instant,
    timeout: Duration,
}

impl Deadline {
    /// `timeout` from now.
    pub(crate) fn after(timeout: Duration) -> Deadline {
        Deadline { at: Instant::now() + timeout, timeout }
    }

    /// Runs `work` until the deadline: `None` when it passed first.
    pub(crate) async fn run<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        tokio::time::timeout_at(self.at.into(), work).await.ok()
    }

    /// Moves the deadline back by `spent`, time that was not the server's.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code, reason = "only an authorization is not the server's time"))]
    pub(crate) fn extend(&mut self, spent: Duration) {
        self.at += spent;
    }

    /// The error of `message` that was not sent, or answered if it is a request, in time.
    pub(crate) fn missed(&self, message: &Outgoing) -> ClientError {
        let (method, timeout) = (&message.head.method, self.timeout);
        let what = match &message.id {
            Some(id) => format!("no answer to `{method}` (request {id})"),
            None => format!("the notification `{method}` could not be sent"),
        };
        ClientError::new(ErrorKind::Timeout, format!("{what} within {timeout:?}"))
    }
}

/// What a transport does for the client.
pub(crate) trait Link: Send + Sync {
    /// Sends a request and waits for its answer until `deadline`, past which the error is of
    /// kind [`ErrorKind::Timeout`].
    fn request(&self, message: Outgoing, deadline: Deadline) -> BoxFuture<'_, Result<Box<RawValue>, ClientError>>;

    /// Sends a notification.
    fn notify(&self, message: Outgoing) -> BoxFuture<'_, Result<(), ClientError>>;

    /// Tells the server the client gave up on request `id`, without waiting.
    fn cancel(&self, id: &RequestId);

    /// Records the negotiated revision, which HTTP repeats in a header.
    fn set_protocol_version(&self, version: Option<&'static str>);

    /// A 2025 session is open: HTTP opens its GET stream.
    fn session_opened(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Ends the connection: closes the process's stdin and waits for it to exit, or ends the
    /// HTTP session.
    fn close(&self) -> BoxFuture<'_, ()>;

    /// The server process's id, when the client started it.
    fn server_pid(&self) -> Option<u32> {
        None
    }

    /// The end of what the server process wrote to stderr, when it is captured.
    fn server_stderr(&self) -> Option<String> {
        None
    }
}
