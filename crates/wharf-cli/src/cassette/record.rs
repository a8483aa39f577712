//! `wharf record -o CASSETTE -- CMD`: a transparent stdio proxy. The client (whatever started
//! `wharf record`) speaks to CMD through it; every line each way is passed on unchanged and
//! written to the cassette, secrets redacted (argument and `_meta` members named like
//! passwords, tokens, secrets and API keys, and those named with `--redact-*`). The proxy ends
//! when the server does, with its exit status. With `--url`, the HTTP proxy of
//! `record_http.rs` records instead.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::PoisonError;

use clap::Args;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::tape::Tape;
use super::{Redaction, Side};
use crate::exit;
use crate::server_args::runtime;

/// How long the server may take to exit once its stdin is closed on a signal, before it is
/// killed.
const SERVER_EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

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
    /// Record a server over Streamable HTTP at this URL instead: clients call the proxy, at the
    /// same path on the address `--listen` names.
    #[arg(long, value_name = "URL", conflicts_with = "command", required_unless_present = "command")]
    url: Option<String>,
    /// Where the HTTP proxy listens (a loopback address; port 0 picks a free one).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:0", requires = "url")]
    listen: String,
    /// The server, speaking MCP over stdio: everything after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub(crate) fn record(args: RecordArgs) -> ExitCode {
    let redaction = Redaction { meta_keys: args.redact_meta.clone(), arguments: args.redact_arguments.clone() };
    let (transport, recorded) = match &args.url {
        Some(url) => ("http", vec![url.clone()]),
        None => ("stdio", args.command.clone()),
    };
    let tape = match Tape::create(&args.output, transport, &recorded, redaction) {
        Ok(tape) => tape,
        Err(why) => {
            eprintln!("wharf record: {why}");
            return ExitCode::from(exit::USAGE);
        }
    };
    if let Some(url) = &args.url {
        return super::record_http::record_http(url, &args.listen, &args.output, tape);
    }
    let runtime = runtime();
    let code = runtime.block_on(async move {
        // SIGTERM's default action would end the proxy and leave the server running: on a
        // signal, the server's stdin is closed as the client's end would close it, and the
        // server is killed if it has not exited in the grace.
        let mut stop = match wharf_demo::StopSignals::listen() {
            Ok(stop) => stop,
            Err(err) => {
                eprintln!("wharf record: SIGINT and SIGTERM cannot be listened for: {err}");
                return ExitCode::FAILURE;
            }
        };
        let (program, rest) = args.command.split_first().expect("clap requires a command or a URL");
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
        let mut upstream = tokio::spawn(async move {
            let mut lines = BufReader::new(tokio::io::stdin()).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                client_tape.lock().unwrap_or_else(PoisonError::into_inner).write_line(Side::Client, &line);
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
                server_tape.lock().unwrap_or_else(PoisonError::into_inner).write_line(Side::Server, &line);
                if stdout.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                    break;
                }
                let _ = stdout.flush().await;
            }
        });
        let status = tokio::select! {
            status = child.wait() => status,
            () = stop.received() => {
                // Dropping the task drops the server's stdin: it ends as when the client's input does.
                upstream.abort();
                let _ = (&mut upstream).await;
                match tokio::time::timeout(SERVER_EXIT_GRACE, child.wait()).await {
                    Ok(status) => status,
                    Err(_) => match child.kill().await {
                        Ok(()) => child.wait().await,
                        Err(err) => Err(err),
                    },
                }
            }
        };
        let _ = downstream.await;
        // The server ended by itself: the blocked read of the client's input is left.
        upstream.abort();
        match status {
            Ok(status) if status.success() => ExitCode::SUCCESS,
            Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
            Err(err) => {
                eprintln!("wharf record: {err}");
                ExitCode::FAILURE
            }
        }
    });
    // The read of the client's stdin may still wait on a blocking thread (the server ended
    // first, or a signal came), which dropping the runtime would wait for.
    runtime.shutdown_background();
    code
}
