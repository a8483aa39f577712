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
//! The [`guide`] takes every feature in turn, each with a short example that runs: tools,
//! structured output, progress and logging, prompts, resources and templates, shared state,
//! asking the user for input in both eras, tasks, testing, and serving over HTTP (with curl).
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
//! # Modules and features
//!
//! What every server uses is at the root; the rest is grouped by topic: [`tool`](mod@tool),
//! [`prompt`](mod@prompt), [`resource`](mod@resource), [`completion`], [`request`], [`task`], [`stdio`], `http`, [`content`],
//! [`testing`], [`protocol`] (the wire types) and `logging`. Features: `http` (Streamable HTTP,
//! on hyper), `macros` (the attribute macros) and `logging` (`logging::init()`, a `tracing`
//! subscriber on stderr filtered by `WHARF_LOG` or `RUST_LOG`), all on by default; a stdio-only
//! server builds with `default-features = false`. Off by default: `otel`, `auth`, `redis`,
//! `skills` (the Skills extension), `apps` (MCP Apps views: `ResourceDef::view`, `ToolDef::view`
//! and `ToolDef::visibility`, checked when the server is built), `client` (an MCP client, `wharf::client`;
//! `client-oauth` and `client-tls` add OAuth and `https://`), `gateway` (many servers
//! mounted under namespaces behind one, `wharf::gateway`) and `openapi` (an HTTP API's OpenAPI
//! document as tools, `wharf::openapi`; `openapi-tls` adds `https://` APIs).
//!
//! # Crates
//!
//! `wharf` re-exports the pieces most servers need. Libraries that extend Wharf should depend
//! on `wharf-server` (the core) or `wharf-protocol` (the wire types) instead.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. `lib.rs`: what every server uses, at the root, and the topic modules, each re-exporting
//!    an explicit list (no glob re-exports); `guide/` (the chapters, Markdown files in the
//!    crate's `guide/` directory whose examples are doctests).
//! 2. `logging.rs` (`logging::init()`: a `tracing` subscriber on stderr filtered by `WHARF_LOG`
//!    or `RUST_LOG`, with the telemetry's layer under the `otel` feature).

#[cfg(feature = "logging")]
pub mod logging;

// What every server uses, at the root.
#[cfg(feature = "http")]
pub use http::{HttpOptions, serve as serve_http};
pub use prompt::PromptDef;
pub use request::RequestContext;
pub use resource::{ResourceDef, TemplateDef};
pub use stdio::serve_stdio;
pub use tool::{Args, Json, SessionData, State, ToolDef};
#[cfg(feature = "macros")]
pub use wharf_macros::{include_view, prompt, resource, resource_template, tool};
pub use wharf_server::{Error, Offer, RpcError, Server, ServerBuilder, ServerOptions};

/// Tools: [`tool::ToolDef`], the handler trait, the extractors a handler takes and the
/// values it returns.
pub mod tool {
    pub use wharf_server::{
        Args, FromToolCall, IntoToolResult, Json, Rejection, SessionData, State, ToolCall, ToolDef, ToolHandler,
    };
}

/// Prompts: static templates and dynamic handlers.
pub mod prompt {
    pub use wharf_server::{IntoPromptResult, PromptCall, PromptDef};
}

/// Resources and resource templates (RFC 6570 URI templates).
pub mod resource {
    pub use wharf_server::{
        IntoResourceContents, ResourceCall, ResourceDef, TemplateDef, TemplateError, UriTemplate, mime_type_for,
    };
}

/// The Skills extension (SEP-2640): skills a client lists with `skills/list`, fetches with
/// `skills/get` and reads as `skill://` resources, each file with its digest and size.
#[cfg(feature = "skills")]
pub mod skills {
    pub use wharf_server::{
        CompiledSkills, FrontmatterError, FrontmatterErrorKind, GenerateFiles, SkillDef, Skills, file_path_in_uri,
        yaml_frontmatter,
    };
}

/// Completion of prompt arguments and template variables.
pub mod completion {
    pub use wharf_server::{CompletionCall, MAX_COMPLETION_VALUES};
}

/// What a handler knows of its request, and its ways back to the client: progress, logging,
/// cancellation and input ([`Input`](request::Input)).
pub mod request {
    pub use wharf_server::{Cancellation, Extensions, Input, Principal, RequestContext};
}

/// Tasks: tool calls that outlive their request, and where their records are kept.
pub mod task {
    pub use wharf_server::{
        MemoryTaskStore, StoreFuture, TaskRecord, TaskSignal, TaskStatus, TaskStore, TaskStoreError, TaskSupport,
    };
}

/// Tool calls that take effect once: a tool with [`Idempotency`](idempotency::Idempotency)
/// has each call's key claimed in an [`IdempotencyStore`](idempotency::IdempotencyStore)
/// before its handler runs, and a repeated call answered with the first one's result.
pub mod idempotency {
    pub use wharf_server::{
        Claimed, IDEMPOTENCY_KEY_META, IDEMPOTENCY_TOOL_META, IDEMPOTENT_REPLAY_META, Idempotency, IdempotencyStore,
        IdempotencyStoreError, MemoryIdempotencyStore, arguments_fingerprint, derived_key,
    };
}

