//! Scopes per tool, prompt and resource: each principal is shown only what its scopes allow, in
//! both eras; using anything else is refused with `insufficient_scope` (403 and a challenge
//! naming every scope over HTTP) before a handler runs; and a 2025 HTTP session belongs to the
//! principal that opened it. The principal comes in the HTTP request's extensions, where an
//! authentication layer in front of the endpoint puts it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use wharf_http::{HttpOptions, McpService};
use wharf_protocol::{ClientCapabilities, ProtocolVersion};
use wharf_server::testing::InMemoryClient;
use wharf_server::{Principal, PromptDef, ResourceDef, Server, TemplateDef, ToolDef};

use crate::support::body_of;
use wharf_testkit::schemas::assert_message_valid;

/// A server with one open tool and a scoped tool, prompt, resource and template; `purges`
/// counts the runs of the scoped tool's handler.
fn server(purges: Arc<AtomicUsize>) -> Server {
    Server::builder("scoped", "1.0.0")
        .tool(ToolDef::new("echo", || async { "open" }).description("Open to all"))
        .tool(
            ToolDef::new("purge", move || {
                let purges = purges.clone();
                async move {
                    purges.fetch_add(1, Ordering::SeqCst);
                    "purged"
                }
            })
            .description("Admins only")
            .scopes(["tools:admin", "files:write"]),
        )
        .prompt(PromptDef::template("plan", "The plan").description("Secret").scopes(["prompts:secret"]))
        .prompt(PromptDef::template("hello", "Hello").description("Open"))
        .resource(ResourceDef::text("secret://plan", "plan", "the plan").scopes(["files:read"]))
        .resource(ResourceDef::text("open://readme", "readme", "read me"))
        .resource_template(
            TemplateDef::new("secret://{id}", "secrets", |call| async move { format!("secret {}", call.uri) })
                .scopes(["files:read"]),
        )
        .build()
        .unwrap()
}

fn admin() -> Principal {
    Principal::issued("https://issuer.example", "ann").with_scopes(["tools:admin", "files:write", "files:read"])
}

fn reader() -> Principal {
    Principal::issued("https://issuer.example", "bo").with_scopes(["files:read"])
}

/// A request to the service: a 2026-07-28 one when `session` is `None`.
fn request(principal: Option<&Principal>, session: Option<&str>, body: Value) -> http::Request<String> {
    let mut builder = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    let mut body = body;
    match session {
        Some(id) => builder = builder.header("mcp-session-id", id).header("mcp-protocol-version", "2025-11-25"),
        None => {
            builder = builder.header("mcp-protocol-version", "2026-07-28");
            if let Some(method) = body["method"].as_str() {
                builder = builder.header("mcp-method", method);
                let name = body["params"]["name"].as_str().or(body["params"]["uri"].as_str());
                if let Some(name) = name {
                    builder = builder.header("mcp-name", name);
                }
            }
            body["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}});
        }
    }
    if let Some(principal) = principal {
        builder = builder.extension(principal.clone());
    }
    builder.body(body.to_string()).unwrap()
}

fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Status, `WWW-Authenticate` and the JSON body.
async fn exchange(service: &McpService, request: http::Request<String>) -> (u16, Option<String>, Value) {
    let response = service.handle(request).await;
    let status = response.status().as_u16();
    let challenge = response.headers().get("www-authenticate").map(|value| value.to_str().unwrap().to_owned());
    (status, challenge, body_of(response).await)
}

fn names(list: &Value, member: &str, key: &str) -> Vec<String> {
    list["result"][member].as_array().unwrap().iter().map(|item| item[key].as_str().unwrap().to_owned()).collect()
}

/// Opens a 2025-11-25 session for `principal`; its id.
async fn open_session(service: &McpService, principal: Option<&Principal>) -> String {
    let init = rpc(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "scoped-test", "version": "1"}}),
    );
    let mut builder = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(principal) = principal {
        builder = builder.extension(principal.clone());
    }
    let response = service.handle(builder.body(init.to_string()).unwrap()).await;
    assert_eq!(response.status(), 200);
    let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = exchange(service, request(principal, Some(&id), initialized)).await;
    assert_eq!(status, 202);
    id
}

#[tokio::test]
async fn each_principal_lists_only_what_its_scopes_allow_in_both_eras() {
    let service = McpService::new(server(Arc::default()), HttpOptions::default());
    let (admin, reader) = (admin(), reader());
    for (principal, tools, prompts, resources, templates) in [
        (
            Some(&admin),
            vec!["echo", "purge"],
            vec!["hello"],
            vec!["open://readme", "secret://plan"],
            vec!["secret://{id}"],
        ),
        (Some(&reader), vec!["echo"], vec!["hello"], vec!["open://readme", "secret://plan"], vec!["secret://{id}"]),
        (None, vec!["echo"], vec!["hello"], vec!["open://readme"], vec![]),
    ] {
        let session = open_session(&service, principal).await;
        for era in [None, Some(session.as_str())] {
            let list = |method: &str| exchange(&service, request(principal, era, rpc(1, method, json!({}))));
            let (status, _, tools_list) = list("tools/list").await;
            assert_eq!(status, 200, "{tools_list}");
            assert_eq!(names(&tools_list, "tools", "name"), tools, "{principal:?} {era:?}");
            assert_eq!(names(&list("prompts/list").await.2, "prompts", "name"), prompts);
            assert_eq!(names(&list("resources/list").await.2, "resources", "uri"), resources);
            let listed = list("resources/templates/list").await.2;
            assert_eq!(names(&listed, "resourceTemplates", "uriTemplate"), templates);
            if era.is_none() {
                // What each principal is shown is its own: no shared cache may keep it.
                assert_eq!(tools_list["result"]["cacheScope"], "private", "{tools_list}");
                assert_message_valid(ProtocolVersion::V2026_07_28, &tools_list, "tools/list");
            }
        }
    }
}

