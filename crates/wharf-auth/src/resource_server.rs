//! [`ResourceServer`]: the OAuth 2.1 resource server an HTTP endpoint runs in front of every
//! request ([`HttpOptions::authenticate`](wharf_http::HttpOptions::authenticate)), and its
//! builder.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use wharf_http::{AuthFuture, AuthRefusal, Authenticator};
use wharf_server::Principal;

use crate::bearer::{self, Presented, Scheme};
use crate::cache::VerifiedTokens;
use crate::dpop::{self, Expected, MemoryReplayCache, Nonces, ProofReplayCache, Refused};
use crate::error::{ConfigError, ConfigErrorKind};
use crate::fetch::{Fetcher, is_loopback_http};
use crate::introspection::{ClientCredentials, IntrospectionVerifier};
use crate::resource::{ResourceUrl, metadata_document};
use crate::verifier::{JwtVerifier, TokenVerifier};

/// Authenticates each request by its bearer token, and publishes the protected resource
/// metadata that tells clients where to get one.
///
/// ```no_run
/// # fn build() -> Result<(), wharf_auth::ConfigError> {
/// let auth = wharf_auth::ResourceServer::builder("https://mcp.example.com/mcp")
///     .issuer("https://id.example.com/realms/main")
///     .required_scopes(["mcp"])
///     .build()?;
/// let options = wharf_http::HttpOptions::default()
///     .allowed_hosts(["mcp.example.com"])
///     .authenticate(auth);
/// # let _ = options; Ok(()) }
/// ```
pub struct ResourceServer {
    resource: ResourceUrl,
    metadata_url: String,
    metadata_paths: Vec<String>,
    metadata: Bytes,
    required_scopes: Vec<String>,
    exact_scopes: bool,
    verifier: Box<dyn TokenVerifier>,
    verified: VerifiedTokens,
    dpop: Option<DpopPolicy>,
}

/// Whether DPoP-bound tokens (RFC 9449) are taken beside bearer tokens, or instead of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DpopMode {
    /// Bearer tokens, and DPoP-bound tokens with their proofs.
    Allowed,
    /// DPoP-bound tokens only: a bearer token is refused.
    Required,
}

/// How a resource server checks DPoP proofs.
struct DpopPolicy {
    mode: DpopMode,
    /// The proof algorithms accepted, space-separated, as challenges name them.
    algorithms: String,
    window: Duration,
    replay: Arc<dyn ProofReplayCache>,
    nonces: Option<Nonces>,
}

/// The proof algorithms accepted, as metadata and challenges name them.
const DPOP_ALGORITHMS: [&str; 7] = ["ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "EdDSA"];

impl ResourceServer {
    /// Checks the DPoP side of a request presenting `token` by `scheme`, for `principal` (the
    /// token's): a token bound to a key (`cnf.jkt`) comes with the `DPoP` scheme and a proof by
    /// that key for this request, used once; an unbound one, as a bearer token where bearer
    /// tokens are taken.
    async fn check_binding(
        &self,
        request: &http::request::Parts,
        scheme: Scheme,
        token: &str,
        principal: &Principal,
    ) -> Result<(), AuthRefusal> {
        let bound_to = principal
            .claims()
            .and_then(|claims| claims.get("cnf"))
            .and_then(|cnf| cnf.get("jkt"))
            .and_then(serde_json::Value::as_str);
        let Some(policy) = &self.dpop else {
            return match bound_to {
                None => Ok(()),
                Some(_) => Err(AuthRefusal::invalid_token(
                    "the token is bound to a key (DPoP), which this server does not take",
                )),
            };
        };
        let bound_to = match (scheme, bound_to) {
            (Scheme::Bearer, Some(_)) => {
                return Err(AuthRefusal::invalid_token("a DPoP-bound token was presented as a bearer token"));
            }
            (Scheme::Bearer, None) if policy.mode == DpopMode::Required => {
                return Err(AuthRefusal::invalid_token("this server takes DPoP-bound tokens only"));
            }
            (Scheme::Bearer, None) => return Ok(()),
            (Scheme::Dpop, None) => {
                return Err(AuthRefusal::invalid_token("the token is not bound to a key (no cnf.jkt)").for_dpop());
            }
            (Scheme::Dpop, Some(bound_to)) => bound_to,
        };
        let proof = dpop::proof_header(&request.headers).map_err(AuthRefusal::invalid_dpop_proof)?;
        let url = format!("{}{}", self.resource.origin(), request.uri.path());
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
        let nonces = policy.nonces.as_ref();
        let expected = Expected {
            method: request.method.as_str(),
            url: &url,
            access_token: token,
            now,
            window: policy.window,
            nonces,
        };
        let proof = dpop::verify(proof, &expected).map_err(|refused| match (refused, nonces) {
            (Refused::UseNonce, Some(nonces)) => AuthRefusal::use_dpop_nonce(nonces.current(now)),
            (Refused::UseNonce, None) => AuthRefusal::invalid_dpop_proof("the DPoP proof's nonce is not taken"),
            (Refused::Invalid(why), _) => AuthRefusal::invalid_dpop_proof(why),
        })?;
        if proof.thumbprint != bound_to {
            return Err(AuthRefusal::invalid_dpop_proof(
                "the DPoP proof is signed by another key than the token's (cnf.jkt)",
            ));
        }
        // Kept for as long as its `iat` could be in the window, either way.
        let key = format!("{}:{}", proof.thumbprint, proof.jti);
        match policy.replay.first_use(&key, policy.window * 2).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(AuthRefusal::invalid_dpop_proof("the DPoP proof was used before (jti)")),
            Err(why) => {
                tracing::warn!(%why, "the DPoP replay cache cannot say whether a proof is new; refusing it");
                Err(AuthRefusal::invalid_dpop_proof("the DPoP proof cannot be checked for replay now"))
            }
        }
    }
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer").field("resource", &self.resource).finish_non_exhaustive()
    }
}

