//! Bodies in one piece, for the bare servers: a response sent whole, a request read whole.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

/// A body sent in one piece.
#[derive(Debug)]
pub struct Whole(pub Option<Bytes>);

impl Body for Whole {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.take().map(|bytes| Ok(Frame::data(bytes))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.as_ref().map_or(0, |bytes| bytes.len() as u64))
    }
}

/// A request's body, read whole; what follows a failed frame is left unread.
pub async fn read_whole(body: Incoming) -> Vec<u8> {
    let mut body = std::pin::pin!(body);
    let mut bytes = Vec::new();
    while let Some(Ok(frame)) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        if let Ok(mut data) = frame.into_data() {
            while data.has_remaining() {
                let chunk = data.chunk();
                bytes.extend_from_slice(chunk);
                let read = chunk.len();
                data.advance(read);
            }
        }
    }
    bytes
}
