//! [`ServerOptions`]: the server's tunable behaviour, each option with its documented default.

use std::time::Duration;

/// Tunable behaviour. Every option has a documented default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Items per page of every list. Default: 100.
    pub page_size: usize,
    /// How long to wait for the client to answer a server-to-client request (sampling,
    /// elicitation, roots). Default: 60 seconds.
    pub client_request_timeout: Duration,
    /// The `ttlMs` cache hint on 2026-07-28 lists, discovery and reads. Default: 0 (clients
    /// revalidate every time), because components can change at run time.
    pub cache_ttl: Duration,
    /// The longest stdio line accepted, in bytes. Default: 10 MiB.
    pub max_line_bytes: usize,
    /// Messages queued for one client before handlers wait. Default: 1024.
    pub outbound_queue: usize,
    /// Requests one connection may have in flight; beyond that the server stops reading until
    /// one finishes, so a client that pipelines without limit cannot make it grow without
    /// bound. Default: 64.
    pub max_in_flight: usize,
    /// How long the `requestState` of an `InputRequiredResult` stays valid (2026-07-28). The
    /// client's retry must come within it. Default: 10 minutes.
    pub request_state_lifetime: Duration,
    /// How long task records are kept after creation (`ttlMs`). Default: 1 hour.
    pub task_ttl: Option<Duration>,
    /// How often clients are told to poll tasks (`pollIntervalMs`). Default: 500 ms.
    pub task_poll_interval: Duration,
    /// Unfinished tasks one owner may have running on this server at once (one principal, or
    /// without one the client's address, or its 2025 session); one more is refused with
    /// "too many requests". Finished tasks do not count. Default: 100.
    pub max_tasks_per_owner: usize,
    /// The most messages one JSON-RPC batch may hold (batches exist only in sessions of
    /// revision 2025-03-26); a longer batch is refused whole with -32600. Default: 100.
    pub max_batch_len: usize,
    /// The most bytes the answer to one batch may take, all of its responses together; a
    /// response that would take it past this is replaced by a -32603 error naming the limit
    /// (the request itself was handled), and the rest of the batch is still answered.
    /// Default: 4 MiB.
    pub max_batch_answer_bytes: usize,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            page_size: 100,
            client_request_timeout: Duration::from_secs(60),
            cache_ttl: Duration::ZERO,
            max_line_bytes: 10 * 1024 * 1024,
            outbound_queue: 1024,
            max_in_flight: 64,
            request_state_lifetime: Duration::from_secs(600),
            task_ttl: Some(Duration::from_secs(3600)),
            task_poll_interval: Duration::from_millis(500),
            max_tasks_per_owner: 100,
            max_batch_len: 100,
            max_batch_answer_bytes: 4 * 1024 * 1024,
        }
    }
}
