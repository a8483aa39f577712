//! Differential fuzzing of Wharf's hand-written JSON readers and writers: each target generates
//! input shaped like what reaches that code (JSON-RPC messages, tool arguments, argument
//! schemas, outgoing values, URI templates), with the awkward parts on purpose, and holds
//! Wharf's answer to a reference (serde_json's strict decoder and encoder, the full JSON Schema
//! validator of `wharf-schema`, a round trip) case by case.
//!
//! Built only with `--cfg fuzzing` (`scripts/fuzz` sets it), which exposes `wharf-server`'s
//! private argument checks to it; without it the crate is empty. Not published.
//!
//! The targets: `incoming` (`Incoming::parse` against `Envelope::parse` and
//! `ClientRequest::decode`), `arguments` (`value_from_str` and `to_unique_object` against
//! serde_json and a tree of every member as written), `encoder` (`encode` against
//! `serde_json::to_vec` over serde's whole data model), `shape` (the plain-schema checker, its
//! fused read, and the whole tool argument check against the full validator), `uri_template` (an
//! expansion matches back to its values, and no URI up to 64 KiB takes more than a few
//! milliseconds). `corpus/<target>/` keeps the cases that found bugs, which
//! `tests/corpus.rs` replays before it runs every target briefly from a fixed seed.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. `rng.rs` (SplitMix64, so that a seed names a run), `reference.rs` (serde_json's reading,
//!    and a tree of every member as written).
//! 2. `json_text.rs` (JSON text with the awkward parts on purpose: escapes, surrogates, edge
//!    numbers, repeated and escaped member names, nesting past serde_json's limit, near-miss
//!    tokens), `mutate.rs` (byte damage), `target.rs` (`Target`: generate a case, check
//!    one case).
//! 3. `targets/<target>.rs` (one file per target), `runner.rs` (time or case budgets, panics
//!    caught as findings, replay of saved cases).
//! 4. `targets/mod.rs` (`all_targets`).
//!
//! The `wharf-fuzz` command that `scripts/fuzz` runs is `main.rs` over `command.rs`.

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
