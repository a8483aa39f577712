//! The authorization of one client with one server: what a refusal (401, or 403
//! `insufficient_scope`) sets off, and the token that goes with each request afterwards.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::oauth::challenge::{self, Challenge};
use crate::oauth::discovery::{self, AuthorizationServer};
use crate::oauth::fetch::{self, Fetcher};
use crate::oauth::{OAuth, StoredTokens, form, pkce};

/// How long before its expiry a token is refreshed.
const REFRESH_MARGIN_SECONDS: u64 = 30;

pub(crate) struct OAuthState {
    config: OAuth,
    fetcher: Fetcher,
    server_url: String,
    held: tokio::sync::Mutex<Held>,
    /// `Bearer TOKEN`, read by every request without waiting for an authorization running.
    header: Mutex<Option<String>>,
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
}

/// A client id an authorization server knows, and how it authenticates there.
#[derive(Debug, Clone)]
struct Registered {
    client_id: String,
    client_secret: Option<String>,
    method: String,
}

/// What discovery found: who authorizes, and the resource to name.
struct Discovered {
    server: AuthorizationServer,
    resource: String,
    scopes_supported: Vec<String>,
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|since| since.as_secs()).unwrap_or_default()
}

impl OAuthState {
    pub(crate) fn new(config: OAuth, server_url: &str) -> Result<OAuthState, String> {
        let fetcher = Fetcher::new()?;
        let mut held = Held::default();
        let stored = config.store.load(server_url);
        let header = stored.as_ref().map(|tokens| format!("Bearer {}", tokens.access_token));
        if let Some(tokens) = stored {
            held.requested = tokens.scope.iter().flat_map(|scope| scope.split_whitespace()).map(str::to_owned).collect();
            held.clients.insert(
                tokens.issuer.clone(),
                Registered {
                    client_id: tokens.client_id.clone(),
                    client_secret: tokens.client_secret.clone(),
                    method: tokens.token_endpoint_auth_method.clone(),
                },
            );
            held.tokens = Some(tokens);
        }
        Ok(OAuthState {
            config,
            fetcher,
            server_url: server_url.to_owned(),
            held: tokio::sync::Mutex::new(held),
            header: Mutex::new(header),
        })
    }

    /// The `Authorization` header to send now, refreshing a token about to expire first.
    pub(crate) async fn authorization(&self) -> Option<String> {
        let expiring = {
            let held = self.held.try_lock();
            match held {
                Ok(held) => held
                    .tokens
                    .as_ref()
                    .and_then(|tokens| tokens.expires_at.filter(|_| tokens.refresh_token.is_some()))
                    .is_some_and(|expires_at| expires_at <= now() + REFRESH_MARGIN_SECONDS),
                Err(_) => false,
            }
        };
        if expiring {
            let mut held = self.held.lock().await;
            if let Some((server, resource)) = held.source.clone()
                && let Err(err) = self.refresh(&mut held, &server, &resource).await
            {
                tracing::debug!(target: "wharf_client", "the token could not be refreshed ahead of time: {err}");
            }
        }
        self.header()
    }

