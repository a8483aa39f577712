//! [`GatewayError`]: a gateway that cannot be built, and what kind of thing is wrong
//! ([`GatewayErrorKind`]).

use std::fmt;

/// What kind of thing kept a gateway from being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GatewayErrorKind {
    /// A mount is misconfigured: an empty or duplicate name, a namespace that would make
    /// names no client accepts.
    Mount,
    /// An upstream could not be reached or did not answer its listings.
    Upstream,
    /// Two mounts offer the same name once namespaced.
    Collision,
    /// The gateway's own server refused what the upstreams offer (an invalid schema, say).
    Server,
}

/// Why a gateway could not be built: its kind, and a sentence naming the mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayError {
    kind: GatewayErrorKind,
    message: String,
}

impl GatewayError {
    pub(crate) fn new(kind: GatewayErrorKind, message: impl Into<String>) -> GatewayError {
        GatewayError { kind, message: message.into() }
    }

    /// What kind of thing is wrong.
    pub fn kind(&self) -> GatewayErrorKind {
        self.kind
    }
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GatewayError {}
