//! The gateway against real upstreams: servers in this process (over an in-memory stream) and
//! one served over Streamable HTTP on a loopback port; its clients in both eras, with what they
//! receive checked against the official schema of their revision.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::TcpListener;
use wharf_client::ClientOptions;
use wharf_gateway::{Gateway, GatewayErrorKind, Mount};
use wharf_protocol::{ClientCapabilities, ProtocolVersion, RequestId};
use wharf_server::testing::InMemoryClient;
use wharf_server::{PromptDef, ResourceDef, RpcError, Server, TemplateDef, ToolDef};
use wharf_testkit::eventually::eventually_async;
use wharf_testkit::fixture::{self, Counters};
use wharf_testkit::schemas::assert_valid;

/// A small upstream named `name`: `echo` (which says who answered), `fails` (a tool error),
/// `quota` (JSON-RPC error 4001 with data) and a prompt `hello` with a required argument.
fn upstream(name: &'static str) -> Server {
    Server::builder(name, "1.0.0")
        .tool(
            ToolDef::new(
                "echo",
                move |wharf_server::Args(args): wharf_server::Args<serde_json::Map<String, Value>>| async move {
                    format!("{name}: {}", args.get("message").and_then(Value::as_str).unwrap_or_default())
                },
            )
            .input_schema(
                serde_json::from_value(json!({
                    "type": "object",
                    "properties": {"message": {"type": "string"}},
                    "required": ["message"]
                }))
                .unwrap(),
            )
            .description("Echo a message"),
        )
        .tool(ToolDef::new("fails", || async { Err::<String, _>("the disk is full") }))
        .tool(ToolDef::new("quota", || async {
            Err::<String, _>(RpcError::new(4001, "quota exceeded").with_data(json!({"retryAfter": 30})))
        }))
        .prompt(PromptDef::template("hello", "Hello {who}!").argument("who", "Whom to greet", true))
        .resource(ResourceDef::text("file:///readme.txt", "readme", format!("{name}'s readme")).mime_type("text/plain"))
        .resource_template(TemplateDef::new("users://{id}/profile", "profile", move |call| async move {
            format!("{name}'s user {}", call.variable("id").unwrap_or_default())
        }))
        .build()
        .unwrap()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn two_upstreams_under_namespaces_are_one_server_in_both_eras() {
    let gateway = Gateway::new("gateway", "1.0.0")
        .mount(Mount::server("alpha", upstream("alpha")))
        .mount(Mount::server("beta", upstream("beta")).namespace("b"))
        .build()
        .await
        .unwrap();
    for client in [
        InMemoryClient::latest_session(gateway.clone()).await,
        InMemoryClient::stateless(gateway.clone(), ClientCapabilities::default()),
    ] {
        let listed = client.request("tools/list", json!({})).await.unwrap();
        let mut names: Vec<&str> =
            listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
        names.sort_unstable();
        assert_eq!(names, ["alpha_echo", "alpha_fails", "alpha_quota", "b_echo", "b_fails", "b_quota"]);
        let echo = listed["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "b_echo").unwrap();
        assert_eq!(echo["description"], "Echo a message");
        assert_eq!(echo["inputSchema"]["required"], json!(["message"]), "the upstream's schema, as it is");

        let called =
            client.request("tools/call", json!({"name": "b_echo", "arguments": {"message": "hi"}})).await.unwrap();
        assert_eq!(text(&called), "beta: hi", "the call reached beta as `echo`");
        let called =
            client.request("tools/call", json!({"name": "alpha_echo", "arguments": {"message": "yo"}})).await.unwrap();
        assert_eq!(text(&called), "alpha: yo");

        // The gateway checks the upstream's schema before forwarding, as for its own tools.
        let refused = client.request("tools/call", json!({"name": "alpha_echo", "arguments": {}})).await;
        let refused = match refused {
            Ok(result) => result["isError"].as_bool().unwrap_or(false),
            Err(error) => error.code.0 == -32602,
        };
        assert!(refused, "missing a required argument is refused");

        let failed = client.request("tools/call", json!({"name": "b_fails", "arguments": {}})).await.unwrap();
        assert_eq!((failed["isError"].as_bool(), text(&failed)), (Some(true), "the disk is full"));
        let quota = client.request("tools/call", json!({"name": "b_quota", "arguments": {}})).await.unwrap_err();
        assert_eq!((quota.code.0, quota.message.as_str()), (4001, "quota exceeded"), "the upstream's error as it was");
        assert_eq!(quota.data, Some(json!({"retryAfter": 30})));

        let prompts = client.request("prompts/list", json!({})).await.unwrap();
        let hello = prompts["prompts"].as_array().unwrap().iter().find(|prompt| prompt["name"] == "b_hello").unwrap();
        assert_eq!(hello["arguments"][0]["name"], "who");
        assert_eq!(hello["arguments"][0]["required"], true);
        let got = client.request("prompts/get", json!({"name": "b_hello", "arguments": {"who": "Ada"}})).await.unwrap();
        assert_eq!(got["messages"][0]["content"]["text"], "Hello Ada!");
        client.request("tools/call", json!({"name": "nope_echo", "arguments": {}})).await.unwrap_err();

        // Resource URIs are behind the namespace as a scheme prefix, in the list and the contents.
        let resources = client.request("resources/list", json!({})).await.unwrap();
        let mut uris: Vec<&str> = resources["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|resource| resource["uri"].as_str().unwrap())
            .collect();
        uris.sort_unstable();
        assert_eq!(uris, ["alpha+file:///readme.txt", "b+file:///readme.txt"]);
        let read = client.request("resources/read", json!({"uri": "b+file:///readme.txt"})).await.unwrap();
        assert_eq!(read["contents"][0]["text"], "beta's readme");
        assert_eq!(read["contents"][0]["uri"], "b+file:///readme.txt");
        assert_eq!(read["contents"][0]["mimeType"], "text/plain");
        let templates = client.request("resources/templates/list", json!({})).await.unwrap();
        let listed: Vec<&str> = templates["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|template| template["uriTemplate"].as_str().unwrap())
            .collect();
        assert!(
            listed.contains(&"b+users://{id}/profile") && listed.contains(&"alpha+users://{id}/profile"),
            "{listed:?}"
        );
        let profile = client.request("resources/read", json!({"uri": "alpha+users://42/profile"})).await.unwrap();
        assert_eq!(profile["contents"][0]["text"], "alpha's user 42");
        assert_eq!(profile["contents"][0]["uri"], "alpha+users://42/profile");
        let missing = client.request("resources/read", json!({"uri": "b+file:///nothing.txt"})).await.unwrap_err();
        assert!(missing.code.0 == -32002 || missing.code.0 == -32602, "{missing:?}");
    }
    let session = InMemoryClient::latest_session(gateway.clone()).await;
    session.request("tools/list", json!({})).await.unwrap();
    session.request("tools/call", json!({"name": "b_echo", "arguments": {"message": "checked"}})).await.unwrap();
    session.request("resources/list", json!({})).await.unwrap();
    session.request("resources/templates/list", json!({})).await.unwrap();
    session.request("resources/read", json!({"uri": "b+users://7/profile"})).await.unwrap();
    session.request("prompts/get", json!({"name": "alpha_hello", "arguments": {"who": "Bo"}})).await.unwrap();
    assert_valid(&session, ProtocolVersion::V2025_11_25);
    for answer in session.received().iter().filter(|message| message.get("id").is_some()) {
        assert!(answer["result"].get("resultType").is_none(), "a 2025 session hears no resultType: {answer}");
    }
    let older =
        InMemoryClient::session(gateway, ProtocolVersion::V2025_03_26, ClientCapabilities::default()).await.unwrap().0;
    older.request("tools/call", json!({"name": "alpha_echo", "arguments": {"message": "old"}})).await.unwrap();
    assert_valid(&older, ProtocolVersion::V2025_03_26);
}

#[tokio::test]
async fn two_mounts_offering_one_name_are_refused_naming_both() {
    let collided = Gateway::new("gateway", "1.0.0")
        .mount(Mount::server("alpha", upstream("alpha")).namespace(""))
        .mount(Mount::server("beta", upstream("beta")).namespace(""))
        .build()
        .await
        .unwrap_err();
    assert_eq!(collided.kind(), GatewayErrorKind::Collision);
    let message = collided.to_string();
    assert!(message.contains("`echo`") && message.contains("`alpha`") && message.contains("`beta`"), "{message}");

    let dotted =
        Gateway::new("gateway", "1.0.0").mount(Mount::server("a", upstream("a")).namespace("my.ns")).build().await;
    assert_eq!(dotted.unwrap_err().kind(), GatewayErrorKind::Mount, "a dot in a name some clients refuse");
    let twice = Gateway::new("gateway", "1.0.0")
        .mount(Mount::server("a", upstream("a")))
        .mount(Mount::server("a", upstream("b")).namespace("b"))
        .build()
        .await;
    assert_eq!(twice.unwrap_err().kind(), GatewayErrorKind::Mount);
    // Without a namespace, a single mount's names are its own.
    let plain =
        Gateway::new("gateway", "1.0.0").mount(Mount::server("a", upstream("a")).namespace("")).build().await.unwrap();
    let client = InMemoryClient::latest_session(plain).await;
    let called =
        client.request("tools/call", json!({"name": "echo", "arguments": {"message": "as is"}})).await.unwrap();
    assert_eq!(text(&called), "a: as is");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_upstream_is_mounted_and_one_that_goes_away_is_named_in_the_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(
        wharf_http::serve(listener, upstream("remote"))
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .into_future(),
    );
    let gateway = Gateway::new("gateway", "1.0.0")
        .mount(Mount::url("remote", format!("http://127.0.0.1:{port}/mcp")))
        .mount(Mount::server("local", fixture::server()))
        .build()
        .await
        .unwrap();
    let client = InMemoryClient::stateless(gateway, ClientCapabilities::default());
    let listed = client.request("tools/list", json!({})).await.unwrap();
    let names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"remote_echo") && names.contains(&"local_echo") && names.contains(&"local_forecast"),
        "{names:?}"
    );
    let called = client
        .request("tools/call", json!({"name": "remote_echo", "arguments": {"message": "over http"}}))
        .await
        .unwrap();
    assert_eq!(text(&called), "remote: over http");
    let forecast = client
        .request("tools/call", json!({"name": "local_forecast", "arguments": {"location": "Oslo"}}))
        .await
        .unwrap();
    assert_eq!(forecast["structuredContent"][0]["day"], 1, "structured output passes: {forecast}");

    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(15), serving).await.expect("the upstream stops").unwrap().unwrap();
    let down = client
        .request("tools/call", json!({"name": "remote_echo", "arguments": {"message": "anyone?"}}))
        .await
        .unwrap_err();
    assert_eq!(down.code.0, -32603);
    assert!(down.message.contains("`remote`"), "the error names the mount: {}", down.message);
    let still = client
        .request("tools/call", json!({"name": "local_echo", "arguments": {"message": "still here"}}))
        .await
        .unwrap();
    assert_eq!(text(&still), "still here", "the other mount keeps working");
}

#[tokio::test]
async fn an_upstream_that_cannot_be_reached_stops_the_build_naming_it() {
    let unreachable = Gateway::new("gateway", "1.0.0")
        .mount(Mount::command("ghost", "/nonexistent/mcp-server", Vec::<String>::new()))
        .build()
        .await
        .unwrap_err();
    assert_eq!(unreachable.kind(), GatewayErrorKind::Upstream);
    assert!(unreachable.to_string().contains("`ghost`"), "{unreachable}");
}

/// The upstream's progress reaches the gateway's client under the client's own token, and a
/// cancellation from the gateway's client stops the upstream's handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_comes_back_and_a_cancellation_reaches_the_upstream() {
    let counters = Arc::new(Counters::default());
    let gateway = Gateway::new("gateway", "1.0.0")
        .mount(Mount::server("up", fixture::builder_with(counters.clone()).build().unwrap()))
        .build()
        .await
        .unwrap();
    let (client, _) =
        InMemoryClient::session(gateway, ProtocolVersion::V2025_11_25, ClientCapabilities::default()).await.unwrap();
    let params = json!({"name": "up_progress", "arguments": {}, "_meta": {"progressToken": "mine"}});
    let done = client.request("tools/call", params).await.unwrap();
    assert_eq!(text(&done), "done");
    let progress: Vec<f64> = client
        .received()
        .iter()
        .filter(|message| message["method"] == "notifications/progress")
        .map(|message| {
            assert_eq!(message["params"]["progressToken"], "mine", "the client's own token");
            message["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(progress, [0.0, 50.0, 100.0], "each step, the repeated one dropped upstream");
    assert_valid(&client, ProtocolVersion::V2025_11_25);

    let id = RequestId::string("slow-1");
    let answer = client.start_request(id, "tools/call", json!({"name": "up_slow", "arguments": {}})).await;
    fixture::slow_has_run(&counters, 3).await;
    client.notify("notifications/cancelled", json!({"requestId": "slow-1"})).await;
    fixture::slow_was_stopped(&counters).await;
    drop(answer);
}

/// The names of the tools `client` lists.
async fn tool_names(client: &InMemoryClient) -> Vec<String> {
    let listed = client.request("tools/list", json!({})).await.unwrap();
    listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

/// A tool added to or removed from an upstream while the gateway runs reaches the gateway's
/// lists, and its 2025 clients hear `list_changed`, whether the gateway speaks 2026-07-28 to
/// the upstream (a listen stream) or a 2025 session (notifications).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_list_change_reaches_the_gateways_clients_in_either_era() {
    for revision in [None, Some(ProtocolVersion::V2025_11_25)] {
        let up = upstream("alpha");
        let mut mount = Mount::server("alpha", up.clone());
        if let Some(version) = revision {
            mount = mount.client_options(ClientOptions::default().protocol_version(version));
        }
        let gateway = Gateway::new("gateway", "1.0.0").mount(mount).build().await.unwrap();
        let client = InMemoryClient::latest_session(gateway).await;
        assert!(tool_names(&client).await.contains(&"alpha_echo".to_owned()));

        up.add_tool(ToolDef::new("late", || async { "arrived late" }).description("Added while serving")).unwrap();
        let label = format!("{revision:?}");
        eventually_async(&format!("alpha_late listed ({label})"), Duration::from_secs(10), || async {
            tool_names(&client).await.contains(&"alpha_late".to_owned()).then_some(())
        })
        .await;
        wharf_testkit::fixture::wait_for(&client, |message| message["method"] == "notifications/tools/list_changed")
            .await;
        let called = client.request("tools/call", json!({"name": "alpha_late", "arguments": {}})).await.unwrap();
        assert_eq!(text(&called), "arrived late", "{label}");

        assert!(up.remove_tool("echo"));
        eventually_async(&format!("alpha_echo gone ({label})"), Duration::from_secs(10), || async {
            (!tool_names(&client).await.contains(&"alpha_echo".to_owned())).then_some(())
        })
        .await;
        client.request("tools/call", json!({"name": "alpha_echo", "arguments": {"message": "x"}})).await.unwrap_err();
        assert_valid(&client, ProtocolVersion::V2025_11_25);
    }
}

/// A mount offers what its filters let through, under the names and descriptions it gives,
/// and only to principals with the scopes it requires: here a principal stated by a layer of
/// the gateway's own, as an OAuth resource server in front would.
#[tokio::test]
async fn a_mount_offers_what_its_filters_allow_under_its_names_to_whom_it_says() {
    let readonly = wharf_protocol::ToolAnnotations { read_only_hint: Some(true), ..Default::default() };
    let up = Server::builder("up", "1.0.0")
        .tool(ToolDef::new("search_docs", || async { "found" }).annotations(readonly.clone()))
        .tool(ToolDef::new("search_all", || async { "found all" }).annotations(readonly.clone()))
        .tool(ToolDef::new("search_secret", || async { "secret" }).annotations(readonly.clone()))
        .tool(ToolDef::new("delete_docs", || async { "deleted" }))
        .tool(ToolDef::new("admin_report", || async { "the report" }).annotations(readonly))
        .prompt(PromptDef::template("summary", "Summarize {doc}").argument("doc", "The document", true))
        .build()
        .unwrap();
    let mount = Mount::server("docs", up)
        .include(["search_*", "admin_*", "delete_*", "summary"])
        .exclude(["*_secret"])
        .read_only_tools()
        .rename("search_docs", "find")
        .describe("search_docs", "Find a document")
        .scopes("admin_*", ["docs:admin"]);
    let with_principal = |scopes: &'static [&'static str]| {
        wharf_server::layer_fn(move |mut request: wharf_server::McpRequest<'_>, next: wharf_server::Next<'_>| {
            request.set_principal(wharf_server::Principal::new("ada").with_scopes(scopes.iter().copied()));
            next.run(request)
        })
    };
    for (scopes, sees_admin) in [(&[][..], false), (&["docs:admin"][..], true)] {
        let builder = Server::builder("gateway", "1.0.0").layer(with_principal(scopes));
        let gateway = Gateway::with_builder(builder).mount(mount.clone()).build().await.unwrap();
        let client = InMemoryClient::latest_session(gateway).await;
        let listed = client.request("tools/list", json!({})).await.unwrap();
        let mut names: Vec<&str> =
            listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
        names.sort_unstable();
        let mut expected = vec!["docs_find", "docs_search_all"];
        if sees_admin {
            expected.insert(0, "docs_admin_report");
        }
        assert_eq!(names, expected, "included, not excluded, read-only, renamed, visible with {scopes:?}");
        let find = listed["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "docs_find").unwrap();
        assert_eq!(find["description"], "Find a document");
        let found = client.request("tools/call", json!({"name": "docs_find", "arguments": {}})).await.unwrap();
        assert_eq!(text(&found), "found", "the renamed tool calls the upstream's `search_docs`");
        for hidden in ["docs_search_secret", "docs_delete_docs", "docs_search_docs"] {
            client.request("tools/call", json!({"name": hidden, "arguments": {}})).await.unwrap_err();
        }
        let admin = client.request("tools/call", json!({"name": "docs_admin_report", "arguments": {}})).await;
        assert_eq!(admin.is_ok(), sees_admin, "refused without the scope: {admin:?}");
        let prompts = client.request("prompts/list", json!({})).await.unwrap();
        assert_eq!(prompts["prompts"][0]["name"], "docs_summary", "a prompt is included by name");
    }
}

/// Mounts come and go while the gateway serves, through its handle: the clients' session goes
/// on, they hear that the list changed, and the other mounts are not touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounts_come_and_go_while_the_gateway_serves() {
    let (gateway, handle) = Gateway::new("gateway", "1.0.0")
        .mount(Mount::server("alpha", upstream("alpha")))
        .build_with_handle()
        .await
        .unwrap();
    let client = InMemoryClient::latest_session(gateway).await;
    assert!(tool_names(&client).await.contains(&"alpha_echo".to_owned()));

    handle.mount(Mount::server("beta", upstream("beta"))).await.unwrap();
    assert_eq!(handle.mounts(), ["alpha", "beta"]);
    let called =
        client.request("tools/call", json!({"name": "beta_echo", "arguments": {"message": "new"}})).await.unwrap();
    assert_eq!(text(&called), "beta: new");
    wharf_testkit::fixture::wait_for(&client, |message| message["method"] == "notifications/tools/list_changed").await;
    let again = handle.mount(Mount::server("beta", upstream("beta"))).await.unwrap_err();
    assert_eq!(again.kind(), GatewayErrorKind::Mount, "{again}");
    let clash = handle.mount(Mount::server("gamma", upstream("gamma")).namespace("beta")).await.unwrap_err();
    assert_eq!(clash.kind(), GatewayErrorKind::Collision, "{clash}");
    assert_eq!(handle.mounts(), ["alpha", "beta"], "a mount that failed leaves nothing behind");

    assert!(handle.unmount("alpha").await);
    assert!(!handle.unmount("alpha").await, "only once");
    let names = tool_names(&client).await;
    assert!(!names.contains(&"alpha_echo".to_owned()) && names.contains(&"beta_echo".to_owned()), "{names:?}");
    client.request("tools/call", json!({"name": "alpha_echo", "arguments": {"message": "x"}})).await.unwrap_err();
    let report = handle.health().report();
    assert_eq!(report["mounts"].as_array().unwrap().len(), 1, "{report}");
    // The same session, all along.
    let called =
        client.request("tools/call", json!({"name": "beta_echo", "arguments": {"message": "still"}})).await.unwrap();
    assert_eq!(text(&called), "beta: still");
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

/// Counts the sessions of a server that ended.
struct EndedSessions(Arc<std::sync::atomic::AtomicUsize>);

impl wharf_server::Layer for EndedSessions {
    fn handle<'a>(
        &'a self,
        request: wharf_server::McpRequest<'a>,
        next: wharf_server::Next<'a>,
    ) -> wharf_server::LayerFuture<'a> {
        next.run(request)
    }

    fn session_ended(&self, _: &wharf_server::SessionEnd<'_>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

async fn count(client: &InMemoryClient) -> String {
    let called = client.request("tools/call", json!({"name": "up_count", "arguments": {}})).await.unwrap();
    text(&called).to_owned()
}

/// A mount whose upstream keeps state per session gives each 2025 session of the gateway's an
/// upstream session of its own, ended with it; by default one upstream session serves all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_can_have_an_upstream_session_of_its_own() {
    let ended = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counting = || {
        Server::builder("counting", "1.0.0")
            .tool(ToolDef::new("count", |context: wharf_server::RequestContext| async move {
                let calls = context.extensions().get_or_insert_with(std::sync::atomic::AtomicUsize::default);
                (calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1).to_string()
            }))
            .layer(EndedSessions(ended.clone()))
            .build()
            .unwrap()
    };
    let revision = ClientOptions::default().protocol_version(ProtocolVersion::V2025_11_25);
    for per_client in [false, true] {
        let mut mount = Mount::server("up", counting()).client_options(revision.clone());
        if per_client {
            mount = mount.session_per_client();
        }
        let gateway = Gateway::new("gateway", "1.0.0").mount(mount).build().await.unwrap();
        let (ada, alan) =
            (InMemoryClient::latest_session(gateway.clone()).await, InMemoryClient::latest_session(gateway).await);
        assert_eq!(count(&ada).await, "1");
        assert_eq!(count(&ada).await, "2");
        let expected = if per_client { "1" } else { "3" };
        assert_eq!(count(&alan).await, expected, "per client: {per_client}");
        if per_client {
            let before = ended.load(std::sync::atomic::Ordering::SeqCst);
            ada.close().await.unwrap();
            eventually_async("ada's upstream session ended", Duration::from_secs(10), || async {
                (ended.load(std::sync::atomic::Ordering::SeqCst) > before).then_some(())
            })
            .await;
            assert_eq!(count(&alan).await, "2", "alan's goes on");
        }
    }
}

/// A lazy mount is not started with the gateway, but with its first request, whose answer
/// already counts it: a 2025 client's `initialize` declares tools and its list has them; a
/// 2026-07-28 client's first request finds them too. One whose upstream cannot be reached is
/// left out (reported down, tried again), and the others serve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_mount_starts_with_the_first_request() {
    for era in ["2025", "2026"] {
        let nowhere = format!("http://127.0.0.1:{}/mcp", wharf_testkit::ports::free_port());
        let (gateway, handle) = Gateway::new("gateway", "1.0.0")
            .mount(Mount::server("later", upstream("later")).start_lazily())
            .mount(Mount::url("gone", nowhere).start_lazily())
            .build_with_handle()
            .await
            .unwrap();
        assert!(handle.mounts().is_empty(), "{era}: nothing started yet");
        let waiting = handle.health().report();
        assert_eq!(waiting["mounts"][0]["state"], "lazy", "{era}: {waiting}");
        let tools = if era == "2025" {
            let client = InMemoryClient::session(gateway, ProtocolVersion::V2025_11_25, ClientCapabilities::default());
            let (client, initialized) = client.await.unwrap();
            assert!(initialized.capabilities.tools.is_some(), "{era}: the first answer counts the lazy mount");
            tool_names(&client).await
        } else {
            let client = InMemoryClient::stateless(gateway, ClientCapabilities::default());
            let listed = client.request("tools/list", json!({})).await.unwrap();
            listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
        };
        assert!(tools.contains(&"later_echo".to_owned()), "{era}: {tools:?}");
        assert_eq!(handle.mounts(), ["later"], "{era}: the unreachable one is left out");
        let report = handle.health().report();
        assert_eq!(report["status"], "degraded", "{era}: {report}");
        let gone = report["mounts"].as_array().unwrap().iter().find(|mount| mount["name"] == "gone").unwrap();
        assert_eq!(gone["state"], "down", "{era}: {report}");
        // It is tried again until it is taken away, which an operator may do before it starts.
        assert!(handle.unmount("gone").await, "{era}");
        let report = handle.health().report();
        assert_eq!(report["status"], "up", "{era}: {report}");
        assert_eq!(report["mounts"].as_array().map(Vec::len), Some(1), "{era}: {report}");
    }
}

/// A client's own `_meta` members (a trace context, its keys) reach the upstream, whatever era
/// each side speaks; the protocol's members are each hop's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_own_meta_reaches_the_upstream() {
    let seen = Server::builder("seen", "1.0.0")
        .tool(ToolDef::new("meta", |context: wharf_server::RequestContext| async move {
            serde_json::to_string(&context.meta()).unwrap_or_default()
        }))
        .build()
        .unwrap();
    for upstream_revision in [None, Some(ProtocolVersion::V2025_11_25)] {
        let (session, stateless) = clients_in_front_of(&seen, upstream_revision).await;
        let call = json!({"name": "meta", "arguments": {}, "_meta": {"traceparent": "00-abc-def-01", "com.example/tenant": "blue"}});
        for client in [&session, &stateless] {
            let result = client.request("tools/call", call.clone()).await.unwrap();
            let meta: Value = serde_json::from_str(text(&result)).unwrap();
            assert_eq!(
                meta,
                json!({"traceparent": "00-abc-def-01", "com.example/tenant": "blue"}),
                "upstream {upstream_revision:?}"
            );
        }
    }
}