/// Results of any size: a [`ResultBudget`](results::ResultBudget) per server
/// ([`ServerBuilder::max_result`]), per tool ([`ToolDef::max_result`]) or per client
/// ([`ServerBuilder::max_result_for_client`]); a result over it is answered with a preview and
/// a `resource_link` to the whole, read in pages from a [`ResultStore`](results::ResultStore).
pub mod results {
    pub use wharf_server::{
        MemoryResultStore, RESULT_SUMMARY_META, ResultBudget, ResultStore, ResultStoreError, SpilledPage, SpilledResult,
    };
    #[cfg(feature = "token-count")]
    pub use wharf_server::{TOKEN_ENCODING, count_tokens};
}

/// Middleware at the MCP request level: [`Layer`](middleware::Layer)s added with
/// [`ServerBuilder::layer`] see every request, in both eras and on every transport, and the
/// built-in ones limit rates, time out tools, bound concurrency and keep an audit log.
pub mod middleware {
    pub use wharf_server::middleware::{Audit, ConcurrencyLimit, Quota, RateKey, RateLimit, Timeout};
    pub use wharf_server::{
        Layer, LayerFuture, McpRequest, McpResponse, Next, OutboundKind, OutboundMessage, Subject, Transport, layer_fn,
    };
}

/// An OAuth 2.1 resource server (the `auth` feature): install it with
/// [`HttpOptions::authenticate`](crate::HttpOptions::authenticate).
#[cfg(feature = "auth")]
pub mod auth {
    pub use wharf_auth::{
        ConfigError, ConfigErrorKind, DpopMode, IntrospectionVerifier, JwtVerifier, MemoryReplayCache,
        ProofReplayCache, ReplayFuture, ResourceServer, ResourceServerBuilder, ResourceUrl, TokenVerifier,
        VerifyFuture,
    };
}

/// OpenTelemetry (the `otel` feature): a SERVER span and a duration per request, named as the
/// semantic conventions for MCP say, exported over OTLP/HTTP.
#[cfg(feature = "otel")]
pub mod otel {
    pub use wharf_otel::{
        OtelLayer, Telemetry, TelemetryBuilder, TelemetryError, TelemetryErrorKind, endpoint_in_environment,
    };
}

/// Newline-delimited JSON-RPC over stdin and stdout, or any pair of byte streams.
pub mod stdio {
    pub use wharf_server::{Serving, StdioOptions, serve_connection, serve_stdio, serve_stdio_with};
}

/// Streamable HTTP: the endpoint as a `tower::Service`, and serving it on an address (the
/// `http` feature, on by default).
#[cfg(feature = "http")]
pub mod http {
    pub use wharf_http::{
        AuthFuture, AuthRefusal, Authenticator, EventStore, HttpOptions, HttpParts, HttpRequest, McpBody, McpService,
        MemoryEventStore, Relayed, Serve, ServerCard, SessionChange, SessionLimits, SessionStore, SessionStoreError,
        StoredSession, WithGracefulShutdown, serve,
    };
    #[cfg(unix)]
    pub use wharf_http::{UnixPeer, bind_unix, serve_unix};
}

/// Stores on Redis or Valkey shared by several instances of a server behind a load balancer
/// (the `redis` feature): install them with
/// [`HttpOptions::session_store`](crate::http::HttpOptions::session_store).
#[cfg(feature = "redis")]
pub mod redis {
    /// The DPoP proofs every replica accepted (with the `auth` feature too).
    #[cfg(feature = "auth")]
    pub use wharf_redis::RedisProofReplayCache;
    pub use wharf_redis::{
        Redis, RedisBus, RedisError, RedisErrorKind, RedisIdempotencyStore, RedisResultStore, RedisSessionStore,
        RedisTaskStore,
    };
}

/// A gateway that mounts MCP servers (programs, URLs, servers in this process) under
/// namespaces behind one [`Server`] (the `gateway` feature).
#[cfg(feature = "gateway")]
pub mod gateway {
    pub use wharf_gateway::{Gateway, GatewayError, GatewayErrorKind, GatewayHandle, Health, Mount};
    pub use wharf_server::{Bus, BusError};
}

/// An HTTP API's OpenAPI 3.0/3.1 document as tools, one per operation, whose calls stay on
/// their operation's path and the configured host (the `openapi` feature).
#[cfg(feature = "openapi")]
pub mod openapi {
    pub use wharf_openapi::{
        BaseUrl, Body, BodyKind, Credential, OpenApi, OpenApiError, OpenApiErrorKind, OperationTool, Operations,
        Parameter, Place, operations,
    };
}

/// An MCP client for any server, over stdio or Streamable HTTP, in both eras (the `client`
/// feature; `client-tls` adds `https://` URLs).
#[cfg(feature = "client")]
pub mod client {
    pub use wharf_client::{
        Answer, Client, ClientError, ClientHandler, ClientOptions, ErrorKind, HttpConnector, LoadedSkill, NoHandler,
        Notifications, PreparedRequest, RequestOptions, StderrMode, Target, http_connector, unsupported,
    };

    /// OAuth 2.1 authorization for the client (the `client-oauth` feature).
    #[cfg(feature = "client-oauth")]
    pub use wharf_client::oauth;
}

#[doc(inline)]
pub use wharf_server::{cassette, content, testing};

/// The MCP wire types, for every protocol revision.
#[doc(inline)]
pub use wharf_protocol as protocol;

pub use schemars;
pub use serde;
pub use serde_json;

pub mod guide;

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
