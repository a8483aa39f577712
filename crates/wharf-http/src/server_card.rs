//! The Server Card (SEP-2127, a draft: `modelcontextprotocol/experimental-ext-server-card`): a
//! public document that tells a client, before it connects, what the server is and where and
//! how to reach it, and the AI Catalog entry that points to it. Made from the server itself
//! (its name, title, version, description, icons and website; the revisions it speaks) and what
//! [`ServerCard`] adds.

use serde_json::{Map, Value, json};
use wharf_protocol::{Implementation, ProtocolVersion};

/// The media type of a Server Card.
pub(crate) const CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";
/// The media type of an AI Catalog.
pub(crate) const CATALOG_MEDIA_TYPE: &str = "application/ai-catalog+json";
/// The schema every card names.
const CARD_SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/// Where the card is, below the endpoint's path.
pub(crate) const CARD_SUFFIX: &str = "/server-card";
/// The AI Catalog's well-known path.
pub(crate) const CATALOG_PATH: &str = "/.well-known/ai-catalog.json";
/// Where many sites still look for a card.
pub(crate) const LEGACY_CARD_PATH: &str = "/.well-known/mcp/server-card.json";

/// The longest `title` and `description` a card may carry.
const MAX_TEXT: usize = 100;

/// What a server's Server Card says beside what the server itself tells: turn it on with
/// [`HttpOptions::server_card`](crate::HttpOptions::server_card).
///
/// The card is served at `<endpoint>/server-card` (`application/mcp-server-card+json`), also
/// at `/.well-known/mcp/server-card.json`, and an AI Catalog naming it at
/// `/.well-known/ai-catalog.json`: to anyone, even when the endpoint needs a token, with a
/// strong `ETag` (a matching `If-None-Match` gets 304), `Cache-Control` and CORS open to every
/// origin, as the draft asks. The `Host` check still applies.
///
/// ```
/// use wharf_http::{HttpOptions, ServerCard};
///
/// let card = ServerCard::new()
///     .name("com.example/weather")
///     .url("https://mcp.example.com/mcp")
///     .repository("https://github.com/example/weather", "github");
/// let options = HttpOptions::default().server_card(card);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ServerCard {
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    website_url: Option<String>,
    repository: Option<Value>,
    url: Option<String>,
    headers: Vec<Value>,
    identifier: Option<String>,
    meta: Map<String, Value>,
}

impl ServerCard {
    /// A card with nothing beside what the server tells.
    pub fn new() -> ServerCard {
        ServerCard::default()
    }

    /// The server's name in reverse-DNS form, one slash between namespace and name
    /// (`com.example/weather`). Without it: the server's own name when it has that form, else
    /// `local/NAME`.
    pub fn name(mut self, name: impl Into<String>) -> ServerCard {
        self.name = Some(name.into());
        self
    }

    /// A title other than the server's.
    pub fn title(mut self, title: impl Into<String>) -> ServerCard {
        self.title = Some(title.into());
        self
    }

    /// A description other than the server's (at most 100 characters are kept).
    pub fn description(mut self, description: impl Into<String>) -> ServerCard {
        self.description = Some(description.into());
        self
    }

    /// A website other than the server's.
    pub fn website_url(mut self, url: impl Into<String>) -> ServerCard {
        self.website_url = Some(url.into());
        self
    }

    /// Where the server's source is (`url`), and the service that hosts it (`github`).
    pub fn repository(mut self, url: impl Into<String>, source: impl Into<String>) -> ServerCard {
        self.repository = Some(json!({"url": url.into(), "source": source.into()}));
        self
    }

    /// The URL clients reach the endpoint at. Without it, the card names the URL the request
    /// for it came to (`http://` and its `Host`), which suits a server on a developer's
    /// machine; behind a proxy or TLS, name it.
    pub fn url(mut self, url: impl Into<String>) -> ServerCard {
        self.url = Some(url.into());
        self
    }

    /// A header clients send, as the draft's `KeyValueInput` (`name`, `description`,
    /// `isRequired`, `isSecret`, ...). An endpoint that authenticates already says
    /// `Authorization`.
    pub fn header(mut self, header: Value) -> ServerCard {
        self.headers.push(header);
        self
    }

    /// The AI Catalog entry's identifier. Without it, one is made from the name:
    /// `com.example/weather` is `urn:air:example.com:mcp:weather`.
    pub fn identifier(mut self, identifier: impl Into<String>) -> ServerCard {
        self.identifier = Some(identifier.into());
        self
    }

    /// A member of the card's `_meta`, namespaced (`com.example/tier`).
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> ServerCard {
        self.meta.insert(key.into(), value);
        self
    }

