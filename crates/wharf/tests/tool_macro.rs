//! `#[tool]` end to end: the generated definitions are listed with the schema their `#[arg]`
//! constraints describe, and calls are validated, defaulted and dispatched to the function.

use serde_json::{Value, json};
use wharf::protocol::{ClientCapabilities, ProtocolVersion};
use wharf::testing::InMemoryClient;
use wharf::{Json, RequestContext, Server, tool};

/// Echo a message back.
#[tool]
async fn echo(#[arg(description = "The message to echo")] message: String) -> String {
    message
}

/// Greet a user by name.
///
/// Formal greetings use the surname.
#[tool(title = "Greeter", read_only, idempotent)]
async fn greet_user(
    #[arg(description = "Who", min_length = 1, max_length = 100)] name: String,
    #[arg(min = 0, max = 150)] age: u32,
    formal: Option<bool>,
) -> String {
    let greeting = if formal == Some(true) { "Good day" } else { "Hi" };
    format!("{greeting}, {name} ({age})")
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Day {
    day: u32,
    high: i32,
}

/// The forecast for the next days.
#[tool]
#[allow(non_snake_case)]
async fn getForecast(
    #[arg(min_length = 1, max_length = 100)] location: String,
    #[arg(min = 1, max = 14, default = 7u32)] days: u32,
    #[arg(one_of = ["celsius", "fahrenheit"], rename = "unit")] units: Option<String>,
    context: RequestContext,
) -> Json<Vec<Day>> {
    let _ = (location, units, context.protocol_version());
    Json((1..=days).map(|day| Day { day, high: 20 + day as i32 }).collect())
}

/// Tags a document.
#[tool(name = "tag.add", destructive, icon = "https://example.com/tag.png")]
async fn add_tags(
    #[arg(min_items = 1, max_items = 3, unique_items, items(min_length = 1, max_length = 20, pattern = "^[a-z]+$"))]
    tags: Vec<String>,
    #[arg(format = "email")] owner: String,
    #[arg(pattern = "^[a-z]+$")] kind: String,
    #[arg(exclusive_min = 0, multiple_of = 0.5)] weight: f64,
) -> String {
    format!("{} tags for {owner} ({kind}, {weight})", tags.len())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Operation {
    Add,
    Subtract,
    Multiply,
    Divide,
}

/// A calculator whose methods are tools; it counts the calls it served.
#[derive(Default)]
struct Calculator {
    calls: std::sync::atomic::AtomicU64,
}

#[tool]
impl Calculator {
    /// Performs an arithmetic operation.
    #[tool(idempotent)]
    async fn calculate(&self, operation: Operation, a: f64, b: f64) -> Result<String, String> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let value = match operation {
            Operation::Add => a + b,
            Operation::Subtract => a - b,
            Operation::Multiply => a * b,
            Operation::Divide if b == 0.0 => return Err("Cannot divide by zero".to_owned()),
            Operation::Divide => a / b,
        };
        Ok(value.to_string())
    }

    /// How many calculations were made.
    #[allow(non_snake_case)]
    async fn callCount(&self) -> String {
        self.calls.load(std::sync::atomic::Ordering::Relaxed).to_string()
    }

    /// The version of the calculator.
    async fn version() -> String {
        "1.0".to_owned()
    }
}

/// Notes kept for one client session.
#[derive(Default)]
struct Notes(std::sync::Mutex<Vec<String>>);

/// Remembers a note for this session and lists the notes so far.
#[tool]
async fn remember(note: String, notes: wharf::tool::SessionData<Notes>) -> String {
    let mut notes = notes.0.0.lock().unwrap();
    notes.push(note);
    notes.join(", ")
}

fn server() -> Server {
    Server::builder("macros", "1.0")
        .tool(echo_tool())
        .tool(greet_user_tool())
        .tool(get_forecast_tool())
        .tool(add_tags_tool())
        .tools(std::sync::Arc::new(Calculator::default()).tool_defs())
        .tool(remember_tool())
        .build()
        .unwrap()
}

async fn client() -> InMemoryClient {
    InMemoryClient::session(server(), ProtocolVersion::V2025_11_25, ClientCapabilities::default()).await.unwrap().0
}

fn tool<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name).unwrap_or_else(|| panic!("no {name}"))
}

