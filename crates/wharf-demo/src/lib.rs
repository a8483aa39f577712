//! What `wharf serve` runs, in a crate of its own so that the `dist` profile builds it for
//! speed while the rest of the `wharf` binary is built for size (a handler's generic code is
//! compiled in the crate that registers it, the allocator's in the crate that picks it, and a
//! server's loop in the crate that runs it on a runtime): the demo server, serving it, the
//! allocator, and the allocator's ballast for the stdio read thread.

mod ballast;
mod demo;
mod serving;

pub use demo::{ADMIN_SCOPE, builder, server, with_authenticated_tools};
pub use serving::{serve_http, serve_stdio};

// Every request allocates a handful of small objects, which mimalloc serves faster than the
// system allocator; its v2 line, because the Rust binding calls aligned entry points that v3
// routes through a slower path; transparent huge pages off (`no_thp`), which would cost
// memory. The measurements are in benches/NOTES.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
