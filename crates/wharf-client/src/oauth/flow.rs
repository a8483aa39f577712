//! The authorization of one client with one server: what a refusal (401, or 403
//! `insufficient_scope`) sets off, for each grant, and the headers that go with each request
//! afterwards (a bearer token, or a DPoP-bound token with a fresh proof).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::oauth::challenge::{self, Challenge};
use crate::oauth::config::{Credential, EnterpriseManaged, Grant, OAuth, RefreshHold, StoredTokens};
use crate::oauth::discovery::{self, AuthorizationServer};
use crate::oauth::fetch::{self, Fetched, Fetcher};
use crate::oauth::jws::EsKey;
use crate::oauth::{form, pkce};

/// How long before its expiry a token is refreshed.
const REFRESH_MARGIN_SECONDS: u64 = 30;

/// How long a refresh waits for another process that shares the token store to finish its
/// own; past that it refreshes anyway.
const REFRESH_HOLD_WAIT: Duration = Duration::from_secs(15);

/// How often a refresh asks again for the token store's hold.
const REFRESH_HOLD_POLL: Duration = Duration::from_millis(50);

/// How long a client assertion is valid.
const ASSERTION_LIFETIME_SECONDS: u64 = 300;

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The headers that authorize one request.
#[derive(Debug, Clone, Default)]
pub(crate) struct AuthHeaders {
    /// `Bearer TOKEN` or `DPoP TOKEN`.
    pub(crate) authorization: Option<String>,
    /// The DPoP proof for this request.
    pub(crate) dpop: Option<String>,
}

pub(crate) struct OAuthState {
    config: OAuth,
    fetcher: Fetcher,
    server_url: String,
    held: tokio::sync::Mutex<Held>,
    /// What every request reads without waiting for an authorization running.
    current: Mutex<Current>,
}

/// The token in use, and how to prove possession of it.
#[derive(Default, Clone)]
struct Current {
    access_token: Option<String>,
    /// The key a DPoP-bound token is bound to.
    dpop: Option<EsKey>,
    /// The nonce the MCP server asked DPoP proofs to carry.
    server_nonce: Option<String>,
}

#[derive(Default)]
struct Held {
    tokens: Option<StoredTokens>,
    /// The scopes the last authorization asked for: a step-up asks for these and more.
    requested: BTreeSet<String>,
    /// The clients registered with each authorization server (by issuer) in this run:
    /// credentials are never shown to another server.
    clients: HashMap<String, Registered>,
    /// Where the tokens came from, for refreshing them.
    source: Option<(AuthorizationServer, String)>,
    /// The key DPoP proofs are signed with, made when a server first wants one.
    dpop_key: Option<EsKey>,
}

impl Held {
    /// Holds stored bearer `tokens`: the scopes they were asked with, and the client they
    /// were issued to.
    fn take_stored(&mut self, tokens: StoredTokens) {
        self.requested = tokens.scope.iter().flat_map(|scope| scope.split_whitespace()).map(str::to_owned).collect();
        self.clients.insert(
            tokens.issuer.clone(),
            Registered {
                client_id: tokens.client_id.clone(),
                client_secret: tokens.client_secret.clone(),
                method: tokens.token_endpoint_auth_method.clone(),
                key: None,
            },
        );
        self.tokens = Some(tokens);
    }
}

/// A client id an authorization server knows, and how it authenticates there.
#[derive(Clone)]
struct Registered {
    client_id: String,
    client_secret: Option<String>,
    /// `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
    method: String,
    key: Option<EsKey>,
}

/// What discovery found: who authorizes, and the resource to name.
struct Discovered {
    server: AuthorizationServer,
    resource: String,
    scopes_supported: Vec<String>,
    /// The resource's metadata says it takes DPoP-bound tokens.
    resource_accepts_dpop: bool,
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|since| since.as_secs()).unwrap_or_default()
}

