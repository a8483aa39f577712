//! User input written once: the same handlers ask with server-to-client requests in 2025
//! sessions and with `InputRequiredResult` rounds on 2026-07-28, whose sealed `requestState`
//! refuses tampering, expiry, other parameters and unknown keys.

use std::time::Duration;

use serde_json::{Value, json};
use wharf_protocol::{ClientCapabilities, ErrorObject, ProtocolVersion, ServerRequest};
use wharf_server::testing::InMemoryClient;

use wharf_server::ServerOptions;
use wharf_testkit::fixture;
use wharf_testkit::schemas::{assert_message_valid, assert_valid};

const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// Answers like a user and a model would: elicitations by field, sampling with a fixed text,
/// roots with one root.
fn answer(request: &ServerRequest) -> Result<Value, ErrorObject> {
    Ok(match request {
        ServerRequest::Elicit(params) => {
            let schema = serde_json::to_value(&params.requested_schema).unwrap();
            let field = schema["properties"].as_object().and_then(|fields| fields.keys().next().cloned()).unwrap();
            let value = match field.as_str() {
                "place" => "Lisbon",
                "ok" => "yes",
                "pin" => "1234",
                _ => "Ada",
            };
            json!({"action": "accept", "content": {field: value}})
        }
        ServerRequest::CreateMessage(_) => {
            json!({"role": "assistant", "content": {"type": "text", "text": "trams"}, "model": "m"})
        }
        ServerRequest::ListRoots(_) => json!({"roots": [{"uri": "file:///work"}]}),
        other => panic!("unexpected request {other:?}"),
    })
}

