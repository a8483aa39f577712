//! The future a layer returns, [`LayerFuture`]: the layer's own work, an answer already made,
//! or the server's work, which the request's own future holds (no box for a layer that only
//! passes the request on).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::response::McpResponse;
use super::served::Served;

/// The future a [`Layer`](crate::Layer) returns: what [`Next::run`](crate::Next::run) gave it,
/// its own work made with [`LayerFuture::new`], or an answer made with [`McpResponse::ready`]. It may
/// borrow the layer and the rest of the chain.
pub struct LayerFuture<'a> {
    kind: Kind<'a>,
}

enum Kind<'a> {
    Boxed(Pin<Box<dyn Future<Output = McpResponse> + Send + 'a>>),
    Ready(Option<McpResponse>),
    Served(Served<'a>),
}

impl<'a> LayerFuture<'a> {
    /// A layer's own work (boxed): `LayerFuture::new(async move { next.run(request).await })`.
    pub fn new(future: impl Future<Output = McpResponse> + Send + 'a) -> LayerFuture<'a> {
        LayerFuture { kind: Kind::Boxed(Box::pin(future)) }
    }

    /// The server's answer, which the request's own future holds.
    pub(crate) fn served(served: Served<'a>) -> LayerFuture<'a> {
        LayerFuture { kind: Kind::Served(served) }
    }

    /// `Ok` when every layer returned what `Next::run` gave it, unwrapped, and the request
    /// reached the server: nothing of the layers is left to run, so dispatch serves the request
    /// as if there were none. Otherwise this future, to await.
    pub(crate) fn passed_on(self) -> Result<(), LayerFuture<'a>> {
        match self.kind {
            Kind::Served(served) => served.passed_on().map_err(LayerFuture::served),
            kind => Err(LayerFuture { kind }),
        }
    }
}

impl<'a> From<Pin<Box<dyn Future<Output = McpResponse> + Send + 'a>>> for LayerFuture<'a> {
    fn from(future: Pin<Box<dyn Future<Output = McpResponse> + Send + 'a>>) -> LayerFuture<'a> {
        LayerFuture { kind: Kind::Boxed(future) }
    }
}

impl McpResponse {
    /// This answer as the future a layer returns, for a layer that answers without waiting:
    /// `return McpResponse::error(denied).ready();`.
    pub fn ready<'a>(self) -> LayerFuture<'a> {
        LayerFuture { kind: Kind::Ready(Some(self)) }
    }
}

impl Future for LayerFuture<'_> {
    type Output = McpResponse;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<McpResponse> {
        match &mut self.get_mut().kind {
            Kind::Boxed(future) => future.as_mut().poll(cx),
            Kind::Ready(answer) => Poll::Ready(answer.take().expect("a LayerFuture polled after it finished")),
            Kind::Served(served) => Pin::new(served).poll(cx),
        }
    }
}

impl fmt::Debug for LayerFuture<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Boxed(_) => "boxed",
            Kind::Ready(_) => "ready",
            Kind::Served(_) => "served",
        };
        f.debug_struct("LayerFuture").field("kind", &kind).finish()
    }
}
