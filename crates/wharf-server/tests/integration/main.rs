//! Integration tests of the server core, driven through the in-memory client; what the server
//! sent is checked against the official schema of the revision in use
//! (`wharf_testkit::schemas`). Streamable HTTP's tests are `wharf-http`'s.

#[cfg(feature = "apps")]
mod apps;
mod faults;
mod idempotency;
mod input;
mod large_results;
mod listen;
mod middleware;
mod middleware_chain;
mod prompts_resources;
mod runtime;
mod session;
#[cfg(feature = "skills")]
mod skills;
mod stateless;
mod tasks;
mod tools;
