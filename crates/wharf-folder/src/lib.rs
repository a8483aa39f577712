//! A Wharf MCP server from a folder, with no Rust written: skills (`skills/**/SKILL.md`, the
//! Skills extension), prompts (`prompts/*.md`, YAML frontmatter and a template body),
//! resources (every file under `resources/`), and command tools (`[[tools]]` in `wharf.toml`
//! or `tools.toml`: a program and an argv template, never a shell). [`watch`] serves each new
//! version of the folder as it is saved.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let loaded = wharf_folder::Loaded::load("my-server")?;
//! let served = loaded.summary().clone();
//! let server = loaded.builder_for_watching().build()?;
//! let _watching = wharf_folder::watch(server.clone(), "my-server", served)?;
//! wharf_server::serve_stdio(server).await?;
//! # Ok(()) }
//! ```
//!
//! Floors, from the bottom: `error.rs`; `config.rs` (`wharf.toml`); `command.rs` (argv
//! templates); `descendants.rs` (everything a program started, found and killed); `run.rs`
//! (running a program); `tools.rs`, `prompts.rs`, `resources.rs` (each kind of file into its
//! component); `folder.rs` ([`Loaded`]: the folder read whole, from its handle); `watch.rs`
//! (reloads).

mod command;
mod config;
mod descendants;
mod error;
mod folder;
mod prompts;
mod resources;
mod run;
mod tools;
mod watch;

pub use error::FolderError;
pub use folder::{Loaded, Summary};
pub use watch::{Watching, watch};
