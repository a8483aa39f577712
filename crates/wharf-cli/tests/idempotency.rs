//! Wire tests of the demo's `note_add` over stdio, raw JSON lines both ways: a key makes a
//! call take effect once in a 2025 session and in 2026-07-28 requests, other arguments under a
//! key are refused with -32602, keys derived from the text do the same without one, and after
//! `--idempotency-ttl` the call runs again; over HTTP, `wharf call --idempotency-key` repeats a
//! call that the server answers from the record. The notes file is read after each run.

mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use wharf_testkit::process::{JsonLines, run_json_lines};
use wharf_testkit::temp_dir::TempDir;

fn note(id: u64, text: &str, key: Option<&str>) -> Value {
    let mut params = json!({"name": "note_add", "arguments": {"text": text}});
    if let Some(key) = key {
        params["_meta"] = json!({"wharf/idempotencyKey": key});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn by_id(messages: &[Value], id: u64) -> &Value {
    messages.iter().find(|message| message["id"] == id).unwrap_or_else(|| panic!("no answer {id}: {messages:#?}"))
}

fn serve(notes: &std::path::Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wharf"));
    command.arg("serve").arg("--demo-notes").arg(notes).args(extra).env_remove("WHARF_LOG").env_remove("RUST_LOG");
    command
}

#[test]
fn a_key_adds_one_note_in_a_2025_session() {
    let dir = TempDir::new("notes-session");
    let notes = dir.join("notes.txt");
    let (answers, stderr) = run_json_lines(
        &mut serve(&notes, &[]),
        &[
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            note(2, "milk", Some("k1")),
            note(3, "milk", Some("k1")),
            note(4, "eggs", Some("k1")),
            note(5, "bread", None),
            note(6, "bread", None),
            note(7, "bread", Some("k2")),
            json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "note_add", "arguments": {"text": "x"}, "_meta": {"wharf/idempotencyKey": 7}}}),
        ],
    );
    let listed = by_id(&answers, 1)["result"]["tools"].as_array().unwrap().clone();
    let note_add = listed.iter().find(|tool| tool["name"] == "note_add").unwrap();
    assert_eq!(note_add["_meta"]["wharf/idempotency"], json!({"key": "derived", "ttlSeconds": 86400}));
    let (first, repeat) = (&by_id(&answers, 2)["result"], &by_id(&answers, 3)["result"]);
    assert_eq!(first["structuredContent"], repeat["structuredContent"], "{answers:#?}");
    assert_eq!(first["structuredContent"]["note"], "milk");
    // One of the two ran; the other was answered from the record.
    let replays = [first, repeat].iter().filter(|result| result["_meta"]["wharf/idempotentReplay"] == true).count();
    assert_eq!(replays, 1, "{answers:#?}");
    let conflict = &by_id(&answers, 4)["error"];
    assert_eq!(conflict["code"], -32602, "{answers:#?}");
    assert!(conflict["message"].as_str().unwrap().contains("`k1` was used with other arguments"), "{conflict}");
    assert_eq!(by_id(&answers, 5)["result"]["structuredContent"], by_id(&answers, 6)["result"]["structuredContent"]);
    assert_eq!(
        by_id(&answers, 7)["result"]["structuredContent"]["note"],
        "bread",
        "a key of its own is a call of its own"
    );
    assert_eq!(by_id(&answers, 8)["error"]["code"], -32602);
    let written = std::fs::read_to_string(&notes).unwrap();
    assert_eq!(sorted_lines(&written), ["bread", "bread", "milk"], "{stderr}");
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

#[test]
fn a_key_adds_one_note_in_2026_07_28_requests() {
    let dir = TempDir::new("notes-stateless");
    let notes = dir.join("notes.txt");
    let stateless = |id: u64, text: &str, key: &str| {
        let mut call = note(id, text, Some(key));
        call["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
        call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
        call
    };
    let (answers, _) = run_json_lines(
        &mut serve(&notes, &[]),
        &[stateless(1, "tea", "t"), stateless(2, "tea", "t"), stateless(3, "coffee", "t")],
    );
    for id in [1, 2] {
        assert_eq!(by_id(&answers, id)["result"]["resultType"], "complete", "{answers:#?}");
        assert_eq!(by_id(&answers, id)["result"]["structuredContent"]["note"], "tea");
    }
    assert_eq!(by_id(&answers, 1)["result"]["structuredContent"], by_id(&answers, 2)["result"]["structuredContent"]);
    assert_eq!(by_id(&answers, 3)["error"]["code"], -32602);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "tea\n");
}

#[test]
fn after_the_ttl_the_call_runs_again() {
    let dir = TempDir::new("notes-ttl");
    let notes = dir.join("notes.txt");
    let mut talk = JsonLines::spawn(&mut serve(&notes, &["--idempotency-ttl", "1"]));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}});
    assert_eq!(talk.ask(&init)["result"]["protocolVersion"], "2024-11-05");
    let first = talk.ask(&note(1, "again", Some("a")));
    let repeat = talk.ask(&note(2, "again", Some("a")));
    // 2024-11-05 has no structured content: the text carries the note, the same in both.
    assert_eq!(first["result"]["content"], repeat["result"]["content"]);
    assert_eq!(first["result"].get("structuredContent"), None);
    std::thread::sleep(Duration::from_millis(1200));
    let later = talk.ask(&note(3, "again", Some("a")));
    assert_ne!(later["result"]["content"], first["result"]["content"], "run again, written later: {later}");
    let read =
        talk.ask(&json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "demo://notes"}}));
    assert_eq!(read["result"]["contents"][0]["text"], "again\nagain\n", "{read}");
    assert_eq!(read["result"]["contents"][0]["mimeType"], "text/plain");
}

#[test]
fn wharf_call_sends_an_idempotency_key_over_http() {
    let dir = TempDir::new("notes-http");
    let notes = dir.join("notes.txt");
    let notes_arg = notes.to_str().unwrap();
    let server = support::Serving::start("127.0.0.1:0", &["--demo-notes", notes_arg], "warn");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let call = || {
        let output = Command::new(env!("CARGO_BIN_EXE_wharf"))
            .args(["call", &url, "note_add", "text=once", "--idempotency-key", "http-1", "--json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let (first, second) = (call(), call());
    assert_eq!(first["structuredContent"], second["structuredContent"]);
    assert_eq!(first["_meta"].get("wharf/idempotentReplay"), None, "{first}");
    assert_eq!(second["_meta"]["wharf/idempotentReplay"], true, "{second}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "once\n");
}
