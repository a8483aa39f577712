//! Wharf: build Model Context Protocol servers in Rust.
//!
//! # Brief overview
//!
//! A server is a [`Server`] built from tools, prompts and resources:
//!
//! - a **tool** ([`ToolDef`]) is an async function the model calls. Its arguments are
//!   extractors: [`Args<T>`] deserializes the arguments into `T`, whose JSON Schema (derived with
//!   [`schemars`]) becomes the tool's `inputSchema` and is enforced before the handler runs;
//!   [`RequestContext`] gives progress, logging, cancellation and requests for user input.
//! - a **prompt** ([`PromptDef`]) is a `{placeholder}` template or an async function.
//! - a **resource** ([`ResourceDef`]) is static text or bytes or an async function; a
//!   **resource template** ([`TemplateDef`]) serves a family of URIs such as
//!   `users://{id}/profile`.
//!
//! The same server answers clients of every protocol revision from 2024-11-05 to 2026-07-28:
//! 2025 clients open a session with `initialize`, 2026-07-28 clients send stateless requests,
//! and handlers are written once for both.
//!
//! ```
//! use wharf::{Args, Server, ToolDef};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo {
//!     /// The text to send back.
//!     message: String,
//! }
//!
//! # async fn run() -> Result<(), wharf::Error> {
//! let server = Server::builder("echo-server", "1.0.0")
//!     .tool(
//!         ToolDef::new("echo", |Args(echo): Args<Echo>| async move { echo.message })
//!             .description("Echo a message back"),
//!     )
//!     .build()?;
//! wharf::serve_stdio(server).await
//! # }
//! ```
//!
//! Test a server without processes or ports with [`testing::InMemoryClient`].
//!
//! # With the `#[tool]` macro
//!
//! The same tool, its argument a parameter and the doc comment its description; `#[arg]`
//! constraints become part of the schema and are enforced before the function runs:
//!
//! ```
//! use wharf::{Server, tool};
//!
//! /// Echo a message back.
//! #[tool]
//! async fn echo(#[arg(description = "The text to send back", max_length = 1000)] message: String) -> String {
//!     message
//! }
//!
//! # async fn run() -> Result<(), wharf::Error> {
//! let server = Server::builder("echo-server", "1.0.0").tool(echo_tool()).build()?;
//! # let _ = server;
//! # Ok(())
//! # }
//! ```
//!
//! # Crates
//!
//! `wharf` re-exports the pieces most servers need. Libraries that extend Wharf should depend
//! on `wharf-server` (the core) or `wharf-protocol` (the wire types) instead.

pub use wharf_server::{
    Args, Cancellation, CompletionCall, Error, EventStore, Extensions, FromToolCall, HttpOptions, Input,
    IntoPromptResult, IntoResourceContents, IntoToolResult, Json, McpBody, McpService, MemoryEventStore,
    MemoryTaskStore, Principal, PromptCall, PromptDef, Rejection, RequestContext, ResourceCall, ResourceDef, RpcError,
    Server, ServerBuilder, ServerOptions, SessionData, State, StdioOptions, StoreFuture, TaskRecord, TaskStatus,
    TaskStore, TaskStoreError, TaskSupport, TemplateDef, ToolCall, ToolDef, ToolHandler, UriTemplate, content,
    serve_connection, serve_http, serve_http_on, serve_stdio, serve_stdio_with, testing,
};

/// The MCP wire types, for every protocol revision.
pub use wharf_protocol as protocol;

pub use schemars;
pub use serde;
pub use serde_json;
pub use wharf_macros::{prompt, resource, resource_template, tool};

/// The README's examples, compiled as doctests so they cannot go stale.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Items the macros' expansions use; not part of the API.
#[doc(hidden)]
pub mod __private {
    /// What a `#[tool]` parameter's type needs to be a tool argument.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool argument: it has no JSON Schema or cannot be deserialized",
        label = "this argument type",
        note = "derive `serde::Deserialize` and `schemars::JsonSchema` for `{Self}` (its doc comments become \
                descriptions), or take it through an extractor"
    )]
    pub trait ToolArgument {}

    impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> ToolArgument for T {}

    /// Checks, at the type's own span, that `T` can be a tool argument.
    pub const fn tool_argument<T: ToolArgument>() {}
}
