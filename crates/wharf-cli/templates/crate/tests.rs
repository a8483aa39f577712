//! The server driven in memory, as a 2025 session and with 2026-07-28 stateless requests.

use serde_json::json;
use wharf::protocol::ClientCapabilities;
use wharf::testing::InMemoryClient;

#[tokio::test]
async fn add_adds_in_both_eras() {
    let server = {{crate}}::server().unwrap();
    for client in [
        InMemoryClient::latest_session(server.clone()).await,
        InMemoryClient::stateless(server.clone(), ClientCapabilities::default()),
    ] {
        let sum = client.call_tool("add", json!({"a": 2, "b": 3.5})).await.unwrap();
        assert_eq!(sum.first_text(), Some("5.5"));
        let missing = client.call_tool("add", json!({"a": 2})).await.unwrap();
        assert_eq!(missing.is_error, Some(true), "`b` is required");
    }
}

#[tokio::test]
async fn the_prompt_and_the_resource_are_served() {
    let client = InMemoryClient::latest_session({{crate}}::server().unwrap()).await;
    let prompt = client.request("prompts/get", json!({"name": "review", "arguments": {"code": "fn main() {}"}})).await;
    let text = prompt.unwrap()["messages"][0]["content"]["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.ends_with("fn main() {}"), "{text}");
    let about = client.request("resources/read", json!({"uri": "info://about"})).await.unwrap();
    assert_eq!(about["contents"][0]["mimeType"], "text/plain");
}
