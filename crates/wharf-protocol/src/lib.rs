//! Wire types of the Model Context Protocol, for every revision from 2024-11-05 to 2026-07-28.
//!
//! # Brief overview
//!
//! - [`Incoming`] decodes what a client sends: a request down to its typed params (in one pass
//!   when it can) or the error to refuse it with; notifications and answers with their params or
//!   result still raw.
//! - [`Envelope`] decodes one incoming JSON-RPC message strictly and keeps its params raw.
//! - [`ClientRequest`], [`ClientNotification`], [`ServerRequest`] and [`ServerNotification`]
//!   decode those params into typed values, choosing the type by the `method` string.
//! - [`RequestMessage`], [`NotificationMessage`], [`ResponseMessage`] and [`ErrorMessage`]
//!   encode outgoing messages.
//! - [`encode_into`] and [`encode`] write any of them as compact JSON, the bytes `serde_json`
//!   writes, with less work per string.
//! - [`ProtocolVersion`] names the revisions and what each allows.
//! - The data types ([`Tool`], [`CallToolResult`], [`Prompt`], [`Resource`], ...) are the union of
//!   every revision's shapes; fields that exist only in newer revisions are `Option`s.
//!
//! This crate has no async code and does no I/O. Depend on it, not on `wharf`, to read or write
//! MCP messages without a server.
//!
//! # Floors, from the bottom up
//!
//! A file imports only from the floors below its own and from the files listed before it on
//! its own floor.
//!
//! 1. **Leaves.** `escape.rs` (a string's first byte to escape, eight bytes at a time),
//!    `error.rs` ([`ErrorObject`], [`ErrorCode`]), `version.rs` ([`ProtocolVersion`] and
//!    [`Era`]: the revisions and what each allows), `loopback.rs` (whether a URL is plain HTTP
//!    to this machine, the host read after any user information: the one check the resource
//!    server and the client share), `types/meta_keys.rs`, `types/logging_level.rs`.
//! 2. **Writing, and the envelope.** `encode.rs` ([`encode`]: serde's data model written byte
//!    for byte as `serde_json` writes it), `jsonrpc.rs` ([`RequestId`], the strict envelope
//!    decoder [`Envelope`], the outgoing message encoders), `definitions.rs` (which definition
//!    of the official schema describes a message, by revision).
//! 3. **The data types**, `types/` by feature: `common.rs` ([`JsonObject`],
//!    [`Implementation`], ...), `capabilities.rs`, `result.rs` (the members every 2026-07-28
//!    result carries, declared once by `result_struct!`, and [`ResultMembers`]), `unique.rs`
//!    (objects that refuse a member given twice, at any depth), `arguments.rs`
//!    ([`ToolArguments`]: a `tools/call`'s arguments kept as the client's text, always an
//!    object), `request_meta.rs` (a request's `_meta`), `params.rs`, then the features
//!    (`completion.rs`, `lifecycle.rs`, `logging.rs`, `notifications.rs`, `tasks.rs`,
//!    `resources.rs`, `content.rs`, `skills.rs`, `prompts.rs`, `tools.rs`,
//!    `client_features.rs`); beside them `header_params.rs` (`x-mcp-header` marks, checked by
//!    the server at registration and by the client in `tools/list`).
//! 4. **The message unions.** `messages.rs` ([`ClientRequest`], [`ClientNotification`],
//!    [`ServerRequest`], [`ServerNotification`], each decoded by its method string),
//!    `types/mrtr.rs` ([`InputRequiredResult`], whose input requests are server requests),
//!    `from_json.rs` ([`FromJson`]: the types other crates read, each decoder compiled once,
//!    here).
//! 5. **Incoming.** `incoming/`: `scanner.rs` (the envelope scanned by hand; a value's syntax
//!    checked without serde; the member names clients write whole compared against
//!    literals), `meta.rs` (`_meta` read by hand), `call_tool.rs` (`tools/call` params read by
//!    hand), `mod.rs` ([`Incoming::parse`]: the final decoded request, or its refusal with the
//!    error, in one pass; whatever the hand-written readers are unsure of goes to the strict
//!    decoder, which alone words every error, so no transport decodes params itself).

