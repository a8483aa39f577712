//! Tools: argument validation with defaults, results of every shape, and errors.

use serde_json::{Value, json};
use wharf_protocol::{ContentBlock, ProtocolVersion, ResourceContents};

use wharf_testkit::fixture;
use wharf_testkit::schemas::assert_valid;

/// A 2025-11-25 session with `server`, for a client that declares no capabilities.
async fn session_on(server: wharf_server::Server) -> wharf_server::testing::InMemoryClient {
    wharf_server::testing::InMemoryClient::session(server, ProtocolVersion::V2025_11_25, Default::default())
        .await
        .unwrap()
        .0
}

fn text(block: &ContentBlock) -> &str {
    match block {
        ContentBlock::Text(text) => &text.text,
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn invalid_arguments_are_tool_errors_from_2025_11_25_and_invalid_params_before() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18, ProtocolVersion::V2024_11_05] {
        let client = fixture::session(version).await;
        let outcome = client.call_tool("forecast", json!({"location": "Oslo", "days": 30})).await;
        if version.tool_input_errors_are_results() {
            let result = outcome.unwrap();
            assert_eq!(result.is_error, Some(true));
            let message = text(&result.content[0]);
            assert!(message.contains("`days`") && message.contains("maximum of 14"), "{message}");
        } else {
            let err = outcome.unwrap_err();
            assert_eq!(err.code.0, -32602);
            assert!(err.message.contains("`days`"), "{}", err.message);
        }
        assert_valid(&client, version);
    }
}

#[tokio::test]
async fn missing_and_mistyped_arguments_name_the_field() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let result = client.call_tool("echo", json!({})).await.unwrap();
    assert!(text(&result.content[0]).contains("\"message\" is a required property"), "{result:?}");
    let result = client.call_tool("echo", json!({"message": 5})).await.unwrap();
    assert!(text(&result.content[0]).contains("`message`"), "{result:?}");
    let result = client.request("tools/call", json!({"name": "echo", "arguments": "not an object"})).await.unwrap_err();
    assert_eq!(result.code.0, -32602);
}

#[tokio::test]
async fn schema_defaults_are_applied_before_the_handler_runs() {
    let client = fixture::session(ProtocolVersion::V2025_06_18).await;
    let result = client.call_tool("forecast", json!({"location": "Oslo"})).await.unwrap();
    // A 2025-06-18 client cannot take array structured content: the text mirror carries it.
    assert_eq!(result.structured_content, None);
    let days: Value = serde_json::from_str(text(&result.content[0])).unwrap();
    assert_eq!(days.as_array().unwrap().len(), 7);
    assert_valid(&client, ProtocolVersion::V2025_06_18);
}

#[tokio::test]
async fn object_structured_content_and_output_schemas_reach_2025_clients() {
    let client = fixture::session(ProtocolVersion::V2025_06_18).await;
    let result = client.call_tool("weather", json!({"message": "Oslo"})).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"location": "Oslo", "temperature": 21.5})));
    let tools = client.list_tools().await.unwrap();
    let weather = tools.tools.iter().find(|tool| tool.name == "weather").unwrap();
    assert_eq!(weather.output_schema.as_ref().unwrap()["type"], "object");
    assert_eq!(weather.title.as_deref(), Some("Weather"));
    assert!(weather.icons.is_none(), "icons arrived in 2025-11-25");
    let forecast = tools.tools.iter().find(|tool| tool.name == "forecast").unwrap();
    assert!(forecast.output_schema.is_none(), "a 2025 outputSchema must be an object");
    assert_valid(&client, ProtocolVersion::V2025_06_18);
}

#[tokio::test]
async fn tools_are_listed_in_name_order_with_their_schemas() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.tools.iter().map(|tool| tool.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    let echo = tools.tools.iter().find(|tool| tool.name == "echo").unwrap();
    assert_eq!(echo.input_schema["properties"]["message"]["description"], "The message.");
    assert_eq!(echo.input_schema["required"], json!(["message"]));
    let everything = tools.tools.iter().find(|tool| tool.name == "everything").unwrap();
    assert_eq!(
        Value::Object(everything.input_schema.clone()),
        json!({"type": "object", "additionalProperties": false})
    );
    let weather = tools.tools.iter().find(|tool| tool.name == "weather").unwrap();
    assert!(weather.icons.is_some());
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn every_content_type_is_encoded() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let result = client.call_tool("everything", json!({})).await.unwrap();
    let kinds: Vec<Value> = serde_json::to_value(&result.content)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["type"].clone())
        .collect();
    assert_eq!(
        kinds,
        vec![
            json!("text"),
            json!("image"),
            json!("audio"),
            json!("resource_link"),
            json!("resource"),
            json!("resource")
        ]
    );
    let ContentBlock::Image(image) = &result.content[1] else { unreachable!() };
    assert_eq!(image.data, "iVBORw==");
    let ContentBlock::Resource(blob) = &result.content[5] else { unreachable!() };
    let ResourceContents::Blob(blob) = &blob.resource else { panic!("expected a blob") };
    assert_eq!(blob.blob, "AAEC");
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn errors_become_tool_results_and_rpc_errors_keep_their_code() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let result = client.call_tool("fails", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(text(&result.content[0]), "the disk is full");
    let err = client.call_tool("rpc_error", json!({})).await.unwrap_err();
    assert_eq!((err.code.0, err.message.as_str()), (4001, "quota exceeded"));
    let err = client.call_tool("no_such_tool", json!({})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("no_such_tool"));
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn shared_state_reaches_handlers() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let result = client.call_tool("greet", json!({"message": "partner"})).await.unwrap();
    assert_eq!(text(&result.content[0]), "Howdy partner");
}

