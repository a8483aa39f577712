//! [`OpenApiError`]: a document that cannot be made into tools, and what kind of thing is wrong
//! ([`OpenApiErrorKind`]).

use std::fmt;

/// What kind of thing kept a document from being made into tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpenApiErrorKind {
    /// It is not an OpenAPI 3.0 or 3.1 document: not JSON, no `openapi` member, another version.
    NotOpenApi,
    /// A `$ref` names something the document does not have, or outside the document.
    Reference,
    /// The base URL is not `http` or `https` with a host, or carries a query, a fragment or
    /// user information.
    BaseUrl,
    /// A credential's value could break the request it goes into.
    Credential,
    /// The document's URL could not be read.
    Unreachable,
}

/// Why a document could not be made into tools: its kind, and a sentence naming where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenApiError {
    kind: OpenApiErrorKind,
    message: String,
}

impl OpenApiError {
    pub(crate) fn new(kind: OpenApiErrorKind, message: impl Into<String>) -> OpenApiError {
        OpenApiError { kind, message: message.into() }
    }

    /// What kind of thing is wrong.
    pub fn kind(&self) -> OpenApiErrorKind {
        self.kind
    }
}

impl fmt::Display for OpenApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OpenApiError {}
