//! `wharf verify CASSETTE -- CMD`: the recorded client side sent to a server, in order, each
//! recorded session to a server started for it, and each answer compared with the recorded one (volatile members aside: ids, tokens, `requestState`,
//! times, `_meta`). The server's questions are answered as the client answered them then.
//! Differences are reported (text, `--json`, `--junit FILE`) and exit 1; `--update` rewrites
//! the cassette with what the server answers now.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{Value, json};

use super::{Cassette, Entry, Side, describe, first_difference, header, normalized};
use crate::exit;
use crate::server_args::Stopped;

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The cassette `wharf record` wrote.
    #[arg(value_name = "CASSETTE")]
    cassette: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Also write the report as JUnit XML to this file, for CI.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Rewrite the cassette with the server's answers now.
    #[arg(long)]
    update: bool,
    /// Seconds to wait for each answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    timeout: u64,
    /// The server, speaking MCP over stdio: everything after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// One request's verdict.
#[derive(Debug, serde::Serialize)]
struct Verdict {
    request: String,
    same: bool,
    /// What differs, when something does.
    #[serde(skip_serializing_if = "Option::is_none")]
    difference: Option<String>,
}

/// The server's lines as they come. Its process is shared with the thread that stops it on a
/// signal (`stop_on_signal`).
struct Server {
    child: Arc<Mutex<std::process::Child>>,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<String>,
}

/// The server running now, for the signal thread to kill.
type Running = Arc<Mutex<Option<Arc<Mutex<std::process::Child>>>>>;

impl Server {
    fn send(&mut self, message: &Value) -> bool {
        let Some(stdin) = self.stdin.as_mut() else { return false };
        writeln!(stdin, "{message}").and_then(|()| stdin.flush()).is_ok()
    }

    fn next(&mut self, deadline: Instant) -> Option<Value> {
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let line = self.lines.recv_timeout(left).ok()?;
            if let Ok(message) = serde_json::from_str(&line) {
                return Some(message);
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Kills the server running, and exits as the signal would have it, when SIGINT or SIGTERM
/// comes: without this, SIGTERM sent to `wharf verify` alone leaves a server that does not
/// stop when its input ends running. Listens on a thread of its own, the rest being blocking.
/// The signals are listened for from the moment this returns.
fn stop_on_signal(running: Running) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    let Ok(mut signals) = runtime.block_on(async { wharf_demo::StopSignals::listen() }) else { return };
    std::thread::spawn(move || {
        runtime.block_on(async {
            let signal = signals.which().await;
            if let Some(child) = running.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
                let mut child = child.lock().unwrap_or_else(PoisonError::into_inner);
                let _ = child.kill();
                let _ = child.wait();
            }
            Stopped::by(signal).exit("verify");
        });
    });
}

/// The client's recorded answer to the recorded server question like `question` (the same
/// method), the earliest not used yet.
fn recorded_answer(entries: &[Entry], question: &Value, used: &mut Vec<usize>) -> Option<Value> {
    let method = question.get("method")?;
    entries.iter().enumerate().find_map(|(at, entry)| {
        if entry.from != Side::Server || !entry.is_request() || entry.message.get("method") != Some(method) {
            return None;
        }
        let answer = entries.iter().position(|answer| {
            answer.from == Side::Client && answer.is_answer() && answer.message["id"] == entry.message["id"]
        })?;
        if used.contains(&answer) {
            return None;
        }
        used.push(answer);
        let _ = at;
        Some(entries[answer].message.clone())
    })
}

/// Starts the server `command` over stdio, as the one `running` names.
fn start(command: &[String], running: &Running) -> Result<Server, String> {
    let (program, rest) = command.split_first().expect("clap requires a command");
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("{program}: {err}"))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let stdin = child.stdin.take();
    let (lines, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let child = Arc::new(Mutex::new(child));
    *running.lock().unwrap_or_else(PoisonError::into_inner) = Some(child.clone());
    Ok(Server { child, stdin, lines: receiver })
}

/// What a session's verification found: a verdict per request, and what passed, for `--update`.
#[derive(Default)]
struct Verified {
    verdicts: Vec<Verdict>,
    rerecorded: Vec<Entry>,
}

/// Sends the client side of one recorded session (`entries`) to `server`, and compares.
fn verify_session(entries: &[Entry], mut server: Server, timeout: Duration, started: Instant, found: &mut Verified) {
    let session = entries.first().and_then(|entry| entry.session.clone());
    let stamp = |from: Side, message: Value| {
        let mut entry = Entry::new(from, u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX), message);
        entry.session.clone_from(&session);
        entry
    };
    let mut used_answers = Vec::new();
    // The `requestState` the server sealed last: a later round sends it back, not the recorded
    // one, which the recording server sealed with a key of its own.
    let mut live_state: Option<Value> = None;
    for (at, entry) in entries.iter().enumerate() {
        // The client's answers to the server's questions are sent when the server asks; an
        // HTTP exchange without a message (a GET, a DELETE) has nothing to send.
        if entry.from != Side::Client || entry.is_answer() || !entry.message.is_object() {
            continue;
        }
        let mut outgoing = entry.message.clone();
        if outgoing.pointer("/params/requestState").is_some()
            && let Some(state) = &live_state
        {
            outgoing["params"]["requestState"] = state.clone();
        }
        if !server.send(&outgoing) {
            found.verdicts.push(Verdict {
                request: describe(&entry.message),
                same: false,
                difference: Some("the server stopped reading".to_owned()),
            });
            break;
        }
        found.rerecorded.push(stamp(Side::Client, outgoing));
        if !entry.is_request() {
            continue;
        }
        let id = &entry.message["id"];
        let recorded = entries[at + 1..]
            .iter()
            .find(|later| later.from == Side::Server && later.is_answer() && &later.message["id"] == id);
        let deadline = Instant::now() + timeout;
        let answer = loop {
            let Some(message) = server.next(deadline) else { break None };
            found.rerecorded.push(stamp(Side::Server, message.clone()));
            if message.get("method").is_some() && message.get("id").is_some() {
                // A question: answered as the client answered it when recorded.
                let mut reply = recorded_answer(entries, &message, &mut used_answers).unwrap_or_else(
                    || json!({"jsonrpc": "2.0", "error": {"code": -32601, "message": "not in the cassette"}}),
                );
                reply["id"] = message["id"].clone();
                server.send(&reply);
                found.rerecorded.push(stamp(Side::Client, reply));
                continue;
            }
            if message.get("method").is_none() && &message["id"] == id {
                if let Some(state) = message.pointer("/result/requestState") {
                    live_state = Some(state.clone());
                }
                break Some(message);
            }
        };
        let request = describe(&entry.message);
        let verdict = match (recorded, answer) {
            (_, None) => Verdict { request, same: false, difference: Some(format!("no answer within {timeout:?}")) },
            (None, Some(_)) => Verdict { request, same: true, difference: None },
            (Some(recorded), Some(now)) => {
                let (before, after) = (normalized(&recorded.message), normalized(&now));
                let found = first_difference("", &before, &after);
                Verdict { request, same: found.is_none(), difference: found }
            }
        };
        found.verdicts.push(verdict);
    }
}