#[tokio::test]
async fn registration_errors_are_clear_and_reported_together() {
    let err = fixture::builder()
        .tool(wharf_server::ToolDef::new("echo", || async { "again" }))
        .tool(wharf_server::ToolDef::new("bad name", || async { "x" }))
        .build()
        .unwrap_err();
    assert!(err.is_registration());
    let message = err.to_string();
    assert!(message.contains("tool `echo` is registered twice"), "{message}");
    assert!(message.contains("tool `bad name`: a tool name must be"), "{message}");

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NotAnObject(#[allow(dead_code)] String);
    let err = wharf_server::Server::builder("x", "1")
        .tool(wharf_server::ToolDef::new("t", |_: wharf_server::Args<NotAnObject>| async { "" }))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("must be a JSON object"), "{err}");

    // `x-mcp-header` marks are checked when the tool is registered.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Scores {
        score: f64,
        name: String,
    }
    let err = wharf_server::Server::builder("x", "1")
        .tool(
            wharf_server::ToolDef::new("a", |_: wharf_server::Args<Scores>| async { "" })
                .mirror_to_header("score", "Score"),
        )
        .tool(
            wharf_server::ToolDef::new("b", |_: wharf_server::Args<Scores>| async { "" })
                .mirror_to_header("nope", "Nope"),
        )
        .build()
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("tool `a`: argument `score`: `x-mcp-header` needs a string, integer or boolean"),
        "{message}"
    );
    assert!(message.contains("`mirror_to_header` names `nope`"), "{message}");
}

#[tokio::test]
async fn arguments_checked_while_read_are_refused_as_the_full_check_refuses_them() {
    // A plain schema without defaults (no `#[serde(default)]`, which schemars writes as one), so
    // that the arguments are checked while `Args` reads them.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Operation {
        Add,
        Multiply,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Sum {
        operation: Operation,
        #[schemars(range(min = 0))]
        a: i64,
        note: Option<String>,
    }
    let server = wharf_server::Server::builder("x", "1")
        .tool(wharf_server::ToolDef::new("sum", |wharf_server::Args(sum): wharf_server::Args<Sum>| async move {
            let doubled = match sum.operation {
                Operation::Add => sum.a + sum.a,
                Operation::Multiply => sum.a * 2,
            };
            format!("{doubled} {}", sum.note.unwrap_or_default())
        }))
        .build()
        .unwrap();
    let client = session_on(server).await;

    let result = client.call_tool("sum", json!({"operation": "add", "a": 4, "note": "ok"})).await.unwrap();
    assert_eq!(result.is_error, None, "{result:?}");
    assert_eq!(text(&result.content[0]), "8 ok");
    // Each of these fits the Rust type but not the schema, or the other way round.
    for (arguments, wording) in [
        (json!({"operation": "add", "a": -1}), "minimum of 0"),
        (json!({"operation": "divide", "a": 1}), "\"divide\""),
        (json!({"operation": {"add": null}, "a": 1}), "operation"),
        (json!({"a": 1}), "\"operation\" is a required property"),
        (json!({"operation": "add", "a": 1, "note": 5}), "5"),
    ] {
        let result = client.call_tool("sum", arguments.clone()).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{arguments} was accepted: {result:?}");
        let message = text(&result.content[0]);
        assert!(message.contains(wording), "{arguments}: {message}");
    }
}

