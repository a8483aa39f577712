//! The skills compiled for serving: each skill's entry (frontmatter, and every file with its
//! digest and size), each file by URI, each directory's children. Built once from [`Skills`],
//! checked whole, and replaced whole, so that a listing and the files it names never disagree.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use wharf_protocol::{DIRECTORY_MIME_TYPE, Resource, Skill, SkillFile, SkillResources};

use crate::error::Error;
use crate::resource::mime::mime_type_for;
use crate::skills::definition::{GenerateFiles, SKILL_MD, SkillDef, Skills};
use crate::skills::frontmatter::read_frontmatter;
use crate::skills::names::{check_skill_path, file_path_in_uri};

/// The most files a skill may have, and their most bytes in all (SEP-2640).
const MAX_FILES: usize = 512;
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The URI scheme skills are served under.
const SCHEME: &str = "skill://";

/// One skill as `skills/list` and `skills/get` give it.
#[derive(Debug)]
pub(crate) struct SkillEntry {
    pub(crate) skill: Skill,
    /// Its `SKILL.md`, listed as a resource.
    pub(crate) skill_md: String,
    pub(crate) name: String,
    pub(crate) description: String,
}

/// One file, with what `resources/read` answers.
#[derive(Debug)]
pub(crate) struct ServedFile {
    pub(crate) bytes: Bytes,
    pub(crate) mime_type: &'static str,
}

/// A generated skill: its root and what makes its files.
struct Generated {
    root: String,
    files: GenerateFiles,
}

/// Each directory's children, by URI.
type Directories = BTreeMap<String, BTreeMap<String, Arc<Resource>>>;

/// The skills a server serves now.
pub(crate) struct Catalog {
    pub(crate) entries: BTreeMap<String, Arc<SkillEntry>>,
    files: HashMap<String, Arc<ServedFile>>,
    directories: Directories,
    generated: Vec<Generated>,
    pub(crate) directory_read: bool,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog").field("skills", &self.entries.keys().collect::<Vec<_>>()).finish_non_exhaustive()
    }
}

impl Catalog {
    /// Checks and compiles `skills`: names and paths by the Agent Skills rules, each
    /// `SKILL.md`'s frontmatter, a file served twice with the same bytes. A skill over the
    /// limits (512 files, 16 MiB) is left out, with a warning.
    pub(crate) fn build(skills: Skills) -> Result<Catalog, Error> {
        let catalog = Catalog::build_all(skills.clone())?;
        let over_limits: Vec<String> = catalog
            .entries
            .iter()
            .filter_map(|(uri, entry)| {
                let files = entry.skill.resources.as_ref()?.files();
                let bytes: u64 = files.iter().filter_map(|file| file.size).sum();
                (files.len() > MAX_FILES || bytes > MAX_BYTES).then(|| {
                    tracing::warn!(
                        "skills: `{uri}` has {} files and {bytes} bytes, over the limits of {MAX_FILES} files and \
                         16 MiB; it is not served",
                        files.len()
                    );
                    root_of(uri).strip_prefix(SCHEME).unwrap_or_default().to_owned()
                })
            })
            .collect();
        if over_limits.is_empty() {
            return Ok(catalog);
        }
        // Built again without them, so that none of their files is served either (a nested
        // skill within the limits stays).
        let kept = skills.skills.into_iter().filter(|skill| !over_limits.contains(&skill.path)).collect();
        Catalog::build_all(Skills { skills: kept, ..skills })
    }

    /// Compiles every skill, limits aside.
    fn build_all(skills: Skills) -> Result<Catalog, Error> {
        let mut catalog = Catalog {
            entries: BTreeMap::new(),
            files: HashMap::new(),
            directories: BTreeMap::new(),
            generated: Vec::new(),
            directory_read: skills.directory_read,
        };
        let mut roots: Vec<String> = Vec::new();
        for skill in &skills.skills {
            let root = format!("{SCHEME}{}", skill.path);
            if roots.contains(&root) {
                return Err(Error::registration(format!("the skill `{}` is defined twice", skill.path)));
            }
            roots.push(root);
        }
        for skill in skills.skills {
            catalog.add(skill)?;
        }
        // Completeness: an enclosing skill lists its nested skills' files too.
        let nested: Vec<(String, Vec<SkillFile>)> = catalog
            .entries
            .values()
            .map(|entry| {
                (
                    root_of(&entry.skill.uri).to_owned(),
                    entry.skill.resources.as_ref().map(|r| r.files().to_vec()).unwrap_or_default(),
                )
            })
            .collect();
        for entry in catalog.entries.values_mut() {
            let root = format!("{}/", root_of(&entry.skill.uri));
            // Every entry is still only the catalog's.
            let Some(entry) = Arc::get_mut(entry) else { continue };
            let Some(SkillResources::Files(files)) = entry.skill.resources.as_mut() else { continue };
            for (other_root, other_files) in &nested {
                if other_root.starts_with(&root) {
                    for file in other_files {
                        if !files.iter().any(|known| known.uri == file.uri) {
                            files.push(file.clone());
                        }
                    }
                }
            }
            files.sort_by(|a, b| a.uri.cmp(&b.uri));
        }
        Ok(catalog)
    }

