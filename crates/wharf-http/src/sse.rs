//! Server-sent event frames: messages, the priming event, and keep-alive comments.

use bytes::Bytes;

/// One JSON-RPC message as an event, with an id when the stream can be resumed.
pub(crate) fn message(id: Option<&str>, json: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(json.len() + 48);
    if let Some(id) = id {
        frame.extend_from_slice(b"id: ");
        frame.extend_from_slice(id.as_bytes());
        frame.push(b'\n');
    }
    // Encoded JSON never contains a raw newline, so one `data` line carries the message.
    frame.extend_from_slice(b"event: message\ndata: ");
    frame.extend_from_slice(json);
    frame.extend_from_slice(b"\n\n");
    Bytes::from(frame)
}

/// The first event of a resumable stream: an id to resume from, the reconnection delay, and
/// no data.
pub(crate) fn priming(id: &str, retry_ms: u128) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {retry_ms}\ndata: \n\n"))
}

/// A comment line that keeps a quiet stream open through proxies.
pub(crate) fn keep_alive() -> Bytes {
    Bytes::from_static(b": keep-alive\n\n")
}

/// An event id: the stream, then the event's place in it.
pub(crate) fn event_id(stream: u64, sequence: u64) -> String {
    format!("{stream}-{sequence}")
}

/// The stream and place named by a `Last-Event-ID` value.
pub(crate) fn parse_event_id(value: &str) -> Option<(u64, u64)> {
    let (stream, sequence) = value.split_once('-')?;
    Some((stream.parse().ok()?, sequence.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_have_the_sse_shape() {
        assert_eq!(&message(Some("3-1"), b"{}")[..], b"id: 3-1\nevent: message\ndata: {}\n\n");
        assert_eq!(&message(None, b"{}")[..], b"event: message\ndata: {}\n\n");
        assert_eq!(&priming("3-0", 500)[..], b"id: 3-0\nretry: 500\ndata: \n\n");
        assert_eq!(parse_event_id(&event_id(7, 12)), Some((7, 12)));
        assert_eq!(parse_event_id("7"), None);
        assert_eq!(parse_event_id("a-1"), None);
    }
}