impl OAuthState {
    pub(crate) fn new(config: OAuth, server_url: &str) -> Result<OAuthState, String> {
        let fetcher = Fetcher::new()?;
        let mut held = Held::default();
        let mut current = Current::default();
        // A stored DPoP-bound token is useless without its key, which is not stored.
        if let Some(tokens) =
            config.store.load(server_url).filter(|tokens| tokens.token_type.eq_ignore_ascii_case("bearer"))
        {
            current.access_token = Some(tokens.access_token.clone());
            held.take_stored(tokens);
        }
        Ok(OAuthState {
            config,
            fetcher,
            server_url: server_url.to_owned(),
            held: tokio::sync::Mutex::new(held),
            current: Mutex::new(current),
        })
    }

    fn current(&self) -> Current {
        self.current.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The headers that authorize a `method` request to the server now, refreshing a token
    /// about to expire first.
    pub(crate) async fn headers(&self, method: &str) -> AuthHeaders {
        let expiring = match self.held.try_lock() {
            Ok(held) => held
                .tokens
                .as_ref()
                .and_then(|tokens| tokens.expires_at.filter(|_| tokens.refresh_token.is_some()))
                .is_some_and(|expires_at| expires_at <= now() + REFRESH_MARGIN_SECONDS),
            Err(_) => false,
        };
        if expiring {
            let mut held = self.held.lock().await;
            if let Some((server, resource)) = held.source.clone()
                && let Err(err) = self.refresh(&mut held, &server, &resource).await
            {
                tracing::debug!(target: "wharf_client", "the token could not be refreshed ahead of time: {err}");
            }
        }
        let current = self.current();
        let Some(token) = current.access_token else { return AuthHeaders::default() };
        match &current.dpop {
            None => AuthHeaders { authorization: Some(format!("Bearer {token}")), dpop: None },
            Some(key) => {
                let hash = URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()));
                let proof = proof(key, method, &self.server_url, current.server_nonce.as_deref(), Some(&hash));
                AuthHeaders { authorization: Some(format!("DPoP {token}")), dpop: proof.ok() }
            }
        }
    }

    /// Acts on a refusal of a request sent with the token `sent_with`: authorizes (or
    /// refreshes, or asks for more scopes, or takes the server's DPoP nonce), after which the
    /// request may be sent again. An error says why it may not.
    pub(crate) async fn refused(
        &self,
        status: u16,
        www_authenticate: Option<&str>,
        dpop_nonce: Option<&str>,
        sent_with: Option<&str>,
    ) -> Result<(), String> {
        let mut held = self.held.lock().await;
        let current = self.current();
        let challenge = www_authenticate.and_then(challenge::parse).unwrap_or_default();
        if challenge.param("error") == Some("use_dpop_nonce") && current.dpop.is_some() {
            let nonce = dpop_nonce.ok_or("the server asks for a DPoP nonce and gives none")?;
            if current.server_nonce.as_deref() == Some(nonce) {
                return Err("the server refused the DPoP nonce it gave".to_owned());
            }
            self.current.lock().unwrap_or_else(PoisonError::into_inner).server_nonce = Some(nonce.to_owned());
            return Ok(());
        }
        if current.access_token.as_deref()
            != sent_with.and_then(|header| header.split_once(' ')).map(|(_, token)| token)
        {
            // Another request authorized while this one waited: send it again with the new token.
            return Ok(());
        }
        if challenge.scheme.eq_ignore_ascii_case("dpop") && held.dpop_key.is_none() {
            held.dpop_key = Some(EsKey::generate()?);
        }
        if status == 403 {
            return self.step_up(&mut held, &challenge).await;
        }
        let discovered = self.discover(&challenge).await?;
        if sent_with.is_some()
            && let Some(tokens) = &held.tokens
            && tokens.issuer == discovered.server.issuer
            && tokens.refresh_token.is_some()
            && self.refresh(&mut held, &discovered.server, &discovered.resource).await.is_ok()
        {
            return Ok(());
        }
        let mut scopes: BTreeSet<String> = challenge.scopes().into_iter().collect();
        if scopes.is_empty() {
            scopes = discovered.scopes_supported.iter().cloned().collect();
        }
        self.obtain(&mut held, &discovered, scopes).await
    }

    /// A 403 `insufficient_scope`: authorize again with the scopes asked for so far and those
    /// the challenge names, unless they were all asked for already (the server will not grant
    /// them, and asking again would loop).
    async fn step_up(&self, held: &mut Held, challenge: &Challenge) -> Result<(), String> {
        if challenge.param("error") != Some("insufficient_scope") {
            return Err(format!("the server refused the request (403): {}", describe(challenge)));
        }
        let wanted = challenge.scopes();
        if wanted.is_empty() || wanted.iter().all(|scope| held.requested.contains(scope)) {
            return Err(format!(
                "the server wants the scopes `{}`, which the authorization asked for already and was not granted",
                wanted.join(" ")
            ));
        }
        let discovered = self.discover(challenge).await?;
        let mut scopes = held.requested.clone();
        scopes.extend(wanted);
        self.obtain(held, &discovered, scopes).await
    }

    /// Protected resource metadata, then the authorization server's; a server without the
    /// former is a 2025-03-26 one, whose origin is its authorization server.
    async fn discover(&self, challenge: &Challenge) -> Result<Discovered, String> {
        let named = challenge.param("resource_metadata");
        match discovery::protected_resource(&self.fetcher, &self.server_url, named).await? {
            Some(resource) => {
                let issuer = resource
                    .authorization_servers
                    .first()
                    .ok_or("the protected resource metadata names no authorization server")?;
                let server = discovery::authorization_server(&self.fetcher, issuer)
                    .await?
                    .ok_or_else(|| format!("the authorization server `{issuer}` publishes no metadata"))?;
                Ok(Discovered {
                    server,
                    resource: resource.resource,
                    scopes_supported: resource.scopes_supported,
                    resource_accepts_dpop: resource.accepts_dpop,
                })
            }
            None => {
                let origin =
                    wharf_oauth::UrlParts::parse(&self.server_url).map(|parts| parts.origin()).unwrap_or_default();
                let server = discovery::authorization_server(&self.fetcher, &origin)
                    .await?
                    .unwrap_or_else(|| discovery::default_endpoints(&origin));
                Ok(Discovered {
                    server,
                    resource: self.server_url.clone(),
                    scopes_supported: Vec::new(),
                    resource_accepts_dpop: false,
                })
            }
        }
    }

    /// Tokens by the configured grant.
    async fn obtain(
        &self,
        held: &mut Held,
        discovered: &Discovered,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), String> {
        scopes.extend(self.config.scopes.iter().cloned());
        // A DPoP-bound token only where the resource takes one (its challenge's scheme set the
        // key already, or its metadata says so): a resource server that knows only Bearer
        // refuses it, whatever the authorization server supports.
        if discovered.resource_accepts_dpop
            && discovered.server.dpop_algorithms.iter().any(|algorithm| algorithm == "ES256")
            && held.dpop_key.is_none()
        {
            held.dpop_key = Some(EsKey::generate()?);
        }
        let server = &discovered.server;
        let resource = discovered.resource.as_str();
        let scope = scopes.iter().cloned().collect::<Vec<_>>().join(" ");
        let (client, pairs): (Registered, Vec<(&str, String)>) = match &self.config.grant {
            Grant::AuthorizationCode(_) => return self.authorize(held, discovered, scopes).await,
            Grant::ClientCredentials { client_id, credential } => {
                let (client_secret, method, key) = match credential {
                    Credential::Secret(secret) => (Some(secret.clone()), "client_secret_basic", None),
                    Credential::PrivateKey(key) => (None, "private_key_jwt", Some(key.clone())),
                };
                let client = Registered { client_id: client_id.clone(), client_secret, method: method.to_owned(), key };
                let mut pairs =
                    vec![("grant_type", "client_credentials".to_owned()), ("resource", resource.to_owned())];
                if !scope.is_empty() {
                    pairs.push(("scope", scope.clone()));
                }
                (client, pairs)
            }
            Grant::JwtBearer { assertion, client_id } => {
                let client = Registered {
                    client_id: client_id.clone().unwrap_or_default(),
                    client_secret: None,
                    method: "none".to_owned(),
                    key: None,
                };
                let pairs = vec![
                    ("grant_type", JWT_BEARER.to_owned()),
                    ("assertion", assertion.clone()),
                    ("resource", resource.to_owned()),
                ];
                (client, pairs)
            }
            Grant::Enterprise(enterprise) => {
                let assertion = self.identity_assertion(enterprise, server, resource, &scope).await?;
                let client = Registered {
                    client_id: enterprise.client_id.clone(),
                    client_secret: Some(enterprise.client_secret.clone()),
                    method: "client_secret_basic".to_owned(),
                    key: None,
                };
                (client, vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", assertion)])
            }
        };
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(key, value)| (*key, value.as_str())).collect();
        let tokens = self.token_request(held, server, &client, &pairs, None).await?;
        held.requested = scopes;
        self.keep(held, tokens, server, resource, (!scope.is_empty()).then_some(scope));
        Ok(())
    }

    /// Enterprise-managed authorization's first step: the identity token exchanged at the
    /// identity provider for an ID-JAG naming this authorization server and resource.
    async fn identity_assertion(
        &self,
        enterprise: &EnterpriseManaged,
        server: &AuthorizationServer,
        resource: &str,
        scope: &str,
    ) -> Result<String, String> {
        let mut pairs = vec![
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
            ("requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"),
            ("audience", server.issuer.as_str()),
            ("resource", resource),
            ("subject_token", enterprise.id_token.as_str()),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"),
        ];
        if let Some(client_id) = &enterprise.idp_client_id {
            pairs.push(("client_id", client_id.as_str()));
        }
        if !scope.is_empty() {
            pairs.push(("scope", scope));
        }
        let answer = self.fetcher.post_form(&enterprise.idp_token_endpoint, &pairs, &[]).await?;
        let document = answer.json().unwrap_or_default();
        if !answer.is_success() {
            let error = document.get("error").and_then(Value::as_str).unwrap_or("no error code");
            return Err(format!("the identity provider's token exchange answered {}: {error}", answer.status));
        }
        document
            .get("access_token")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| "the identity provider's token exchange gave no assertion".to_owned())
    }

    /// The client this authorization server knows: registered in this run, pre-registered, a
    /// client ID metadata document, or registered now.
    async fn identity(&self, held: &mut Held, server: &AuthorizationServer) -> Result<Registered, String> {
        if let Some(known) = held.clients.get(&server.issuer) {
            return Ok(known.clone());
        }
        let registered = if let Some(pre) = self
            .config
            .pre_registered
            .as_ref()
            .filter(|pre| pre.issuer.as_ref().is_none_or(|issuer| *issuer == server.issuer))
        {
            let method = token_method(server, pre.client_secret.is_some());
            Registered { client_id: pre.client_id.clone(), client_secret: pre.client_secret.clone(), method, key: None }
        } else if let (true, Some(url)) = (server.client_id_metadata_documents, &self.config.client_metadata_url) {
            Registered { client_id: url.clone(), client_secret: None, method: "none".to_owned(), key: None }
        } else if let Some(endpoint) = &server.registration_endpoint {
            self.register(server, endpoint).await?
        } else {
            return Err(format!(
                "`{}` offers no way for this client to identify itself: no registration endpoint, no client ID \
                 metadata documents, and no pre-registered client id",
                server.issuer
            ));
        };
        held.clients.insert(server.issuer.clone(), registered.clone());
        Ok(registered)
    }

    /// Dynamic client registration (RFC 7591), as a native public client where the server
    /// allows one.
    async fn register(&self, server: &AuthorizationServer, endpoint: &str) -> Result<Registered, String> {
        let supported = server.token_endpoint_auth_methods.clone().unwrap_or_default();
        let requested = if supported.is_empty() || supported.iter().any(|method| method == "none") {
            "none"
        } else if supported.iter().any(|method| method == "client_secret_basic") {
            "client_secret_basic"
        } else {
            "client_secret_post"
        };
        let metadata = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.redirect_uri()],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": requested,
            "application_type": "native",
        });
        let answer = self.fetcher.post_json(endpoint, &metadata).await?;
        let document = answer.json().filter(|_| answer.is_success()).ok_or_else(|| {
            format!(
                "client registration at {endpoint} answered {}: {}",
                answer.status,
                crate::router::excerpt(&answer.body)
            )
        })?;
        let client_id = document
            .get("client_id")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("client registration at {endpoint} gave no client_id"))?
            .to_owned();
        let client_secret = document.get("client_secret").and_then(Value::as_str).map(str::to_owned);
        let method = document
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| token_method(server, client_secret.is_some()));
        Ok(Registered { client_id, client_secret, method, key: None })
    }

    fn redirect_uri(&self) -> String {
        match &self.config.grant {
            Grant::AuthorizationCode(authorizer) => authorizer.redirect_uri(),
            _ => String::new(),
        }
    }

    /// The authorization code flow with PKCE: the user's visit, the redirect checked (`state`,
    /// `iss`), the code exchanged for tokens.
    async fn authorize(
        &self,
        held: &mut Held,
        discovered: &Discovered,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), String> {
        let Grant::AuthorizationCode(authorizer) = &self.config.grant else {
            return Err("this client has no one to authorize it".to_owned());
        };
        let server = &discovered.server;
        let client = self.identity(held, server).await?;
        if server.scopes_supported.iter().any(|scope| scope == "offline_access") {
            scopes.insert("offline_access".to_owned());
        }
        let scope = scopes.iter().cloned().collect::<Vec<_>>().join(" ");
        let verifier = pkce::random_token()?;
        let challenge = pkce::challenge(&verifier);
        let state = pkce::random_token()?;
        let redirect_uri = authorizer.redirect_uri();
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client.client_id.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("state", state.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("resource", discovered.resource.as_str()),
        ];
        if !scope.is_empty() {
            params.push(("scope", scope.as_str()));
        }
        // OpenID Connect keeps `offline_access` (and so issues a refresh token) only when
        // consent is asked for (OIDC Core §11).
        if scopes.contains("offline_access") {
            params.push(("prompt", "consent"));
        }
        let url = form::with_query(&server.authorization_endpoint, &params);
        let redirected = authorizer.authorize(url).await?;
        let answer: HashMap<String, String> = form::query_pairs(&redirected).into_iter().collect();
        if let Some(error) = answer.get("error") {
            let described = answer.get("error_description").map(|text| format!(": {text}")).unwrap_or_default();
            return Err(format!("the authorization server refused: {error}{described}"));
        }
        if answer.get("state") != Some(&state) {
            return Err("the authorization server's redirect carries another state: refused".to_owned());
        }
        match answer.get("iss") {
            Some(iss) if server.from_metadata && *iss != server.issuer => {
                return Err(format!(
                    "the redirect names the issuer `{iss}`, not `{}`: refused (RFC 9207)",
                    server.issuer
                ));
            }
            None if server.iss_supported => {
                return Err("the authorization server promises `iss` in its redirects and this one has none: refused"
                    .to_owned());
            }
            _ => {}
        }
        let code = answer.get("code").ok_or("the authorization server's redirect carries no code")?;
        let pairs = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("code_verifier", verifier.as_str()),
            ("resource", discovered.resource.as_str()),
        ];
        let tokens = self.token_request(held, server, &client, &pairs, None).await?;
        held.requested = scopes;
        self.keep(held, tokens, server, &discovered.resource, (!scope.is_empty()).then_some(scope));
        Ok(())
    }

    /// A new access token for the refresh token held.
    async fn refresh(&self, held: &mut Held, server: &AuthorizationServer, resource: &str) -> Result<(), String> {
        let _hold = self.hold_refresh().await;
        if self.adopt_stored(held) {
            return Ok(());
        }
        let tokens = held.tokens.clone().ok_or("no tokens to refresh")?;
        let refresh_token = tokens.refresh_token.clone().ok_or("no refresh token")?;
        let client = self.identity(held, server).await?;
        let pairs =
            [("grant_type", "refresh_token"), ("refresh_token", refresh_token.as_str()), ("resource", resource)];
        let fresh = self.token_request(held, server, &client, &pairs, Some(&refresh_token)).await?;
        self.keep(held, fresh, server, resource, tokens.scope);
        Ok(())
    }

    /// The token store's hold on refreshing (see `TokenStore::try_hold_refresh`), waited for
    /// while another process has it; `None` when the store is not shared, or the wait ran out.
    async fn hold_refresh(&self) -> Option<Box<dyn Send>> {
        let deadline = Instant::now() + REFRESH_HOLD_WAIT;
        loop {
            match self.config.store.try_hold_refresh() {
                RefreshHold::Held(hold) => return Some(hold),
                RefreshHold::Busy if Instant::now() < deadline => tokio::time::sleep(REFRESH_HOLD_POLL).await,
                RefreshHold::Busy => {
                    tracing::warn!(target: "wharf_client", "another process holds the token store; refreshing anyway");
                    return None;
                }
                RefreshHold::Unshared => return None,
            }
        }
    }

    /// Takes the bearer tokens another process stored for this server, from the same issuer,
    /// since these were read: it refreshed them first, and the refresh token held here is
    /// spent. True when there were such.
    fn adopt_stored(&self, held: &mut Held) -> bool {
        if self.current().dpop.is_some() {
            return false;
        }
        let Some(stored) = self.config.store.load(&self.server_url) else { return false };
        let newer = held
            .tokens
            .as_ref()
            .is_some_and(|tokens| tokens.issuer == stored.issuer && tokens.access_token != stored.access_token);
        if !newer || !stored.token_type.eq_ignore_ascii_case("bearer") {
            return false;
        }
        self.current.lock().unwrap_or_else(PoisonError::into_inner).access_token = Some(stored.access_token.clone());
        // A login elsewhere may have registered anew: the client the tokens were issued to
        // is the one that refreshes them.
        held.take_stored(stored);
        true
    }

    /// Posts to the token endpoint, authenticating as `client` does, with a DPoP proof when
    /// tokens are bound (once more with the server's nonce when it asks for one).
    async fn token_request(
        &self,
        held: &Held,
        server: &AuthorizationServer,
        client: &Registered,
        pairs: &[(&str, &str)],
        kept_refresh_token: Option<&str>,
    ) -> Result<StoredTokens, String> {
        let mut pairs: Vec<(&str, String)> = pairs.iter().map(|(key, value)| (*key, (*value).to_owned())).collect();
        let mut headers = Vec::new();
        match (client.method.as_str(), &client.client_secret, &client.key) {
            ("client_secret_basic", Some(secret), _) => {
                headers.push(fetch::basic_authorization(&client.client_id, secret))
            }
            ("client_secret_post", Some(secret), _) => {
                pairs.push(("client_id", client.client_id.clone()));
                pairs.push(("client_secret", secret.clone()));
            }
            ("private_key_jwt", _, Some(key)) => {
                let issued = now();
                let claims = json!({
                    "iss": client.client_id, "sub": client.client_id, "aud": server.issuer,
                    "iat": issued, "exp": issued + ASSERTION_LIFETIME_SECONDS, "jti": pkce::random_token()?,
                });
                pairs.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
                ));
                pairs.push(("client_assertion", key.sign(json!({"typ": "JWT"}), &claims)?));
            }
            _ if client.client_id.is_empty() => {}
            _ => pairs.push(("client_id", client.client_id.clone())),
        }
        let form: Vec<(&str, &str)> = pairs.iter().map(|(key, value)| (*key, value.as_str())).collect();
        let mut nonce: Option<String> = None;
        let answer = loop {
            let mut sent = headers.clone();
            if let Some(key) = &held.dpop_key {
                sent.push(("dpop", proof(key, "POST", &server.token_endpoint, nonce.as_deref(), None)?));
            }
            let answer = self.fetcher.post_form(&server.token_endpoint, &form, &sent).await?;
            match asked_nonce(&answer) {
                Some(asked) if held.dpop_key.is_some() && nonce.is_none() => nonce = Some(asked),
                _ => break answer,
            }
        };
        let document = answer.json().unwrap_or_default();
        if !answer.is_success() {
            let error = document.get("error").and_then(Value::as_str).unwrap_or("no error code");
            return Err(format!("the token endpoint answered {}: {error}", answer.status));
        }
        let text = |key: &str| document.get(key).and_then(Value::as_str).map(str::to_owned);
        let access_token = text("access_token").ok_or("the token endpoint's answer has no access_token")?;
        let token_type = text("token_type").unwrap_or_else(|| "Bearer".to_owned());
        let bound = token_type.eq_ignore_ascii_case("dpop");
        if !(token_type.eq_ignore_ascii_case("bearer") || (bound && held.dpop_key.is_some())) {
            return Err(format!("the token endpoint issued a `{token_type}` token, which this client cannot use"));
        }
        Ok(StoredTokens {
            issuer: server.issuer.clone(),
            access_token,
            token_type,
            refresh_token: text("refresh_token").or_else(|| kept_refresh_token.map(str::to_owned)),
            expires_at: document.get("expires_in").and_then(Value::as_u64).map(|seconds| now() + seconds),
            scope: text("scope"),
            client_id: client.client_id.clone(),
            client_secret: client.client_secret.clone(),
            token_endpoint_auth_method: client.method.clone(),
        })
    }

    fn keep(
        &self,
        held: &mut Held,
        mut tokens: StoredTokens,
        server: &AuthorizationServer,
        resource: &str,
        requested: Option<String>,
    ) {
        if tokens.scope.is_none() {
            tokens.scope = requested;
        }
        {
            let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            current.access_token = Some(tokens.access_token.clone());
            current.dpop = held.dpop_key.clone().filter(|_| tokens.token_type.eq_ignore_ascii_case("dpop"));
        }
        self.config.store.save(&self.server_url, &tokens);
        held.tokens = Some(tokens);
        held.source = Some((server.clone(), resource.to_owned()));
    }
}