    /// Adds one skill's entry, files and directories.
    fn add(&mut self, skill: SkillDef) -> Result<(), Error> {
        let what = |why: String| Error::registration(format!("skill `{}`: {why}", skill.path));
        let name = check_skill_path(&skill.path).map_err(what)?.to_owned();
        let root = format!("{SCHEME}{}", skill.path);
        let skill_md = skill.files.get(SKILL_MD).ok_or_else(|| what("it has no SKILL.md".to_owned()))?;
        let text = std::str::from_utf8(skill_md).map_err(|_| what("its SKILL.md is not UTF-8".to_owned()))?;
        let frontmatter = read_frontmatter(text).map_err(|why| what(format!("its SKILL.md: {why}")))?;
        if frontmatter.get("name").and_then(Value::as_str) != Some(name.as_str()) {
            return Err(what(format!(
                "its SKILL.md names it `{}`, but a skill's name must be the last segment of its path, `{name}`",
                frontmatter.get("name").and_then(Value::as_str).unwrap_or_default()
            )));
        }
        check_reserved_metadata(&frontmatter).map_err(what)?;
        let description = frontmatter.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
        let mut listed = Vec::with_capacity(skill.files.len());
        for (path, bytes) in &skill.files {
            let uri = format!("{root}/{}", file_path_in_uri(path).map_err(what)?);
            let is_text = std::str::from_utf8(bytes).is_ok();
            let served = Arc::new(ServedFile { bytes: bytes.clone(), mime_type: mime_type_for(path, is_text) });
            if let Some(known) = self.files.get(&uri)
                && known.bytes != served.bytes
            {
                return Err(what(format!("{uri} is also a file of another skill, with other contents")));
            }
            listed.push(SkillFile { uri: uri.clone(), digest: Some(digest(bytes)), size: Some(bytes.len() as u64) });
            record(&mut self.directories, &uri, path, Some(&served));
            self.files.insert(uri, served);
        }
        let skill_md_uri = format!("{root}/{SKILL_MD}");
        let resources = match skill.generated {
            Some(files) => {
                self.generated.push(Generated { root: root.clone(), files });
                SkillResources::Dynamic
            }
            None => SkillResources::Files(listed),
        };
        let entry = SkillEntry {
            skill: Skill { uri: skill_md_uri.clone(), frontmatter, resources: Some(resources), meta: None },
            skill_md: String::from_utf8_lossy(skill_md).into_owned(),
            name,
            description,
        };
        self.entries.insert(skill_md_uri, Arc::new(entry));
        Ok(())
    }

    /// The files of this catalog whose contents differ in `next`, or which `next` does not
    /// serve: what subscribers are told changed.
    pub(crate) fn changed_files(&self, next: &Catalog) -> Vec<String> {
        let mut changed: Vec<String> = self
            .files
            .iter()
            .filter(|(uri, file)| next.files.get(*uri).is_none_or(|now| now.bytes != file.bytes))
            .map(|(uri, _)| uri.clone())
            .collect();
        changed.sort();
        changed
    }

    /// Every file served, in order.
    pub(crate) fn file_uris(&self) -> Vec<String> {
        let mut uris: Vec<String> = self.files.keys().cloned().collect();
        uris.sort();
        uris
    }

    /// The entry of the skill whose `SKILL.md` is `uri`.
    pub(crate) fn entry(&self, uri: &str) -> Option<&Arc<SkillEntry>> {
        self.entries.get(uri)
    }

