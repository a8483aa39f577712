//! Serving an endpoint on a listener: `serve(listener, server)`, awaited as it is or given
//! options and a graceful shutdown first (the shape of `axum::serve`). The accept loop keeps
//! connections within their limits and lets each finish the request it is answering when the
//! shutdown signal comes.

use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

use std::net::{IpAddr, SocketAddr};

use http::Request;
use tokio::net::{TcpListener, TcpStream};
use wharf_server::contract::{Error, Server};

use crate::connection_auth::ConnectionAuth;
use crate::connections::ConnectionLimits;
use crate::head_timer::HeadTimers;
use crate::options::{HttpOptions, OperatorEndpoint};
#[cfg(unix)]
use crate::unix::UnixPeer;
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
    Serve { listener: Listener::Tcp(listener), server, options: HttpOptions::default() }
}

/// [`serve`] on a Unix socket ([`bind_unix`](crate::bind_unix) makes one owner-only): the
/// same endpoint, its `Host` and `Origin` checks on, with each connection's peer credentials
/// ([`UnixPeer`]) as its requests' principal unless an [`Authenticator`](crate::Authenticator)
/// finds another, and only the users [`HttpOptions::allow_unix_uid`] names let in when it names
/// any. Limits per client count per user. A graceful shutdown removes the socket file.
#[cfg(unix)]
pub fn serve_unix(listener: tokio::net::UnixListener, server: Server) -> Serve {
    Serve { listener: Listener::Unix(listener), server, options: HttpOptions::default() }
}

/// What [`serve`] returns: await it to serve, or configure it first.
#[derive(Debug)]
#[must_use = "a Serve does nothing until it is awaited"]
pub struct Serve {
    listener: Listener,
    server: Server,
    options: HttpOptions,
}

/// Where connections come from.
#[derive(Debug)]
enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(tokio::net::UnixListener),
}

/// An accepted connection, and who is on the other end.
enum Accepted {
    Tcp(TcpStream, SocketAddr),
    #[cfg(unix)]
    Unix(tokio::net::UnixStream, UnixPeer),
}

impl Listener {
    async fn accept(&self) -> std::io::Result<Accepted> {
        match self {
            Listener::Tcp(listener) => listener.accept().await.map(|(stream, peer)| Accepted::Tcp(stream, peer)),
            #[cfg(unix)]
            Listener::Unix(listener) => {
                let (stream, _) = listener.accept().await?;
                let peer = UnixPeer::of(&stream)?;
                Ok(Accepted::Unix(stream, peer))
            }
        }
    }

    /// Where clients reach it, for the log.
    fn describe(&self, path: &str) -> Option<String> {
        match self {
            Listener::Tcp(listener) => listener.local_addr().ok().map(|local| format!("http://{local}{path}")),
            #[cfg(unix)]
            Listener::Unix(listener) => listener
                .local_addr()
                .ok()
                .and_then(|local| local.as_pathname().map(|socket| format!("unix:{}, at {path}", socket.display()))),
        }
    }

    /// Removes a Unix socket's file, once nothing more is accepted on it.
    fn remove_socket_file(&self) {
        #[cfg(unix)]
        if let Listener::Unix(listener) = self
            && let Ok(local) = listener.local_addr()
            && let Some(socket) = local.as_pathname()
        {
            let _ = std::fs::remove_file(socket);
        }
    }
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

/// What every connection of an endpoint shares.
#[derive(Clone)]
struct Endpoint {
    service: McpService,
    path: Arc<str>,
    operator_endpoints: Arc<[Arc<OperatorEndpoint>]>,
    header_read_timeout: std::time::Duration,
    head_timers: Arc<HeadTimers>,
}

impl Endpoint {
    /// Serves one connection's requests until it closes, or until the shutdown lets it finish
    /// the request it is answering. A Unix peer's principal is each request's, and a peer the
    /// options do not let in is answered 403 on every request.
    async fn serve_connection<Io>(self, io: Io, address: IpAddr, unix_peer: Option<UnixPeerInfo>)
    where
        Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let mut closing = self.service.shared.closing();
        let Endpoint { service, path, operator_endpoints, header_read_timeout, head_timers } = self;
        let connection_auth = service.authenticates().then(|| Arc::new(ConnectionAuth::default()));
        let handler = hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
            let service = service.clone();
            let connection_auth = connection_auth.clone();
            let path = path.clone();
            let operator_endpoints = operator_endpoints.clone();
            let unix_peer = unix_peer.clone();
            async move {
                if let Some(peer) = unix_peer {
                    if !peer.allowed {
                        return Ok(reply::peer_not_allowed(peer.uid));
                    }
                    request.extensions_mut().insert(peer.principal.clone());
                }
                let path_asked = request.uri().path();
                if let Some(endpoint) = operator_endpoints.iter().find(|endpoint| endpoint.path == path_asked) {
                    return Ok(metrics::answer(&service.shared.options, endpoint, &request).await);
                }
                if request.uri().path() != &*path && !service.publishes(request.uri().path()) {
                    return Ok::<_, Infallible>(reply::not_found());
                }
                Ok(service.handle_from(request, address, connection_auth).await)
            }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(head_timers.connection_timer())
            .header_read_timeout(header_read_timeout)
            .serve_connection(hyper_util::rt::TokioIo::new(io), handler);
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
            tracing::debug!(%address, %err, "an HTTP connection ended with an error");
        }
    }
}

