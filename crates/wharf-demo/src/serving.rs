//! Serving the demo on a runtime the command line made: over stdio, its read thread holding
//! the allocator's ballast; over HTTP, until SIGINT or SIGTERM starts a graceful shutdown.

use tokio::runtime::Runtime;
use wharf::Server;

use crate::ballast;

/// Serves `server` over stdin and stdout until stdin closes.
pub fn serve_stdio(runtime: &Runtime, server: Server) -> Result<(), String> {
    let options = wharf::stdio::StdioOptions::default().read_thread_setup(ballast::hold);
    runtime.block_on(wharf::stdio::serve_stdio_with(server, options)).map_err(|err| err.to_string())
}

/// Serves `serve` (a server on a TCP listener or a Unix socket, with its options) over
/// Streamable HTTP until SIGINT or SIGTERM, then answers the requests in flight and returns;
/// `command` starts what it says then (`wharf serve`).
pub fn serve_http(runtime: &Runtime, serve: wharf::http::Serve, command: &str) -> Result<(), String> {
    runtime
        .block_on(serve.with_graceful_shutdown(shutdown_signal(command.to_owned())).into_future())
        .map_err(|err| err.to_string())?;
    eprintln!("{command}: stopped");
    Ok(())
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM, saying so (as `command`) on stderr.
pub async fn shutdown_signal(command: String) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
    eprintln!("{command}: shutting down; answering the requests in flight");
}
