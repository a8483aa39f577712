//! Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension): a server lists skills,
//! each a `SKILL.md` with YAML frontmatter and its supporting files, every file named with its
//! digest and size so that a client can check what it reads before it uses it.

use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::types::common::JsonObject;
use crate::types::request_meta::RequestMeta;
use crate::types::resources::Resource;
use crate::types::result::result_struct;

/// The extension id, in `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The MIME type of a directory resource, which `resources/directory/read` lists.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// What `resources` says of a skill's files: every one, with its digest and size, or that they
/// are generated and cannot be digested ahead (`"dynamic"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` among them, each once.
    Files(Vec<SkillFile>),
    /// `"dynamic"`: the files are generated; a directory read is the way to find them.
    Dynamic,
}

impl Default for SkillResources {
    fn default() -> SkillResources {
        SkillResources::Files(Vec::new())
    }
}

impl SkillResources {
    /// The listed files; none for a dynamic skill.
    pub fn files(&self) -> &[SkillFile] {
        match self {
            SkillResources::Files(files) => files,
            SkillResources::Dynamic => &[],
        }
    }
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(files) => files.serialize(serializer),
            SkillResources::Dynamic => serializer.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SkillResources, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Files(Vec<SkillFile>),
            Word(String),
        }
        match Either::deserialize(deserializer)? {
            Either::Files(files) => Ok(SkillResources::Files(files)),
            Either::Word(word) if word == "dynamic" => Ok(SkillResources::Dynamic),
            Either::Word(word) => {
                Err(serde::de::Error::custom(format!("`resources` is a list of files or \"dynamic\", not \"{word}\"")))
            }
        }
    }
}

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
    /// Its files, `SKILL.md` among them, or `"dynamic"`; `None` when the server left it out,
    /// which makes the entry one a client must not load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<SkillResources>,
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

/// Params of `skills/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetSkillParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

result_struct! {
    /// Result of `skills/get`: one skill's entry, as `skills/list` gives it.
    #[cacheable]
    pub struct GetSkillResult {
        /// The skill.
        pub skill: Skill,
    }
}

/// Params of `resources/directory/read`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadDirectoryParams {
    /// The directory resource's URI, without a trailing slash.
    pub uri: String,
    /// The opaque cursor from the previous page's `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

result_struct! {
    /// Result of `resources/directory/read`: the directory's direct children, subdirectories
    /// with the MIME type [`DIRECTORY_MIME_TYPE`].
    pub struct ReadDirectoryResult {
        /// The children.
        pub resources: Vec<Resource>,
        /// Where the next page starts.
        #[serde(rename = "nextCursor", default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<String>,
    }
}
