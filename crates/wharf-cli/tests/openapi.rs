//! `wharf serve --openapi` as a user runs it, on the wire: a YAML 3.0 document made into tools
//! (raw JSON lines in and out of stdio), arguments that cannot be written into their request
//! refused before anything is sent, an API that cannot be reached named in an error result,
//! and the mistakes of a command line named.

use std::process::Command;

use serde_json::{Value, json};
use wharf_testkit::process::run_json_lines;
use wharf_testkit::temp_dir::TempDir;

const DOCUMENT: &str = "openapi: 3.0.3
info:
  title: Pets
  version: 2.0.0
paths:
  /pets/{id}:
    get:
      operationId: getPet
      summary: One pet
      parameters:
        - name: id
          in: path
          required: true
          schema: {type: string}
        - name: verbose
          in: query
          schema: {type: boolean, nullable: true}
      responses:
        '200':
          description: the pet
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Pet'}
    delete:
      operationId: deletePet
      deprecated: true
      responses:
        '204': {description: gone}
components:
  schemas:
    Pet:
      type: object
      properties:
        name: {type: string, example: Rex}
";

fn by_id(messages: &[Value], id: i64) -> &Value {
    messages.iter().find(|message| message["id"] == id).unwrap_or_else(|| panic!("no answer {id}: {messages:#?}"))
}

#[test]
fn a_yaml_document_is_served_as_tools_and_bad_arguments_never_leave() {
    let dir = TempDir::new("openapi-serve");
    dir.write("pets.yaml", DOCUMENT);
    let mut command = Command::new(env!("CARGO_BIN_EXE_wharf"));
    // Port 9 (discard) on loopback: nothing answers there.
    command.args(["serve", "--openapi"]).arg(dir.join("pets.yaml")).args(["--base-url", "http://127.0.0.1:9/api"]);
    command.env_remove("RUST_LOG").env_remove("WHARF_LOG");
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "getPet", "arguments": {"id": ".."}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "getPet", "arguments": {"id": "1", "host": "evil.example"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "getPet", "arguments": {"id": "1/../x"}}}),
    ];
    let (messages, _) = run_json_lines(&mut command, &input);
    assert_eq!(by_id(&messages, 1)["result"]["serverInfo"], json!({"name": "Pets", "version": "2.0.0"}));
    let tools = by_id(&messages, 2)["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "the deprecated operation is left out: {tools:?}");
    let tool = &tools[0];
    assert_eq!(tool["name"], "getPet");
    assert_eq!(tool["description"], "One pet");
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
    assert_eq!(tool["inputSchema"]["properties"]["verbose"]["type"], json!(["boolean", "null"]));
    assert_eq!(tool["outputSchema"]["properties"]["name"], json!({"type": "string", "examples": ["Rex"]}));
    // `..` as a path segment is refused as invalid arguments.
    let dots = by_id(&messages, 3);
    assert_eq!(dots["error"]["code"], -32602, "{dots}");
    assert!(dots["error"]["message"].as_str().unwrap().contains("one path segment"), "{dots}");
    // An argument the operation does not have is refused by the schema.
    let host = by_id(&messages, 4);
    assert!(host["error"]["code"] == -32602 || host["result"]["isError"] == true, "{host}");
    // A segment with a slash is encoded and sent; nothing answers, which the result says.
    let unreachable = &by_id(&messages, 5)["result"];
    assert_eq!(unreachable["isError"], true, "{unreachable}");
    let text = unreachable["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("GET /api/pets/1%2F..%2Fx: the API is unreachable"), "{text}");
}

/// A reference to another document is refused (its operation left out, the log saying why)
/// unless `--allow-external-refs`, which reads the file beside the document.
#[test]
fn references_to_other_documents_are_followed_only_when_allowed() {
    let dir = TempDir::new("openapi-external");
    dir.write("api/pets.yaml", DOCUMENT.replace("'#/components/schemas/Pet'", "'../shared/pet.yaml#/Pet'"));
    dir.write("shared/pet.yaml", "Pet:\n  type: object\n  properties:\n    age: {type: integer}\n");
    let list = |extra: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_wharf"));
        command.args(["serve", "--openapi"]).arg(dir.join("api/pets.yaml")).args(["--base-url", "http://127.0.0.1:9"]);
        command.args(extra).env_remove("RUST_LOG").env_remove("WHARF_LOG");
        let input = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ];
        let (messages, stderr) = run_json_lines(&mut command, &input);
        (by_id(&messages, 2)["result"]["tools"].clone(), stderr)
    };
    let (refused, stderr) = list(&[]);
    // No tool at all: the server offers none, and `tools/list` has no result.
    assert!(refused.as_array().is_none_or(Vec::is_empty), "{refused} {stderr}");
    assert!(stderr.contains("outside the document"), "{stderr}");
    let (followed, stderr) = list(&["--allow-external-refs"]);
    assert_eq!(followed[0]["outputSchema"]["properties"]["age"], json!({"type": "integer"}), "{stderr}");
}

