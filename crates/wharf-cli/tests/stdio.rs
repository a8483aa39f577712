//! Wire tests of `wharf serve`: raw JSON lines into the real binary's stdin, raw lines out of
//! its stdout.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wharf_testkit::process::Process;
use wharf_testkit::temp_dir::TempDir;

/// Runs `wharf serve`, writes `input` to its stdin, closes stdin, and returns stdout lines,
/// stderr and the exit status.
fn run(input: &[u8]) -> (Vec<String>, String, std::process::ExitStatus) {
    run_logging(input, None)
}

/// [`run`] with `WHARF_LOG` set to `log` (and `RUST_LOG` unset), or both unset.
fn run_logging(input: &[u8], log: Option<&str>) -> (Vec<String>, String, std::process::ExitStatus) {
    run_with(input, log, &[])
}

/// [`run_logging`] with more arguments after `serve`.
fn run_with(input: &[u8], log: Option<&str>, args: &[&str]) -> (Vec<String>, String, std::process::ExitStatus) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wharf"));
    command.arg("serve").args(args).env_remove("RUST_LOG").env_remove("WHARF_LOG");
    if let Some(log) = log {
        command.env("WHARF_LOG", log);
    }
    let (stdout, stderr, status) = wharf_testkit::process::run_with_input(&mut command, input);
    (stdout.lines().map(str::to_owned).collect(), stderr, status)
}

/// Starts `wharf serve` with piped stdin and stdout.
fn start(stderr: Stdio) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_wharf"))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start wharf")
}

fn lines(messages: &[Value]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for message in messages {
        bytes.extend_from_slice(message.to_string().as_bytes());
        bytes.push(b'\n');
    }
    bytes
}

fn initialize(version: &str) -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

fn parse(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("stdout line is not JSON ({err}): {line}")))
        .collect()
}

fn by_id(messages: &[Value], id: Value) -> Value {
    messages
        .iter()
        .find(|message| message["id"] == id && message.get("method").is_none())
        .cloned()
        .unwrap_or_else(|| panic!("no response with id {id} in {messages:?}"))
}

#[test]
fn a_session_on_stdio_serves_the_demo() {
    let mut input = initialize("2025-06-18");
    input.extend([
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "calculator", "arguments": {"operation": "divide", "a": 1, "b": 0}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "calculator", "arguments": {"operation": "multiply", "a": 6, "b": 7}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": {"name": "code_review", "arguments": {"language": "rust", "code": "fn main() {}"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "config://app"}}),
        json!({"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": "users://2/profile"}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "completion/complete", "params": {"ref": {"type": "ref/resource", "uri": "users://{id}/profile"}, "argument": {"name": "id", "value": ""}}}),
    ]);
    let (stdout, _, status) = run(&lines(&input));
    assert!(status.success());
    let messages = parse(&stdout);
    assert_eq!(by_id(&messages, json!(0))["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(by_id(&messages, json!(1))["result"]["content"][0]["text"], "hello");
    assert_eq!(
        by_id(&messages, json!(2))["result"],
        json!({"content": [{"type": "text", "text": "Division by zero"}], "isError": true})
    );
    assert_eq!(by_id(&messages, json!(3))["result"]["content"][0]["text"], "42");
    let review = by_id(&messages, json!(4))["result"]["messages"][0]["content"]["text"].as_str().unwrap().to_owned();
    assert!(review.contains("rust code") && review.contains("fn main() {}"), "{review}");
    assert_eq!(by_id(&messages, json!(5))["result"]["contents"][0]["mimeType"], "application/json");
    let profile: Value =
        serde_json::from_str(by_id(&messages, json!(6))["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(profile["name"], "Alan Turing");
    assert_eq!(by_id(&messages, json!(7))["result"]["completion"]["values"], json!(["1", "2", "3"]));
}

#[test]
fn stateless_requests_work_on_stdio_without_a_session() {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let input = vec![
        json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"_meta": meta, "name": "echo", "arguments": {"message": "stateless"}}}),
    ];
    let (stdout, _, status) = run(&lines(&input));
    assert!(status.success());
    let messages = parse(&stdout);
    assert_eq!(
        by_id(&messages, json!("d"))["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "wharf-demo"
    );
    assert_eq!(by_id(&messages, json!("c"))["result"]["resultType"], "complete");
}

#[test]
fn bad_lines_get_errors_and_reading_goes_on() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\n");
    input.extend_from_slice(b"\xff\xfe not utf-8\n");
    input.extend_from_slice(b"\n   \n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n");
    let (stdout, _, status) = run(&input);
    assert!(status.success());
    let messages = parse(&stdout);
    let codes: Vec<i64> = messages.iter().filter_map(|message| message["error"]["code"].as_i64()).collect();
    assert_eq!(codes, vec![-32700, -32700, -32600], "{messages:?}");
    assert_eq!(by_id(&messages, json!(2))["result"], json!({}));
}

