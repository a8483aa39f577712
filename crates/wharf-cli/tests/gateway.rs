//! `wharf gateway` as a user runs it: a file that mounts two real `wharf serve` processes (one
//! spoken to in 2025-11-25), raw JSON lines into the gateway's stdin and out of its stdout; and
//! `--check` naming each mistake of a broken file.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use wharf_testkit::process::{Process, run_json_lines};
use wharf_testkit::temp_dir::TempDir;

/// Runs `wharf gateway CONFIG`, writes `input` (one message per line) to its stdin, closes it,
/// and returns the messages it wrote, and its stderr.
fn run_gateway(config: &std::path::Path, input: &[Value]) -> (Vec<Value>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wharf"));
    command.arg("gateway").arg(config).env_remove("RUST_LOG").env_remove("WHARF_LOG");
    run_json_lines(&mut command, input)
}

fn by_id(messages: &[Value], id: i64) -> &Value {
    messages.iter().find(|message| message["id"] == id).unwrap_or_else(|| panic!("no answer {id}: {messages:#?}"))
}

#[test]
fn two_real_servers_behind_one_gateway_on_stdio_in_both_eras() {
    let dir = TempDir::new("gateway-stdio");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"demo\"\ncommand = [{wharf:?}, \"serve\"]\n\n\
             [[mount]]\nname = \"older\"\ncommand = [{wharf:?}, \"serve\"]\nnamespace = \"two\"\nrevision = \"2025-11-25\"\n\
             exclude = [\"count*\"]\nrename = {{ echo = \"repeat\" }}\ndescriptions = {{ echo = \"Says it again\" }}\n"
        ),
    );
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let (messages, stderr) = run_gateway(
        &dir.join("gateway.toml"),
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "two_repeat", "arguments": {"message": "through the gateway"}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "demo_calculator", "arguments": {"a": 2, "b": 3, "operation": "add"}}}),
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "demo_echo", "arguments": {"message": "stateless"}, "_meta": meta}}),
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "nope", "arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 7, "method": "resources/list"}),
            json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"uri": "ui://two/wharf-demo/dice"}}),
            // A view's call by its upstream name: two mounts with views have it.
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "roll_again", "arguments": {"count": 1, "sides": 6}}}),
        ],
    );
    assert_eq!(by_id(&messages, 1)["result"]["serverInfo"]["name"], "wharf-gateway", "{stderr}");
    let names: Vec<&str> = by_id(&messages, 2)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"demo_echo") && names.contains(&"two_repeat") && names.contains(&"demo_calculator"),
        "{names:?}"
    );
    assert!(!names.contains(&"two_echo") && !names.contains(&"two_countdown"), "renamed, excluded: {names:?}");
    assert!(names.contains(&"demo_countdown"), "the other mount's filters are its own");
    let repeat =
        by_id(&messages, 2)["result"]["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "two_repeat");
    assert_eq!(repeat.unwrap()["description"], "Says it again");
    // The demo's MCP Apps view keeps its `ui://` behind a namespace, and its tools follow it.
    let uris: Vec<&str> = by_id(&messages, 7)["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|resource| resource["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"demo+config://app"), "{uris:?}");
    assert!(uris.contains(&"ui://demo/wharf-demo/dice") && uris.contains(&"ui://two/wharf-demo/dice"), "{uris:?}");
    let extensions = &by_id(&messages, 1)["result"]["capabilities"]["extensions"];
    assert!(extensions.get("io.modelcontextprotocol/ui").is_some(), "{extensions}");
    let tool = |name: &str| {
        by_id(&messages, 2)["result"]["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name).cloned()
    };
    let roll = tool("two_roll_dice").expect("two_roll_dice is listed");
    assert_eq!(roll["_meta"]["ui"]["resourceUri"], "ui://two/wharf-demo/dice", "{roll}");
    assert_eq!(roll["_meta"]["ui/resourceUri"], "ui://two/wharf-demo/dice", "{roll}");
    let again = tool("demo_roll_again").expect("demo_roll_again is listed");
    assert_eq!(again["_meta"]["ui"], json!({"resourceUri": "ui://demo/wharf-demo/dice", "visibility": ["app"]}));
    let view = &by_id(&messages, 8)["result"]["contents"][0];
    assert_eq!(view["uri"], "ui://two/wharf-demo/dice", "{view}");
    assert_eq!(view["mimeType"], "text/html;profile=mcp-app");
    assert!(view["text"].as_str().unwrap_or_default().contains("<html"), "{view}");
    let ambiguous = by_id(&messages, 9);
    assert!(ambiguous["error"].is_object() || ambiguous["result"]["isError"] == true, "{ambiguous}");
    assert_eq!(by_id(&messages, 3)["result"]["content"][0]["text"], "through the gateway");
    // The upstream spoke 2026-07-28 to the gateway; the session's client hears 2025-11-25.
    let in_session = &by_id(&messages, 4)["result"];
    assert!(in_session.get("resultType").is_none() && in_session.get("_meta").is_none(), "{in_session}");
    let sum = by_id(&messages, 4);
    assert!(sum["result"]["content"][0]["text"].as_str().unwrap_or_default().contains('5'), "{sum}");
    assert_eq!(by_id(&messages, 5)["result"]["content"][0]["text"], "stateless");
    assert_eq!(by_id(&messages, 5)["result"]["resultType"], "complete", "a 2026-07-28 answer");
    let server_info = &by_id(&messages, 5)["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(server_info["name"], "wharf-gateway", "the gateway's own, not the upstream's");
    assert!(by_id(&messages, 6)["error"].is_object() || by_id(&messages, 6)["result"]["isError"] == true);
}

/// An MCP Apps view calls its server's tools by the names it was written with, which the
/// namespace changed: a call of a name the gateway does not list reaches the one mount with views
/// that has it upstream; a name no such mount has stays unknown.
#[test]
fn a_views_call_by_its_upstream_name_reaches_its_tool_behind_a_namespace() {
    let dir = TempDir::new("gateway-view-calls");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    dir.write("gateway.toml", format!("[[mount]]\nname = \"dice\"\ncommand = [{wharf:?}, \"serve\"]\n"));
    let (messages, stderr) = run_gateway(
        &dir.join("gateway.toml"),
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "roll_again", "arguments": {"count": 4, "sides": 6}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "dice_roll_again", "arguments": {"count": 4, "sides": 6}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}),
        ],
    );
    for id in [2, 3] {
        let rolled = &by_id(&messages, id)["result"];
        assert_eq!(rolled["structuredContent"]["rolls"].as_array().map(Vec::len), Some(4), "{rolled} {stderr}");
    }
    let unknown = by_id(&messages, 4);
    assert!(unknown["error"]["message"].as_str().unwrap_or_default().contains("no_such_tool"), "{unknown}");
}

