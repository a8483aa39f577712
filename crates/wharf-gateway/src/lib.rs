//! A gateway that composes MCP servers behind one Wharf [`Server`](wharf_server::Server):
//! upstreams (a program on stdio, a Streamable HTTP URL, a server in this process) are mounted
//! under namespaces, and their tools, prompts, resources and resource templates become the
//! gateway's own, so that every
//! transport, authentication, middleware and store of Wharf applies to them unchanged.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use wharf_gateway::{Gateway, Mount};
//!
//! let server = Gateway::new("gateway", "1.0.0")
//!     .mount(Mount::command("everything", "npx", ["@modelcontextprotocol/server-everything"]))
//!     .mount(Mount::url("docs", "http://127.0.0.1:9000/mcp"))
//!     .build()
//!     .await?;
//! wharf_server::serve_stdio(server).await?;
//! # Ok(())
//! # }
//! ```
//!
//! A call of `docs_search` reaches the mount `docs` as `search`, its arguments and result as
//! they are, the upstream's progress coming back and the client's cancellation going on; an
//! upstream's JSON-RPC error is passed on as it was, and a mount that does not answer is an
//! error naming it. Resource URIs get the namespace as a scheme prefix: the mount `docs`'s
//! `file:///a.txt` is `docs+file:///a.txt`, in lists and in what a read returns; an MCP Apps
//! view keeps the `ui://` hosts render: `ui://app/main` is `ui://docs/app/main`, and the tools
//! that name it name it there.
//!
//! # Floors, from the bottom up
//! 1. `error.rs` ([`GatewayError`], [`GatewayErrorKind`]), `names.rs` (namespaced names within
//!    the tool-name rules, resource URIs behind a scheme prefix), `kind.rs` (the kinds of
//!    component), `relay.rs` (who answers an upstream's question during one request: the
//!    client at once, or a queue a 2026-07-28 request parks on), `ids.rs` (ids no one can
//!    guess), `replica.rs` (the messages between the replicas of a gateway on a
//!    [`Bus`](wharf_server::Bus)).
//! 2. `mount.rs` ([`Mount`]: one upstream, its namespace, client options, and what it offers
//!    to whom), `claims.rs` (which mount holds each name), `parked.rs` (upstream requests
//!    waiting between a 2026-07-28 client's rounds, and
//!    the round state that finds them again, on this replica or another), `views.rs` (MCP Apps
//!    views and the tools that name them, under the gateway's URIs).
//! 3. `upstream.rs` (reaching a mount; an upstream's failure as the gateway's answer), `task.rs`
//!    (tasks across the gateway: a mounted call stays a call until its upstream makes a task),
//!    `step.rs` (what a parked upstream request does next: progress, questions, its answer),
//!    `elsewhere.rs` (a retry that lands on another replica than the one holding its upstream
//!    request, carried there and back), `view_calls.rs` (an MCP Apps view's calls of its
//!    server's tools by their upstream names).
//! 4. `connection.rs` (a mount's upstream kept up: down, why, started again), `health.rs`
//!    ([`Health`]).
//! 5. `link.rs` (what every proxy of a mount holds).
//! 6. `forward.rs` (one request forwarded in the client's era, with progress, logs and
//!    questions carried back).
//! 7. `proxy.rs` (the gateway's tool, prompt, resource or template for an upstream's).
//! 8. `component.rs` (an upstream as the gateway holds it, and its components of each kind).
//! 9. `subscribe.rs` (resource subscriptions made upstream), `watch.rs` (an upstream's list
//!    changes and updates carried to the gateway's clients; a program that exited started
//!    again).
//! 10. `attach.rs` (a mount reached, listed, its names claimed).
//! 11. `handle.rs` ([`GatewayHandle`]: mounts added and taken away while the gateway serves).
//! 12. `lazy.rs` (mounts started with the gateway's first request).
//! 13. `gateway.rs` ([`Gateway`]: the builder that mounts upstreams and yields the server).

mod error;
mod ids;
mod kind;
mod names;
mod relay;
mod replica;

mod claims;
mod mount;
mod parked;
mod views;

mod elsewhere;
mod step;
mod task;
mod upstream;
mod view_calls;

mod connection;
mod health;

mod link;

mod forward;

mod proxy;

mod component;

mod subscribe;
mod watch;

mod attach;

mod handle;

mod lazy;

mod gateway;

pub use error::{GatewayError, GatewayErrorKind};
pub use gateway::Gateway;
pub use handle::GatewayHandle;
pub use health::Health;
pub use mount::Mount;
