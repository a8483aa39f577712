//! Tokens kept in a JSON file between runs, readable by its owner only, replaced whole on each
//! change so that a crash never leaves half a file, and changed under a lock so that two
//! processes saving at once both keep what they saved. A store file that is a link is changed
//! where it points; a lock file that is a link is refused.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::oauth::config::{RefreshHold, StoredTokens, TokenStore};

/// A [`TokenStore`] in one file, by server URL: what a command-line client keeps between runs.
///
/// The file holds secrets; on Unix it is created with mode 0600, and its directory is made
/// 0700 (made so, or narrowed to it when it grants others anything). A store file that is a
/// symbolic link is read and replaced where the link points (so that forgetting tokens
/// forgets them there); its lock files (`FILE.lock`, `FILE.refresh-lock`, beside that file)
/// are never opened through a link.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    /// Serializes this store's read-modify-write cycles; the lock file serializes processes'.
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
        if !self.path.exists() {
            return Ok(false);
        }
        self.change(|all| all.remove(server).is_some())
    }

    /// Where the tokens are: the path, or the file it links to. A link that leads nowhere is
    /// an error: writing the path would replace the link by a file of its own.
    fn file(&self) -> std::io::Result<PathBuf> {
        match std::fs::symlink_metadata(&self.path) {
            Ok(metadata) if metadata.file_type().is_symlink() => std::fs::canonicalize(&self.path).map_err(|err| {
                std::io::Error::new(
                    err.kind(),
                    format!("{} is a symbolic link that leads to no file ({err})", self.path.display()),
                )
            }),
            _ => Ok(self.path.clone()),
        }
    }

    /// Reads every entry, changes them with `change` (true when it changed something) and
    /// writes them back, with this store and every other process that uses the file kept out
    /// meanwhile: an advisory lock on `FILE.lock`, released when the change is done.
    fn change(&self, change: impl FnOnce(&mut BTreeMap<String, StoredTokens>) -> bool) -> std::io::Result<bool> {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let file = self.file()?;
        let lock = lock_file(&file, ".lock")?;
        lock.lock()?;
        let mut all = self.read();
        let changed = change(&mut all);
        if changed {
            write(&file, &all)?;
        }
        Ok(changed)
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
}

/// The directory `file` is in.
fn directory(file: &Path) -> &Path {
    file.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// The lock file beside the store's `file`, its name the file's and `suffix`; created empty
/// (owner-only on Unix), with its directory, the first time, and never opened through a link.
fn lock_file(file: &Path, suffix: &str) -> std::io::Result<std::fs::File> {
    create_private_dir(directory(file))?;
    let mut path = file.to_path_buf().into_os_string();
    path.push(suffix);
    let path = PathBuf::from(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(&path).map_err(|err| {
        if std::fs::symlink_metadata(&path).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
            std::io::Error::other(format!(
                "the lock file {} is a symbolic link, which is not followed: remove it",
                path.display()
            ))
        } else {
            err
        }
    })
}

/// Replaces `file` with `all`: a new owner-only file beside it, renamed over it.
fn write(file: &Path, all: &BTreeMap<String, StoredTokens>) -> std::io::Result<()> {
    let text = serde_json::to_vec_pretty(all).map_err(std::io::Error::other)?;
    let name = file.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_nanos());
    let temporary = directory(file).join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let written = open_private(&temporary).and_then(|mut opened| {
        opened.write_all(&text)?;
        opened.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temporary, file)) {
        Ok(()) => Ok(()),
        Err(err) => {
            let _ = std::fs::remove_file(&temporary);
            Err(err)
        }
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, server: &str) -> Option<StoredTokens> {
        self.read().remove(server)
    }

    fn save(&self, server: &str, tokens: &StoredTokens) {
        let saved = self.change(|all| {
            all.insert(server.to_owned(), tokens.clone());
            true
        });
        if let Err(err) = saved {
            tracing::warn!(target: "wharf_client", "cannot write the token store {}: {err}", self.path.display());
        }
    }

    /// A lock on `FILE.refresh-lock`, apart from the one every change takes, which a
    /// refresh's own save takes while this one is held.
    fn try_hold_refresh(&self) -> RefreshHold {
        let locked =
            self.file().and_then(|file| lock_file(&file, ".refresh-lock")).and_then(|lock| match lock.try_lock() {
                Ok(()) => Ok(Some(lock)),
                Err(std::fs::TryLockError::WouldBlock) => Ok(None),
                Err(std::fs::TryLockError::Error(err)) => Err(err),
            });
        match locked {
            Ok(Some(lock)) => RefreshHold::Held(Box::new(lock)),
            Ok(None) => RefreshHold::Busy,
            Err(err) => {
                // Refreshing without the hold is what a store nobody shares does.
                tracing::warn!(target: "wharf_client", "cannot lock the token store {}: {err}", self.path.display());
                RefreshHold::Unshared
            }
        }
    }
}