    /// The URL the card names for the endpoint, when one was given.
    pub(crate) fn public_url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// The card's name: the one given, the server's when it has the reverse-DNS form, else
    /// `local/NAME` with what the name pattern refuses replaced by `-`.
    fn card_name(&self, info: &Implementation) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        if is_card_name(&info.name) {
            return info.name.clone();
        }
        let cleaned: String = info
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
            .collect();
        format!("local/{}", if cleaned.is_empty() { "server" } else { &cleaned })
    }

    /// The card of the server `info` reached at `endpoint` (its URL), which authenticates
    /// requests when `authenticates`.
    pub(crate) fn document(&self, info: &Implementation, endpoint: &str, authenticates: bool) -> Value {
        let description = self
            .description
            .clone()
            .or_else(|| info.description.clone())
            .or_else(|| info.title.clone())
            .unwrap_or_else(|| format!("The {} MCP server", info.name));
        let mut card = json!({
            "$schema": CARD_SCHEMA,
            "name": self.card_name(info),
            "version": info.version,
            "description": shortened(&description),
        });
        if let Some(title) = self.title.clone().or_else(|| info.title.clone()) {
            card["title"] = Value::from(shortened(&title));
        }
        if let Some(website) = self.website_url.clone().or_else(|| info.website_url.clone()) {
            card["websiteUrl"] = Value::from(website);
        }
        if let Some(repository) = &self.repository {
            card["repository"] = repository.clone();
        }
        if let Some(icons) = info.icons.as_ref().filter(|icons| !icons.is_empty()) {
            card["icons"] = serde_json::to_value(icons).unwrap_or_default();
        }
        let versions: Vec<&str> = ProtocolVersion::ALL.iter().map(|version| version.as_str()).collect();
        let mut remote = json!({"type": "streamable-http", "url": endpoint, "supportedProtocolVersions": versions});
        let mut headers = self.headers.clone();
        if authenticates && !headers.iter().any(|header| header["name"].as_str().is_some_and(is_authorization)) {
            headers.insert(
                0,
                json!({"name": "Authorization", "description": "An OAuth 2.1 access token for this server, as `Bearer TOKEN`; \
                    the server's protected resource metadata names the authorization servers",
                    "isRequired": true, "isSecret": true}),
            );
        }
        if !headers.is_empty() {
            remote["headers"] = Value::Array(headers);
        }
        card["remotes"] = json!([remote]);
        if !self.meta.is_empty() {
            card["_meta"] = Value::Object(self.meta.clone());
        }
        card
    }

    /// The AI Catalog naming the card of the server `info`, at `card_url`.
    pub(crate) fn catalog(&self, info: &Implementation, card_url: &str) -> Value {
        let identifier = self.identifier.clone().unwrap_or_else(|| identifier_of(&self.card_name(info)));
        json!({"specVersion": "1.0", "entries": [{"identifier": identifier, "type": CARD_MEDIA_TYPE, "url": card_url}]})
    }
}

fn is_authorization(name: &str) -> bool {
    name.eq_ignore_ascii_case("authorization")
}

/// True for `namespace/name`, as the card's `name` pattern takes it.
fn is_card_name(name: &str) -> bool {
    let allowed = |part: &str, extra: &[char]| {
        !part.is_empty()
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || extra.contains(&c))
    };
    match name.split_once('/') {
        Some((namespace, rest)) => (3..=200).contains(&name.len()) && allowed(namespace, &[]) && allowed(rest, &['_']),
        None => false,
    }
}

/// `text` cut to the longest a card's `title` and `description` may be.
fn shortened(text: &str) -> String {
    if text.chars().count() <= MAX_TEXT {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_TEXT - 1).collect();
    cut.push('…');
    cut
}

/// The catalog identifier of the card named `name`: `com.example/weather` is
/// `urn:air:example.com:mcp:weather` (the namespace's labels reversed into a domain).
fn identifier_of(name: &str) -> String {
    let (namespace, server) = name.split_once('/').unwrap_or(("local", name));
    let publisher: Vec<&str> = namespace.split('.').rev().collect();
    format!("urn:air:{}:mcp:{server}", publisher.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str) -> Implementation {
        Implementation { name: name.to_owned(), version: "1.2.0".to_owned(), ..Implementation::default() }
    }

    #[test]
    fn a_card_is_made_from_the_server_and_what_the_builder_adds() {
        let card = ServerCard::new().document(&info("weather"), "http://127.0.0.1:8080/mcp", false);
        assert_eq!(card["name"], "local/weather");
        assert_eq!(card["version"], "1.2.0");
        assert_eq!(card["description"], "The weather MCP server");
        assert_eq!(card["remotes"][0]["url"], "http://127.0.0.1:8080/mcp");
        assert_eq!(
            card["remotes"][0]["supportedProtocolVersions"].as_array().unwrap().len(),
            ProtocolVersion::ALL.len()
        );
        assert!(card["remotes"][0].get("headers").is_none());

        let described = Implementation {
            title: Some("Weather".to_owned()),
            description: Some("x".repeat(300)),
            website_url: Some("https://example.com".to_owned()),
            ..info("com.example/weather")
        };
        let card = ServerCard::new()
            .repository("https://github.com/example/weather", "github")
            .meta("com.example/tier", json!("free"))
            .document(&described, "https://mcp.example.com/mcp", true);
        assert_eq!(card["name"], "com.example/weather");
        assert_eq!(card["description"].as_str().unwrap().chars().count(), 100);
        assert_eq!(
            (card["title"].clone(), card["websiteUrl"].clone()),
            (json!("Weather"), json!("https://example.com"))
        );
        assert_eq!(card["remotes"][0]["headers"][0]["name"], "Authorization");
        assert_eq!(card["_meta"]["com.example/tier"], "free");
        assert_eq!(card["repository"]["source"], "github");

        assert_eq!(ServerCard::new().card_name(&info("my server!")), "local/my-server-");
        assert!(!is_card_name("a/b/c") && !is_card_name("/x") && is_card_name("io.github.me/my_server"));
        let catalog = ServerCard::new().catalog(&described, "https://mcp.example.com/mcp/server-card");
        assert_eq!(catalog["entries"][0]["identifier"], "urn:air:example.com:mcp:weather");
        assert_eq!(catalog["entries"][0]["type"], CARD_MEDIA_TYPE);
    }
}
