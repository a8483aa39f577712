//! Skills as a server defines them: each a path and its files held in memory, or a `SKILL.md`
//! and files generated when they are read; and the set of them a server serves.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;

/// Makes the files of a generated skill (all but its `SKILL.md`): paths relative to the skill
/// and their contents, as they are now.
pub type GenerateFiles = Arc<dyn Fn() -> Vec<(String, Vec<u8>)> + Send + Sync>;

/// One skill: where it is served (`skill://<path>/SKILL.md`) and its files.
///
/// ```
/// use wharf_server::SkillDef;
///
/// let skill = SkillDef::new("acme/refunds")
///     .file("SKILL.md", "---\nname: refunds\ndescription: Process refund requests\n---\n# Refunds\n")
///     .file("references/policy.md", "Refunds within 30 days.\n");
/// ```
#[derive(Clone)]
pub struct SkillDef {
    pub(crate) path: String,
    pub(crate) files: BTreeMap<String, Bytes>,
    pub(crate) generated: Option<GenerateFiles>,
}

impl std::fmt::Debug for SkillDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillDef")
            .field("path", &self.path)
            .field("files", &self.files.keys().collect::<Vec<_>>())
            .field("generated", &self.generated.is_some())
            .finish()
    }
}

impl SkillDef {
    /// A skill at `path` (`refunds`, or `acme/billing/refunds` under a prefix), whose last
    /// segment must be the `name` in its `SKILL.md`. Add its files with [`SkillDef::file`].
    pub fn new(path: impl Into<String>) -> SkillDef {
        SkillDef { path: path.into(), files: BTreeMap::new(), generated: None }
    }

    /// Adds a file at `path` inside the skill (`SKILL.md`, `references/GUIDE.md`).
    pub fn file(mut self, path: impl Into<String>, contents: impl Into<Bytes>) -> SkillDef {
        self.files.insert(path.into(), contents.into());
        self
    }

    /// A skill whose files besides `skill_md` are made by `files` each time they are read or
    /// listed: its entry says `"resources": "dynamic"`, as no digest can be published ahead.
    pub fn generated(
        path: impl Into<String>,
        skill_md: impl Into<Bytes>,
        files: impl Fn() -> Vec<(String, Vec<u8>)> + Send + Sync + 'static,
    ) -> SkillDef {
        SkillDef::new(path).file(SKILL_MD, skill_md).with_generator(Arc::new(files))
    }

    fn with_generator(mut self, generate: GenerateFiles) -> SkillDef {
        self.generated = Some(generate);
        self
    }
}

/// The file every skill has at its root.
pub(crate) const SKILL_MD: &str = "SKILL.md";

/// The skills a server serves (the `io.modelcontextprotocol/skills` extension), and whether
/// it answers `resources/directory/read` on their directories.
#[derive(Debug, Clone)]
pub struct Skills {
    pub(crate) skills: Vec<SkillDef>,
    pub(crate) directory_read: bool,
}

impl Default for Skills {
    fn default() -> Skills {
        Skills { skills: Vec::new(), directory_read: true }
    }
}

impl Skills {
    /// No skills yet; directory reads on.
    pub fn new() -> Skills {
        Skills::default()
    }

    /// Adds a skill.
    pub fn skill(mut self, skill: SkillDef) -> Skills {
        self.skills.push(skill);
        self
    }

    /// Whether `resources/directory/read` is answered (declared as `directoryRead`); on unless
    /// turned off.
    pub fn directory_read(mut self, enabled: bool) -> Skills {
        self.directory_read = enabled;
        self
    }

    /// The skills defined so far.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }
}
