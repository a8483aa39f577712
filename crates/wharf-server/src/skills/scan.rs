//! Skills read from a directory: every directory holding a `SKILL.md` is a skill, its path the
//! directory's below the root, its files every regular file beneath it (nested skills'
//! included). Hidden files, symbolic links that leave the skill's own directory, and anything
//! that is not a regular file are never served.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::error::Error;
use crate::skills::definition::{SKILL_MD, SkillDef, Skills};

/// The largest file read; a larger one would make its skill exceed the size limit anyway.
const MAX_FILE: u64 = 16 * 1024 * 1024;

/// The most bytes read from one skills directory, all skills together.
const MAX_TOTAL: u64 = 256 * 1024 * 1024;

/// How deep directories are followed below the root.
const MAX_DEPTH: usize = 32;

impl Skills {
    /// Every skill under `root`: `root/pdf-processing/SKILL.md` is served at
    /// `skill://pdf-processing/SKILL.md`, `root/acme/billing/refunds/SKILL.md` at
    /// `skill://acme/billing/refunds/SKILL.md`. The files are read (and later hashed) once.
    pub fn from_directory(root: impl AsRef<Path>) -> Result<Skills, Error> {
        let root = root.as_ref();
        let canonical = fs::canonicalize(root)
            .map_err(|err| Error::registration(format!("the skills directory {}: {err}", root.display())))?;
        let mut files: BTreeMap<PathBuf, Found> = BTreeMap::new();
        walk(&canonical, &canonical, &PathBuf::new(), 0, &mut files)?;
        let total: u64 = files.values().map(|found| found.bytes.len() as u64).sum();
        if total > MAX_TOTAL {
            return Err(Error::registration(format!(
                "the skills directory {} holds {total} bytes, more than the 256 MiB read at most",
                root.display()
            )));
        }
        // When the root is itself a skill, every skill below it is served under its name too.
        let root_name = canonical.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let prefix = if files.contains_key(Path::new(SKILL_MD)) { format!("{root_name}/") } else { String::new() };
        let mut skills = Skills::new();
        for (directory, _) in files.iter().filter(|(path, _)| path.file_name() == Some(SKILL_MD.as_ref())) {
            let directory = directory.parent().unwrap_or(Path::new(""));
            let path = if directory.as_os_str().is_empty() {
                // The root itself is a skill: it is served under its own name.
                root_name.clone()
            } else {
                format!("{prefix}{}", slash_path(directory)?)
            };
            let mut skill = SkillDef::new(path);
            let skill_root = canonical.join(directory);
            let beneath = files.range(directory.to_path_buf()..).take_while(|(file, _)| file.starts_with(directory));
            for (file, found) in beneath {
                if let Some(target) = &found.link_target
                    && !target.starts_with(&skill_root)
                {
                    tracing::warn!("skills: {} links outside its skill; not served with it", file.display());
                    continue;
                }
                let inside = file.strip_prefix(directory).unwrap_or(file);
                skill = skill.file(slash_path(inside)?, found.bytes.clone());
            }
            skills = skills.skill(skill);
        }
        Ok(skills)
    }
}

/// A file found under the root: its bytes, and where it is when it is a link.
struct Found {
    bytes: Bytes,
    link_target: Option<PathBuf>,
}

/// Reads every regular file under `directory` (`relative` below the root) into `files`.
fn walk(
    root: &Path,
    directory: &Path,
    relative: &Path,
    depth: usize,
    files: &mut BTreeMap<PathBuf, Found>,
) -> Result<(), Error> {
    if depth > MAX_DEPTH {
        tracing::warn!("skills: {} is more than {MAX_DEPTH} directories deep; not read", directory.display());
        return Ok(());
    }
    let unreadable = |err: std::io::Error| Error::registration(format!("reading {}: {err}", directory.display()));
    let mut entries: Vec<fs::DirEntry> =
        fs::read_dir(directory).map_err(unreadable)?.collect::<Result<_, _>>().map_err(unreadable)?;
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let inside = relative.join(&name);
        let kind = entry.file_type().map_err(unreadable)?;
        if kind.is_dir() {
            walk(root, &path, &inside, depth + 1, files)?;
        } else if kind.is_file() {
            if let Some(bytes) = read(&path)? {
                files.insert(inside, Found { bytes, link_target: None });
            }
        } else if kind.is_symlink() {
            match fs::canonicalize(&path) {
                Ok(target) if target.starts_with(root) && target.is_file() => {
                    if let Some(bytes) = read(&target)? {
                        files.insert(inside, Found { bytes, link_target: Some(target) });
                    }
                }
                Ok(target) if target.starts_with(root) => {
                    tracing::warn!("skills: {} links to a directory; links are followed to files only", path.display());
                }
                _ => tracing::warn!("skills: {} links outside the skills directory; not served", path.display()),
            }
        } else {
            tracing::warn!("skills: {} is not a regular file; not served", path.display());
        }
    }
    Ok(())
}

/// The file's bytes; `None`, with a warning, for a file larger than a whole skill may be.
fn read(path: &Path) -> Result<Option<Bytes>, Error> {
    let unreadable = |err: std::io::Error| Error::registration(format!("reading {}: {err}", path.display()));
    let size = fs::metadata(path).map_err(unreadable)?.len();
    if size > MAX_FILE {
        tracing::warn!("skills: {} is {size} bytes, more than a skill may hold in all; not served", path.display());
        return Ok(None);
    }
    Ok(Some(Bytes::from(fs::read(path).map_err(unreadable)?)))
}

/// A relative path with `/` between its parts, which must be UTF-8.
fn slash_path(path: &Path) -> Result<String, Error> {
    let parts: Option<Vec<&str>> = path.components().map(|part| part.as_os_str().to_str()).collect();
    parts
        .map(|parts| parts.join("/"))
        .ok_or_else(|| Error::registration(format!("the path {} is not UTF-8", path.display())))
}
