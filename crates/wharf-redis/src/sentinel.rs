//! [`SentinelPrimary`]: the primary of a Redis that Sentinel manages, asked of the sentinels
//! when first needed and asked again when it is lost (it stops answering, or answers that it
//! is a replica now), so that commands follow a failover to the replica promoted in its place.

use std::sync::Mutex;

use redis::aio::ConnectionManager;
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, RedisConnectionInfo, RedisResult};

use crate::deadlines::{self, CONNECT_TIMEOUT, RESPONSE_TIMEOUT};

/// Where the sentinels are, which primary to ask them for, and the connection to it as they
/// last named it.
pub(crate) struct SentinelPrimary {
    sentinels: Vec<ConnectionInfo>,
    name: String,
    /// The login and database on the data nodes (the sentinels' own are in their URLs).
    node: RedisConnectionInfo,
    current: Mutex<Option<Primary>>,
    /// One question to the sentinels at a time: the requests that find the primary lost
    /// together wait for one answer.
    asking: tokio::sync::Mutex<()>,
}

/// The primary as the sentinels named it, and a connection to it.
#[derive(Clone)]
pub(crate) struct Primary {
    address: (String, u16),
    pub(crate) connection: ConnectionManager,
}

impl SentinelPrimary {
    /// The primary called `name` by the sentinels at `sentinels`, logged into as `node` says.
    pub(crate) fn new(sentinels: Vec<ConnectionInfo>, name: String, node: RedisConnectionInfo) -> SentinelPrimary {
        SentinelPrimary { sentinels, name, node, current: Mutex::new(None), asking: tokio::sync::Mutex::new(()) }
    }

    /// The database the data nodes are used in.
    pub(crate) fn db(&self) -> i64 {
        self.node.db()
    }

    fn known(&self) -> Option<Primary> {
        self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The primary, as last named, or as the sentinels name it now when it is not known.
    pub(crate) async fn primary(&self) -> RedisResult<Primary> {
        if let Some(known) = self.known() {
            return Ok(known);
        }
        let _asking = self.asking.lock().await;
        if let Some(known) = self.known() {
            return Ok(known);
        }
        let address = self.ask().await?;
        tracing::info!(name = %self.name, host = %address.0, port = address.1, "the sentinels name this primary");
        let client = self.node_client(address.clone())?;
        let connection = ConnectionManager::new_lazy_with_config(client, deadlines::one_node())?;
        let primary = Primary { address, connection };
        *self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(primary.clone());
        Ok(primary)
    }

    /// A client of the primary the sentinels name now, for a connection of its own.
    pub(crate) async fn client(&self) -> RedisResult<redis::Client> {
        self.node_client(self.ask().await?)
    }

    fn node_client(&self, (host, port): (String, u16)) -> RedisResult<redis::Client> {
        let info = ConnectionAddr::Tcp(host, port).into_connection_info()?;
        redis::Client::open(info.set_redis_settings(self.node.clone()))
    }

    /// Forgets `primary` (when it is still the one known): the next command asks the
    /// sentinels again.
    pub(crate) fn forget(&self, primary: &Primary) {
        let mut current = self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.as_ref().is_some_and(|known| known.address == primary.address) {
            *current = None;
        }
    }

    /// The primary's address, from the first sentinel that names it.
    async fn ask(&self) -> RedisResult<(String, u16)> {
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT));
        let mut last_error = None;
        for sentinel in &self.sentinels {
            let asked = async {
                let client = redis::Client::open(sentinel.clone())?;
                let mut connection = client.get_multiplexed_async_connection_with_config(&config).await?;
                redis::cmd("SENTINEL")
                    .arg("GET-MASTER-ADDR-BY-NAME")
                    .arg(&self.name)
                    .query_async::<Option<(String, u16)>>(&mut connection)
                    .await
            };
            match asked.await {
                Ok(Some(address)) => return Ok(address),
                Ok(None) => {
                    last_error = Some(redis::RedisError::from((
                        redis::ErrorKind::InvalidClientConfig,
                        "a sentinel does not know the primary by that name",
                    )));
                }
                Err(err) => last_error = Some(err),
            }
        }
        Err(last_error
            .unwrap_or_else(|| redis::RedisError::from((redis::ErrorKind::InvalidClientConfig, "no sentinel"))))
    }
}
