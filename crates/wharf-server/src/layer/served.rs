//! The end of a chain of layers: the server's work on a request, made before the layers run
//! and kept in the request's own future (no box), and the cell through which the last layer
//! hands it the request.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll};

use super::request::{McpRequest, RequestParts};
use super::response::McpResponse;

/// The request the last layer passes on, taken from where dispatch keeps it, until the
/// server's work takes it. A lock, because
/// the futures that share it must be `Send`; it is never contended: both sides run inside one
/// poll of the request's future.
#[derive(Default)]
pub(crate) struct RequestCell(Mutex<Option<RequestParts>>);

impl RequestCell {
    fn put(&self, request: RequestParts) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(request);
    }

    /// The request, once the chain reached the server.
    pub(crate) fn take(&self) -> Option<RequestParts> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The server's work on a request, as the chain sees it: polled through the last layer's
/// future, and dropped (which stops the handler) as soon as that layer drops what
/// [`Next::run`](crate::Next::run) gave it.
pub(crate) trait ServerWork: Send {
    fn poll_answer(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<McpResponse>;

    fn abandon(self: Pin<&mut Self>);
}

impl<F: Future<Output = McpResponse> + Send> ServerWork for Option<F> {
    fn poll_answer(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<McpResponse> {
        let Some(work) = self.as_mut().as_pin_mut() else {
            panic!("a layer polled the server's answer after it was taken");
        };
        let answer = std::task::ready!(work.poll(cx));
        self.set(None);
        Poll::Ready(answer)
    }

    fn abandon(mut self: Pin<&mut Self>) {
        self.set(None);
    }
}

/// The server's answer as the last layer awaits it. It holds the request until it is first
/// polled: a chain whose layers all returned what `Next::run` gave them, unwrapped, gives the
/// request back ([`Served::passed_on`]) and dispatch serves it in place.
pub(crate) struct Served<'a> {
    cell: &'a RequestCell,
    request: Option<McpRequest<'a>>,
    work: Pin<&'a mut (dyn ServerWork + 'a)>,
    finished: bool,
}

impl<'a> Served<'a> {
    pub(crate) fn new(
        cell: &'a RequestCell,
        request: McpRequest<'a>,
        work: Pin<&'a mut (dyn ServerWork + 'a)>,
    ) -> Served<'a> {
        Served { cell, request: Some(request), work, finished: false }
    }

    /// `Ok`, and the request left where dispatch keeps it, when this future was never polled:
    /// the server's work never started. Otherwise this future.
    pub(crate) fn passed_on(mut self) -> Result<(), Served<'a>> {
        match self.request.take() {
            Some(_) => {
                self.finished = true;
                Ok(())
            }
            None => Err(self),
        }
    }
}

impl Future for Served<'_> {
    type Output = McpResponse;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<McpResponse> {
        let this = self.get_mut();
        if let Some(parts) = this.request.take().and_then(McpRequest::into_parts) {
            this.cell.put(parts);
        }
        let answer = std::task::ready!(this.work.as_mut().poll_answer(cx));
        this.finished = true;
        Poll::Ready(answer)
    }
}

impl Drop for Served<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.work.as_mut().abandon();
        }
    }
}
