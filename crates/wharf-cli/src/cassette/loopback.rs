//! What `wharf record --url` and `wharf replay --http` serve is for this machine's clients only:
//! they listen on loopback addresses, and refuse a request whose `Host` or `Origin` names
//! another host (a web page reaching them by DNS rebinding), as `wharf serve` does by default.
//! Both serve HTTP/1.1 with [`serve`] until SIGINT or SIGTERM.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;

use http::header::{HOST, ORIGIN};
use http::{HeaderMap, Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

use crate::exit;

/// Serves `handle` on the loopback address `address` (named by `flag`) until SIGINT or SIGTERM,
/// after printing `banner(local address)` to stderr; `command` names the command in errors.
pub(crate) async fn serve<Handle, Answer, Reply>(
    address: &str,
    flag: &str,
    command: &str,
    banner: impl FnOnce(&str) -> String,
    handle: Handle,
) -> ExitCode
where
    Handle: Fn(Request<Incoming>) -> Answer + Clone + Send + 'static,
    Answer: Future<Output = Result<Response<Reply>, Infallible>> + Send + 'static,
    Reply: http_body::Body + Send + 'static,
    Reply::Data: Send,
    Reply::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = match loopback_address(address, flag).await {
        Ok(address) => match tokio::net::TcpListener::bind(address).await {
            Ok(listener) => listener,
            Err(err) => {
                eprintln!("{command}: cannot listen on {address}: {err}");
                return ExitCode::from(exit::USAGE);
            }
        },
        Err(why) => {
            eprintln!("{command}: {why}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let local = listener.local_addr().map_or_else(|_| address.to_owned(), |local| local.to_string());
    eprintln!("{}", banner(&local));
    let stop = wharf_demo::shutdown_signal(command.to_owned());
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            () = &mut stop => return ExitCode::SUCCESS,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else { continue };
        let handle = handle.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(handle);
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// The loopback address `address` (HOST:PORT) names, or why it cannot be listened on.
pub(crate) async fn loopback_address(address: &str, flag: &str) -> Result<SocketAddr, String> {
    let found: Vec<SocketAddr> = tokio::net::lookup_host(address)
        .await
        .map_err(|err| format!("{flag} {address}: {err}; name a loopback address, like 127.0.0.1:0"))?
        .collect();
    found.into_iter().find(|candidate| candidate.ip().is_loopback()).ok_or_else(|| {
        format!("{flag} {address} is not a loopback address: this listens for this machine's clients only")
    })
}

/// True when a request declares a body longer than `limit`: refused before a byte of it is read.
pub(crate) fn declares_more_than(headers: &HeaderMap, limit: usize) -> bool {
    headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|length| length.to_str().ok()?.parse::<u64>().ok())
        .is_some_and(|length| length > limit as u64)
}

fn is_loopback_name(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// `host[:port]` without its port.
fn without_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        authority.find(']').map_or(authority, |end| &authority[..=end])
    } else {
        authority.split(':').next().unwrap_or(authority)
    }
}

/// Why a request is refused, when its `Host` or `Origin` is not a loopback name.
pub(crate) fn refusal(headers: &HeaderMap) -> Option<&'static str> {
    let host = headers.get(HOST).and_then(|value| value.to_str().ok()).map(without_port);
    if !host.is_some_and(is_loopback_name) {
        return Some("Host is not a loopback name");
    }
    if let Some(origin) = headers.get(ORIGIN) {
        let host = origin
            .to_str()
            .ok()
            .and_then(|origin| origin.split_once("://"))
            .map(|(_, authority)| without_port(authority.trim_end_matches('/')));
        if !host.is_some_and(is_loopback_name) {
            return Some("Origin is not a loopback origin");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            headers.insert(ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    #[test]
    fn only_loopback_hosts_and_origins_pass() {
        assert_eq!(refusal(&headers("127.0.0.1:8080", None)), None);
        assert_eq!(refusal(&headers("[::1]:80", Some("http://localhost:3000"))), None);
        assert_eq!(refusal(&headers("localhost", Some("https://[::1]"))), None);
        assert!(refusal(&headers("evil.example:8080", None)).is_some());
        assert!(refusal(&headers("127.0.0.1:8080", Some("http://evil.example"))).is_some());
        assert!(refusal(&headers("127.0.0.1:8080", Some("null"))).is_some());
        assert!(refusal(&HeaderMap::new()).is_some());
    }
}
