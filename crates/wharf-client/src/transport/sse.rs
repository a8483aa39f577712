//! Server-sent events, as Streamable HTTP uses them: a decoder fed the body's chunks as they
//! arrive, giving each event's `id`, `retry` and `data` once its blank line is read.

/// One event of a stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Event {
    /// The event's id, for `Last-Event-ID` when the stream is resumed.
    pub(crate) id: Option<String>,
    /// The event type; MCP's messages have none, or `message`.
    pub(crate) kind: Option<String>,
    /// Its `data` lines joined by newlines.
    pub(crate) data: String,
    /// How long to wait before reconnecting, in milliseconds.
    pub(crate) retry: Option<u64>,
}

/// The longest event accepted, so that a stream without blank lines cannot grow the buffer
/// for ever.
const MAX_EVENT: usize = 64 * 1024 * 1024;

/// Decodes a stream of server-sent events from its chunks.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    pending: Vec<u8>,
    event: Event,
    has_fields: bool,
    has_data: bool,
    last_was_cr: bool,
}

impl Decoder {
    /// Adds a chunk of the body and returns the events it completed; `Err` when one event
    /// grew too large.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<Vec<Event>, String> {
        let mut events = Vec::new();
        for &byte in chunk {
            if self.last_was_cr {
                self.last_was_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\n' | b'\r' => {
                    self.last_was_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.pending);
                    if let Some(event) = self.line(&line) {
                        events.push(event);
                    }
                }
                _ => {
                    self.pending.push(byte);
                    if self.pending.len() + self.event.data.len() > MAX_EVENT {
                        return Err(format!("an event of the stream is larger than {MAX_EVENT} bytes"));
                    }
                }
            }
        }
        Ok(events)
    }

    fn line(&mut self, line: &[u8]) -> Option<Event> {
        if line.is_empty() {
            if !self.has_fields {
                return None;
            }
            self.has_fields = false;
            self.has_data = false;
            return Some(std::mem::take(&mut self.event));
        }
        if line[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.event.data.push('\n');
                }
                self.event.data.push_str(value);
                self.has_fields = true;
                self.has_data = true;
            }
            "id" if !value.contains('\0') => {
                self.event.id = Some(value.to_owned());
                self.has_fields = true;
            }
            "event" => {
                self.event.kind = Some(value.to_owned());
                self.has_fields = true;
            }
            "retry" => {
                if let Ok(millis) = value.parse() {
                    self.event.retry = Some(millis);
                    self.has_fields = true;
                }
            }
            _ => {}
        }
        None
    }
}

impl Event {
    /// True for MCP's messages: events without a type, or of type `message`.
    pub(crate) fn is_message(&self) -> bool {
        matches!(self.kind.as_deref(), None | Some("") | Some("message"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_end_at_blank_lines_whatever_the_line_endings() {
        let mut decoder = Decoder::default();
        let events = decoder.push(b"id: 7\r\ndata: {\"a\":1}\r\n\r\nretry: 500\nid: 8\ndata:\n\n").unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[0].data, "{\"a\":1}");
        assert!(events[0].is_message());
        assert_eq!(events[1].retry, Some(500));
        assert_eq!(events[1].data, "");
    }

    #[test]
    fn chunks_may_split_lines_anywhere_and_comments_are_skipped() {
        let mut decoder = Decoder::default();
        let text = b": keep-alive\n\nevent: message\ndata: one\ndata: two\n\n";
        let mut events = Vec::new();
        for byte in text {
            events.extend(decoder.push(&[*byte]).unwrap());
        }
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "one\ntwo");
        assert!(events[0].is_message());
    }

    #[test]
    fn other_event_types_are_not_messages() {
        let mut decoder = Decoder::default();
        let events = decoder.push(b"event: ping\ndata: x\n\n").unwrap();
        assert!(!events[0].is_message());
    }
}
