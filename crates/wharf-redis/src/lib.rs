//! Shared stores on Redis (or Valkey, which speaks the same protocol) for a Wharf server that
//! runs as several instances behind a load balancer: any instance serves any request.
//!
//! From the bottom: `keys.rs` (every key under one prefix, with a hash tag that keeps one
//! session's keys in one Redis Cluster slot), `connection.rs` ([`Redis`]: one multiplexed
//! connection that reconnects, with deadlines, so that a request never waits on a Redis that is
//! down), `subscription.rs` (a pub/sub channel listened to on a connection of its own, again
//! after each failure), `sessions.rs` ([`RedisSessionStore`], a [`wharf_http::SessionStore`]),
//! `tasks.rs` ([`RedisTaskStore`], a [`wharf_server::TaskStore`] with leases and signals) and
//! `state_key.rs` (the key that seals `requestState`, made by the first instance and read by the
//! others: [`Redis::shared_request_state_key`]).
//!
//! ```no_run
//! # fn demo(server: wharf_server::Server) -> Result<(), wharf_redis::RedisError> {
//! let redis = wharf_redis::Redis::connect("redis://127.0.0.1:6379/")?.prefix("my-server");
//! let options = wharf_http::HttpOptions::default().session_store(redis.session_store());
//! let builder = wharf_server::Server::builder("my-server", "1").task_store(redis.task_store());
//! # let _ = (server, options, builder);
//! # Ok(())
//! # }
//! ```

mod connection;
mod keys;
mod sessions;
mod state_key;
mod subscription;
mod tasks;

pub use connection::{Redis, RedisError, RedisErrorKind};
pub use sessions::RedisSessionStore;
pub use tasks::RedisTaskStore;
