//! Prompts, resources, templates, completions and pagination.

use serde_json::json;
use wharf_protocol::{ClientCapabilities, ProtocolVersion};
use wharf_server::testing::InMemoryClient;

use wharf_server::ServerOptions;
use wharf_testkit::fixture;
use wharf_testkit::schemas::assert_valid;

#[tokio::test]
async fn static_prompts_substitute_arguments_and_require_the_required_ones() {
    let client = fixture::session(ProtocolVersion::V2025_06_18).await;
    let result = client
        .request("prompts/get", json!({"name": "greeting", "arguments": {"name": "Ann", "place": "Oslo"}}))
        .await
        .unwrap();
    assert_eq!(result["messages"][0]["content"]["text"], "Hello Ann, welcome to Oslo!");
    assert_eq!(result["messages"][0]["role"], "user");
    let err = client.request("prompts/get", json!({"name": "greeting", "arguments": {}})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("name"), "{}", err.message);
    let err = client.request("prompts/get", json!({"name": "nope"})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    let listed = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(listed["prompts"][1]["arguments"][0], json!({"name": "name", "description": "Who", "required": true}));
    assert_valid(&client, ProtocolVersion::V2025_06_18);
}

#[tokio::test]
async fn dynamic_prompts_run_their_handler() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let result =
        client.request("prompts/get", json!({"name": "dynamic", "arguments": {"topic": "ships"}})).await.unwrap();
    assert_eq!(result["messages"][0]["content"]["text"], "Tell me about ships");
    assert_eq!(result["messages"][1]["content"]["resource"]["text"], "ships");
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn resources_static_binary_dynamic_and_templated() {
    let client = fixture::session(ProtocolVersion::V2025_11_25).await;
    let read = |uri: &'static str| client.request("resources/read", json!({"uri": uri}));
    let config = read("config://app").await.unwrap();
    assert_eq!(
        config["contents"][0],
        json!({"uri": "config://app", "mimeType": "application/json", "text": "{\"a\":1}"})
    );
    let logo = read("bin://logo").await.unwrap();
    assert_eq!(logo["contents"][0]["blob"], "AJ+Slg==");
    let stats = read("stats://calls").await.unwrap();
    assert_eq!(stats["contents"][0]["mimeType"], "application/json");
    let profile = read("users://42/profile").await.unwrap();
    assert_eq!(
        profile["contents"][0],
        json!({"uri": "users://42/profile", "mimeType": "text/plain", "text": "user 42"})
    );
    let err = read("users://abc/profile").await.unwrap_err();
    assert_eq!(err.code.0, -32602, "a variable that does not parse");
    for missing in ["users://500/profile", "nothing://at/all"] {
        let err = client.request("resources/read", json!({"uri": missing})).await.unwrap_err();
        assert_eq!(err.code.0, -32002, "{missing}");
        assert_eq!(err.data.unwrap()["uri"], missing);
    }
    let templates = client.request("resources/templates/list", json!({})).await.unwrap();
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "users://{id}/profile");
    let listed = client.request("resources/list", json!({})).await.unwrap();
    assert_eq!(listed["resources"].as_array().unwrap().len(), 4);
    assert_eq!((listed["resources"][0]["size"].clone(), listed["resources"][1]["size"].clone()), (json!(4), json!(7)));
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

/// A completion that counts for itself keeps its own `total` and `hasMore`; more than 100
/// values are still cut, and then there are more.
#[tokio::test]
async fn a_counted_completion_keeps_its_count_and_is_still_cut_at_100() {
    let page = |values: usize, total: u64| {
        move |_| async move {
            let values = (0..values).map(|n| format!("v{n}")).collect();
            wharf_protocol::Completion { values, total: Some(total), has_more: Some(false) }
        }
    };
    let server = wharf_server::Server::builder("counted", "1")
        .prompt(
            wharf_server::PromptDef::template("short", "{a}")
                .argument("a", "a", true)
                .complete_counted("a", page(3, 40)),
        )
        .prompt(
            wharf_server::PromptDef::template("long", "{a}")
                .argument("a", "a", true)
                .complete_counted("a", page(120, 120)),
        )
        .build()
        .unwrap();
    let client = InMemoryClient::stateless(server, ClientCapabilities::default());
    let complete = |name: &str| {
        client.request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": "a", "value": ""}}),
        )
    };
    let short = complete("short").await.unwrap();
    assert_eq!(short["completion"], json!({"values": ["v0", "v1", "v2"], "total": 40, "hasMore": false}));
    let long = complete("long").await.unwrap();
    assert_eq!(long["completion"]["values"].as_array().map(Vec::len), Some(100));
    assert_eq!((&long["completion"]["total"], &long["completion"]["hasMore"]), (&json!(120), &json!(true)));
}

