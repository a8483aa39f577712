//! HTTP for OAuth: GETs of metadata documents, form and JSON POSTs to the authorization
//! server, and the authorization request read without following its redirect; bounded in time
//! and size, and only to `https` or loopback `http` URLs.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION};
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use crate::oauth::form;
use crate::transport::connector::{Connector, connector};

/// The largest document read.
const MAX_DOCUMENT: usize = 1024 * 1024;

/// How long one exchange may take.
const TIMEOUT: Duration = Duration::from_secs(15);

/// An answer, read whole.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Fetched {
    /// The body as a JSON object, if it is one.
    pub(crate) fn json(&self) -> Option<serde_json::Map<String, Value>> {
        match serde_json::from_slice(&self.body) {
            Ok(Value::Object(object)) => Some(object),
            _ => None,
        }
    }

    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

#[derive(Clone)]
pub(crate) struct Fetcher {
    client: Client<Connector, Full<Bytes>>,
}

impl Fetcher {
    pub(crate) fn new() -> Result<Fetcher, String> {
        let connector = connector().map_err(|err| err.to_string())?;
        Ok(Fetcher { client: Client::builder(TokioExecutor::new()).build(connector) })
    }

    /// GETs `url`, accepting JSON.
    pub(crate) async fn get(&self, url: &str) -> Result<Fetched, String> {
        let request = Request::builder().method(Method::GET).uri(url).header(ACCEPT, "application/json");
        self.send(url, request, Bytes::new()).await
    }

    /// POSTs the form `pairs`, with `headers` (client authentication, DPoP).
    pub(crate) async fn post_form(
        &self,
        url: &str,
        pairs: &[(&str, &str)],
        headers: &[(&str, String)],
    ) -> Result<Fetched, String> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(url)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        self.send(url, request, Bytes::from(form::form(pairs))).await
    }

    /// POSTs a JSON document.
    pub(crate) async fn post_json(&self, url: &str, document: &Value) -> Result<Fetched, String> {
        let request = Request::builder()
            .method(Method::POST)
            .uri(url)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json");
        self.send(url, request, Bytes::from(document.to_string())).await
    }

    /// GETs the authorization URL and returns where it redirects, without going there.
    pub(crate) async fn redirect_target(&self, url: &str) -> Result<String, String> {
        let fetched = self.send(url, Request::builder().method(Method::GET).uri(url), Bytes::new()).await?;
        if !(300..400).contains(&fetched.status) {
            return Err(format!("the authorization endpoint answered {} instead of a redirect", fetched.status));
        }
        fetched
            .headers
            .get(LOCATION)
            .and_then(|location| location.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| "the authorization endpoint's redirect has no Location".to_owned())
    }

    async fn send(&self, url: &str, request: http::request::Builder, body: Bytes) -> Result<Fetched, String> {
        if !form::is_secure_enough(url) {
            return Err(format!("`{url}` is neither https nor a loopback http URL"));
        }
        let request = request.body(Full::new(body)).map_err(|err| format!("{url}: {err}"))?;
        tokio::time::timeout(TIMEOUT, async {
            let response = self.client.request(request).await.map_err(|err| format!("{url}: {err}"))?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = Limited::new(response.into_body(), MAX_DOCUMENT)
                .collect()
                .await
                .map_err(|err| format!("{url}: {err}"))?
                .to_bytes();
            Ok(Fetched { status, headers, body })
        })
        .await
        .map_err(|_| format!("{url} did not answer within {TIMEOUT:?}"))?
    }
}

/// `Authorization: Basic` for a client id and secret, each form-encoded first (RFC 6749 §2.3.1).
pub(crate) fn basic_authorization(client_id: &str, secret: &str) -> (&'static str, String) {
    use base64::Engine;
    let pair = format!("{}:{}", form::encode(client_id), form::encode(secret));
    (AUTHORIZATION.as_str(), format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
}
