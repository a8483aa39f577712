//! A recorded session as a unit test: `wharf::cassette::Cassette` sends a cassette's client side
//! to the demo server in memory, answers its question (an elicitation) as the client did, and
//! finds no difference; a cassette whose recorded answer differs is caught, naming the tool.

use serde_json::json;
use wharf::cassette::{Cassette, CassetteEntry, CassetteSide};

fn cassette(greeting: &str) -> String {
    let entries = [
        (
            CassetteSide::Client,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "recorded", "version": "1"}}}),
        ),
        (CassetteSide::Client, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        (
            CassetteSide::Client,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "on tape"}}}),
        ),
        (
            CassetteSide::Server,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "on tape"}]}}),
        ),
        (
            CassetteSide::Client,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "greet_interactively", "arguments": {}}}),
        ),
        (
            CassetteSide::Server,
            json!({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {"message": "What is your name?"}}),
        ),
        (
            CassetteSide::Client,
            json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"name": "Ada"}}}),
        ),
        (
            CassetteSide::Server,
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": greeting}]}}),
        ),
    ];
    let mut text = json!({"cassette": 1, "transport": "stdio", "command": ["wharf", "serve"]}).to_string() + "\n";
    for (from, message) in entries {
        text.push_str(&CassetteEntry { from, at_ms: 0, message }.line());
        text.push('\n');
    }
    text
}

#[tokio::test]
async fn a_recorded_session_replays_against_the_demo_in_memory() {
    let recorded = Cassette::parse(&cassette("Hello, Ada!")).unwrap();
    assert_eq!(recorded.entries.len(), 8);
    let differences = recorded.verify(wharf_demo::server().unwrap()).await;
    assert!(differences.is_empty(), "{differences:#?}");

    let changed = Cassette::parse(&cassette("Hello, Bob!")).unwrap();
    let differences = changed.verify(wharf_demo::server().unwrap()).await;
    assert_eq!(differences.len(), 1, "{differences:#?}");
    assert_eq!(differences[0].request, "tools/call greet_interactively");
    assert!(differences[0].detail.contains("recorded \"Hello, Bob!\", now \"Hello, Ada!\""), "{differences:#?}");
    assert!(Cassette::parse("not a cassette").is_err());
}
