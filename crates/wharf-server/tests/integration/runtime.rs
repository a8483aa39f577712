//! Components added, removed, enabled and disabled while the server runs, and the
//! notifications that tell clients about it.

use std::time::Duration;

use serde_json::json;
use wharf_protocol::ProtocolVersion;
use wharf_server::testing::InMemoryClient;
use wharf_server::{PromptDef, ResourceDef, ToolDef};

use wharf_testkit::fixture;
use wharf_testkit::schemas::assert_valid;

async fn next_method(client: &InMemoryClient) -> String {
    let notification = client.next_notification(Duration::from_secs(5)).await.expect("a notification");
    notification["method"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn changes_reach_connected_sessions_as_list_changed() {
    let server = fixture::server();
    let (client, _) =
        InMemoryClient::session(server.clone(), ProtocolVersion::V2025_11_25, fixture::all_capabilities())
            .await
            .unwrap();
    // Make sure the session is initialized before changing anything.
    client.request("ping", json!({})).await.unwrap();

    server.add_tool(ToolDef::new("late", || async { "I was added later" }).description("Added at run time")).unwrap();
    assert_eq!(next_method(&client).await, "notifications/tools/list_changed");
    let result = client.call_tool("late", json!({})).await.unwrap();
    assert_eq!(result.content.len(), 1);

    assert!(server.set_tool_enabled("late", false));
    assert_eq!(next_method(&client).await, "notifications/tools/list_changed");
    assert_eq!(client.call_tool("late", json!({})).await.unwrap_err().code.0, -32602);
    assert!(!client.list_tools().await.unwrap().tools.iter().any(|tool| tool.name == "late"));
    assert!(server.set_tool_enabled("late", true));
    assert_eq!(next_method(&client).await, "notifications/tools/list_changed");
    assert!(server.remove_tool("late"));
    assert_eq!(next_method(&client).await, "notifications/tools/list_changed");
    assert!(!server.remove_tool("late"));

    server.add_prompt(PromptDef::template("later", "x")).unwrap();
    assert_eq!(next_method(&client).await, "notifications/prompts/list_changed");
    server.add_resource(ResourceDef::text("later://r", "r", "x")).unwrap();
    assert_eq!(next_method(&client).await, "notifications/resources/list_changed");
    assert!(server.set_resource_template_enabled("users://{id}/profile", false));
    assert_eq!(next_method(&client).await, "notifications/resources/list_changed");
    let err = client.request("resources/read", json!({"uri": "users://1/profile"})).await.unwrap_err();
    assert_eq!(err.code.0, -32002);
    assert!(!server.set_resource_template_enabled("nope://{x}", false));
    assert!(server.add_tool(ToolDef::new("echo", || async { "dup" })).unwrap_err().is_registration());
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn resource_updates_go_only_to_subscribers() {
    let server = fixture::server();
    let (subscriber, _) =
        InMemoryClient::session(server.clone(), ProtocolVersion::V2025_06_18, fixture::all_capabilities())
            .await
            .unwrap();
    let (bystander, _) =
        InMemoryClient::session(server.clone(), ProtocolVersion::V2025_06_18, fixture::all_capabilities())
            .await
            .unwrap();
    subscriber.request("resources/subscribe", json!({"uri": "config://app"})).await.unwrap();
    bystander.request("ping", json!({})).await.unwrap();

    server.notify_resource_updated("config://app");
    let notification = subscriber.next_notification(Duration::from_secs(5)).await.unwrap();
    assert_eq!(
        notification,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "config://app"}})
    );
    assert!(bystander.next_notification(Duration::from_millis(200)).await.is_none());

    subscriber.request("resources/unsubscribe", json!({"uri": "config://app"})).await.unwrap();
    server.notify_resource_updated("config://app");
    assert!(subscriber.next_notification(Duration::from_millis(200)).await.is_none());
    assert_valid(&subscriber, ProtocolVersion::V2025_06_18);
}
