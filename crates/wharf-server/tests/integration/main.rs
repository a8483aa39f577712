//! Integration tests of the server core. Most are driven through the in-memory client and check
//! what the server sent against the official schema of the revision in use (`spec.rs`);
//! `http.rs` and `http_streams.rs` write raw HTTP/1.1 bytes to a served endpoint and read the
//! raw answers.

#[cfg(feature = "http")]
mod auth_hook;
mod faults;
mod fixture;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_streams;
mod input;
#[cfg(feature = "http")]
mod limits;
mod listen;
mod middleware;
mod middleware_chain;
mod prompts_resources;
#[cfg(feature = "http")]
mod quotas;
mod runtime;
#[cfg(feature = "http")]
mod scopes;
mod session;
#[cfg(feature = "skills")]
mod skills;
mod spec;
mod stateless;
mod tasks;
mod tools;
