//! HTTP for OAuth, through the fetcher the resource server shares (`wharf-oauth`): GETs of
//! metadata documents, form and JSON POSTs to the authorization server, and the authorization
//! request read without following its redirect; bounded in time and size, and only to `https`
//! or loopback `http` URLs.

use std::time::Duration;

use http::header::AUTHORIZATION;
use serde_json::Value;
pub(crate) use wharf_oauth::Fetched;

use crate::oauth::form;
use crate::transport::connector::{Connector, connector};

/// How long one exchange may take.
const TIMEOUT: Duration = Duration::from_secs(15);

/// The fetcher the resource server shares (`wharf-oauth`), over the client's connector.
#[derive(Clone, Debug)]
pub(crate) struct Fetcher(wharf_oauth::Fetcher<Connector>);

impl Fetcher {
    pub(crate) fn new() -> Result<Fetcher, String> {
        let connector = connector().map_err(|err| err.to_string())?;
        Ok(Fetcher(wharf_oauth::Fetcher::new(connector).timeout(TIMEOUT)))
    }

    /// GETs `url`, accepting JSON.
    pub(crate) async fn get(&self, url: &str) -> Result<Fetched, String> {
        self.0.get(url).await.map_err(|err| err.to_string())
    }

    /// POSTs the form `pairs`, with `headers` (client authentication, DPoP).
    pub(crate) async fn post_form(
        &self,
        url: &str,
        pairs: &[(&str, &str)],
        headers: &[(&str, String)],
    ) -> Result<Fetched, String> {
        self.0.post_form(url, form::form(pairs), headers).await.map_err(|err| err.to_string())
    }

    /// POSTs a JSON document.
    pub(crate) async fn post_json(&self, url: &str, document: &Value) -> Result<Fetched, String> {
        self.0.post_json(url, document).await.map_err(|err| err.to_string())
    }

    /// GETs the authorization URL and returns where it redirects, without going there.
    pub(crate) async fn redirect_target(&self, url: &str) -> Result<String, String> {
        self.0.redirect_target(url).await.map_err(|err| err.to_string())
    }
}

/// `Authorization: Basic` for a client id and secret, each form-encoded first (RFC 6749 §2.3.1).
pub(crate) fn basic_authorization(client_id: &str, secret: &str) -> (&'static str, String) {
    use base64::Engine;
    let pair = format!("{}:{}", form::encode(client_id), form::encode(secret));
    (AUTHORIZATION.as_str(), format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
}
