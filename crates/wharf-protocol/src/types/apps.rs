//! MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension, stable 2026-01-26): a tool
//! names a `ui://` HTML view that a host renders in a sandboxed iframe. The typed `_meta.ui` of
//! a view (its content security policy, permissions, domain, border) and of a tool (its view,
//! and who may call it), with the checks a server makes before it offers them.

use serde::{Deserialize, Serialize};

/// The extension id, in `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an HTML view, the only kind the extension defines so far.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The scheme every view's URI has.
pub const VIEW_SCHEME: &str = "ui://";

/// The key of the extension's metadata in a tool's or a view's `_meta`.
pub const UI_META_KEY: &str = "ui";

/// The flat key hosts read before `_meta.ui.resourceUri` (deprecated by the extension, to be
/// removed before it is generally available): written beside the nested one meanwhile.
pub const DEPRECATED_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// A permission a view asks for; present means asked for (`{}` on the wire).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Asked {}

/// The browser features a view asks the host to allow in its iframe (the host may refuse:
/// a view detects what it got).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewPermissions {
    /// Permission Policy `camera`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<Asked>,
    /// Permission Policy `microphone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<Asked>,
    /// Permission Policy `geolocation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Asked>,
    /// Permission Policy `clipboard-write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<Asked>,
}

/// The origins a view reaches, from which the host builds its content security policy; none
/// declared means none reachable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewCsp {
    /// `connect-src`: fetch, XHR and WebSocket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// `img-src`, `script-src`, `style-src`, `font-src`, `media-src`: static resources; the
    /// only list where the extension allows a wildcard subdomain (`https://*.example.com`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// `frame-src`: nested iframes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// `base-uri`: the document's base URIs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

/// A view's `_meta.ui`, in its listing and in the contents `resources/read` returns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewMeta {
    /// The origins the view reaches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<ViewCsp>,
    /// The browser features it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<ViewPermissions>,
    /// A dedicated origin for the view's sandbox, in the form its host documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host draws a border and background around the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

/// Who may call a tool linked to a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model: the tool is in the agent's list.
    Model,
    /// The view, from the same server connection only.
    App,
}

/// A tool's `_meta.ui`: the view that renders its results, and who may call it (both the
/// model and the view when `visibility` is absent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUiMeta {
    /// The `ui://` view that renders the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
}

impl ToolUiMeta {
    /// True when the model may call the tool: hosts leave the others out of the agent's list.
    pub fn visible_to_model(&self) -> bool {
        self.visibility.as_ref().is_none_or(|visibility| visibility.contains(&Visibility::Model))
    }

    /// What is wrong with this metadata, if anything: a view URI that is not `ui://`, an empty
    /// or repeated visibility.
    pub fn problem(&self) -> Option<String> {
        if let Some(uri) = &self.resource_uri
            && let Some(problem) = view_uri_problem(uri)
        {
            return Some(problem);
        }
        let visibility = self.visibility.as_deref()?;
        if visibility.is_empty() {
            return Some("`visibility` is empty: nobody could call the tool".to_owned());
        }
        if visibility.iter().enumerate().any(|(at, caller)| visibility[..at].contains(caller)) {
            return Some("`visibility` names the same caller twice".to_owned());
        }
        None
    }
}

/// What is wrong with `uri` as a view's URI: it must be `ui://` and name something.
pub fn view_uri_problem(uri: &str) -> Option<String> {
    match uri.strip_prefix(VIEW_SCHEME) {
        None => Some(format!("`{uri}` is not a view's URI: views are `ui://` resources")),
        Some(rest) if rest.is_empty() || rest.chars().any(char::is_whitespace) => {
            Some(format!("`{uri}` is not a view's URI: it names nothing after `ui://`, or has spaces"))
        }
        Some(_) => None,
    }
}

