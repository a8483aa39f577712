//! Talking to the issuer: a GET of its JSON documents (metadata, keys) or a form POST that
//! answers JSON (token introspection), over HTTPS, or HTTP for an issuer on a loopback
//! address, bounded in time and size. Errors name the URL, never what was sent.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// The largest document accepted.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// How long one fetch may take, connection included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// A client for the issuer's documents: HTTPS with the system's roots, or plain HTTP to a
/// loopback address (an issuer beside the server, as in tests).
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher").finish_non_exhaustive()
    }
}

/// Why a document could not be had.
pub(crate) type FetchError = String;

impl Fetcher {
    pub(crate) fn new() -> Result<Fetcher, FetchError> {
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_native_roots()
            .map_err(|err| format!("no root certificates: {err}"))?
            .https_or_http()
            .enable_http1()
            .build();
        Ok(Fetcher { client: Client::builder(TokioExecutor::new()).build(connector) })
    }

    /// The JSON object at `url`: `https`, or `http` only to a loopback host.
    pub(crate) async fn json(&self, url: &str) -> Result<Value, FetchError> {
        let request = http::Request::get(checked(url)?).header(http::header::ACCEPT, "application/json");
        self.send(url, request, Bytes::new()).await
    }

    /// The JSON object `url` answers to a POST of the form `body`, sent with `authorization`.
    pub(crate) async fn post_form(&self, url: &str, authorization: &str, body: String) -> Result<Value, FetchError> {
        let request = http::Request::post(checked(url)?)
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(http::header::AUTHORIZATION, authorization);
        self.send(url, request, Bytes::from(body)).await
    }

    async fn send(&self, url: &str, request: http::request::Builder, body: Bytes) -> Result<Value, FetchError> {
        let request = request.body(Full::new(body)).map_err(|err| format!("{url}: {err}"))?;
        let fetched = tokio::time::timeout(FETCH_TIMEOUT, async {
            let response = self.client.request(request).await.map_err(|err| format!("{url}: {err}"))?;
            if !response.status().is_success() {
                return Err(format!("{url} answered {}", response.status()));
            }
            let body = Limited::new(response.into_body(), MAX_DOCUMENT_BYTES);
            body.collect().await.map(|collected| collected.to_bytes()).map_err(|err| format!("{url}: {err}"))
        })
        .await
        .map_err(|_| format!("{url} did not answer within {FETCH_TIMEOUT:?}"))??;
        let value: Value = serde_json::from_slice(&fetched).map_err(|err| format!("{url} is not JSON: {err}"))?;
        if !value.is_object() {
            return Err(format!("{url} is not a JSON object"));
        }
        Ok(value)
    }
}

/// `url` as a URI, if it is `https`, or `http` to a loopback host.
fn checked(url: &str) -> Result<http::Uri, FetchError> {
    if !(url.starts_with("https://") || is_loopback_http(url)) {
        return Err(format!("{url} is neither https nor a loopback address"));
    }
    url.parse().map_err(|err| format!("{url}: {err}"))
}

/// True for `http://127.0.0.1…`, `http://[::1]…` and `http://localhost…`: the check the client
/// shares, which reads the host after any user information.
pub(crate) use wharf_protocol::is_loopback_http;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_only_for_loopback_issuers() {
        assert!(is_loopback_http("http://127.0.0.1:8080/.well-known/openid-configuration"));
        assert!(is_loopback_http("http://[::1]:9/x") && is_loopback_http("http://localhost/x"));
        assert!(!is_loopback_http("http://id.example.com/x") && !is_loopback_http("http://127.0.0.1.nip.io/x"));
        assert!(!is_loopback_http("https://127.0.0.1/x"), "https needs no exception");
        assert!(!is_loopback_http("http://localhost:1@other-host/"), "the host follows the user information");
    }
}
