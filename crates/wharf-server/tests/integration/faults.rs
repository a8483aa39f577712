//! The fault boundary: panics, cancellation, duplicate ids, bad input, and requests the server
//! sends to the client.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use wharf_protocol::{ErrorObject, ProtocolVersion, RequestId, ServerRequest};
use wharf_server::testing::InMemoryClient;

use wharf_server::ServerOptions;
use wharf_testkit::fixture::wait_for;
use wharf_testkit::fixture::{self, Counters};
use wharf_testkit::schemas::assert_valid;

// A current-thread runtime answers a request that never waits in the read loop, and spawns a
// task only for one that does; a multi-threaded runtime spawns every request. The fault
// boundary is tested on both.

#[tokio::test]
async fn a_panicking_handler_gets_one_error_and_the_connection_lives_on() {
    panicking_handler_case().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_handler_gets_one_error_on_a_multi_threaded_runtime() {
    panicking_handler_case().await;
}

#[tokio::test]
async fn cancellation_stops_the_work_and_sends_no_response() {
    cancellation_case().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_stops_the_work_on_a_multi_threaded_runtime() {
    cancellation_case().await;
}

async fn panicking_handler_case() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let err = client.call_tool("panics", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32603);
    assert!(err.message.contains("boom"), "{}", err.message);
    let result = client.call_tool("echo", json!({"message": "still here"})).await.unwrap();
    assert_eq!(serde_json::to_value(&result.content).unwrap()[0]["text"], "still here");
    let responses = client.received().iter().filter(|message| message.get("id") == Some(&json!(2))).count();
    assert_eq!(responses, 1);
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

async fn cancellation_case() {
    let counters = Arc::new(Counters::default());
    let server = fixture::builder_with(counters.clone()).build().unwrap();
    let (client, _) =
        InMemoryClient::session(server, ProtocolVersion::V2025_06_18, fixture::all_capabilities()).await.unwrap();
    let id = RequestId::string("slow-1");
    let answer = client.start_request(id.clone(), "tools/call", json!({"name": "slow"})).await;
    fixture::slow_has_run(&counters, 3).await;
    client.notify("notifications/cancelled", json!({"requestId": "slow-1", "reason": "changed my mind"})).await;
    // The handler's work is dropped, so it can take no further step.
    fixture::slow_was_stopped(&counters).await;
    // The id is free again and the connection still works.
    client.request_with_id(id, "tools/call", json!({"name": "echo", "arguments": {"message": "x"}})).await.unwrap();
    drop(answer);
    let responses_to_slow =
        client.received().iter().filter(|message| message.get("id") == Some(&json!("slow-1"))).count();
    assert_eq!(responses_to_slow, 1, "only the echo answers the reused id");
}

#[tokio::test]
async fn a_duplicate_in_flight_id_is_refused() {
    let client = fixture::session(ProtocolVersion::V2025_06_18).await;
    let first = client.start_request(RequestId::number(77), "tools/call", json!({"name": "slow"})).await;
    let second = client.request_with_id(RequestId::number(77), "ping", json!({})).await.unwrap_err();
    assert_eq!(second.code.0, -32600);
    assert!(second.message.contains("in flight"));
    client.notify("notifications/cancelled", json!({"requestId": 77})).await;
    drop(first);
}

#[tokio::test]
async fn malformed_lines_get_errors_and_the_next_line_is_read() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    client.send_line("{not json").await;
    client
        .send_line(
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"ok"}}}"#,
        )
        .await;
    client.send_line(r#"{"jsonrpc":"1.0","id":6,"method":"ping"}"#).await;
    client.send_line(r#"{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list"}"#).await;
    let parse_error = wait_for(&client, |message| message["error"]["code"] == -32700).await;
    assert!(parse_error.get("id").is_none());
    let ok = wait_for(&client, |message| message["id"] == 5).await;
    assert_eq!(ok["result"]["content"][0]["text"], "ok");
    let wrong_version = wait_for(&client, |message| message["id"] == 6).await;
    assert_eq!(wrong_version["error"]["code"], -32600);
    let duplicate = wait_for(&client, |message| {
        message["error"]["message"].as_str().is_some_and(|m| m.contains("duplicate member"))
    })
    .await;
    assert_eq!(duplicate["error"]["code"], -32600);
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn progress_goes_to_the_requester_and_only_increases() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let result =
        client.request("tools/call", json!({"name": "progress", "_meta": {"progressToken": "tok"}})).await.unwrap();
    assert_eq!(result["content"][0]["text"], "done");
    let progress: Vec<Value> = client
        .received()
        .into_iter()
        .filter(|message| message["method"] == "notifications/progress")
        .map(|message| message["params"]["progress"].clone())
        .collect();
    assert_eq!(progress, vec![json!(0.0), json!(50.0), json!(100.0)]);
    // Without a token there is no progress at all.
    client.call_tool("progress", json!({})).await.unwrap();
    let count = client.received().iter().filter(|message| message["method"] == "notifications/progress").count();
    assert_eq!(count, 3);
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn logging_honours_set_level() {
    let client = fixture::session(ProtocolVersion::V2025_06_18).await;
    client.call_tool("logs", json!({})).await.unwrap();
    client.request("logging/setLevel", json!({"level": "error"})).await.unwrap();
    client.call_tool("logs", json!({})).await.unwrap();
    let levels: Vec<Value> = client
        .received()
        .into_iter()
        .filter(|message| message["method"] == "notifications/message")
        .map(|message| message["params"]["level"].clone())
        .collect();
    assert_eq!(levels, vec![json!("debug"), json!("error"), json!("error")]);
    let err = client.request("logging/setLevel", json!({"level": "loud"})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert_valid(&client, ProtocolVersion::V2025_06_18);
}

#[tokio::test]
async fn elicitation_and_roots_round_trip_through_the_client() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    client.on_request(|request| match request {
        ServerRequest::Elicit(params) => {
            assert_eq!(params.message, "Name?");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        }
        ServerRequest::ListRoots(_) => Ok(json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]})),
        _ => Err(ErrorObject::new(wharf_protocol::ErrorCode::METHOD_NOT_FOUND, "no")),
    });
    let result = client.call_tool("ask_name", json!({})).await.unwrap();
    assert_eq!(serde_json::to_value(&result.content).unwrap()[0]["text"], "Accept {\"name\":\"Ada\"}");
    let result = client.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(serde_json::to_value(&result.content).unwrap()[0]["text"], "file:///a,file:///b");
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn a_client_error_answer_reaches_the_handler_and_missing_capabilities_are_refused() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    client.on_request(|_| Err(ErrorObject::new(wharf_protocol::ErrorCode(-1), "user closed the dialog")));
    let err = client.call_tool("ask_name", json!({})).await.unwrap_err();
    assert_eq!((err.code.0, err.message.as_str()), (-1, "user closed the dialog"));

    let (bare, _) = InMemoryClient::session(
        fixture::server(),
        ProtocolVersion::V2025_11_25,
        wharf_protocol::ClientCapabilities::default(),
    )
    .await
    .unwrap();
    let err = bare.call_tool("ask_name", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32600);
    assert!(err.message.contains("elicitation"), "{}", err.message);
    assert!(bare.received().iter().all(|message| message["method"] != "elicitation/create"));
}