#[tokio::test]
async fn definitions_carry_names_descriptions_annotations_and_constraints() {
    let client = client().await;
    let tools = client.request("tools/list", json!({})).await.unwrap();
    let names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["calculate", "call_count", "echo", "get_forecast", "greet_user", "remember", "tag.add", "version"],
        "snake_case names; `name =` wins"
    );

    let greet = tool(&tools, "greet_user");
    assert_eq!(greet["description"], "Greet a user by name.\n\nFormal greetings use the surname.");
    assert_eq!(greet["title"], "Greeter");
    assert_eq!(greet["annotations"], json!({"readOnlyHint": true, "idempotentHint": true}));
    let properties = &greet["inputSchema"]["properties"];
    assert_eq!(properties["name"]["description"], "Who");
    assert_eq!(
        (properties["name"]["minLength"].clone(), properties["name"]["maxLength"].clone()),
        (json!(1), json!(100))
    );
    assert_eq!((properties["age"]["minimum"].clone(), properties["age"]["maximum"].clone()), (json!(0), json!(150)));
    assert_eq!(greet["inputSchema"]["required"], json!(["name", "age"]), "Option arguments are optional");
    assert_eq!(tool(&tools, "echo")["inputSchema"]["properties"]["message"]["description"], "The message to echo");

    let forecast = tool(&tools, "get_forecast");
    assert_eq!(forecast["inputSchema"]["properties"]["days"]["default"], 7);
    assert_eq!(forecast["inputSchema"]["properties"]["unit"]["enum"], json!(["celsius", "fahrenheit"]));
    let modern = InMemoryClient::stateless(server(), ClientCapabilities::default());
    let tools = modern.request("tools/list", json!({})).await.unwrap();
    let forecast = tool(&tools, "get_forecast");
    assert_eq!(forecast["outputSchema"]["type"], "array", "Json<T> declares the output schema");

    let tools = client.request("tools/list", json!({})).await.unwrap();
    let tags = tool(&tools, "tag.add");
    let properties = &tags["inputSchema"]["properties"];
    assert_eq!(properties["tags"]["minItems"], 1);
    assert_eq!(properties["tags"]["uniqueItems"], true);
    assert_eq!(properties["tags"]["items"]["type"], "string", "the derived item schema stays");
    assert_eq!(
        properties["tags"]["allOf"][0]["items"],
        json!({"minLength": 1, "maxLength": 20, "pattern": "^[a-z]+$"})
    );
    assert_eq!(properties["owner"]["format"], "email");
    assert_eq!(properties["kind"]["pattern"], "^[a-z]+$");
    assert_eq!(properties["weight"]["exclusiveMinimum"], 0);
    assert_eq!(properties["weight"]["multipleOf"], 0.5);
    assert_eq!(tags["annotations"]["destructiveHint"], true);
    assert_eq!(tags["icons"][0]["src"], "https://example.com/tag.png");
}

#[tokio::test]
async fn calls_are_validated_defaulted_and_dispatched() {
    let client = client().await;
    let result = client.call_tool("greet_user", json!({"name": "Ada", "age": 36, "formal": true})).await.unwrap();
    assert_eq!(serde_json::to_value(&result.content).unwrap()[0]["text"], "Good day, Ada (36)");
    let refused = client.call_tool("greet_user", json!({"name": "Ada", "age": 200})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(serde_json::to_string(&refused.content).unwrap().contains("age"), "the message names the field");
    let refused = client.call_tool("greet_user", json!({"name": "", "age": 3})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));

    let modern = InMemoryClient::stateless(server(), ClientCapabilities::default());
    let forecast = modern.call_tool("get_forecast", json!({"location": "Oslo"})).await.unwrap();
    assert_eq!(forecast.structured_content.unwrap().as_array().unwrap().len(), 7, "the default applies");
    let refused = client.call_tool("get_forecast", json!({"location": "Oslo", "unit": "kelvin"})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));

    let args = json!({"tags": ["a", "b"], "owner": "ada@example.com", "kind": "memo", "weight": 1.5});
    let tagged = client.call_tool("tag.add", args).await.unwrap();
    assert_eq!(serde_json::to_value(&tagged.content).unwrap()[0]["text"], "2 tags for ada@example.com (memo, 1.5)");
    for (field, bad) in [
        ("tags", json!(["a", "a"])),
        ("owner", json!("not an email")),
        ("kind", json!("UPPER")),
        ("weight", json!(0.7)),
    ] {
        let mut args = json!({"tags": ["a"], "owner": "ada@example.com", "kind": "memo", "weight": 1.0});
        args[field] = bad;
        let refused = client.call_tool("tag.add", args).await.unwrap();
        assert_eq!(refused.is_error, Some(true), "{field}");
    }
}