/// When the gateway's own input ends, each program it started sees its stdin close and ends as
/// it would (here a shell writes a file after `wharf serve` returns), rather than being killed.
#[test]
fn the_gateway_closes_its_programs_input_when_it_exits() {
    let dir = TempDir::new("gateway-close");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    let marker = dir.join("ended");
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"up\"\ncommand = [\"sh\", \"-c\", \"\\\"$0\\\" serve && echo ended > \\\"$1\\\"\", {wharf:?}, {marker:?}]\n"
        ),
    );
    let (messages, stderr) = run_gateway(
        &dir.join("gateway.toml"),
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "up_echo", "arguments": {"message": "hi"}}}),
        ],
    );
    assert_eq!(by_id(&messages, 2)["result"]["content"][0]["text"], "hi", "{stderr}");
    let ended = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(ended.trim(), "ended", "the program ended on its own: {stderr}");
}

/// SIGTERM, which a stdio client sends a gateway it gives up on, ends the gateway and every
/// program it started, a program that does not end when its input does among them (here a
/// shell that sleeps on, as the same process, after `wharf serve` returns).
#[test]
fn sigterm_ends_the_gateway_and_the_programs_it_started() {
    let dir = TempDir::new("gateway-sigterm");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    let pid_file = dir.join("pid");
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"up\"\ncommand = [\"sh\", \"-c\", \"echo $$ > \\\"$1\\\"; \\\"$0\\\" serve; exec sleep 60\", {wharf:?}, {pid_file:?}]\n"
        ),
    );
    let mut command = Command::new(wharf);
    command.arg("gateway").arg(dir.join("gateway.toml")).stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut gateway = Process::spawn(command.env_remove("RUST_LOG").env_remove("WHARF_LOG"));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    writeln!(gateway.child.stdin.as_mut().unwrap(), "{initialize}").unwrap();
    let mut answer = String::new();
    BufReader::new(gateway.child.stdout.take().unwrap()).read_line(&mut answer).unwrap();
    assert!(answer.contains("wharf-gateway"), "{answer} {}", gateway.stderr_so_far());
    let program = gateway.started_program(&pid_file);
    let (code, stderr) = gateway.terminate_with(program);
    assert_eq!(code, Some(0), "{stderr}");
}

/// A command mount's `cwd` and environment reach its program: `wharf serve .` run in a folder
/// (relative to the file) whose command tool prints a variable set by `env` and one taken from
/// the gateway's environment by `env_from`.
#[test]
fn a_command_mount_runs_in_its_directory_with_its_environment() {
    let dir = TempDir::new("gateway-env");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    dir.write(
        "served/wharf.toml",
        "[[tools]]\nname = \"greeting\"\ndescription = \"Says the greeting\"\n\
         command = [\"sh\", \"-c\", \"echo $GREETING, $WHO\"]\nenv = [\"GREETING\", \"WHO\"]\n",
    );
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"here\"\ncommand = [{wharf:?}, \"serve\", \".\"]\ncwd = \"served\"\n\
             env = {{ GREETING = \"Hello\" }}\nenv_from = {{ WHO = \"WHARF_TEST_WHO\" }}\n"
        ),
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_wharf"));
    command.arg("gateway").arg(dir.join("gateway.toml")).env("WHARF_TEST_WHO", "Ada").env_remove("RUST_LOG");
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "here_greeting", "arguments": {}}}),
    ];
    let (messages, stderr) = run_json_lines(&mut command, &input);
    let text = by_id(&messages, 2)["result"]["content"][0]["text"].as_str().unwrap_or_default().trim().to_owned();
    assert_eq!(text, "Hello, Ada", "{stderr}");
}

