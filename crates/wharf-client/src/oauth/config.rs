//! How a client authorizes: the grant (a person through an [`Authorizer`], or a machine's own
//! credentials), who the client is, and where tokens are kept ([`TokenStore`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::oauth::fetch;
use crate::oauth::jws;
use crate::transport::BoxFuture;

/// Takes the user to the authorization server and brings back where it redirected.
pub trait Authorizer: Send + Sync + 'static {
    /// Where the authorization server sends the user back: registered with the server and
    /// sent in every request.
    fn redirect_uri(&self) -> String;

    /// Has the user visit `url` (a browser, a printed link) and returns the URL the
    /// authorization server redirected to, with its `code` and `state`.
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, String>>;
}

/// An authorizer for authorization servers that redirect at once, without a person (test
/// servers, and servers where consent was given before): it requests the URL itself and reads
/// the redirect's `Location` without following it.
#[derive(Clone)]
pub struct ImmediateRedirect {
    redirect_uri: String,
    fetcher: fetch::Fetcher,
}

impl ImmediateRedirect {
    /// An authorizer that registers `redirect_uri`, which nothing needs to listen on.
    pub fn new(redirect_uri: impl Into<String>) -> Result<ImmediateRedirect, crate::ClientError> {
        let fetcher = fetch::Fetcher::new().map_err(crate::ClientError::connect)?;
        Ok(ImmediateRedirect { redirect_uri: redirect_uri.into(), fetcher })
    }
}

impl std::fmt::Debug for ImmediateRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImmediateRedirect").field("redirect_uri", &self.redirect_uri).finish_non_exhaustive()
    }
}

impl Authorizer for ImmediateRedirect {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, String>> {
        Box::pin(async move { self.fetcher.redirect_target(&url).await })
    }
}

/// What a client holds for one server: its tokens, and the client registration they were
/// issued to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTokens {
    /// The authorization server that issued them.
    pub issuer: String,
    /// The access token.
    pub access_token: String,
    /// `Bearer`.
    pub token_type: String,
    /// A refresh token, if one was issued.
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    /// The scopes asked for.
    pub scope: Option<String>,
    /// The client id the tokens were issued to.
    pub client_id: String,
    /// Its secret, for a confidential client.
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint.
    pub token_endpoint_auth_method: String,
}

/// Where tokens are kept between runs, by server URL.
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens kept for `server`.
    fn load(&self, server: &str) -> Option<StoredTokens>;
    /// Keeps `tokens` for `server`.
    fn save(&self, server: &str, tokens: &StoredTokens);
    /// Tries to keep the other processes that share this store from refreshing tokens until
    /// the hold is dropped, so that each refresh token is spent once: an authorization server
    /// that rotates refresh tokens may revoke the whole grant when one is used twice. A store
    /// no other process shares keeps this default.
    fn try_hold_refresh(&self) -> RefreshHold {
        RefreshHold::Unshared
    }
}

/// What [`TokenStore::try_hold_refresh`] got.
#[non_exhaustive]
pub enum RefreshHold {
    /// Held until this value is dropped.
    Held(Box<dyn Send>),
    /// Another process holds it: try again shortly.
    Busy,
    /// No other process shares the store: nothing to hold.
    Unshared,
}

impl std::fmt::Debug for RefreshHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RefreshHold::Held(_) => "Held",
            RefreshHold::Busy => "Busy",
            RefreshHold::Unshared => "Unshared",
        })
    }
}

/// Tokens kept in memory, for the life of the process (the default).
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, StoredTokens>>,
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> Option<StoredTokens> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).get(server).cloned()
    }

    fn save(&self, server: &str, tokens: &StoredTokens) {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).insert(server.to_owned(), tokens.clone());
    }
}

/// A client registered with an authorization server beforehand.
#[derive(Debug, Clone)]
pub struct PreRegistered {
    /// The client id.
    pub client_id: String,
    /// Its secret, for a confidential client.
    pub client_secret: Option<String>,
    /// The authorization server it is registered with; `None` for any.
    pub issuer: Option<String>,
}

/// Enterprise-managed authorization (SEP-990): the user's identity token from the
/// enterprise's identity provider is exchanged there for an identity assertion grant (ID-JAG)
/// for the MCP server's authorization server, which exchanges it for an access token.
#[derive(Debug, Clone)]
pub struct EnterpriseManaged {
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: String,
    /// The user's identity token (an OpenID Connect ID token) from the identity provider.
    pub id_token: String,
    /// This client's id at the identity provider, if it needs one.
    pub idp_client_id: Option<String>,
    /// This client's id at the MCP server's authorization server.
    pub client_id: String,
    /// Its secret there.
    pub client_secret: String,
}

