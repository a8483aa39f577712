//! The authorizer of a program on the user's own machine (RFC 8252): it listens on a loopback
//! port, has the user's browser visit the authorization URL, and takes the redirect back on
//! that port. Each connection to the port is served on its own task: any local process can
//! connect, and one that sends nothing must not hold the browser's back.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::oauth::config::Authorizer;
use crate::transport::BoxFuture;

/// The path the authorization server redirects to.
const CALLBACK_PATH: &str = "/callback";

/// The longest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;

/// How long one browser connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The pause after a failed accept (out of file descriptors, say) before the next.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

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

    /// The first request to the callback that carries `state` (the one this login sent); any
    /// other request is answered and waited past. Each connection is read on a task of its
    /// own, all of them ended when the callback comes.
    async fn await_redirect(&self, state: Option<&str>) -> Result<String, String> {
        let listener = self.listener.try_clone().and_then(TcpListener::from_std).map_err(|err| err.to_string())?;
        let (found, mut callbacks) = mpsc::channel::<String>(1);
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                Some(target) = callbacks.recv() => {
                    return Ok(format!("{}{}", self.redirect_uri.trim_end_matches(CALLBACK_PATH), target));
                }
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let (found, state) = (found.clone(), state.map(str::to_owned));
                        connections.spawn(async move {
                            if let Some(target) = answer_browser(stream, state.as_deref()).await {
                                let _ = found.send(target).await;
                            }
                        });
                    }
                    Err(err) => {
                        tracing::debug!(target: "wharf_client", "the login's loopback port: {err}");
                        tokio::time::sleep(ACCEPT_RETRY).await;
                    }
                },
            }
            while connections.try_join_next().is_some() {}
        }
    }
}

impl Authorizer for LoopbackAuthorizer {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, String>> {
        Box::pin(async move {
            let state = query_value(&url, "state").map(str::to_owned);
            (self.opener)(&url)?;
            match tokio::time::timeout(self.wait, self.await_redirect(state.as_deref())).await {
                Ok(redirected) => redirected,
                Err(_) => Err(format!("no authorization within {:?}", self.wait)),
            }
        })
    }
}

/// The value of `name` in `url`'s query, as written.
fn query_value<'a>(url: &'a str, name: &str) -> Option<&'a str> {
    let query = url.split_once('?')?.1.split('#').next()?;
    query.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
}

/// Reads one request from the browser; the path and query of a request to the callback with
/// this login's `state`, which is answered with a page saying the window may be closed.
/// Anything else gets a 404, or a 400 for a callback of another login.
async fn answer_browser(mut stream: TcpStream, state: Option<&str>) -> Option<String> {
    let head = tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream)).await.ok().flatten()?;
    let target = head.strip_prefix("GET ").and_then(|rest| rest.split(' ').next()).unwrap_or_default();
    let to_callback = target.split('?').next() == Some(CALLBACK_PATH);
    let is_callback = to_callback && (state.is_none() || query_value(target, "state") == state);
    let (status, page) = if !to_callback {
        ("404 Not Found", "Not found.")
    } else if !is_callback {
        ("400 Bad Request", "This is not the answer to the login under way.")
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

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// Sends `target` to the authorizer as a browser would, and returns the status line.
    fn visit(port: u16, target: &str) -> String {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(stream, "GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.lines().next().unwrap_or_default().to_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn only_the_callback_of_this_login_ends_it() {
        let (statuses, seen) = std::sync::mpsc::channel();
        let bound = Arc::new(std::sync::atomic::AtomicU16::new(0));
        let port_for_browser = bound.clone();
        let opener: Opener = Arc::new(move |url: &str| {
            assert!(url.contains("state=expected"));
            let statuses = statuses.clone();
            let port = port_for_browser.load(std::sync::atomic::Ordering::SeqCst);
            std::thread::spawn(move || {
                for target in
                    ["/favicon.ico", "/callback?code=forged&state=other", "/callback?code=real&state=expected"]
                {
                    let _ = statuses.send(visit(port, target));
                }
            });
            Ok(())
        });
        let authorizer = LoopbackAuthorizer::bind(opener, Duration::from_secs(10)).unwrap();
        let port = authorizer.listener.local_addr().unwrap().port();
        bound.store(port, std::sync::atomic::Ordering::SeqCst);
        let redirected = authorizer.authorize("https://as.example/authorize?client_id=c&state=expected".to_owned());
        let redirected = redirected.await.unwrap();
        assert_eq!(redirected, format!("http://127.0.0.1:{port}/callback?code=real&state=expected"));
        let statuses: Vec<String> = seen.iter().take(3).collect();
        assert!(
            statuses[0].contains("404") && statuses[1].contains("400") && statuses[2].contains("200"),
            "{statuses:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_connection_that_sends_nothing_does_not_hold_the_callback_back() {
        let (seen, heard) = std::sync::mpsc::channel();
        let bound = Arc::new(std::sync::atomic::AtomicU16::new(0));
        let port_for_browser = bound.clone();
        let opener: Opener = Arc::new(move |_url: &str| {
            let (seen, port) = (seen.clone(), port_for_browser.load(std::sync::atomic::Ordering::SeqCst));
            std::thread::spawn(move || {
                let _silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                let held = std::time::Instant::now();
                let status = visit(port, "/callback?code=real&state=expected");
                let _ = seen.send((status, held.elapsed()));
            });
            Ok(())
        });
        let authorizer = LoopbackAuthorizer::bind(opener, Duration::from_secs(30)).unwrap();
        bound.store(authorizer.listener.local_addr().unwrap().port(), std::sync::atomic::Ordering::SeqCst);
        let redirected = authorizer.authorize("https://as.example/authorize?state=expected".to_owned()).await;
        assert!(redirected.unwrap().ends_with("/callback?code=real&state=expected"));
        // Served before the silent connection's read deadline, which it did not wait for.
        let (status, took) = heard.recv().unwrap();
        assert!(status.contains("200") && took < READ_TIMEOUT, "{status} after {took:?}");
    }
}