/// How a [`ResourceServer`] is configured.
#[derive(Debug)]
pub struct ResourceServerBuilder {
    resource: String,
    issuer: Option<String>,
    audiences: Vec<String>,
    required_scopes: Vec<String>,
    exact_scopes: bool,
    scopes_supported: Option<Vec<String>>,
    resource_name: Option<String>,
    accept_plain_jwt: bool,
    leeway: Duration,
    key_refetch_interval: Duration,
    cache_capacity: usize,
    cache_max_age: Duration,
    introspection: Option<ClientCredentials>,
    introspection_endpoint: Option<String>,
    verifier: Option<VerifierSlot>,
    dpop: Option<DpopMode>,
    dpop_window: Duration,
    dpop_replay: Option<ReplaySlot>,
    dpop_nonce_secret: Option<NonceSecret>,
}

/// The secret server nonces are made with; never shown.
struct NonceSecret([u8; 32]);

impl std::fmt::Debug for NonceSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NonceSecret(..)")
    }
}

/// A replay cache of the user's own.
struct ReplaySlot(Arc<dyn ProofReplayCache>);

impl std::fmt::Debug for ReplaySlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProofReplayCache")
    }
}

/// A verifier of the user's own.
struct VerifierSlot(Box<dyn TokenVerifier>);

impl std::fmt::Debug for VerifierSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenVerifier")
    }
}

impl ResourceServer {
    /// A resource server for the MCP endpoint clients call at `resource` (its URL, such as
    /// `https://mcp.example.com/mcp`).
    pub fn builder(resource: impl Into<String>) -> ResourceServerBuilder {
        ResourceServerBuilder {
            resource: resource.into(),
            issuer: None,
            audiences: Vec::new(),
            required_scopes: Vec::new(),
            exact_scopes: false,
            scopes_supported: None,
            resource_name: None,
            accept_plain_jwt: true,
            leeway: Duration::from_secs(30),
            key_refetch_interval: Duration::from_secs(30),
            cache_capacity: 10_000,
            cache_max_age: Duration::from_secs(300),
            introspection: None,
            introspection_endpoint: None,
            verifier: None,
            dpop: None,
            dpop_window: Duration::from_secs(300),
            dpop_replay: None,
            dpop_nonce_secret: None,
        }
    }