fn text(result: &wharf_protocol::CallToolResult) -> &str {
    match &result.content[0] {
        wharf_protocol::ContentBlock::Text(text) => &text.text,
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn one_handler_asks_for_input_in_both_eras() {
    let (session, _) =
        InMemoryClient::session(fixture::server(), ProtocolVersion::V2025_11_25, fixture::all_capabilities())
            .await
            .unwrap();
    session.on_request(answer);
    let stateless = InMemoryClient::stateless(fixture::server(), fixture::all_capabilities());
    stateless.on_request(answer);
    for client in [&session, &stateless] {
        let result = client.call_tool("plan_trip", json!({})).await.unwrap();
        assert_eq!(result.is_error, None);
        assert!(text(&result).starts_with("Lisbon|trams|yes|state "), "{}", text(&result));
    }
    // The session asked with server-to-client requests; the stateless client never saw one.
    let asked: Vec<_> = session.received().into_iter().filter(|message| message.get("method").is_some()).collect();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!(stateless.received().iter().all(|message| message.get("method").is_none()));
    assert_valid(&session, ProtocolVersion::V2025_11_25);
    assert_valid(&stateless, V2026);
}

#[tokio::test]
async fn inputs_come_several_per_round_over_several_rounds_with_the_handlers_state() {
    let client = InMemoryClient::stateless(fixture::server(), fixture::all_capabilities());
    let first = client.request("tools/call", json!({"name": "plan_trip", "arguments": {}})).await.unwrap();
    assert_eq!(first["resultType"], "input_required");
    assert_eq!(first["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "fixture");
    assert!(first.get("ttlMs").is_none() && first.get("content").is_none(), "{first}");
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["idea", "place"], "both asked in one round");
    assert_eq!(requests["place"]["method"], "elicitation/create");
    assert_eq!(requests["idea"]["method"], "sampling/createMessage");
    assert!(requests["place"]["params"].get("elicitationId").is_none());
    let state = first["requestState"].as_str().unwrap().to_owned();

    // Answers to the first round, an extra key nobody asked for, and the state back.
    let second = client
        .request(
            "tools/call",
            json!({"name": "plan_trip", "arguments": {}, "requestState": state, "inputResponses": {
                "place": {"action": "accept", "content": {"place": "Porto"}},
                "idea": {"role": "assistant", "content": {"type": "text", "text": "wine"}, "model": "m"},
                "unasked": 42,
            }}),
        )
        .await
        .unwrap();
    assert_eq!(second["resultType"], "input_required");
    let requests = second["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["confirm"]);
    assert_eq!(requests["confirm"]["params"]["message"], "Book Porto (wine)?");
    let state = second["requestState"].as_str().unwrap().to_owned();

    // Retrying without the new answer asks again instead of failing.
    let again = client
        .request("tools/call", json!({"name": "plan_trip", "arguments": {}, "requestState": state.clone()}))
        .await
        .unwrap();
    assert_eq!(again["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["confirm"]);

    let done = client
        .request(
            "tools/call",
            json!({"name": "plan_trip", "arguments": {}, "requestState": state, "inputResponses": {
                "confirm": {"action": "decline"}}}),
        )
        .await
        .unwrap();
    assert_eq!(done["resultType"], "complete");
    // Three runs of the handler: the count came through the sealed state.
    assert_eq!(done["content"][0]["text"], "Porto|wine|Decline|state 3");
    assert_valid(&client, V2026);
}

/// The `requestState` of the first round of `plan_trip` on `client`.
async fn first_state(client: &InMemoryClient) -> String {
    let first = client.request("tools/call", json!({"name": "plan_trip", "arguments": {}})).await.unwrap();
    first["requestState"].as_str().unwrap().to_owned()
}

fn round_two(state: &str, arguments: Value) -> Value {
    json!({"name": "plan_trip", "arguments": arguments, "requestState": state, "inputResponses": {
        "place": {"action": "accept", "content": {"place": "Porto"}}}})
}

#[tokio::test]
async fn tampered_foreign_and_malformed_state_or_answers_are_invalid_params() {
    let client = InMemoryClient::stateless(fixture::server(), fixture::all_capabilities());
    let state = first_state(&client).await;
    let tampered = format!("{state}-TAMPERED");
    let err = client.request("tools/call", round_two(&tampered, json!({}))).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("integrity"), "{}", err.message);
    let err = client.request("tools/call", round_two("not-even-close", json!({}))).await.unwrap_err();
    assert_eq!(err.code.0, -32602);

    // The state belongs to these parameters: other arguments, another tool, another method.
    let err = client.request("tools/call", round_two(&state, json!({"extra": 1}))).await.unwrap_err();
    assert!(err.message.contains("another request"), "{}", err.message);
    let err =
        client.request("prompts/get", json!({"name": "personal", "requestState": state.clone()})).await.unwrap_err();
    assert!(err.message.contains("another request"), "{}", err.message);

    // A malformed answer to something that was asked.
    let malformed = json!({"name": "plan_trip", "arguments": {}, "requestState": state, "inputResponses": {
        "place": 12345}});
    let err = client.request("tools/call", malformed).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("inputResponses.place"), "{}", err.message);

    // Answers may come before any state; a malformed one is refused when the handler takes it,
    // and what the handler does not ask for is ignored.
    let unsealed = json!({"name": "plan_trip", "arguments": {}, "inputResponses": {"place": 12345}});
    let err = client.request("tools/call", unsealed).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("elicitation/create"), "{}", err.message);
    let early = json!({"name": "plan_trip", "arguments": {}, "inputResponses": {
        "place": {"action": "accept", "content": {"place": "Faro"}}, "surprise": true}});
    let asked = client.request("tools/call", early).await.unwrap();
    assert_eq!(asked["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["idea"]);
    let null = json!({"name": "plan_trip", "arguments": {}, "inputResponses": null});
    assert_eq!(client.request("tools/call", null).await.unwrap()["resultType"], "input_required");
}

#[tokio::test]
async fn a_tool_that_cannot_ask_ignores_answers_but_still_checks_state() {
    // `echo` takes only its arguments: it can never ask, so answers sent along are ignored...
    let client = InMemoryClient::stateless(fixture::server(), fixture::all_capabilities());
    let answered = json!({"name": "echo", "arguments": {"message": "hi"}, "inputResponses": {"x": 1}});
    assert_eq!(client.request("tools/call", answered).await.unwrap()["content"][0]["text"], "hi");
    // ...but state sent to it is still checked: it was issued for another call.
    let state = first_state(&client).await;
    let replayed = json!({"name": "echo", "arguments": {"message": "hi"}, "requestState": state});
    let err = client.request("tools/call", replayed).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("another request"), "{}", err.message);
}

#[tokio::test]
async fn state_expires() {
    let server = fixture::builder()
        .options(ServerOptions::default().request_state_lifetime(Duration::from_millis(1)))
        .build()
        .unwrap();
    let client = InMemoryClient::stateless(server, fixture::all_capabilities());
    let state = first_state(&client).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let err = client.request("tools/call", round_two(&state, json!({}))).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("expired"), "{}", err.message);
}

#[tokio::test]
async fn instances_sharing_a_key_accept_each_others_state_and_keys_rotate() {
    let key = [7u8; 32];
    let first = fixture::builder().request_state_key("k1", &key).build().unwrap();
    let second = fixture::builder().request_state_key("k1", &key).build().unwrap();
    let stranger = fixture::server();
    let (a, b, c) = (
        InMemoryClient::stateless(first.clone(), fixture::all_capabilities()),
        InMemoryClient::stateless(second, fixture::all_capabilities()),
        InMemoryClient::stateless(stranger, fixture::all_capabilities()),
    );
    let state = first_state(&a).await;
    let answered = b.request("tools/call", round_two(&state, json!({}))).await.unwrap();
    assert_eq!(answered["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["idea"]);
    let err = c.request("tools/call", round_two(&state, json!({}))).await.unwrap_err();
    assert_eq!(err.code.0, -32602);

    // A new key seals from now on; state sealed with the old one still comes back fine.
    first.rotate_request_state_key("k2", &[9u8; 32]);
    let answered = a.request("tools/call", round_two(&state, json!({}))).await.unwrap();
    assert!(answered["requestState"].as_str().unwrap().starts_with("w1.k2."));
    first.retire_request_state_key("k1");
    let err = a.request("tools/call", round_two(&state, json!({}))).await.unwrap_err();
    assert!(err.message.contains("key"), "{}", err.message);

    let short = fixture::builder().request_state_key("weak", b"short").build().unwrap_err();
    assert!(short.to_string().contains("32 random bytes"), "{short}");
}

#[tokio::test]
async fn prompts_and_resources_ask_too_and_input_required_is_never_cached() {
    let client = InMemoryClient::stateless(fixture::server(), fixture::all_capabilities());
    client.on_request(answer);
    let prompt = client.request_resolving_input("prompts/get", json!({"name": "personal"})).await.unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "A prompt for Ada");
    let first = client.request("resources/read", json!({"uri": "vault://secret"})).await.unwrap();
    assert_eq!(first["resultType"], "input_required");
    assert!(first.get("ttlMs").is_none() && first.get("cacheScope").is_none(), "{first}");
    let read = client.request_resolving_input("resources/read", json!({"uri": "vault://secret"})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "the treasure");
    assert_eq!(read["ttlMs"], 0);
    assert_valid(&client, V2026);
}

#[tokio::test]
async fn only_declared_kinds_of_input_are_asked_for() {
    // Elicitation declared, sampling not: the first round asks for the place only, and once
    // the handler cannot go on without the model, -32021 names sampling.
    let capabilities: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
    let client = InMemoryClient::stateless(fixture::server(), capabilities);
    let first = client.request("tools/call", json!({"name": "plan_trip", "arguments": {}})).await.unwrap();
    assert_eq!(first["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["place"]);
    let state = first["requestState"].as_str().unwrap();
    let err = client.request("tools/call", round_two(state, json!({}))).await.unwrap_err();
    assert_eq!(err.code.0, -32021);
    assert_eq!(err.data.unwrap()["requiredCapabilities"], json!({"sampling": {}}));
    let message = client.received().pop().unwrap();
    assert_message_valid(V2026, &message, "tools/call");
}

#[tokio::test]
async fn url_elicitation_carries_an_id_its_completion_and_the_32042_error_on_2025_11_25() {
    let capabilities: ClientCapabilities = serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
    let (client, _) =
        InMemoryClient::session(fixture::server(), ProtocolVersion::V2025_11_25, capabilities.clone()).await.unwrap();
    client.on_request(|request| {
        let ServerRequest::Elicit(params) = request else { panic!("{request:?}") };
        assert_eq!(params.mode.as_deref(), Some("url"));
        assert_eq!(params.elicitation_id.as_deref(), Some("flow-1"));
        Ok(json!({"action": "accept"}))
    });
    let result = client.call_tool("sign_in", json!({})).await.unwrap();
    assert_eq!(text(&result), "Accept, completion sent: true");
    let completion = client.next_notification(Duration::from_secs(5)).await.unwrap();
    assert_eq!(completion["method"], "notifications/elicitation/complete");
    assert_eq!(completion["params"]["elicitationId"], "flow-1");

    let err = client.call_tool("calendar", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32042);
    let elicitation = &err.data.unwrap()["elicitations"][0];
    assert_eq!(elicitation["mode"], "url");
    assert_eq!(elicitation["elicitationId"].as_str().unwrap().len(), 32, "Wharf gave it an id");
    assert_valid(&client, ProtocolVersion::V2025_11_25);

    // On 2026-07-28 the same handler asks in an InputRequiredResult, without ids.
    let stateless = InMemoryClient::stateless(fixture::server(), capabilities);
    let asked = stateless.request("tools/call", json!({"name": "calendar", "arguments": {}})).await.unwrap();
    assert_eq!(asked["resultType"], "input_required");
    let request = &asked["inputRequests"]["input-1"];
    assert_eq!(request["params"]["mode"], "url");
    assert!(request["params"].get("elicitationId").is_none());
    assert_valid(&stateless, V2026);
}
