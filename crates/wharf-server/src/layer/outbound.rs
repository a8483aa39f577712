//! What a handler sends the client while it works, as middleware sees it.

use wharf_protocol::RequestId;

/// What kind of message a handler sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutboundKind {
    /// A notification (progress, a log message, ...).
    Notification,
    /// A request the client is to answer (elicitation, sampling, roots).
    Request,
}

/// A message a handler sends the client while it works, as [`Layer::outbound`](crate::Layer::outbound) sees it.
#[derive(Debug)]
pub struct OutboundMessage<'a> {
    pub(crate) kind: OutboundKind,
    pub(crate) method: &'a str,
    pub(crate) request_id: &'a RequestId,
    pub(crate) bytes: &'a [u8],
}

impl<'a> OutboundMessage<'a> {
    /// A notification or a request.
    pub fn kind(&self) -> OutboundKind {
        self.kind
    }

    /// The message's method, such as `notifications/progress`.
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The id of the client's request whose handler sent the message (unique within its
    /// session).
    pub fn request_id(&self) -> &'a RequestId {
        self.request_id
    }

    /// The whole message as it goes out (JSON).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}
