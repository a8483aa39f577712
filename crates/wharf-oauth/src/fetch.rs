//! HTTP for OAuth: GETs of metadata documents and keys, form and JSON POSTs to an
//! authorization server, and an authorization request read without following its redirect;
//! only to URLs that are secure enough, bounded in time and size. Errors name the URL, never
//! what was sent.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::Connect;
use hyper_util::rt::TokioExecutor;
use serde_json::{Map, Value};

use crate::url::is_secure_enough;

/// The largest document read, by default.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// How long one exchange may take, connecting included, by default.
const TIMEOUT: Duration = Duration::from_secs(10);

/// What went wrong, as a caller may tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FetchErrorKind {
    /// The URL is neither `https` nor `http` to a loopback host, or not a URL at all.
    NotSecure,
    /// No connection, or the exchange failed.
    Unreachable,
    /// No whole answer within the time allowed.
    TimedOut,
    /// The answer's body was larger than allowed, or could not be read.
    Body,
    /// The answer's status was not the one expected (see [`FetchError::status`]).
    Status,
    /// The answer was not a JSON object.
    NotJson,
}

/// Why an exchange failed: its kind, the URL, and a reason to show a person.
#[derive(Debug, Clone)]
pub struct FetchError {
    kind: FetchErrorKind,
    url: String,
    status: Option<u16>,
    reason: String,
}

impl FetchError {
    fn new(kind: FetchErrorKind, url: &str, reason: impl fmt::Display) -> FetchError {
        FetchError { kind, url: url.to_owned(), status: None, reason: reason.to_string() }
    }

    /// What went wrong.
    pub fn kind(&self) -> FetchErrorKind {
        self.kind
    }

    /// The URL of the exchange.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The status the answer had, for [`FetchErrorKind::Status`].
    pub fn status(&self) -> Option<u16> {
        self.status
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.url, self.reason)
    }
}

impl std::error::Error for FetchError {}

/// An answer, read whole.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
}

impl Fetched {
    /// The body as a JSON object, if it is one.
    pub fn json(&self) -> Option<Map<String, Value>> {
        match serde_json::from_slice(&self.body) {
            Ok(Value::Object(object)) => Some(object),
            _ => None,
        }
    }

    /// True for a 2xx status.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// GETs and POSTs for OAuth over the connector `C` (plain TCP, or TLS with the system's roots:
/// the caller chooses), only to URLs that are secure enough, bounded in time and size.
#[derive(Clone)]
pub struct Fetcher<C> {
    client: Client<C, Full<Bytes>>,
    timeout: Duration,
    max_document_bytes: usize,
}

impl<C> fmt::Debug for Fetcher<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fetcher")
            .field("timeout", &self.timeout)
            .field("max_document_bytes", &self.max_document_bytes)
            .finish_non_exhaustive()
    }
}

