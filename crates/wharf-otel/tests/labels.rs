//! Tool and prompt names as metric labels (issue 38): names the server does not have share
//! one label, `_OTHER`, so that a flood of made-up names leaves `/metrics` small.

use std::sync::Arc;

use serde_json::json;
use wharf_http::HttpOptions;
use wharf_otel::Telemetry;
use wharf_server::testing::InMemoryClient;
use wharf_testkit::raw_http;

mod support;
use support::server;

/// The body of a GET of `path` on `port`.
async fn get(port: u16, path: &str) -> String {
    let reply = raw_http::send_to(port, "GET", path, &[], "").await;
    assert_eq!(reply.status, 200, "{}", &reply.body[..reply.body.len().min(300)]);
    reply.body
}

/// 2,000 calls of tools that do not exist, each with a name of its own 1,000 bytes long, and
/// as many prompts: one `_OTHER` series each, not one per name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_names_share_one_label_and_metrics_stay_small() {
    let telemetry = Arc::new(Telemetry::builder("otel-attributes").prometheus().build().unwrap());
    let server = server(&telemetry);
    let client = InMemoryClient::latest_session(server.clone()).await;
    for index in 0..2_000 {
        let name = format!("{index:04}{}", "n".repeat(996));
        client.request("tools/call", json!({"name": name})).await.unwrap_err();
        client.request("prompts/get", json!({"name": name})).await.unwrap_err();
    }
    client.call_tool("echo", json!({})).await.unwrap();
    client.request("prompts/get", json!({"name": "greet"})).await.unwrap();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let scraped = telemetry.clone();
    let options = HttpOptions::default().metrics_endpoint("/metrics", move || scraped.prometheus_text());
    tokio::spawn(wharf_http::serve(listener, server).options(options).into_future());
    let text = get(port, "/metrics").await;
    assert!(text.len() < 64 * 1024, "/metrics answered {} bytes", text.len());
    let count = |label: &str| {
        text.lines()
            .find(|line| line.starts_with("mcp_server_operation_duration_seconds_count{") && line.contains(label))
            .unwrap_or_else(|| panic!("no series with {label} in:\n{text}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(count("gen_ai_tool_name=\"_OTHER\""), "2000");
    assert_eq!(count("gen_ai_prompt_name=\"_OTHER\""), "2000");
    assert_eq!(count("gen_ai_tool_name=\"echo\""), "1", "a tool the server has keeps its name");
    assert_eq!(count("gen_ai_prompt_name=\"greet\""), "1");
    assert!(!text.contains("nnnnnnnn"), "no made-up name is a label");
}
