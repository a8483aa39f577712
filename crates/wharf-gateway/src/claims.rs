//! Which mount holds each name on the gateway, kind by kind: a name is held by one mount, and
//! is given back when that mount stops offering it.

use std::collections::HashMap;

use crate::error::{GatewayError, GatewayErrorKind};
use crate::kind::Kind;
use crate::names::check_name;

/// The names taken on the gateway, and by which mount.
#[derive(Debug, Default)]
pub(crate) struct Claims {
    held: HashMap<(Kind, String), String>,
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
        match self.held.get(&(kind, name.to_owned())) {
            Some(other) if other != mount => Err(GatewayError::new(
                GatewayErrorKind::Collision,
                format!(
                    "the {} `{name}` is offered by the mounts `{other}` and `{mount}` (as `{original}`): give one a namespace",
                    kind.label()
                ),
            )),
            _ => {
                self.held.insert((kind, name.to_owned()), mount.to_owned());
                Ok(())
            }
        }
    }

    /// The mount that holds `name` as a `kind`.
    pub(crate) fn holder(&self, kind: Kind, name: &str) -> Option<&str> {
        self.held.get(&(kind, name.to_owned())).map(String::as_str)
    }

    /// Gives back every name `mount` holds: what it held, kind by kind.
    pub(crate) fn release_all(&mut self, mount: &str) -> Vec<(Kind, String)> {
        let released: Vec<(Kind, String)> =
            self.held.iter().filter(|(_, holder)| *holder == mount).map(|(key, _)| key.clone()).collect();
        for key in &released {
            self.held.remove(key);
        }
        released
    }

    /// Gives `name` back, if `mount` holds it.
    pub(crate) fn release(&mut self, kind: Kind, name: &str, mount: &str) {
        if self.held.get(&(kind, name.to_owned())).is_some_and(|holder| holder == mount) {
            self.held.remove(&(kind, name.to_owned()));
        }
    }
}
