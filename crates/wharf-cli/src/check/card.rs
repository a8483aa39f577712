//! The Server Card of an HTTP server (SEP-2127, a draft), fetched from `<endpoint>/server-card`
//! as a client before connecting would, and held against what the server says once connected:
//! its schema, its `version` and `name` against `serverInfo`, its revisions against those the
//! server speaks; then what the draft asks of its hosting (media type, an `ETag` answered 304,
//! CORS) and the AI Catalog at `/.well-known/ai-catalog.json` naming it.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use http::{HeaderMap, Request, Uri};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use wharf::client::{Client, NoHandler, Target};
use wharf::protocol::ProtocolVersion;

use super::connected::Connected;
use super::report::{Outcome, Report};
use super::schemas::server_card_errors;
use crate::server_args::ServerArgs;

const SECTION: &str = "server card";
const CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";
/// The largest card or catalog read.
const MAX_DOCUMENT: usize = 1 << 20;

type Fetched = (u16, HeaderMap, Bytes);

/// A GET of `url` with `headers`, its status, headers and body (at most 1 MiB).
async fn get(url: &str, headers: &[(&str, &str)], timeout: Duration) -> Result<Fetched, String> {
    let uri: Uri = url.parse().map_err(|err| format!("{url}: {err}"))?;
    let connector = wharf::client::http_connector().map_err(|err| err.to_string())?;
    let client: HttpClient<_, Empty<Bytes>> = HttpClient::builder(TokioExecutor::new()).build(connector);
    let mut request = Request::get(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Empty::new()).map_err(|err| err.to_string())?;
    let exchange = async {
        let response = client.request(request).await.map_err(|err| err.to_string())?;
        let (head, body) = response.into_parts();
        let body = Limited::new(body, MAX_DOCUMENT).collect().await.map_err(|err| err.to_string())?.to_bytes();
        Ok::<_, String>((head.status.as_u16(), head.headers, body))
    };
    tokio::time::timeout(timeout, exchange).await.map_err(|_| "no answer within the timeout".to_owned())?
}