    /// A file's bytes and MIME type: a listed one, or one a generated skill makes now.
    pub(crate) fn file(&self, uri: &str) -> Option<Arc<ServedFile>> {
        if let Some(file) = self.files.get(uri) {
            return Some(file.clone());
        }
        let (generated, path) = self.generated_under(uri)?;
        let (name, bytes) = (generated.files)()
            .into_iter()
            .find(|(name, _)| file_path_in_uri(name).is_ok_and(|encoded| encoded == path))?;
        let is_text = std::str::from_utf8(&bytes).is_ok();
        Some(Arc::new(ServedFile { mime_type: mime_type_for(&name, is_text), bytes: Bytes::from(bytes) }))
    }

    /// The children of the directory `uri`, or `None` when it is not one.
    pub(crate) fn directory(&self, uri: &str) -> Option<BTreeMap<String, Arc<Resource>>> {
        let mut children = self.directories.get(uri).cloned();
        for generated in &self.generated {
            let inside = if uri == generated.root {
                Some("")
            } else {
                uri.strip_prefix(&generated.root).and_then(|rest| rest.strip_prefix('/'))
            };
            let Some(inside) = inside else { continue };
            let mut made = Directories::new();
            for (path, bytes) in (generated.files)() {
                let Ok(encoded) = file_path_in_uri(&path) else { continue };
                let is_text = std::str::from_utf8(&bytes).is_ok();
                let file = ServedFile { mime_type: mime_type_for(&path, is_text), bytes: Bytes::from(bytes) };
                record(&mut made, &format!("{}/{encoded}", generated.root), &path, Some(&file));
            }
            let directory =
                if inside.is_empty() { generated.root.clone() } else { format!("{}/{inside}", generated.root) };
            if let Some(made) = made.remove(&directory) {
                children.get_or_insert_with(BTreeMap::new).extend(made);
            }
        }
        children
    }

    /// The generated skill `uri` is inside, and its path there.
    fn generated_under<'a>(&'a self, uri: &'a str) -> Option<(&'a Generated, &'a str)> {
        self.generated.iter().find_map(|generated| {
            let path = uri.strip_prefix(&generated.root)?.strip_prefix('/')?;
            Some((generated, path))
        })
    }
}

/// Records `uri` (a file at `path` of its skill, or a directory when `file` is `None`) among
/// its parent directory's children, and each new ancestor directory among its own.
fn record(directories: &mut Directories, uri: &str, path: &str, file: Option<&ServedFile>) {
    let Some((parent, _)) = uri.rsplit_once('/').filter(|(parent, _)| parent.len() > SCHEME.len()) else { return };
    let name = path.rsplit('/').next().unwrap_or(path);
    let (mime_type, size) = match file {
        Some(file) => (file.mime_type, Some(file.bytes.len() as u64)),
        None => (DIRECTORY_MIME_TYPE, None),
    };
    let child = Resource {
        uri: uri.to_owned(),
        name: name.to_owned(),
        mime_type: Some(mime_type.to_owned()),
        size,
        ..Resource::default()
    };
    let is_new_directory = !directories.contains_key(parent);
    directories.entry(parent.to_owned()).or_default().insert(uri.to_owned(), Arc::new(child));
    if is_new_directory {
        let parent_name = parent.rsplit('/').next().unwrap_or(parent).to_owned();
        record(directories, parent, &parent_name, None);
    }
}

/// Skills checked and compiled (every file hashed), ready to be served: what
/// [`Skills::compile`] makes ahead, so that serving them later does no work while requests
/// wait.
#[derive(Debug)]
pub struct CompiledSkills(pub(crate) Catalog);

impl Skills {
    /// Checks and compiles the skills as serving them would (names, paths, frontmatter, files
    /// served twice, limits), without serving them.
    pub fn compile(self) -> Result<CompiledSkills, Error> {
        Catalog::build(self).map(CompiledSkills)
    }
}

/// `skill://acme/refunds` of `skill://acme/refunds/SKILL.md`.
fn root_of(skill_md: &str) -> &str {
    skill_md.strip_suffix("/SKILL.md").unwrap_or(skill_md)
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in hash {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// Frontmatter `metadata` keys under `io.modelcontextprotocol/` are the protocol's.
fn check_reserved_metadata(frontmatter: &Map<String, Value>) -> Result<(), String> {
    let reserved = frontmatter
        .get("metadata")
        .and_then(Value::as_object)
        .and_then(|metadata| metadata.keys().find(|key| key.starts_with("io.modelcontextprotocol/")));
    match reserved {
        Some(key) => Err(format!("its frontmatter's metadata key `{key}` uses a prefix the protocol reserves")),
        None => Ok(()),
    }
}
