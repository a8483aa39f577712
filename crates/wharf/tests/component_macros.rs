//! `#[prompt]`, `#[resource]` and `#[resource_template]` end to end, with the seed examples'
//! prompts and resources.

use serde_json::json;
use wharf::protocol::{ClientCapabilities, ProtocolVersion};
use wharf::testing::InMemoryClient;
use wharf::{RequestContext, RpcError, Server, completion::CompletionCall, prompt, resource, resource_template};

/// Review code for quality and style.
#[prompt(
    describe(code = "The code to review", style = "How thorough: detailed or brief"),
    optional(style),
    complete(style = ["detailed", "brief"])
)]
const CODE_REVIEW: &str = "Please review this code ({style}):\n{code}";

/// A greeting that fits the time of day.
#[prompt(title = "Greeting")]
async fn time_based_greeting(
    #[arg(description = "Who to greet", complete = ["alice", "bob"])] name: String,
    #[arg(description = "An hour of the day, 0-23")] hour: Option<String>,
) -> Result<String, String> {
    let hour: u32 = hour.as_deref().unwrap_or("9").parse().map_err(|_| "hour must be a number".to_owned())?;
    let part = match hour {
        5..=11 => "Good morning",
        12..=17 => "Good afternoon",
        _ => "Good evening",
    };
    Ok(format!("{part}, {name}!"))
}

/// The application's configuration.
#[resource("config://app", mime_type = "application/json")]
async fn app_config() -> String {
    json!({"theme": "dark", "version": 3}).to_string()
}

/// Live server statistics.
#[resource("stats://server", name = "stats", mime_type = "application/json")]
async fn server_stats(context: RequestContext) -> serde_json::Value {
    json!({"session": context.session_id().is_empty(), "tools": 0})
}

async fn usernames(call: CompletionCall) -> Vec<String> {
    ["alice", "albert", "bob"].into_iter().filter(|name| name.starts_with(&call.value)).map(str::to_owned).collect()
}

/// A user's public profile.
#[resource_template("user://{username}/profile", mime_type = "text/plain")]
async fn user_profile(#[arg(complete_with = usernames)] username: String) -> Result<String, RpcError> {
    if username == "nobody" {
        return Err(RpcError::resource_not_found(&format!("user://{username}/profile")));
    }
    Ok(format!("{username} joined in 2024"))
}

/// One numbered page.
#[resource_template("pages://{number}")]
async fn page(number: u32) -> String {
    format!("page {number}")
}

/// The audit trail.
#[resource("audit://trail", scopes = ["audit:read"])]
async fn audit_trail() -> String {
    "trail".to_owned()
}

/// An incident report.
#[prompt(scopes = ["incidents:write"])]
async fn incident() -> String {
    "Report the incident".to_owned()
}

fn server() -> Server {
    Server::builder("components", "1.0")
        .prompt(incident_prompt())
        .resource(audit_trail_resource())
        .prompt(code_review_prompt())
        .prompt(time_based_greeting_prompt())
        .resource(app_config_resource())
        .resource(server_stats_resource())
        .resource_template(user_profile_template())
        .resource_template(page_template())
        .build()
        .unwrap()
}

#[tokio::test]
async fn prompts_from_templates_and_functions() {
    let (client, _) =
        InMemoryClient::session(server(), ProtocolVersion::V2025_11_25, ClientCapabilities::default()).await.unwrap();
    let prompts = client.request("prompts/list", json!({})).await.unwrap();
    let review = &prompts["prompts"][0];
    assert_eq!(review["name"], "code_review");
    assert_eq!(review["description"], "Review code for quality and style.");
    assert_eq!(
        review["arguments"],
        json!([
            {"name": "style", "description": "How thorough: detailed or brief", "required": false},
            {"name": "code", "description": "The code to review", "required": true}
        ])
    );
    let greeting = &prompts["prompts"][1];
    assert_eq!(greeting["name"], "time_based_greeting");
    assert_eq!(greeting["title"], "Greeting");

    let rendered = client
        .request("prompts/get", json!({"name": "code_review", "arguments": {"code": "x = 1", "style": "brief"}}))
        .await;
    assert_eq!(rendered.unwrap()["messages"][0]["content"]["text"], "Please review this code (brief):\nx = 1");
    let missing = client.request("prompts/get", json!({"name": "code_review", "arguments": {}})).await.unwrap_err();
    assert_eq!(missing.code.0, -32602);
    let evening = client
        .request("prompts/get", json!({"name": "time_based_greeting", "arguments": {"name": "Ada", "hour": "20"}}));
    assert_eq!(evening.await.unwrap()["messages"][0]["content"]["text"], "Good evening, Ada!");

    let completed = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "style", "value": "b"}}),
        )
        .await
        .unwrap();
    assert_eq!(completed["completion"]["values"], json!(["brief"]));
}

#[tokio::test]
async fn resources_and_templates_with_typed_variables_and_completion() {
    let (client, _) =
        InMemoryClient::session(server(), ProtocolVersion::V2025_11_25, ClientCapabilities::default()).await.unwrap();
    let listed = client.request("resources/list", json!({})).await.unwrap();
    let config = listed["resources"].as_array().unwrap().iter().find(|r| r["uri"] == "config://app").unwrap();
    assert_eq!(config["name"], "app_config");
    assert_eq!(config["description"], "The application's configuration.");
    assert_eq!(config["mimeType"], "application/json");
    let read = client.request("resources/read", json!({"uri": "config://app"})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], r#"{"theme":"dark","version":3}"#);
    let stats = client.request("resources/read", json!({"uri": "stats://server"})).await.unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(stats["contents"][0]["text"].as_str().unwrap()).unwrap()["session"],
        false
    );

    let profile = client.request("resources/read", json!({"uri": "user://alice/profile"})).await.unwrap();
    assert_eq!(profile["contents"][0]["text"], "alice joined in 2024");
    let missing = client.request("resources/read", json!({"uri": "user://nobody/profile"})).await.unwrap_err();
    assert_eq!(missing.code.0, -32002);
    assert_eq!(
        client.request("resources/read", json!({"uri": "pages://12"})).await.unwrap()["contents"][0]["text"],
        "page 12"
    );
    let not_a_number = client.request("resources/read", json!({"uri": "pages://twelve"})).await.unwrap_err();
    assert_eq!(not_a_number.code.0, -32602, "a variable that does not parse is invalid params");

    let completed = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "user://{username}/profile"},
                "argument": {"name": "username", "value": "al"}}),
        )
        .await
        .unwrap();
    assert_eq!(completed["completion"]["values"], json!(["alice", "albert"]));
}

#[tokio::test]
async fn scoped_prompts_and_resources_are_hidden_and_refused_without_their_scopes() {
    let (client, _) =
        InMemoryClient::session(server(), ProtocolVersion::V2025_11_25, ClientCapabilities::default()).await.unwrap();
    let prompts = client.request("prompts/list", json!({})).await.unwrap();
    assert!(prompts["prompts"].as_array().unwrap().iter().all(|prompt| prompt["name"] != "incident"), "{prompts}");
    let resources = client.request("resources/list", json!({})).await.unwrap();
    assert!(resources["resources"].as_array().unwrap().iter().all(|resource| resource["uri"] != "audit://trail"));
    let refused = client.request("prompts/get", json!({"name": "incident"})).await.unwrap_err();
    assert_eq!((refused.code.0, refused.data.unwrap()["requiredScopes"].clone()), (-32003, json!(["incidents:write"])));
    let refused = client.request("resources/read", json!({"uri": "audit://trail"})).await.unwrap_err();
    assert_eq!(refused.code.0, -32003);
}