    fn header(&self) -> Option<String> {
        self.header.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Acts on a refusal of a request sent with `sent_with`: authorizes (or refreshes, or asks
    /// for more scopes), after which the request may be sent again. An error says why it may
    /// not.
    pub(crate) async fn refused(
        &self,
        status: u16,
        www_authenticate: Option<&str>,
        sent_with: Option<&str>,
    ) -> Result<(), String> {
        let mut held = self.held.lock().await;
        if self.header().as_deref() != sent_with {
            // Another request authorized while this one waited: send it again with the new token.
            return Ok(());
        }
        let challenge = www_authenticate.and_then(challenge::parse).unwrap_or_default();
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
        self.authorize(&mut held, &discovered, scopes).await
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
        self.authorize(held, &discovered, scopes).await
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
                Ok(Discovered { server, resource: resource.resource, scopes_supported: resource.scopes_supported })
            }
            None => {
                let origin = form::parts(&self.server_url).map(|parts| parts.origin()).unwrap_or_default();
                let server = discovery::authorization_server(&self.fetcher, &origin)
                    .await?
                    .unwrap_or_else(|| discovery::default_endpoints(&origin));
                Ok(Discovered { server, resource: self.server_url.clone(), scopes_supported: Vec::new() })
            }
        }
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
            Registered { client_id: pre.client_id.clone(), client_secret: pre.client_secret.clone(), method }
        } else if let (true, Some(url)) = (server.client_id_metadata_documents, &self.config.client_metadata_url) {
            Registered { client_id: url.clone(), client_secret: None, method: "none".to_owned() }
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
            "redirect_uris": [self.config.authorizer.redirect_uri()],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": requested,
            "application_type": "native",
        });
        let answer = self.fetcher.post_json(endpoint, &metadata).await?;
        let document = answer.json().filter(|_| answer.is_success()).ok_or_else(|| {
            format!("client registration at {endpoint} answered {}: {}", answer.status, crate::router::excerpt(&answer.body))
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
        Ok(Registered { client_id, client_secret, method })
    }

    /// The authorization code flow with PKCE: the user's visit, the redirect checked (`state`,
    /// `iss`), the code exchanged for tokens.
    async fn authorize(&self, held: &mut Held, discovered: &Discovered, mut scopes: BTreeSet<String>) -> Result<(), String> {
        let server = &discovered.server;
        let client = self.identity(held, server).await?;
        if server.scopes_supported.iter().any(|scope| scope == "offline_access") {
            scopes.insert("offline_access".to_owned());
        }
        let scope = scopes.iter().cloned().collect::<Vec<_>>().join(" ");
        let verifier = pkce::random_token()?;
        let challenge = pkce::challenge(&verifier);
        let state = pkce::random_token()?;
        let redirect_uri = self.config.authorizer.redirect_uri();
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
        let url = form::with_query(&server.authorization_endpoint, &params);
        let redirected = self.config.authorizer.authorize(url).await?;
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
                return Err(format!("the redirect names the issuer `{iss}`, not `{}`: refused (RFC 9207)", server.issuer));
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
        let tokens = self.token_request(server, &client, &pairs, None).await?;
        held.requested = scopes;
        self.keep(held, tokens, server, &discovered.resource, (!scope.is_empty()).then_some(scope));
        Ok(())
    }

    /// A new access token for the refresh token held.
    async fn refresh(&self, held: &mut Held, server: &AuthorizationServer, resource: &str) -> Result<(), String> {
        let tokens = held.tokens.clone().ok_or("no tokens to refresh")?;
        let refresh_token = tokens.refresh_token.clone().ok_or("no refresh token")?;
        let client = self.identity(held, server).await?;
        let pairs = [("grant_type", "refresh_token"), ("refresh_token", refresh_token.as_str()), ("resource", resource)];
        let fresh = self.token_request(server, &client, &pairs, Some(&refresh_token)).await?;
        self.keep(held, fresh, server, resource, tokens.scope);
        Ok(())
    }

    /// Posts to the token endpoint, authenticating as `client` does.
    async fn token_request(
        &self,
        server: &AuthorizationServer,
        client: &Registered,
        pairs: &[(&str, &str)],
        kept_refresh_token: Option<&str>,
    ) -> Result<StoredTokens, String> {
        let mut pairs = pairs.to_vec();
        let mut headers = Vec::new();
        match (client.method.as_str(), &client.client_secret) {
            ("client_secret_basic", Some(secret)) => {
                let (name, value) = fetch::basic_authorization(&client.client_id, secret);
                headers.push((name, value));
            }
            ("client_secret_post", Some(secret)) => {
                pairs.push(("client_id", client.client_id.as_str()));
                pairs.push(("client_secret", secret.as_str()));
            }
            _ => pairs.push(("client_id", client.client_id.as_str())),
        }
        let answer = self.fetcher.post_form(&server.token_endpoint, &pairs, &headers).await?;
        let document = answer.json().unwrap_or_default();
        if !answer.is_success() {
            let error = document.get("error").and_then(Value::as_str).unwrap_or("no error code");
            return Err(format!("the token endpoint answered {}: {error}", answer.status));
        }
        let text = |key: &str| document.get(key).and_then(Value::as_str).map(str::to_owned);
        let access_token = text("access_token").ok_or("the token endpoint's answer has no access_token")?;
        let token_type = text("token_type").unwrap_or_else(|| "Bearer".to_owned());
        if !token_type.eq_ignore_ascii_case("bearer") {
            return Err(format!("the token endpoint issued a `{token_type}` token; this client uses bearer tokens"));
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
        *self.header.lock().unwrap_or_else(PoisonError::into_inner) = Some(format!("Bearer {}", tokens.access_token));
        self.config.store.save(&self.server_url, &tokens);
        held.tokens = Some(tokens);
        held.source = Some((server.clone(), resource.to_owned()));
    }
}

/// How a client with or without a secret authenticates at `server`'s token endpoint.
fn token_method(server: &AuthorizationServer, has_secret: bool) -> String {
    if !has_secret {
        return "none".to_owned();
    }
    let supported = server.token_endpoint_auth_methods.clone().unwrap_or_else(|| vec!["client_secret_basic".to_owned()]);
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
