//! A directory opened once and read from its handle: what is below it is opened relative to it,
//! a symbolic link is never followed, and a file is checked (a regular file, its size) on the
//! handle it is then read from, never more than a given size. So a file swapped while the
//! directory is read (for a link out of it, a FIFO, a larger file) is refused, never served.
//! Elsewhere than on Unix the same checks are made by path, which a swap can race.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// What a name in a directory is, the name itself looked at (a link is not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link.
    Link,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

/// A name in an [`OpenDirectory`], and what it was when the directory was listed (which may
/// have changed since: opening it checks again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryEntry {
    name: String,
    kind: EntryKind,
}

impl DirectoryEntry {
    /// The name, UTF-8 without control characters.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it was when listed.
    pub fn kind(&self) -> EntryKind {
        self.kind
    }
}

/// A directory opened once, whose files and directories are opened from its handle, never
/// through a symbolic link; what is opened is checked on the handle it is read from.
///
/// A hard link is the file it links, and is read as one: making it takes access to that file.
///
/// ```no_run
/// use wharf_server::{EntryKind, OpenDirectory};
///
/// let folder = OpenDirectory::open("my-server")?;
/// let notes = folder.directory("notes")?;
/// for entry in notes.entries()? {
///     if entry.kind() == EntryKind::File {
///         let bytes = notes.read_file(entry.name(), 1024 * 1024)?;
///         println!("{}: {} bytes", entry.name(), bytes.len());
///     }
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct OpenDirectory {
    #[cfg(unix)]
    handle: std::os::fd::OwnedFd,
    path: PathBuf,
}

impl OpenDirectory {
    /// Opens the directory at `path`, following the links in `path` itself: it is the caller's
    /// to name. Its [`path`](OpenDirectory::path) is made canonical.
    pub fn open(path: impl AsRef<Path>) -> io::Result<OpenDirectory> {
        let path = std::fs::canonicalize(path)?;
        #[cfg(unix)]
        {
            use nix::fcntl::{OFlag, open};
            let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
            let handle = open(&path, flags, nix::sys::stat::Mode::empty())?;
            Ok(OpenDirectory { handle, path })
        }
        #[cfg(not(unix))]
        {
            if !std::fs::metadata(&path)?.is_dir() {
                return Err(io::Error::new(io::ErrorKind::NotADirectory, "not a directory"));
            }
            Ok(OpenDirectory { path })
        }
    }

    /// Where the directory was when it was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory `name` in this one; refused when `name` is a symbolic link (an error that
    /// says so) or not a directory.
    pub fn directory(&self, name: &str) -> io::Result<OpenDirectory> {
        let path = self.path.join(name);
        #[cfg(unix)]
        {
            use nix::fcntl::{OFlag, openat};
            let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
            match openat(&self.handle, name, flags, nix::sys::stat::Mode::empty()) {
                Ok(handle) => Ok(OpenDirectory { handle, path }),
                Err(errno) => Err(self.refusal(name, errno)),
            }
        }
        #[cfg(not(unix))]
        {
            let metadata = std::fs::symlink_metadata(&path)?;
            if metadata.file_type().is_symlink() {
                return Err(link_refused());
            }
            if !metadata.is_dir() {
                return Err(io::Error::new(io::ErrorKind::NotADirectory, "not a directory"));
            }
            Ok(OpenDirectory { path })
        }
    }

    /// The names in this directory, sorted, and what each is. A name that is not UTF-8 or
    /// holds a control character (Finder's `Icon\r`) is left out with a warning: no URI or
    /// message could carry it as it is.
    pub fn entries(&self) -> io::Result<Vec<DirectoryEntry>> {
        let mut entries = Vec::new();
        for (name, kind) in self.list()? {
            match name.to_str() {
                Some(text) if !text.chars().any(char::is_control) => {
                    entries.push(DirectoryEntry { name: text.to_owned(), kind });
                }
                Some(_) => tracing::warn!(
                    "{}/{}: the name holds a control character; left out",
                    self.path.display(),
                    escaped(&name)
                ),
                None => tracing::warn!("{}/{}: the name is not UTF-8; left out", self.path.display(), escaped(&name)),
            }
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// The contents of the regular file `name` in this directory, at most `max` bytes. Refused
    /// when `name` is a symbolic link, not a regular file (a FIFO is never waited on), or larger
    /// than `max` (`io::ErrorKind::FileTooLarge`), also when it grows past `max` while read.
    pub fn read_file(&self, name: &str, max: u64) -> io::Result<Vec<u8>> {
        #[cfg(unix)]
        let file = {
            use nix::fcntl::{OFlag, openat};
            // Not blocking: a FIFO opens at once, and is then refused for what it is.
            let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
            let handle = openat(&self.handle, name, flags, nix::sys::stat::Mode::empty())
                .map_err(|errno| self.refusal(name, errno))?;
            std::fs::File::from(handle)
        };
        #[cfg(not(unix))]
        let file = {
            let path = self.path.join(name);
            if std::fs::symlink_metadata(&path)?.file_type().is_symlink() {
                return Err(link_refused());
            }
            std::fs::File::open(path)?
        };
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
        }
        if metadata.len() > max {
            return Err(too_large(max));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
        // One byte past the bound tells a file that grew after it was measured.
        file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max {
            return Err(too_large(max));
        }
        Ok(bytes)
    }

    /// Every name in the directory but `.` and `..`, and what it is.
    #[cfg(unix)]
    fn list(&self) -> io::Result<Vec<(std::ffi::OsString, EntryKind)>> {
        use std::os::unix::ffi::OsStrExt;

        use nix::fcntl::OFlag;
        // A handle of its own, so that listing never moves this one.
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let mut listing = nix::dir::Dir::openat(&self.handle, ".", flags, nix::sys::stat::Mode::empty())?;
        let mut names = Vec::new();
        for entry in listing.iter() {
            let bytes = entry?.file_name().to_bytes().to_vec();
            if bytes != b"." && bytes != b".." {
                names.push(std::ffi::OsStr::from_bytes(&bytes).to_owned());
            }
        }
        Ok(names.into_iter().filter_map(|name| self.kind_of(&name).map(|kind| (name, kind))).collect())
    }

    #[cfg(not(unix))]
    fn list(&self) -> io::Result<Vec<(std::ffi::OsString, EntryKind)>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.path)? {
            let entry = entry?;
            let Ok(kind) = entry.file_type() else { continue };
            let kind = if kind.is_symlink() {
                EntryKind::Link
            } else if kind.is_dir() {
                EntryKind::Directory
            } else if kind.is_file() {
                EntryKind::File
            } else {
                EntryKind::Other
            };
            names.push((entry.file_name(), kind));
        }
        Ok(names)
    }

