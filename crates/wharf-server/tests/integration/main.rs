//! Integration tests of the server core. Most are driven through the in-memory client and check
//! what the server sent against the official schema of the revision in use (`spec.rs`); `http.rs`
//! writes raw HTTP/1.1 bytes to a served endpoint and reads the raw answers.

mod faults;
mod fixture;
#[cfg(feature = "http")]
mod http;
mod input;
mod listen;
mod prompts_resources;
mod runtime;
mod session;
mod spec;
mod stateless;
mod tasks;
mod tools;
