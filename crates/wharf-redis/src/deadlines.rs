//! How long Wharf waits on Redis: to connect, for an answer, and (on a cluster) for a command
//! with its retries; and the settings of the connection to one node that follow from them.

use std::time::Duration;

use redis::aio::ConnectionManagerConfig;

/// How long a command may wait for Redis's answer.
pub(crate) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long connecting may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a command on a cluster may take in all, its retries included: a failover (a
/// replica elected in the place of a primary that stopped answering) takes about the
/// cluster's node timeout, and a request waits through a short one rather than fail.
pub(crate) const CLUSTER_COMMAND_TIMEOUT: Duration = Duration::from_secs(4);
/// How often a command on a cluster is tried again after a redirection or a lost node.
pub(crate) const CLUSTER_RETRIES: u32 = 6;

/// The settings of a connection to one Redis: Wharf's deadlines, and one quick reconnection
/// before a command fails, so that while Redis is down requests fail at once.
pub(crate) fn one_node() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(200))
}