/// An upstream's own `_meta` members on a result (a cache hint of its own, say) reach the
/// client; what the upstream says of itself there (its `serverInfo`) and its `resultType` do
/// not: the client hears the gateway's, in its own revision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_own_result_meta_reaches_the_client_and_its_protocol_members_do_not() {
    let upstream = Server::builder("upstream-itself", "1.0.0")
        .tool(ToolDef::new("hinted", || async {
            let meta = json!({"com.example/cache": "warm", "io.modelcontextprotocol/madeUp": 1});
            wharf_protocol::CallToolResult {
                meta: serde_json::from_value(meta).ok(),
                ..wharf_protocol::CallToolResult::text("done")
            }
        }))
        .build()
        .unwrap();
    for upstream_revision in [None, Some(ProtocolVersion::V2025_11_25)] {
        let (session, stateless) = clients_in_front_of(&upstream, upstream_revision).await;
        for (client, era) in [(&session, "2025 session"), (&stateless, "stateless")] {
            let result = client.request("tools/call", json!({"name": "hinted", "arguments": {}})).await.unwrap();
            let label = format!("upstream {upstream_revision:?}, {era}: {result}");
            assert_eq!(text(&result), "done", "{label}");
            assert_eq!(result["_meta"]["com.example/cache"], "warm", "{label}");
            assert!(result["_meta"].get("io.modelcontextprotocol/madeUp").is_none(), "{label}");
            assert!(!result.to_string().contains("upstream-itself"), "{label}");
            let server_info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
            match era {
                "stateless" => assert_eq!(server_info["name"], "gateway", "{label}"),
                _ => assert!(server_info.is_null() && result.get("resultType").is_none(), "{label}"),
            }
        }
    }
}

