//! Exactly once across a fleet: three `wharf serve --http --redis --demo-notes FILE` sharing
//! one `redis-server` (a Redis Cluster or Sentinel's primary, as the fleet's other tests take
//! it) and one notes file, behind round-robin nginx. Every call of the demo's
//! `note_add` goes to all three instances and to nginx at once, twenty keys in a row, while
//! one instance is killed with SIGKILL in the middle of a call: the file holds one line per key,
//! and every answer is the first call's result or an outcome-unknown error. Then the same with
//! keys derived from the arguments. Needs `redis-server`, `nginx` and `WHARF_BIN`
//! (`scripts/test` provides them and runs it with `--ignored`).

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::SharedRedis;
use support::demo::wharf_serve;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wharf_testkit::eventually::eventually;
use wharf_testkit::nginx::Nginx;
use wharf_testkit::process::Process;
use wharf_testkit::raw_http::{self, JSON, Reply};
use wharf_testkit::temp_dir::TempDir;

/// The outcome-unknown error's code.
const OUTCOME_UNKNOWN: i64 = -32005;

/// Starts `wharf serve --http` sharing `shared`, appending the demo's notes to `notes`.
fn wharf_instance(shared: &SharedRedis, notes: &std::path::Path) -> (Process, u16) {
    let notes = notes.to_str().expect("a temporary directory's path is UTF-8").to_owned();
    let own = ["--redis-prefix".to_owned(), "exactly-once".to_owned(), "--demo-notes".to_owned(), notes];
    wharf_serve(&[&own[..], &shared.serve_args()].concat(), &[])
}

/// A 2026-07-28 `note_add` of `text`, with `key` as its idempotency key when given.
fn note_call(text: &str, key: Option<&str>, delay_ms: u64) -> String {
    let mut meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    if let Some(key) = key {
        meta["wharf/idempotencyKey"] = json!(key);
    }
    let params = json!({"name": "note_add", "arguments": {"text": text, "delay_ms": delay_ms}, "_meta": meta});
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string()
}

/// Sends `body` to `port` and reads the answer within 40 s; `None` when the connection broke
/// first (its instance was killed).
async fn post(port: u16, body: String) -> Option<Reply> {
    let headers = [
        JSON[0],
        JSON[1],
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "note_add"),
    ];
    let request = raw_http::request_bytes(port, "POST", "/mcp", &headers, &body);
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok()?;
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut raw = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(40), stream.read_to_end(&mut raw)).await;
    let read = read.unwrap_or_else(|_| panic!("no answer within 40 s to {body}"));
    (read.is_ok() && !raw.is_empty()).then(|| raw_http::parse(&raw))
}

/// What a call was answered with.
#[derive(Debug)]
enum Answer {
    /// The note as written (the first call's `structuredContent`), and whether it came from
    /// the key's record.
    Noted {
        note: Value,
        replayed: bool,
    },
    OutcomeUnknown,
    /// The connection broke: the instance that answered it was killed.
    Lost,
}

fn answer(reply: Option<Reply>) -> Answer {
    let Some(reply) = reply else { return Answer::Lost };
    if reply.status == 502 {
        // nginx's upstream was the instance killed under it.
        return Answer::Lost;
    }
    assert_eq!(reply.status, 200, "{reply:?}");
    let message = reply.json();
    if message["error"]["code"] == OUTCOME_UNKNOWN {
        assert!(message["error"]["message"].as_str().unwrap().contains("unknown"), "{message}");
        return Answer::OutcomeUnknown;
    }
    let result = &message["result"];
    assert!(result.is_object() && result["isError"].is_null(), "{message}");
    Answer::Noted {
        note: result["structuredContent"].clone(),
        replayed: result["_meta"]["wharf/idempotentReplay"] == true,
    }
}

/// Checks the answers to one key's calls: one ran (unless its instance was killed), every
/// other is its result from the record, or outcome unknown where the first was lost.
fn check_key(text: &str, answers: &[Answer]) {
    let ran: Vec<&Value> = answers
        .iter()
        .filter_map(|a| if let Answer::Noted { note, replayed: false } = a { Some(note) } else { None })
        .collect();
    let lost = answers.iter().any(|a| matches!(a, Answer::Lost));
    assert!(ran.len() <= 1, "`{text}` ran more than once: {answers:?}");
    for each in answers {
        match each {
            Answer::Noted { note, .. } => {
                assert_eq!(note["note"], text, "{answers:?}");
                if let Some(first) = ran.first() {
                    assert_eq!(&note, first, "every answer is the first call's result: {answers:?}");
                }
            }
            Answer::OutcomeUnknown => {
                assert!(lost && ran.is_empty(), "unknown only where the runner died: {answers:?}")
            }
            Answer::Lost => {}
        }
    }
    assert!(lost || ran.len() == 1, "`{text}` ran once: {answers:?}");
}

