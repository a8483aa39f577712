//! `wharf replay CASSETTE`: the cassette served as a server over stdio (or, with `--http`, by
//! `replay_http.rs`), in the era it was recorded in, each request answered as `replayer.rs`
//! finds it: what the server sent meanwhile (its questions to the client waited on), then the
//! answer. Notifications are taken and ignored.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::Cassette;
use super::replayer::Replayer;
use crate::exit;

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The cassette `wharf record` wrote.
    #[arg(value_name = "CASSETTE")]
    cassette: PathBuf,
    /// Serve it over Streamable HTTP on this loopback address (port 0 picks a free one), at
    /// `/mcp`, instead of over stdio.
    #[arg(long, value_name = "HOST:PORT")]
    http: Option<String>,
}

fn send(out: &mut impl Write, message: &Value) -> std::io::Result<()> {
    writeln!(out, "{message}")?;
    out.flush()
}

pub(crate) fn replay(args: ReplayArgs) -> ExitCode {
    let cassette = match Cassette::read(&args.cassette) {
        Ok(cassette) => cassette,
        Err(why) => {
            eprintln!("wharf replay: {why}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let replayer = Replayer::new(&cassette);
    if let Some(address) = &args.http {
        return super::replay_http::replay_http(replayer, address, &args.cassette);
    }
    eprintln!("wharf replay: {} exchanges from {}", replayer.len(), args.cassette.display());
    replay_stdio(replayer)
}

fn replay_stdio(mut replayer: Replayer) -> ExitCode {
    let stdin = std::io::stdin();
    let mut input = stdin.lock().lines();
    let mut out = std::io::stdout().lock();
    while let Some(Ok(line)) = input.next() {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            let _ = send(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
            );
            continue;
        };
        if message.get("id").is_none() || message.get("method").is_none() {
            continue;
        }
        let (meanwhile, answer) = replayer.respond(&message);
        for between in meanwhile {
            if send(&mut out, &between).is_err() {
                return ExitCode::SUCCESS;
            }
            if between.get("id").is_some() {
                // A question to the client: its answer is read and passed over.
                for answer in input.by_ref() {
                    let Ok(answer) = answer else { return ExitCode::SUCCESS };
                    if serde_json::from_str::<Value>(&answer).is_ok_and(|answer| answer.get("id") == between.get("id"))
                    {
                        break;
                    }
                }
            }
        }
        if send(&mut out, &answer).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}
