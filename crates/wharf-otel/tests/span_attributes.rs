//! Request attributes as an OTLP receiver gets them (issue 38): a string request id is
//! exported as its own text, and a tool name the server does not have as `_OTHER`, in the
//! protobuf bytes an in-process receiver keeps.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;
use wharf_otel::Telemetry;
use wharf_protocol::RequestId;
use wharf_server::testing::InMemoryClient;
use wharf_testkit::stub_http::{Answer, Stub};

mod support;
use support::server;

/// An OTLP/HTTP receiver on a loopback port that keeps the bodies posted to it; its endpoint.
fn receiver() -> (String, Arc<Mutex<Vec<u8>>>) {
    let stub = Stub::bind();
    let endpoint = stub.url();
    let received = Arc::new(Mutex::new(Vec::new()));
    let kept = received.clone();
    stub.serve(move |request| {
        kept.lock().unwrap().extend_from_slice(&request.body);
        Answer { status: 200, content_type: "application/x-protobuf", body: Vec::new() }
    });
    (endpoint, received)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// `key` with the string `value`, as OTLP's protobuf encodes a `KeyValue` (field 1, the key;
/// field 2, an `AnyValue` whose field 1 is the string).
fn string_attribute(key: &str, value: &str) -> Vec<u8> {
    let mut encoded = vec![0x0a, u8::try_from(key.len()).unwrap()];
    encoded.extend_from_slice(key.as_bytes());
    encoded.extend_from_slice(&[
        0x12,
        u8::try_from(value.len() + 2).unwrap(),
        0x0a,
        u8::try_from(value.len()).unwrap(),
    ]);
    encoded.extend_from_slice(value.as_bytes());
    encoded
}

#[tokio::test(flavor = "current_thread")]
async fn a_string_request_id_is_exported_as_its_own_text() {
    let (endpoint, received) = receiver();
    let telemetry = Arc::new(Telemetry::builder("otel-attributes").otlp_endpoint(endpoint).build().unwrap());
    let subscriber = tracing_subscriber::registry().with(telemetry.tracing_layer());
    let _default = tracing::subscriber::set_default(subscriber);
    let client = InMemoryClient::latest_session(server(&telemetry)).await;
    client.request_with_id(RequestId::string("abc-42"), "tools/call", json!({"name": "echo"})).await.unwrap();
    let made_up = format!("made-up-{}", "x".repeat(2_000));
    client.request_with_id(RequestId::string("other"), "tools/call", json!({"name": made_up})).await.unwrap_err();
    let exporting = telemetry.clone();
    tokio::task::spawn_blocking(move || exporting.shutdown()).await.unwrap().unwrap();

    let exported = received.lock().unwrap().clone();
    assert!(contains(&exported, &string_attribute("jsonrpc.request.id", "abc-42")), "the id without its quotes");
    assert!(!contains(&exported, b"\"abc-42\""), "no JSON quotes");
    assert!(contains(&exported, &string_attribute("gen_ai.tool.name", "echo")));
    assert!(contains(&exported, &string_attribute("gen_ai.tool.name", "_OTHER")), "a made-up name is _OTHER");
    assert!(!contains(&exported, "x".repeat(300).as_bytes()), "no made-up name is exported whole");
}
