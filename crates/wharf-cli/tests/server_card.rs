//! `wharf check` holds an HTTP server's Server Card against what the server says once
//! connected: a server (the demo's engine behind `wharf::http::McpService`) whose card, served
//! by hand at `<endpoint>/server-card`, claims another version and a revision it does not speak,
//! without an `ETag` or CORS, fails naming both, and warns of the rest; `wharf serve --http
//! --no-server-card` publishes none, which the check skips.

use std::convert::Infallible;
use std::process::{Command, Stdio};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tower_service::Service;
use wharf::http::{HttpOptions, McpBody, McpService};
use wharf_testkit::process::Process;

const WHARF: &str = env!("CARGO_BIN_EXE_wharf");

type Body = Either<McpBody, Full<Bytes>>;

/// The demo's endpoint on a free port, its card replaced by `card`.
async fn serve_with_card(card: Value) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let service = McpService::new(wharf_demo::server().unwrap(), HttpOptions::default());
    let card = Bytes::from(card.to_string());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let (service, card) = (service.clone(), card.clone());
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let mut service = service.clone();
                    let card = card.clone();
                    async move {
                        if request.uri().path() == "/mcp/server-card" {
                            let mut response = Response::new(Either::Right(Full::new(card)));
                            response.headers_mut().insert("content-type", "application/json".parse().unwrap());
                            return Ok::<Response<Body>, Infallible>(response);
                        }
                        if request.uri().path() != "/mcp" {
                            let mut missing = Response::new(Either::Right(Full::new(Bytes::new())));
                            *missing.status_mut() = http::StatusCode::NOT_FOUND;
                            return Ok(missing);
                        }
                        Ok(service.call(request).await.unwrap().map(Either::Left))
                    }
                });
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handler).await;
            });
        }
    });
    port
}

fn checks_of(output: &std::process::Output) -> Vec<(String, String, String)> {
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|check| check["section"] == "server card")
        .map(|check| {
            let text = |key: &str| check[key].as_str().unwrap().to_owned();
            (text("name"), text("outcome"), text("detail"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_that_disagrees_with_its_server_fails_the_check() {
    let card = json!({"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": "local/wharf-demo", "version": "9.9.9", "description": "Not quite the demo",
        "remotes": [{"type": "streamable-http", "url": "http://127.0.0.1/mcp",
            "supportedProtocolVersions": ["2025-11-25", "2027-01-01"]}]});
    let port = serve_with_card(card).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let output =
        tokio::task::spawn_blocking(move || Command::new(WHARF).args(["check", "--json", &url]).output().unwrap())
            .await
            .unwrap();
    assert_eq!(output.status.code(), Some(1), "the card's failures fail the check");
    let checks = checks_of(&output);
    let outcome = |name: &str| checks.iter().find(|check| check.0 == name).unwrap_or_else(|| panic!("{checks:#?}"));
    assert_eq!(outcome("schema").1, "pass");
    assert_eq!(outcome("media type").1, "warn");
    let version = outcome("version");
    assert_eq!(version.1, "fail");
    assert!(version.2.contains("9.9.9") && version.2.contains("0.1.0"), "{version:?}");
    let revisions = outcome("revisions");
    assert_eq!(revisions.1, "fail");
    assert!(revisions.2.contains("2027-01-01") && !revisions.2.contains("claims 2025-11-25"), "{revisions:?}");
    assert_eq!(outcome("revalidation").1, "warn");
    assert_eq!(outcome("CORS").1, "warn");
    assert_eq!(outcome("AI Catalog").1, "skip");
}

#[test]
fn a_server_without_a_card_is_skipped() {
    let mut serving = Process::spawn(
        Command::new(WHARF)
            .args(["serve", "--http", "127.0.0.1:0", "--no-server-card"])
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    );
    let banner = serving.wait_for("(Streamable HTTP)");
    let url =
        banner.split(" (Streamable HTTP)").next().and_then(|before| before.rsplit(' ').next()).unwrap().to_owned();
    let output = Command::new(WHARF).args(["check", "--json", &url]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let checks = checks_of(&output);
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!((checks[0].0.as_str(), checks[0].1.as_str()), ("fetched", "skip"));
}
