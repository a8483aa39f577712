//! Differential fuzzing of Wharf's hand-written JSON readers and writers: each target generates
//! input shaped like what reaches that code (JSON-RPC messages, tool arguments, argument
//! schemas, outgoing values, URI templates), with the awkward parts on purpose, and holds
//! Wharf's answer to a reference (serde_json's strict decoder and encoder, the `jsonschema`
//! validator, a round trip) case by case.
//!
//! Floors: `rng` and `mutate` (leaves), `json_text`, `reference` and `target`, then `targets`
//! and `runner`; `main.rs` is the `wharf-fuzz` command that `scripts/fuzz` runs.
//!
//! Built only with `--cfg fuzzing` (`scripts/fuzz` sets it), which exposes `wharf-server`'s
//! private argument checks to it; without it the crate is empty.

#![cfg(fuzzing)]

pub mod json_text;
pub mod mutate;
pub mod reference;
pub mod rng;
pub mod runner;
pub mod target;
pub mod targets;

pub use rng::Rng;
pub use runner::{Budget, Finding, Report, replay, run};
pub use target::Target;
pub use targets::all_targets;
