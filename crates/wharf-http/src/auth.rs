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

    /// With DPoP-bound tokens taken (RFC 9449), the proof algorithms accepted, space-separated:
    /// refusals then carry a `DPoP` challenge naming them (`algs`). None by default.
    fn dpop_algorithms(&self) -> Option<&str> {
        None
    }

    /// False when only DPoP-bound tokens are taken: refusals then carry no `Bearer` challenge.
    fn accepts_bearer(&self) -> bool {
        true
    }

    /// A JSON document anyone may read at `path` without credentials (the protected resource
    /// metadata), if `path` is one.
    fn public_document(&self, path: &str) -> Option<Bytes> {
        let _ = path;
        None
    }

    /// Until when the principal just given for `request` may be given again, without asking, to
    /// the later requests of the same connection (under [`serve`](crate::serve)) whose only
    /// credential is the same `Authorization` header, byte for byte, with no `DPoP` header and
    /// no query: a kept-alive client then costs no lookup per request. `None`, the default:
    /// every request is authenticated. An authenticator whose answer depends on more of the
    /// request than that header, or that may withdraw a principal before the instant it
    /// returns, keeps the default.
    fn reusable_until(&self, request: &http::request::Parts, principal: &Principal) -> Option<std::time::Instant> {
        let _ = (request, principal);
        None
    }
}

/// Why a request has no principal, which decides its status and challenge (RFC 6750 §3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthRefusal {
    kind: RefusalKind,
    description: String,
    /// True when it concerns a request made with the `DPoP` scheme: its error goes in the
    /// `DPoP` challenge.
    dpop: bool,
    /// The server nonce DPoP proofs are to carry, sent in `DPoP-Nonce`.
    nonce: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RefusalKind {
    Missing,
    InvalidRequest,
    InvalidToken,
    InsufficientScope,
    InvalidDpopProof,
    UseDpopNonce,
}

impl AuthRefusal {
    /// No credentials: 401 with a challenge that names no error.
    pub fn missing() -> AuthRefusal {
        AuthRefusal { kind: RefusalKind::Missing, description: String::new(), dpop: false, nonce: None }
    }

    /// A malformed request (an `Authorization` header that is not one bearer token, a token
    /// in the query string): 400 `invalid_request`.
    pub fn invalid_request(description: impl Into<String>) -> AuthRefusal {
        AuthRefusal { kind: RefusalKind::InvalidRequest, description: description.into(), dpop: false, nonce: None }
    }

    /// A token that is expired, revoked, malformed, or for another resource: 401
    /// `invalid_token`. The description must not repeat the token.
    pub fn invalid_token(description: impl Into<String>) -> AuthRefusal {
        AuthRefusal { kind: RefusalKind::InvalidToken, description: description.into(), dpop: false, nonce: None }
    }

    /// A valid token without the scopes every request needs: 403 `insufficient_scope`.
    pub fn insufficient_scope(description: impl Into<String>) -> AuthRefusal {
        AuthRefusal { kind: RefusalKind::InsufficientScope, description: description.into(), dpop: false, nonce: None }
    }

    /// A DPoP proof that is missing, malformed, or does not fit the request or the token
    /// (RFC 9449 §7.1): 401 `invalid_dpop_proof`, in the `DPoP` challenge.
    pub fn invalid_dpop_proof(description: impl Into<String>) -> AuthRefusal {
        AuthRefusal { kind: RefusalKind::InvalidDpopProof, description: description.into(), dpop: true, nonce: None }
    }

    /// A DPoP proof without the server nonce it must carry, or with one no longer taken (RFC
    /// 9449 §8): 401 `use_dpop_nonce` in the `DPoP` challenge, with `nonce` in the `DPoP-Nonce`
    /// header for the client to retry with.
    pub fn use_dpop_nonce(nonce: impl Into<String>) -> AuthRefusal {
        AuthRefusal {
            kind: RefusalKind::UseDpopNonce,
            description: "the DPoP proof must carry the server's nonce (DPoP-Nonce)".to_owned(),
            dpop: true,
            nonce: Some(nonce.into()),
        }
    }

