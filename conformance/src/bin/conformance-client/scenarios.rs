//! What the client does in each scenario of the client conformance suite: connect in the
//! revision the suite names, then make the calls the scenario's server waits for.

use serde_json::{Value, json};
use wharf::client::oauth::{EnterpriseManaged, ImmediateRedirect, OAuth};
use wharf::client::{Client, ClientOptions, Target};

use crate::Invocation;
use crate::answers::Accepting;

pub(crate) async fn run(invocation: &Invocation) -> Result<(), String> {
    let mut options = ClientOptions::default()
        .client_info("wharf-conformance-client", env!("CARGO_PKG_VERSION"))
        .handler(Accepting)
        .protocol_version(invocation.version)
        .timeout(std::time::Duration::from_secs(20));
    if invocation.scenario.starts_with("auth/") {
        options = options.oauth(oauth(&invocation.scenario, &invocation.context)?);
    }
    let client = Client::connect_with(Target::url(&invocation.url), options)
        .await
        .map_err(|err| format!("connecting: {err}"))?;
    let outcome = drive(&client, invocation).await;
    client.close().await;
    outcome
}

/// OAuth as each auth scenario expects it: machine grants from the suite's context; else the
/// authorization code flow with a server that redirects at once, a client metadata document
/// where the server takes one, and a pre-registered client where the suite gives one.
fn oauth(scenario: &str, context: &Value) -> Result<OAuth, String> {
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    let needed = |key: &str| text(key).ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT has no `{key}`"));
    match scenario {
        "auth/client-credentials-basic" => {
            return Ok(OAuth::client_credentials(needed("client_id")?, needed("client_secret")?));
        }
        "auth/client-credentials-jwt" => {
            return OAuth::client_credentials_with_key(needed("client_id")?, &needed("private_key_pem")?)
                .map_err(|err| err.to_string());
        }
        "auth/wif-jwt-bearer" => return Ok(OAuth::jwt_bearer(needed("valid_jwt")?, text("client_id"))),
        "auth/enterprise-managed-authorization" => {
            return Ok(OAuth::enterprise_managed(EnterpriseManaged {
                idp_token_endpoint: needed("idp_token_endpoint")?,
                id_token: needed("idp_id_token")?,
                idp_client_id: text("idp_client_id"),
                client_id: needed("client_id")?,
                client_secret: needed("client_secret")?,
            }));
        }
        _ => {}
    }
    let authorizer = ImmediateRedirect::new("http://localhost:3000/callback").map_err(|err| err.to_string())?;
    let mut oauth = OAuth::new(authorizer)
        .client_name("wharf-conformance-client")
        .client_metadata_url("https://conformance-test.local/client-metadata.json");
    if let Some(client_id) = text("client_id") {
        oauth = oauth.pre_registered(client_id, text("client_secret"), text("issuer"));
    }
    Ok(oauth)
}