/// Stops a task when dropped, as serving ends however it ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A Unix peer as each of its requests needs it.
#[derive(Clone)]
struct UnixPeerInfo {
    uid: u32,
    allowed: bool,
    principal: wharf_server::contract::Principal,
}

/// The accept loop, until `shutdown` completes; then the graceful shutdown.
async fn run(serve: Serve, shutdown: impl Future<Output = ()> + Send) -> Result<(), Error> {
    let Serve { listener, server, options } = serve;
    if let Some(url) = listener.describe(&options.path) {
        tracing::info!("serving MCP over Streamable HTTP at {url}");
    }
    // hyper's timer for a request's head runs whenever the connection waits for one, a
    // kept-alive connection's next request included (not while a response or stream is being
    // sent): at the idle timeout, it closes idle connections at no cost per request.
    let header_read_timeout = options.header_read_timeout.min(options.idle_timeout);
    let limits = ConnectionLimits::new(options.max_connections, options.max_connections_per_address);
    let grace = options.shutdown_grace;
    let allowed_uids = options.unix_allowed_uids.clone();
    let endpoint = Endpoint {
        path: options.path.clone().into(),
        operator_endpoints: options.operator_endpoints.clone().into(),
        service: McpService::new(server, options),
        header_read_timeout,
        head_timers: HeadTimers::new(header_read_timeout),
    };
    let _sweeping = AbortOnDrop(tokio::spawn(endpoint.head_timers.clone().sweep()));
    let mut connections = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        // Finished connections are collected as new ones come, so the set stays small.
        while connections.try_join_next().is_some() {}
        let accepted = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Running out of file descriptors and similar passing conditions must not end
                // the server; wait a moment and go on.
                tracing::warn!(%err, "accepting a connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let address = match &accepted {
            Accepted::Tcp(_, peer) => peer.ip(),
            #[cfg(unix)]
            Accepted::Unix(_, peer) => peer.stand_in_address(),
        };
        let slot = match limits.admit(address) {
            Ok(slot) => slot,
            Err(refusal) => {
                tracing::debug!(%address, ?refusal, "refusing a connection past the connection limits");
                let response = refusal.response();
                let _ = match &accepted {
                    Accepted::Tcp(stream, _) => stream.try_write(response.as_bytes()),
                    #[cfg(unix)]
                    Accepted::Unix(stream, _) => stream.try_write(response.as_bytes()),
                };
                continue;
            }
        };
        let endpoint = endpoint.clone();
        match accepted {
            Accepted::Tcp(stream, _) => {
                // Small messages go out at once instead of waiting for more to fill a packet.
                let _ = stream.set_nodelay(true);
                connections.spawn(async move {
                    let _slot = slot;
                    endpoint.serve_connection(stream, address, None).await;
                });
            }
            #[cfg(unix)]
            Accepted::Unix(stream, peer) => {
                let allowed = allowed_uids.as_ref().is_none_or(|uids| uids.contains(&peer.uid));
                if !allowed {
                    tracing::warn!(uid = peer.uid, pid = ?peer.pid, "refusing a Unix socket peer whose uid is not allowed");
                }
                let peer = UnixPeerInfo { uid: peer.uid, allowed, principal: peer.principal() };
                connections.spawn(async move {
                    let _slot = slot;
                    endpoint.serve_connection(stream, address, Some(peer)).await;
                });
            }
        }
    }
    listener.remove_socket_file();
    drop(listener);
    tracing::info!(connections = connections.len(), "shutting down: answering the requests in flight");
    endpoint.service.close_streams();
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