#[tokio::test]
async fn every_method_of_an_impl_block_is_a_tool_sharing_its_receiver() {
    let client = client().await;
    let tools = client.request("tools/list", json!({})).await.unwrap();
    let calculate = tool(&tools, "calculate");
    assert_eq!(calculate["description"], "Performs an arithmetic operation.");
    assert_eq!(calculate["annotations"]["idempotentHint"], true);
    let operation = &calculate["inputSchema"]["properties"]["operation"]["$ref"];
    assert_eq!(operation, "#/$defs/Operation", "nested types live in $defs");
    assert_eq!(
        calculate["inputSchema"]["$defs"]["Operation"]["enum"],
        json!(["add", "subtract", "multiply", "divide"])
    );
    let sum = client.call_tool("calculate", json!({"operation": "add", "a": 2, "b": 3})).await.unwrap();
    assert_eq!(serde_json::to_value(&sum.content).unwrap()[0]["text"], "5");
    let divided = client.call_tool("calculate", json!({"operation": "divide", "a": 1, "b": 0})).await.unwrap();
    assert_eq!(divided.is_error, Some(true));
    assert_eq!(serde_json::to_value(&divided.content).unwrap()[0]["text"], "Cannot divide by zero");
    let count = client.call_tool("call_count", json!({})).await.unwrap();
    assert_eq!(serde_json::to_value(&count.content).unwrap()[0]["text"], "2", "one receiver for every call");
    let version = client.call_tool("version", json!({})).await.unwrap();
    assert_eq!(serde_json::to_value(&version.content).unwrap()[0]["text"], "1.0");
}

#[tokio::test]
async fn session_data_lasts_as_long_as_the_session() {
    let first = client().await;
    let second = client().await;
    let text =
        |result: wharf::protocol::CallToolResult| serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    assert_eq!(text(first.call_tool("remember", json!({"note": "milk"})).await.unwrap()), "milk");
    assert_eq!(text(first.call_tool("remember", json!({"note": "eggs"})).await.unwrap()), "milk, eggs");
    assert_eq!(text(second.call_tool("remember", json!({"note": "tea"})).await.unwrap()), "tea", "another session");
}

/// Empties the trash.
#[tool(scopes = ["trash:empty", "files:write"])]
async fn empty_trash() -> String {
    "emptied".to_owned()
}

#[tokio::test]
async fn a_tool_with_scopes_is_only_for_principals_granted_them() {
    use wharf::middleware::layer_fn;
    use wharf::request::Principal;

    // A stand-in for the authentication in front: the principal named by a `_meta` key.
    let server = Server::builder("scoped", "1.0.0")
        .tool(empty_trash_tool())
        .layer(layer_fn(|mut request, next| {
            let granted = request
                .params()
                .meta()
                .and_then(|meta| meta.other.get("test/scopes"))
                .and_then(|scopes| scopes.as_str())
                .map(str::to_owned);
            if let Some(granted) = granted {
                request.set_principal(Principal::new("ann").with_scopes(granted.split(' ')));
            }
            next.run(request)
        }))
        .build()
        .unwrap();
    let client = InMemoryClient::stateless(server, ClientCapabilities::default());
    let list = |scopes: &str| client.request("tools/list", json!({"_meta": {"test/scopes": scopes}}));
    assert_eq!(list("trash:empty").await.unwrap()["tools"], json!([]));
    let listed = list("trash:empty files:write").await.unwrap();
    assert_eq!(listed["tools"][0]["name"], "empty_trash");
    let call =
        |scopes: &str| client.request("tools/call", json!({"name": "empty_trash", "_meta": {"test/scopes": scopes}}));
    let refused = call("files:write").await.unwrap_err();
    assert_eq!(refused.code.0, -32003);
    assert_eq!(refused.data.unwrap()["requiredScopes"], json!(["trash:empty", "files:write"]));
    let done = call("files:write trash:empty").await.unwrap();
    assert_eq!(done["content"][0]["text"], "emptied");
}