#[test]
fn an_oversized_line_is_refused_and_the_next_line_is_read() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"");
    input.extend(std::iter::repeat_n(b'x', 10 * 1024 * 1024 + 1));
    input.extend_from_slice(b"\"}}\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
    let (stdout, _, status) = run(&input);
    assert!(status.success());
    let messages = parse(&stdout);
    assert_eq!(messages.len(), 2, "{stdout:?}");
    assert_eq!(messages[0]["error"]["code"], -32600);
    assert!(messages[0]["error"]["message"].as_str().unwrap().contains("longer than the limit"));
    assert_eq!(by_id(&messages, json!(2))["result"], json!({}));
}

#[test]
fn in_flight_work_finishes_after_stdin_closes() {
    let mut input = initialize("2025-11-25");
    input.push(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "countdown", "arguments": {"steps": 5}, "_meta": {"progressToken": 9}}}));
    let started = Instant::now();
    let (stdout, stderr, status) = run(&lines(&input));
    assert!(status.success(), "{stderr}");
    assert!(started.elapsed() >= Duration::from_millis(100), "the countdown takes 5 x 20 ms");
    let messages = parse(&stdout);
    let progress = messages.iter().filter(|message| message["method"] == "notifications/progress").count();
    assert_eq!(progress, 5);
    assert_eq!(by_id(&messages, json!(9))["result"]["content"][0]["text"], "Counted down 5 steps");
    // Nothing but JSON-RPC on stdout, and no banner when stdin is not a terminal.
    assert!(messages.iter().all(|message| message["jsonrpc"] == "2.0"));
    assert!(!stderr.contains("waiting for an MCP client"), "{stderr}");
}

