//! The `Mcp-Param-*` check of a 2026-07-28 `tools/call`, for transports that carry headers:
//! the arguments a tool marks must agree with the headers the client mirrored them into.

use wharf_protocol::{ClientRequest, ErrorObject};

use crate::server::Server;
use crate::tool::header_params::check_mirrored;

/// Checks a request's mirrored headers against its arguments; `header(name)` reads
/// `Mcp-Param-{name}` (`None` when absent, `Some(None)` when it cannot be decoded). Requests
/// other than `tools/call` of a tool that marks arguments pass.
pub(crate) fn check_mirrored_headers(
    server: &Server,
    request: &ClientRequest,
    header: impl Fn(&str) -> Option<Option<String>>,
) -> Result<(), ErrorObject> {
    let ClientRequest::CallTool(call) = request else { return Ok(()) };
    let registry = server.registry();
    let Some(tool) = registry.tool(&call.name) else { return Ok(()) };
    check_mirrored(&tool.header_params, call.arguments.as_ref(), header)
}
