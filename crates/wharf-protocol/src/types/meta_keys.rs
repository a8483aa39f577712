//! The `_meta` member names the protocol reserves for itself (2026-07-28), and the one Wharf
//! adds of its own.

/// What every `_meta` key the protocol reserves for itself starts with.
pub const META_PROTOCOL_PREFIX: &str = "io.modelcontextprotocol/";
/// The `_meta` key naming the protocol revision of a 2026-07-28 request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key carrying the client's capabilities on a 2026-07-28 request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key carrying the client's name and version on a 2026-07-28 request.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key carrying the requested log level on a 2026-07-28 request.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The result `_meta` key carrying the server's name and version (2026-07-28).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The `_meta` key tagging notifications on a `subscriptions/listen` stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// Wharf's own `_meta` key on a question a server asks in a 2025 session: the key the
/// handler asked it under, which a gateway passing the question to a 2026-07-28 client uses
/// as the key of its input request. Clients ignore what they do not know.
pub const META_INPUT_KEY: &str = "wharf/inputKey";
