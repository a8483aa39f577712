//! The HTTP connector clients use: plain TCP for `http://`, and rustls with the system's root
//! certificates for `https://` with the `tls` feature; connecting bounded in time.

use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;

use crate::error::ClientError;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(feature = "tls")]
pub(crate) type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "tls"))]
pub(crate) type Connector = HttpConnector;

#[cfg(feature = "tls")]
pub(crate) fn connector() -> Result<Connector, ClientError> {
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

#[cfg(not(feature = "tls"))]
pub(crate) fn connector() -> Result<Connector, ClientError> {
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    http.set_nodelay(true);
    Ok(http)
}