pub(crate) fn verify(args: VerifyArgs) -> ExitCode {
    let cassette = match Cassette::read(&args.cassette) {
        Ok(cassette) => cassette,
        Err(why) => {
            eprintln!("wharf verify: {why}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let timeout = Duration::from_secs(args.timeout.max(1));
    let started = Instant::now();
    let mut found = Verified::default();
    let running = Running::default();
    stop_on_signal(running.clone());
    // Each recorded session on a server of its own, as a client would meet it.
    for session in cassette.sessions() {
        match start(&args.command, &running) {
            Ok(server) => verify_session(&session.entries, server, timeout, started, &mut found),
            Err(why) => {
                eprintln!("wharf verify: {why}");
                return ExitCode::from(exit::USAGE);
            }
        }
    }
    let Verified { verdicts, rerecorded } = found;
    let differ = verdicts.iter().filter(|verdict| !verdict.same).count();
    if args.json {
        println!("{}", json!({"verdicts": verdicts, "same": verdicts.len() - differ, "differ": differ}));
    } else {
        for verdict in &verdicts {
            match &verdict.difference {
                None => println!("  same  {}", verdict.request),
                Some(what) => println!("  DIFF  {}: {what}", verdict.request),
            }
        }
        println!("{} requests: {} the same, {differ} different", verdicts.len(), verdicts.len() - differ);
    }
    if let Some(path) = &args.junit {
        let mut xml = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"wharf verify\" tests=\"{}\" failures=\"{differ}\">\n",
            verdicts.len()
        );
        for verdict in &verdicts {
            let name = escape(&verdict.request);
            match &verdict.difference {
                None => xml.push_str(&format!("  <testcase name=\"{name}\"/>\n")),
                Some(what) => xml.push_str(&format!(
                    "  <testcase name=\"{name}\"><failure message=\"{}\"/></testcase>\n",
                    escape(what)
                )),
            }
        }
        xml.push_str("</testsuite>\n");
        if let Err(err) = std::fs::write(path, xml) {
            eprintln!("wharf verify: {}: {err}", path.display());
            return ExitCode::from(exit::USAGE);
        }
    }
    if args.update {
        let mut text = header("stdio", &args.command) + "\n";
        for entry in &rerecorded {
            text.push_str(&entry.line());
            text.push('\n');
        }
        if let Err(err) = std::fs::write(&args.cassette, text) {
            eprintln!("wharf verify: {}: {err}", args.cassette.display());
            return ExitCode::from(exit::USAGE);
        }
        eprintln!("wharf verify: rewrote {}", args.cassette.display());
        return ExitCode::SUCCESS;
    }
    if differ == 0 { ExitCode::SUCCESS } else { ExitCode::from(exit::TOOL_ERROR) }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
