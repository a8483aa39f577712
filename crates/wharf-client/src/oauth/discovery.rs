//! Finding who authorizes access to a server: its protected resource metadata (RFC 9728,
//! from the challenge's `resource_metadata` or the well-known URLs), checked to name this
//! server, then its authorization server's metadata (RFC 8414 or OpenID Connect Discovery),
//! checked to name the issuer exactly.

use serde_json::{Map, Value};

use wharf_oauth::{
    authorization_server_metadata_urls, is_secure_enough, names_server, protected_resource_metadata_urls,
};

use crate::oauth::fetch::Fetcher;

/// A server's protected resource metadata.
#[derive(Debug, Clone)]
pub(crate) struct ProtectedResource {
    /// The resource identifier, exactly as published: sent as `resource` as it is.
    pub(crate) resource: String,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    /// True when the resource says it takes DPoP-bound tokens (RFC 9449 §5.1's metadata).
    pub(crate) accepts_dpop: bool,
}

/// What the client needs of an authorization server.
#[derive(Debug, Clone, Default)]
pub(crate) struct AuthorizationServer {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    pub(crate) registration_endpoint: Option<String>,
    pub(crate) scopes_supported: Vec<String>,
    /// `None` when the metadata does not say (RFC 8414 then means `client_secret_basic`).
    pub(crate) token_endpoint_auth_methods: Option<Vec<String>>,
    /// The server promises `iss` in its redirects (RFC 9207).
    pub(crate) iss_supported: bool,
    /// Client ID metadata documents may be used as client ids.
    pub(crate) client_id_metadata_documents: bool,
    /// The algorithms the server takes DPoP proofs in (RFC 9449).
    pub(crate) dpop_algorithms: Vec<String>,
    /// Known from metadata, not assumed (the 2025-03-26 fallback has no issuer to check).
    pub(crate) from_metadata: bool,
}

fn strings(object: &Map<String, Value>, key: &str) -> Option<Vec<String>> {
    object
        .get(key)
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

fn string(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The server's protected resource metadata: from `named` (the challenge's
/// `resource_metadata`) when given, else the well-known URL for the server's path, else (only
/// when nothing was named) the root one. `Ok(None)` when the server publishes none; an error
/// when it names another resource.
pub(crate) async fn protected_resource(
    fetcher: &Fetcher,
    server_url: &str,
    named: Option<&str>,
) -> Result<Option<ProtectedResource>, String> {
    let candidates = protected_resource_metadata_urls(server_url, named)
        .ok_or_else(|| format!("`{server_url}` is not an http(s) URL"))?;
    for candidate in candidates {
        let Ok(fetched) = fetcher.get(&candidate).await else { continue };
        let Some(document) = fetched.json().filter(|_| fetched.is_success()) else { continue };
        let Some(resource) = string(&document, "resource") else { continue };
        if !names_server(&resource, server_url) {
            return Err(format!(
                "the protected resource metadata at {candidate} is for `{resource}`, not for this server ({server_url}); \
                 refusing to authorize"
            ));
        }
        return Ok(Some(ProtectedResource {
            resource,
            authorization_servers: strings(&document, "authorization_servers").unwrap_or_default(),
            scopes_supported: strings(&document, "scopes_supported").unwrap_or_default(),
            accepts_dpop: strings(&document, "dpop_signing_alg_values_supported").is_some_and(|algs| !algs.is_empty())
                || document.get("dpop_bound_access_tokens_required") == Some(&Value::Bool(true)),
        }));
    }
    Ok(None)
}

/// The metadata of the authorization server `issuer`, from the well-known URLs in the order
/// the MCP authorization spec gives; a document naming another issuer is not used (an error
/// when no other is found). `Ok(None)` when there is no document at all.
pub(crate) async fn authorization_server(
    fetcher: &Fetcher,
    issuer: &str,
) -> Result<Option<AuthorizationServer>, String> {
    let candidates = authorization_server_metadata_urls(issuer)
        .ok_or_else(|| format!("the issuer `{issuer}` is not an http(s) URL"))?;
    let mut mismatch = None;
    for candidate in candidates {
        let Ok(fetched) = fetcher.get(&candidate).await else { continue };
        let Some(document) = fetched.json().filter(|_| fetched.is_success()) else { continue };
        let named = string(&document, "issuer").unwrap_or_default();
        if named != issuer {
            mismatch = Some(format!("the metadata at {candidate} names the issuer `{named}`, not `{issuer}`"));
            continue;
        }
        let endpoint = |key: &str| {
            string(&document, key)
                .filter(|url| is_secure_enough(url))
                .ok_or_else(|| format!("the metadata at {candidate} has no usable `{key}`"))
        };
        return Ok(Some(AuthorizationServer {
            issuer: named,
            authorization_endpoint: endpoint("authorization_endpoint")?,
            token_endpoint: endpoint("token_endpoint")?,
            registration_endpoint: string(&document, "registration_endpoint"),
            scopes_supported: strings(&document, "scopes_supported").unwrap_or_default(),
            token_endpoint_auth_methods: strings(&document, "token_endpoint_auth_methods_supported"),
            iss_supported: document.get("authorization_response_iss_parameter_supported") == Some(&Value::Bool(true)),
            client_id_metadata_documents: document.get("client_id_metadata_document_supported")
                == Some(&Value::Bool(true)),
            dpop_algorithms: strings(&document, "dpop_signing_alg_values_supported").unwrap_or_default(),
            from_metadata: true,
        }));
    }
    match mismatch {
        Some(mismatch) => Err(mismatch),
        None => Ok(None),
    }
}

/// The endpoints a 2025-03-26 server without metadata has by default: `/authorize`, `/token`
/// and `/register` at the server's origin.
pub(crate) fn default_endpoints(origin: &str) -> AuthorizationServer {
    AuthorizationServer {
        issuer: origin.to_owned(),
        authorization_endpoint: format!("{origin}/authorize"),
        token_endpoint: format!("{origin}/token"),
        registration_endpoint: Some(format!("{origin}/register")),
        ..AuthorizationServer::default()
    }
}