    /// What `name` is now, the name itself looked at; `None` once it is gone.
    #[cfg(unix)]
    fn kind_of(&self, name: &std::ffi::OsStr) -> Option<EntryKind> {
        use nix::sys::stat::{SFlag, fstatat};
        let status = fstatat(&self.handle, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
        Some(match SFlag::from_bits_truncate(status.st_mode) & SFlag::S_IFMT {
            SFlag::S_IFREG => EntryKind::File,
            SFlag::S_IFDIR => EntryKind::Directory,
            SFlag::S_IFLNK => EntryKind::Link,
            _ => EntryKind::Other,
        })
    }

    /// Why `name` could not be opened: a link says so, whatever the system's error for it.
    #[cfg(unix)]
    fn refusal(&self, name: &str, errno: nix::errno::Errno) -> io::Error {
        if self.kind_of(name.as_ref()) == Some(EntryKind::Link) {
            return link_refused();
        }
        io::Error::from(errno)
    }
}

fn link_refused() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "a symbolic link, which is not followed")
}

fn too_large(max: u64) -> io::Error {
    io::Error::new(io::ErrorKind::FileTooLarge, format!("larger than the {max} bytes read at most"))
}

/// A name as it can be shown: control characters and bytes that are not UTF-8 escaped.
fn escaped(name: &std::ffi::OsStr) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        name.as_bytes().escape_ascii().to_string()
    }
    #[cfg(not(unix))]
    {
        name.to_string_lossy().escape_debug().to_string()
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A temporary directory, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let path = std::env::temp_dir().join(format!("wharf-open-directory-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            Scratch(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn links_fifos_and_files_past_the_bound_are_refused_on_the_handle() {
        let scratch = Scratch::new("refused");
        let outside = Scratch::new("refused-outside");
        std::fs::write(outside.0.join("secret"), "secret").unwrap();
        std::fs::create_dir(scratch.0.join("inner")).unwrap();
        std::fs::write(scratch.0.join("plain"), "plain").unwrap();
        std::os::unix::fs::symlink(outside.0.join("secret"), scratch.0.join("link")).unwrap();
        std::os::unix::fs::symlink(&outside.0, scratch.0.join("linked-directory")).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(scratch.0.join("fifo")).status().unwrap().success());
        let directory = OpenDirectory::open(&scratch.0).unwrap();

        let kinds: Vec<(String, EntryKind)> =
            directory.entries().unwrap().into_iter().map(|entry| (entry.name().to_owned(), entry.kind())).collect();
        let expected = [
            ("fifo", EntryKind::Other),
            ("inner", EntryKind::Directory),
            ("link", EntryKind::Link),
            ("linked-directory", EntryKind::Link),
            ("plain", EntryKind::File),
        ];
        assert_eq!(kinds, expected.map(|(name, kind)| (name.to_owned(), kind)));

        assert_eq!(directory.read_file("plain", 5).unwrap(), b"plain");
        assert_eq!(directory.read_file("plain", 4).unwrap_err().kind(), io::ErrorKind::FileTooLarge);
        let link = directory.read_file("link", 1024).unwrap_err();
        assert!(link.to_string().contains("symbolic link"), "{link}");
        let linked = directory.directory("linked-directory").unwrap_err();
        assert!(linked.to_string().contains("symbolic link"), "{linked}");
        // Opened without waiting for a writer, then refused for what it is.
        let fifo = directory.read_file("fifo", 1024).unwrap_err();
        assert!(fifo.to_string().contains("not a regular file"), "{fifo}");
        assert!(directory.read_file("inner", 1024).is_err());
        assert!(directory.directory("inner").unwrap().entries().unwrap().is_empty());
    }

    #[test]
    fn a_file_longer_than_it_says_is_read_no_further_than_the_bound() {
        // A file of /proc says it is empty and holds more: as a file that grows while read.
        let proc = OpenDirectory::open("/proc/self").unwrap();
        let status = proc.read_file("status", 1024 * 1024).unwrap();
        assert!(status.len() > 16, "read whole: {} bytes", status.len());
        assert_eq!(proc.read_file("status", 16).unwrap_err().kind(), io::ErrorKind::FileTooLarge);
    }
}