/// Sends one call of `text` to every instance in `ports` and to nginx at once.
async fn everywhere(ports: &[u16], proxy: u16, text: &str, key: Option<&str>, delay_ms: u64) -> Vec<Answer> {
    let calls = ports.iter().chain([&proxy]).map(|port| tokio::spawn(post(*port, note_call(text, key, delay_ms))));
    let mut answers = Vec::new();
    for call in calls.collect::<Vec<_>>() {
        answers.push(answer(call.await.unwrap()));
    }
    answers
}

/// The lines of the notes file, each with how many times it was written.
fn lines(notes: &std::path::Path) -> std::collections::BTreeMap<String, usize> {
    let text = std::fs::read_to_string(notes).unwrap_or_default();
    let mut counted = std::collections::BTreeMap::new();
    for line in text.lines() {
        *counted.entry(line.to_owned()).or_insert(0) += 1;
    }
    counted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server, nginx and WHARF_BIN (scripts/test provides them)"]
async fn every_call_takes_effect_once_across_a_fleet_even_when_an_instance_dies_mid_call() {
    let redis = SharedRedis::start();
    let dir = TempDir::new("exactly-once");
    let notes = dir.join("notes.txt");
    let mut instances: Vec<(Process, u16)> = (0..3).map(|_| wharf_instance(&redis, &notes)).collect();
    let proxy = Nginx::start(&instances.iter().map(|(_, port)| *port).collect::<Vec<_>>());
    let mut ports: Vec<u16> = instances.iter().map(|(_, port)| *port).collect();

    for round in 0..20 {
        let text = format!("keyed note {round}");
        let key = format!("key-{round}");
        if round != 10 {
            let answers = everywhere(&ports, proxy.port, &text, Some(&key), 0).await;
            check_key(&text, &answers);
            continue;
        }
        // Round 10: the first call runs on the first instance and holds its answer for 5 s
        // after writing the note; duplicates reach the others; then the first instance is
        // killed before it answers.
        let first = tokio::spawn(post(ports[0], note_call(&text, Some(&key), 5_000)));
        eventually("the note of the call that will die to be written", Duration::from_secs(10), || {
            lines(&notes).contains_key(&text).then_some(())
        })
        .await;
        let duplicates: Vec<_> =
            ports[1..].iter().map(|port| tokio::spawn(post(*port, note_call(&text, Some(&key), 5_000)))).collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (mut killed, _) = instances.remove(0);
        killed.signal("KILL");
        let _ = killed.child.wait();
        ports.remove(0);
        let mut answers = vec![answer(first.await.unwrap())];
        for duplicate in duplicates {
            answers.push(answer(duplicate.await.unwrap()));
        }
        eprintln!("the round whose instance died: {answers:?}");
        assert!(matches!(answers[0], Answer::Lost), "{answers:?}");
        assert!(answers[1..].iter().all(|a| matches!(a, Answer::OutcomeUnknown)), "{answers:?}");
        // A later call with the key is still not run again.
        let later = everywhere(&ports, proxy.port, &text, Some(&key), 5_000).await;
        assert!(later.iter().all(|a| matches!(a, Answer::OutcomeUnknown | Answer::Lost)), "{later:?}");
        assert!(later.iter().any(|a| matches!(a, Answer::OutcomeUnknown)), "{later:?}");
    }
    // Keys derived from the arguments: no key sent, the same text from the same (anonymous)
    // caller is one call.
    for round in 0..20 {
        let text = format!("derived note {round}");
        let answers = everywhere(&ports, proxy.port, &text, None, 0).await;
        check_key(&text, &answers);
        assert!(answers.iter().all(|a| !matches!(a, Answer::Lost | Answer::OutcomeUnknown)), "{answers:?}");
    }

    let written = lines(&notes);
    for round in 0..20 {
        assert_eq!(written.get(&format!("keyed note {round}")), Some(&1), "{written:#?}");
        assert_eq!(written.get(&format!("derived note {round}")), Some(&1), "{written:#?}");
    }
    assert_eq!(written.len(), 40, "nothing else was written: {written:#?}");
}
