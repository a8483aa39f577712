//! A client's configuration file as `wharf install` changes it: found without following a link
//! it did not make (a project's links are refused, the user's own config link is followed to
//! where it points, a backup is never written through one), read and replaced under a lock so
//! that installs at once keep each other's entries, and never replaced over a change another
//! program made after it was read.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

/// How many times the file is merged again when another program changed it meanwhile.
pub(super) const ATTEMPTS: usize = 10;

/// How many times the file is opened again when it was replaced while waiting for its lock:
/// once per install that went first, at most.
const REOPENS: usize = 100;

/// A configuration file, its links dealt with.
#[derive(Debug)]
pub(super) struct ConfigFile {
    /// The path the client reads.
    shown: PathBuf,
    /// Where it is read and written: `shown`, or where the user's link `shown` points.
    real: PathBuf,
    /// `FILE.wharf-backup`, beside `shown`.
    backup: PathBuf,
    /// The project directory, for a project's file: nothing below it may be a link.
    project: Option<PathBuf>,
}

/// What the file held when it was read, and the lock that keeps other installs out until it
/// is replaced.
#[derive(Debug)]
pub(super) struct Snapshot {
    text: Option<String>,
    permissions: Option<Permissions>,
    _lock: Option<File>,
}

impl Snapshot {
    /// The file's text; `None` when there is no file.
    pub(super) fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }
}

/// Why a file was not replaced.
#[derive(Debug)]
pub(super) enum NotReplaced {
    /// Another program wrote it after it was read: read and merge again.
    Changed,
    Failed(std::io::Error),
}

impl From<std::io::Error> for NotReplaced {
    fn from(err: std::io::Error) -> NotReplaced {
        NotReplaced::Failed(err)
    }
}

