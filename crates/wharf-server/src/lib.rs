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
//!
//! # Floors, from the bottom up
//!
//! A file imports only from the floors below its own and from the files listed before it on
//! its own floor (`python3 ../shared/tools/modcycles.py` prints the layering the imports allow,
//! and `scripts/test` keeps the crate free of cycles). `lib.rs` declares each folder on the
//! floor of its `mod.rs`; `task/`'s clock, records, store and running tasks sit lower, among
//! the data.
//!
//! 1. **Leaves.** `cancel.rs` ([`Cancellation`]), `extensions.rs` ([`Extensions`]),
//!    `future.rs` (the boxed future handlers return), `message_buffer.rs` (the reusable encode
//!    buffer), `panic.rs` (the fault boundary around every handler), `principal.rs`
//!    ([`Principal`]: identity is issuer and subject; client id, scopes and claims are
//!    attributes), `client_key.rs` (whom a per-client quota counts a session or task against:
//!    the principal, else the address), `scopes.rs` (what a component requires, and RFC 6749
//!    scope tokens), `random.rs` (128-bit hex ids: sessions, tasks, URL elicitations),
//!    `glob.rs` ([`glob_matches`]: `*` and `?` patterns),
//!    [`content`] (content blocks and resource contents from raw bytes).
//! 2. **Data.** `options.rs` ([`ServerOptions`]), `offer.rs` ([`Offer`]: a kind declared in
//!    the capabilities before any is registered), `error.rs` ([`Error`], opaque with `is_*`
//!    queries; [`RpcError`], which knows its code and carries a private input-required mark),
//!    `wire.rs` (responses, errors and notifications as bytes), `lazy_queue.rs` (a queue to
//!    the client made on first use), `recent_client.rs` (the last client declaration, which
//!    sessions declaring the same share), `session.rs` (per connection: negotiated revision,
//!    log level, requests in flight, requests sent to the client, subscriptions, the outbound
//!    queue), `session_end.rs` ([`SessionEnd`]: what layers hear
//!    when a 2025 session ends), `delivery.rs` (what a transport hands a request: its sink,
//!    cancellation, stream control, principal, client address and, only when middleware is
//!    installed, the transport's own data), `task/time.rs`, `task/record.rs`, `task/store.rs`
//!    ([`TaskStore`]; the bounded [`MemoryTaskStore`] makes room with the biggest owner's
//!    finished tasks), `bus.rs` ([`Bus`]: channels between the instances of a deployment), `task/running_tasks.rs` (the tasks running here, and the quota of
//!    unfinished tasks per owner), `events.rs` (list changes, resource updates and task
//!    changes, broadcast); `schema/` (argument schemas from `schemars`: `shape.rs` and
//!    `shape/fused.rs` check plain schemas straight from the client's text, in one pass with
//!    the read when there are no defaults; in `mod.rs`, `ArgumentSchema::accept` decides how a
//!    call's arguments are accepted and `ArgumentSchema::read` is the only way to a value;
//!    `fuzzing.rs`, only with `--cfg fuzzing`, exposes the checks to `wharf-fuzz`); `layer/`,
//!    middleware, from the bottom up: `outbound.rs` ([`OutboundMessage`]), `request.rs`
//!    ([`McpRequest`], [`Subject`]), `response.rs` ([`McpResponse`]), `served.rs` (the end of a
//!    chain: the server's work on a request, made by dispatch before the layers run and held
//!    in the request's own future), `future.rs` ([`LayerFuture`]: a layer's own boxed work, a
//!    ready answer, or the server's work, unboxed), `mod.rs` ([`Layer`], [`layer_fn`],
//!    [`Next`]; the chain never names the server); then [`middleware`] (the built-in rate
//!    limit, timeout, concurrency limit and audit log).
//! 3. **Input rounds and tasks.** `input/seal.rs` (`requestState` sealed with HMAC-SHA256
//!    under named, rotatable keys), `input/digest.rs` (the parameter digest it is bound to),
//!    `input/mod.rs` (a 2026-07-28 request's answers so far and the inputs its handler still
//!    lacks, which become an `InputRequiredResult`), `task/mod.rs` ([`TaskSupport`], the tasks
//!    running here, input through `tasks/update`, a 2025-11-25 task `input_required` while its
//!    handler awaits the client, cooperative cancellation), `session_events.rs` (which server
//!    events a 2025 session hears of), `idempotency/` (calls that take effect once: keys, digests of canonical JSON as
//!    `input/digest.rs` makes them; [`Idempotency`]; the [`IdempotencyStore`] they are claimed
//!    in; a key held while its call runs), `large_result/` (results of any size: `tokens.rs`
//!    with the `token-count` feature, [`ResultBudget`], the [`ResultStore`], `spill.rs` fitting
//!    a result to a budget, `settings.rs`; its `owner.rs` and `pages.rs` sit above the request
//!    context and the resources they use).
//! 4. **The request context.** `server_core.rs` (what a request needs of its server: options,
//!    sealer, state), `context/mod.rs` ([`RequestContext`]), `context/outbound.rs` (progress,
//!    logging, notifications and requests the handler sends, marked `related-task` for a
//!    2025-11-25 task), `context/ask.rs` ([`Input`]: asking for input once for every era).
//! 5. **Components.** `completion.rs` (completion of prompt arguments and template
//!    variables); `tool/`: `output.rs` ([`IntoToolResult`]), `extract.rs` ([`ToolCall`], which
//!    borrows the tool's name, schema and context; [`FromToolCall`] with its sealed `reach`;
//!    [`Args`], [`State`], [`SessionData`]),
//!    `handler.rs` ([`ToolHandler`] over async functions of 0-6 extractors, which run before
//!    the handler's future is made), `mod.rs` ([`ToolDef`]); `prompt/`; `resource/`
//!    (`uri_template.rs`, RFC 6570 levels 1-3 matched without backtracking; `mime.rs`, a file's
//!    MIME type from its name); `skills/` (the `skills` feature, the Skills extension:
//!    `names.rs`, the Agent Skills naming rules and paths in `skill://` URIs; `definition.rs`,
//!    `SkillDef` and `Skills`; `frontmatter.rs`, a `SKILL.md`'s frontmatter read by
//!    `wharf-frontmatter` and checked; `open_directory.rs`, `OpenDirectory`: a directory read
//!    from its handle, never through a link, each file checked on the handle it is read from
//!    and read to a bound; `scan.rs`, skills read from a directory; `catalog.rs`, the compiled
//!    form: entries with digests and sizes, files by URI, each directory's children).
//! 6. **The server.** `registry.rs` (components in `BTreeMap`s by key, so lists are
//!    deterministic; one path for adding, removing and enabling every kind; cursor pagination;
//!    the capabilities follow from what is registered and what is offered), `server.rs`
//!    ([`Server`], shared and cheap to clone; the run-time API; server events), `builder.rs`
//!    ([`ServerBuilder`]), `update.rs` ([`Update`]: several components changed on a copy of the
//!    registry, which replaces it whole; one list change per list whose definitions differ).
//! 7. **Request handling.** `dispatch/`: `finish.rs` (the per-revision finisher: `resultType`,
//!    `serverInfo`, cache hints), `mirrored.rs` (the `Mcp-Param-*` check, for transports with
//!    headers), `skills.rs` (the Skills extension's methods, answered from the catalog),
//!    `methods.rs` (the methods both eras share; one generic `list`; the scope check; a result
//!    fitted to its client's budget), `settle.rs` (ending the idempotency key a call holds),
//!    `tasks.rs` (`tools/call` as a task, the `tasks/*` methods), `idempotent.rs` (a call of a
//!    tool with [`Idempotency`]: claimed, run or answered from the record); `listen.rs`
//!    (`subscriptions/listen`); `dispatch/mod.rs` (era classification, `initialize`, stateless
//!    `_meta` checks, capability gating, the method table; with layers installed the request
//!    goes through them first and the dispatcher ends the chain), `outcome.rs` (the one
//!    response every request gets, a panic's included), `client_messages.rs` (notifications,
//!    and answers to the server's requests), `batch.rs` (2025-03-26 batches, bounded in length
//!    and in the size of their answer).
//! 8. **The transport contract.** `contract.rs`: everything a transport may use of the engine
//!    (hidden from these docs); `scripts/check-transport-contract` keeps the line transports
//!    and `wharf-http` to it.
//! 9. **Transports.** `transport/`: `line_reader.rs` (lines bounded in length; a longer one is
//!    skipped), `write_batch.rs` (queued messages gathered into one write), `stdio_options.rs`
//!    ([`StdioOptions`]), `shared_writer.rs` (one output for a read thread and a writer thread;
//!    the read thread writes directly only while nothing queued is unwritten), `read_loop.rs`
//!    (decode, answer at once what never waits, a task for the rest, bounded by
//!    `max_in_flight`), `connection.rs` ([`serve_connection`]: where the read loop runs, the
//!    writer, server events to the session), `stdio.rs` ([`serve_stdio_with`]: stdin read by a
//!    thread with blocking calls, which may run a setup of the binary's, such as
//!    `wharf-demo`'s allocator ballast); then [`testing`] ([`testing::InMemoryClient`], which
//!    drives a server through the real line transport in memory), and [`cassette`] (a
//!    recorded session read, and sent to a server through that client to compare its answers).

