//! [`ConfigError`]: a resource server that cannot be built as configured, and what kind of
//! thing is wrong ([`ConfigErrorKind`]).

use std::fmt;

/// What part of a resource server's configuration was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The resource URL (or an extra audience) is not one a client can call.
    Resource,
    /// No issuer, or one that is neither `https` nor on a loopback address.
    Issuer,
    /// The introspection endpoint is neither `https` nor on a loopback address.
    Introspection,
    /// The system's root certificates could not be loaded, so the issuer cannot be reached.
    Tls,
    /// [`ResourceServer::check_issuer`](crate::ResourceServer::check_issuer): the issuer's
    /// metadata, keys or introspection endpoint could not be had.
    IssuerUnreachable,
}

/// Why a resource server's configuration was refused: its kind, and one sentence naming what
/// is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    kind: ConfigErrorKind,
    message: String,
}

impl ConfigError {
    pub(crate) fn new(kind: ConfigErrorKind, message: impl Into<String>) -> ConfigError {
        ConfigError { kind, message: message.into() }
    }

    /// What part of the configuration was refused.
    pub fn kind(&self) -> ConfigErrorKind {
        self.kind
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}
