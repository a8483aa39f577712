//! The guide: every feature in turn, each with a short example that runs.
//!
//! Each chapter is a Markdown file in the crate's `guide/` directory, and every Rust example in
//! it is compiled as a test of the `wharf` crate (`cargo test --doc -p wharf`), so none can go
//! stale; those with assertions run against an [`InMemoryClient`](crate::testing::InMemoryClient)
//! (see [testing]). The repository's README has the first steps: the demo, the test command, and
//! a server of your own over stdio and over HTTP.
//!
//! What every server uses is at the crate root; the rest is grouped by topic (`wharf::tool`,
//! `wharf::prompt`, `wharf::resource`, `wharf::completion`, `wharf::request`, `wharf::task`,
//! `wharf::stdio`, `wharf::http`, `wharf::content`, `wharf::testing`, `wharf::logging`,
//! `wharf::protocol`). Three Cargo features, all on by default: `http` (Streamable HTTP, on
//! hyper), `macros` (the attribute macros) and `logging` (`wharf::logging`). A stdio-only server
//! builds without hyper: `wharf = { path = "/path/to/wharf/crates/wharf", default-features =
//! false, features = ["macros", "logging"] }`.
//!
//! # Writing a server
//!
//! - [tools]: `#[tool]` and `ToolDef`, arguments checked against their schema, errors, tools
//!   on an `impl` block.
//! - [structured_output]: `Json<T>`, `structuredContent` and `outputSchema`.
//! - [progress_logging_cancellation]: what a handler says while it works, and when to stop.
//! - [prompts]: templates and functions.
//! - [resources]: resources, templates, completion, and changes while the server runs.
//! - [skills]: Agent Skills through the Skills extension (the `skills` feature).
//! - [apps]: MCP Apps views for tools, checked when the server is built (the `apps` feature).
//! - [state]: state shared by every tool, and data per session.
//! - [asking_the_user]: elicitation, sampling and roots, written once for both eras.
//! - [tasks]: tool calls that outlive their request.
//! - [exactly_once_and_large_results]: calls that take effect once per idempotency key, and
//!   results over a client's budget read in pages.
//! - [testing]: a server driven in memory, in both eras.
//!
//! # Serving it
//!
//! - [http]: Streamable HTTP, its limits and quotas, and a session with curl.
//! - [auth]: principals, authenticators, OAuth 2.1 bearer tokens and scopes.
//! - [deployment]: several replicas behind a load balancer, on Redis, with nginx.
//! - [middleware]: layers, and the built-in rate limits, timeouts, concurrency limits and audit.
//! - [observability]: OpenTelemetry traces and metrics, and Prometheus.
//!
//! # The `wharf` command and the client
//!
//! - [cli]: `wharf list`, `call`, `check`, `login`, `tokens`, `bench`, `new` and `install`.
//! - [client]: the same client, in Rust (the `client` feature).
//! - [folder]: `wharf serve DIR`, a server from a folder with no Rust written.
//! - [gateway]: `wharf gateway`, many servers behind one, bridging protocol eras (the `gateway`
//!   feature).
//! - [openapi]: `wharf serve --openapi`, an HTTP API's operations as tools (the `openapi`
//!   feature).
//!
//! # Wharf itself
//!
//! - [development]: the repository's tests, fuzzing, performance and status.

#[doc = include_str!("../../guide/gateway.md")]
pub mod gateway {}

#[doc = include_str!("../../guide/openapi.md")]
pub mod openapi {}

#[doc = include_str!("../../guide/tools.md")]
pub mod tools {}

#[doc = include_str!("../../guide/structured_output.md")]
pub mod structured_output {}

#[doc = include_str!("../../guide/progress_logging_cancellation.md")]
pub mod progress_logging_cancellation {}

#[doc = include_str!("../../guide/prompts.md")]
pub mod prompts {}

#[doc = include_str!("../../guide/resources.md")]
pub mod resources {}

#[doc = include_str!("../../guide/skills.md")]
pub mod skills {}

#[doc = include_str!("../../guide/apps.md")]
pub mod apps {}

#[doc = include_str!("../../guide/state.md")]
pub mod state {}

#[doc = include_str!("../../guide/asking_the_user.md")]
pub mod asking_the_user {}

#[doc = include_str!("../../guide/tasks.md")]
pub mod tasks {}

#[doc = include_str!("../../guide/exactly_once_and_large_results.md")]
pub mod exactly_once_and_large_results {}

#[doc = include_str!("../../guide/testing.md")]
pub mod testing {}

#[doc = include_str!("../../guide/http.md")]
pub mod http {}

#[doc = include_str!("../../guide/auth.md")]
pub mod auth {}

#[doc = include_str!("../../guide/deployment.md")]
pub mod deployment {}

#[doc = include_str!("../../guide/middleware.md")]
pub mod middleware {}

#[doc = include_str!("../../guide/observability.md")]
pub mod observability {}

#[doc = include_str!("../../guide/cli.md")]
pub mod cli {}

#[doc = include_str!("../../guide/client.md")]
pub mod client {}

#[doc = include_str!("../../guide/folder.md")]
pub mod folder {}

#[doc = include_str!("../../guide/development.md")]
pub mod development {}

// The README's rust blocks (the quick start's two programs) are doctests too; only when
// doctests are collected, so that a build never reads a file outside the crate.
#[cfg(doctest)]
#[doc = include_str!("../../../../README.md")]
mod readme {}
