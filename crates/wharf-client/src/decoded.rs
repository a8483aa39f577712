//! [`decoded`]: a result the client reads from a server's answer, or the error naming what
//! did not match.
//!
//! The client's `async` methods are compiled in every crate that awaits them, as generic
//! functions are; a `serde_json::from_str::<T>` inside them would compile `T`'s decoder (all of
//! `CallToolResult`'s content types, say) there again. [`FromJson`]'s decoders are compiled
//! once, in `wharf-protocol`; what is generic here is only the call to them.

use serde_json::value::RawValue;
use wharf_protocol::FromJson;

use crate::error::ClientError;
use crate::router;

/// The result in `raw`, or why it is not one.
pub(crate) fn decoded<T: FromJson>(raw: &RawValue) -> Result<T, ClientError> {
    T::from_json(raw.get()).map_err(|err| mismatched(&err, raw))
}

fn mismatched(err: &serde_json::Error, raw: &RawValue) -> ClientError {
    ClientError::invalid(format!(
        "the result does not match the request: {err}: {}",
        router::excerpt(raw.get().as_bytes())
    ))
}