    /// The nonce a `DPoP-Nonce` header gives, for [`AuthRefusal::use_dpop_nonce`].
    pub fn dpop_nonce(&self) -> Option<&str> {
        self.nonce.as_deref()
    }

    /// The same refusal, of a request made with the `DPoP` scheme: its error goes in the
    /// `DPoP` challenge rather than the `Bearer` one.
    pub fn for_dpop(mut self) -> AuthRefusal {
        self.dpop = true;
        self
    }

    /// The status this refusal is answered with.
    pub fn status(&self) -> StatusCode {
        match self.kind {
            RefusalKind::Missing
            | RefusalKind::InvalidToken
            | RefusalKind::InvalidDpopProof
            | RefusalKind::UseDpopNonce => StatusCode::UNAUTHORIZED,
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
            RefusalKind::InvalidDpopProof => Some("invalid_dpop_proof"),
            RefusalKind::UseDpopNonce => Some("use_dpop_nonce"),
        }
    }

    /// The `WWW-Authenticate` values: a `Bearer` challenge, and with DPoP a `DPoP` one before
    /// it naming the algorithms (RFC 9449 §7.1), the `Bearer` one left out when only DPoP is
    /// taken. This refusal's error goes in the challenge of the scheme it concerns; each names
    /// the scopes and metadata URL `authenticator` gives.
    pub(crate) fn challenges(&self, authenticator: &dyn Authenticator) -> Vec<HeaderValue> {
        let scopes: Vec<&str> = authenticator.challenge_scopes().iter().map(String::as_str).collect();
        let metadata = authenticator.resource_metadata_url();
        let Some(algorithms) = authenticator.dpop_algorithms() else {
            return vec![challenge("Bearer", self.error_code(), &self.description, &scopes, metadata, None)];
        };
        let bearer = authenticator.accepts_bearer();
        let in_dpop = self.dpop || !bearer;
        let error = |here: bool| if here { self.error_code() } else { None };
        let mut values =
            vec![challenge("DPoP", error(in_dpop), &self.description, &scopes, metadata, Some(algorithms))];
        if bearer {
            values.push(challenge("Bearer", error(!in_dpop), &self.description, &scopes, metadata, None));
        }
        values
    }

    /// What the JSON-RPC error of the response says.
    pub(crate) fn message(&self) -> String {
        match self.error_code() {
            None => "Unauthorized: this endpoint needs an access token".to_owned(),
            Some(code) if self.description.is_empty() => format!("Unauthorized: {code}"),
            Some(code) => format!("Unauthorized: {code}: {}", self.description),
        }
    }
}

/// A challenge of `scheme`, `Bearer` (RFC 6750 §3) or `DPoP` (RFC 9449 §7.1): the error and its
/// description when there is one, the scopes, the metadata URL (RFC 9728 §5.1), and for DPoP
/// the algorithms. What is quoted has `"` and `\` escaped and anything but visible ASCII and
/// spaces dropped, so the header is always valid.
pub(crate) fn challenge(
    scheme: &'static str,
    error: Option<&str>,
    description: &str,
    scopes: &[&str],
    resource_metadata: Option<&str>,
    algorithms: Option<&str>,
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
    if let Some(algorithms) = algorithms {
        parameters.push(format!("algs=\"{}\"", quoted(algorithms)));
    }
    let value = if parameters.is_empty() { scheme.to_owned() } else { format!("{scheme} {}", parameters.join(", ")) };
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(scheme))
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
            challenge("Bearer", None, "", &["files:read"], url, None),
            "Bearer scope=\"files:read\", resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\""
        );
        assert_eq!(
            challenge("Bearer", Some("invalid_token"), "the token \"expired\"\n", &[], None, None),
            "Bearer error=\"invalid_token\", error_description=\"the token \\\"expired\\\"\""
        );
        assert_eq!(challenge("Bearer", None, "", &["bad scope"], None, None), "Bearer");
        assert_eq!(
            challenge("DPoP", Some("invalid_dpop_proof"), "bad htu", &[], None, Some("ES256 EdDSA")),
            "DPoP error=\"invalid_dpop_proof\", error_description=\"bad htu\", algs=\"ES256 EdDSA\""
        );
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
