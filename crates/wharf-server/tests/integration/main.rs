//! Integration tests of the server core, driven through the in-memory client. Every test checks
//! what the server sent against the official schema of the revision in use.

mod faults;
mod fixture;
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
