//! Finding an issuer's metadata from its URL alone, where the client looks too
//! (`wharf_oauth::authorization_server_metadata_urls`, in the order the MCP specification
//! gives); a document whose `issuer` is not exactly the issuer it was fetched for is not used.

use serde_json::Value;
use wharf_oauth::{authorization_server_metadata_urls, check_issuer};

use crate::fetch::{FetchError, Fetcher};

/// What the resource server needs of an issuer's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IssuerMetadata {
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection_endpoint: Option<String>,
}

/// The first metadata of `issuer` found where the specification says to look.
pub(crate) async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<IssuerMetadata, FetchError> {
    let mut problems = Vec::new();
    let urls = authorization_server_metadata_urls(issuer).ok_or_else(|| format!("the issuer {issuer} is not a URL"))?;
    for url in urls {
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
    check_issuer(document, issuer)?;
    let url = |name: &str| document.get(name).and_then(Value::as_str).map(str::to_owned);
    Ok(IssuerMetadata { jwks_uri: url("jwks_uri"), introspection_endpoint: url("introspection_endpoint") })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
