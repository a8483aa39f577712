//! [`SessionEnd`]: what middleware hears when a 2025 session ends, and why it ended.

use std::time::Duration;

use wharf_protocol::ProtocolVersion;

use crate::extensions::Extensions;
use crate::session::{Session, Transport};

/// Why a 2025 session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SessionEndReason {
    /// The client closed it: stdin or its stream ended, or it sent an HTTP `DELETE`.
    Closed,
    /// It was idle for longer than the HTTP transport's session idle timeout.
    Expired,
    /// The HTTP transport dropped it, the one idle longest, to make room for a new session.
    Evicted,
    /// Its connection failed: reading the client's messages gave an error.
    Failed,
    /// The server stopped while it was open.
    ServerStopped,
}

/// A 2025 session that ended, as [`Layer::session_ended`](crate::Layer::session_ended) sees
/// it. Only sessions that `initialize` opened end; 2026-07-28 stateless requests have none.
#[derive(Debug)]
pub struct SessionEnd<'a> {
    session: &'a Session,
    version: ProtocolVersion,
    reason: SessionEndReason,
    duration: Duration,
}

impl<'a> SessionEnd<'a> {
    pub(crate) fn new(
        session: &'a Session,
        version: ProtocolVersion,
        reason: SessionEndReason,
        duration: Duration,
    ) -> SessionEnd<'a> {
        SessionEnd { session, version, reason, duration }
    }

    /// The session's id: over HTTP its `Mcp-Session-Id`, over stdio and other streams the
    /// connection's id (as [`McpRequest::session_id`](crate::McpRequest::session_id) gives it).
    pub fn id(&self) -> &'a str {
        self.session.id()
    }

    /// What carried the session.
    pub fn transport(&self) -> Transport {
        self.session.transport()
    }

    /// The revision `initialize` negotiated.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// Why it ended.
    pub fn reason(&self) -> SessionEndReason {
        self.reason
    }

    /// How long it lasted, from `initialize` to its end (for an expired session, to the
    /// moment it expired).
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// The per-session values its handlers kept.
    pub fn extensions(&self) -> &'a Extensions {
        self.session.extensions()
    }
}
