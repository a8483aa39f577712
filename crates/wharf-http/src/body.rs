//! The response body (a whole JSON message, or an SSE stream fed by a channel) and reading
//! request bodies within the size limit.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, BufMut as _, Bytes};
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::time::Instant;

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
    /// The body did not arrive in time, or arrived slower than the least rate allowed.
    TooSlow,
    Broken(String),
}

/// How much a request body may weigh, and how fast it must arrive.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimits {
    pub(crate) max_bytes: usize,
    pub(crate) timeout: Duration,
    /// Bytes per second on average since the headers, after [`RATE_GRACE`]; 0: no minimum.
    pub(crate) min_rate: u64,
}

/// How far behind the least rate a body may fall (the first bytes may be slow to come).
const RATE_GRACE: Duration = Duration::from_secs(5);

impl BodyLimits {
    /// When the body must have delivered more than `received` bytes: the earlier of its own
    /// deadline and the one its rate allows.
    fn next_deadline(&self, started: Instant, received: usize) -> Instant {
        let total = started + self.timeout;
        if self.min_rate == 0 {
            return total;
        }
        let earned = Duration::from_secs_f64(received as f64 / self.min_rate as f64);
        total.min(started + RATE_GRACE + earned)
    }
}

/// Reads a whole request body, refusing it as soon as it grows past the limit or falls behind
/// its deadline. A body that came in one frame is kept as it came (hyper's frames are slices of
/// its read buffer): only a body in several frames is copied, into one.
pub(crate) async fn read_body<B>(body: B, limits: BodyLimits) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Error: std::fmt::Display,
{
    let limit = limits.max_bytes;
    // The clock is read only once the body makes the reader wait: most bodies have arrived
    // with their headers, and those cost no timer.
    let mut started = None;
    let mut body = std::pin::pin!(body);
    let mut whole = Whole::default();
    // The error becomes text at once: the body's own error type need not be `Send`.
    let mut poll_frame = |cx: &mut Context<'_>| {
        if body.is_end_stream() {
            // A body whose length was declared says when it is whole: no poll for its end.
            return Poll::Ready(None);
        }
        body.as_mut().poll_frame(cx).map(|frame| frame.map(|frame| frame.map_err(|err| err.to_string())))
    };
    loop {
        let next = match std::future::poll_fn(|cx| Poll::Ready(poll_frame(cx))).await {
            Poll::Ready(next) => next,
            Poll::Pending => {
                let started = *started.get_or_insert_with(Instant::now);
                let deadline = limits.next_deadline(started, whole.len());
                let waiting = std::future::poll_fn(&mut poll_frame);
                tokio::time::timeout_at(deadline, waiting).await.map_err(|_| BodyError::TooSlow)?
            }
        };
        let Some(frame) = next else { break };
        let frame = frame.map_err(BodyError::Broken)?;
        if let Ok(mut data) = frame.into_data() {
            if whole.len() + data.remaining() > limit {
                return Err(BodyError::TooLarge);
            }
            whole.add(&mut data);
        }
    }
    Ok(whole.into_bytes())
}

/// A body's frames so far: none, the one frame itself, or several copied into one buffer.
#[derive(Default)]
enum Whole {
    #[default]
    Empty,
    One(Bytes),
    Many(Vec<u8>),
}

impl Whole {
    fn len(&self) -> usize {
        match self {
            Whole::Empty => 0,
            Whole::One(bytes) => bytes.len(),
            Whole::Many(bytes) => bytes.len(),
        }
    }

    fn add(&mut self, data: &mut impl Buf) {
        match self {
            Whole::Empty => *self = Whole::One(data.copy_to_bytes(data.remaining())),
            Whole::One(first) => {
                let mut joined = Vec::with_capacity(first.len() + data.remaining());
                joined.extend_from_slice(first);
                joined.put(data);
                *self = Whole::Many(joined);
            }
            Whole::Many(joined) => joined.put(data),
        }
    }

    fn into_bytes(self) -> Bytes {
        match self {
            Whole::Empty => Bytes::new(),
            Whole::One(bytes) => bytes,
            Whole::Many(joined) => Bytes::from(joined),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_has_its_own_deadline_and_earns_time_at_the_least_rate() {
        let limits = BodyLimits { max_bytes: 1 << 20, timeout: Duration::from_secs(30), min_rate: 1024 };
        let started = Instant::now();
        // Nothing yet: the grace only.
        assert_eq!(limits.next_deadline(started, 0), started + RATE_GRACE);
        // 10 KiB in: ten more seconds earned.
        assert_eq!(limits.next_deadline(started, 10 * 1024), started + RATE_GRACE + Duration::from_secs(10));
        // Never past the body's own deadline.
        assert_eq!(limits.next_deadline(started, 1 << 20), started + Duration::from_secs(30));
        let no_rate = BodyLimits { min_rate: 0, ..limits };
        assert_eq!(no_rate.next_deadline(started, 0), started + Duration::from_secs(30));
    }

    /// A body whose frames are given, all there at once.
    struct Frames(std::collections::VecDeque<Bytes>);

    impl Body for Frames {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Ready(self.0.pop_front().map(|bytes| Ok(Frame::data(bytes))))
        }
    }

    fn limits(max_bytes: usize) -> BodyLimits {
        BodyLimits { max_bytes, timeout: Duration::from_secs(5), min_rate: 0 }
    }

    async fn read(frames: &[&'static [u8]], max_bytes: usize) -> Result<Bytes, BodyError> {
        read_body(Frames(frames.iter().map(|frame| Bytes::from_static(frame)).collect()), limits(max_bytes)).await
    }

    #[tokio::test]
    async fn a_body_in_one_frame_is_kept_as_it_came_and_several_are_joined() {
        let frame: &'static [u8] = b"{\"jsonrpc\":\"2.0\"}";
        let one = read(&[frame], 100).await.ok().unwrap();
        assert_eq!(one.as_ptr(), frame.as_ptr(), "no copy");
        let joined = read(&[b"{\"a\"", b":", b"1}"], 100).await.ok().unwrap();
        assert_eq!(&joined[..], b"{\"a\":1}");
        assert!(read(&[], 100).await.ok().unwrap().is_empty());
        assert!(matches!(read(&[b"12345", b"678"], 7).await, Err(BodyError::TooLarge)));
        assert!(matches!(read(&[b"12345678"], 7).await, Err(BodyError::TooLarge)));
        assert_eq!(&read(&[b"1234", b"567"], 7).await.ok().unwrap()[..], b"1234567");
    }
}
