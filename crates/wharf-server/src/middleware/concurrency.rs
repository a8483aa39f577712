//! A limit on how many calls of a tool run at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::error::RpcError;
use crate::layer::{Layer, LayerFuture, McpRequest, McpResponse, Next};

/// A limit on the calls of each tool running at once (a [`Layer`]).
///
/// A call over the limit waits for a running one to finish (its wait ends if it is cancelled),
/// or, with [`ConcurrencyLimit::reject_when_busy`], is refused at once with
/// [`RpcError::rate_limited`] (over HTTP, 429 with `Retry-After`). Calls of tools the server
/// does not have are not counted. A call that becomes a task answers at once and no longer
/// counts while its task runs.
///
/// ```
/// use wharf_server::middleware::ConcurrencyLimit;
///
/// let limit = ConcurrencyLimit::per_tool(8).tool("render_video", 1).reject_when_busy();
/// ```
#[derive(Debug)]
pub struct ConcurrencyLimit {
    default: Option<usize>,
    tools: HashMap<String, usize>,
    reject: bool,
    /// One semaphore per tool the server has, made on its first call: only the server's own
    /// tools get one, so the map is as bounded as the registry.
    running: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl ConcurrencyLimit {
    /// At most `limit` calls of each tool at once.
    pub fn per_tool(limit: usize) -> ConcurrencyLimit {
        ConcurrencyLimit {
            default: Some(limit.max(1)),
            tools: HashMap::new(),
            reject: false,
            running: Mutex::default(),
        }
    }

    /// Only the tools named with [`ConcurrencyLimit::tool`] are limited.
    pub fn only_named() -> ConcurrencyLimit {
        ConcurrencyLimit { default: None, tools: HashMap::new(), reject: false, running: Mutex::default() }
    }

    /// A limit of its own for one tool.
    pub fn tool(mut self, name: impl Into<String>, limit: usize) -> ConcurrencyLimit {
        self.tools.insert(name.into(), limit.max(1));
        self
    }

    /// Refuses a call over the limit at once instead of letting it wait.
    pub fn reject_when_busy(mut self) -> ConcurrencyLimit {
        self.reject = true;
        self
    }

    fn semaphore(&self, tool: &str) -> Option<(Arc<Semaphore>, usize)> {
        let limit = self.tools.get(tool).copied().or(self.default)?;
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(semaphore) = running.get(tool) {
            return Some((semaphore.clone(), limit));
        }
        let semaphore = running.entry(tool.to_owned()).or_insert_with(|| Arc::new(Semaphore::new(limit)));
        Some((semaphore.clone(), limit))
    }
}

impl Layer for ConcurrencyLimit {
    fn reads_transport_data(&self) -> bool {
        false
    }

    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        let tool = request.tool_name().filter(|_| request.is_known_tool());
        let Some((semaphore, limit)) = tool.and_then(|tool| self.semaphore(tool)) else {
            return next.run(request);
        };
        LayerFuture::new(async move {
            let permit = if self.reject {
                semaphore.try_acquire_owned().map_err(|_| {
                    let tool = request.tool_name().unwrap_or_default();
                    let message = format!(
                        "Too many requests: tool `{tool}` already runs {limit} calls at once; retry when one ends"
                    );
                    RpcError::rate_limited(message, Duration::from_secs(1))
                })
            } else {
                // The semaphore is never closed, so acquiring only fails if it were.
                let acquired = semaphore.acquire_owned().await;
                acquired.map_err(|_| RpcError::internal("Internal error: the concurrency limit closed"))
            };
            let permit = match permit {
                Ok(permit) => permit,
                Err(error) => return McpResponse::error(error),
            };
            let answer = next.run(request).await;
            drop(permit);
            answer
        })
    }
}