impl ViewMeta {
    /// What is wrong with this metadata, if anything: an origin that is not one (a scheme,
    /// a host, a port at most: no path, query or keyword), a wildcard outside
    /// `resourceDomains` or anywhere but the first label, a `domain` that is empty or has
    /// spaces.
    pub fn problem(&self) -> Option<String> {
        if let Some(csp) = &self.csp {
            let lists = [
                ("connectDomains", &csp.connect_domains, false),
                ("resourceDomains", &csp.resource_domains, true),
                ("frameDomains", &csp.frame_domains, false),
                ("baseUriDomains", &csp.base_uri_domains, false),
            ];
            for (list, origins, wildcard_allowed) in lists {
                for origin in origins {
                    if let Some(problem) = origin_problem(origin, wildcard_allowed) {
                        return Some(format!("`csp.{list}`: `{origin}` {problem}"));
                    }
                }
            }
        }
        if let Some(domain) = &self.domain
            && (domain.trim().is_empty() || domain.chars().any(char::is_whitespace))
        {
            return Some(format!("`domain` `{domain}` is empty or has spaces"));
        }
        None
    }
}

/// What is wrong with `origin` as one a view declares, in the words of the message that names
/// it: `None` when it is `scheme://host[:port]`, the scheme http, https, ws or wss, and the
/// host a name, an IPv4 address or a bracketed IPv6 one, `*.` before it only when
/// `wildcard_allowed`.
fn origin_problem(origin: &str, wildcard_allowed: bool) -> Option<&'static str> {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Some("is not an origin: it has no `scheme://`");
    };
    if !matches!(scheme, "http" | "https" | "ws" | "wss") {
        return Some("has a scheme other than http, https, ws or wss");
    }
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains(['/', '?', '#', '@']) {
        return Some("is not an origin: it has a path, query, fragment or user");
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((address, after)) if address.parse::<std::net::Ipv6Addr>().is_ok() => (None, after),
            _ => return Some("has a malformed IPv6 address"),
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (Some(host), port),
            None => (Some(authority), ""),
        },
    };
    let port = port.strip_prefix(':').unwrap_or(port);
    if !port.is_empty() && port.parse::<u16>().is_err() {
        return Some("has a port that is not a number up to 65535");
    }
    // A bracketed IPv6 address needs no more checks.
    host.and_then(|host| host_problem(host, wildcard_allowed))
}

