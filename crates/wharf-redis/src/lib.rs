//! Shared stores on Redis (or Valkey, which speaks the same protocol) for a Wharf server that
//! runs as several instances behind a load balancer: any instance serves any request.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. `keys.rs` (every key under one prefix; a session's keys carry its id as their Redis
//!    Cluster hash tag, so that one session's keys share a slot), `deadlines.rs` (how long
//!    Wharf waits on Redis), `resp.rs` (RESP2: a command written, a reply read by hand once
//!    all of it arrived).
//! 2. `sentinel.rs` (the primary of a Redis that Sentinel manages: asked of the sentinels,
//!    and asked again once it stops answering or answers as a replica).
//! 3. `commands.rs` (where commands go: one Redis on one multiplexed connection, Sentinel's
//!    primary (a command a demoted primary refused sent once more to the one in its place), or
//!    a Redis Cluster, each command to the primary holding its key's slot; and `query_apart`,
//!    for pipelines whose parts lie in different slots), `lane.rs` (a connection of Wharf's
//!    own to one Redis, for the session's read every request makes: what the requests queued
//!    written at once, replies handed out in order, made again after a failure).
//! 4. `connection.rs` ([`Redis`]: made on first use and remade after a failure, with a
//!    deadline on every command, so that a request never waits on a Redis that is down; errors
//!    are reported by kind, never with the URL, which may hold a password).
//! 5. `subscription.rs` (a pub/sub channel listened to on a connection of its own, subscribed
//!    to again after each failure; sharded channels on a cluster; each message kept a minute
//!    in the channel's log, which a listener reads from the last message it took), `state_key.rs` (the key that seals `requestState`, made at
//!    random by the first instance and stored with `SET NX`, read by the others:
//!    [`Redis::shared_request_state_key`]), `session_hash.rs` (a session's hash: its fields'
//!    names, and the session read back from `HGETALL` as either connection gives it),
//!    `session_events.rs` (a session's stream events in a Redis stream, written by one task in
//!    order, read back and followed).
//! 6. `sessions.rs` ([`RedisSessionStore`], a [`wharf_http::SessionStore`]: one hash per
//!    session, whose fields are written one change at a time and whose expiry every command
//!    that reaches it pushes out in the same round trip; relayed messages on one channel of the
//!    deployment),
//!    `tasks.rs` ([`RedisTaskStore`], a [`wharf_server::TaskStore`]: records as JSON strings
//!    expiring with their `ttlMs`, a set of ids per owner, leases, and `tasks/cancel` and
//!    `tasks/update` signalled on a channel to the instance running the task), `bus.rs`
//!    ([`RedisBus`], a [`wharf_server::Bus`] on pub/sub), `idempotency.rs`
//!    ([`RedisIdempotencyStore`], a [`wharf_server::IdempotencyStore`]: a hash per key and a
//!    lease beside it, each step one script), `results.rs` ([`RedisResultStore`], a
//!    [`wharf_server::ResultStore`]: a hash and a list of pages per result, expiring together),
//!    `dpop_replay.rs` (with the `dpop` feature, `RedisProofReplayCache`, a
//!    `wharf_auth::ProofReplayCache`: each DPoP proof recorded with `SET NX PX`).
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

mod bus;
mod commands;
mod connection;
mod deadlines;
#[cfg(feature = "dpop")]
mod dpop_replay;
mod idempotency;
mod keys;
mod lane;
mod resp;
mod results;
mod sentinel;
mod session_events;
mod session_hash;
mod sessions;
mod state_key;
mod subscription;
mod tasks;

pub use bus::RedisBus;
pub use connection::{Redis, RedisError, RedisErrorKind};
#[cfg(feature = "dpop")]
pub use dpop_replay::RedisProofReplayCache;
pub use idempotency::RedisIdempotencyStore;
pub use results::RedisResultStore;
pub use sessions::RedisSessionStore;
pub use tasks::RedisTaskStore;