#[test]
fn check_names_each_mistake_of_the_file() {
    let dir = TempDir::new("gateway-check");
    dir.write(
        "bad.toml",
        "[[mount]]\nname = \"both\"\nurl = \"http://127.0.0.1:1/mcp\"\ncommand = [\"x\"]\n\n\
         [[mount]]\nname = \"empty\"\ncommand = []\n\n\
         [[mount]]\nname = \"old\"\nurl = \"http://127.0.0.1:1/mcp\"\nrevision = \"2024-01-01\"\n\n\
         [[mount]]\nname = \"old\"\nurl = \"http://127.0.0.1:2/mcp\"\n\n\
         [[mount]]\nname = \"web\"\nurl = \"http://127.0.0.1:3/mcp\"\nenv = { A = \"b\" }\nbearer_from = \"WHARF_TEST_NO_SUCH_VARIABLE\"\n\n\
         [[mount]]\nname = \"local\"\ncommand = [\"x\"]\ncwd = \"no-such-dir\"\ntimeout = 0\nheaders = { B = \"c\" }\nsessions = \"private\"\n\
         roots = [\"no-such-root\"]\nstart = \"whenever\"\n\n\
         [[mount]]\nname = \"api\"\nopenapi = \"no-such-api.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n\n\
         [[mount]]\nname = \"api2\"\nopenapi = \"no-such-api.yaml\"\n\n\
         [[mount]]\nname = \"web2\"\nurl = \"http://127.0.0.1:4/mcp\"\nbase_url = \"http://127.0.0.1:9\"\n",
    );
    let checked = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["gateway", "--check"])
        .arg(dir.join("bad.toml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&checked.stderr);
    assert_eq!(checked.status.code(), Some(1), "{stderr}");
    for mistake in [
        "mount `both`: give one of `url`, `command` and `openapi`, not several",
        "mount `api`: no-such-api.yaml: the document",
        "no-such-api.yaml could not be read",
        "mount `api2`: an `openapi` mount needs `base_url`",
        "mount `web2`: `base_url` is for an `openapi` mount",
        "mount `empty`: `command` is empty",
        "`revision = \"2024-01-01\"` is none of",
        "mount `old`: another mount has this name",
        "mount `web`: `env` is for a `command` upstream",
        "mount `web`: the environment variable `WHARF_TEST_NO_SUCH_VARIABLE` is not set",
        "mount `local`: `headers` is for a `url` upstream",
        "no-such-dir is not a directory",
        "mount `local`: `timeout = 0` is not between 0 and 86400 seconds",
        "mount `local`: `sessions = \"private\"` is neither",
        "mount `local`: the root `no-such-root` is not a directory",
        "mount `local`: `start = \"whenever\"` is neither",
    ] {
        assert!(stderr.contains(mistake), "{mistake:?} in {stderr}");
    }
    dir.write("typo.toml", "[[mount]]\nname = \"a\"\nurls = \"http://127.0.0.1:1/mcp\"\n");
    let typo = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["gateway", "--check"])
        .arg(dir.join("typo.toml"))
        .output()
        .unwrap();
    assert_eq!(typo.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("urls"), "an unknown key is named");

    std::fs::create_dir_all(dir.join("servers")).unwrap();
    dir.write(
        "good.toml",
        "[[mount]]\nname = \"a\"\nurl = \"http://127.0.0.1:1/mcp\"\nbearer_from = \"WHARF_TEST_TOKEN\"\n\
         headers = { X-Team = \"blue\" }\ntimeout = 2.5\n\n\
         [[mount]]\nname = \"b\"\ncommand = [\"x\"]\ncwd = \"servers\"\nenv_from = { KEY = \"WHARF_TEST_TOKEN\" }\n",
    );
    let good = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["gateway", "--check"])
        .arg(dir.join("good.toml"))
        .env("WHARF_TEST_TOKEN", "secret")
        .output()
        .unwrap();
    assert!(good.status.success(), "{}", String::from_utf8_lossy(&good.stderr));
    assert!(String::from_utf8_lossy(&good.stderr).contains("is sound: 2 mounts"));
    assert!(!String::from_utf8_lossy(&good.stderr).contains("secret"), "a secret is never shown");
}