/// A gateway's `openapi` mount: the API's operations under the mount's namespace beside a
/// program's tools, its credentials by security scheme from the environment.
#[test]
fn an_openapi_document_is_a_gateway_mount() {
    let dir = TempDir::new("openapi-gateway");
    let with_key = DOCUMENT.replace(
        "components:\n",
        "components:\n  securitySchemes:\n    key: {type: apiKey, in: header, name: X-Key}\n",
    );
    dir.write("pets.yaml", with_key);
    let wharf = env!("CARGO_BIN_EXE_wharf");
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"api\"\nopenapi = \"pets.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n\
             credentials = {{ key = \"WHARF_TEST_PETS_KEY\" }}\n\n\
             [[mount]]\nname = \"demo\"\ncommand = [{wharf:?}, \"serve\"]\n"
        ),
    );
    let mut command = Command::new(wharf);
    command.arg("gateway").arg(dir.join("gateway.toml")).env("WHARF_TEST_PETS_KEY", "k-1").env_remove("RUST_LOG");
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "api_getPet", "arguments": {"id": "7"}}}),
    ];
    let (messages, stderr) = run_json_lines(&mut command, &input);
    let names: Vec<&str> = by_id(&messages, 2)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"api_getPet") && names.contains(&"demo_echo"), "{names:?}");
    let called = &by_id(&messages, 3)["result"];
    assert_eq!(called["isError"], true, "{called}");
    assert!(
        called["content"][0]["text"].as_str().unwrap().starts_with("GET /pets/7: the API is unreachable"),
        "{called}"
    );
    assert!(!stderr.contains("k-1"), "the key is never logged: {stderr}");
}

#[test]
fn the_command_line_names_what_is_missing_or_wrong() {
    let dir = TempDir::new("openapi-mistakes");
    dir.write("pets.yaml", DOCUMENT);
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_wharf"))
            .arg("serve")
            .args(args)
            .env("WHARF_TEST_EMPTY", "")
            .env_remove("WHARF_TEST_UNSET")
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let spec = dir.join("pets.yaml").to_string_lossy().into_owned();
    assert!(run(&["--openapi", &spec]).contains("--base-url"));
    assert!(run(&["--openapi", &spec, "--base-url", "ftp://x"]).contains("neither http nor https"));
    let unset = run(&["--openapi", &spec, "--base-url", "http://127.0.0.1:9", "--header", "X-Key=WHARF_TEST_UNSET"]);
    assert!(unset.contains("WHARF_TEST_UNSET, which is not set"), "{unset}");
    assert!(run(&["--openapi", &spec, "--openapi-server", "0"]).contains("no `servers` entry 0"));
    assert!(
        run(&["--openapi", "/no/such/file.yaml", "--base-url", "http://127.0.0.1:9"]).contains("could not be read")
    );
    assert!(run(&["--base-url", "http://127.0.0.1:9"]).contains("--openapi"), "requires the document");
}
