//! Tokens kept in a JSON file between runs, readable by its owner only, replaced whole on each
//! change so that a crash never leaves half a file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::oauth::config::{StoredTokens, TokenStore};

/// A [`TokenStore`] in one file, by server URL: what a command-line client keeps between runs.
///
/// The file holds secrets; it is created with mode 0600 (its directory 0700) on Unix.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    /// Serializes this process's read-modify-write cycles.
    writing: Mutex<()>,
}

impl FileTokenStore {
    /// A store in the file at `path`, which need not exist yet.
    pub fn new(path: impl Into<PathBuf>) -> FileTokenStore {
        FileTokenStore { path: path.into(), writing: Mutex::new(()) }
    }

    /// Where the store is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The servers tokens are kept for.
    pub fn servers(&self) -> Vec<String> {
        self.read().into_keys().collect()
    }

    /// Forgets the tokens of `server`; true when there were some.
    pub fn remove(&self, server: &str) -> std::io::Result<bool> {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let mut all = self.read();
        let removed = all.remove(server).is_some();
        if removed {
            self.write(&all)?;
        }
        Ok(removed)
    }

    /// Every entry; an absent or unreadable file is an empty store (and a warning).
    fn read(&self) -> BTreeMap<String, StoredTokens> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return BTreeMap::new(),
            Err(err) => {
                tracing::warn!(target: "wharf_client", "cannot read the token store {}: {err}", self.path.display());
                return BTreeMap::new();
            }
        };
        serde_json::from_str(&text).unwrap_or_else(|err| {
            tracing::warn!(target: "wharf_client", "the token store {} is not valid: {err}", self.path.display());
            BTreeMap::new()
        })
    }

    fn write(&self, all: &BTreeMap<String, StoredTokens>) -> std::io::Result<()> {
        let directory = self.path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
        create_private_dir(directory)?;
        let text = serde_json::to_vec_pretty(all).map_err(std::io::Error::other)?;
        let name = self.path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_nanos());
        let temporary = directory.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
        let written = open_private(&temporary).and_then(|mut file| {
            file.write_all(&text)?;
            file.sync_all()
        });
        match written.and_then(|()| std::fs::rename(&temporary, &self.path)) {
            Ok(()) => Ok(()),
            Err(err) => {
                let _ = std::fs::remove_file(&temporary);
                Err(err)
            }
        }
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, server: &str) -> Option<StoredTokens> {
        self.read().remove(server)
    }

    fn save(&self, server: &str, tokens: &StoredTokens) {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let mut all = self.read();
        all.insert(server.to_owned(), tokens.clone());
        if let Err(err) = self.write(&all) {
            tracing::warn!(target: "wharf_client", "cannot write the token store {}: {err}", self.path.display());
        }
    }
}

#[cfg(unix)]
fn create_private_dir(directory: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(directory)
}

#[cfg(not(unix))]
fn create_private_dir(directory: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(directory)
}

#[cfg(unix)]
fn open_private(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

#[cfg(not(unix))]
fn open_private(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().write(true).create_new(true).open(path)
}
