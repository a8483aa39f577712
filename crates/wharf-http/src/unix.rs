//! Streamable HTTP over a Unix socket, for local servers no other user and no browser reaches:
//! the socket file made owner-only ([`bind_unix`]), and the peer's credentials
//! ([`UnixPeer`], from `SO_PEERCRED`) as the request's principal.

use std::io;
use std::net::{IpAddr, Ipv6Addr};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::path::Path;

use tokio::net::{UnixListener, UnixStream};
use wharf_server::contract::Principal;

/// Listens on a Unix socket at `path`, for [`serve_unix`](crate::serve_unix).
///
/// The socket file is made readable and writable by its owner only (mode 0600); a missing
/// directory is created owner-only (0700). A socket file left by a process that is gone is
/// replaced; one a live server still answers on is refused (`AddrInUse`), and so is a path
/// that holds anything but a socket. [`serve_unix`](crate::serve_unix) removes the file when
/// it shuts down gracefully.
///
/// # Errors
/// When the directory cannot be made, the path is taken, or binding fails.
pub fn bind_unix(path: &Path) -> io::Result<UnixListener> {
    if let Some(directory) = path.parent().filter(|directory| !directory.as_os_str().is_empty())
        && !directory.exists()
    {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(directory)?;
    }
    match std::fs::symlink_metadata(path) {
        Ok(existing) if !existing.file_type().is_socket() => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket", path.display()),
            ));
        }
        Ok(_) => match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("a server already listens on {}", path.display()),
                ));
            }
            // Nobody answers: a socket left by a process that is gone.
            Err(_) => std::fs::remove_file(path)?,
        },
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Who is on the other end of a Unix socket connection, as the kernel says (`SO_PEERCRED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnixPeer {
    /// The user id of the process that connected.
    pub uid: u32,
    /// Its group id.
    pub gid: u32,
    /// Its process id, where the system says it.
    pub pid: Option<i32>,
}

impl UnixPeer {
    /// The credentials of the peer of `stream`.
    pub(crate) fn of(stream: &UnixStream) -> io::Result<UnixPeer> {
        let credentials = stream.peer_cred()?;
        Ok(UnixPeer { uid: credentials.uid(), gid: credentials.gid(), pid: credentials.pid() })
    }

    /// The principal its requests act for: `unix:uid:UID`, with `uid`, `gid` and `pid` as
    /// claims. The same user is the same principal, whichever process connects.
    pub fn principal(&self) -> Principal {
        let mut claims = wharf_protocol::JsonObject::new();
        claims.insert("uid".to_owned(), self.uid.into());
        claims.insert("gid".to_owned(), self.gid.into());
        if let Some(pid) = self.pid {
            claims.insert("pid".to_owned(), pid.into());
        }
        Principal::new(format!("unix:uid:{}", self.uid)).with_claims(claims)
    }

    /// What stands for its address where limits count per client (connections, sessions): a
    /// unique-local IPv6 address holding the uid, so each user has limits of its own.
    pub(crate) fn stand_in_address(&self) -> IpAddr {
        let [high, low] = [(self.uid >> 16) as u16, (self.uid & 0xffff) as u16];
        IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, high, low))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_socket_is_owner_only_a_live_one_is_kept_and_a_stale_one_replaced() {
        let directory = std::env::temp_dir().join(format!("wharf-unix-{}", std::process::id()));
        let path = directory.join("nested/mcp.sock");
        let listener = bind_unix(&path).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(bind_unix(&path).unwrap_err().kind(), io::ErrorKind::AddrInUse);

        let connecting = UnixStream::connect(&path);
        let (accepted, _) = listener.accept().await.unwrap();
        let _client = connecting.await.unwrap();
        let peer = UnixPeer::of(&accepted).unwrap();
        // The socket file is ours: its owner is who this process runs as.
        let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&path).unwrap());
        assert_eq!(peer.uid, uid);
        assert_eq!(peer.pid, Some(i32::try_from(std::process::id()).unwrap()));
        assert_eq!(peer.principal().as_str(), format!("unix:uid:{uid}"));
        assert_ne!(peer.stand_in_address(), UnixPeer { uid: uid + 1, ..peer }.stand_in_address());

        drop(listener);
        let _replaced = bind_unix(&path).unwrap();
        let not_a_socket = directory.join("file");
        std::fs::write(&not_a_socket, "").unwrap();
        assert_eq!(bind_unix(&not_a_socket).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
