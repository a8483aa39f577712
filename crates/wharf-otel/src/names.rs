//! The names the OpenTelemetry semantic conventions for MCP give attributes and metrics, and
//! the bucket boundaries they recommend.

pub(crate) const METHOD: &str = "mcp.method.name";
pub(crate) const TOOL: &str = "gen_ai.tool.name";
pub(crate) const PROMPT: &str = "gen_ai.prompt.name";
pub(crate) const OPERATION: &str = "gen_ai.operation.name";
pub(crate) const PROTOCOL_VERSION: &str = "mcp.protocol.version";
pub(crate) const NETWORK_TRANSPORT: &str = "network.transport";
pub(crate) const NETWORK_PROTOCOL: &str = "network.protocol.name";
pub(crate) const ERROR_TYPE: &str = "error.type";
pub(crate) const STATUS_CODE: &str = "rpc.response.status_code";

/// The value of `gen_ai.operation.name` on tool calls.
pub(crate) const EXECUTE_TOOL: &str = "execute_tool";
/// The value of `gen_ai.tool.name` and `gen_ai.prompt.name` for a name the server does not
/// have: each name a client made up would otherwise be a metric series of its own.
pub(crate) const OTHER: &str = "_OTHER";
/// The value of `error.type` for a `CallToolResult` with `isError: true`.
pub(crate) const TOOL_ERROR: &str = "tool_error";

/// The histogram of the time the server takes to answer a request.
pub(crate) const OPERATION_DURATION: &str = "mcp.server.operation.duration";

/// The histogram of how long 2025 sessions last.
pub(crate) const SESSION_DURATION: &str = "mcp.server.session.duration";

/// The bucket boundaries, in seconds, the conventions recommend for both MCP duration metrics.
pub(crate) const DURATION_BUCKETS: [f64; 14] =
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];
