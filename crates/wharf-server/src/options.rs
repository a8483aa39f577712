//! [`ServerOptions`]: the server's tunable behaviour, each option with its documented default,
//! set on the options and handed to [`ServerBuilder::options`](crate::ServerBuilder::options)
//! whole. What only the line transports use is in [`StdioOptions`](crate::StdioOptions).

use std::time::Duration;

/// Tunable behaviour. Every option has a documented default; set the ones to change and hand
/// them to [`ServerBuilder::options`](crate::ServerBuilder::options):
///
/// ```
/// # use std::time::Duration;
/// # use wharf_server::{Server, ServerOptions};
/// let options = ServerOptions::default().page_size(50).max_in_flight(16).cache_ttl(Duration::from_secs(5));
/// let server = Server::builder("demo", "1.0.0").options(options).build().unwrap();
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub(crate) page_size: usize,
    pub(crate) client_request_timeout: Duration,
    pub(crate) cache_ttl: Duration,
    pub(crate) outbound_queue: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) request_state_lifetime: Duration,
    pub(crate) task_ttl: Option<Duration>,
    pub(crate) task_poll_interval: Duration,
    pub(crate) max_tasks_per_owner: usize,
    pub(crate) max_batch_len: usize,
    pub(crate) max_batch_answer_bytes: usize,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            page_size: 100,
            client_request_timeout: Duration::from_secs(60),
            cache_ttl: Duration::ZERO,
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

impl ServerOptions {
    /// Items per page of every list (at least 1). Default: 100.
    pub fn page_size(mut self, page_size: usize) -> ServerOptions {
        self.page_size = page_size.max(1);
        self
    }

    /// How long to wait for the client to answer a server-to-client request (sampling,
    /// elicitation, roots). Default: 60 seconds.
    pub fn client_request_timeout(mut self, timeout: Duration) -> ServerOptions {
        self.client_request_timeout = timeout;
        self
    }

    /// The `ttlMs` cache hint on 2026-07-28 lists, discovery and reads. Default: 0 (clients
    /// revalidate every time), because components can change at run time.
    pub fn cache_ttl(mut self, ttl: Duration) -> ServerOptions {
        self.cache_ttl = ttl;
        self
    }

    /// Messages queued for one client before the handlers sending them wait (at least 1).
    /// Default: 1024.
    pub fn outbound_queue(mut self, messages: usize) -> ServerOptions {
        self.outbound_queue = messages.max(1);
        self
    }

    /// Requests one connection (or HTTP session) may have in flight (1 to 65,536); beyond that
    /// a line transport stops reading until one finishes, and HTTP answers 429, so a client that
    /// pipelines without limit cannot make the server grow without bound. Default: 64.
    pub fn max_in_flight(mut self, requests: usize) -> ServerOptions {
        self.max_in_flight = requests.clamp(1, 1 << 16);
        self
    }

    /// How long the `requestState` of an `InputRequiredResult` stays valid (2026-07-28): the
    /// client's retry must come within it. Default: 10 minutes.
    pub fn request_state_lifetime(mut self, lifetime: Duration) -> ServerOptions {
        self.request_state_lifetime = lifetime;
        self
    }

    /// How long a task's record is kept after it was created (`ttlMs`); `None` keeps records
    /// as long as the store does. Default: 1 hour.
    pub fn task_ttl(mut self, ttl: Option<Duration>) -> ServerOptions {
        self.task_ttl = ttl;
        self
    }

    /// How often clients are told to poll a task (`pollIntervalMs`). Default: 500 ms.
    pub fn task_poll_interval(mut self, interval: Duration) -> ServerOptions {
        self.task_poll_interval = interval;
        self
    }

    /// Unfinished tasks one owner may have running on this server at once (at least 1): one
    /// principal, or for an anonymous caller its network address (an IPv6 address by its /64,
    /// loopback included), or its 2025 session when the address is unknown (stdio). One more
    /// task-augmented call is refused with [`RpcError::rate_limited`](crate::RpcError::rate_limited)
    /// naming this limit (over HTTP, 429 with `Retry-After`). Finished tasks do not count, so
    /// one client's flood of tasks neither blocks another client's nor outlasts its own tasks.
    /// With a task store several instances share, each instance holds the quota on its own.
    /// Default: 100.
    pub fn max_tasks_per_owner(mut self, tasks: usize) -> ServerOptions {
        self.max_tasks_per_owner = tasks.max(1);
        self
    }

    /// The most messages one JSON-RPC batch may hold (at least 1), on every transport. Only
    /// sessions of revision 2025-03-26 may send batches; a longer one is refused whole with
    /// -32600 (Invalid Request) naming this limit, before any of it is handled. Default: 100.
    pub fn max_batch_len(mut self, messages: usize) -> ServerOptions {
        self.max_batch_len = messages.max(1);
        self
    }

    /// The most bytes the answer to one JSON-RPC batch may take, its responses together, on
    /// every transport. The batch's requests are handled in order; a response that would take
    /// the answer past this is replaced by a -32603 (Internal Error) response naming this
    /// limit (its request was handled all the same), and the rest of the batch is still
    /// answered. So one batch makes the server hold at most this much of answers besides the
    /// response being made. Default: 4 MiB.
    pub fn max_batch_answer_bytes(mut self, bytes: usize) -> ServerOptions {
        self.max_batch_answer_bytes = bytes.max(1);
        self
    }
}
