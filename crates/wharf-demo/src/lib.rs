//! What `wharf serve` runs, in a crate of its own so that the `dist` profile builds it for
//! speed while the rest of the `wharf` binary is built for size (a handler's generic code is
//! compiled in the crate that registers it, the allocator's in the crate that picks it, and a
//! server's loop in the crate that runs it on a runtime): the demo server, serving it, the
//! allocator, and the allocator's ballast for the stdio read thread. It prints the two lines
//! of a graceful shutdown; the rest of the binary's output is `wharf-cli`'s.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. `dice/` (the MCP Apps view `ui://wharf-demo/dice`, `view.html`, and its two tools,
//!    `roll_dice` and the app-only `roll_again`), `notes.rs` (`note_add`, a side effect that
//!    takes place once per idempotency key, and `demo://notes`), `report.rs` (`long_report`,
//!    text as long as asked, to see a result over a client's budget read in pages).
//! 2. `demo.rs` (the demo server: the seed examples plus tools that show progress, logging,
//!    elicitation and sampling), `ballast.rs` (one small block of every size up to 1 KiB, held
//!    by the stdio read thread and by the HTTP runtime's threads, so that mimalloc never finds
//!    a page emptied by a request).
//! 3. `serving.rs` (serving the demo on the command line's runtime: over stdio, its read thread
//!    holding the ballast; over HTTP, until SIGINT or SIGTERM starts a graceful shutdown; the
//!    two signals heard from start-up on, for a process that must stop what it started).
//! 4. `lib.rs`: the global allocator (mimalloc).

mod ballast;
mod demo;
mod dice;
mod notes;
mod report;
mod serving;

pub use ballast::hold_on_this_thread as hold_ballast_on_this_thread;
pub use demo::{ADMIN_SCOPE, DemoOptions, builder, builder_with, server, with_authenticated_tools, with_whoami};
pub use notes::NOTES;
pub use serving::{StopSignals, serve_http, serve_http_until, serve_stdio, serve_stdio_until, shutdown_signal};

// Every request allocates a handful of small objects, which mimalloc serves faster than the
// system allocator; its v2 line, because the Rust binding calls aligned entry points that v3
// routes through a slower path; transparent huge pages off (`no_thp`), which would cost
// memory. The measurements are in benches/NOTES.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
