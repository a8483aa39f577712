//! Which mount holds each name on the gateway, kind by kind: a name is held by one mount, and
//! is given back when that mount stops offering it.

use std::collections::{HashMap, HashSet};

use crate::error::{GatewayError, GatewayErrorKind};
use crate::kind::Kind;
use crate::names::check_name;

/// The names taken on the gateway, and by which mount.
#[derive(Debug, Default)]
pub(crate) struct Claims {
    held: HashMap<(Kind, String), Holder>,
    /// The mounts whose tools name MCP Apps views.
    with_views: HashSet<String>,
}

/// Who holds a name, and the name upstream.
#[derive(Debug)]
struct Holder {
    mount: String,
    original: String,
}

impl Claims {
    /// Records that `mount` offers `name` (its own `original`) as a `kind`; an error naming
    /// both mounts when another holds it, or when it is not a name every client accepts.
    pub(crate) fn claim(&mut self, kind: Kind, name: &str, mount: &str, original: &str) -> Result<(), GatewayError> {
        if matches!(kind, Kind::Tool | Kind::Prompt) {
            check_name(name).map_err(|why| {
                GatewayError::new(
                    GatewayErrorKind::Mount,
                    format!("the mount `{mount}` offers the {} {why}", kind.label()),
                )
            })?;
        }
        match self.held.get(&(kind, name.to_owned())).map(|holder| &holder.mount) {
            Some(other) if other != mount => Err(GatewayError::new(
                GatewayErrorKind::Collision,
                format!(
                    "the {} `{name}` is offered by the mounts `{other}` and `{mount}` (as `{original}`): give one a namespace",
                    kind.label()
                ),
            )),
            _ => {
                let holder = Holder { mount: mount.to_owned(), original: original.to_owned() };
                self.held.insert((kind, name.to_owned()), holder);
                Ok(())
            }
        }
    }

    /// The mount that holds `name` as a `kind`.
    pub(crate) fn holder(&self, kind: Kind, name: &str) -> Option<&str> {
        self.held.get(&(kind, name.to_owned())).map(|holder| holder.mount.as_str())
    }

    /// Records whether `mount`'s tools name MCP Apps views.
    pub(crate) fn set_views(&mut self, mount: &str, with_views: bool) {
        if with_views {
            self.with_views.insert(mount.to_owned());
        } else {
            self.with_views.remove(mount);
        }
    }

    /// The gateway's name of the one tool called `original` upstream by a mount whose tools
    /// name views; `None` when no such mount, or more than one, has it.
    pub(crate) fn tool_of_a_view(&self, original: &str) -> Option<&str> {
        let mut found = self.held.iter().filter(|((kind, _), holder)| {
            *kind == Kind::Tool && holder.original == original && self.with_views.contains(&holder.mount)
        });
        let ((_, name), _) = found.next()?;
        found.next().is_none().then_some(name.as_str())
    }

    /// Gives back every name `mount` holds: what it held, kind by kind.
    pub(crate) fn release_all(&mut self, mount: &str) -> Vec<(Kind, String)> {
        self.with_views.remove(mount);
        let released: Vec<(Kind, String)> =
            self.held.iter().filter(|(_, holder)| holder.mount == mount).map(|(key, _)| key.clone()).collect();
        for key in &released {
            self.held.remove(key);
        }
        released
    }

    /// Gives `name` back, if `mount` holds it.
    pub(crate) fn release(&mut self, kind: Kind, name: &str, mount: &str) {
        if self.held.get(&(kind, name.to_owned())).is_some_and(|holder| holder.mount == mount) {
            self.held.remove(&(kind, name.to_owned()));
        }
    }
}
