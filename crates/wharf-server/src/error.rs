//! Errors: the opaque [`Error`] for building and serving, and [`RpcError`], the JSON-RPC error
//! a handler can answer with.

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use wharf_protocol::{ErrorCode, ErrorObject};

use crate::scopes::Scopes;

/// An error from building or serving a server.
///
/// The kind is private; ask with the `is_*` methods. `Display` gives one sentence that says what
/// went wrong and, for registration errors, which component is at fault.
pub struct Error {
    inner: Box<ErrorImpl>,
}

struct ErrorImpl {
    kind: Kind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Registration,
    Io,
    Protocol,
    Closed,
    Timeout,
}

impl Error {
    pub(crate) fn registration(message: impl Into<String>) -> Error {
        Error::new(Kind::Registration, message.into(), None)
    }

    pub(crate) fn io(err: std::io::Error) -> Error {
        Error::new(Kind::Io, format!("I/O error: {err}"), Some(Box::new(err)))
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Error {
        Error::new(Kind::Protocol, message.into(), None)
    }

    pub(crate) fn closed() -> Error {
        Error::new(Kind::Closed, "the connection is closed".to_owned(), None)
    }

    pub(crate) fn timeout(message: impl Into<String>) -> Error {
        Error::new(Kind::Timeout, message.into(), None)
    }

    fn new(kind: Kind, message: String, source: Option<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error { inner: Box::new(ErrorImpl { kind, message, source }) }
    }

    /// True when a component could not be registered (a bad name, schema or template).
    pub fn is_registration(&self) -> bool {
        self.inner.kind == Kind::Registration
    }

    /// True when reading or writing the transport failed.
    pub fn is_io(&self) -> bool {
        self.inner.kind == Kind::Io
    }

    /// True when the peer broke the protocol or answered with an error.
    pub fn is_protocol(&self) -> bool {
        self.inner.kind == Kind::Protocol
    }

    /// True when the connection closed before an answer arrived.
    pub fn is_closed(&self) -> bool {
        self.inner.kind == Kind::Closed
    }

    /// True when the peer did not answer in time.
    pub fn is_timeout(&self) -> bool {
        self.inner.kind == Kind::Timeout
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error").field("kind", &self.inner.kind).field("message", &self.inner.message).finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner.source.as_deref().map(|source| source as &(dyn std::error::Error + 'static))
    }
}

/// A JSON-RPC error that a handler answers with instead of a result.
///
/// Return `Err(RpcError)` from a tool, prompt or resource handler to send a JSON-RPC error with
/// your own code. `RpcError` deliberately does not implement `Display`: that is what lets a tool
/// return `Result<T, E>` for any `E: Display` and have the error become a tool result with
/// `isError: true` (which the model sees), while `Result<T, RpcError>` becomes a protocol error
/// (which the client sees).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    object: ErrorObject,
    /// Set only on the error asking for input returns on a first run (see
    /// [`RpcError::is_input_required`]), so that no handler's own error is taken for it.
    input_required: bool,
    /// What a transport with a status line says of a refusal beyond the JSON-RPC error.
    refusal: Option<Box<Refusal>>,
}

/// Refusals a transport with a status line reports in its own terms.
#[derive(Debug, Clone, PartialEq)]
enum Refusal {
    /// Refused for now (a rate limit): 429 with `Retry-After`.
    RetryAfter(Duration),
    /// The principal lacks scopes the request needs: 403 with an `insufficient_scope`
    /// challenge naming them.
    InsufficientScope(Scopes),
}

/// The message of the error a handler's unanswered input returns on 2026-07-28.
const INPUT_REQUIRED_MESSAGE: &str = "Input required: the client is asked for it in an InputRequiredResult";

