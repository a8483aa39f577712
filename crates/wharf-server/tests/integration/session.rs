//! The 2025 session era: `initialize`, version negotiation, and what needs a session.

use serde_json::json;
use wharf_protocol::{ClientCapabilities, Era, ProtocolVersion};
use wharf_server::testing::InMemoryClient;

use wharf_testkit::fixture;
use wharf_testkit::schemas::assert_valid;

#[tokio::test]
async fn every_session_revision_is_echoed_and_others_get_the_latest() {
    for version in ProtocolVersion::ALL.into_iter().filter(|version| version.era() == Era::Session) {
        let (client, init) =
            InMemoryClient::session(fixture::server(), version, ClientCapabilities::default()).await.unwrap();
        assert_eq!(init.protocol_version, version.as_str());
        assert_eq!(init.server_info.name, "fixture");
        assert_eq!(init.instructions.as_deref(), Some("Test instructions"));
        // Fields that arrived in later revisions are left out for older clients.
        assert_eq!(init.server_info.title.is_some(), version.has_titles(), "{version}");
        assert_eq!(init.server_info.icons.is_some(), version.has_icons(), "{version}");
        client.list_tools().await.unwrap();
        assert_valid(&client, version);
    }
    for requested in ["1999-01-01", "2026-07-28"] {
        let client = InMemoryClient::connect(fixture::server());
        let result = client
            .request(
                "initialize",
                json!({"protocolVersion": requested, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
            )
            .await
            .unwrap();
        assert_eq!(result["protocolVersion"], "2025-11-25", "asked for {requested}");
    }
}

#[tokio::test]
async fn capabilities_follow_from_what_is_registered() {
    let (_, init) =
        InMemoryClient::session(fixture::server(), ProtocolVersion::V2025_06_18, ClientCapabilities::default())
            .await
            .unwrap();
    let capabilities = serde_json::to_value(&init.capabilities).unwrap();
    assert_eq!(
        capabilities,
        json!({
            "logging": {},
            "completions": {},
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true}
        })
    );
    let bare = wharf_server::Server::builder("bare", "1").build().unwrap();
    let (client, init) =
        InMemoryClient::session(bare, ProtocolVersion::V2025_06_18, ClientCapabilities::default()).await.unwrap();
    assert_eq!(serde_json::to_value(&init.capabilities).unwrap(), json!({"logging": {}}));
    let err = client.list_tools().await.unwrap_err();
    assert_eq!(err.code.0, -32601, "{err:?}");
    // Every method of a capability not offered is refused the same way, `tools/call` (which
    // checks while it looks the tool up) included.
    for (method, params) in [
        ("tools/call", json!({"name": "echo", "arguments": {}})),
        ("prompts/get", json!({"name": "greet"})),
        ("resources/read", json!({"uri": "config://app"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "a", "value": ""}}),
        ),
    ] {
        let err = client.request(method, params).await.unwrap_err();
        assert_eq!(err.code.0, -32601, "{method}: {err:?}");
        assert!(err.message.contains("capability"), "{method}: {}", err.message);
    }
}

#[tokio::test]
async fn requests_before_initialize_are_refused_but_ping_is_answered() {
    let client = InMemoryClient::connect(fixture::server());
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
    let err = client.request("tools/list", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32600);
    assert!(err.message.contains("initialize"), "{}", err.message);
}

#[tokio::test]
async fn a_session_is_initialized_once() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let err = client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code.0, -32600);
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn methods_of_2026_need_stateless_meta_in_a_session() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let err = client.request("server/discover", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    let err = client.request("no/such/method", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32601);
}

#[tokio::test]
async fn batches_are_accepted_only_on_2025_03_26_sessions() {
    let batch = r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}]"#;
    let client = fixture::session(ProtocolVersion::V2025_03_26).await;
    client.send_line(batch).await;
    let reply = wharf_testkit::fixture::wait_for(&client, |message| message.is_array()).await;
    let ids: Vec<_> = reply.as_array().unwrap().iter().map(|item| item["id"].clone()).collect();
    assert_eq!(ids, vec![json!("a"), json!("b")]);
    assert_eq!(reply[1]["result"]["content"][0]["text"], "x");

    let client = fixture::session(ProtocolVersion::V2025_06_18).await;
    client.send_line(batch).await;
    let reply = wharf_testkit::fixture::wait_for(&client, |message| message.get("error").is_some()).await;
    assert_eq!(reply["error"]["code"], -32600);
    assert!(reply["error"]["message"].as_str().unwrap().contains("2025-03-26"));
}