/// What is wrong with `host` as an origin's host: a domain name or an IPv4 address, with `*.`
/// before it only when `wildcard_allowed`.
fn host_problem(host: &str, wildcard_allowed: bool) -> Option<&'static str> {
    let host = match host.strip_prefix("*.") {
        Some(_) if !wildcard_allowed => {
            return Some("has a wildcard, which the extension allows in `resourceDomains` only");
        }
        Some(rest) => rest,
        None => host,
    };
    let labels_are_names = host.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    });
    if host.is_empty() || host.len() > 253 || !labels_are_names {
        return Some("has a host that is not a domain name or address (a wildcard only as `*.` before one)");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csp_problem(list: &str, origin: &str) -> Option<String> {
        let mut csp = ViewCsp::default();
        match list {
            "connect" => csp.connect_domains.push(origin.to_owned()),
            "resource" => csp.resource_domains.push(origin.to_owned()),
            "frame" => csp.frame_domains.push(origin.to_owned()),
            _ => csp.base_uri_domains.push(origin.to_owned()),
        }
        ViewMeta { csp: Some(csp), ..ViewMeta::default() }.problem()
    }

    #[test]
    fn well_formed_origins_pass_in_every_list() {
        for origin in [
            "https://api.weather.com",
            "wss://realtime.service.com",
            "http://127.0.0.1:8080",
            "https://[::1]:443",
            "https://cdn.example.com/",
            "http://localhost",
        ] {
            for list in ["connect", "resource", "frame", "base"] {
                assert_eq!(csp_problem(list, origin), None, "{origin} in {list}");
            }
        }
    }

    #[test]
    fn a_wildcard_subdomain_passes_in_resource_domains_only() {
        assert_eq!(csp_problem("resource", "https://*.cloudflare.com"), None);
        for list in ["connect", "frame", "base"] {
            let problem = csp_problem(list, "https://*.cloudflare.com").expect("refused");
            assert!(problem.contains("wildcard") && problem.contains("resourceDomains"), "{problem}");
        }
    }

    #[test]
    fn what_is_not_an_origin_is_refused_with_its_reason() {
        let cases = [
            ("*", "no `scheme://`"),
            ("'self'", "no `scheme://`"),
            ("api.weather.com", "no `scheme://`"),
            ("ftp://files.example.com", "scheme other than"),
            ("javascript://x", "scheme other than"),
            ("https://example.com/path", "path"),
            ("https://user@example.com", "user"),
            ("https://example.com?q=1", "query"),
            ("https://example.com:99999", "port"),
            ("https://example.com:http", "port"),
            ("https://[::zz]", "IPv6"),
            ("https://", "host"),
            ("https://*", "host"),
            ("https://a.*.example.com", "host"),
            ("https://*.*.example.com", "host"),
            ("https://exa mple.com", "host"),
            ("https://-bad-.example.com", "host"),
        ];
        for (origin, reason) in cases {
            let problem = csp_problem("resource", origin).unwrap_or_else(|| panic!("{origin} passed"));
            assert!(problem.contains(origin) && problem.contains(reason), "{origin}: {problem}");
            assert!(problem.starts_with("`csp.resourceDomains`"), "{problem}");
        }
    }

    #[test]
    fn a_domain_must_name_something() {
        let meta = |domain: &str| ViewMeta { domain: Some(domain.to_owned()), ..ViewMeta::default() };
        assert_eq!(meta("a904794854a047f6.claudemcpcontent.com").problem(), None);
        assert!(meta("").problem().is_some_and(|problem| problem.contains("empty")));
        assert!(meta("two words").problem().is_some_and(|problem| problem.contains("spaces")));
    }

    #[test]
    fn view_meta_has_the_extension_s_wire_shape() {
        let meta = ViewMeta {
            csp: Some(ViewCsp {
                connect_domains: vec!["https://api.openweathermap.org".to_owned()],
                resource_domains: vec!["https://cdn.jsdelivr.net".to_owned()],
                ..ViewCsp::default()
            }),
            permissions: Some(ViewPermissions { clipboard_write: Some(Asked {}), ..ViewPermissions::default() }),
            domain: None,
            prefers_border: Some(true),
        };
        let wire = serde_json::to_value(&meta).unwrap();
        assert_eq!(
            wire,
            serde_json::json!({
                "csp": {
                    "connectDomains": ["https://api.openweathermap.org"],
                    "resourceDomains": ["https://cdn.jsdelivr.net"]
                },
                "permissions": {"clipboardWrite": {}},
                "prefersBorder": true
            })
        );
        assert_eq!(serde_json::from_value::<ViewMeta>(wire).unwrap(), meta);
    }

    #[test]
    fn tool_meta_reads_and_writes_visibility() {
        let wire = serde_json::json!({"resourceUri": "ui://weather/dashboard", "visibility": ["app"]});
        let meta: ToolUiMeta = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(meta.visibility.as_deref(), Some(&[Visibility::App][..]));
        assert!(!meta.visible_to_model());
        assert_eq!(meta.problem(), None);
        assert_eq!(serde_json::to_value(&meta).unwrap(), wire);
        assert!(ToolUiMeta::default().visible_to_model(), "both callers when visibility is absent");
    }

    #[test]
    fn tool_meta_problems_are_named() {
        let meta = |uri: &str, visibility: Option<Vec<Visibility>>| ToolUiMeta {
            resource_uri: Some(uri.to_owned()),
            visibility,
        };
        let http = meta("https://example.com/view.html", None).problem().expect("not ui://");
        assert!(http.contains("ui://"), "{http}");
        assert!(meta("ui://", None).problem().is_some_and(|problem| problem.contains("names nothing")));
        let empty = meta("ui://a", Some(vec![])).problem().expect("empty visibility");
        assert!(empty.contains("empty"), "{empty}");
        let repeated = vec![Visibility::Model, Visibility::App, Visibility::Model];
        let twice = meta("ui://a", Some(repeated)).problem().expect("repeated");
        assert!(twice.contains("twice"), "{twice}");
        assert_eq!(meta("ui://a", Some(vec![Visibility::Model, Visibility::App])).problem(), None);
    }
}
