//! Reaching a mount's upstream: a client over the program's stdio, the URL, or an in-memory
//! stream to a server in this process; and a client's failure as the JSON-RPC error the
//! gateway's own client is answered with.

use wharf_client::{Client, ClientError, StderrMode};
use wharf_protocol::LoggingLevel;
use wharf_server::RpcError;

use crate::error::{GatewayError, GatewayErrorKind};
use crate::mount::{Mount, Source};
use crate::relay::{Unplaced, from_object};

/// How many of an upstream's questions may wait for the gateway's clients' answers at once.
const MAX_OPEN_QUESTIONS: usize = 1024;

/// A client connected to `mount`'s upstream.
pub(crate) async fn connect(mount: &Mount) -> Result<Client, GatewayError> {
    // Questions come with the requests of the gateway's clients, each with its own handler;
    // the upstream sends every log message, and each client hears those of its level.
    // Questions of 2026-07-28 clients wait, parked, for their retries: more may be open at
    // once than a client of one user asks.
    // A program's stderr is logged under the mount's name.
    let options = mount
        .options
        .clone()
        .handler(Unplaced { roots: mount.roots.clone() })
        .log_level(LoggingLevel::Debug)
        .max_server_requests(MAX_OPEN_QUESTIONS)
        .stderr(StderrMode::Log);
    let connected = match &mount.source {
        Source::Target(target) => {
            let span = tracing::info_span!("mount", name = %mount.name);
            tracing::Instrument::instrument(Client::connect_with(target.clone(), options), span).await
        }
        Source::InProcess(server) => {
            let (client_end, server_end) = tokio::io::duplex(1 << 16);
            let (reader, writer) = tokio::io::split(server_end);
            tokio::spawn(wharf_server::serve_connection(server.clone(), reader, writer));
            let (reader, writer) = tokio::io::split(client_end);
            Client::connect_stream(reader, writer, options).await
        }
    };
    connected.map_err(|err| {
        GatewayError::new(GatewayErrorKind::Upstream, format!("the mount `{}` could not be reached: {err}", mount.name))
    })
}

/// What the gateway answers when the upstream of `mount` failed a request: the upstream's own
/// JSON-RPC error as it was, or an internal error naming the mount (down, timed out, closed).
pub(crate) fn answer_for(mount: &str, err: &ClientError) -> RpcError {
    match err.rpc() {
        Some(error) => from_object(error),
        None => RpcError::internal(format!("the mount `{mount}` did not answer: {err}")),
    }
}
