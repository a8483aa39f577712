//! What can go wrong talking to a server: one opaque [`ClientError`] that says what kind of
//! failure it is ([`ErrorKind`]) and carries the server's JSON-RPC error or HTTP status when
//! there is one.

use std::fmt;

use wharf_protocol::{ErrorCode, ErrorObject};

/// The kinds of failure a caller may want to tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server could not be reached or started.
    Connect,
    /// The server answered with a JSON-RPC error ([`ClientError::rpc`] has it).
    Rpc,
    /// The server wants credentials, or better ones (HTTP 401, or 403 `insufficient_scope`).
    AuthRequired,
    /// The server answered with an HTTP status that is not part of the protocol.
    Http,
    /// The server sent something that is not MCP: an unparsable line, a body of the wrong type,
    /// a result that does not match the request.
    InvalidResponse,
    /// No answer came within the time allowed.
    Timeout,
    /// The connection ended (the process exited, the session was closed).
    Closed,
}

/// A failed request or connection.
#[derive(Debug, Clone)]
pub struct ClientError {
    kind: ErrorKind,
    message: String,
    rpc: Option<ErrorObject>,
    http_status: Option<u16>,
    www_authenticate: Option<String>,
}

impl ClientError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> ClientError {
        ClientError { kind, message: message.into(), rpc: None, http_status: None, www_authenticate: None }
    }

    pub(crate) fn rpc_error(error: ErrorObject) -> ClientError {
        let message = format!("the server answered {}: {}", error.code.0, error.message);
        ClientError { rpc: Some(error), ..ClientError::new(ErrorKind::Rpc, message) }
    }

    pub(crate) fn connect(message: impl Into<String>) -> ClientError {
        ClientError::new(ErrorKind::Connect, message)
    }

    pub(crate) fn invalid(message: impl Into<String>) -> ClientError {
        ClientError::new(ErrorKind::InvalidResponse, message)
    }

    pub(crate) fn closed(message: impl Into<String>) -> ClientError {
        ClientError::new(ErrorKind::Closed, message)
    }

    #[cfg(feature = "http")]
    pub(crate) fn with_http_status(mut self, status: u16) -> ClientError {
        self.http_status = Some(status);
        self
    }

    #[cfg(feature = "http")]
    pub(crate) fn with_www_authenticate(mut self, challenge: Option<String>) -> ClientError {
        self.www_authenticate = challenge;
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The JSON-RPC error the server answered with, if it answered with one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        self.rpc.as_ref()
    }

    /// The JSON-RPC error code, if the server answered with an error.
    pub fn code(&self) -> Option<ErrorCode> {
        self.rpc.as_ref().map(|error| error.code)
    }

    /// The HTTP status of the answer that failed, over HTTP.
    pub fn http_status(&self) -> Option<u16> {
        self.http_status
    }

    /// The `WWW-Authenticate` challenge of a 401 or 403 answer.
    pub fn www_authenticate(&self) -> Option<&str> {
        self.www_authenticate.as_deref()
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ClientError {}
