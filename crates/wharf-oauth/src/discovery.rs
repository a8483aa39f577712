//! Where OAuth metadata is, in the order the MCP authorization specification gives, and which
//! documents may be used: an authorization server's names its issuer exactly, a protected
//! resource's names the server or a parent path of it.

use serde_json::Value;

use crate::url::UrlParts;

/// The path under a server's origin where its protected resource metadata is (RFC 9728),
/// followed by the server's own path.
pub const PROTECTED_RESOURCE_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The metadata URLs of the authorization server `issuer`, in the order they are tried: RFC
/// 8414 with the issuer's path inserted, OpenID Connect discovery with the path inserted, then
/// (for an issuer with a path, such as a Keycloak realm) with the path appended. `None` when
/// `issuer` is not an `http(s)` URL.
pub fn authorization_server_metadata_urls(issuer: &str) -> Option<Vec<String>> {
    let parts = UrlParts::parse(issuer)?;
    let origin = parts.origin();
    let path = parts.path.trim_end_matches('/');
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    Some(urls)
}

/// Where a client looks for the protected resource metadata of the server at `server_url`:
/// the URL the server's challenge named (`resource_metadata`) when there is one, then the
/// well-known URL for the server's path, then (only when nothing was named) the one at the
/// root. `None` when `server_url` is not an `http(s)` URL.
pub fn protected_resource_metadata_urls(server_url: &str, named: Option<&str>) -> Option<Vec<String>> {
    let parts = UrlParts::parse(server_url)?;
    let path = parts.path.trim_end_matches('/');
    let mut urls = Vec::new();
    if let Some(named) = named {
        urls.push(named.to_owned());
    }
    if !path.is_empty() {
        urls.push(format!("{}{PROTECTED_RESOURCE_WELL_KNOWN}{path}", parts.origin()));
    }
    if named.is_none() {
        urls.push(format!("{}{PROTECTED_RESOURCE_WELL_KNOWN}", parts.origin()));
    }
    Some(urls)
}

/// True when the resource identifier `resource` covers the server at `server_url`: the same
/// scheme and authority, and a path that is the server's or a parent of it on a segment
/// boundary.
pub fn names_server(resource: &str, server_url: &str) -> bool {
    let (Some(resource), Some(server)) = (UrlParts::parse(resource), UrlParts::parse(server_url)) else {
        return false;
    };
    if !resource.scheme.eq_ignore_ascii_case(server.scheme)
        || !resource.authority.eq_ignore_ascii_case(server.authority)
    {
        return false;
    }
    let parent = resource.path.trim_end_matches('/');
    let path = server.path;
    path == parent || path.strip_prefix(parent).is_some_and(|rest| rest.starts_with('/'))
}

/// `Ok` when the metadata `document` is the metadata of `issuer`: its `issuer` member is
/// exactly that string (RFC 8414 §3.3), else why it may not be used.
pub fn check_issuer(document: &Value, issuer: &str) -> Result<(), String> {
    match document.get("issuer").and_then(Value::as_str) {
        Some(named) if named == issuer => Ok(()),
        Some(named) => Err(format!("it names the issuer {named}, not {issuer}")),
        None => Err(format!("it names no issuer (expected {issuer})")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn issuer_metadata_is_looked_for_in_the_order_the_specification_gives() {
        assert_eq!(
            authorization_server_metadata_urls("https://id.example.com/realms/main").unwrap(),
            [
                "https://id.example.com/.well-known/oauth-authorization-server/realms/main",
                "https://id.example.com/.well-known/openid-configuration/realms/main",
                "https://id.example.com/realms/main/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            authorization_server_metadata_urls("https://id.example.com/").unwrap(),
            [
                "https://id.example.com/.well-known/oauth-authorization-server",
                "https://id.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(authorization_server_metadata_urls("id.example.com"), None);
    }

    #[test]
    fn resource_metadata_is_looked_for_where_named_then_by_path_then_at_the_root() {
        assert_eq!(
            protected_resource_metadata_urls("http://localhost:3/mcp", None).unwrap(),
            [
                "http://localhost:3/.well-known/oauth-protected-resource/mcp",
                "http://localhost:3/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            protected_resource_metadata_urls("http://localhost:3/mcp", Some("http://localhost:3/prm")).unwrap(),
            ["http://localhost:3/prm", "http://localhost:3/.well-known/oauth-protected-resource/mcp"]
        );
    }

    #[test]
    fn a_resource_names_its_server_or_a_parent_path_only() {
        assert!(names_server("http://localhost:3/mcp", "http://localhost:3/mcp"));
        assert!(names_server("http://localhost:3", "http://localhost:3/mcp"));
        assert!(names_server("http://localhost:3/", "http://localhost:3/mcp"));
        assert!(names_server("HTTP://LOCALHOST:3/mcp", "http://localhost:3/mcp"));
        assert!(!names_server("https://evil.example.com/mcp", "http://localhost:3/mcp"));
        assert!(!names_server("http://localhost:3/mc", "http://localhost:3/mcp"));
        assert!(!names_server("http://localhost:4/mcp", "http://localhost:3/mcp"));
        assert!(!names_server("https://localhost:3/mcp", "http://localhost:3/mcp"));
    }

    #[test]
    fn a_document_for_another_issuer_is_not_used() {
        let document = json!({"issuer": "https://id.example.com", "jwks_uri": "https://id.example.com/jwks"});
        assert!(check_issuer(&document, "https://id.example.com").is_ok());
        assert!(check_issuer(&document, "https://id.example.com/").is_err());
        assert!(check_issuer(&document, "https://evil.example").is_err());
        assert!(check_issuer(&json!({}), "https://id.example.com").is_err());
    }
}
