//! Finding an issuer's metadata from its URL alone, in the order the MCP specification gives:
//! RFC 8414 with the path inserted, OpenID Connect discovery with the path inserted, then
//! with the path appended (what issuers with a path, Keycloak's realms say, serve). A document
//! whose `issuer` is not exactly the issuer it was fetched for is not used.

use serde_json::Value;

use crate::fetch::{FetchError, Fetcher};

/// What the resource server needs of an issuer's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IssuerMetadata {
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection_endpoint: Option<String>,
}

/// The metadata URLs of `issuer`, in the order they are tried.
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let issuer = issuer.trim_end_matches('/');
    let (scheme, rest) = issuer.split_once("://").unwrap_or(("https", issuer));
    let (host, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
    let origin = format!("{scheme}://{host}");
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls
}

/// The first metadata of `issuer` found where the specification says to look.
pub(crate) async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<IssuerMetadata, FetchError> {
    let mut problems = Vec::new();
    for url in metadata_urls(issuer) {
        match fetcher.json(&url).await {
            Ok(document) => match read(&document, issuer) {
                Ok(metadata) => return Ok(metadata),
                Err(problem) => problems.push(format!("{url}: {problem}")),
            },
            Err(problem) => problems.push(problem),
        }
    }
    Err(format!("no metadata of the issuer {issuer}: {}", problems.join("; ")))
}

/// The metadata in `document`, if it is the metadata of `issuer`.
pub(crate) fn read(document: &Value, issuer: &str) -> Result<IssuerMetadata, String> {
    let named = document.get("issuer").and_then(Value::as_str);
    match named {
        Some(named) if named == issuer => {}
        Some(named) => return Err(format!("it names the issuer {named}, not {issuer}")),
        None => return Err(format!("it names no issuer (expected {issuer})")),
    }
    let url = |name: &str| document.get(name).and_then(Value::as_str).map(str::to_owned);
    Ok(IssuerMetadata { jwks_uri: url("jwks_uri"), introspection_endpoint: url("introspection_endpoint") })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn metadata_is_looked_for_in_the_order_the_specification_gives() {
        assert_eq!(
            metadata_urls("https://id.example.com/realms/main"),
            [
                "https://id.example.com/.well-known/oauth-authorization-server/realms/main",
                "https://id.example.com/.well-known/openid-configuration/realms/main",
                "https://id.example.com/realms/main/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("https://id.example.com"),
            [
                "https://id.example.com/.well-known/oauth-authorization-server",
                "https://id.example.com/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn a_document_for_another_issuer_is_not_used() {
        let document = json!({"issuer": "https://id.example.com", "jwks_uri": "https://id.example.com/jwks"});
        assert_eq!(
            read(&document, "https://id.example.com").unwrap().jwks_uri.as_deref(),
            Some("https://id.example.com/jwks")
        );
        assert!(read(&document, "https://id.example.com/").is_err());
        assert!(read(&document, "https://evil.example").is_err());
    }
}