fn header(headers: &HeaderMap, name: impl http::header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// The origin of `url` (`https://host:port`).
fn origin(url: &str) -> Option<&str> {
    let after_scheme = url.find("://")? + 3;
    let end = url[after_scheme..].find('/').map_or(url.len(), |slash| after_scheme + slash);
    Some(&url[..end])
}

/// The revisions the card claims.
fn claimed_revisions(card: &Value) -> Vec<&str> {
    card["remotes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|remote| remote["supportedProtocolVersions"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect()
}

/// Adds to what `connected` knows the revisions the card claims that a session negotiates
/// when asked for (a 2025 server lists none; each is tried).
async fn confirm_revisions(
    connected: &mut Connected,
    card: &Value,
    target: &Target,
    server: &ServerArgs,
    timeout: Duration,
) {
    let untried: Vec<ProtocolVersion> = claimed_revisions(card)
        .into_iter()
        .filter(|claimed| !connected.revisions.iter().any(|known| known == claimed))
        .filter_map(ProtocolVersion::parse)
        .collect();
    for version in untried {
        let Ok(options) = server.options(target, NoHandler) else { return };
        let asked = options.timeout(timeout).protocol_version(version);
        if let Ok(client) = Client::connect_with(target.clone(), asked).await {
            if client.protocol_version() == version {
                connected.revisions.push(version.as_str().to_owned());
            }
            client.close().await;
        }
    }
}

/// Checks the card of the endpoint at `url` (`target`, reached with `server`'s options)
/// against what the server said once `connected`.
pub(crate) async fn check(
    report: &mut Report,
    url: &str,
    target: &Target,
    server: &ServerArgs,
    mut connected: Connected,
    timeout: Duration,
) {
    let card_url = format!("{}/server-card", url.trim_end_matches('/'));
    let (status, headers, body) = match get(&card_url, &[("accept", CARD_MEDIA_TYPE)], timeout).await {
        Ok(fetched) => fetched,
        Err(err) => return report.add(SECTION, "fetched", Outcome::Warn, format!("{card_url}: {err}")),
    };
    match status {
        200 => report.add(SECTION, "fetched", Outcome::Pass, card_url.clone()),
        404 => return report.add(SECTION, "fetched", Outcome::Skip, format!("none at {card_url}")),
        other => return report.add(SECTION, "fetched", Outcome::Warn, format!("{card_url} answered {other}")),
    }
    let media_type = header(&headers, CONTENT_TYPE).unwrap_or_default();
    if media_type.split(';').next().is_some_and(|kind| kind.trim() == CARD_MEDIA_TYPE) {
        report.add(SECTION, "media type", Outcome::Pass, CARD_MEDIA_TYPE);
    } else {
        report.add(SECTION, "media type", Outcome::Warn, format!("`{media_type}`, not {CARD_MEDIA_TYPE}"));
    }
    let card: Value = match serde_json::from_slice(&body) {
        Ok(card) => card,
        Err(err) => return report.add(SECTION, "schema", Outcome::Fail, format!("not JSON: {err}")),
    };
    match server_card_errors(&card) {
        Ok(()) => report.add(SECTION, "schema", Outcome::Pass, "a ServerCard of the draft's schema"),
        Err(errors) => report.add(SECTION, "schema", Outcome::Fail, errors),
    }
    confirm_revisions(&mut connected, &card, target, server, timeout).await;
    agrees_with_the_server(report, &card, &connected);
    hosting(report, &card_url, &headers, timeout).await;
    catalog(report, url, &card_url, timeout).await;
}

/// The card's identity and revisions against what the server said once connected.
fn agrees_with_the_server(report: &mut Report, card: &Value, connected: &Connected) {
    if let Some(info) = &connected.info {
        let version = card["version"].as_str().unwrap_or_default();
        if version == info.version {
            report.add(SECTION, "version", Outcome::Pass, format!("{version}, as serverInfo says"));
        } else {
            report.add(
                SECTION,
                "version",
                Outcome::Fail,
                format!("the card says {version}, serverInfo {}", info.version),
            );
        }
        let name = card["name"].as_str().unwrap_or_default();
        let last = name.rsplit('/').next().unwrap_or(name);
        if name == info.name || last == info.name {
            report.add(SECTION, "name", Outcome::Pass, format!("{name}, as serverInfo says ({})", info.name));
        } else {
            report.add(SECTION, "name", Outcome::Fail, format!("the card says {name}, serverInfo {}", info.name));
        }
    }
    let claimed = claimed_revisions(card);
    if claimed.is_empty() || connected.revisions.is_empty() {
        return report.add(SECTION, "revisions", Outcome::Skip, "the card or the server names none");
    }
    let unspoken: Vec<&str> =
        claimed.iter().copied().filter(|version| !connected.revisions.iter().any(|known| known == version)).collect();
    if unspoken.is_empty() {
        report.add(SECTION, "revisions", Outcome::Pass, claimed.join(", "));
    } else {
        report.add(
            SECTION,
            "revisions",
            Outcome::Fail,
            format!(
                "the card claims {}, which the server does not speak (it speaks {})",
                unspoken.join(", "),
                connected.revisions.join(", ")
            ),
        );
    }
}

/// What the draft asks of a hosted card: an `ETag` a later request revalidates (304), CORS.
async fn hosting(report: &mut Report, card_url: &str, headers: &HeaderMap, timeout: Duration) {
    match header(headers, ETAG) {
        None => report.add(SECTION, "revalidation", Outcome::Warn, "no ETag"),
        Some(tag) => {
            let again = get(card_url, &[("accept", CARD_MEDIA_TYPE), (IF_NONE_MATCH.as_str(), tag)], timeout).await;
            match again {
                Ok((304, _, _)) => report.add(SECTION, "revalidation", Outcome::Pass, format!("ETag {tag}, then 304")),
                Ok((status, _, _)) => report.add(
                    SECTION,
                    "revalidation",
                    Outcome::Warn,
                    format!("If-None-Match: {tag} answered {status}, not 304"),
                ),
                Err(err) => report.add(SECTION, "revalidation", Outcome::Warn, err),
            }
        }
    }
    match header(headers, ACCESS_CONTROL_ALLOW_ORIGIN) {
        Some(origin) => report.add(SECTION, "CORS", Outcome::Pass, format!("Access-Control-Allow-Origin: {origin}")),
        None => report.add(SECTION, "CORS", Outcome::Warn, "no Access-Control-Allow-Origin: browsers cannot read it"),
    }
}

/// The AI Catalog at the endpoint's origin, and whether it names the card.
async fn catalog(report: &mut Report, url: &str, card_url: &str, timeout: Duration) {
    let Some(origin) = origin(url) else { return };
    let catalog_url = format!("{origin}/.well-known/ai-catalog.json");
    let catalog: Value = match get(&catalog_url, &[], timeout).await {
        Ok((200, _, body)) => match serde_json::from_slice(&body) {
            Ok(catalog) => catalog,
            Err(err) => {
                return report.add(SECTION, "AI Catalog", Outcome::Fail, format!("{catalog_url}: not JSON: {err}"));
            }
        },
        Ok((404, _, _)) => return report.add(SECTION, "AI Catalog", Outcome::Skip, format!("none at {catalog_url}")),
        Ok((status, _, _)) => {
            return report.add(SECTION, "AI Catalog", Outcome::Warn, format!("{catalog_url} answered {status}"));
        }
        Err(err) => return report.add(SECTION, "AI Catalog", Outcome::Warn, format!("{catalog_url}: {err}")),
    };
    let names_the_card =
        catalog["entries"].as_array().into_iter().flatten().any(|entry| {
            entry["type"] == CARD_MEDIA_TYPE && entry["url"] == card_url && entry["identifier"].is_string()
        });
    if names_the_card {
        report.add(SECTION, "AI Catalog", Outcome::Pass, format!("{catalog_url} names the card"));
    } else {
        report.add(SECTION, "AI Catalog", Outcome::Warn, format!("{catalog_url} has no entry for {card_url}"));
    }
}

#[cfg(test)]
mod tests {
    use wharf::protocol::Implementation;

    use super::*;

    #[test]
    fn the_origin_of_a_url_is_its_scheme_and_authority() {
        assert_eq!(origin("https://mcp.example.com:8443/a/mcp"), Some("https://mcp.example.com:8443"));
        assert_eq!(origin("http://127.0.0.1:80"), Some("http://127.0.0.1:80"));
        assert_eq!(origin("unix:/tmp/x.sock"), None);
    }

    #[test]
    fn a_card_naming_another_server_fails() {
        let mut report = Report { server: "s".to_owned(), checks: Vec::new() };
        let card = serde_json::json!({"name": "com.example/weather", "version": "1.0.0"});
        let info =
            Implementation { name: "notes".to_owned(), version: "1.0.0".to_owned(), ..Implementation::default() };
        agrees_with_the_server(
            &mut report,
            &card,
            &Connected { stateless: false, info: Some(info), revisions: Vec::new() },
        );
        let name = report.checks.iter().find(|check| check.name == "name").unwrap();
        assert_eq!(name.outcome, Outcome::Fail, "{name:?}");
    }

    #[test]
    fn a_card_that_claims_a_revision_the_server_does_not_speak_fails() {
        let mut report = Report { server: "s".to_owned(), checks: Vec::new() };
        let card = serde_json::json!({"name": "local/demo", "version": "2.0.0",
            "remotes": [{"type": "streamable-http", "url": "http://x/mcp", "supportedProtocolVersions": ["2025-11-25", "2026-07-28"]}]});
        let info = Implementation { name: "demo".to_owned(), version: "1.0.0".to_owned(), ..Implementation::default() };
        let connected = Connected { stateless: false, info: Some(info), revisions: vec!["2025-11-25".to_owned()] };
        agrees_with_the_server(&mut report, &card, &connected);
        let outcomes: Vec<(&str, Outcome)> =
            report.checks.iter().map(|check| (check.name.as_str(), check.outcome)).collect();
        assert_eq!(outcomes, [("version", Outcome::Fail), ("name", Outcome::Pass), ("revisions", Outcome::Fail)]);
        assert!(report.checks[2].detail.contains("2026-07-28"), "{:?}", report.checks[2]);
    }
}
