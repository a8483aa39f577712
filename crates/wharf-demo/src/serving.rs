//! Serving the demo on a runtime the command line made: over stdio, its read thread holding
//! the allocator's ballast, until stdin closes (or a signal, for a server that starts
//! programs); over HTTP, until SIGINT or SIGTERM starts a graceful shutdown.

use std::pin::Pin;

use tokio::runtime::Runtime;
use wharf::Server;

use crate::ballast;

/// Serves `server` over stdin and stdout until stdin closes.
pub fn serve_stdio(runtime: &Runtime, server: Server) -> Result<(), String> {
    serve_stdio_until(runtime, server, Box::pin(std::future::pending()))
}

/// Like [`serve_stdio`], or until `stop` completes: the requests in flight are then dropped,
/// with what they started. (Boxed: the server's loop is compiled once, whatever stops it.)
pub fn serve_stdio_until(
    runtime: &Runtime,
    server: Server,
    stop: Pin<Box<dyn Future<Output = ()> + Send>>,
) -> Result<(), String> {
    let options = wharf::stdio::StdioOptions::default().read_thread_setup(ballast::hold);
    runtime.block_on(async {
        tokio::select! {
            served = wharf::stdio::serve_stdio_with(server, options) => served.map_err(|err| err.to_string()),
            () = stop => Ok(()),
        }
    })
}

/// Serves `serve` (a server on a TCP listener or a Unix socket, with its options) over
/// Streamable HTTP until SIGINT or SIGTERM, then answers the requests in flight and returns;
/// `command` starts what it says then (`wharf serve`).
pub fn serve_http(runtime: &Runtime, serve: wharf::http::Serve, command: &str) -> Result<(), String> {
    serve_http_until(runtime, serve, command, Box::pin(shutdown_signal(command.to_owned())))
}

/// Like [`serve_http`], until `shutdown` completes. (Boxed: the server's loop is compiled
/// once, whatever stops it.)
pub fn serve_http_until(
    runtime: &Runtime,
    serve: wharf::http::Serve,
    command: &str,
    shutdown: Pin<Box<dyn Future<Output = ()> + Send>>,
) -> Result<(), String> {
    runtime.block_on(serve.with_graceful_shutdown(shutdown).into_future()).map_err(|err| err.to_string())?;
    eprintln!("{command}: stopped");
    Ok(())
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM, saying so (as `command`) on stderr.
pub async fn shutdown_signal(command: String) {
    match StopSignals::listen() {
        Ok(signals) => signals.shutdown(command).await,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            announce_shutdown(&command);
        }
    }
}

fn announce_shutdown(command: &str) {
    eprintln!("{command}: shutting down; answering the requests in flight");
}

/// SIGINT and SIGTERM, heard from the moment this is made: one that comes before anything
/// waits for it is kept, not lost to the signal's default action (which ends the process
/// without closing what it started).
#[derive(Debug)]
pub struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    /// Starts listening; must be called within a Tokio runtime.
    pub fn listen() -> std::io::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals { interrupt: signal(SignalKind::interrupt())?, terminate: signal(SignalKind::terminate())? })
        }
        #[cfg(not(unix))]
        Ok(StopSignals {})
    }

    /// Completes when SIGINT or SIGTERM came since this was made, or comes.
    pub async fn received(&mut self) {
        self.which().await;
    }

    /// [`received`](StopSignals::received), saying which: the signal's number (2 for SIGINT,
    /// 15 for SIGTERM).
    pub async fn which(&mut self) -> u8 {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => 2,
            _ = self.terminate.recv() => 15,
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            2
        }
    }

    /// Completes on the first signal, saying so (as `command`) on stderr: the shutdown of
    /// [`serve_http_until`].
    pub async fn shutdown(mut self, command: String) {
        self.received().await;
        announce_shutdown(&command);
    }
}