// The responder blocks its thread to stand for a client that never answers, so the server's
// timer needs a worker of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_client_request_times_out() {
    let server = fixture::builder()
        .options(ServerOptions::default().client_request_timeout(Duration::from_millis(100)))
        .build()
        .unwrap();
    let (client, _) =
        InMemoryClient::session(server, ProtocolVersion::V2025_11_25, fixture::all_capabilities()).await.unwrap();
    client.on_request(|_| {
        std::thread::sleep(Duration::from_millis(300));
        Ok(json!({"action": "cancel"}))
    });
    let err = client.call_tool("ask_name", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32603);
    assert!(err.message.contains("in time"), "{}", err.message);
}

#[tokio::test]
async fn answers_go_out_before_the_read_loop_waits_for_a_free_slot() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    // One request in flight at most: the first `slow` call takes the only slot, so the read
    // loop waits at the second one. The `echo` answered in between must not wait with it: a
    // client may hold back what the slow calls need until it has that answer.
    let server = fixture::builder().options(ServerOptions::default().max_in_flight(1)).build().unwrap();
    let (client, transport) = tokio::io::duplex(1 << 16);
    let (server_side_read, server_side_write) = tokio::io::split(transport);
    let serving = tokio::spawn(wharf_server::serve_connection(server, server_side_read, server_side_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let call = |id: u32, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"_meta": meta, "name": name, "arguments": arguments}})
            .to_string()
    };
    let lines = [call(1, "slow", json!({})), call(2, "echo", json!({"message": "here"})), call(3, "slow", json!({}))];
    client_write.write_all(format!("{}\n", lines.join("\n")).as_bytes()).await.unwrap();
    let mut answers = BufReader::new(client_read).lines();
    let first = tokio::time::timeout(Duration::from_secs(3), answers.next_line())
        .await
        .expect("the echo answer came while both slow calls were still running")
        .unwrap()
        .unwrap();
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["id"], 2);
    assert_eq!(first["result"]["content"][0]["text"], "here");
    serving.abort();
}