/// MCP Apps: `ui` and `visibility` give the tool its `_meta.ui`, and the view it names is
/// checked when the server is built.
#[cfg(feature = "apps")]
mod views {
    use serde_json::json;
    use wharf::testing::InMemoryClient;
    use wharf::{ResourceDef, Server, tool};

    /// The weather, drawn by the dashboard.
    #[tool(ui = "ui://weather/dashboard")]
    async fn get_weather() -> String {
        "Sunny, 22 °C".to_owned()
    }

    /// Refreshes the dashboard.
    #[tool(ui = "ui://weather/dashboard", visibility = ["app"])]
    async fn refresh_dashboard() -> String {
        "refreshed".to_owned()
    }

    #[tokio::test]
    async fn ui_and_visibility_become_the_tool_s_ui_metadata() {
        let server = Server::builder("weather", "1.0.0")
            .resource(ResourceDef::view("ui://weather/dashboard", "dashboard", "<!DOCTYPE html><html></html>"))
            .tool(get_weather_tool())
            .tool(refresh_dashboard_tool())
            .build()
            .expect("the view is registered");
        let client = InMemoryClient::latest_session(server).await;
        let tools = client.request("tools/list", json!({})).await.unwrap();
        let meta = |name: &str| {
            let tool = tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name).unwrap();
            tool["_meta"]["ui"].clone()
        };
        assert_eq!(meta("get_weather"), json!({"resourceUri": "ui://weather/dashboard"}));
        assert_eq!(meta("refresh_dashboard"), json!({"resourceUri": "ui://weather/dashboard", "visibility": ["app"]}));
    }

    #[test]
    fn a_macro_tool_whose_view_is_missing_is_refused_at_build() {
        let refused = Server::builder("weather", "1.0.0").tool(get_weather_tool()).build().expect_err("no view");
        assert!(
            refused
                .to_string()
                .contains("tool `get_weather` names the view `ui://weather/dashboard`, which is not registered"),
            "{refused}"
        );
    }
}

/// Sends an invoice, once per key.
#[tool(destructive, idempotency = "derived")]
async fn send_invoice(to: String, state: wharf::State<std::sync::Arc<std::sync::atomic::AtomicUsize>>) -> String {
    let sent = state.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    format!("invoice {sent} to {to}")
}

#[tokio::test]
async fn a_tool_with_idempotency_takes_effect_once_per_key() {
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = Server::builder("invoices", "1").state(sent.clone()).tool(send_invoice_tool()).build().unwrap();
    let client = InMemoryClient::latest_session(server).await;
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(listed["tools"][0]["_meta"]["wharf/idempotency"]["key"], "derived");
    let text = |result: Value| result["content"][0]["text"].clone();
    let call =
        |key: &str| json!({"name": "send_invoice", "arguments": {"to": "ada"}, "_meta": {"wharf/idempotencyKey": key}});
    assert_eq!(text(client.request("tools/call", call("a")).await.unwrap()), "invoice 1 to ada");
    assert_eq!(text(client.request("tools/call", call("a")).await.unwrap()), "invoice 1 to ada");
    assert_eq!(text(client.request("tools/call", call("b")).await.unwrap()), "invoice 2 to ada");
    // Without a key, the key is derived from the arguments: the same call is sent once.
    let plain = json!({"name": "send_invoice", "arguments": {"to": "bob"}});
    assert_eq!(text(client.request("tools/call", plain.clone()).await.unwrap()), "invoice 3 to bob");
    assert_eq!(text(client.request("tools/call", plain).await.unwrap()), "invoice 3 to bob");
    assert_eq!(sent.load(std::sync::atomic::Ordering::SeqCst), 3);
}
