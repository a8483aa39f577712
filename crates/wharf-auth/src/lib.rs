//! An OAuth 2.1 resource server for Wharf's HTTP transport: the protected resource metadata
//! (RFC 9728), bearer tokens from the `Authorization` header only (RFC 6750), JWT access tokens
//! (RFC 9068) verified against the issuer's keys, or opaque ones by introspection (RFC 7662),
//! bound to this resource (RFC 8707), and the [`Principal`](wharf_server::Principal) each token
//! stands for, with its scopes.
//!
//! Floors, from the bottom: `error.rs`; `bearer.rs` (the token of a request), `resource.rs`
//! (the resource URL, where its metadata lives, the document), `fetch.rs` (JSON from the
//! issuer); `claims.rs` (issuer, audience, time, scopes), `jwt.rs` (header, key,
//! signature), `discovery.rs` (the issuer's metadata), `cache.rs` (verified tokens by hash);
//! `keys.rs` (the issuer's keys, refetched for an unknown `kid`); `verifier.rs`
//! (`TokenVerifier`, `JwtVerifier`); `introspection.rs` (`IntrospectionVerifier`, RFC 7662);
//! `resource_server.rs` (`ResourceServer`, the `wharf_http::Authenticator`).

mod bearer;
mod cache;
mod claims;
mod discovery;
mod error;
mod fetch;
mod introspection;
mod jwt;
mod keys;
mod resource;
mod resource_server;
mod verifier;

pub use error::{ConfigError, ConfigErrorKind};
pub use introspection::IntrospectionVerifier;
pub use resource::ResourceUrl;
pub use resource_server::{ResourceServer, ResourceServerBuilder};
pub use verifier::{CheckFuture, JwtVerifier, TokenVerifier, VerifyFuture};
