//! A key this instance holds while its call runs ([`HeldKey`]): its lease renewed in the
//! background every third of its length, and at the end either the outcome recorded or the key
//! given back. A key dropped without either (the request was cancelled, the handler never
//! ended) stops being renewed: once its lease runs out, its outcome is unknown.

use std::sync::Arc;
use std::time::Duration;

use super::recorded::Recorded;
use super::store::{IdempotencyStore, IdempotencyStoreError};
use wharf_protocol::{ErrorCode, ErrorObject};

/// A claimed key, renewed until it is finished, released or dropped.
pub(crate) struct HeldKey {
    store: Arc<dyn IdempotencyStore>,
    key: String,
    renewing: tokio::task::AbortHandle,
}

impl HeldKey {
    /// Holds `key`, just claimed in `store` for `lease`.
    pub(crate) fn new(store: Arc<dyn IdempotencyStore>, key: String, lease: Duration) -> HeldKey {
        let renewer = store.clone();
        let renewed = key.clone();
        let renewing = tokio::spawn(async move {
            loop {
                tokio::time::sleep(lease / 3).await;
                if let Err(err) = renewer.renew(&renewed, lease).await {
                    tracing::warn!(error = %err, "an idempotency key's lease could not be renewed");
                }
            }
        })
        .abort_handle();
        HeldKey { store, key, renewing }
    }

    /// Records the call's outcome: every later call with the key is answered with it. A result
    /// larger than the store keeps is recorded as an error saying the call ran.
    pub(crate) async fn finish(self, outcome: &Recorded) {
        self.renewing.abort();
        let text = outcome.to_text();
        let size = text.len();
        let recorded = match self.store.finish(&self.key, text.into()).await {
            Err(IdempotencyStoreError::TooLarge) => {
                let message = format!(
                    "Internal error: the call with this idempotency key ran, but its result ({size} bytes) is larger than the idempotency store keeps"
                );
                let ran = Recorded::Error(ErrorObject::new(ErrorCode::INTERNAL_ERROR, message));
                self.store.finish(&self.key, ran.to_text().into()).await
            }
            other => other,
        };
        if let Err(err) = recorded {
            // The key stays claimed: once its lease runs out, duplicates hear its outcome is
            // unknown, which is true, rather than run it again.
            tracing::warn!(error = %err, "an idempotent call's outcome could not be recorded");
        }
    }

    /// Gives the key back: the call ended before it could take effect (its arguments were
    /// refused, or it asked the client for input first).
    pub(crate) async fn release(self) {
        self.renewing.abort();
        self.store.release(&self.key).await;
    }
}

impl Drop for HeldKey {
    fn drop(&mut self) {
        self.renewing.abort();
    }
}
