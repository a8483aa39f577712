//! An OAuth 2.1 resource server for Wharf's HTTP transport: the protected resource metadata
//! (RFC 9728), bearer tokens from the `Authorization` header only (RFC 6750), JWT access tokens
//! (RFC 9068) verified against the issuer's keys, or opaque ones by introspection (RFC 7662),
//! bound to this resource (RFC 8707), and the [`Principal`](wharf_server::Principal) each token
//! stands for, with its scopes.
//!
//! `COMPLIANCE.md`, beside this crate's manifest, takes the specification requirement by
//! requirement, with the test that shows each.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. `error.rs` ([`ConfigError`]), `jwk.rs` (public JSON Web Keys and key sets, RFC 7517).
//! 2. `bearer.rs` (the one `Authorization: Bearer` header; the query string is never read),
//!    `resource.rs` ([`ResourceUrl`]: the canonical resource identifier, the metadata paths of
//!    RFC 9728 §3.1, the document), `fetch.rs` (JSON from the issuer through `wharf-oauth`'s
//!    fetcher: HTTPS, or HTTP to loopback, bounded in time and size; errors name the URL,
//!    never what was sent), `jws.rs` (compact JWS: the parts, and the signature checked by
//!    ring under the asymmetric algorithm allowlist with a JWK of the algorithm's type).
//! 3. `claims.rs` (issuer, audience bound to the resource URL, `exp`/`nbf`/`iat` with leeway,
//!    `scope`/`scp` into a principal), `jwt.rs` (`typ`, an asymmetric algorithm allowlist, the
//!    key named by `kid` in the issuer's set only, the signature), `discovery.rs` (the
//!    issuer's metadata, in `wharf-oauth`'s order, with the issuer check), `cache.rs`
//!    (verified tokens by SHA-256 until their expiry or a bound).
//! 4. `keys.rs` (the issuer's keys, fetched once and again for an unknown `kid` at most once
//!    per interval), `dpop.rs` (DPoP proofs, RFC 9449 §4.3, checked step by step; the key's
//!    RFC 7638 thumbprint; [`ProofReplayCache`], where each proof's `jti` is kept so that it is
//!    used once).
//! 5. `verifier.rs` ([`TokenVerifier`], whose `check` fetches ahead what verifying needs, and
//!    [`JwtVerifier`]).
//! 6. `introspection.rs` ([`IntrospectionVerifier`]: opaque tokens asked about at the issuer's
//!    RFC 7662 endpoint with the server's own client credentials, the answer checked like a
//!    JWT's claims).
//! 7. `resource_server.rs` ([`ResourceServer`], a `wharf_http::Authenticator`;
//!    `check_issuer`, for a server that will not start without its issuer).

mod bearer;
mod cache;
mod claims;
mod discovery;
mod dpop;
mod error;
mod fetch;
mod introspection;
mod jwk;
mod jws;
mod jwt;
mod keys;
mod resource;
mod resource_server;
mod verifier;

pub use dpop::{MemoryReplayCache, ProofReplayCache, ReplayFuture};
pub use error::{ConfigError, ConfigErrorKind};
pub use introspection::IntrospectionVerifier;
pub use resource::ResourceUrl;
pub use resource_server::{DpopMode, ResourceServer, ResourceServerBuilder};
pub use verifier::{CheckFuture, JwtVerifier, TokenVerifier, VerifyFuture};
