//! [`StdioOptions`]: what only the stdio transport uses, beyond the server's own options.

use std::any::Any;

/// The longest line the line transports accept by default.
pub(crate) const DEFAULT_MAX_LINE_BYTES: usize = 10 * 1024 * 1024;

/// How the stdio transport runs, beyond what [`ServerOptions`](crate::ServerOptions) says.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StdioOptions {
    pub(crate) max_line_bytes: usize,
    pub(crate) read_thread_setup: Option<fn() -> Box<dyn Any + Send>>,
}

impl Default for StdioOptions {
    fn default() -> StdioOptions {
        StdioOptions { max_line_bytes: DEFAULT_MAX_LINE_BYTES, read_thread_setup: None }
    }
}

impl StdioOptions {
    /// The longest line accepted, in bytes (at least 64); a longer one is answered with a parse
    /// error and skipped. Default: 10 MiB, as for every byte stream
    /// ([`serve_connection`](crate::serve_connection)).
    pub fn max_line_bytes(mut self, bytes: usize) -> StdioOptions {
        self.max_line_bytes = bytes.max(64);
        self
    }

    /// Runs `setup` on the thread that reads stdin once it has written its first answers, and
    /// holds what it returns until the thread ends: for tuning that lives on that thread, such
    /// as an allocator's per-thread state (most stdio answers are made there), which the
    /// client's first messages then do not wait for. Default: none.
    pub fn read_thread_setup(mut self, setup: fn() -> Box<dyn Any + Send>) -> StdioOptions {
        self.read_thread_setup = Some(setup);
        self
    }
}
