//! `wharf record`, `replay` and `verify` on the wire: a session of raw JSON lines recorded
//! through `wharf record` against `wharf serve DIR` (a folder server with a command tool),
//! served back by `wharf replay` with the same answers (a redacted argument matching any value,
//! an unknown request refused naming the closest), verified against the same server, then
//! against it with the tool's answer changed: the difference names the tool.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use wharf_testkit::process::{Process, run_with_input};
use wharf_testkit::temp_dir::TempDir;

const WHARF: &str = env!("CARGO_BIN_EXE_wharf");

const MANIFEST: &str = r#"[server]
name = "greeter"
version = "1.0.0"

[[tools]]
name = "greet"
description = "Greet someone"
command = ["python3", "-c", "import sys; print('Hello, ' + sys.argv[1])", "{name}"]
read_only = true

[tools.arguments.name]
description = "Who"
required = true

[tools.arguments.token]
description = "A secret the tool ignores"
"#;

fn lines(messages: &[Value]) -> Vec<u8> {
    messages.iter().flat_map(|message| format!("{message}\n").into_bytes()).collect()
}

fn session(secret: &str) -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "greet", "arguments": {"name": "Ada", "token": secret}}}),
    ]
}

fn answers(stdout: &str) -> Vec<Value> {
    let mut answers: Vec<Value> = stdout.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    answers.sort_by_key(|answer| answer["id"].as_u64());
    answers
}

#[test]
fn a_recorded_session_is_replayed_and_verified_and_a_changed_answer_is_named() {
    let dir = TempDir::new("cassette");
    dir.write("server/wharf.toml", MANIFEST);
    let folder = dir.join("server");
    let cassette = dir.join("session.cassette");
    let (folder, cassette) = (folder.to_str().unwrap(), cassette.to_str().unwrap());
    let serve = [WHARF, "serve", "--no-watch", folder];

    let (recorded, stderr, status) = run_with_input(
        Command::new(WHARF).args(["record", "-o", cassette, "--"]).args(serve),
        &lines(&session("s3cret")),
    );
    assert!(status.success(), "{stderr}");
    let recorded = answers(&recorded);
    assert_eq!(recorded[2]["result"]["content"][0]["text"], "Hello, Ada\n", "{recorded:#?}");
    let tape = std::fs::read_to_string(cassette).unwrap();
    assert!(!tape.contains("s3cret") && tape.contains("[redacted]"), "the secret is not kept: {tape}");
    assert_eq!(tape.lines().count(), 1 + 4 + 3, "a header, four client lines and three answers");

    // Replayed: the same answers, whatever the redacted argument now is.
    let (replayed, stderr, status) =
        run_with_input(Command::new(WHARF).args(["replay", cassette]), &lines(&session("another")));
    assert!(status.success(), "{stderr}");
    let replayed = answers(&replayed);
    assert_eq!(replayed, recorded);
    let unknown = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "greet", "arguments": {"name": "Bob"}}});
    let (refused, _, _) = run_with_input(Command::new(WHARF).args(["replay", cassette]), &lines(&[unknown]));
    let refused: Value = serde_json::from_str(refused.trim()).unwrap();
    assert_eq!(refused["error"]["code"], -32602);
    assert!(refused["error"]["message"].as_str().unwrap().contains("the closest recorded `tools/call`"), "{refused}");

    // Verified against the same server: the same.
    let same = Command::new(WHARF).args(["verify", cassette, "--json", "--"]).args(serve).output().unwrap();
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stdout));
    let report: Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!((report["same"].as_u64(), report["differ"].as_u64()), (Some(3), Some(0)), "{report}");

    // The tool's answer changed: the difference names it.
    dir.write("server/wharf.toml", MANIFEST.replace("'Hello, '", "'Hi, '"));
    let junit = dir.join("verify.xml");
    let changed = Command::new(WHARF)
        .args(["verify", cassette, "--junit", junit.to_str().unwrap(), "--"])
        .args(serve)
        .output()
        .unwrap();
    assert_eq!(changed.status.code(), Some(1));
    let text = String::from_utf8_lossy(&changed.stdout);
    assert!(
        text.contains("DIFF  tools/call greet: /result/content/0/text: recorded \"Hello, Ada\\n\", now \"Hi, Ada\\n\""),
        "{text}"
    );
    assert!(text.contains("3 requests: 2 the same, 1 different"), "{text}");
    assert!(std::fs::read_to_string(&junit).unwrap().contains("<testcase name=\"tools/call greet\"><failure"));
    // --update takes the new answers in; then it verifies.
    let updated = Command::new(WHARF).args(["verify", cassette, "--update", "--"]).args(serve).output().unwrap();
    assert!(updated.status.success());
    let again = Command::new(WHARF).args(["verify", cassette, "--"]).args(serve).output().unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stdout));
}

/// SIGTERM, which the client that started `wharf record` may send it, ends the proxy and the
/// server it started, a server that does not end when its input does among them (here a shell
/// that sleeps on, as the same process, after `wharf serve` returns).
#[test]
fn sigterm_ends_the_recording_proxy_and_its_server() {
    let dir = TempDir::new("cassette-sigterm");
    let pid_file = dir.join("pid");
    let (pid_path, cassette) = (pid_file.to_str().unwrap(), dir.join("session.cassette"));
    let script = "echo $$ > \"$1\"; \"$0\" serve; exec sleep 60";
    let mut command = Command::new(WHARF);
    command.args(["record", "-o", cassette.to_str().unwrap(), "--", "sh", "-c", script, WHARF, pid_path]);
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut proxy = Process::spawn(&mut command);
    let initialize = &session("")[0];
    writeln!(proxy.child.stdin.as_mut().unwrap(), "{initialize}").unwrap();
    let mut answer = String::new();
    BufReader::new(proxy.child.stdout.take().unwrap()).read_line(&mut answer).unwrap();
    assert!(answer.contains("protocolVersion"), "{answer} {}", proxy.stderr_so_far());
    let server = proxy.started_program(&pid_file);
    proxy.terminate_with(server);
}

/// SIGTERM sent to `wharf verify` alone while it waits for a server that never answers: it
/// exits as the signal would have it (143), and the server it started does not outlive it.
#[test]
fn sigterm_ends_verify_and_the_server_it_started() {
    let dir = TempDir::new("verify-sigterm");
    let (cassette, pid_file) = (dir.join("session.cassette"), dir.join("pid"));
    let cassette = cassette.to_str().unwrap();
    let (_, stderr, status) = run_with_input(
        Command::new(WHARF).args(["record", "-o", cassette, "--", WHARF, "serve"]),
        &lines(&session("")),
    );
    assert!(status.success(), "{stderr}");
    let mut command = Command::new(WHARF);
    command.args(["verify", cassette, "--", "sh", "-c", "echo $$ > \"$0\"; exec sleep 60"]).arg(&pid_file);
    command.stdin(Stdio::null()).stdout(Stdio::null());
    let mut verifying = Process::spawn(&mut command);
    let server = verifying.started_program(&pid_file);
    let (code, stderr) = verifying.terminate_with(server);
    assert_eq!(code, Some(143), "{stderr}");
}
