//! A recorded session as a unit test: `wharf::cassette::Cassette` sends a cassette's client side
//! to the demo server in memory, answers its question (an elicitation) as the client did, and
//! finds no difference; a cassette whose recorded answer differs is caught, naming the tool. Two
//! sessions recorded over HTTP, interleaved and with the same ids, are verified each on its own.

use serde_json::json;
use wharf::cassette::{Cassette, CassetteEntry, CassetteSide};

fn cassette(greeting: &str) -> String {
    let mut text = json!({"cassette": 1, "transport": "stdio", "command": ["wharf", "serve"]}).to_string() + "\n";
    for (from, message) in session(greeting, "Ada") {
        text.push_str(&CassetteEntry::new(from, 0, message).line());
        text.push('\n');
    }
    text
}

/// One session's messages: an echo, and a greeting after an elicitation answered with `name`.
fn session(greeting: &str, name: &str) -> [(CassetteSide, serde_json::Value); 8] {
    [
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
            json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"name": name}}}),
        ),
        (
            CassetteSide::Server,
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": greeting}]}}),
        ),
    ]
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

#[tokio::test]
async fn interleaved_sessions_with_the_same_ids_are_verified_each_on_its_own() {
    let mut ada = session("Hello, Ada!", "Ada").into_iter();
    let mut bob = session("Hello, Bob!", "Bob").into_iter();
    let mut entries = Vec::new();
    // Two messages of one session, then two of the other: ids 0 to 3 in both.
    for _ in 0..4 {
        for (label, messages) in [("session-1", &mut ada), ("session-2", &mut bob)] {
            for (from, message) in messages.take(2) {
                let mut entry = CassetteEntry::new(from, 0, message);
                entry.session = Some(label.to_owned());
                entries.push(entry);
            }
        }
    }
    let header = json!({"cassette": 1, "transport": "http", "command": ["http://127.0.0.1:1/mcp"]});
    let recorded = Cassette { header, entries };
    let sessions = recorded.sessions();
    assert_eq!(sessions.len(), 2);
    assert!(sessions[1].entries.iter().all(|entry| entry.session.as_deref() == Some("session-2")));
    let differences = recorded.verify(wharf_demo::server().unwrap()).await;
    assert!(differences.is_empty(), "{differences:#?}");
}
