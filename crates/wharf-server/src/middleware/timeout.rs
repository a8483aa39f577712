//! A time limit on tool calls: a call that outlives it is cancelled and answered with an error,
//! or, where the call may become a task, goes on as a task.

use std::collections::HashMap;
use std::time::Duration;

use crate::error::RpcError;
use crate::layer::{Layer, LayerFuture, McpRequest, McpResponse, Next};

/// A time limit on `tools/call` (a [`Layer`]).
///
/// A call still running at its limit is cancelled as a client's cancellation would cancel it
/// (its handler's future is dropped and its [`Cancellation`](crate::Cancellation) fires, so
/// that work it started can stop), and the caller gets [`RpcError::timed_out`] (`-32001`).
///
/// With [`Timeout::become_task`], a call that [may become a task](McpRequest::may_become_task)
/// is not cancelled: it is answered directly if it finishes within the limit, and otherwise
/// goes on as a task whose id the client gets (the task then lives as long as the server's
/// task time-to-live allows). A call that became a task is answered when the task is created,
/// so the limit does not apply to the task's work.
///
/// ```
/// use std::time::Duration;
/// use wharf_server::middleware::Timeout;
///
/// let timeout = Timeout::new(Duration::from_secs(30)).tool("quick_lookup", Duration::from_secs(2));
/// ```
#[derive(Debug, Clone)]
pub struct Timeout {
    default: Option<Duration>,
    tools: HashMap<String, Duration>,
    become_task: bool,
}

impl Timeout {
    /// Every tool call gets `limit`.
    pub fn new(limit: Duration) -> Timeout {
        Timeout { default: Some(limit), tools: HashMap::new(), become_task: false }
    }

    /// Only the tools named with [`Timeout::tool`] get a limit.
    pub fn only_named() -> Timeout {
        Timeout { default: None, tools: HashMap::new(), become_task: false }
    }

    /// A limit of its own for one tool.
    pub fn tool(mut self, name: impl Into<String>, limit: Duration) -> Timeout {
        self.tools.insert(name.into(), limit);
        self
    }

    /// Calls that may become tasks go on as tasks at their limit instead of failing.
    pub fn become_task(mut self) -> Timeout {
        self.become_task = true;
        self
    }

    fn limit_for(&self, tool: &str) -> Option<Duration> {
        self.tools.get(tool).copied().or(self.default)
    }
}

impl Layer for Timeout {
    fn reads_transport_data(&self) -> bool {
        false
    }

    fn handle<'a>(&'a self, mut request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        let Some((tool, limit)) = request.tool_name().and_then(|tool| Some((tool.to_owned(), self.limit_for(tool)?)))
        else {
            return next.run(request);
        };
        if self.become_task && request.may_become_task() {
            request.become_task_after(limit);
            return next.run(request);
        }
        let cancellation = request.cancellation().clone();
        LayerFuture::new(async move {
            let mut work = next.run(request);
            tokio::select! {
                answer = &mut work => answer,
                () = tokio::time::sleep(limit) => {
                    // Cancelled before the handler is dropped, so that what it left running,
                    // and its own drop code, see the cancellation.
                    cancellation.cancel();
                    drop(work);
                    tracing::debug!(tool, ?limit, "a tool call timed out");
                    McpResponse::error(RpcError::timed_out(
                        format!(
                            "Request timed out: tool `{tool}` ran longer than its limit of {:.3} s and was cancelled",
                            limit.as_secs_f64()
                        ),
                        limit,
                    ))
                }
            }
        })
    }
}
