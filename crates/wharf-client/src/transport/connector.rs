//! The HTTP connector clients use: plain TCP for `http://`, rustls with the system's root
//! certificates for `https://` with the `tls` feature, or a Unix socket whatever the URL names
//! (`unix:PATH` targets); connecting bounded in time.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use tower_service::Service;

use crate::error::ClientError;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(feature = "tls")]
type TcpConnector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "tls"))]
type TcpConnector = HttpConnector;

type TcpStream = <TcpConnector as Service<Uri>>::Response;

/// Opens connections for the client: TCP (with TLS for `https://` with the `tls` feature),
/// or, when made with [`Connector::unix`], the Unix socket at its path for every URL.
#[derive(Clone, Debug)]
pub struct Connector {
    tcp: TcpConnector,
    unix: Option<Arc<Path>>,
}

/// A connection a [`Connector`] opened.
#[derive(Debug)]
pub enum Stream {
    /// Over TCP (boxed: a TLS stream is a kilobyte).
    Tcp(Box<TcpStream>),
    /// Over a Unix socket.
    #[cfg(unix)]
    Unix(TokioIo<tokio::net::UnixStream>),
}

#[cfg(feature = "tls")]
fn tcp() -> Result<TcpConnector, ClientError> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    http.set_nodelay(true);
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_native_roots()
        .map_err(|err| ClientError::connect(format!("no root certificates: {err}")))?
        .https_or_http()
        .enable_http1()
        .wrap_connector(http))
}

#[cfg(not(feature = "tls"))]
fn tcp() -> Result<TcpConnector, ClientError> {
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    http.set_nodelay(true);
    Ok(http)
}

/// A connector for `http://` URLs, and `https://` ones with the `tls` feature (the system's
/// root certificates).
///
/// # Errors
/// With the `tls` feature, when the system has no root certificates.
pub fn connector() -> Result<Connector, ClientError> {
    Ok(Connector { tcp: tcp()?, unix: None })
}

impl Connector {
    /// A connector that opens the Unix socket at `path` for every URL.
    ///
    /// # Errors
    /// With the `tls` feature, when the system has no root certificates.
    #[cfg(unix)]
    pub fn unix(path: impl Into<PathBuf>) -> Result<Connector, ClientError> {
        Ok(Connector { tcp: tcp()?, unix: Some(Arc::from(path.into())) })
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl Service<Uri> for Connector {
    type Response = Stream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Stream, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        match self.unix {
            Some(_) => Poll::Ready(Ok(())),
            None => self.tcp.poll_ready(cx).map_err(Into::into),
        }
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        match self.unix.clone() {
            #[cfg(unix)]
            Some(path) => Box::pin(async move {
                let connecting = tokio::net::UnixStream::connect(&*path);
                let stream = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
                    .await
                    .map_err(|_| format!("connecting to the Unix socket {} timed out", path.display()))?
                    .map_err(|err| format!("cannot connect to the Unix socket {}: {err}", path.display()))?;
                Ok(Stream::Unix(TokioIo::new(stream)))
            }),
            #[cfg(not(unix))]
            Some(_) => Box::pin(async { Err("Unix sockets need a Unix system".into()) }),
            None => {
                let connecting = self.tcp.call(uri);
                #[allow(clippy::useless_conversion, reason = "the error is boxed already with the `tls` feature only")]
                Box::pin(
                    async move { connecting.await.map(|stream| Stream::Tcp(Box::new(stream))).map_err(Into::into) },
                )
            }
        }
    }
}

impl Connection for Stream {
    fn connected(&self) -> Connected {
        match self {
            Stream::Tcp(stream) => stream.connected(),
            #[cfg(unix)]
            Stream::Unix(_) => Connected::new(),
        }
    }
}

impl Read for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: ReadBufCursor<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(stream) => Pin::new(&mut **stream).poll_read(cx, buf),
            #[cfg(unix)]
            Stream::Unix(stream) => Pin::new(stream).poll_read(cx, buf),
        }
    }
}

impl Write for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(stream) => Pin::new(&mut **stream).poll_write(cx, buf),
            #[cfg(unix)]
            Stream::Unix(stream) => Pin::new(stream).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(stream) => Pin::new(&mut **stream).poll_flush(cx),
            #[cfg(unix)]
            Stream::Unix(stream) => Pin::new(stream).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(stream) => Pin::new(&mut **stream).poll_shutdown(cx),
            #[cfg(unix)]
            Stream::Unix(stream) => Pin::new(stream).poll_shutdown(cx),
        }
    }
}
