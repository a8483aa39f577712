//! [`IntrospectionVerifier`]: opaque access tokens, verified by asking their issuer (RFC 7662
//! token introspection) with the resource server's own client credentials. What the issuer
//! answers is checked like a JWT's claims (active, issuer, audience bound to this resource,
//! time) before it becomes a principal.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use serde_json::Value;
use wharf_http::AuthRefusal;
use wharf_server::Principal;

use crate::claims::{self, Expected};
use crate::discovery::discover;
use crate::fetch::Fetcher;
use crate::resource::ResourceUrl;
use crate::verifier::{CheckFuture, TokenVerifier, VerifyFuture};

/// The resource server's client credentials at the issuer, never shown in logs or `Debug`.
#[derive(Clone)]
pub(crate) struct ClientCredentials {
    pub(crate) id: String,
    pub(crate) secret: String,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials").field("id", &self.id).finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// `client_secret_basic` (RFC 6749 §2.3.1): both parts form-encoded, then base64.
    fn basic(&self) -> String {
        let pair = format!("{}:{}", form_encode(&self.id), form_encode(&self.secret));
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
    }
}

/// Verifies opaque tokens at the issuer's introspection endpoint.
#[derive(Debug)]
pub struct IntrospectionVerifier {
    issuer: String,
    audiences: Vec<ResourceUrl>,
    leeway: Duration,
    credentials: ClientCredentials,
    fetcher: Fetcher,
    /// Looked for again at most once per interval after a failure.
    retry_interval: Duration,
    endpoint: Mutex<Endpoint>,
}

#[derive(Debug)]
enum Endpoint {
    Known(String),
    Unknown { failed_at: Option<Instant> },
}

impl IntrospectionVerifier {
    pub(crate) fn new(
        issuer: String,
        audiences: Vec<ResourceUrl>,
        leeway: Duration,
        credentials: ClientCredentials,
        endpoint: Option<String>,
        fetcher: Fetcher,
        retry_interval: Duration,
    ) -> IntrospectionVerifier {
        let endpoint = endpoint.map_or(Endpoint::Unknown { failed_at: None }, Endpoint::Known);
        IntrospectionVerifier {
            issuer,
            audiences,
            leeway,
            credentials,
            fetcher,
            retry_interval,
            endpoint: Mutex::new(endpoint),
        }
    }

    /// The introspection endpoint: configured, or found in the issuer's metadata.
    async fn endpoint(&self) -> Result<String, String> {
        match &*self.endpoint.lock().unwrap_or_else(PoisonError::into_inner) {
            Endpoint::Known(url) => return Ok(url.clone()),
            Endpoint::Unknown { failed_at: Some(at) } if at.elapsed() < self.retry_interval => {
                return Err(format!("the metadata of {} could not be had; trying again shortly", self.issuer));
            }
            Endpoint::Unknown { .. } => {}
        }
        let found = discover(&self.fetcher, &self.issuer).await.and_then(|metadata| {
            metadata
                .introspection_endpoint
                .ok_or_else(|| format!("the issuer {} publishes no introspection_endpoint", self.issuer))
        });
        let mut endpoint = self.endpoint.lock().unwrap_or_else(PoisonError::into_inner);
        *endpoint = match &found {
            Ok(url) => Endpoint::Known(url.clone()),
            Err(_) => Endpoint::Unknown { failed_at: Some(Instant::now()) },
        };
        found
    }

    async fn principal(&self, token: &str) -> Result<Principal, AuthRefusal> {
        let unavailable = |problem: String| {
            tracing::warn!(issuer = %self.issuer, %problem, "a token could not be introspected");
            AuthRefusal::invalid_token("the issuer could not be asked about the token")
        };
        let endpoint = self.endpoint().await.map_err(unavailable)?;
        let form = format!("token={}&token_type_hint=access_token", form_encode(token));
        let answer = self.fetcher.post_form(&endpoint, &self.credentials.basic(), form).await.map_err(unavailable)?;
        let Value::Object(mut claims) = answer else { unreachable!("post_form answers JSON objects") };
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(AuthRefusal::invalid_token("the token is not active"));
        }
        // A DPoP-bound token is introspected as `token_type` DPoP (RFC 9449 §6.2); whether it
        // may be used so is the binding check's to say.
        let token_type = claims.get("token_type").and_then(Value::as_str).map(str::to_ascii_lowercase);
        if !matches!(
            token_type.as_deref(),
            None | Some("bearer" | "dpop" | "access_token" | "urn:ietf:params:oauth:token-type:access_token")
        ) {
            return Err(AuthRefusal::invalid_token("the token is not an access token"));
        }
        // The answer comes from the issuer itself, which may leave out what it implies: its
        // own name, and, for a client's own token (client credentials), the client as subject.
        claims.entry("iss").or_insert_with(|| Value::String(self.issuer.clone()));
        if !claims.contains_key("sub")
            && let Some(client) = claims.get("client_id").cloned()
        {
            claims.insert("sub".to_owned(), client);
        }
        let expected =
            Expected { issuer: &self.issuer, audiences: &self.audiences, leeway: self.leeway, expiry_required: false };
        claims::principal(claims, &expected, SystemTime::now()).map_err(AuthRefusal::invalid_token)
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.principal(token))
    }

    fn check(&self) -> CheckFuture<'_> {
        Box::pin(async { self.endpoint().await.map(drop) })
    }
}

/// `text` in `application/x-www-form-urlencoded`: unreserved bytes kept, every other one
/// percent-encoded.
fn form_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_tokens_are_form_encoded() {
        assert_eq!(form_encode("a-b.c_d~e09"), "a-b.c_d~e09");
        assert_eq!(form_encode("a b+c/d=é"), "a%20b%2Bc%2Fd%3D%C3%A9");
        let credentials = ClientCredentials { id: "rs:1".into(), secret: "s p".into() };
        let expected = base64::engine::general_purpose::STANDARD.encode("rs%3A1:s%20p");
        assert_eq!(credentials.basic(), format!("Basic {expected}"));
        assert!(!format!("{credentials:?}").contains("s p"), "the secret is not in Debug");
    }
}