#[tokio::test]
async fn a_handler_that_does_not_read_its_arguments_still_has_them_checked() {
    // An extractor of one's own may publish a schema without reading the arguments; the
    // check then happens before the handler runs, as for any tool.
    struct Publishes;
    impl wharf_server::FromToolCall for Publishes {
        fn from_tool_call(_: &mut wharf_server::ToolCall<'_>) -> Result<Self, wharf_server::Rejection> {
            Ok(Publishes)
        }
        fn input_schema() -> Option<wharf_protocol::JsonObject> {
            match json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}) {
                Value::Object(object) => Some(object),
                _ => unreachable!(),
            }
        }
    }
    let server = wharf_server::Server::builder("x", "1")
        .tool(wharf_server::ToolDef::new("ran", |_: Publishes| async { "ran" }))
        .build()
        .unwrap();
    let client = session_on(server).await;
    assert_eq!(text(&client.call_tool("ran", json!({"n": 1})).await.unwrap().content[0]), "ran");
    let result = client.call_tool("ran", json!({"n": "one"})).await.unwrap();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(text(&result.content[0]).contains("\"one\""), "{result:?}");
}

/// A handler learns who calls it from its context: the session's `initialize` in 2025, the
/// request's own `_meta` on 2026-07-28.
#[tokio::test]
async fn handlers_see_the_clients_name_and_capabilities_in_both_eras() {
    let server = wharf_server::Server::builder("x", "1")
        .tool(wharf_server::ToolDef::new("who", |context: wharf_server::RequestContext| async move {
            let name = context.client_info().map_or("nobody", |info| info.name.as_str()).to_owned();
            let sampling = context.client_capabilities().sampling.is_some();
            format!("{name} sampling={sampling}")
        }))
        .build()
        .unwrap();
    let capabilities: wharf_protocol::ClientCapabilities = serde_json::from_value(json!({"sampling": {}})).unwrap();

    let (session, _) = wharf_server::testing::InMemoryClient::session(
        server.clone(),
        ProtocolVersion::V2025_06_18,
        capabilities.clone(),
    )
    .await
    .unwrap();
    let result = session.call_tool("who", json!({})).await.unwrap();
    assert_eq!(text(&result.content[0]), "wharf-test-client sampling=true");
    let plain = session_on(server.clone()).await;
    assert_eq!(text(&plain.call_tool("who", json!({})).await.unwrap().content[0]), "wharf-test-client sampling=false");

    let stateless = wharf_server::testing::InMemoryClient::stateless(server.clone(), capabilities);
    let result = stateless.call_tool("who", json!({})).await.unwrap();
    assert_eq!(text(&result.content[0]), "wharf-test-client sampling=true");
    // Without `clientInfo` in `_meta`, the handler is told there is none.
    let raw = wharf_server::testing::InMemoryClient::connect(server);
    let result = raw
        .request(
            "tools/call",
            json!({"name": "who", "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }}),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "nobody sampling=false");
}

/// What an extractor reaches is Wharf's to say (a custom extractor cannot claim to read the
/// arguments: `tests/ui/extractor_opts_out_of_the_check.rs` in the `wharf` crate), so one
/// that reads them does so through `Args`, and the tool's schema is checked in both eras:
/// here against values that fit the Rust type (`u32`) but not the schema's range.
#[tokio::test]
async fn an_extractor_of_ones_own_cannot_skip_the_argument_check() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Count {
        #[schemars(range(min = 1, max = 3))]
        n: u32,
    }
    struct Counted(u32);
    impl wharf_server::FromToolCall for Counted {
        fn from_tool_call(call: &mut wharf_server::ToolCall<'_>) -> Result<Self, wharf_server::Rejection> {
            let wharf_server::Args(count) = wharf_server::Args::<Count>::from_tool_call(call)?;
            Ok(Counted(count.n))
        }
        fn input_schema() -> Option<wharf_protocol::JsonObject> {
            <wharf_server::Args<Count> as wharf_server::FromToolCall>::input_schema()
        }
    }
    let server = || {
        wharf_server::Server::builder("x", "1")
            .tool(wharf_server::ToolDef::new("count", |Counted(n): Counted| async move { n.to_string() }))
            // The same reader after an extractor of one's own, which sees no arguments.
            .tool(wharf_server::ToolDef::new(
                "count_after",
                |_: wharf_server::RequestContext, wharf_server::Args(count): wharf_server::Args<Count>| async move {
                    count.n.to_string()
                },
            ))
            .build()
            .unwrap()
    };
    let session = session_on(server()).await;
    let stateless = wharf_server::testing::InMemoryClient::stateless(server(), Default::default());
    for client in [&session, &stateless] {
        for tool in ["count", "count_after"] {
            let result = client.call_tool(tool, json!({"n": 2})).await.unwrap();
            assert_eq!(text(&result.content[0]), "2", "{tool}: {result:?}");
            for arguments in [json!({"n": 7}), json!({"n": 0}), json!({"n": "2"}), json!({})] {
                let result = client.call_tool(tool, arguments.clone()).await.unwrap();
                assert_eq!(result.is_error, Some(true), "{tool} accepted {arguments}: {result:?}");
                assert!(text(&result.content[0]).starts_with("Invalid arguments for tool"), "{result:?}");
            }
        }
    }
}