async fn drive(client: &Client, invocation: &Invocation) -> Result<(), String> {
    let failed = |what: &str| {
        let what = what.to_owned();
        move |err: wharf::client::ClientError| format!("{what}: {err}")
    };
    match invocation.scenario.as_str() {
        "tools_call" => {
            client.list_tools().await.map_err(failed("tools/list"))?;
            client.call_tool("add_numbers", json!({"a": 2, "b": 3})).await.map_err(failed("add_numbers"))?;
        }
        "elicitation-sep1034-client-defaults" => {
            client.list_tools().await.map_err(failed("tools/list"))?;
            client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await
                .map_err(failed("test_client_elicitation_defaults"))?;
        }
        "sse-retry" => {
            client.list_tools().await.map_err(failed("tools/list"))?;
            client.call_tool("test_reconnection", json!({})).await.map_err(failed("test_reconnection"))?;
        }
        "request-metadata" => {
            client.list_tools().await.map_err(failed("tools/list"))?;
        }
        "sep-2322-client-request-state" => {
            client.list_tools().await.map_err(failed("tools/list"))?;
            for tool in
                ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"]
            {
                client.call_tool(tool, json!({})).await.map_err(failed(tool))?;
            }
        }
        "http-standard-headers" => standard_headers(client).await?,
        "http-custom-headers" => {
            client.list_tools().await.map_err(failed("tools/list"))?;
            let calls = invocation.context.get("toolCalls").and_then(Value::as_array).cloned().unwrap_or_default();
            for call in calls {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                let arguments = call.get("arguments").cloned().unwrap_or_else(|| json!({}));
                client.call_tool(name, arguments).await.map_err(failed(name))?;
            }
        }
        "http-invalid-tool-headers" => {
            // Tools whose marks are invalid are left out of the list: only the valid ones are
            // called.
            for tool in client.list_tools().await.map_err(failed("tools/list"))? {
                let arguments = example_arguments(&tool.input_schema);
                client.call_tool(&tool.name, arguments).await.map_err(failed(&tool.name))?;
            }
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_tools().await.map_err(failed("tools/list"))?;
            let focal = tools
                .iter()
                .find(|tool| tool.name == "json_schema_2020_12_tool")
                .ok_or("no json_schema_2020_12_tool in tools/list")?;
            let schema = Value::Object(focal.input_schema.clone());
            client
                .call_tool("json_schema_echo", json!({"schema": schema}))
                .await
                .map_err(failed("json_schema_echo"))?;
        }
        "sep-2640-client-no-prefetch" => {
            // Listing skills reads none of their files.
            client.list_skills().await.map_err(failed("skills/list"))?;
        }
        scenario if scenario.starts_with("sep-2640-client-") => {
            // Load the first skill as a host would when it is used: its SKILL.md is checked
            // against the listing before anything else of it is read.
            let skills = client.list_skills().await.map_err(failed("skills/list"))?;
            let skill = skills.first().ok_or("the server lists no skill")?;
            let loaded = client.load_skill(skill).await.map_err(failed("loading the skill"))?;
            let files = skill.resources.as_ref().map(|resources| resources.files()).unwrap_or_default();
            for file in files.iter().filter(|file| file.uri != skill.uri) {
                client.read_skill_file(&loaded, &file.uri).await.map_err(failed(&file.uri))?;
            }
        }
        scenario if scenario.starts_with("auth/") => {
            // Two authorized requests at least: a server may change its authorization server
            // after the first.
            let tools = client.list_tools().await.map_err(failed("tools/list"))?;
            if tools.iter().any(|tool| tool.name == "test-tool") {
                client.call_tool("test-tool", json!({})).await.map_err(failed("test-tool"))?;
            }
        }
        _ => {
            // initialize, json-schema-ref-no-deref, and what a client does by default: list the
            // tools (their schemas are kept as they are, `$ref`s never fetched).
            client.list_tools().await.map_err(failed("tools/list"))?;
        }
    }
    Ok(())
}

/// Every listing, and one call of each kind, for the standard headers to be seen on each.
async fn standard_headers(client: &Client) -> Result<(), String> {
    let tools = client.list_tools().await.map_err(|err| format!("tools/list: {err}"))?;
    if let Some(tool) = tools.first() {
        client.call_tool(&tool.name, json!({})).await.map_err(|err| format!("tools/call: {err}"))?;
    }
    let resources = client.list_resources().await.map_err(|err| format!("resources/list: {err}"))?;
    if let Some(resource) = resources.first() {
        client.read_resource(&resource.uri).await.map_err(|err| format!("resources/read: {err}"))?;
    }
    let prompts = client.list_prompts().await.map_err(|err| format!("prompts/list: {err}"))?;
    if let Some(prompt) = prompts.first() {
        client.get_prompt(&prompt.name, json!({})).await.map_err(|err| format!("prompts/get: {err}"))?;
    }
    Ok(())
}

/// Arguments for a tool: a plain value for each required property.
fn example_arguments(schema: &serde_json::Map<String, Value>) -> Value {
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut arguments = serde_json::Map::new();
    for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        if !required.contains(&name.as_str()) && name != "region" {
            continue;
        }
        let value = match property.get("type").and_then(Value::as_str) {
            Some("integer") => json!(1),
            Some("number") => json!(1.5),
            Some("boolean") => json!(true),
            _ if name == "region" => json!("us-west1"),
            _ => json!("conformance"),
        };
        arguments.insert(name.clone(), value);
    }
    Value::Object(arguments)
}
