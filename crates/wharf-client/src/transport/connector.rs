//! The HTTP connector clients use: plain TCP for `http://`, and rustls with the system's root
//! certificates for `https://` with the `tls` feature; connecting bounded in time.

use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;

use crate::error::ClientError;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The connector: rustls over TCP with the `tls` feature, plain TCP without.
#[cfg(feature = "tls")]
pub type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
/// The connector: rustls over TCP with the `tls` feature, plain TCP without.
#[cfg(not(feature = "tls"))]
pub type Connector = HttpConnector;

/// A connector for `http://` and `https://` URLs, with the system's root certificates.
///
/// # Errors
/// When the system has no root certificates.
#[cfg(feature = "tls")]
pub fn connector() -> Result<Connector, ClientError> {
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

/// A connector for `http://` URLs.
///
/// # Errors
/// Never without the `tls` feature; the signature is the same with it.
#[cfg(not(feature = "tls"))]
pub fn connector() -> Result<Connector, ClientError> {
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    http.set_nodelay(true);
    Ok(http)
}