impl<C: Connect + Clone + Send + Sync + 'static> Fetcher<C> {
    /// A fetcher over `connector`: 10 seconds per exchange, documents up to 1 MiB.
    pub fn new(connector: C) -> Fetcher<C> {
        Fetcher {
            client: Client::builder(TokioExecutor::new()).build(connector),
            timeout: TIMEOUT,
            max_document_bytes: MAX_DOCUMENT_BYTES,
        }
    }

    /// How long one exchange may take, connecting included.
    pub fn timeout(mut self, timeout: Duration) -> Fetcher<C> {
        self.timeout = timeout;
        self
    }

    /// The largest body read.
    pub fn max_document_bytes(mut self, bytes: usize) -> Fetcher<C> {
        self.max_document_bytes = bytes;
        self
    }

    /// GETs `url`, accepting JSON.
    pub async fn get(&self, url: &str) -> Result<Fetched, FetchError> {
        let request = Request::builder().method(Method::GET).uri(url).header(ACCEPT, "application/json");
        self.send(url, request, Bytes::new()).await
    }

    /// The JSON object at `url`, which must answer 2xx.
    pub async fn get_json_object(&self, url: &str) -> Result<Map<String, Value>, FetchError> {
        let fetched = self.get(url).await?;
        json_object_of(url, &fetched)
    }

    /// POSTs the form-encoded `body` with `headers` (client authentication, DPoP).
    pub async fn post_form(&self, url: &str, body: String, headers: &[(&str, String)]) -> Result<Fetched, FetchError> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(url)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        self.send(url, request, Bytes::from(body)).await
    }

    /// POSTs the form-encoded `body` with `headers`; the JSON object of a 2xx answer.
    pub async fn post_form_for_json(
        &self,
        url: &str,
        body: String,
        headers: &[(&str, String)],
    ) -> Result<Map<String, Value>, FetchError> {
        let fetched = self.post_form(url, body, headers).await?;
        json_object_of(url, &fetched)
    }

    /// POSTs a JSON document.
    pub async fn post_json(&self, url: &str, document: &Value) -> Result<Fetched, FetchError> {
        let request = Request::builder()
            .method(Method::POST)
            .uri(url)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json");
        self.send(url, request, Bytes::from(document.to_string())).await
    }

    /// GETs `url` and returns where it redirects, without going there.
    pub async fn redirect_target(&self, url: &str) -> Result<String, FetchError> {
        let fetched = self.send(url, Request::builder().method(Method::GET).uri(url), Bytes::new()).await?;
        if !(300..400).contains(&fetched.status) {
            let mut error = FetchError::new(
                FetchErrorKind::Status,
                url,
                format_args!("answered {} instead of a redirect", fetched.status),
            );
            error.status = Some(fetched.status);
            return Err(error);
        }
        fetched
            .headers
            .get(LOCATION)
            .and_then(|location| location.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| FetchError::new(FetchErrorKind::Status, url, "its redirect has no Location"))
    }

    async fn send(&self, url: &str, request: http::request::Builder, body: Bytes) -> Result<Fetched, FetchError> {
        if !is_secure_enough(url) {
            return Err(FetchError::new(FetchErrorKind::NotSecure, url, "neither https nor a loopback address"));
        }
        let request =
            request.body(Full::new(body)).map_err(|err| FetchError::new(FetchErrorKind::NotSecure, url, err))?;
        tokio::time::timeout(self.timeout, async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|err| FetchError::new(FetchErrorKind::Unreachable, url, err))?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = Limited::new(response.into_body(), self.max_document_bytes)
                .collect()
                .await
                .map_err(|err| FetchError::new(FetchErrorKind::Body, url, err))?
                .to_bytes();
            Ok(Fetched { status, headers, body })
        })
        .await
        .map_err(|_| {
            FetchError::new(FetchErrorKind::TimedOut, url, format_args!("no answer within {:?}", self.timeout))
        })?
    }
}

/// The JSON object of a 2xx answer from `url`.
fn json_object_of(url: &str, fetched: &Fetched) -> Result<Map<String, Value>, FetchError> {
    if !fetched.is_success() {
        let mut error = FetchError::new(FetchErrorKind::Status, url, format_args!("answered {}", fetched.status));
        error.status = Some(fetched.status);
        return Err(error);
    }
    fetched.json().ok_or_else(|| FetchError::new(FetchErrorKind::NotJson, url, "not a JSON object"))
}

#[cfg(test)]
mod tests {
    use hyper_util::client::legacy::connect::HttpConnector;

    use super::*;

    #[tokio::test]
    async fn only_secure_enough_urls_are_reached_and_answers_are_bounded() {
        let fetcher = Fetcher::new(HttpConnector::new()).max_document_bytes(16);
        let refused = fetcher.get("http://id.example.com/x").await.unwrap_err();
        assert_eq!(refused.kind(), FetchErrorKind::NotSecure);
        assert!(refused.to_string().starts_with("http://id.example.com/x: "), "{refused}");

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            for body in [r#"{"issuer":"x"}"#, "[1,2]", r#"{"a":"far longer than sixteen bytes"}"#] {
                let (mut socket, _) = listener.accept().await.unwrap();
                let mut head = [0u8; 1024];
                let _ = socket.read(&mut head).await.unwrap();
                let answer =
                    format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
                socket.write_all(answer.as_bytes()).await.unwrap();
            }
        });
        let url = format!("http://127.0.0.1:{port}/doc");
        assert_eq!(fetcher.get_json_object(&url).await.unwrap()["issuer"], "x");
        assert_eq!(fetcher.get_json_object(&url).await.unwrap_err().kind(), FetchErrorKind::NotJson);
        assert_eq!(fetcher.get_json_object(&url).await.unwrap_err().kind(), FetchErrorKind::Body);
    }
}
