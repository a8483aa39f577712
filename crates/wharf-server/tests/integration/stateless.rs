//! The 2026-07-28 stateless era: per-request `_meta`, `server/discover`, `resultType`, cache
//! hints, and the errors the revision defines.

use serde_json::{Value, json};
use wharf_protocol::{ClientCapabilities, ProtocolVersion};
use wharf_server::testing::InMemoryClient;

use wharf_testkit::fixture;
use wharf_testkit::schemas::assert_valid;

const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn client() -> InMemoryClient {
    InMemoryClient::stateless(fixture::server(), ClientCapabilities::default())
}

#[tokio::test]
async fn discover_describes_the_server_with_cache_hints_and_server_info() {
    let client = client();
    let result = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"][0], "2026-07-28");
    assert!(result["supportedVersions"].as_array().unwrap().contains(&json!("2024-11-05")));
    assert_eq!(result["capabilities"]["tools"], json!({"listChanged": true}), "delivered to listeners");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "fixture");
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["instructions"], "Test instructions");
    assert_valid(&client, V2026);
}

#[tokio::test]
async fn every_result_carries_result_type_and_server_info_and_lists_carry_cache_hints() {
    let client = client();
    for (method, params, cacheable) in [
        ("tools/list", json!({}), true),
        ("prompts/list", json!({}), true),
        ("resources/list", json!({}), true),
        ("resources/templates/list", json!({}), true),
        ("resources/read", json!({"uri": "config://app"}), true),
        ("tools/call", json!({"name": "echo", "arguments": {"message": "m"}}), false),
        ("prompts/get", json!({"name": "greeting", "arguments": {"name": "Ann"}}), false),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "al"}}),
            false,
        ),
    ] {
        let result = client.request(method, params).await.unwrap();
        assert_eq!(result["resultType"], "complete", "{method}");
        assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"], "1.2.3", "{method}");
        assert_eq!(result.get("ttlMs").is_some(), cacheable, "{method}");
        assert_eq!(result.get("cacheScope").is_some(), cacheable, "{method}");
    }
    assert_valid(&client, V2026);
}

#[tokio::test]
async fn server_info_joins_the_result_meta_a_handler_sets() {
    let client = client();
    let result = client.request("tools/call", json!({"name": "traced"})).await.unwrap();
    assert_eq!(result["_meta"]["trace"], "abc");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "fixture");
    assert_eq!(result["resultType"], "complete");
    assert_valid(&client, V2026);
}

#[tokio::test]
async fn missing_meta_fields_are_invalid_params() {
    let client = InMemoryClient::connect(fixture::server());
    let only_capabilities = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
    let err = client.request("tools/list", only_capabilities).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("protocolVersion"), "{}", err.message);
    let only_version = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    let err = client.request("tools/list", only_version).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("clientCapabilities"), "{}", err.message);
    let err = client.request("server/discover", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    // No client info is fine.
    let minimal = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}});
    client.request("tools/list", minimal).await.unwrap();
}

#[tokio::test]
async fn unsupported_versions_name_what_is_supported() {
    let client = InMemoryClient::connect(fixture::server());
    let params = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0", "io.modelcontextprotocol/clientCapabilities": {}}});
    let err = client.request("tools/list", params).await.unwrap_err();
    assert_eq!(err.code.0, -32022);
    let data = err.data.unwrap();
    assert_eq!(data["requested"], "v999.0.0");
    assert_eq!(data["supported"][0], "2026-07-28");
    assert_valid(&client, V2026);
}

#[tokio::test]
async fn methods_removed_in_2026_are_not_found() {
    let client = client();
    for method in
        ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "unknown/method"]
    {
        let params = match method {
            "initialize" => {
                json!({"protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}})
            }
            "logging/setLevel" => json!({"level": "info"}),
            "resources/subscribe" | "resources/unsubscribe" => json!({"uri": "config://app"}),
            _ => json!({}),
        };
        let err = client.request(method, params).await.unwrap_err();
        assert_eq!(err.code.0, -32601, "{method}: {err:?}");
    }
    assert_valid(&client, V2026);
}

#[tokio::test]
async fn log_messages_flow_only_when_the_request_asks_for_a_level() {
    let quiet = client();
    quiet.call_tool("logs", json!({})).await.unwrap();
    assert!(quiet.received().iter().all(|message| message["method"] != "notifications/message"));

    let loud = InMemoryClient::stateless(fixture::server(), ClientCapabilities::default()).with_log_level("error");
    loud.call_tool("logs", json!({})).await.unwrap();
    let logs: Vec<Value> =
        loud.received().into_iter().filter(|message| message["method"] == "notifications/message").collect();
    assert_eq!(logs.len(), 1, "only the error passes the level: {logs:?}");
    assert_eq!(logs[0]["params"]["data"]["detail"], "error message");
    assert_valid(&loud, V2026);
}

#[tokio::test]
async fn missing_resources_are_invalid_params_with_the_uri() {
    let client = client();
    for uri in ["nothing://here", "users://500/profile"] {
        let err = client.request("resources/read", json!({"uri": uri})).await.unwrap_err();
        assert_eq!(err.code.0, -32602, "{uri}");
        assert_eq!(err.data.unwrap()["uri"], uri);
    }
    assert_valid(&client, V2026);
}

#[tokio::test]
async fn structured_content_may_be_an_array_and_is_mirrored_as_text() {
    let client = client();
    let result = client.call_tool("forecast", json!({"location": "Oslo", "days": 2})).await.unwrap();
    let structured = result.structured_content.unwrap();
    assert_eq!(structured, json!([{"day": 1, "high": 21}, {"day": 2, "high": 22}]));
    let wharf_protocol::ContentBlock::Text(text) = &result.content[0] else { panic!("no text mirror") };
    assert_eq!(serde_json::from_str::<Value>(&text.text).unwrap(), structured);
    let tools = client.list_tools().await.unwrap();
    let forecast = tools.tools.iter().find(|tool| tool.name == "forecast").unwrap();
    assert_eq!(forecast.output_schema.as_ref().unwrap()["type"], "array");
    assert_valid(&client, V2026);
}

#[tokio::test]
async fn client_capabilities_come_from_each_request() {
    // Without elicitation in this request's capabilities, the tool cannot ask.
    let client = client();
    let err = client.call_tool("ask_name", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32021);
    assert_eq!(err.data.unwrap()["requiredCapabilities"], json!({"elicitation": {"form": {}}}));
    assert_valid(&client, V2026);
}

#[tokio::test]
async fn stateless_and_session_requests_share_one_connection() {
    let (client, _) =
        InMemoryClient::session(fixture::server(), ProtocolVersion::V2025_06_18, ClientCapabilities::default())
            .await
            .unwrap();
    let modern = json!({
        "name": "echo",
        "arguments": {"message": "modern"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    });
    let result = client.request("tools/call", modern).await.unwrap();
    assert_eq!(result["resultType"], "complete");
    let legacy = client.call_tool("echo", json!({"message": "legacy"})).await.unwrap();
    assert_eq!(legacy.result_type, None);
}
