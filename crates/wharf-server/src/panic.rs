//! Turns a panic inside a handler's future into an error value, so that the request still gets
//! exactly one response and the connection lives on.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A future that completes with `Err(message)` if the inner future panics while polled.
#[allow(missing_debug_implementations, reason = "a future of any type")]
pub struct CatchUnwind<F> {
    inner: Pin<Box<F>>,
}

impl<F: Future> CatchUnwind<F> {
    /// Catches the panics of `future`.
    pub fn new(future: F) -> CatchUnwind<F> {
        CatchUnwind { inner: Box::pin(future) }
    }

    /// Catches the panics of a future already boxed.
    pub(crate) fn from_box(inner: Pin<Box<F>>) -> CatchUnwind<F> {
        CatchUnwind { inner }
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        poll_catching(self.inner.as_mut(), cx)
    }
}

/// Polls `future` once, turning a panic into `Err(message)`. A future that panicked must never
/// be polled again (its owner drops it), so whatever state the panic left behind cannot be
/// observed: asserting unwind safety is sound here.
pub fn poll_catching<F: Future>(future: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<Result<F::Output, String>> {
    match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
        Ok(Poll::Pending) => Poll::Pending,
        Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
        Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}
