//! Serving an endpoint on a listener: `serve(listener, server)`, awaited as it is or given
//! options and a graceful shutdown first (the shape of `axum::serve`). The accept loop keeps
//! connections within their limits and lets each finish the request it is answering when the
//! shutdown signal comes.

use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

use http::Request;
use tokio::net::TcpListener;
use wharf_server::contract::{Error, Server};

use crate::connections::ConnectionLimits;
use crate::options::{HttpOptions, OperatorEndpoint};
use crate::{McpService, metrics, reply};

/// Serves `server` over Streamable HTTP on the connections `listener` accepts, at the options'
/// path (other paths get 404), until the process ends:
///
/// ```no_run
/// # async fn run(server: wharf_server::Server) -> Result<(), wharf_server::Error> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.expect("a free port");
/// wharf_http::serve(listener, server).await
/// # }
/// ```
///
/// [`Serve::options`] changes the limits and protections ([`HttpOptions`]; all on by default);
/// [`Serve::with_graceful_shutdown`] stops on a signal. Connections are bounded by
/// [`HttpOptions::max_connections`] and [`HttpOptions::max_connections_per_address`], and
/// closed after [`HttpOptions::idle_timeout`] with nothing to do. The endpoint's URL is
/// logged at `info`.
pub fn serve(listener: TcpListener, server: Server) -> Serve {
    Serve { listener, server, options: HttpOptions::default() }
}

/// What [`serve`] returns: await it to serve, or configure it first.
#[derive(Debug)]
#[must_use = "a Serve does nothing until it is awaited"]
pub struct Serve {
    listener: TcpListener,
    server: Server,
    options: HttpOptions,
}

impl Serve {
    /// Serves with `options` instead of the defaults.
    pub fn options(mut self, options: HttpOptions) -> Serve {
        self.options = options;
        self
    }

    /// Serves until `signal` completes, then shuts down gracefully: no new connections or
    /// requests are accepted, standalone streams and listeners end cleanly, requests in flight
    /// are answered, and connections close as they finish. Those still busy after
    /// [`HttpOptions::shutdown_grace`] are cut. The future completes once every connection is
    /// closed.
    pub fn with_graceful_shutdown<F>(self, signal: F) -> WithGracefulShutdown<F>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        WithGracefulShutdown { serve: self, signal }
    }
}

impl IntoFuture for Serve {
    type Output = Result<(), Error>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<(), Error>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(run(self, std::future::pending()))
    }
}

/// A [`Serve`] that stops gracefully when its signal completes; await it to serve.
#[derive(Debug)]
#[must_use = "a WithGracefulShutdown does nothing until it is awaited"]
pub struct WithGracefulShutdown<F> {
    serve: Serve,
    signal: F,
}

impl<F> IntoFuture for WithGracefulShutdown<F>
where
    F: Future<Output = ()> + Send + 'static,
{
    type Output = Result<(), Error>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<(), Error>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(run(self.serve, self.signal))
    }
}

/// The accept loop, until `shutdown` completes; then the graceful shutdown.
async fn run(serve: Serve, shutdown: impl Future<Output = ()> + Send) -> Result<(), Error> {
    let Serve { listener, server, options } = serve;
    if let Ok(local) = listener.local_addr() {
        tracing::info!("serving MCP over Streamable HTTP at http://{local}{}", options.path);
    }
    // hyper's timer for a request's head runs whenever the connection waits for one, a
    // kept-alive connection's next request included (not while a response or stream is being
    // sent): at the idle timeout, it closes idle connections at no cost per request.
    let header_read_timeout = options.header_read_timeout.min(options.idle_timeout);
    let limits = ConnectionLimits::new(options.max_connections, options.max_connections_per_address);
    let grace = options.shutdown_grace;
    let path: Arc<str> = options.path.clone().into();
    let operator_endpoints: Arc<[Arc<OperatorEndpoint>]> = options.operator_endpoints.clone().into();
    let service = McpService::new(server, options);
    let mut connections = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        // Finished connections are collected as new ones come, so the set stays small.
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Running out of file descriptors and similar passing conditions must not end
                // the server; wait a moment and go on.
                tracing::warn!(%err, "accepting a connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let slot = match limits.admit(peer.ip()) {
            Ok(slot) => slot,
            Err(refusal) => {
                tracing::debug!(%peer, ?refusal, "refusing a connection past the connection limits");
                refusal.refuse(stream);
                continue;
            }
        };
        // Small messages go out at once instead of waiting for more to fill a packet.
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let path = path.clone();
        let operator_endpoints = operator_endpoints.clone();
        let mut closing = service.shared.closing();
        connections.spawn(async move {
            let _slot = slot;
            let handler = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                let service = service.clone();
                let path = path.clone();
                let operator_endpoints = operator_endpoints.clone();
                async move {
                    let path_asked = request.uri().path();
                    if let Some(endpoint) = operator_endpoints.iter().find(|endpoint| endpoint.path == path_asked) {
                        return Ok(metrics::answer(&service.shared.options, endpoint, &request).await);
                    }
                    if request.uri().path() != &*path && !service.publishes(request.uri().path()) {
                        return Ok::<_, Infallible>(reply::not_found());
                    }
                    Ok(service.handle_from(request, peer.ip()).await)
                }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_read_timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler);
            let mut connection = std::pin::pin!(connection);
            let outcome = tokio::select! {
                outcome = connection.as_mut() => outcome,
                () = async { drop(closing.wait_for(|closing| *closing).await) } => {
                    // The request being answered finishes; no other is read.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(err) = outcome {
                tracing::debug!(%peer, %err, "an HTTP connection ended with an error");
            }
        });
    }
    drop(listener);
    tracing::info!(connections = connections.len(), "shutting down: answering the requests in flight");
    service.close_streams();
    let drained = tokio::time::timeout(grace, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!(
            connections = connections.len(),
            ?grace,
            "connections still busy after the grace period are cut"
        );
        connections.shutdown().await;
    }
    Ok(())
}
