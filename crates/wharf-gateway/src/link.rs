//! [`Link`]: what every proxy of one mount holds: its name, its connection, where its parked
//! requests wait.

use std::sync::Arc;

use wharf_client::Client;
use wharf_server::RpcError;

use crate::connection::Connection;
use crate::parked::Parking;

/// What every proxy of one mount holds: the mount's name, its connection, where its parked
/// requests wait.
#[derive(Clone)]
pub(crate) struct Link {
    pub(crate) mount: Arc<str>,
    pub(crate) connection: Arc<Connection>,
    pub(crate) parking: Arc<Parking>,
}

impl Link {
    /// The upstream's client now, or the error naming the mount that is down.
    pub(crate) fn client(&self) -> Result<Client, RpcError> {
        self.connection.client()
    }
}