// The floors of the crate docs above, from the bottom up; a file imports only from the floors
// below its own and from the files listed before it on its own floor. A folder is declared on
// the floor of its `mod.rs`; `task/`'s clock, records, store and running tasks sit lower, among
// the data.
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
mod glob;
mod random;
mod scopes;
// Data.
mod bus;
mod delivery;
mod error;
mod events;
mod layer;
mod lazy_queue;
pub mod middleware;
mod offer;
mod options;
mod recent_client;
mod schema;
mod session;
mod session_end;
mod wire;
// Input rounds, tasks, and what server events a 2025 session hears of.
mod input;
mod session_events;
mod task;
// After input/ and task/store.rs, whose digests and future type it uses.
mod idempotency;
mod large_result;
// The request context, over what it needs of its server.
mod context;
mod server_core;
// Components.
#[cfg(feature = "apps")]
mod apps;
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
// Transports, the in-memory client over them, and cassettes replayed through it.
pub mod cassette;
pub mod testing;
mod transport;

pub use builder::ServerBuilder;
pub use bus::{Bus, BusError};
pub use cancel::Cancellation;
pub use completion::{CompletionCall, MAX_COMPLETION_VALUES};
pub use context::RequestContext;
pub use context::ask::Input;
pub use error::{Error, RpcError};
pub use extensions::Extensions;
pub use glob::glob_matches;
pub use idempotency::{
    Claimed, IDEMPOTENCY_KEY_META, IDEMPOTENCY_TOOL_META, IDEMPOTENT_REPLAY_META, Idempotency, IdempotencyStore,
    IdempotencyStoreError, MemoryIdempotencyStore, arguments_fingerprint, derived_key,
};
pub use large_result::{
    MemoryResultStore, RESULT_SUMMARY_META, ResultBudget, ResultStore, ResultStoreError, SpilledPage, SpilledResult,
};
#[cfg(feature = "token-count")]
pub use large_result::{TOKEN_ENCODING, count_tokens};
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
pub use transport::serving::Serving;
pub use transport::stdio::{serve_stdio, serve_stdio_with};
pub use transport::stdio_options::StdioOptions;
pub use update::Update;

/// Hooks for Wharf's differential fuzzer; not part of the API.
#[cfg(fuzzing)]
#[doc(hidden)]
pub use schema::fuzzing;
