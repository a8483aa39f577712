//! A response body passed on frame by frame while the JSON-RPC messages in it are written to
//! the tape: an SSE stream's events as each completes, a JSON body when it ends.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use serde_json::Value;

use super::Side;
use super::tape::{Carried, SharedTape, write};

/// How the messages of a body are found.
#[derive(Debug)]
pub(crate) enum Framing {
    /// `text/event-stream`: each event's data is a message.
    Events,
    /// `application/json`: the whole body is a message, or a batch of them.
    Json,
    /// Anything else: not read.
    Opaque,
}

/// The JSON-RPC messages in a body, read as its bytes come.
#[derive(Debug)]
pub(crate) struct MessageReader {
    framing: Framing,
    pending: Vec<u8>,
}

impl MessageReader {
    pub(crate) fn new(content_type: Option<&str>) -> MessageReader {
        let kind = content_type.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        let framing = match kind.as_str() {
            "text/event-stream" => Framing::Events,
            "application/json" => Framing::Json,
            _ => Framing::Opaque,
        };
        MessageReader { framing, pending: Vec::new() }
    }

    /// The messages completed by `bytes`.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<Value> {
        match self.framing {
            Framing::Opaque => Vec::new(),
            Framing::Json => {
                self.pending.extend_from_slice(bytes);
                Vec::new()
            }
            Framing::Events => {
                self.pending.extend(bytes.iter().copied().filter(|byte| *byte != b'\r'));
                let mut messages = Vec::new();
                while let Some(end) = self.pending.windows(2).position(|pair| pair == b"\n\n") {
                    let event: Vec<u8> = self.pending.drain(..end + 2).collect();
                    messages.extend(event_message(&event));
                }
                messages
            }
        }
    }

    /// The messages left when the body ends.
    pub(crate) fn finish(&mut self) -> Vec<Value> {
        let rest = std::mem::take(&mut self.pending);
        match self.framing {
            Framing::Opaque => Vec::new(),
            Framing::Events => event_message(&rest).into_iter().collect(),
            Framing::Json => messages_in(&rest),
        }
    }
}

/// The message an SSE event carries in its `data` lines, if any.
fn event_message(event: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(event);
    let data: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| data.strip_prefix(' ').unwrap_or(data))
        .collect();
    if data.is_empty() {
        return None;
    }
    serde_json::from_str(&data.join("\n")).ok()
}

/// The messages of a JSON body: one, or each of a batch; a body that is not JSON, as its text.
pub(crate) fn messages_in(body: &[u8]) -> Vec<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Vec::new();
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(batch)) => batch,
        Ok(message) => vec![message],
        Err(_) => vec![Value::from(String::from_utf8_lossy(body).into_owned())],
    }
}

/// The upstream's response body, its messages written to the tape as they pass.
pub(crate) struct TeeBody {
    inner: hyper::body::Incoming,
    reader: MessageReader,
    tape: SharedTape,
    /// What the first message is written with (the exchange's status and headers); the rest
    /// carry only the session.
    first: Option<Carried>,
    rest: Carried,
    ended: bool,
}

impl TeeBody {
    pub(crate) fn new(
        inner: hyper::body::Incoming,
        reader: MessageReader,
        tape: SharedTape,
        first: Carried,
    ) -> TeeBody {
        let rest = Carried { http: None, ..first.clone() };
        TeeBody { inner, reader, tape, first: Some(first), rest, ended: false }
    }

    /// Writes what the body held at its end, once; a refusal without a message is written too.
    fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        let messages = self.reader.finish();
        self.write(messages);
        if let Some(carried) = self.first.take()
            && carried.http.as_ref().and_then(|http| http["status"].as_u64()).is_some_and(|status| status >= 400)
        {
            let at_ms = self.tape.lock().unwrap_or_else(std::sync::PoisonError::into_inner).now_ms();
            write(&self.tape, Side::Server, at_ms, Value::Null, &carried);
        }
    }

    fn write(&mut self, messages: Vec<Value>) {
        for message in messages {
            let carried = self.first.take().unwrap_or_else(|| self.rest.clone());
            let at_ms = self.tape.lock().unwrap_or_else(std::sync::PoisonError::into_inner).now_ms();
            write(&self.tape, Side::Server, at_ms, message, &carried);
        }
    }
}

impl Body for TeeBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if let Some(Ok(frame)) = &polled
            && let Some(data) = frame.data_ref()
        {
            let messages = self.reader.feed(data);
            self.write(messages);
        }
        // hyper stops polling a body of known length at its last byte: the end is seen then.
        if polled.is_none() || self.inner.is_end_stream() {
            self.end();
        }
        Poll::Ready(polled)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn events_are_read_across_frames_and_a_json_body_at_its_end() {
        let mut events = MessageReader::new(Some("text/event-stream"));
        assert!(events.feed(b"id: 1\r\ndata: {\"jsonrpc\":\"2.0\",").is_empty());
        assert_eq!(
            events.feed(b"\"method\":\"a\"}\r\n\r\nid: 2\ndata:\n\nevent: message\ndata: [1,"),
            [json!({"jsonrpc": "2.0", "method": "a"})]
        );
        assert_eq!(events.feed(b"\ndata: 2]\n\n"), [json!([1, 2])]);
        assert!(events.finish().is_empty());
        let mut json = MessageReader::new(Some("application/json; charset=utf-8"));
        assert!(json.feed(b"[{\"id\":1},").is_empty());
        assert!(json.feed(b"{\"id\":2}]").is_empty());
        assert_eq!(json.finish(), [json!({"id": 1}), json!({"id": 2})]);
        assert!(MessageReader::new(Some("text/plain")).feed(b"{}").is_empty());
        assert_eq!(messages_in(b"not json"), [json!("not json")]);
    }
}