#[tokio::test]
async fn using_what_a_principal_lacks_the_scopes_for_is_403_naming_every_scope() {
    let purges = Arc::new(AtomicUsize::new(0));
    let service = McpService::new(server(purges.clone()), HttpOptions::default());
    let reader = reader();
    let session = open_session(&service, Some(&reader)).await;
    for era in [None, Some(session.as_str())] {
        let call = rpc(2, "tools/call", json!({"name": "purge", "arguments": {}}));
        let (status, challenge, body) = exchange(&service, request(Some(&reader), era, call)).await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(
            challenge.as_deref(),
            Some(r#"Bearer error="insufficient_scope", scope="tools:admin files:write""#),
            "every scope the tool needs, held or not"
        );
        assert_eq!(body["error"]["code"], -32003, "{body}");
        assert_eq!(body["error"]["data"]["requiredScopes"], json!(["tools:admin", "files:write"]));
        let get = rpc(3, "prompts/get", json!({"name": "plan"}));
        let (status, challenge, _) = exchange(&service, request(Some(&reader), era, get)).await;
        assert_eq!(
            (status, challenge.as_deref()),
            (403, Some(r#"Bearer error="insufficient_scope", scope="prompts:secret""#))
        );
    }
    assert_eq!(purges.load(Ordering::SeqCst), 0, "the handler never ran");

    // Without a principal, scoped resources are refused as well; with the scopes, all work.
    let read = rpc(4, "resources/read", json!({"uri": "secret://7"}));
    let (status, challenge, _) = exchange(&service, request(None, None, read.clone())).await;
    assert_eq!((status, challenge.as_deref()), (403, Some(r#"Bearer error="insufficient_scope", scope="files:read""#)));
    let (status, _, body) = exchange(&service, request(Some(&reader), None, read)).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["contents"][0]["text"], "secret secret://7");
    let admin = admin();
    let call = rpc(5, "tools/call", json!({"name": "purge", "arguments": {}}));
    let (status, _, body) = exchange(&service, request(Some(&admin), None, call)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "purged");
    assert_eq!(purges.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_a_principal_the_line_transport_neither_shows_nor_runs_scoped_tools() {
    let purges = Arc::new(AtomicUsize::new(0));
    let client = InMemoryClient::latest_session(server(purges.clone())).await;
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.tools.iter().map(|tool| tool.name.as_str()).collect::<Vec<_>>(), ["echo"]);
    let refused = client.call_tool("purge", json!({})).await.unwrap_err();
    assert_eq!(refused.code.0, -32003);
    assert!(refused.message.contains("tools:admin files:write"), "{}", refused.message);
    let subscribe = client.request("resources/subscribe", json!({"uri": "secret://plan"})).await.unwrap_err();
    assert_eq!(subscribe.code.0, -32003);
    client.request("resources/subscribe", json!({"uri": "open://readme"})).await.unwrap();
    let stateless = InMemoryClient::stateless(server(purges.clone()), ClientCapabilities::default());
    assert_eq!(stateless.call_tool("purge", json!({})).await.unwrap_err().code.0, -32003);
    assert_eq!(purges.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_session_answers_only_the_principal_that_opened_it() {
    let service = McpService::new(server(Arc::default()), HttpOptions::default());
    let (ann, bo) = (admin(), reader());
    let session = open_session(&service, Some(&ann)).await;
    let call = rpc(1, "tools/call", json!({"name": "echo", "arguments": {}}));

    // Another principal, or none, is told the session does not exist: POST, GET and DELETE.
    for intruder in [Some(&bo), None] {
        let (status, _, body) = exchange(&service, request(intruder, Some(&session), call.clone())).await;
        assert_eq!(status, 404, "{body}");
        let mut get = request(intruder, Some(&session), Value::Null);
        *get.method_mut() = http::Method::GET;
        get.headers_mut().insert("accept", "text/event-stream".parse().unwrap());
        assert_eq!(service.handle(get).await.status(), 404);
        let mut delete = request(intruder, Some(&session), Value::Null);
        *delete.method_mut() = http::Method::DELETE;
        assert_eq!(service.handle(delete).await.status(), 404);
        // Nor can it answer the session's requests to the client.
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(exchange(&service, request(intruder, Some(&session), answer)).await.0, 404);
    }

    // The same user with a refreshed token (other scopes) keeps the session.
    let refreshed = Principal::issued("https://issuer.example", "ann").with_scopes(["files:read"]);
    let (status, _, body) = exchange(&service, request(Some(&refreshed), Some(&session), call)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "open");
    let mut delete = request(Some(&ann), Some(&session), Value::Null);
    *delete.method_mut() = http::Method::DELETE;
    assert_eq!(service.handle(delete).await.status(), 204);
}
