//! What Wharf's tests share, so that each crate's tests say what they test and not how to talk
//! HTTP or wait. Never published; the crates whose tests need it take it as a dev-dependency.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. [`ports`] (a free loopback port), [`eventually`] (waiting for a condition with a
//!    deadline, async and blocking), [`temp_dir`] (a directory removed when dropped),
//!    [`logs`] (capturing `tracing` output), [`raw_http`] (HTTP/1.1 exchanges written and read
//!    as bytes, async and blocking, and reading an SSE stream until a wanted text),
//!    [`stub_http`] (a stub HTTP/1.1 server answering each request with a function: what Wharf
//!    calls out to, an issuer's metadata and keys, an OTLP receiver), [`process`] (a child
//!    process whose stderr is read as it comes, killed when dropped), [`schemas`] (the
//!    repository's copy of the official schemas, and checking messages against the definition
//!    of the method they answer), [`layers`] (layers that record what they see), [`redis_cli`]
//!    (a command to a Redis node through `redis-cli`), [`redis_process`] (a persisting
//!    `redis-server` process in a directory of its own).
//! 2. [`redis_server`] (a `redis-server` of a test's own, a process on a free port in a
//!    temporary directory), [`redis_cluster`] (a Redis Cluster of six such nodes, three
//!    primaries with a replica each, whose nodes can be killed or failed over),
//!    [`redis_sentinel`] (a primary and its replica under three sentinels, the primary killed
//!    or failed over by them), [`nginx`] (nginx in front of a fleet, round robin), [`fixture`] (a server with one of everything, as the engine's and
//!    the transports' tests use it).

pub mod eventually;
pub mod layers;
pub mod logs;
pub mod ports;
pub mod process;
pub mod raw_http;
pub mod redis_cli;
pub mod redis_process;
pub mod schemas;
pub mod stub_http;
pub mod temp_dir;

pub mod fixture;
pub mod nginx;
pub mod redis_cluster;
pub mod redis_sentinel;
pub mod redis_server;
