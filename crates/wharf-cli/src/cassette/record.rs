//! `wharf record -o CASSETTE -- CMD`: a transparent stdio proxy. The client (whatever started
//! `wharf record`) speaks to CMD through it; every line each way is passed on unchanged and
//! written to the cassette, secrets redacted (argument and `_meta` members named like
//! passwords, tokens, secrets and API keys, and those named with `--redact-*`). The proxy ends
//! when the server does, with its exit status.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::Args;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{Entry, Redaction, Side, header};
use crate::exit;
use crate::server_args::runtime;

#[derive(Debug, Args)]
pub(crate) struct RecordArgs {
    /// The cassette to write (one JSON object a line).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: PathBuf,
    /// Also redact this `_meta` member (repeatable).
    #[arg(long = "redact-meta", value_name = "KEY")]
    redact_meta: Vec<String>,
    /// Also redact the tool argument of this name, at any depth (repeatable).
    #[arg(long = "redact-argument", value_name = "NAME")]
    redact_arguments: Vec<String>,
    /// The server, speaking MCP over stdio: everything after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Where entries go, in the order they passed.
struct Tape {
    file: std::fs::File,
    started: Instant,
    redaction: Redaction,
}

impl Tape {
    fn write(&mut self, from: Side, line: &str) {
        use std::io::Write;
        let message = match serde_json::from_str::<Value>(line) {
            Ok(message) => self.redaction.apply(message),
            // A line that is not JSON is kept as it was, as a string.
            Err(_) => Value::from(line),
        };
        let at_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let entry = Entry { from, at_ms, message };
        let _ = writeln!(self.file, "{}", entry.line());
    }
}

pub(crate) fn record(args: RecordArgs) -> ExitCode {
    let file = match std::fs::File::create(&args.output) {
        Ok(file) => file,
        Err(err) => {
            eprintln!("wharf record: {}: {err}", args.output.display());
            return ExitCode::from(exit::USAGE);
        }
    };
    let redaction = Redaction { meta_keys: args.redact_meta.clone(), arguments: args.redact_arguments.clone() };
    let mut tape = Tape { file, started: Instant::now(), redaction };
    {
        use std::io::Write;
        let _ = writeln!(tape.file, "{}", header("stdio", &args.command));
    }
    let tape = Arc::new(Mutex::new(tape));
    runtime().block_on(async move {
        let (program, rest) = args.command.split_first().expect("clap requires a command");
        let mut child = match tokio::process::Command::new(program)
            .args(rest)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
        {
            Ok(child) => child,
            Err(err) => {
                eprintln!("wharf record: {program}: {err}");
                return ExitCode::from(exit::USAGE);
            }
        };
        let mut to_server = child.stdin.take().expect("stdin is piped");
        let from_server = child.stdout.take().expect("stdout is piped");
        let client_tape = tape.clone();
        let upstream = tokio::spawn(async move {
            let mut lines = BufReader::new(tokio::io::stdin()).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                client_tape.lock().unwrap_or_else(std::sync::PoisonError::into_inner).write(Side::Client, &line);
                if to_server.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                    break;
                }
                let _ = to_server.flush().await;
            }
            // The client's input ended: so does the server's.
            drop(to_server);
        });
        let server_tape = tape.clone();
        let downstream = tokio::spawn(async move {
            let mut lines = BufReader::new(from_server).lines();
            let mut stdout = tokio::io::stdout();
            while let Ok(Some(line)) = lines.next_line().await {
                server_tape.lock().unwrap_or_else(std::sync::PoisonError::into_inner).write(Side::Server, &line);
                if stdout.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                    break;
                }
                let _ = stdout.flush().await;
            }
        });
        let status = child.wait().await;
        let _ = downstream.await;
        upstream.abort();
        match status {
            Ok(status) if status.success() => ExitCode::SUCCESS,
            Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
            Err(err) => {
                eprintln!("wharf record: {err}");
                ExitCode::FAILURE
            }
        }
    })
}
