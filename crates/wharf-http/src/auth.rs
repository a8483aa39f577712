//! The hook an authentication layer fills for the HTTP transport ([`Authenticator`]): the
//! principal behind each request or why it has none, the bearer challenges of RFC 6750 that
//! refusals carry, and the documents served to anyone (the protected resource metadata).

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use http::StatusCode;
use http::header::HeaderValue;

use wharf_server::contract::Principal;
use wharf_server::contract::is_scope_token;

/// What [`Authenticator::authenticate`] returns.
pub type AuthFuture<'a> = Pin<Box<dyn Future<Output = Result<Principal, AuthRefusal>> + Send + 'a>>;

/// Authenticates every request an HTTP endpoint receives, before the transport reads it:
/// POSTed requests, notifications and answers, GET streams and DELETE alike (the `wharf-auth`
/// crate implements it for OAuth 2.1 bearer tokens). Installed with
/// [`HttpOptions::authenticate`](crate::HttpOptions::authenticate).
pub trait Authenticator: Send + Sync + 'static {
    /// The principal behind the request, from its head, or why there is none.
    fn authenticate<'a>(&'a self, request: &'a http::request::Parts) -> AuthFuture<'a>;

    /// The URL of the protected resource metadata, which every challenge names
    /// (`resource_metadata`, RFC 9728 §5.1).
    fn resource_metadata_url(&self) -> Option<&str> {
        None
    }

    /// The scopes a challenge for missing credentials names: what every request needs.
    fn challenge_scopes(&self) -> &[String] {
        &[]
    }

    /// A JSON document anyone may read at `path` without credentials (the protected resource
    /// metadata), if `path` is one.
    fn public_document(&self, path: &str) -> Option<Bytes> {
        let _ = path;
        None
    }
}

/// Why a request has no principal, which decides its status and challenge (RFC 6750 §3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthRefusal {
    kind: RefusalKind,
    description: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RefusalKind {
    Missing,
    InvalidRequest,
    InvalidToken,
    InsufficientScope,
}

impl AuthRefusal {
    /// No credentials: 401 with a challenge that names no error.
    pub fn missing() -> AuthRefusal {
        AuthRefusal { kind: RefusalKind::Missing, description: String::new() }
    }

    /// A malformed request (an `Authorization` header that is not one bearer token, a token
    /// in the query string): 400 `invalid_request`.
    pub fn invalid_request(description: impl Into<String>) -> AuthRefusal {
        AuthRefusal { kind: RefusalKind::InvalidRequest, description: description.into() }
    }

    /// A token that is expired, revoked, malformed, or for another resource: 401
    /// `invalid_token`. The description must not repeat the token.
    pub fn invalid_token(description: impl Into<String>) -> AuthRefusal {
        AuthRefusal { kind: RefusalKind::InvalidToken, description: description.into() }
    }

    /// A valid token without the scopes every request needs: 403 `insufficient_scope`.
    pub fn insufficient_scope(description: impl Into<String>) -> AuthRefusal {
        AuthRefusal { kind: RefusalKind::InsufficientScope, description: description.into() }
    }

    /// The status this refusal is answered with.
    pub fn status(&self) -> StatusCode {
        match self.kind {
            RefusalKind::Missing | RefusalKind::InvalidToken => StatusCode::UNAUTHORIZED,
            RefusalKind::InvalidRequest => StatusCode::BAD_REQUEST,
            RefusalKind::InsufficientScope => StatusCode::FORBIDDEN,
        }
    }

    /// The `error` code of its challenge; none for missing credentials.
    pub fn error_code(&self) -> Option<&'static str> {
        match self.kind {
            RefusalKind::Missing => None,
            RefusalKind::InvalidRequest => Some("invalid_request"),
            RefusalKind::InvalidToken => Some("invalid_token"),
            RefusalKind::InsufficientScope => Some("insufficient_scope"),
        }
    }

    /// The `WWW-Authenticate` value: this refusal's error, with the scopes and metadata URL
    /// `authenticator` names.
    pub(crate) fn challenge(&self, authenticator: &dyn Authenticator) -> HeaderValue {
        let scopes: Vec<&str> = authenticator.challenge_scopes().iter().map(String::as_str).collect();
        challenge(self.error_code(), &self.description, &scopes, authenticator.resource_metadata_url())
    }

    /// What the JSON-RPC error of the response says.
    pub(crate) fn message(&self) -> String {
        match self.error_code() {
            None => "Unauthorized: this endpoint needs a bearer token".to_owned(),
            Some(code) if self.description.is_empty() => format!("Unauthorized: {code}"),
            Some(code) => format!("Unauthorized: {code}: {}", self.description),
        }
    }
}

/// A `Bearer` challenge (RFC 6750 §3): the error and its description when there is one, the
/// scopes, and the metadata URL (RFC 9728 §5.1). What is quoted has `"` and `\` escaped and
/// anything but visible ASCII and spaces dropped, so the header is always valid.
pub(crate) fn challenge(
    error: Option<&str>,
    description: &str,
    scopes: &[&str],
    resource_metadata: Option<&str>,
) -> HeaderValue {
    let mut parameters = Vec::new();
    if let Some(error) = error {
        parameters.push(format!("error=\"{error}\""));
        if !description.is_empty() {
            parameters.push(format!("error_description=\"{}\"", quoted(description)));
        }
    }
    let scopes: Vec<&str> = scopes.iter().copied().filter(|scope| is_scope_token(scope)).collect();
    if !scopes.is_empty() {
        parameters.push(format!("scope=\"{}\"", scopes.join(" ")));
    }
    if let Some(url) = resource_metadata {
        parameters.push(format!("resource_metadata=\"{}\"", quoted(url)));
    }
    let value = if parameters.is_empty() { "Bearer".to_owned() } else { format!("Bearer {}", parameters.join(", ")) };
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

/// The text of a quoted-string: visible ASCII and spaces, with `"` and `\` escaped.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars().filter(|character| matches!(character, ' '..='~')) {
        if matches!(character, '"' | '\\') {
            out.push('\\');
        }
        out.push(character);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_follow_rfc_6750() {
        let url = Some("https://mcp.example/.well-known/oauth-protected-resource/mcp");
        assert_eq!(
            challenge(None, "", &["files:read"], url),
            "Bearer scope=\"files:read\", resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\""
        );
        assert_eq!(
            challenge(Some("invalid_token"), "the token \"expired\"\n", &[], None),
            "Bearer error=\"invalid_token\", error_description=\"the token \\\"expired\\\"\""
        );
        assert_eq!(challenge(None, "", &["bad scope"], None), "Bearer");
    }

    #[test]
    fn each_refusal_has_its_status_and_code() {
        assert_eq!(
            (AuthRefusal::missing().status(), AuthRefusal::missing().error_code()),
            (StatusCode::UNAUTHORIZED, None)
        );
        let malformed = AuthRefusal::invalid_request("two tokens");
        assert_eq!((malformed.status(), malformed.error_code()), (StatusCode::BAD_REQUEST, Some("invalid_request")));
        let bad = AuthRefusal::invalid_token("expired");
        assert_eq!((bad.status(), bad.error_code()), (StatusCode::UNAUTHORIZED, Some("invalid_token")));
        let scope = AuthRefusal::insufficient_scope("needs mcp");
        assert_eq!((scope.status(), scope.error_code()), (StatusCode::FORBIDDEN, Some("insufficient_scope")));
    }
}