/// How a client obtains its tokens.
#[derive(Clone)]
pub(crate) enum Grant {
    /// A person authorizes: the authorization code flow with PKCE.
    AuthorizationCode(Arc<dyn Authorizer>),
    /// A machine client with credentials of its own (the client credentials grant).
    ClientCredentials { client_id: String, credential: Credential },
    /// A workload's signed assertion, exchanged for a token (RFC 7523's JWT bearer grant).
    JwtBearer { assertion: String, client_id: Option<String> },
    /// An identity token exchanged through the enterprise's identity provider.
    Enterprise(EnterpriseManaged),
}

/// How a machine client authenticates.
#[derive(Clone)]
pub(crate) enum Credential {
    /// A shared secret, sent with HTTP Basic.
    Secret(String),
    /// A private key that signs client assertions (`private_key_jwt`).
    PrivateKey(jws::EsKey),
}

/// How a client authorizes with OAuth; install with
/// [`ClientOptions::oauth`](crate::ClientOptions::oauth).
#[derive(Clone)]
pub struct OAuth {
    pub(crate) grant: Grant,
    pub(crate) client_name: String,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) pre_registered: Option<PreRegistered>,
    pub(crate) store: Arc<dyn TokenStore>,
    /// Scopes asked for in every new authorization, beside those the server names.
    pub(crate) scopes: BTreeSet<String>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// OAuth with `authorizer` for the user's step; the client registers itself dynamically
    /// unless told otherwise.
    pub fn new(authorizer: impl Authorizer) -> OAuth {
        OAuth::with_grant(Grant::AuthorizationCode(Arc::new(authorizer)))
    }

    /// A machine client with a client id and secret (the client credentials grant, HTTP Basic
    /// at the token endpoint).
    pub fn client_credentials(client_id: impl Into<String>, client_secret: impl Into<String>) -> OAuth {
        let credential = Credential::Secret(client_secret.into());
        OAuth::with_grant(Grant::ClientCredentials { client_id: client_id.into(), credential })
    }

    /// A machine client that signs its assertions with a P-256 key (`private_key_jwt`, ES256),
    /// given as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) that carries the public
    /// key beside the private one, as the keys openssl and WebCrypto make do.
    pub fn client_credentials_with_key(
        client_id: impl Into<String>,
        private_key_pem: &str,
    ) -> Result<OAuth, crate::ClientError> {
        let key = jws::EsKey::from_pkcs8_pem(private_key_pem).map_err(crate::ClientError::connect)?;
        let credential = Credential::PrivateKey(key);
        Ok(OAuth::with_grant(Grant::ClientCredentials { client_id: client_id.into(), credential }))
    }

    /// A workload identity's signed assertion (a JWT for the authorization server), exchanged
    /// for a token once (RFC 7523).
    pub fn jwt_bearer(assertion: impl Into<String>, client_id: Option<String>) -> OAuth {
        OAuth::with_grant(Grant::JwtBearer { assertion: assertion.into(), client_id })
    }

    /// Enterprise-managed authorization (SEP-990).
    pub fn enterprise_managed(grant: EnterpriseManaged) -> OAuth {
        OAuth::with_grant(Grant::Enterprise(grant))
    }

    fn with_grant(grant: Grant) -> OAuth {
        OAuth {
            grant,
            client_name: "wharf-client".to_owned(),
            client_metadata_url: None,
            pre_registered: None,
            store: Arc::new(MemoryTokenStore::default()),
            scopes: BTreeSet::new(),
        }
    }

    /// The name the client registers under.
    pub fn client_name(mut self, name: impl Into<String>) -> OAuth {
        self.client_name = name.into();
        self
    }

    /// The `https` URL of this client's metadata document, used as its client id where the
    /// authorization server accepts such documents (instead of registering).
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> OAuth {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// A client id (and secret) registered beforehand with `issuer` (any, when `None`).
    pub fn pre_registered(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
        issuer: Option<String>,
    ) -> OAuth {
        self.pre_registered = Some(PreRegistered { client_id: client_id.into(), client_secret, issuer });
        self
    }

    /// Asks for `scopes` too in every new authorization, beside those the server's challenge
    /// names: for what only some calls need, asked for before a call is refused.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> OAuth {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Keeps tokens in `store` (in memory unless set).
    pub fn token_store(mut self, store: impl TokenStore) -> OAuth {
        self.store = Arc::new(store);
        self
    }
}