    /// Fetches now what verifying tokens needs from the issuer (its metadata and keys, or its
    /// introspection endpoint) and keeps it: a server calls it before it starts, to refuse to
    /// start with a mistyped or unreachable issuer instead of refusing every token later. The
    /// error names each URL tried and why it did not do (unreachable, not JSON, another issuer).
    pub async fn check_issuer(&self) -> Result<(), ConfigError> {
        self.verifier.check().await.map_err(|why| ConfigError::new(ConfigErrorKind::IssuerUnreachable, why))
    }

    /// The resource URL.
    pub fn resource(&self) -> &ResourceUrl {
        &self.resource
    }

    async fn principal(&self, request: &http::request::Parts) -> Result<Principal, AuthRefusal> {
        let presented = bearer::presented(&request.headers, request.uri.query(), self.dpop.is_some())?;
        let scheme = presented.scheme;
        let as_dpop = |refusal: AuthRefusal| if scheme == Scheme::Dpop { refusal.for_dpop() } else { refusal };
        let (token, principal) = self.token_principal(&presented).await.map_err(as_dpop)?;
        self.check_binding(request, scheme, token, &principal).await?;
        let missing: Vec<&str> =
            self.required_scopes.iter().map(String::as_str).filter(|scope| !principal.has_scope(scope)).collect();
        if !missing.is_empty() {
            return Err(as_dpop(AuthRefusal::insufficient_scope(format!(
                "every request needs the scopes {}",
                missing.join(" ")
            ))));
        }
        Ok(principal)
    }

    /// The token presented and its principal: from the tokens verified before, found by the
    /// hash of its bytes, or its syntax checked and the token verified.
    async fn token_principal<'a>(&self, presented: &Presented<'a>) -> Result<(&'a str, Principal), AuthRefusal> {
        let now = SystemTime::now();
        let key = presented.may_be_known().then(|| VerifiedTokens::key(presented.bytes));
        if let Some(principal) = key.as_ref().and_then(|key| self.verified.get(key, now)) {
            return Ok((presented.known_good()?, principal));
        }
        let token = presented.checked()?;
        let mut principal = self.verifier.verify(token).await?;
        if self.exact_scopes {
            principal = principal.with_exact_scopes();
        }
        if let Some(key) = key {
            self.verified.insert(key, &principal, now);
        }
        Ok((token, principal))
    }
}

impl ResourceServerBuilder {
    /// The authorization server whose tokens are accepted, by its issuer URL: its keys are
    /// found from that alone (RFC 8414, then OpenID Connect discovery), and tokens must name
    /// it as `iss`.
    pub fn issuer(mut self, issuer: impl Into<String>) -> ResourceServerBuilder {
        self.issuer = Some(issuer.into());
        self
    }

    /// Another audience tokens may name instead of the resource URL (the default, and always
    /// accepted).
    pub fn audience(mut self, audience: impl Into<String>) -> ResourceServerBuilder {
        self.audiences.push(audience.into());
        self
    }

    /// Scopes every request needs; a token without them gets 403 `insufficient_scope`. They
    /// are also what a 401 challenge asks for.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> ResourceServerBuilder {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Matches scopes exactly: a granted scope covers only itself. By default a scope also
    /// covers the narrower ones below it after a `:` (a token granting `files` may use what
    /// needs `files:read`), as the 2026-07-28 specification asks servers to honour scope
    /// hierarchies; turn that off when the issuer's scopes have no such hierarchy, or grants
    /// a broad scope more freely than the narrow ones under it.
    pub fn exact_scopes(mut self) -> ResourceServerBuilder {
        self.exact_scopes = true;
        self
    }

    /// The scopes the metadata offers clients (`scopes_supported`); the required scopes by
    /// default. `offline_access` is never published.
    pub fn scopes_supported<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> ResourceServerBuilder {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// A name for people, in the metadata (`resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> ResourceServerBuilder {
        self.resource_name = Some(name.into());
        self
    }

    /// Whether tokens typed `JWT` (or not typed), as many providers issue them, are accepted
    /// beside RFC 9068's `at+jwt`. On by default.
    pub fn accept_plain_jwt(mut self, accept: bool) -> ResourceServerBuilder {
        self.accept_plain_jwt = accept;
        self
    }

    /// How far clocks may disagree when `exp`, `nbf` and `iat` are checked (30 s).
    pub fn leeway(mut self, leeway: Duration) -> ResourceServerBuilder {
        self.leeway = leeway;
        self
    }

