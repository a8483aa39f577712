//! `subscriptions/listen` on the in-memory (stdio) transport: acknowledgement first, the
//! filter narrowed to what the server offers, tagged notifications for each listener, graceful
//! close with a result, and `notifications/cancelled` to stop listening.

use std::time::Duration;

use serde_json::{Value, json};
use wharf_protocol::{ClientCapabilities, ProtocolVersion, RequestId};
use wharf_server::testing::InMemoryClient;

use wharf_testkit::fixture;
use wharf_testkit::schemas::assert_valid;

const WAIT: Duration = Duration::from_secs(5);

/// The next notification of the subscription `id`, skipping other subscriptions' messages.
async fn next_for(client: &InMemoryClient, id: &str) -> Value {
    loop {
        let message = client.next_notification(WAIT).await.expect("a notification in time");
        if message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id {
            return message;
        }
    }
}

#[tokio::test]
async fn listeners_hear_what_they_asked_for_tagged_until_the_server_ends_them() {
    let server = fixture::server();
    let client = InMemoryClient::stateless(server.clone(), ClientCapabilities::default());
    let tools_only = client
        .start_request(
            RequestId::string("tools"),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "unknownKind": true}}),
        )
        .await;
    let ack = next_for(&client, "tools").await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
    let everything = client
        .start_request(
            RequestId::string("all"),
            "subscriptions/listen",
            json!({"notifications": {"promptsListChanged": true, "resourcesListChanged": true,
                "resourceSubscriptions": ["vault://secret"]}}),
        )
        .await;
    let ack = next_for(&client, "all").await;
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"], json!(["vault://secret"]));

    assert!(server.remove_tool("echo"));
    let changed = next_for(&client, "tools").await;
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert!(server.remove_prompt("greeting"));
    server.notify_resource_updated("vault://secret");
    server.notify_resource_updated("config://app");
    let first = next_for(&client, "all").await;
    assert_eq!(first["method"], "notifications/prompts/list_changed");
    let second = next_for(&client, "all").await;
    assert_eq!(second["method"], "notifications/resources/updated");
    assert_eq!(second["params"]["uri"], "vault://secret");

    server.end_subscriptions();
    for (answer, id) in [(tools_only, "tools"), (everything, "all")] {
        let result = tokio::time::timeout(WAIT, answer).await.unwrap().unwrap().unwrap();
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["_meta"]["io.modelcontextprotocol/subscriptionId"], id);
    }
    // The tools listener never heard of prompts or resources, nor the other of tools.
    let received = client.received();
    let heard = |id: &str| -> Vec<String> {
        received
            .iter()
            .filter(|message| message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id)
            .filter_map(|message| message["method"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(heard("tools"), ["notifications/subscriptions/acknowledged", "notifications/tools/list_changed"]);
    assert_eq!(
        heard("all"),
        [
            "notifications/subscriptions/acknowledged",
            "notifications/prompts/list_changed",
            "notifications/resources/updated"
        ]
    );
    assert_valid(&client, ProtocolVersion::V2026_07_28);
}

// On tokio's paused clock, time moves only once every task waits: the waits below that find
// nothing are decided after the server handled everything it was sent, not by a real timer.
#[tokio::test(start_paused = true)]
async fn a_cancelled_listener_stops_and_gets_no_answer() {
    let server = fixture::server();
    let client = InMemoryClient::stateless(server.clone(), ClientCapabilities::default());
    let answer = client
        .start_request(
            RequestId::number(7),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .await;
    assert_eq!(next_for_number(&client, 7).await["method"], "notifications/subscriptions/acknowledged");
    client.notify("notifications/cancelled", json!({"requestId": 7})).await;
    // Returns once the server has handled the cancellation and waits for more.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(server.remove_tool("echo"));
    assert!(client.next_notification(Duration::from_millis(200)).await.is_none(), "a cancelled listener spoke");
    assert!(
        tokio::time::timeout(Duration::from_millis(100), answer).await.is_err(),
        "a cancelled request was answered"
    );
}

async fn next_for_number(client: &InMemoryClient, id: i64) -> Value {
    loop {
        let message = client.next_notification(WAIT).await.expect("a notification in time");
        if message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id {
            return message;
        }
    }
}

#[tokio::test]
async fn discovery_offers_list_changes_and_subscriptions_to_listeners() {
    let client = InMemoryClient::stateless(fixture::server(), ClientCapabilities::default());
    let discovered = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(discovered["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(discovered["capabilities"]["prompts"]["listChanged"], true);
    assert_eq!(discovered["capabilities"]["resources"], json!({"listChanged": true, "subscribe": true}));
}
