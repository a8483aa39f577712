//! A Wharf MCP server from a folder, with no Rust written: skills (`skills/**/SKILL.md`, the
//! Skills extension), prompts (`prompts/*.md`, YAML frontmatter and a template body),
//! resources (every file under `resources/`), MCP Apps views (`apps/NAME.html`, served as
//! `ui://apps/NAME`, linked to the tools their frontmatter names), and command tools
//! (`[[tools]]` in `wharf.toml` or `tools.toml`: a program and an argv template, never a shell). [`watch`] serves each new
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
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. `error.rs` ([`FolderError`]: every problem, with its file), `config.rs` (`wharf.toml` and
//!    `tools.toml`: `[server]`, `[resources] scheme`, `[[tools]]`, arguments into an input
//!    schema), `command.rs` (argv templates: `{name}` placeholders, a whole-word one becoming
//!    zero, one or several argv elements; the program always written out), `descendants.rs`
//!    (everything a program started, found in `/proc` by group, descent and the run's mark,
//!    stopped, then killed), `prompts.rs`, `resources.rs` and `apps.rs` (a prompt file, a
//!    resource file, a view file, into its component).
//! 2. `run.rs` (a program run without a shell, with only the environment allowed, in a process
//!    group of its own killed with all it started when the call ends early, output bounded).
//! 3. `tools.rs` (a `[[tools]]` entry into a command tool).
//! 4. `folder.rs` ([`Loaded`]: the folder read from its handle and checked whole, then a
//!    `ServerBuilder`, or a replacement through `Server::update`).
//! 5. `watch.rs` ([`watch`]: `notify`, a settle delay, a reload that keeps the version before
//!    when the new one has a problem).

mod apps;
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