#[tokio::test]
async fn completions_filter_cap_at_100_and_see_other_arguments() {
    let client = fixture::session(ProtocolVersion::V2025_06_18).await;
    let complete = |reference: serde_json::Value, name: &str, value: &str, context: serde_json::Value| {
        client.request(
            "completion/complete",
            json!({"ref": reference, "argument": {"name": name, "value": value}, "context": context}),
        )
    };
    let prompt = json!({"type": "ref/prompt", "name": "greeting"});
    let result = complete(prompt.clone(), "name", "al", json!({})).await.unwrap();
    assert_eq!(result["completion"], json!({"values": ["alice", "albert"], "total": 2, "hasMore": false}));
    let many = complete(json!({"type": "ref/prompt", "name": "dynamic"}), "topic", "t", json!({})).await.unwrap();
    assert_eq!(many["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!((many["completion"]["total"].clone(), many["completion"]["hasMore"].clone()), (json!(150), json!(true)));
    let template = json!({"type": "ref/resource", "uri": "users://{id}/profile"});
    let plain = complete(template.clone(), "id", "", json!({})).await.unwrap();
    assert_eq!(plain["completion"]["values"], json!(["1", "2", "12"]));
    let eu = complete(template.clone(), "id", "9", json!({"arguments": {"region": "eu"}})).await.unwrap();
    assert_eq!(eu["completion"]["values"], json!(["99"]));
    let none = complete(prompt.clone(), "place", "x", json!({})).await.unwrap();
    assert_eq!(none["completion"]["values"], json!([]));
    assert_eq!(complete(prompt, "nope", "", json!({})).await.unwrap_err().code.0, -32602);
    assert_eq!(complete(template, "name", "", json!({})).await.unwrap_err().code.0, -32602);
    assert_valid(&client, ProtocolVersion::V2025_06_18);
}

#[tokio::test]
async fn lists_are_paginated_with_opaque_cursors() {
    let server = fixture::builder().options(ServerOptions::default().page_size(3)).build().unwrap();
    let (client, _) =
        InMemoryClient::session(server, ProtocolVersion::V2025_11_25, ClientCapabilities::default()).await.unwrap();
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let page = client.request("tools/list", params).await.unwrap();
        pages += 1;
        let tools = page["tools"].as_array().unwrap();
        assert!(tools.len() <= 3);
        names.extend(tools.iter().map(|tool| tool["name"].as_str().unwrap().to_owned()));
        match page.get("nextCursor").and_then(|cursor| cursor.as_str()) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    // Every tool once, in name order, three to a page.
    let one_page = InMemoryClient::stateless(fixture::server(), Default::default()).list_tools().await.unwrap();
    let expected: Vec<String> = one_page.tools.iter().map(|tool| tool.name.clone()).collect();
    assert!(expected.windows(2).all(|pair| pair[0] < pair[1]), "{expected:?}");
    assert_eq!(names, expected);
    assert_eq!(pages, names.len().div_ceil(3));
    let err = client.request("tools/list", json!({"cursor": "not-a-cursor"})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

/// Prompt and resource handlers reach the server's shared state through their context, as
/// tools do through `State<S>`.
#[tokio::test]
async fn prompts_and_resources_reach_the_shared_state() {
    use wharf_server::{PromptDef, ResourceDef, Server};
    struct Motto(&'static str);
    let server = Server::builder("state", "1.0.0")
        .state(Motto("Keep calm"))
        .prompt(PromptDef::new("motto", |call| async move {
            call.context.state::<Motto>().map_or("no state".to_owned(), |motto| motto.0.to_owned())
        }))
        .resource(ResourceDef::dynamic("motto://today", "motto", |call| async move {
            call.context.state::<Motto>().map_or("no state".to_owned(), |motto| format!("{}, today", motto.0))
        }))
        .build()
        .unwrap();
    let client =
        InMemoryClient::session(server, ProtocolVersion::V2025_11_25, ClientCapabilities::default()).await.unwrap().0;
    let prompt = client.request("prompts/get", json!({"name": "motto"})).await.unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Keep calm");
    let read = client.request("resources/read", json!({"uri": "motto://today"})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "Keep calm, today");
}

#[tokio::test]
async fn kinds_offered_before_any_is_registered_are_declared_and_list_empty() {
    use wharf_server::{Offer, Server, ToolDef};
    let build = |offers: &[Offer]| {
        offers
            .iter()
            .fold(Server::builder("offers", "1.0.0"), |builder, offer| builder.offer(*offer))
            .tool(ToolDef::new("noop", || async { "ok" }))
            .build()
            .unwrap()
    };

    let (bare, init) =
        InMemoryClient::session(build(&[]), ProtocolVersion::V2025_11_25, ClientCapabilities::default()).await.unwrap();
    assert!(init.capabilities.prompts.is_none() && init.capabilities.resources.is_none());
    assert!(init.capabilities.completions.is_none());
    assert_eq!(bare.request("prompts/list", json!({})).await.unwrap_err().code.0, -32601);

    let offered = build(&[Offer::Prompts, Offer::Resources, Offer::Completions]);
    let (client, init) =
        InMemoryClient::session(offered.clone(), ProtocolVersion::V2025_11_25, ClientCapabilities::default())
            .await
            .unwrap();
    let capabilities = serde_json::to_value(&init.capabilities).unwrap();
    assert_eq!(capabilities["prompts"], json!({"listChanged": true}));
    assert_eq!(capabilities["resources"], json!({"subscribe": true, "listChanged": true}));
    assert_eq!(capabilities["completions"], json!({}));
    assert_eq!(client.request("prompts/list", json!({})).await.unwrap()["prompts"], json!([]));
    assert_eq!(client.request("resources/list", json!({})).await.unwrap()["resources"], json!([]));
    let templates = client.request("resources/templates/list", json!({})).await.unwrap();
    assert_eq!(templates["resourceTemplates"], json!([]));
    let unknown = json!({"ref": {"type": "ref/prompt", "name": "later"}, "argument": {"name": "a", "value": ""}});
    assert_eq!(client.request("completion/complete", unknown).await.unwrap_err().code.0, -32602);
    assert_valid(&client, ProtocolVersion::V2025_11_25);

    // The 2026-07-28 era discovers the same.
    let stateless = InMemoryClient::stateless(offered, ClientCapabilities::default());
    let discovered = stateless.request("server/discover", json!({})).await.unwrap();
    assert_eq!(discovered["capabilities"]["prompts"], json!({"listChanged": true}));
    assert_eq!(stateless.request("prompts/list", json!({})).await.unwrap()["prompts"], json!([]));
}
