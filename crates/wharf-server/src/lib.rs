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
//! - [`Principal`] is who a request acts for, as authentication in front of the server says.
//! - [`serve_stdio`] and [`serve_connection`] run the newline-delimited transport.
//! - [`McpService`] is the Streamable HTTP endpoint as a `tower::Service`; [`serve_http`]
//!   serves it on an address, with the protections of [`HttpOptions`].
//! - [`testing::InMemoryClient`] drives a server in memory, in either protocol era.
//!
//! Errors: [`Error`] for building and serving; [`RpcError`] for handlers that answer with a
//! JSON-RPC error of their own.

mod cancel;
mod completion;
pub mod content;
mod context;
mod dispatch;
mod error;
mod extensions;
mod input;
mod listen;
mod message_buffer;
mod panic;
mod principal;
mod prompt;
mod registry;
mod resource;
mod schema;
mod server;
mod session;
mod task;
pub mod testing;
mod tool;
mod transport;

pub use cancel::Cancellation;
pub use completion::{CompletionCall, MAX_COMPLETION_VALUES};
pub use context::RequestContext;
pub use error::{Error, RpcError};
pub use extensions::Extensions;
pub use input::Input;
pub use principal::Principal;
pub use prompt::{IntoPromptResult, PromptCall, PromptDef};
pub use resource::uri_template::{TemplateError, UriTemplate};
pub use resource::{IntoResourceContents, ResourceCall, ResourceDef, TemplateDef};
pub use server::{Server, ServerBuilder, ServerOptions};
pub use task::TaskSupport;
pub use task::record::{TaskRecord, TaskStatus};
pub use task::store::{MemoryTaskStore, StoreFuture, TaskStore, TaskStoreError};
pub use tool::ToolDef;
pub use tool::extract::{Args, FromToolCall, Rejection, SessionData, State, ToolCall};
pub use tool::handler::ToolHandler;
pub use tool::output::{IntoToolResult, Json};
pub use transport::connection::serve_connection;
pub use transport::http::{EventStore, HttpOptions, McpBody, McpService, MemoryEventStore, serve_http, serve_http_on};
pub use transport::stdio::serve_stdio;
