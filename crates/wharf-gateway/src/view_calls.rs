//! A view's calls of its own server's tools: an MCP Apps view calls them by the names it was
//! written with, which a namespace changed (the host passes its calls on as they are), so a
//! `tools/call` of a name the gateway does not have is made of the one tool of that name
//! upstream among the mounts whose tools name views. A name two such mounts have stays unknown.

use std::sync::{Arc, Mutex, PoisonError};

use wharf_protocol::ClientRequest;
use wharf_server::{Layer, LayerFuture, McpRequest, Next};

use crate::claims::Claims;

/// The layer that finds a view's tool by its upstream name.
pub(crate) struct ViewCalls {
    pub(crate) claims: Arc<Mutex<Claims>>,
}

impl Layer for ViewCalls {
    fn reads_transport_data(&self) -> bool {
        false
    }

    fn handle<'a>(&'a self, mut request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        if request.is_known_tool() {
            return next.run(request);
        }
        let Some(called) = request.tool_name() else { return next.run(request) };
        let found =
            self.claims.lock().unwrap_or_else(PoisonError::into_inner).tool_of_a_view(called).map(str::to_owned);
        if let Some(name) = found
            && let ClientRequest::CallTool(params) = request.params_mut()
        {
            params.name = name;
        }
        next.run(request)
    }
}
