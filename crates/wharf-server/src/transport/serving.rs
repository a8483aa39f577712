//! [`Serving`]: the future of a connection being served, boxed where it is made.
//!
//! An `async` body is compiled in every crate that awaits it, as a generic function is. Made
//! and boxed here, behind a non-generic function, the connection's work (the read loop and the
//! whole engine below it) is compiled once, in this crate, however many crates serve stdio or
//! a stream; the one box per connection costs nothing per request.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::contract::Error;

/// A connection being served: completes once its input has ended and every request in flight
/// has been answered, with the error that ended it early, if any.
#[must_use = "a connection is served only while its future is awaited"]
pub struct Serving {
    work: Pin<Box<dyn Future<Output = Result<(), Error>> + Send>>,
}

impl Serving {
    pub(crate) fn new(work: impl Future<Output = Result<(), Error>> + Send + 'static) -> Serving {
        Serving { work: Box::pin(work) }
    }
}

impl Future for Serving {
    type Output = Result<(), Error>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.work.as_mut().poll(context)
    }
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving").finish_non_exhaustive()
    }
}
