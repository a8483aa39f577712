//! Outgoing JSON-RPC messages as bytes: responses, errors and notifications, written into the
//! thread's reusable message buffer.

use serde::Serialize;
use wharf_protocol::{ErrorMessage, JsonRpc2, NotificationMessage, RequestId, ServerNotification};

use crate::error::RpcError;
use crate::message_buffer;

/// Serializes `message` into a fresh buffer.
pub(crate) fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    let mut bytes = message_buffer::take();
    encode_into(&mut bytes, message);
    bytes
}

/// Appends `value`'s JSON to `bytes`.
pub(crate) fn encode_into<T: Serialize + ?Sized>(bytes: &mut Vec<u8>, value: &T) {
    // Serializing our own types into memory cannot fail: every map key is a string.
    wharf_protocol::encode_into(bytes, value).unwrap_or_else(|err| unreachable!("serializing a message failed: {err}"));
}

/// Serializes a server notification as a JSON-RPC message.
pub(crate) fn encode_notification(notification: &ServerNotification) -> Vec<u8> {
    encode(&NotificationMessage { jsonrpc: JsonRpc2, method: notification.method(), params: Some(notification) })
}

/// Serializes an error response; `id` is absent when the request's could not be read.
pub fn encode_error(id: Option<&RequestId>, error: RpcError) -> Vec<u8> {
    encode(&ErrorMessage { id, error: &error.into_object() })
}

/// Encodes `{"jsonrpc":"2.0","id":…,"result":…}`.
pub(crate) fn respond<R: Serialize>(id: &RequestId, result: &R) -> Vec<u8> {
    respond_with(id, |out| encode_into(out, result))
}

/// Encodes `{"jsonrpc":"2.0","id":…,"result":…}` with the result written by `encode_result`.
/// The envelope is written as bytes around the result: its member names and the version
/// string need no escaping, and an encoder would check every byte of them on every response.
pub(crate) fn respond_with(id: &RequestId, encode_result: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = message_buffer::take();
    bytes.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    match id.as_number() {
        Some(number) => bytes.extend_from_slice(itoa::Buffer::new().format(number).as_bytes()),
        None => encode_into(&mut bytes, id),
    }
    bytes.extend_from_slice(b",\"result\":");
    encode_result(&mut bytes);
    bytes.push(b'}');
    bytes
}
