//! The response body (a whole JSON message, or an SSE stream fed by a channel) and reading
//! request bodies within the size limit.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

/// The body of every response the MCP endpoint sends.
#[derive(Debug)]
pub struct McpBody {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Full(Option<Bytes>),
    /// Frames arrive until the sender is dropped; dropping this body (the client went away)
    /// closes the channel, which is how the sender learns of it.
    Stream(mpsc::Receiver<Bytes>),
}

impl McpBody {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> McpBody {
        let bytes = bytes.into();
        McpBody { kind: Kind::Full((!bytes.is_empty()).then_some(bytes)) }
    }

    pub(crate) fn empty() -> McpBody {
        McpBody { kind: Kind::Full(None) }
    }

    pub(crate) fn stream(frames: mpsc::Receiver<Bytes>) -> McpBody {
        McpBody { kind: Kind::Stream(frames) }
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.kind {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|bytes| Ok(Frame::data(bytes)))),
            Kind::Stream(frames) => frames.poll_recv(cx).map(|frame| frame.map(|bytes| Ok(Frame::data(bytes)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |bytes| bytes.len() as u64)),
            Kind::Stream(_) => SizeHint::default(),
        }
    }
}

/// Why a request body could not be read.
#[derive(Debug)]
pub(crate) enum BodyError {
    TooLarge,
    Broken(String),
}

/// Reads a whole request body, refusing it as soon as it grows past `limit` bytes.
pub(crate) async fn read_body<B>(body: B, limit: usize) -> Result<Vec<u8>, BodyError>
where
    B: Body,
    B::Error: std::fmt::Display,
{
    let mut body = std::pin::pin!(body);
    let mut bytes = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let frame = frame.map_err(|err| BodyError::Broken(err.to_string()))?;
        if let Ok(mut data) = frame.into_data() {
            if bytes.len() + data.remaining() > limit {
                return Err(BodyError::TooLarge);
            }
            while data.has_remaining() {
                let chunk = data.chunk();
                bytes.extend_from_slice(chunk);
                let read = chunk.len();
                data.advance(read);
            }
        }
    }
    Ok(bytes)
}
