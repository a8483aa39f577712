//! OAuth metadata for both sides of Wharf: the resource server (`wharf-auth`) and the client
//! (`wharf-client`) find and read an issuer's metadata the same way.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. `url.rs`: [`UrlParts`] (an `http(s)` URL's scheme, authority and path, as written) and
//!    [`is_secure_enough`] (`https`, or `http` to a loopback host).
//! 2. `discovery.rs`: where metadata is, in the order the MCP authorization specification
//!    gives ([`authorization_server_metadata_urls`], [`protected_resource_metadata_urls`]),
//!    [`names_server`] (a resource identifier that covers a server's URL) and
//!    [`check_issuer`] (a document is used only for the issuer it names exactly).
//! 3. `fetch.rs`: [`Fetcher`], GETs and POSTs over any hyper connector, only to URLs that are
//!    secure enough, bounded in time and size; [`FetchError`] says which of those failed.

mod url;

mod discovery;

mod fetch;

pub use discovery::{
    PROTECTED_RESOURCE_WELL_KNOWN, authorization_server_metadata_urls, check_issuer, names_server,
    protected_resource_metadata_urls,
};
pub use fetch::{FetchError, FetchErrorKind, Fetched, Fetcher};
pub use url::{UrlParts, is_secure_enough};