/// A folder's command tool runs in a process group of its own, which a signal sent to the
/// server does not reach: on SIGTERM the server ends and kills the program of a call still
/// running.
#[test]
fn sigterm_ends_a_folders_server_and_the_programs_of_its_calls() {
    let dir = TempDir::new("serve-sigterm");
    let pid_file = dir.join("pid");
    dir.write(
        "wharf.toml",
        format!(
            "[[tools]]\nname = \"wait\"\ndescription = \"Waits a minute\"\n\
             command = [\"sh\", \"-c\", \"echo $$ > \\\"$0\\\"; exec sleep 60\", {pid_file:?}]\n"
        ),
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_wharf"));
    command.arg("serve").arg(dir.path()).stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut server = Process::spawn(command.env_remove("RUST_LOG").env_remove("WHARF_LOG"));
    let mut input = initialize("2025-11-25");
    input.push(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait", "arguments": {}}}));
    server.child.stdin.as_mut().unwrap().write_all(&lines(&input)).unwrap();
    let program = server.started_program(&pid_file);
    let (code, stderr) = server.terminate_with(program);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn concurrent_requests_are_all_answered() {
    let mut input = initialize("2025-11-25");
    for id in 1..=200 {
        input.push(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": format!("m{id}")}}}));
    }
    let (stdout, _, status) = run(&lines(&input));
    assert!(status.success());
    let messages = parse(&stdout);
    for id in 1..=200 {
        assert_eq!(by_id(&messages, json!(id))["result"]["content"][0]["text"], format!("m{id}"));
    }
}

#[test]
fn arguments_that_cannot_be_read_are_refused_not_replaced_by_defaults() {
    // `countdown` has a default step count; a string no Rust string can hold (a lone UTF-16
    // surrogate) must not make the call run with that default instead of the client's 1.
    // Both are tool errors, as input the schema check refuses is: `countdown` reaches its
    // context (and so may ask for input), `echo` does not, and that changes nothing.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let call = |id: u32, name: &str, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{meta},"name":"{name}","arguments":{arguments}}}}}"#
        )
    };
    let input =
        [call(1, "countdown", r#"{"steps": 1, "note": "\ud800"}"#), call(2, "echo", r#"{"message": "\ud800"}"#)];
    let (stdout, stderr, status) = run(format!("{}\n", input.join("\n")).as_bytes());
    assert!(status.success(), "{stderr}");
    let messages = parse(&stdout);
    for id in [1, 2] {
        let result = &by_id(&messages, json!(id))["result"];
        assert_eq!(result["isError"], true, "{result}");
        assert!(result["content"][0]["text"].as_str().unwrap().contains("the arguments cannot be read"), "{result}");
    }
}

#[test]
fn a_handlers_notifications_come_before_its_answer() {
    // `log` sends its message and answers without waiting, so its answer is written by the
    // read thread past the queue the message went into; the echo calls between them are
    // answered the same way. Each log message must still precede its call's answer.
    let mut input = initialize("2025-11-25");
    for id in 1..=300 {
        let call = if id % 3 == 0 {
            json!({"name": "log", "arguments": {"level": "info", "message": format!("note {id}")}})
        } else {
            json!({"name": "echo", "arguments": {"message": format!("m{id}")}})
        };
        input.push(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call}));
    }
    let (stdout, stderr, status) = run(&lines(&input));
    assert!(status.success(), "{stderr}");
    let messages = parse(&stdout);
    let position = |wanted: &dyn Fn(&Value) -> bool| messages.iter().position(wanted);
    for id in (3..=300).step_by(3) {
        let note = format!("note {id}");
        let logged =
            position(&|message| message["method"] == "notifications/message" && message["params"]["data"] == note)
                .unwrap_or_else(|| panic!("no log message {note:?}"));
        let answered = position(&|message| message["id"] == id && message.get("result").is_some())
            .unwrap_or_else(|| panic!("no answer to {id}"));
        assert!(logged < answered, "the answer to {id} came before its log message: {stdout:?}");
    }
    assert_eq!(messages.len(), 1 + 300 + 100, "one answer per request and one message per log call");
}

#[test]
fn answers_are_written_while_the_next_line_is_still_arriving() {
    use std::io::{BufRead, BufReader};
    let mut child = start(Stdio::null());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let echo = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}, "name": "echo", "arguments": {"message": format!("m{id}")}}}).to_string()
    };
    // A whole line and the first half of the next, in one write: the first answer must come
    // back before the rest of the second line is sent.
    let second = echo(2);
    let (head, tail) = second.split_at(second.len() / 2);
    stdin.write_all(format!("{}\n{head}", echo(1)).as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let first: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(first["id"], 1);
    assert_eq!(first["result"]["content"][0]["text"], "m1");
    stdin.write_all(format!("{tail}\n").as_bytes()).unwrap();
    drop(stdin);
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let second: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(second["result"]["content"][0]["text"], "m2");
    assert!(child.wait().unwrap().success());
}

#[test]
fn the_command_line_explains_itself_and_names_a_bad_argument() {
    let wharf = || Command::new(env!("CARGO_BIN_EXE_wharf"));
    let output = wharf().arg("--help").output().unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("serve"));
    let output = wharf().args(["serve", "--help"]).output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("--http <HOST:PORT>") && help.contains("--allowed-host <NAME>"), "{help}");
    for (args, named) in [
        (&["frobnicate"][..], "frobnicate"),
        (&["serve", "--bogus"][..], "--bogus"),
        (&["serve", "--http"][..], "--http"),
        (&["serve", "--allowed-host", "example.com"][..], "--http"),
    ] {
        let output = wharf().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert!(!stderr.contains("[\""), "the arguments are named, not listed: {stderr}");
    }
}

#[test]
fn a_person_at_a_terminal_is_told_what_is_going_on() {
    // `script` gives `wharf serve` a pseudo-terminal as stdin; Ctrl-D then ends the input.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipping: util-linux `script` is not installed");
        return;
    }
    // `script` runs the command through a shell: the binary's path is quoted, since a clone's
    // path may hold spaces.
    let command = format!("'{}' serve", env!("CARGO_BIN_EXE_wharf").replace('\'', r"'\''"));
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stdin.write_all(b"\x04").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(screen.contains("waiting for an MCP client on stdin"), "{screen}");
    assert!(screen.contains("\"mcpServers\""), "{screen}");
}

