//! The authorizer of a program on the user's own machine (RFC 8252): it listens on a loopback
//! port, has the user's browser visit the authorization URL, and takes the redirect back on
//! that port.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::oauth::config::Authorizer;
use crate::transport::BoxFuture;

/// The path the authorization server redirects to.
const CALLBACK_PATH: &str = "/callback";

/// The longest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;

/// How long one browser connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What is done with the authorization URL: open a browser, print it, or both.
pub type Opener = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// Listens on `127.0.0.1` for the authorization server's redirect, and has the user visit the
/// authorization URL through an [`Opener`].
pub struct LoopbackAuthorizer {
    listener: std::net::TcpListener,
    redirect_uri: String,
    opener: Opener,
    wait: Duration,
}

impl std::fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackAuthorizer").field("redirect_uri", &self.redirect_uri).finish_non_exhaustive()
    }
}

impl LoopbackAuthorizer {
    /// Binds a free loopback port now, so that the redirect URI is known before the flow
    /// starts; `opener` takes the user to the authorization URL; the user has `wait` to
    /// finish.
    pub fn bind(opener: Opener, wait: Duration) -> std::io::Result<LoopbackAuthorizer> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let redirect_uri = format!("http://127.0.0.1:{}{CALLBACK_PATH}", listener.local_addr()?.port());
        Ok(LoopbackAuthorizer { listener, redirect_uri, opener, wait })
    }

    async fn await_redirect(&self) -> Result<String, String> {
        let listener = self.listener.try_clone().and_then(TcpListener::from_std).map_err(|err| err.to_string())?;
        loop {
            let (stream, _) = listener.accept().await.map_err(|err| err.to_string())?;
            if let Some(target) = answer_browser(stream).await {
                return Ok(format!("{}{}", self.redirect_uri.trim_end_matches(CALLBACK_PATH), target));
            }
        }
    }
}

impl Authorizer for LoopbackAuthorizer {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, String>> {
        Box::pin(async move {
            (self.opener)(&url)?;
            match tokio::time::timeout(self.wait, self.await_redirect()).await {
                Ok(redirected) => redirected,
                Err(_) => Err(format!("no authorization within {:?}", self.wait)),
            }
        })
    }
}

/// Reads one request from the browser; the path and query of a request to the callback, which
/// is answered with a page saying the window may be closed. Anything else gets a 404.
async fn answer_browser(mut stream: TcpStream) -> Option<String> {
    let head = tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream)).await.ok().flatten()?;
    let target = head.strip_prefix("GET ").and_then(|rest| rest.split(' ').next()).unwrap_or_default();
    let is_callback = target.split('?').next() == Some(CALLBACK_PATH);
    let (status, page) = if !is_callback {
        ("404 Not Found", "Not found.")
    } else if target.contains("error=") {
        ("200 OK", "Authorization was refused. You may close this window.")
    } else {
        ("200 OK", "Authorized. You may close this window and return to the terminal.")
    };
    let body = format!("<!doctype html><title>wharf</title><p>{page}</p>\n");
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    is_callback.then(|| target.to_owned())
}

/// The request line and headers, up to the blank line; `None` for anything longer or not text.
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 || head.len() + read > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&chunk[..read]);
    }
    String::from_utf8(head).ok()
}
