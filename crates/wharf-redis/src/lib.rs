//! Shared stores on Redis (or Valkey, which speaks the same protocol) for a Wharf server that
//! runs as several instances behind a load balancer: any instance serves any request.
//!
//! From the bottom: `keys.rs` (every key under one prefix, with a hash tag that keeps one
//! session's keys in one Redis Cluster slot), `connection.rs` ([`Redis`]: one multiplexed
//! connection that reconnects, with deadlines, so that a request never waits on a Redis that is
//! down), `sessions.rs` ([`RedisSessionStore`], a [`wharf_server::SessionStore`]).
//!
//! ```no_run
//! # fn demo(server: wharf_server::Server) -> Result<(), wharf_redis::RedisError> {
//! let redis = wharf_redis::Redis::connect("redis://127.0.0.1:6379/")?.prefix("my-server");
//! let options = wharf_server::HttpOptions::default().session_store(redis.session_store());
//! # let _ = (server, options);
//! # Ok(())
//! # }
//! ```

mod connection;
mod keys;
mod sessions;

pub use connection::{Redis, RedisError};
pub use sessions::RedisSessionStore;
