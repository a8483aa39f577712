//! Streamable HTTP for Wharf servers: one endpoint that serves 2025 sessions and 2026-07-28
//! stateless requests, as a `tower::Service` ([`McpService`]) to mount in an existing hyper or
//! axum app, or served on a listener with [`serve`] (options and a graceful shutdown are methods
//! of what it returns, as with `axum::serve`). [`HttpOptions`] holds the limits and protections,
//! all on by default: `Host` and `Origin` allowlists, bounded bodies, sessions, connections and
//! event buffers, random session ids.
//!
//! This crate reaches the engine (`wharf-server`) only through its transport contract,
//! `wharf_server::contract`, as the stdio transport does; `scripts/check-transport-contract`
//! keeps it so. HTTP-only request data (headers, extensions) reaches middleware as the request's
//! transport data, read with [`HttpRequest`].
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. **Pieces.** `auth.rs` ([`Authenticator`], the hook that authenticates every request, and
//!    the RFC 6750 challenges of its refusals), `connection_auth.rs` (a connection's principal,
//!    given again to its next requests with the same credential while the authenticator allows),
//!    `body.rs` ([`McpBody`]), `sse.rs`, `headers.rs`,
//!    `request_parts.rs` ([`HttpParts`], [`HttpRequest`]), `events.rs` ([`EventStore`]; the
//!    built-in one bounded per session and in all, the oldest event of all going first),
//!    `session_store.rs` ([`SessionStore`]: 2025 sessions and their streams' events kept where
//!    every instance finds them; [`Relayed`], what one instance tells the others),
//!    `standalone.rs` (a session's standalone stream: its queue, held by one GET at a time; a
//!    new GET takes it over, keeping the stream's id and numbering), `connections.rs` (what
//!    `serve` keeps open: connections bounded in all and per address, one past either
//!    answered 503 unread; idle ones closed by hyper's timer for a request's head), `head_timer.rs`
//!    (that timer: a deadline per connection, swept a few times per timeout), `unix.rs`
//!    (a Unix socket made owner-only, [`UnixPeer`]: the peer's credentials as its principal),
//!    `server_card.rs` ([`ServerCard`]: the card and its AI Catalog entry, made from the
//!    server's own description).
//! 2. **Sessions and options.** `options.rs` ([`HttpOptions`]), `session_record.rs` (a session
//!    as the store keeps it, and an instance's copy made or brought up to date from it),
//!    `sessions.rs` (random ids, idle expiry, the cap with oldest-idle eviction of the client
//!    holding the most, the quota per client, copies of shared sessions; every way a session
//!    leaves the table tells the server's layers).
//! 3. **Checks.** `guard.rs` (DNS-rebinding protection: the `Host` and `Origin` allowlists).
//! 4. **Replies.** `reply.rs` (JSON-RPC messages, SSE streams, errors with their status codes,
//!    CORS).
//! 5. **The endpoint's state.** `shared.rs` (what every request of an endpoint shares; the 2025
//!    session a request names, which answers only the principal that opened it; the closing
//!    signal that ends standalone streams and listeners in a graceful shutdown), `metrics.rs`
//!    (the metrics path, behind the same guards and authentication), `discovery.rs` (the Server
//!    Card and the AI Catalog served to anyone: entity tags, 304, CORS).
//! 6. **Response streams.** `response_stream.rs` (the SSE stream answering a POST: events
//!    numbered, kept in the shared session store before they are sent, and handed to a client
//!    that resumed the stream here).
//! 7. **Requests.** `respond.rs` (running a request into a JSON or SSE response), `streams.rs`
//!    (GET streams and resumption, DELETE).
//! 8. **Routing.** `post.rs` (POSTs routed by era and session).
//! 9. **The endpoint.** `service.rs` ([`McpService`], the `tower::Service`: the guards first,
//!    then authentication, then routing by method).
//! 10. **Serving.** `serve.rs` ([`serve`] on TCP and [`serve_unix`] on a Unix socket: the
//!     accept loop, and the graceful shutdown that lets each connection finish the request it is
//!     answering).

mod auth;
mod body;
mod connection_auth;
mod connections;
mod events;
mod head_timer;
mod headers;
mod request_parts;
mod session_store;
mod sse;
mod standalone;
#[cfg(unix)]
mod unix;

mod server_card;

mod options;
mod session_record;
mod sessions;

mod guard;

mod reply;

mod discovery;

mod metrics;
mod shared;

mod response_stream;

mod respond;
mod streams;

mod post;

mod service;

mod serve;

pub use auth::{AuthFuture, AuthRefusal, Authenticator};
pub use body::McpBody;
pub use events::{EventStore, MemoryEventStore};
pub use options::HttpOptions;
pub use request_parts::{HttpParts, HttpRequest};
#[cfg(unix)]
pub use serve::serve_unix;
pub use serve::{Serve, WithGracefulShutdown, serve};
pub use server_card::ServerCard;
pub use service::McpService;
pub use session_store::{Relayed, SessionChange, SessionLimits, SessionStore, SessionStoreError, StoredSession};
#[cfg(unix)]
pub use unix::{UnixPeer, bind_unix};
