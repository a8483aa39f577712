//! The server driven in memory: the tools name their view, the view is served, and the button's
//! tool counts.

use serde_json::json;
use wharf::protocol::ClientCapabilities;
use wharf::testing::InMemoryClient;

#[tokio::test]
async fn the_counter_and_its_view_in_both_eras() {
    let server = {{crate}}::server().unwrap();
    for client in [
        InMemoryClient::latest_session(server.clone()).await,
        InMemoryClient::stateless(server.clone(), ClientCapabilities::default()),
    ] {
        let tools = client.request("tools/list", json!({})).await.unwrap();
        let ui = |name: &str| {
            tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name).unwrap()["_meta"]["ui"].clone()
        };
        assert_eq!(ui("show_counter")["resourceUri"], "ui://{{name}}/counter");
        assert_eq!(ui("increment")["visibility"], json!(["app"]), "only the view calls it");
        let view = client.request("resources/read", json!({"uri": "ui://{{name}}/counter"})).await.unwrap();
        assert_eq!(view["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    }
    let client = InMemoryClient::latest_session(server).await;
    let counted = client.call_tool("increment", json!({})).await.unwrap();
    assert_eq!(counted.structured_content, Some(json!({"count": 1})));
    let shown = client.call_tool("show_counter", json!({})).await.unwrap();
    assert_eq!(shown.first_text(), Some("The count is 1."), "text for the model");
}
