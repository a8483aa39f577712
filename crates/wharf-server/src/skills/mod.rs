//! The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): skills defined in code
//! or read from a directory, compiled into a catalog that lists them (`skills/list`,
//! `skills/get`), serves their files as `skill://` resources and answers
//! `resources/directory/read` on their directories.
//!
//! Floors, from the bottom: `names.rs` (the Agent Skills naming rules, paths in URIs),
//! `frontmatter.rs` (a `SKILL.md`'s frontmatter, read by `wharf-frontmatter` and checked), `open_directory.rs` ([`OpenDirectory`]: a directory
//! read from its handle, never through a link), `definition.rs` ([`SkillDef`], [`Skills`]),
//! `scan.rs` (a directory read into [`Skills`]), `catalog.rs` (the compiled, served form).

pub(crate) mod catalog;
mod definition;
mod frontmatter;
mod names;
mod open_directory;
mod scan;

pub use catalog::CompiledSkills;
pub use definition::{GenerateFiles, SkillDef, Skills};
pub use frontmatter::yaml_frontmatter;
pub use names::file_path_in_uri;
pub use open_directory::{DirectoryEntry, EntryKind, OpenDirectory};
pub use wharf_frontmatter::{FrontmatterError, FrontmatterErrorKind};
