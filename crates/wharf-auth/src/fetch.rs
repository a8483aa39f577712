//! Talking to the issuer: its JSON documents (metadata, keys) and token introspection, through
//! the fetcher the client shares (`wharf-oauth`: https, or http to a loopback issuer, bounded
//! in time and size), over TLS with the system's roots. Errors name the URL, never what was
//! sent.

use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::Value;

/// Why a document could not be had, for the log.
pub(crate) type FetchError = String;

/// A client for the issuer's documents.
#[derive(Clone, Debug)]
pub(crate) struct Fetcher(wharf_oauth::Fetcher<hyper_rustls::HttpsConnector<HttpConnector>>);

impl Fetcher {
    pub(crate) fn new() -> Result<Fetcher, FetchError> {
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_native_roots()
            .map_err(|err| format!("no root certificates: {err}"))?
            .https_or_http()
            .enable_http1()
            .build();
        Ok(Fetcher(wharf_oauth::Fetcher::new(connector)))
    }

    /// The JSON object at `url`.
    pub(crate) async fn json(&self, url: &str) -> Result<Value, FetchError> {
        self.0.get_json_object(url).await.map(Value::Object).map_err(|err| err.to_string())
    }

    /// The JSON object `url` answers to a POST of the form `body`, sent with `authorization`.
    pub(crate) async fn post_form(&self, url: &str, authorization: &str, body: String) -> Result<Value, FetchError> {
        let headers = [(http::header::AUTHORIZATION.as_str(), authorization.to_owned())];
        self.0.post_form_for_json(url, body, &headers).await.map(Value::Object).map_err(|err| err.to_string())
    }
}

/// True for `http://127.0.0.1…`, `http://[::1]…` and `http://localhost…`: the check the client
/// shares, which reads the host after any user information.
pub(crate) use wharf_protocol::is_loopback_http;