/// A member given twice inside `arguments` is refused with -32602 naming it, in both eras, at
/// any depth; a proxy that reads the first and a tool that reads the last would otherwise see
/// different calls (issue 20). Written as raw bytes: a JSON map cannot hold a key twice.
#[test]
fn arguments_that_give_a_member_twice_are_refused() {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let calls = [
        (r#""name":"echo","arguments":{"message":"first","message":"second"}"#, "message"),
        (r#""name":"calculator","arguments":{"operation":"add","operation":"multiply","a":6,"b":7}"#, "operation"),
        (r#""name":"echo","arguments":{"message":"x","note":{"k":1,"k":2}}"#, "k"),
    ];
    let mut input = lines(&initialize("2025-11-25"));
    for (index, (params, _)) in calls.iter().enumerate() {
        let session = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{{params}}}}}"#, index + 1);
        let stateless =
            format!(r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{{meta},{params}}}}}"#, index + 11);
        input.extend_from_slice(format!("{session}\n{stateless}\n").as_bytes());
    }
    let (out, _, status) = run(&input);
    assert!(status.success());
    let messages = parse(&out);
    for (index, (_, key)) in calls.iter().enumerate() {
        for id in [index + 1, index + 11] {
            let answer = by_id(&messages, json!(id));
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains(&format!("`{key}` twice")), "{message}");
        }
    }
}

/// Every other map a handler reads refuses a member given twice too, with -32602 naming it:
/// prompt arguments, completion arguments and a 2026-07-28 request's `inputResponses`.
#[test]
fn prompt_completion_and_input_maps_that_give_a_member_twice_are_refused() {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let requests = [
        (
            "prompts/get",
            r#""name":"code_review","arguments":{"language":"rust","code":"x","language":"go"}"#,
            "language",
        ),
        (
            "completion/complete",
            r#""ref":{"type":"ref/resource","uri":"users://{id}/profile"},"argument":{"name":"id","value":""},"context":{"arguments":{"a":"1","a":"2"}}"#,
            "a",
        ),
        (
            "tools/call",
            r#""name":"echo","arguments":{"message":"x"},"inputResponses":{"q":{"action":"accept"},"q":{}}"#,
            "q",
        ),
    ];
    let mut input = lines(&initialize("2025-11-25"));
    for (index, (method, params, _)) in requests.iter().enumerate() {
        let stateless =
            format!(r#"{{"jsonrpc":"2.0","id":{},"method":"{method}","params":{{{meta},{params}}}}}"#, index + 11);
        input.extend_from_slice(format!("{stateless}\n").as_bytes());
        // inputResponses exist on 2026-07-28 only.
        if *method != "tools/call" {
            let session =
                format!(r#"{{"jsonrpc":"2.0","id":{},"method":"{method}","params":{{{params}}}}}"#, index + 1);
            input.extend_from_slice(format!("{session}\n").as_bytes());
        }
    }
    let (out, _, status) = run(&input);
    assert!(status.success());
    let messages = parse(&out);
    for (index, (method, _, key)) in requests.iter().enumerate() {
        let ids = if *method == "tools/call" { vec![index + 11] } else { vec![index + 1, index + 11] };
        for id in ids {
            let answer = by_id(&messages, json!(id));
            assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains(&format!("`{key}` is given twice")), "{method}: {message}");
        }
    }
}

/// The client's answer to the server's own request is read strictly too: an elicitation result
/// that gives a member twice reaches the handler as an error naming it, never as either value.
#[test]
fn an_answer_that_gives_a_member_twice_reaches_the_handler_as_an_error() {
    use std::io::{BufRead, BufReader};
    let mut child = start(Stdio::null());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut session = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "wire", "version": "1"}}}),
    ];
    session.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    session.push(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet_interactively"}}));
    stdin.write_all(&lines(&session)).unwrap();
    stdin.flush().unwrap();
    let mut next = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
    };
    // The answer to `initialize` and the elicitation may come in either order.
    let (first, second) = (next(), next());
    let request = if first["id"] == 0 { second } else { first };
    assert_eq!(request["method"], "elicitation/create", "{request}");
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"action":"accept","content":{{"name":"Ada","name":"Eve"}}}}}}"#,
        request["id"]
    );
    stdin.write_all(format!("{answer}\n").as_bytes()).unwrap();
    drop(stdin);
    let reply = next();
    assert_eq!(reply["id"], 1, "{reply}");
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("`name` is given twice"), "{reply}");
    assert!(child.wait().unwrap().success());
}