    /// The least time between two fetches of the issuer's keys when tokens name a key it does
    /// not have (30 s): rotation is followed, and made-up key ids cost the issuer nothing.
    pub fn key_refetch_interval(mut self, interval: Duration) -> ResourceServerBuilder {
        self.key_refetch_interval = interval;
        self
    }

    /// How long a verified token is trusted without being verified again, at most (5 min;
    /// never past its expiry), and how many are kept (10,000).
    pub fn verified_tokens(mut self, max_age: Duration, capacity: usize) -> ResourceServerBuilder {
        self.cache_max_age = max_age;
        self.cache_capacity = capacity.max(1);
        self
    }

    /// Verifies every token by asking the issuer (RFC 7662 introspection), authenticating as
    /// the client `client_id` with `client_secret` (`client_secret_basic`), instead of as a
    /// JWT: for issuers that hand out opaque tokens. The endpoint is the issuer metadata's
    /// `introspection_endpoint` unless [`introspection_endpoint`](Self::introspection_endpoint)
    /// names it. The answer must say `active`, name this resource in `aud`, and be in its time
    /// window; a verified token is then kept like any other (until its `exp`, at most
    /// [`verified_tokens`](Self::verified_tokens)' age).
    pub fn introspection(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> ResourceServerBuilder {
        self.introspection = Some(ClientCredentials { id: client_id.into(), secret: client_secret.into() });
        self
    }

    /// The introspection endpoint, when the issuer's metadata does not name it.
    pub fn introspection_endpoint(mut self, url: impl Into<String>) -> ResourceServerBuilder {
        self.introspection_endpoint = Some(url.into());
        self
    }

    /// Takes DPoP-bound tokens (RFC 9449): presented with the `DPoP` scheme and a proof of the
    /// key they are bound to on every request, each proof used once. `Allowed` takes bearer
    /// tokens beside them, `Required` does not; a bound token presented as a bearer token is
    /// refused either way. The metadata says `dpop_signing_alg_values_supported` and
    /// `dpop_bound_access_tokens_required`, and refusals carry a `DPoP` challenge.
    pub fn dpop(mut self, mode: DpopMode) -> ResourceServerBuilder {
        self.dpop = Some(mode);
        self
    }

    /// How far a proof's `iat` may be from now, either way (default five minutes).
    pub fn dpop_window(mut self, window: Duration) -> ResourceServerBuilder {
        self.dpop_window = window;
        self
    }

    /// Gives server nonces (RFC 9449 §8) that proofs must carry: a proof without the current
    /// one (or the last, for a while) is answered 401 `use_dpop_nonce` with the nonce in
    /// `DPoP-Nonce`, and the client retries with it. Nonces are made from `secret` and the
    /// time, so every replica given the same secret takes the same nonces; they change with
    /// each window (`dpop_window`).
    pub fn dpop_nonces(mut self, secret: [u8; 32]) -> ResourceServerBuilder {
        self.dpop_nonce_secret = Some(NonceSecret(secret));
        self
    }

    /// Where proofs are kept so that each is used once: by default in memory
    /// ([`MemoryReplayCache`]); with several replicas, one they share.
    pub fn dpop_replay_cache(mut self, cache: impl ProofReplayCache) -> ResourceServerBuilder {
        self.dpop_replay = Some(ReplaySlot(Arc::new(cache)));
        self
    }

    /// Verifies tokens with `verifier` instead of as JWTs of the issuer (an introspection
    /// endpoint, a store of your own). The issuer is still published in the metadata.
    pub fn verifier(mut self, verifier: impl TokenVerifier) -> ResourceServerBuilder {
        self.verifier = Some(VerifierSlot(Box::new(verifier)));
        self
    }

    /// The resource server, or what is wrong with its configuration.
    pub fn build(self) -> Result<ResourceServer, ConfigError> {
        let resource = ResourceUrl::parse(&self.resource)?;
        let issuer = self.issuer.ok_or_else(|| {
            ConfigError::new(ConfigErrorKind::Issuer, "a resource server needs the issuer of its tokens")
        })?;
        if !(issuer.starts_with("https://") || is_loopback_http(&issuer)) {
            return Err(ConfigError::new(
                ConfigErrorKind::Issuer,
                format!("the issuer `{issuer}` is neither https nor a loopback address"),
            ));
        }
        let mut audiences = vec![resource.clone()];
        for audience in &self.audiences {
            audiences.push(ResourceUrl::parse(audience)?);
        }
        if let Some(endpoint) = &self.introspection_endpoint
            && !(endpoint.starts_with("https://") || is_loopback_http(endpoint))
        {
            return Err(ConfigError::new(
                ConfigErrorKind::Introspection,
                format!("the introspection endpoint `{endpoint}` is neither https nor a loopback address"),
            ));
        }
        let verifier: Box<dyn TokenVerifier> = match (self.verifier, self.introspection) {
            (Some(VerifierSlot(verifier)), _) => verifier,
            (None, Some(credentials)) => Box::new(IntrospectionVerifier::new(
                issuer.clone(),
                audiences,
                self.leeway,
                credentials,
                self.introspection_endpoint,
                Fetcher::new().map_err(|why| ConfigError::new(ConfigErrorKind::Tls, why))?,
                self.key_refetch_interval,
            )),
            (None, None) => Box::new(JwtVerifier::new(
                issuer.clone(),
                audiences,
                self.leeway,
                self.accept_plain_jwt,
                Fetcher::new().map_err(|why| ConfigError::new(ConfigErrorKind::Tls, why))?,
                self.key_refetch_interval,
            )),
        };
        let scopes_supported = self.scopes_supported.unwrap_or_else(|| self.required_scopes.clone());
        let mut document = metadata_document(&resource, &[issuer], &scopes_supported, self.resource_name.as_deref());
        if let Some(mode) = self.dpop {
            document["dpop_signing_alg_values_supported"] = serde_json::json!(DPOP_ALGORITHMS);
            document["dpop_bound_access_tokens_required"] = serde_json::json!(mode == DpopMode::Required);
        }
        let dpop = self.dpop.map(|mode| DpopPolicy {
            mode,
            algorithms: DPOP_ALGORITHMS.join(" "),
            window: self.dpop_window,
            nonces: self.dpop_nonce_secret.as_ref().map(|secret| Nonces::new(secret.0, self.dpop_window)),
            replay: self
                .dpop_replay
                .map_or_else(|| Arc::new(MemoryReplayCache::default()) as Arc<dyn ProofReplayCache>, |slot| slot.0),
        });
        Ok(ResourceServer {
            metadata_url: resource.metadata_url(),
            metadata_paths: resource.metadata_paths(),
            metadata: Bytes::from(document.to_string()),
            resource,
            required_scopes: self.required_scopes,
            exact_scopes: self.exact_scopes,
            verifier,
            verified: VerifiedTokens::new(self.cache_capacity, self.cache_max_age),
            dpop,
        })
    }
}

impl Authenticator for ResourceServer {
    fn authenticate<'a>(&'a self, request: &'a http::request::Parts) -> AuthFuture<'a> {
        Box::pin(self.principal(request))
    }