impl RpcError {
    /// An error with any code and message.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError::from(ErrorObject::new(ErrorCode(code), message))
    }

    /// `-32602 Invalid params`.
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::from(ErrorObject::new(ErrorCode::INVALID_PARAMS, message))
    }

    /// `-32603 Internal error`.
    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError::from(ErrorObject::new(ErrorCode::INTERNAL_ERROR, message))
    }

    /// `-32601 Method not found`.
    pub fn method_not_found(message: impl Into<String>) -> RpcError {
        RpcError::from(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, message))
    }

    /// `-32600 Invalid request`.
    pub fn invalid_request(message: impl Into<String>) -> RpcError {
        RpcError::from(ErrorObject::new(ErrorCode::INVALID_REQUEST, message))
    }

    /// "Resource not found", for resource handlers. Wharf sends it with the code the request's
    /// revision expects (`-32002` before 2026-07-28, `-32602` on it) and the URI in `data`.
    pub fn resource_not_found(uri: &str) -> RpcError {
        RpcError::new(ErrorCode::RESOURCE_NOT_FOUND.0, format!("Resource not found: {uri}"))
            .with_data(serde_json::json!({ "uri": uri }))
    }

    /// "Too many requests": the request is refused for now, and the client may try again
    /// after `retry_after`. The code is `-32000` (a server error), `data` carries
    /// `retryAfterSeconds`, and over HTTP an answer sent as JSON is 429 with a `Retry-After`
    /// header (one that goes out on an SSE stream already begun keeps its 200).
    pub fn rate_limited(message: impl Into<String>, retry_after: Duration) -> RpcError {
        let seconds = retry_after_seconds(retry_after);
        let mut error =
            RpcError::new(SERVER_ERROR, message).with_data(serde_json::json!({ "retryAfterSeconds": seconds }));
        error.refusal = Some(Box::new(Refusal::RetryAfter(retry_after)));
        error
    }

    /// "Insufficient scope": the principal's credentials lack scopes that `what` requires
    /// (`-32003`, with the scopes in `data.requiredScopes`). Over HTTP the answer is 403 with a
    /// `WWW-Authenticate: Bearer error="insufficient_scope"` challenge naming every scope, so
    /// that the client can ask its authorization server for them (step-up authorization).
    pub fn insufficient_scope<S: Into<String>>(what: &str, scopes: impl IntoIterator<Item = S>) -> RpcError {
        let scopes = Scopes::new(scopes);
        let names: Vec<&str> = scopes.names().collect();
        let message = format!("Insufficient scope: {what} requires the scopes {}", names.join(" "));
        let mut error = RpcError::new(FORBIDDEN, message).with_data(serde_json::json!({ "requiredScopes": names }));
        error.refusal = Some(Box::new(Refusal::InsufficientScope(scopes)));
        error
    }

    /// "Request timed out" (`-32001`, the code MCP clients use for a request that took too long),
    /// with the time allowed in `data`.
    pub fn timed_out(message: impl Into<String>, allowed: Duration) -> RpcError {
        let millis = u64::try_from(allowed.as_millis()).unwrap_or(u64::MAX);
        RpcError::new(REQUEST_TIMED_OUT, message).with_data(serde_json::json!({ "timeoutMs": millis }))
    }

    /// Adds structured `data`.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.object.data = Some(data);
        self
    }

    /// The error code.
    pub fn code(&self) -> i64 {
        self.object.code.0
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.object.message
    }

    /// The structured data, if any.
    pub fn data(&self) -> Option<&Value> {
        self.object.data.as_ref()
    }

    /// True for the error that asking for input returns on the first run of a 2026-07-28
    /// request: the input goes to the client in an `InputRequiredResult`, and whatever the
    /// handler answers after it is not sent. Handlers that catch errors can pass it on.
    pub fn is_input_required(&self) -> bool {
        self.input_required
    }

    /// When the client may try again, for an error made by [`RpcError::rate_limited`].
    pub fn retry_after(&self) -> Option<Duration> {
        match self.refusal.as_deref() {
            Some(Refusal::RetryAfter(after)) => Some(*after),
            _ => None,
        }
    }

    /// The scopes an [`insufficient_scope`](RpcError::insufficient_scope) error names; empty
    /// for every other error.
    pub fn required_scopes(&self) -> impl Iterator<Item = &str> {
        let scopes = match self.refusal.as_deref() {
            Some(Refusal::InsufficientScope(scopes)) => Some(scopes),
            _ => None,
        };
        scopes.into_iter().flat_map(Scopes::names)
    }

    /// The error asking for input returns when the answer is not there yet.
    pub(crate) fn input_required() -> RpcError {
        RpcError {
            object: ErrorObject::new(ErrorCode::INTERNAL_ERROR, INPUT_REQUIRED_MESSAGE),
            input_required: true,
            refusal: None,
        }
    }

    pub(crate) fn into_object(self) -> ErrorObject {
        self.object
    }
}

impl From<ErrorObject> for RpcError {
    fn from(object: ErrorObject) -> RpcError {
        RpcError { object, input_required: false, refusal: None }
    }
}

/// The code of [`RpcError::rate_limited`]: the first of JSON-RPC's implementation-defined
/// server errors.
const SERVER_ERROR: i64 = -32000;

/// The code of [`RpcError::insufficient_scope`]: a server error beside the rate limit's.
const FORBIDDEN: i64 = -32003;

/// The code of [`RpcError::timed_out`].
const REQUEST_TIMED_OUT: i64 = -32001;

/// Whole seconds to wait, rounded up, and at least one: `Retry-After` counts whole seconds,
/// and zero would invite an immediate retry that fails again.
pub fn retry_after_seconds(retry_after: Duration) -> u64 {
    let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
    seconds.max(1)
}