/// A DPoP proof (RFC 9449 §4.2) for a `method` request to `url`, carrying the server's nonce
/// and, toward a resource server, the hash of the access token.
fn proof(
    key: &EsKey,
    method: &str,
    url: &str,
    nonce: Option<&str>,
    token_hash: Option<&str>,
) -> Result<String, String> {
    let target = url.split(['?', '#']).next().unwrap_or(url);
    let mut claims = json!({"jti": pkce::random_token()?, "htm": method, "htu": target, "iat": now()});
    if let Some(nonce) = nonce {
        claims["nonce"] = json!(nonce);
    }
    if let Some(hash) = token_hash {
        claims["ath"] = json!(hash);
    }
    key.sign(json!({"typ": "dpop+jwt", "jwk": key.public_jwk()}), &claims)
}

/// The nonce a token endpoint asks DPoP proofs to carry (`use_dpop_nonce`, RFC 9449 §8).
fn asked_nonce(answer: &Fetched) -> Option<String> {
    let document = answer.json()?;
    if answer.status != 400 || document.get("error").and_then(Value::as_str) != Some("use_dpop_nonce") {
        return None;
    }
    answer.headers.get("dpop-nonce").and_then(|value| value.to_str().ok()).map(str::to_owned)
}

/// How a client with or without a secret authenticates at `server`'s token endpoint.
fn token_method(server: &AuthorizationServer, has_secret: bool) -> String {
    if !has_secret {
        return "none".to_owned();
    }
    let supported =
        server.token_endpoint_auth_methods.clone().unwrap_or_else(|| vec!["client_secret_basic".to_owned()]);
    if supported.iter().any(|method| method == "client_secret_basic") {
        "client_secret_basic".to_owned()
    } else if supported.iter().any(|method| method == "client_secret_post") {
        "client_secret_post".to_owned()
    } else {
        "client_secret_basic".to_owned()
    }
}

fn describe(challenge: &Challenge) -> String {
    match (challenge.param("error"), challenge.param("error_description")) {
        (Some(error), Some(description)) => format!("{error}: {description}"),
        (Some(error), None) => error.to_owned(),
        _ => "no reason given".to_owned(),
    }
}