    fn resource_metadata_url(&self) -> Option<&str> {
        Some(&self.metadata_url)
    }

    fn challenge_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    fn dpop_algorithms(&self) -> Option<&str> {
        self.dpop.as_ref().map(|policy| policy.algorithms.as_str())
    }

    fn accepts_bearer(&self) -> bool {
        self.dpop.as_ref().is_none_or(|policy| policy.mode == DpopMode::Allowed)
    }

    fn public_document(&self, path: &str) -> Option<Bytes> {
        self.metadata_paths.iter().any(|known| known == path).then(|| self.metadata.clone())
    }

    /// A bearer token's principal is given again for as long as the verified token is kept
    /// (its `exp`, or the cache's bound); a DPoP proof is checked on every request.
    fn reusable_until(&self, request: &http::request::Parts, _principal: &Principal) -> Option<std::time::Instant> {
        let presented = bearer::presented(&request.headers, request.uri.query(), self.dpop.is_some()).ok()?;
        if presented.scheme != Scheme::Bearer || !presented.may_be_known() {
            return None;
        }
        let now = SystemTime::now();
        let until = self.verified.kept_until(&VerifiedTokens::key(presented.bytes), now)?;
        Some(std::time::Instant::now() + until.duration_since(now).ok()?)
    }
}
