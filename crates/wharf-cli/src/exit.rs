//! The exit codes of the commands that talk to a server, the same for every command, so that
//! scripts can tell a tool's failure from a server that cannot be reached.

use std::process::ExitCode;

use wharf::client::{ClientError, ErrorKind};

use crate::terminal_text::escaped;

/// The tool answered with `isError`, or a check failed.
pub(crate) const TOOL_ERROR: u8 = 1;
/// The command line is wrong (clap's own code).
pub(crate) const USAGE: u8 = 2;
/// The server answered with a JSON-RPC error, something that is not MCP, or nothing in time.
pub(crate) const PROTOCOL_ERROR: u8 = 3;
/// The server could not be started or reached, or the connection ended.
pub(crate) const CONNECTION_FAILED: u8 = 4;
/// The server wants credentials (HTTP 401, or 403 for a missing scope).
pub(crate) const AUTH_REQUIRED: u8 = 5;
// A command stopped by SIGINT or SIGTERM exits with 128 and the signal's number, as a shell
// reports it (`server_args::Stopped`).

/// The exit code for a failure to talk to the server, after saying what it was on stderr (the
/// server's words among it, escaped).
pub(crate) fn failure(command: &str, error: &ClientError) -> ExitCode {
    eprintln!("wharf {command}: {}", escaped(&error.to_string()));
    if let Some(challenge) = error.www_authenticate() {
        eprintln!("wharf {command}: the server asks: WWW-Authenticate: {}", escaped(challenge));
    }
    if error.kind() == ErrorKind::AuthRequired && !error.to_string().contains("wharf login") {
        eprintln!(
            "wharf {command}: log in with `wharf login URL` at a terminal, or pass --bearer, or --client-credentials"
        );
    }
    ExitCode::from(code_for(error))
}

pub(crate) fn code_for(error: &ClientError) -> u8 {
    match error.kind() {
        ErrorKind::AuthRequired => AUTH_REQUIRED,
        ErrorKind::Connect | ErrorKind::Closed => CONNECTION_FAILED,
        _ => PROTOCOL_ERROR,
    }
}

/// A command line that parses but makes no sense.
pub(crate) fn usage(command: &str, message: &str) -> ExitCode {
    eprintln!("wharf {command}: {message}");
    ExitCode::from(USAGE)
}
