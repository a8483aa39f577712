//! A request whose timeout counts from its last progress notification
//! ([`RequestOptions::progress_extends_timeout`](crate::RequestOptions::progress_extends_timeout)):
//! the request's future raced against a quiet timer that each notification starts again, the
//! notifications passed on to the caller's listener.

use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc;
use wharf_protocol::ProgressParams;

use crate::error::{ClientError, ErrorKind};

/// Awaits `request`, heard from on `progress`, until it ends or `idle` passes without progress
/// (then the request is dropped, and so cancelled). Each notification goes on to `listener`.
pub(crate) async fn extended_by_progress<T>(
    method: &str,
    idle: Duration,
    request: impl Future<Output = Result<T, ClientError>>,
    mut progress: mpsc::UnboundedReceiver<ProgressParams>,
    listener: Option<mpsc::UnboundedSender<ProgressParams>>,
) -> Result<T, ClientError> {
    let mut request = std::pin::pin!(request);
    let mut quiet_until = tokio::time::Instant::now() + idle;
    loop {
        tokio::select! {
            answer = &mut request => return answer,
            Some(step) = progress.recv() => {
                quiet_until = tokio::time::Instant::now() + idle;
                if let Some(listener) = &listener {
                    let _ = listener.send(step);
                }
            }
            () = tokio::time::sleep_until(quiet_until) => {
                return Err(ClientError::new(
                    ErrorKind::Timeout,
                    format!("no answer to `{method}` and no progress within {idle:?}"),
                ));
            }
        }
    }
}
