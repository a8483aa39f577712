//! An MCP client: talks to any Model Context Protocol server, over stdio (a process it starts)
//! or Streamable HTTP, in the era the server speaks: a 2025 session opened with `initialize`,
//! or 2026-07-28 stateless requests after `server/discover`.
//!
//! # Floors, from the bottom
//!
//! - [`ClientError`] (`error.rs`) and [`ClientHandler`] (`handler.rs`): what can fail, and what
//!   answers the server's questions.
//! - `router.rs`: where what the server sends goes.
//! - `transport/`: stdio and Streamable HTTP (with its server-sent events decoder).
//! - [`ClientOptions`], [`RequestOptions`] and [`Target`] (`options.rs`).
//! - `oauth/` (the `oauth` feature): authorization when a server asks for it.
//! - [`Client`] (`client.rs`): negotiation, framing per era, timeouts, cancellation, input
//!   requests; `calls.rs`: the typed calls; `skills.rs`: skills, checked before use.
//!
//! The wire types are `wharf-protocol`'s, the same the server uses.

mod calls;
mod client;
mod error;
mod handler;
#[cfg(feature = "oauth")]
pub mod oauth;
mod options;
mod router;
mod skills;
mod transport;

pub use client::{Client, Notifications, PreparedRequest};
pub use error::{ClientError, ErrorKind};
pub use handler::{Answer, ClientHandler, NoHandler, unsupported};
pub use options::{ClientOptions, RequestOptions, Target};
pub use skills::LoadedSkill;
pub use transport::stdio::StderrMode;
pub use wharf_protocol as protocol;
