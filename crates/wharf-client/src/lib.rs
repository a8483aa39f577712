//! An MCP client: talks to any Model Context Protocol server, over stdio (a process it starts)
//! or Streamable HTTP, in the era the server speaks: a 2025 session opened with `initialize`,
//! or 2026-07-28 stateless requests after `server/discover`.
//!
//! The wire types are `wharf-protocol`'s, the same the server uses. Features: `http`
//! (Streamable HTTP, on by default), `oauth` (authorization when a server asks for it) and
//! `tls` (`https://` URLs).
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own. `transport/` and `oauth/` (the `oauth`
//! feature) interleave: OAuth fetches through the HTTP connector, and HTTP authorizes.
//!
//! 1. **Leaves.** `error.rs` ([`ClientError`], opaque, with an [`ErrorKind`], the server's
//!    JSON-RPC error and HTTP status), `handler.rs` ([`ClientHandler`]: what answers the
//!    server's questions, elicitation, sampling and roots, each with a default that declines),
//!    `transport/sse.rs` (a server-sent events decoder fed chunks), `request_meta.rs` (a
//!    request's params written with the `_meta` members it adds merged in, never copied, and
//!    on 2026-07-28 the client's own members, encoded once), and
//!    OAuth's pieces:
//!    `oauth/challenge.rs` (`WWW-Authenticate`), `oauth/form.rs` (URL pieces kept as
//!    written), `oauth/jws.rs` (ES256 for client assertions and DPoP proofs), `oauth/pkce.rs`.
//! 2. **Routing and links.** `router.rs` (where what the server sends goes: an answer to the
//!    request awaiting it, a question to the handler, a notification to its request's progress
//!    listener and to the notification stream; what is not MCP is an anomaly, never a crash;
//!    at most `max_server_requests` questions at once, one more refused with `-32000`),
//!    `transport/mod.rs` (the `Link` a transport is, and a request's `Deadline`, moved back by
//!    the time an authorization took), `transport/connector.rs` (TCP, or rustls with `tls`).
//! 3. `transport/stdio.rs` (the server process or any byte stream: a writer task batching
//!    lines from a bounded queue, and a reader task), `oauth/fetch.rs` (`wharf-oauth`'s
//!    fetcher on the connector; the authorization request read without following its
//!    redirect).
//! 4. `oauth/config.rs` (the grants, the `Authorizer`, the `TokenStore`), `oauth/discovery.rs`
//!    (protected resource metadata checked to name this server, authorization server metadata
//!    checked to name its issuer exactly).
//! 5. `oauth/flow.rs` (what a 401 or 403 sets off for each grant: authorization code with PKCE,
//!    `state` and `iss` checked; client credentials; JWT bearer; enterprise-managed token
//!    exchange; step-up with a bound; refresh; DPoP with nonces), `oauth/loopback.rs` (a
//!    loopback port bound before the flow, the browser sent to the authorization URL, each
//!    connection served on its own), `oauth/file_store.rs` (tokens in a 0600 file in a 0700
//!    directory, replaced whole; lock files never opened through a link), `options.rs`
//!    ([`Target`], [`ClientOptions`], [`RequestOptions`]), `progress_deadline.rs` (a request
//!    whose timeout each progress notification starts again).
//! 6. `transport/http.rs` (one POST per message, answered with JSON or a stream; the session
//!    id; the GET stream of a session; a cut stream resumed with `Last-Event-ID`; 2026-07-28's
//!    `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers; DELETE on close), `oauth/mod.rs`.
//! 7. `client.rs` ([`Client`]: `server/discover` first, `initialize` when the server does not
//!    know it, a `-32022` naming a revision retried once; requests framed for the era, timed
//!    out, cancelled when dropped; `InputRequiredResult` answered by the handler and retried;
//!    tools with invalid `x-mcp-header` marks left out).
//! 8. `calls.rs` (typed calls, pages followed, bounded), `skills.rs` ([`LoadedSkill`]: listing
//!    reads no file, loading checks size, digest and frontmatter before use).

mod calls;
mod client;
mod decoded;
mod error;
mod handler;
#[cfg(feature = "oauth")]
pub mod oauth;
mod options;
mod progress_deadline;
mod request_meta;
mod router;
mod skills;
mod transport;

pub use client::{Client, Notifications, PreparedRequest};
pub use error::{ClientError, ErrorKind};
pub use handler::{Answer, ClientHandler, NoHandler, unsupported};
pub use options::{ClientOptions, RequestOptions, Target};
pub use skills::LoadedSkill;
/// The HTTP connector the client uses (`https://` too with the `tls` feature, or a Unix
/// socket; connecting bounded in time), for a program that also sends HTTP of its own, as
/// `wharf record` does.
#[cfg(feature = "http")]
pub use transport::connector::{Connector as HttpConnector, Stream as HttpStream, connector as http_connector};
pub use transport::stdio::StderrMode;
pub use wharf_protocol as protocol;
