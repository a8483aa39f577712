//! Reloading a served folder when it changes: a file watcher (`notify`) wakes a task that waits
//! for the changes to settle, reads the folder again and serves the new version at once; a
//! version with a problem is reported in the log and the one before goes on being served.

use std::path::PathBuf;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;
use wharf_server::Server;

use crate::error::FolderError;
use crate::folder::{Loaded, Summary};

/// How long the folder must be still before it is read again: an editor's save is often
/// several events.
const SETTLE: Duration = Duration::from_millis(200);

/// The longest a reload waits for the folder to be still: one that never is is read anyway.
const MAX_SETTLE: Duration = Duration::from_secs(2);

/// A folder being watched; dropping it stops the watching.
pub struct Watching {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Watching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watching").finish_non_exhaustive()
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Watches `folder`, whose version `served` is what `server` serves now, and serves each new
/// version as it comes. Must be called inside a Tokio runtime, on which the reloads run.
pub fn watch(server: Server, folder: impl Into<PathBuf>, served: Summary) -> Result<Watching, FolderError> {
    let folder: PathBuf = folder.into();
    // Events name paths under the watched one: absolute, so that the folder's own place (under
    // a hidden directory, say) is never taken for a part of it.
    let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
    let (changed, mut changes) = mpsc::unbounded_channel::<()>();
    let root = folder.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // Hidden files (an editor's swap files, `.git`) are never served: their changes are not
        // a new version.
        let served = |path: &PathBuf| !is_hidden(path.strip_prefix(&root).unwrap_or(path));
        if event.is_ok_and(|event| !event.kind.is_access() && event.paths.iter().any(served)) {
            let _ = changed.send(());
        }
    })
    .map_err(|err| FolderError::one(format!("cannot watch {}: {err}", folder.display())))?;
    watcher
        .watch(&folder, RecursiveMode::Recursive)
        .map_err(|err| FolderError::one(format!("cannot watch {}: {err}", folder.display())))?;
    let task = tokio::spawn(async move {
        let mut served = served;
        while changes.recv().await.is_some() {
            // Wait until nothing has changed for a moment, or at most MAX_SETTLE.
            let started = tokio::time::Instant::now();
            while started.elapsed() < MAX_SETTLE
                && let Ok(Some(())) = tokio::time::timeout(SETTLE, changes.recv()).await
            {}
            // Reading and hashing the folder blocks: not on the threads that serve requests.
            let (server_now, folder_now) = (server.clone(), folder.clone());
            let loaded = tokio::task::spawn_blocking(move || Loaded::load(&folder_now)).await;
            served = match loaded {
                Ok(loaded) => reload(&server_now, &folder, loaded, served),
                Err(err) => {
                    tracing::error!(target: "wharf::folder", "{}: reading the folder failed: {err}", folder.display());
                    served
                }
            };
        }
    });
    Ok(Watching { _watcher: watcher, task })
}

/// True for a path (inside the folder) with a part that starts with a dot.
fn is_hidden(path: &std::path::Path) -> bool {
    path.components().any(|part| part.as_os_str().to_string_lossy().starts_with('.'))
}

/// Serves `loaded`, the folder read again; what is served afterwards.
fn reload(server: &Server, folder: &std::path::Path, loaded: Result<Loaded, FolderError>, served: Summary) -> Summary {
    match loaded {
        Ok(loaded) => match loaded.replace(server, &served) {
            Ok(now) => {
                tracing::info!(target: "wharf::folder", "{}: reloaded: {}", folder.display(), now.describe());
                now
            }
            Err(err) => {
                tracing::error!(target: "wharf::folder", "{}: not reloaded, the version before is served: {err}", folder.display());
                served
            }
        },
        Err(err) => {
            for problem in err.problems() {
                tracing::error!(target: "wharf::folder", "{problem}");
            }
            tracing::error!(target: "wharf::folder", "{}: not reloaded, the version before is served", folder.display());
            served
        }
    }
}
