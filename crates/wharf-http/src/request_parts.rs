//! What middleware may read of the HTTP request that carried an MCP request.

use http::{Extensions, HeaderMap};
use wharf_server::contract::McpRequest;

/// The headers and extensions of the HTTP request that carried an MCP request, kept for
/// middleware only when some layer reads them
/// ([`Layer::reads_transport_data`](wharf_server::Layer::reads_transport_data)). Read them
/// with [`HttpRequest`].
#[derive(Debug, Default, Clone)]
pub struct HttpParts {
    pub(crate) headers: HeaderMap,
    pub(crate) extensions: Extensions,
}

impl HttpParts {
    /// The request's headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The request's extensions: what tower layers in front of
    /// [`McpService`](crate::McpService) inserted.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }
}

/// What middleware reads of the HTTP request that carried an [`McpRequest`].
pub trait HttpRequest {
    /// The headers of the HTTP request that carried this request; `None` on other transports.
    fn http_headers(&self) -> Option<&HeaderMap>;

    /// The extensions of the HTTP request that carried this request (what tower layers in
    /// front of [`McpService`](crate::McpService) inserted); `None` on other transports.
    fn http_extensions(&self) -> Option<&Extensions>;
}

impl HttpRequest for McpRequest<'_> {
    fn http_headers(&self) -> Option<&HeaderMap> {
        self.transport_data::<HttpParts>().map(HttpParts::headers)
    }

    fn http_extensions(&self) -> Option<&Extensions> {
        self.transport_data::<HttpParts>().map(HttpParts::extensions)
    }
}
