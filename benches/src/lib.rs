//! Shared pieces of the benchmark programs in `src/bin`:
//!
//! - [`baseline`]: the parse-and-answer work of the bare baselines.
//! - [`measure`]: what a run measured (throughput, latency percentiles, memory) and reports.
//! - [`stdio`]: driving a child that speaks newline-delimited JSON-RPC on stdin and stdout.
//! - [`http`]: a minimal HTTP/1.1 keep-alive client, so the load generator costs little next to
//!   the servers it measures.
//! - [`whole_body`]: a response body in one piece, for the bare hyper servers.

pub mod baseline;
pub mod http;
pub mod measure;
pub mod stdio;
pub mod whole_body;