/// Logs go to stderr as `WHARF_LOG` says, every request at debug, and stdout keeps only the
/// protocol; a value that is no filter is named on stderr and the default used instead.
#[test]
fn logs_go_to_stderr_as_wharf_log_says_and_a_bad_filter_is_named() {
    let mut messages = initialize("2025-11-25");
    messages.push(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}}));
    let input = lines(&messages);
    let (stdout, stderr, status) = run_logging(&input, Some("debug"));
    assert!(status.success());
    assert_eq!(by_id(&parse(&stdout), json!(1))["result"]["content"][0]["text"], "hi");
    let answered = stderr.lines().find(|line| line.contains("request answered") && line.contains("tools/call"));
    assert!(answered.is_some_and(|line| line.contains("DEBUG") && line.contains("id=1")), "{stderr}");

    let (stdout, stderr, status) = run_logging(&input, Some("loud"));
    assert!(status.success());
    assert_eq!(parse(&stdout).len(), 2, "the two answers, nothing else");
    assert!(stderr.contains(r#"WHARF_LOG="loud" is not a log filter"#), "{stderr}");
    assert!(!stderr.contains("request answered"), "{stderr}");

    let (_, stderr, _) = run_logging(&input, None);
    assert!(stderr.is_empty(), "nothing to say at the default level: {stderr}");
}

/// A client that pipelines `initialize`, `initialized` and a call that asks it something hears
/// the `initialize` answer first: the question cannot overtake it.
#[test]
fn the_initialize_answer_comes_before_a_pipelined_calls_question() {
    use std::io::{BufRead, BufReader};
    let mut child = start(Stdio::null());
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}}, "clientInfo": {"name": "wire", "version": "1"}}});
    let mut input = lines(&[
        init,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet_interactively", "arguments": {}}}),
    ]);
    stdin.write_all(&input).unwrap();
    stdin.flush().unwrap();
    let (sender, received) = std::sync::mpsc::channel();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let first: Value = serde_json::from_str(&received.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    let second: Value = serde_json::from_str(&received.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    assert_eq!(first["id"], 0, "the initialize answer first: {first}");
    assert!(first.get("result").is_some(), "{first}");
    assert_eq!(second["method"], "elicitation/create", "{second}");
    // Decline, so the call ends and the server with it.
    input = lines(&[json!({"jsonrpc": "2.0", "id": second["id"], "result": {"action": "decline"}})]);
    stdin.write_all(&input).unwrap();
    drop(stdin);
    let answer: Value = serde_json::from_str(&received.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(child.wait().unwrap().success());
}

#[test]
fn with_audit_each_call_leaves_a_record_on_stderr_without_its_arguments() {
    let mut messages = initialize("2025-06-18");
    messages.push(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "pssst"}}}));
    messages.push(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "calculator", "arguments": {"operation": "divide", "a": 1, "b": 0}}}));
    messages.push(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let (stdout, stderr, status) = run_with(&lines(&messages), None, &["--audit"]);
    assert!(status.success());
    let answers = parse(&stdout);
    assert_eq!(by_id(&answers, json!(1))["result"]["content"][0]["text"], "pssst");
    let records: Vec<&str> = stderr.lines().filter(|line| line.contains("wharf::audit")).collect();
    assert_eq!(records.len(), 3, "initialize and two calls, not the list: {stderr}");
    assert!(records[1].contains("target=\"echo\"") && records[1].contains("outcome=\"ok\""), "{stderr}");
    assert!(records[1].contains("transport=Stdio") && records[1].contains("session=\"conn-1\""), "{stderr}");
    assert!(records[2].contains("target=\"calculator\"") && records[2].contains("outcome=\"tool_error\""), "{stderr}");
    assert!(!stderr.contains("pssst"), "{stderr}");
    // Without the flag, nothing is audited.
    let (_, stderr, _) = run(&lines(&messages));
    assert!(!stderr.contains("wharf::audit"), "{stderr}");
}

/// A 2026-07-28 client that listens and then closes stdin: the listen stream is answered and
/// the server exits, instead of running on for a client that is gone (a gateway killed in front
/// of it once left such servers behind).
#[test]
fn a_listen_stream_ends_when_stdin_closes_and_the_server_exits() {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let listen = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}});
    let mut child = start(Stdio::null());
    child.stdin.take().unwrap().write_all(&lines(&[listen])).unwrap();
    // stdin is dropped: closed.
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("wharf serve still runs 10 s after stdin closed with a listen stream open");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    let messages: Vec<Value> = out.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(messages[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(by_id(&messages, json!(1))["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1, "answered");
}