mod definitions;
mod encode;
mod error;
mod escape;
mod from_json;
mod header_params;
mod incoming;
mod jsonrpc;
mod loopback;
mod messages;
mod types;
mod version;

pub use definitions::{
    error_response_definition, notification_definition, result_definition, result_response_definition,
    server_request_definition,
};
pub use encode::{encode, encode_into};
pub use error::{ErrorCode, ErrorObject};
pub use from_json::{FromJson, through_value};
pub use header_params::{HeaderParam, X_MCP_HEADER, header_params};
pub use incoming::{Incoming, without_protocol_members};
pub use jsonrpc::{
    DecodeError, Envelope, ErrorMessage, JsonRpc2, NotificationMessage, RequestId, RequestMessage, ResponseMessage,
    parse_batch,
};
pub use loopback::is_loopback_http;
pub use messages::{ClientNotification, ClientRequest, ParamsError, ServerNotification, ServerRequest};
pub use types::apps::{
    APP_MIME_TYPE, Asked, DEPRECATED_RESOURCE_URI_KEY, ToolUiMeta, UI_EXTENSION, UI_META_KEY, VIEW_SCHEME, ViewCsp,
    ViewMeta, ViewPermissions, Visibility, view_uri_problem,
};
pub use types::arguments::ToolArguments;
pub use types::capabilities::{
    ClientCapabilities, ElicitationCapability, ListChangedCapability, ResourcesCapability, RootsCapability,
    SamplingCapability, ServerCapabilities,
};
pub use types::client_features::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, ElicitSchema,
    ElicitationCompleteParams, ListRootsResult, ModelHint, ModelPreferences, MultiSelectItems, OneOrMany,
    PrimitiveSchema, Root, SamplingContent, SamplingMessage, TitledValue, ToolResultContent, ToolUseContent,
};
pub use types::common::{Annotations, CacheScope, Icon, Implementation, JsonObject, ProgressToken, ResultType, Role};
pub use types::completion::{
    CompleteParams, CompleteResult, Completion, CompletionArgument, CompletionContext, CompletionReference,
};
pub use types::content::{AudioContent, ContentBlock, EmbeddedResource, ImageContent, TextContent};
pub use types::lifecycle::{DiscoverResult, InitializeParams, InitializeResult};
pub use types::logging::{LoggingMessageParams, SetLevelParams};
pub use types::logging_level::LoggingLevel;
pub use types::meta_keys::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_INPUT_KEY, META_LOG_LEVEL, META_PROTOCOL_PREFIX,
    META_PROTOCOL_VERSION, META_SERVER_INFO, META_SUBSCRIPTION_ID,
};
pub use types::mrtr::{InputRequest, InputRequiredResult};
pub use types::notifications::{
    AcknowledgedParams, CancelledParams, ListenParams, ListenResult, NotificationMeta, ProgressParams,
    SubscriptionFilter,
};
pub use types::params::{EmptyParams, PaginatedParams};
pub use types::prompts::{GetPromptParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage};
pub use types::request_meta::RequestMeta;
pub use types::resources::{
    BlobResourceContents, ListResourceTemplatesResult, ListResourcesResult, ReadResourceParams, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, ResourceUriParams, SubscribeParams, TextResourceContents,
    not_found_data,
};
pub use types::result::{EmptyResult, ResultMembers};
pub use types::skills::{
    DIRECTORY_MIME_TYPE, GetSkillParams, GetSkillResult, ListSkillsResult, ReadDirectoryParams, ReadDirectoryResult,
    SKILLS_EXTENSION, Skill, SkillFile, SkillResources,
};
pub use types::tasks::{TASKS_EXTENSION, TaskIdParams, UpdateTaskParams};
pub use types::tools::{CallToolParams, CallToolResult, ListToolsResult, Tool, ToolAnnotations, ToolExecution};
pub use types::unique::{UniqueReadError, value_from_str};
pub use version::{Era, ProtocolVersion};
