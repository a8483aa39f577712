//! Skills read from a directory: every directory holding a `SKILL.md` is a skill, its path the
//! directory's below the root, its files every regular file beneath it (nested skills'
//! included). Hidden files, symbolic links that leave the skill's own directory, names that are
//! not UTF-8 or hold a control character, and anything that is not a regular file are never
//! served. Everything is opened from the root's handle (`open_directory.rs`), so that a file
//! swapped while the directory is read is refused rather than followed.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::error::Error;
use crate::skills::definition::{SKILL_MD, SkillDef, Skills};
use crate::skills::open_directory::{EntryKind, OpenDirectory};

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
    /// `root` itself may be a symbolic link; what is below it is read as
    /// [`Skills::from_open_directory`] says.
    pub fn from_directory(root: impl AsRef<Path>) -> Result<Skills, Error> {
        let root = root.as_ref();
        let directory = OpenDirectory::open(root)
            .map_err(|err| Error::registration(format!("the skills directory {}: {err}", root.display())))?;
        Skills::from_open_directory(&directory)
    }

    /// Every skill under `root`, a directory already open, as [`Skills::from_directory`]
    /// serves them. Everything below it is opened from its handle: a link is followed only to
    /// a file inside the skill that holds it, and only when nothing on its way is a link once
    /// opened; a name that is not UTF-8 or holds a control character, a file larger than a
    /// skill may be, and anything that is not a regular file are left out with a warning.
    pub fn from_open_directory(root: &OpenDirectory) -> Result<Skills, Error> {
        let canonical = root.path();
        let mut files: BTreeMap<PathBuf, Found> = BTreeMap::new();
        let mut total = 0;
        walk(root, root, &PathBuf::new(), 0, &mut files, &mut total)?;
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

/// Reads every regular file under `directory` (`relative` below `root`) into `files`, adding
/// their sizes to `total`.
fn walk(
    root: &OpenDirectory,
    directory: &OpenDirectory,
    relative: &Path,
    depth: usize,
    files: &mut BTreeMap<PathBuf, Found>,
    total: &mut u64,
) -> Result<(), Error> {
    if depth > MAX_DEPTH {
        tracing::warn!("skills: {} is more than {MAX_DEPTH} directories deep; not read", directory.path().display());
        return Ok(());
    }
    let unreadable = |name: &str, err: std::io::Error| {
        Error::registration(format!("reading {}: {err}", directory.path().join(name).display()))
    };
    for entry in directory.entries().map_err(|err| unreadable("", err))? {
        let name = entry.name();
        if name.starts_with('.') {
            continue;
        }
        let path = directory.path().join(name);
        let inside = relative.join(name);
        let read = match entry.kind() {
            EntryKind::Directory => match directory.directory(name) {
                Ok(below) => {
                    walk(root, &below, &inside, depth + 1, files, total)?;
                    Ok(None)
                }
                Err(err) => Err(err),
            },
            EntryKind::File => read(directory, name, total).map(|bytes| bytes.map(|bytes| (bytes, None))),
            EntryKind::Link => match fs::canonicalize(&path) {
                Ok(target) if target.starts_with(root.path()) && target.is_file() => {
                    let within = target.strip_prefix(root.path()).unwrap_or(&target);
                    read_below(root, within, total).map(|bytes| bytes.map(|bytes| (bytes, Some(target.clone()))))
                }
                Ok(target) if target.starts_with(root.path()) => {
                    tracing::warn!("skills: {} links to a directory; links are followed to files only", path.display());
                    Ok(None)
                }
                _ => {
                    tracing::warn!("skills: {} links outside the skills directory; not served", path.display());
                    Ok(None)
                }
            },
            EntryKind::Other => {
                tracing::warn!("skills: {} is not a regular file; not served", path.display());
                Ok(None)
            }
        };
        match read {
            Ok(Some((bytes, link_target))) => {
                files.insert(inside, Found { bytes, link_target });
            }
            Ok(None) => {}
            // Gone since the directory was listed: not part of what is read.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(unreadable(name, err)),
        }
    }
    Ok(())
}

/// The file at `within` below `root`, opened from its handle one part at a time: a part
/// swapped for a link since the link was resolved is refused, never followed.
fn read_below(root: &OpenDirectory, within: &Path, total: &mut u64) -> std::io::Result<Option<Bytes>> {
    let parts: Option<Vec<&str>> = within.components().map(|part| part.as_os_str().to_str()).collect();
    let Some((file, directories)) = parts.as_deref().and_then(<[&str]>::split_last) else {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file below the skills directory"));
    };
    let mut opened = Vec::new();
    for part in directories {
        let next = opened.last().unwrap_or(root).directory(part)?;
        opened.push(next);
    }
    read(opened.last().unwrap_or(root), file, total)
}

/// The file's bytes; `None`, with a warning, for a file larger than a whole skill may be. Fails
/// once the files read from the directory, all together, pass [`MAX_TOTAL`].
fn read(directory: &OpenDirectory, name: &str, total: &mut u64) -> std::io::Result<Option<Bytes>> {
    let bytes = match directory.read_file(name, MAX_FILE) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::FileTooLarge => {
            tracing::warn!(
                "skills: {} is more than the {MAX_FILE} bytes a skill may hold in all; not served",
                directory.path().join(name).display()
            );
            return Ok(None);
        }
        Err(err) => return Err(err),
    };
    *total += bytes.len() as u64;
    if *total > MAX_TOTAL {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            "the skills directory holds more than the 256 MiB read at most",
        ));
    }
    Ok(Some(Bytes::from(bytes)))
}

/// A relative path with `/` between its parts, which must be UTF-8.
fn slash_path(path: &Path) -> Result<String, Error> {
    let parts: Option<Vec<&str>> = path.components().map(|part| part.as_os_str().to_str()).collect();
    parts
        .map(|parts| parts.join("/"))
        .ok_or_else(|| Error::registration(format!("the path {} is not UTF-8", path.display())))
}