/// Makes `directory` (and those above it) 0700; one that exists and grants others anything is
/// narrowed to 0700, or, when it cannot be (it is not the user's), said in a warning.
#[cfg(unix)]
fn create_private_dir(directory: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(directory)?;
    let mode = std::fs::metadata(directory)?.permissions().mode();
    if mode & 0o077 != 0
        && let Err(err) = std::fs::set_permissions(directory, std::fs::Permissions::from_mode(0o700))
    {
        tracing::warn!(
            target: "wharf_client",
            "the token store's directory {} is open to other users (mode {:o}) and cannot be narrowed: {err}",
            directory.display(),
            mode & 0o777
        );
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(access: &str) -> StoredTokens {
        StoredTokens {
            issuer: "https://issuer.test".to_owned(),
            access_token: access.to_owned(),
            token_type: "Bearer".to_owned(),
            refresh_token: None,
            expires_at: None,
            scope: None,
            client_id: "wharf".to_owned(),
            client_secret: None,
            token_endpoint_auth_method: "none".to_owned(),
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let directory = std::env::temp_dir().join(format!("wharf-token-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        directory
    }

    #[test]
    fn saves_from_two_stores_at_once_are_all_kept() {
        let directory = scratch("concurrent");
        let path = directory.join("nested").join("tokens.json");
        let stores = [FileTokenStore::new(&path), FileTokenStore::new(&path)];
        std::thread::scope(|threads| {
            for (index, store) in stores.iter().enumerate() {
                for thread in 0..6 {
                    threads.spawn(move || {
                        for round in 0..10 {
                            store.save(&format!("https://s{index}-{thread}.test/mcp"), &tokens(&format!("t{round}")));
                        }
                    });
                }
            }
        });
        let servers = stores[0].servers();
        assert_eq!(servers.len(), 12, "{servers:?}");
        assert_eq!(stores[1].load("https://s1-5.test/mcp").unwrap().access_token, "t9");
        assert!(stores[1].remove("https://s1-5.test/mcp").unwrap());
        assert!(!stores[0].remove("https://s1-5.test/mcp").unwrap());
        assert_eq!(stores[0].servers().len(), 11);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        std::fs::remove_dir_all(directory).unwrap();
    }

    /// `logout` through a `tokens.json` that is a link forgets the tokens where the link
    /// points, and keeps the link (issue 38).
    #[cfg(unix)]
    #[test]
    fn a_store_that_is_a_link_is_changed_where_it_points() {
        let directory = scratch("linked");
        std::fs::create_dir_all(directory.join("real")).unwrap();
        std::fs::create_dir_all(directory.join("config")).unwrap();
        let target = directory.join("real").join("tokens.json");
        FileTokenStore::new(&target).save("https://a.test/mcp", &tokens("secret"));
        let link = directory.join("config").join("tokens.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let store = FileTokenStore::new(&link);
        assert!(store.remove("https://a.test/mcp").unwrap());
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is kept");
        assert!(!std::fs::read_to_string(&target).unwrap().contains("secret"), "the tokens are gone where they were");
        assert!(FileTokenStore::new(&target).load("https://a.test/mcp").is_none());
        std::fs::remove_dir_all(directory).unwrap();
    }

    /// A lock file that is a link is refused: nothing is made or opened where it points
    /// (issue 38).
    #[cfg(unix)]
    #[test]
    fn a_lock_file_that_is_a_link_is_not_followed() {
        let directory = scratch("lock-link");
        let path = directory.join("tokens.json");
        let store = FileTokenStore::new(&path);
        store.save("https://a.test/mcp", &tokens("t"));
        let victim = directory.join("victim");
        for suffix in [".lock", ".refresh-lock"] {
            let mut lock = path.clone().into_os_string();
            lock.push(suffix);
            let _ = std::fs::remove_file(&lock);
            std::os::unix::fs::symlink(&victim, &lock).unwrap();
        }
        let refused = store.remove("https://a.test/mcp").unwrap_err();
        assert!(refused.to_string().contains("link"), "{refused}");
        assert!(matches!(store.try_hold_refresh(), RefreshHold::Unshared));
        assert!(!victim.exists(), "nothing is created through the link");
        assert_eq!(store.load("https://a.test/mcp").unwrap().access_token, "t", "nothing was changed");
        std::fs::remove_dir_all(directory).unwrap();
    }

    /// A directory that exists with a loose mode is made its owner's only before tokens go
    /// in it (issue 38).
    #[cfg(unix)]
    #[test]
    fn an_existing_loose_directory_is_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let directory = scratch("loose");
        std::fs::create_dir_all(&directory).unwrap();
        std::fs::set_permissions(&directory, std::fs::Permissions::from_mode(0o755)).unwrap();
        FileTokenStore::new(directory.join("tokens.json")).save("https://a.test/mcp", &tokens("t"));
        assert_eq!(std::fs::metadata(&directory).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::remove_dir_all(directory).unwrap();
    }

    #[test]
    fn one_refresh_at_a_time_across_stores_and_saves_go_on_meanwhile() {
        let directory = scratch("refresh-hold");
        let path = directory.join("tokens.json");
        let (one, other) = (FileTokenStore::new(&path), FileTokenStore::new(&path));
        let held = match one.try_hold_refresh() {
            RefreshHold::Held(held) => held,
            refused => panic!("{refused:?}"),
        };
        assert!(matches!(other.try_hold_refresh(), RefreshHold::Busy));
        // The refresh's own save is not kept out by the hold.
        one.save("https://a.test/mcp", &tokens("fresh"));
        assert_eq!(other.load("https://a.test/mcp").unwrap().access_token, "fresh");
        drop(held);
        assert!(matches!(other.try_hold_refresh(), RefreshHold::Held(_)));
        std::fs::remove_dir_all(directory).unwrap();
    }
}