/// A 2025 session and a stateless client of a gateway that mounts `upstream` without a
/// namespace, spoken to in `revision` (the newest both speak when `None`).
async fn clients_in_front_of(upstream: &Server, revision: Option<ProtocolVersion>) -> (InMemoryClient, InMemoryClient) {
    let mut mount = Mount::server("up", upstream.clone()).namespace("");
    if let Some(version) = revision {
        mount = mount.client_options(ClientOptions::default().protocol_version(version));
    }
    let gateway = Gateway::new("gateway", "1.0.0").mount(mount).build().await.unwrap();
    let (session, _) =
        InMemoryClient::session(gateway.clone(), ProtocolVersion::V2025_11_25, ClientCapabilities::default())
            .await
            .unwrap();
    (session, InMemoryClient::stateless(gateway, ClientCapabilities::default()))
}

fn listed_tool(listed: &Value, name: &str) -> Value {
    listed["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name).cloned().unwrap_or(Value::Null)
}

/// An upstream's MCP Apps views keep their `ui://` behind the namespace (`ui://app/...`), the
/// tools that name them name them there, and when the upstream swaps a view for another while
/// the gateway serves, the gateway's tools follow in the same update (never naming a view that
/// went), in either era spoken upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_keep_their_scheme_behind_a_namespace_and_tools_follow_them_as_they_change() {
    const PAGE: &str = "<!DOCTYPE html><html><body>view</body></html>";
    for revision in [None, Some(ProtocolVersion::V2025_11_25)] {
        let up = Server::builder("apps", "1.0.0")
            .resource(ResourceDef::view("ui://dash/main", "main", PAGE))
            .tool(ToolDef::new("show", || async { "shown" }).view("ui://dash/main"))
            .build()
            .unwrap();
        let mut mount = Mount::server("apps", up.clone()).namespace("app");
        if let Some(version) = revision {
            mount = mount.client_options(ClientOptions::default().protocol_version(version));
        }
        let gateway = Gateway::new("gateway", "1.0.0").mount(mount).build().await.unwrap();
        let client = InMemoryClient::latest_session(gateway).await;
        let label = format!("{revision:?}");
        let listed = client.request("tools/list", json!({})).await.unwrap();
        assert_eq!(listed_tool(&listed, "app_show")["_meta"]["ui"]["resourceUri"], "ui://app/dash/main", "{label}");
        let read = client.request("resources/read", json!({"uri": "ui://app/dash/main"})).await.unwrap();
        assert_eq!(read["contents"][0]["uri"], "ui://app/dash/main", "{label}");
        assert_eq!(read["contents"][0]["text"], PAGE, "{label}");

        up.update(|update| {
            update.remove_tool("show");
            update.remove_resource("ui://dash/main");
            update.add_resource(ResourceDef::view("ui://dash/other", "other", PAGE))?;
            update.add_tool(ToolDef::new("show", || async { "shown elsewhere" }).view("ui://dash/other"))
        })
        .unwrap();
        eventually_async(&format!("app_show follows its view ({label})"), Duration::from_secs(10), || async {
            let listed = client.request("tools/list", json!({})).await.unwrap();
            (listed_tool(&listed, "app_show")["_meta"]["ui"]["resourceUri"] == "ui://app/dash/other").then_some(())
        })
        .await;
        // The upstream tells of its tools and of its resources in two notifications: the gateway
        // refreshes each list when it hears of it, so the views may follow the tools a moment later.
        eventually_async(&format!("the old view goes ({label})"), Duration::from_secs(10), || async {
            let resources = client.request("resources/list", json!({})).await.unwrap();
            let uris: Vec<String> = resources["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["uri"].as_str().unwrap().to_owned())
                .collect();
            (uris == ["ui://app/dash/other"]).then_some(())
        })
        .await;
        assert_valid(&client, ProtocolVersion::V2025_11_25);
    }
}
