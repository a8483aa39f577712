//! A temporary directory for one test, removed when dropped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// An empty directory under the system's temporary directory, named after the test, this
/// process and a counter (so tests running at once never share one); removed with all it
/// holds when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory whose name starts with `name`.
    pub fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let number = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("wharf-{name}-{}-{number}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        TempDir(path)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `relative` inside it.
    pub fn join(&self, relative: impl AsRef<Path>) -> PathBuf {
        self.0.join(relative)
    }

    /// Writes `text` at `relative` inside, making its directories.
    pub fn write(&self, relative: &str, text: impl AsRef<[u8]>) {
        let path = self.0.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|err| panic!("{}: {err}", parent.display()));
        }
        std::fs::write(&path, text).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    }

    /// The text at `relative` inside.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.0.join(relative)).unwrap_or_else(|err| panic!("{relative}: {err}"))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
