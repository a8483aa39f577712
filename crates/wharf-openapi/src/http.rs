//! Sending a call's request and reading its answer, bounded in time and size: plain TCP for
//! `http://`, rustls with the system's root certificates for `https://` (the `tls` feature).

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::request::Prepared;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(feature = "tls")]
type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "tls"))]
type Connector = HttpConnector;

/// An API's answer.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    /// Its `Content-Type`, when it says one.
    pub(crate) content_type: Option<String>,
    pub(crate) body: Bytes,
}

/// The HTTP client calls are sent with.
#[derive(Clone, Debug)]
pub(crate) struct Http {
    client: Client<Connector, Full<Bytes>>,
}

impl Http {
    pub(crate) fn new() -> Result<Http, String> {
        let mut tcp = HttpConnector::new();
        tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
        tcp.set_nodelay(true);
        #[cfg(feature = "tls")]
        let connector = {
            tcp.enforce_http(false);
            hyper_rustls::HttpsConnectorBuilder::new()
                .with_native_roots()
                .map_err(|err| format!("no root certificates: {err}"))?
                .https_or_http()
                .enable_http1()
                .wrap_connector(tcp)
        };
        #[cfg(not(feature = "tls"))]
        let connector = tcp;
        Ok(Http { client: Client::builder(TokioExecutor::new()).build(connector) })
    }

    /// Sends `prepared`; its answer, or why there is none (unreachable, too slow, too large).
    pub(crate) async fn send(
        &self,
        prepared: &Prepared,
        timeout: Duration,
        max_bytes: usize,
    ) -> Result<Answer, String> {
        let mut request = http::Request::builder()
            .method(prepared.method.as_str())
            .uri(&prepared.url)
            .header(ACCEPT, "application/json, */*;q=0.5");
        for (name, value) in &prepared.headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("`{name}` is not a header name"))?;
            let value =
                HeaderValue::from_str(value).map_err(|_| format!("the header `{name}` has a value no header may"))?;
            request = request.header(name, value);
        }
        let body = match &prepared.body {
            Some((content_type, bytes)) => {
                request = request.header(CONTENT_TYPE, content_type.as_str());
                Bytes::from(bytes.clone())
            }
            None => Bytes::new(),
        };
        let request = request.body(Full::new(body)).map_err(|err| err.to_string())?;
        let exchange = async {
            let response =
                self.client.request(request).await.map_err(|err| format!("the API is unreachable: {err}"))?;
            let status = response.status().as_u16();
            let content_type =
                response.headers().get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).map(str::to_owned);
            let body = Limited::new(response.into_body(), max_bytes)
                .collect()
                .await
                .map_err(|err| format!("the API's answer could not be read (larger than {max_bytes} bytes?): {err}"))?
                .to_bytes();
            Ok(Answer { status, content_type, body })
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| format!("the API did not answer within {} s", timeout.as_secs_f64()))?
    }

    /// GETs the document at `url`, up to `max_bytes`; its text.
    pub(crate) async fn fetch(&self, url: &str, max_bytes: usize) -> Result<String, String> {
        let prepared = Prepared {
            method: "GET".to_owned(),
            url: url.to_owned(),
            path: String::new(),
            headers: Vec::new(),
            body: None,
        };
        let answer = self.send(&prepared, Duration::from_secs(30), max_bytes).await?;
        if !(200..300).contains(&answer.status) {
            return Err(format!("`{url}` answered {}", answer.status));
        }
        String::from_utf8(answer.body.to_vec()).map_err(|_| format!("`{url}` is not UTF-8 text"))
    }
}
