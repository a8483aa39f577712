//! Driving a child process that speaks newline-delimited JSON-RPC on its stdin and stdout.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::measure::{Measurement, cpu_time, peak_rss_kib};

/// Starts `program` with `args`, speaking on its stdin and stdout.
pub fn spawn(program: &str, args: &[&str]) -> Child {
    Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {program}: {err}"))
}

/// The one line that `program` answers `request` with.
pub fn answer_line(program: &str, args: &[&str], request: &str) -> String {
    let mut child = spawn(program, args);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    drop(stdin);
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let _ = child.wait();
    line
}

/// The JSON of the `serverInfo` in the result `_meta` of `answer`, a 2026-07-28 answer line, so
/// that a baseline can write the same bytes.
pub fn server_info(answer: &str) -> String {
    let value: serde_json::Value =
        serde_json::from_str(answer).unwrap_or_else(|err| panic!("not a JSON answer: {err}: {answer}"));
    let info = &value["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert!(info.is_object(), "no serverInfo in {answer}");
    info.to_string()
}

/// Sends `setup` lines and waits for one reply line each, then sends `count` requests made by
/// `request(id)`, keeping at most `window` unanswered, and measures the answers. Request ids
/// are the integers `1..=count`.
pub fn drive(
    mut child: Child,
    setup: &[String],
    count: usize,
    window: usize,
    request: impl Fn(usize) -> String + Send + 'static,
) -> Measurement {
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::with_capacity(1 << 16, child.stdout.take().unwrap());
    let mut line = String::new();
    for message in setup {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        if message.contains("\"id\"") {
            line.clear();
            stdout.read_line(&mut line).unwrap();
        }
    }

    let sent_at: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; count + 1]));
    let credits = Arc::new((Mutex::new(window), Condvar::new()));
    let writer = {
        let sent_at = sent_at.clone();
        let credits = credits.clone();
        std::thread::spawn(move || {
            let mut buffer = Vec::with_capacity(1 << 16);
            for id in 1..=count {
                {
                    let (lock, ready) = &*credits;
                    let mut available = lock.lock().unwrap();
                    if *available == 0 && !buffer.is_empty() {
                        // Flush what is queued before waiting, or the window never drains.
                        drop(available);
                        stdin.write_all(&buffer).unwrap();
                        stdin.flush().unwrap();
                        buffer.clear();
                        available = lock.lock().unwrap();
                    }
                    while *available == 0 {
                        available = ready.wait(available).unwrap();
                    }
                    *available -= 1;
                }
                sent_at.lock().unwrap()[id] = Some(Instant::now());
                buffer.extend_from_slice(request(id).as_bytes());
                buffer.push(b'\n');
                let more_credits = *credits.0.lock().unwrap() > 0;
                if !more_credits || buffer.len() > 32 * 1024 || id == count {
                    stdin.write_all(&buffer).unwrap();
                    stdin.flush().unwrap();
                    buffer.clear();
                }
            }
            stdin
        })
    };

    let started = Instant::now();
    let mut latencies = Vec::with_capacity(count);
    let mut received = 0;
    while received < count {
        line.clear();
        if stdout.read_line(&mut line).unwrap() == 0 {
            panic!("the server closed its stdout after {received} answers");
        }
        let value: serde_json::Value = serde_json::from_str(line.trim_end()).expect("a JSON reply");
        let Some(id) = value.get("id").and_then(serde_json::Value::as_u64) else { continue };
        assert!(value.get("result").is_some(), "request {id} failed: {line}");
        let sent = sent_at.lock().unwrap()[id as usize].expect("an answer to a request not yet sent");
        latencies.push(sent.elapsed());
        received += 1;
        let (lock, ready) = &*credits;
        *lock.lock().unwrap() += 1;
        ready.notify_one();
    }
    let elapsed = started.elapsed();
    let (peak_rss_kib, cpu) = (peak_rss_kib(child.id()), cpu_time(child.id()));
    let stdin = writer.join().unwrap();
    drop(stdin);
    let _ = child.wait();
    Measurement::new(count, elapsed, latencies, peak_rss_kib, cpu)
}

/// `initialize` and `notifications/initialized`, which open the 2025 session of the session
/// requests.
pub fn session_setup() -> Vec<String> {
    vec![
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
    ]
}

/// A session `tools/call` echo with id `id`.
pub fn session_request(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello, wharf"}}}}}}"#
    )
}

/// A 2026-07-28 `tools/call` echo with id `id`.
pub fn stateless_request(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"echo","arguments":{{"message":"hello, wharf"}}}}}}"#
    )
}
