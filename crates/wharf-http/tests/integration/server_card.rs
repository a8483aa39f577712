//! The Server Card and the AI Catalog over raw HTTP: published only when asked for, made from
//! the server (valid against the draft's schema, and against its own examples: the schema
//! takes the valid ones and refuses the invalid), public beside an endpoint that needs a
//! token, cacheable (a strong `ETag`, 304 to `If-None-Match`, `HEAD`), open to every origin,
//! still behind the `Host` check, and read-only.

use serde_json::{Value, json};
use wharf_http::{AuthFuture, AuthRefusal, Authenticator, HttpOptions, ServerCard};
use wharf_server::{Server, ToolDef};
use wharf_testkit::schemas::{check_server_card, spec_dir};

use crate::support::{JSON, send, send_to, start};

/// Refuses every request: the endpoint needs a token no client here has.
struct NobodyIn;

impl Authenticator for NobodyIn {
    fn authenticate<'a>(&'a self, _: &'a http::request::Parts) -> AuthFuture<'a> {
        Box::pin(async { Err(AuthRefusal::missing()) })
    }
}

fn server() -> Server {
    Server::builder("weather", "1.4.0")
        .title("Weather")
        .description("Forecasts and alerts for any place on Earth")
        .tool(ToolDef::new("forecast", || async { "sunny" }))
        .build()
        .unwrap()
}

#[test]
fn the_drafts_own_examples_are_judged_by_its_schema() {
    for (kind, expected) in [("valid", true), ("invalid", false)] {
        let dir = spec_dir().join("ext-server-card/examples").join(kind);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let example: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(check_server_card(&example).is_ok(), expected, "{}", path.display());
        }
    }
}

#[tokio::test]
async fn a_card_and_its_catalog_are_public_cacheable_and_open_to_every_origin() {
    let off = start(server(), HttpOptions::default()).await;
    assert_eq!(send_to(off, "GET", "/mcp/server-card", &[], "").await.status, 404, "off by default");

    let card = ServerCard::new().name("com.example/weather").repository("https://github.com/example/weather", "github");
    let port = start(server(), HttpOptions::default().server_card(card).authenticate(NobodyIn)).await;
    // The endpoint needs a token; the card does not.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    assert_eq!(send(port, "POST", &JSON, &call.to_string()).await.status, 401);
    let accept = [("accept", "application/mcp-server-card+json"), ("origin", "https://elsewhere.example")];
    let fetched = send_to(port, "GET", "/mcp/server-card", &accept, "").await;
    assert_eq!(fetched.status, 200, "{fetched:?}");
    assert_eq!(fetched.header("content-type"), Some("application/mcp-server-card+json"));
    assert_eq!(fetched.header("access-control-allow-origin"), Some("*"));
    assert_eq!(fetched.header("access-control-expose-headers"), Some("ETag"));
    assert_eq!(fetched.header("cache-control"), Some("public, max-age=3600"));
    let card = fetched.json();
    check_server_card(&card).unwrap();
    assert_eq!(card["name"], "com.example/weather");
    assert_eq!((card["version"].clone(), card["title"].clone()), (json!("1.4.0"), json!("Weather")));
    assert_eq!(card["description"], "Forecasts and alerts for any place on Earth");
    let remote = &card["remotes"][0];
    assert_eq!(remote["url"], format!("http://localhost:{port}/mcp"), "the URL the request came to");
    assert_eq!(remote["supportedProtocolVersions"].as_array().unwrap().len(), 5);
    assert_eq!(remote["headers"][0]["name"], "Authorization", "an endpoint that authenticates says so");
    assert_eq!(remote["headers"][0]["isSecret"], true);

    // Revalidated: the same tag, then 304 without a body; HEAD has the headers alone.
    let tag = fetched.header("etag").unwrap().to_owned();
    assert!(tag.starts_with('"') && !tag.starts_with("W/"), "a strong tag: {tag}");
    let again = send_to(port, "GET", "/mcp/server-card", &[], "").await;
    assert_eq!(again.header("etag"), Some(tag.as_str()));
    let unchanged = send_to(port, "GET", "/mcp/server-card", &[("if-none-match", &tag)], "").await;
    assert_eq!((unchanged.status, unchanged.body.as_str()), (304, ""));
    assert_eq!(unchanged.header("etag"), Some(tag.as_str()));
    let other = send_to(port, "GET", "/mcp/server-card", &[("if-none-match", "\"other\"")], "").await;
    assert_eq!(other.status, 200);
    let head = send_to(port, "HEAD", "/mcp/server-card", &[], "").await;
    assert_eq!((head.status, head.header("etag")), (200, Some(tag.as_str())));

    // The older path serves the same card; the catalog names the card.
    let legacy = send_to(port, "GET", "/.well-known/mcp/server-card.json", &[], "").await;
    assert_eq!(legacy.json(), card);
    let catalog = send_to(port, "GET", "/.well-known/ai-catalog.json", &[], "").await;
    assert_eq!(catalog.header("content-type"), Some("application/ai-catalog+json"));
    let entry = &catalog.json()["entries"][0];
    assert_eq!(entry["identifier"], "urn:air:example.com:mcp:weather");
    assert_eq!(entry["type"], "application/mcp-server-card+json");
    assert_eq!(entry["url"], format!("http://localhost:{port}/mcp/server-card"));

    // A browser's preflight; nothing but reading; a foreign Host still refused.
    let preflight = send_to(port, "OPTIONS", "/mcp/server-card", &[("origin", "https://elsewhere.example")], "").await;
    assert_eq!(preflight.status, 204);
    assert_eq!(preflight.header("access-control-allow-headers"), Some("Content-Type, If-None-Match"));
    let posted = send_to(port, "POST", "/mcp/server-card", &JSON, "{}").await;
    assert_eq!((posted.status, posted.header("allow")), (405, Some("GET, HEAD, OPTIONS")));
    assert_eq!(send_to(port, "GET", "/mcp/server-card", &[("host", "evil.example")], "").await.status, 403);
}

#[tokio::test]
async fn a_named_url_is_the_cards_whatever_host_the_request_names() {
    let card = ServerCard::new().url("https://mcp.example.com/weather/mcp");
    let port = start(server(), HttpOptions::default().server_card(card)).await;
    let card = send_to(port, "GET", "/mcp/server-card", &[], "").await.json();
    check_server_card(&card).unwrap();
    assert_eq!(card["name"], "local/weather");
    assert_eq!(card["remotes"][0]["url"], "https://mcp.example.com/weather/mcp");
    assert!(card["remotes"][0].get("headers").is_none());
    let catalog = send_to(port, "GET", "/.well-known/ai-catalog.json", &[], "").await.json();
    assert_eq!(catalog["entries"][0]["url"], "https://mcp.example.com/weather/mcp/server-card");
    assert_eq!(catalog["entries"][0]["identifier"], "urn:air:local:mcp:weather");
}
