//! This server as an OAuth protected resource: its resource identifier (the URL clients call),
//! where its metadata lives (RFC 9728 §3.1), and the metadata document itself.

use serde_json::{Value, json};
use wharf_oauth::PROTECTED_RESOURCE_WELL_KNOWN as WELL_KNOWN;

use crate::error::{ConfigError, ConfigErrorKind};

/// The URL clients call the MCP endpoint at, its identifier as an OAuth resource (RFC 8707):
/// `http` or `https`, without query, fragment or user information, its scheme and host in
/// lower case and without a trailing slash after a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceUrl {
    url: String,
    /// Where the path starts in `url` (its end when there is none).
    path_at: usize,
}

impl ResourceUrl {
    /// Reads and checks a resource URL, such as `https://mcp.example.com/mcp`.
    pub fn parse(url: &str) -> Result<ResourceUrl, ConfigError> {
        let refuse =
            |why: &str| Err(ConfigError::new(ConfigErrorKind::Resource, format!("the resource URL `{url}` {why}")));
        let Some((scheme, rest)) = url.split_once("://") else { return refuse("has no scheme") };
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "https" && scheme != "http" {
            return refuse("is not http or https");
        }
        if rest.contains(['?', '#']) {
            return refuse("has a query or fragment, which a resource identifier must not (RFC 8707)");
        }
        let (authority, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
        if authority.is_empty() || authority.contains('@') || authority.contains(char::is_whitespace) {
            return refuse("has no host, or user information");
        }
        let path = path.trim_end_matches('/');
        if path.contains(char::is_whitespace) {
            return refuse("has spaces in its path");
        }
        let head = format!("{scheme}://{}", authority.to_ascii_lowercase());
        let path_at = head.len();
        Ok(ResourceUrl { url: format!("{head}{path}"), path_at })
    }

    /// The URL, canonical.
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The host name, without the port: what clients send as `Host`, for
    /// `HttpOptions::add_allowed_host`.
    pub fn host(&self) -> &str {
        let authority = &self.url[self.url.find("://").map_or(0, |at| at + 3)..self.path_at];
        match authority.strip_prefix('[') {
            Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
            None => authority.split(':').next().unwrap_or_default(),
        }
    }

    /// The scheme and authority, `https://mcp.example.com:8443`: where requests to it go, for
    /// the URL a DPoP proof must name.
    pub fn origin(&self) -> &str {
        &self.url[..self.path_at]
    }

    /// The path, empty at the root of the host.
    pub fn path(&self) -> &str {
        &self.url[self.path_at..]
    }

    /// True when an audience names this resource: the same URL, with the scheme and host in
    /// any case and a trailing slash or not. A URL this one starts with is another resource.
    pub fn is_named_by(&self, audience: &str) -> bool {
        ResourceUrl::parse(audience).is_ok_and(|named| named == *self)
    }

    /// The paths its metadata is served at: the path-suffixed form (RFC 9728 §3.1), and the
    /// root form for clients that look there.
    pub fn metadata_paths(&self) -> Vec<String> {
        let mut paths = vec![format!("{WELL_KNOWN}{}", self.path())];
        if !self.path().is_empty() {
            paths.push(WELL_KNOWN.to_owned());
        }
        paths
    }

    /// The URL of the metadata, which challenges name: the path-suffixed form.
    pub fn metadata_url(&self) -> String {
        format!("{}{WELL_KNOWN}{}", &self.url[..self.path_at], self.path())
    }
}

/// The protected resource metadata (RFC 9728 §2): the resource named exactly as clients call
/// it, at every path it is served (§3.3), the authorization servers, the scopes a client should
/// ask for (never `offline_access`: refresh tokens are no resource's requirement), and tokens
/// in the `Authorization` header only.
pub(crate) fn metadata_document(
    resource: &ResourceUrl,
    authorization_servers: &[String],
    scopes: &[String],
    resource_name: Option<&str>,
) -> Value {
    let scopes: Vec<&String> = scopes.iter().filter(|scope| *scope != "offline_access").collect();
    let mut document = json!({
        "resource": resource.as_str(),
        "authorization_servers": authorization_servers,
        "bearer_methods_supported": ["header"],
    });
    if !scopes.is_empty() {
        document["scopes_supported"] = json!(scopes);
    }
    if let Some(name) = resource_name {
        document["resource_name"] = json!(name);
    }
    document
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_urls_are_canonical_and_their_metadata_is_found_where_rfc_9728_says() {
        let resource = ResourceUrl::parse("HTTPS://MCP.Example.com:8443/mcp/").unwrap();
        assert_eq!(resource.as_str(), "https://mcp.example.com:8443/mcp");
        assert_eq!(resource.path(), "/mcp");
        assert_eq!(
            resource.metadata_paths(),
            ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
        );
        assert_eq!(resource.metadata_url(), "https://mcp.example.com:8443/.well-known/oauth-protected-resource/mcp");
        let root = ResourceUrl::parse("http://127.0.0.1:9000").unwrap();
        assert_eq!(root.metadata_paths(), ["/.well-known/oauth-protected-resource"]);
        for bad in [
            "mcp.example.com/mcp",
            "ftp://x/mcp",
            "https://x/mcp?a=1",
            "https://x/mcp#f",
            "https://u@x/mcp",
            "https:///mcp",
        ] {
            assert!(ResourceUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_host_is_the_authority_without_its_port() {
        assert_eq!(ResourceUrl::parse("https://MCP.example.com:8443/mcp").unwrap().host(), "mcp.example.com");
        assert_eq!(ResourceUrl::parse("http://127.0.0.1:9/mcp").unwrap().host(), "127.0.0.1");
        assert_eq!(ResourceUrl::parse("http://[::1]:9").unwrap().host(), "::1");
    }

    #[test]
    fn only_the_resource_itself_is_its_audience() {
        let resource = ResourceUrl::parse("https://mcp.example.com/mcp").unwrap();
        assert!(resource.is_named_by("https://mcp.example.com/mcp"));
        assert!(resource.is_named_by("https://MCP.example.com/mcp/"));
        assert!(!resource.is_named_by("https://mcp.example.com"), "a prefix is another resource");
        assert!(!resource.is_named_by("https://mcp.example.com/mcp/admin"));
        assert!(!resource.is_named_by("https://mcp.example.com/MCP"), "paths are case-sensitive");
        assert!(!resource.is_named_by("http://mcp.example.com/mcp"));
    }

    #[test]
    fn the_document_names_the_resource_and_never_offline_access() {
        let resource = ResourceUrl::parse("https://mcp.example.com/mcp").unwrap();
        let servers = vec!["https://id.example.com".to_owned()];
        let scopes = vec!["mcp".to_owned(), "offline_access".to_owned()];
        let document = metadata_document(&resource, &servers, &scopes, Some("Files"));
        assert_eq!(
            document,
            json!({"resource": "https://mcp.example.com/mcp", "authorization_servers": ["https://id.example.com"],
                   "scopes_supported": ["mcp"], "bearer_methods_supported": ["header"], "resource_name": "Files"})
        );
    }
}