impl ConfigFile {
    /// The file at `shown`. For a project's file (`project` is the project directory) any link
    /// from the project down to the file and its backup is refused: a cloned project could
    /// point it at a git hook or a shell profile. The user's own file may be a link (to a
    /// dotfiles repository, say), which is followed to the file it names; its backup may not.
    pub(super) fn find(shown: &Path, project: Option<&Path>) -> Result<ConfigFile, String> {
        let real = match project {
            Some(project) => {
                refuse_links_below(project, shown)?;
                shown.to_path_buf()
            }
            None => resolve(shown)?,
        };
        match std::fs::metadata(&real) {
            Ok(metadata) if !metadata.is_file() => return Err(format!("{} is not a regular file", real.display())),
            _ => {}
        }
        let name = shown.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let backup = shown.with_file_name(format!("{name}.wharf-backup"));
        match std::fs::symlink_metadata(&backup) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(format!(
                    "{} is a symbolic link{}: wharf install writes no backup through a link; remove it and run again",
                    backup.display(),
                    link_target(&backup)
                ));
            }
            Ok(metadata) if !metadata.is_file() => {
                return Err(format!("{} is not a regular file; move it and run again", backup.display()));
            }
            _ => {}
        }
        Ok(ConfigFile { shown: shown.to_path_buf(), real, backup, project: project.map(Path::to_path_buf) })
    }

    /// Where the file is written, when that is not where the client reads it (a link).
    pub(super) fn link_target(&self) -> Option<&Path> {
        (self.real != self.shown).then_some(&*self.real)
    }

    /// The file now, locked against other installs until the snapshot is dropped.
    pub(super) fn read(&self) -> std::io::Result<Snapshot> {
        for _ in 0..REOPENS {
            let file = match self.open_existing(&self.real) {
                Ok(file) => file,
                Err(err) if err.kind() == ErrorKind::NotFound => {
                    return Ok(Snapshot { text: None, permissions: None, _lock: None });
                }
                Err(err) => return Err(err),
            };
            file.lock()?;
            // Another install may have replaced the file while this one waited for the lock:
            // the lock is then on a file nobody reads any more.
            if !is_at(&file, &self.real)? {
                continue;
            }
            let mut bytes = Vec::new();
            (&file).read_to_end(&mut bytes)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| std::io::Error::new(ErrorKind::InvalidData, "it is not UTF-8 text"))?;
            let permissions = file.metadata()?.permissions();
            return Ok(Snapshot { text: Some(text), permissions: Some(permissions), _lock: Some(file) });
        }
        Err(std::io::Error::other("other installs kept replacing it"))
    }

    /// Replaces the file read as `snapshot` with `text` whole (a new file, renamed over it,
    /// with the permissions the file had), after backing up what it held; the backup's path.
    /// Nothing is left behind on an error.
    pub(super) fn replace(&self, snapshot: &Snapshot, text: &str) -> Result<Option<&Path>, NotReplaced> {
        if snapshot.text.is_none() {
            self.create_parents()?;
        }
        let temporary = temporary_beside(&self.real);
        let outcome = self.replace_with(snapshot, &temporary, text);
        if outcome.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        outcome.map(|()| snapshot.text.is_some().then_some(&*self.backup))
    }

    fn replace_with(&self, snapshot: &Snapshot, temporary: &Path, text: &str) -> Result<(), NotReplaced> {
        write_new(temporary, &format!("{text}\n"))?;
        if let Some(permissions) = &snapshot.permissions {
            std::fs::set_permissions(temporary, permissions.clone())?;
        }
        if !self.unchanged_since(snapshot)? {
            return Err(NotReplaced::Changed);
        }
        match &snapshot.text {
            Some(before) => {
                write_backup(&self.backup, before)?;
                std::fs::rename(temporary, &self.real)?;
            }
            // A file another program made meanwhile is not replaced: the link fails instead.
            None => match std::fs::hard_link(temporary, &self.real) {
                Ok(()) => std::fs::remove_file(temporary)?,
                Err(err) if err.kind() == ErrorKind::AlreadyExists => return Err(NotReplaced::Changed),
                Err(err) => return Err(NotReplaced::Failed(err)),
            },
        }
        Ok(())
    }

    /// True when the file still holds what `snapshot` read (or is still absent).
    fn unchanged_since(&self, snapshot: &Snapshot) -> std::io::Result<bool> {
        let mut now = Vec::new();
        match self.open_existing(&self.real) {
            Ok(mut file) => {
                file.read_to_end(&mut now)?;
                Ok(snapshot.text.as_deref().is_some_and(|before| before.as_bytes() == now))
            }
            Err(err) if err.kind() == ErrorKind::NotFound => Ok(snapshot.text.is_none()),
            Err(err) => Err(err),
        }
    }

    /// Opens `path` to read; in a project, never through a link.
    fn open_existing(&self, path: &Path) -> std::io::Result<File> {
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        if self.project.is_some() {
            std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
        }
        options.open(path)
    }

    /// Makes the directories the file goes in: in a project, one at a time, each a directory
    /// of its own and not a link; the user's, as their links lead.
    fn create_parents(&self) -> std::io::Result<()> {
        let Some(parent) = self.real.parent() else { return Ok(()) };
        let Some(project) = &self.project else { return std::fs::create_dir_all(parent) };
        let Ok(below) = parent.strip_prefix(project) else { return Ok(()) };
        let mut path = project.clone();
        for component in below.components() {
            path.push(component);
            match std::fs::create_dir(&path) {
                Ok(()) => {}
                Err(err) if err.kind() == ErrorKind::AlreadyExists => {
                    let metadata = std::fs::symlink_metadata(&path)?;
                    if !metadata.is_dir() {
                        return Err(std::io::Error::other(format!("{} is not a directory", path.display())));
                    }
                }
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }
}

/// Refuses a link at any path from below `project` down to `file`.
fn refuse_links_below(project: &Path, file: &Path) -> Result<(), String> {
    let Ok(below) = file.strip_prefix(project) else { return Ok(()) };
    let mut path = project.to_path_buf();
    let count = below.components().count();
    for (index, component) in below.components().enumerate() {
        path.push(component);
        let metadata = match std::fs::symlink_metadata(&path) {
            Ok(metadata) => metadata,
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(format!("cannot look at {}: {err}", path.display())),
        };
        if metadata.file_type().is_symlink() {
            return Err(format!(
                "{} is a symbolic link{}; in a project, wharf install writes through no link (a cloned project \
                 could point it anywhere): replace the link with what it names, or remove it, and run again",
                path.display(),
                link_target(&path)
            ));
        }
        if index + 1 < count && !metadata.is_dir() {
            return Err(format!("{} is not a directory", path.display()));
        }
    }
    Ok(())
}

/// Where the user's file `shown` is: itself, or the file its link names, which must exist.
fn resolve(shown: &Path) -> Result<PathBuf, String> {
    match std::fs::symlink_metadata(shown) {
        Ok(metadata) if metadata.file_type().is_symlink() => std::fs::canonicalize(shown).map_err(|err| {
            format!(
                "{} is a symbolic link{} that leads to no file ({err}): create the file it names, or remove the link",
                shown.display(),
                link_target(shown)
            )
        }),
        _ => Ok(shown.to_path_buf()),
    }
}

/// ` (to TARGET)` for a link, for messages.
fn link_target(path: &Path) -> String {
    std::fs::read_link(path).map(|target| format!(" (to {})", target.display())).unwrap_or_default()
}

/// True when `file` is still the file at `path`.
#[cfg(unix)]
fn is_at(file: &File, path: &Path) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let (opened, there) = match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(opened), Ok(there)) => (opened, there),
        (_, Err(err)) if err.kind() == ErrorKind::NotFound => return Ok(false),
        (Err(err), _) | (_, Err(err)) => return Err(err),
    };
    Ok(opened.dev() == there.dev() && opened.ino() == there.ino())
}

#[cfg(not(unix))]
fn is_at(_: &File, path: &Path) -> std::io::Result<bool> {
    Ok(path.exists())
}

/// A new name in `path`'s directory for a file to be renamed onto it.
fn temporary_beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_nanos());
    path.with_file_name(format!(".{name}.{}.{nanos}.wharf-tmp", std::process::id()))
}

/// Writes `before` to `backup` whole: a new file of the owner's only, renamed over what was
/// there (a rename replaces a link itself, never what it names).
fn write_backup(backup: &Path, before: &str) -> std::io::Result<()> {
    let temporary = temporary_beside(backup);
    let written = write_new(&temporary, before).and_then(|()| std::fs::rename(&temporary, backup));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Creates `path`, which must not exist (not even as a link), owner-only on Unix, with `text`,
/// flushed to disk.
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut opened = options.open(path)?;
    opened.write_all(text.as_bytes())?;
    opened.sync_all()
}
