//! Wire tests of results over a client's budget, raw JSON lines both ways: `wharf serve
//! --max-result-tokens 25000` answers the demo's 2 MiB `long_report` with a preview and a link,
//! in a 2025 session and in 2026-07-28 requests; every page read back fits the budget and the
//! pages put together are the report. (Another principal or session being refused is the
//! engine's test, `large_results.rs` of wharf-server; through another instance, the fleet's.)

use std::process::Command;

use serde_json::{Value, json};
use wharf_testkit::process::JsonLines;

const LINES: usize = 32768;

fn report() -> String {
    (1..=LINES).map(|line| format!("{line:07} the quick brown fox jumps over the lazy dog, once more.\n")).collect()
}

fn budgeted() -> JsonLines {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wharf"));
    command.args(["serve", "--max-result-tokens", "25000"]).env_remove("WHARF_LOG").env_remove("RUST_LOG");
    JsonLines::spawn(&mut command)
}

/// `params` with the `_meta` of a 2026-07-28 request when `stateless`.
fn framed(mut params: Value, stateless: bool) -> Value {
    if stateless {
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
    }
    params
}

/// Calls `long_report`, reads every page of its link, and checks them; the link.
fn call_and_read(talk: &mut JsonLines, stateless: bool) -> String {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": framed(json!({"name": "long_report", "arguments": {"lines": LINES}}), stateless)});
    let answer = talk.ask(&call);
    let result = &answer["result"];
    assert!(answer.to_string().len() < 25_000, "the answer fits the budget");
    if stateless {
        assert_eq!(result["resultType"], "complete");
    }
    let expected = report();
    let preview = result["content"][0]["text"].as_str().unwrap();
    assert!(expected.starts_with(preview.split("\n\n[").next().unwrap()));
    let link = &result["content"][1];
    assert_eq!((link["type"].as_str(), link["size"].as_u64()), (Some("resource_link"), Some(expected.len() as u64)));
    let uri = link["uri"].as_str().unwrap().to_owned();
    let mut whole = String::new();
    let mut page = 1;
    loop {
        let read = json!({"jsonrpc": "2.0", "id": 1 + page, "method": "resources/read",
            "params": framed(json!({"uri": format!("{uri}?page={page}")}), stateless)});
        let answer = talk.ask(&read);
        let contents = &answer["result"]["contents"][0];
        let text = contents["text"].as_str().unwrap_or_else(|| panic!("{answer}"));
        assert!(text.len() <= 25_000);
        whole.push_str(text);
        if contents["_meta"]["wharf/pages"] == page {
            break;
        }
        page += 1;
    }
    assert_eq!(whole, expected, "the pages put together are the report");
    uri
}

#[test]
fn a_2025_session_reads_a_large_result_in_pages() {
    let mut talk = budgeted();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}});
    assert_eq!(talk.ask(&init)["result"]["protocolVersion"], "2025-06-18");
    let uri = call_and_read(&mut talk, false);
    let garbled =
        talk.ask(&json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": format!("{uri}x")}}));
    assert_eq!(garbled["error"]["code"], -32002, "a result never kept is not found: {garbled}");
}

#[test]
fn stateless_requests_read_a_large_result_in_pages() {
    let mut talk = budgeted();
    call_and_read(&mut talk, true);
}
