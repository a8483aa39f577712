//! Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension): a server lists skills,
//! each a `SKILL.md` with YAML frontmatter and its supporting files, every file named with its
//! digest and size so that a client can check what it reads before it uses it.

use serde::{Deserialize, Serialize};

use crate::types::common::JsonObject;
use crate::types::result::result_struct;

/// The extension id, in `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// One file of a skill, read with `resources/read`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFile {
    /// Where to read it.
    pub uri: String,
    /// `sha256:` and the lowercase hex SHA-256 of its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Its length in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// A skill as `skills/list` names it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// Its `SKILL.md`.
    pub uri: String,
    /// The frontmatter of its `SKILL.md` (at least `name` and `description`), which the file
    /// must match when it is read.
    pub frontmatter: JsonObject,
    /// Its files, `SKILL.md` among them.
    #[serde(default)]
    pub resources: Vec<SkillFile>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

result_struct! {
    /// Result of `skills/list`.
    #[cacheable]
    pub struct ListSkillsResult {
        /// The skills.
        pub skills: Vec<Skill>,
        /// Where the next page starts.
        #[serde(rename = "nextCursor", default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<String>,
    }
}
