//! The Wharf MCP server core: registries, dispatch for every protocol revision, sessions and
//! transports.
//!
//! # Brief overview
//!
//! - [`Server`] holds what the server is and offers; build it with [`Server::builder`] and
//!   register [`ToolDef`]s, [`PromptDef`]s, [`ResourceDef`]s and [`TemplateDef`]s. Capabilities
//!   are derived from what is registered. Components can be added, removed, enabled and
//!   disabled while the server runs.
//! - Tool handlers are async functions whose arguments are extractors ([`Args`],
//!   [`RequestContext`], [`State`]) and whose output implements [`IntoToolResult`].
//! - [`RequestContext`] gives handlers the revision, client info, progress, logging,
//!   cancellation and requests for client input ([`Input`]), which are server-to-client
//!   requests in a 2025 session and `InputRequiredResult` rounds on 2026-07-28.
//! - With the `skills` feature, `Skills` of `SkillDef`s (built in code or read from a
//!   directory) serve the Skills extension: `skills/list`, `skills/get`, their files as
//!   `skill://` resources and `resources/directory/read`.
//! - [`Principal`] is who a request acts for, as authentication in front of the server says.
//! - [`serve_stdio`] (or [`serve_stdio_with`] and its [`StdioOptions`]) and [`serve_connection`]
//!   run the newline-delimited transport.
//! - Streamable HTTP is the `wharf-http` crate, which reaches this one through its transport
//!   contract (a hidden module, `contract`), as the line transports here do.
//! - [`testing::InMemoryClient`] drives a server in memory, in either protocol era.
//!
//! Errors: [`Error`] for building and serving; [`RpcError`] for handlers that answer with a
//! JSON-RPC error of their own.

// The floors, from the bottom up; a file imports only from floors below its own (see
// ARCHITECTURE.md).
// Leaves.
mod cancel;
pub mod content;
mod extensions;
mod future;
mod message_buffer;
mod panic;
mod principal;
// After `principal`, which it reads.
mod client_key;
mod random;
mod scopes;
// Data.
mod delivery;
mod error;
mod events;
mod layer;
pub mod middleware;
mod offer;
mod options;
mod schema;
mod session;
mod session_end;
mod wire;
// Input rounds, tasks, and what server events a 2025 session hears of.
mod input;
mod session_events;
mod task;
// The request context, over what it needs of its server.
mod context;
mod server_core;
// Components.
mod completion;
mod prompt;
mod resource;
#[cfg(feature = "skills")]
mod skills;
mod tool;
// The server.
mod builder;
mod registry;
mod server;
mod update;
// Request handling.
mod dispatch;
mod listen;
// What a transport may use of everything above.
#[doc(hidden)]
pub mod contract;
// Transports, and the in-memory client over them.
pub mod testing;
mod transport;

pub use builder::ServerBuilder;
pub use cancel::Cancellation;
pub use completion::{CompletionCall, MAX_COMPLETION_VALUES};
pub use context::RequestContext;
pub use context::ask::Input;
pub use error::{Error, RpcError};
pub use extensions::Extensions;
pub use layer::{Layer, LayerFuture, McpRequest, McpResponse, Next, OutboundKind, OutboundMessage, Subject, layer_fn};
pub use offer::Offer;
pub use options::ServerOptions;
pub use principal::Principal;
pub use prompt::{IntoPromptResult, PromptCall, PromptDef};
pub use resource::mime::mime_type_for;
pub use resource::uri_template::{TemplateError, UriTemplate};
pub use resource::{IntoResourceContents, ResourceCall, ResourceDef, TemplateDef};
pub use server::Server;
pub use session::Transport;
pub use session_end::{SessionEnd, SessionEndReason};
#[cfg(feature = "skills")]
pub use skills::{
    CompiledSkills, DirectoryEntry, EntryKind, FrontmatterError, FrontmatterErrorKind, GenerateFiles, OpenDirectory,
    SkillDef, Skills, file_path_in_uri, yaml_frontmatter,
};
pub use task::TaskSupport;
pub use task::record::{TaskRecord, TaskStatus};
pub use task::store::{MemoryTaskStore, StoreFuture, TaskSignal, TaskStore, TaskStoreError};
pub use tool::ToolDef;
pub use tool::extract::{Args, FromToolCall, Rejection, SessionData, State, ToolCall};
pub use tool::handler::ToolHandler;
pub use tool::output::{IntoToolResult, Json};
pub use transport::connection::serve_connection;
pub use transport::stdio::{serve_stdio, serve_stdio_with};
pub use transport::stdio_options::StdioOptions;
pub use update::Update;

/// Hooks for Wharf's differential fuzzer; not part of the API.
#[cfg(fuzzing)]
#[doc(hidden)]
pub use schema::fuzzing;
