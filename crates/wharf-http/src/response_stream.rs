//! The SSE stream that answers one POST: its frames, and for a resumable 2025 session the
//! record that lets a client resume it, here and, through the shared session store, on any
//! other instance. An event is kept in the shared store before it is sent; the messages that
//! come together are kept together, in one wait.

use std::future::poll_fn;
use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;
use tokio::sync::mpsc;
use wharf_server::contract::StoreFuture;

use super::session_store::SessionStoreError;
use super::sessions::HttpSession;
use super::shared::Shared;
use super::sse;

/// An SSE response stream, and for resumable sessions the record that lets a client resume it.
pub(super) struct ResponseStream {
    pub(super) shared: Arc<Shared>,
    /// The client's open response; None once it went away or the handler closed it.
    pub(super) body: Option<mpsc::Sender<Bytes>>,
    resumable: Option<(Arc<HttpSession>, u64)>,
    sequence: u64,
    /// The priming event, sent at once but kept with the first events after it: it carries no
    /// message, and a stream no other event of which was kept is one no client can miss.
    unkept_priming: Option<Bytes>,
}

impl ResponseStream {
    pub(super) fn new(
        shared: Arc<Shared>,
        body: mpsc::Sender<Bytes>,
        resumable: Option<(Arc<HttpSession>, u64)>,
    ) -> ResponseStream {
        ResponseStream { shared, body: Some(body), resumable, sequence: 0, unkept_priming: None }
    }

    pub(super) async fn prime(&mut self) {
        let Some((http_session, stream)) = &self.resumable else { return };
        http_session.streams().entry(*stream).or_default();
        let frame = sse::priming(&sse::event_id(*stream, 0), self.shared.options.sse_retry.as_millis());
        if self.shared.options.session_store.is_some() {
            // Event 0 is never replayed (a client resumes after it at the earliest); kept, it
            // tells another instance that the stream exists.
            self.unkept_priming = Some(frame.clone());
        }
        self.write_frame(frame).await;
    }

    /// Sends `messages` as events, in order; on a resumable stream each is numbered, and all
    /// are kept in the shared session store (one wait for them all) before the first is sent.
    pub(super) async fn send_all(&mut self, messages: &[&[u8]]) {
        let Some((_, stream)) = &self.resumable else {
            for message in messages {
                self.write_frame(sse::message(None, message)).await;
            }
            return;
        };
        let stream = *stream;
        let frames: Vec<(u64, Bytes)> = messages
            .iter()
            .map(|message| {
                self.sequence += 1;
                (self.sequence, sse::message(Some(&sse::event_id(stream, self.sequence)), message))
            })
            .collect();
        self.keep_shared(&frames).await;
        for (sequence, frame) in frames {
            self.hand_out(sequence, frame).await;
        }
    }

    /// Keeps `frames` (and the priming event before them, the first time) in the session store
    /// shared by the instances, when there is one: a client resuming on another instance, even
    /// once this one is gone, gets every event it had seen after its last. When the store fails
    /// the events are still sent (the request goes on), and a resume elsewhere misses them.
    async fn keep_shared(&mut self, frames: &[(u64, Bytes)]) {
        let (Some(store), Some((http_session, stream))) = (&self.shared.options.session_store, &self.resumable) else {
            return;
        };
        let (session, stream, idle) = (http_session.session.id(), *stream, self.shared.options.session_idle_timeout);
        let priming = self.unkept_priming.take().map(|frame| (0, frame));
        let pending: Vec<StoreFuture<'_, Result<(), SessionStoreError>>> = priming
            .iter()
            .chain(frames)
            .map(|(sequence, frame)| store.0.keep_event(session, stream, *sequence, frame.clone(), idle))
            .collect();
        if let Err(err) = all_done(pending).await {
            tracing::warn!(%err, stream, "events were sent without being kept: a resume on another instance misses them");
        }
    }

    /// Records event `sequence` where this instance resumes its stream, hands it to a client
    /// that resumed it here, and sends it.
    async fn hand_out(&mut self, sequence: u64, frame: Bytes) {
        if let Some((http_session, stream)) = &self.resumable {
            // Storing and handing to a resumed listener happen under one lock, which a
            // resuming client also takes, so it sees each event exactly once.
            let mut streams = http_session.streams();
            let live = streams.entry(*stream).or_default();
            self.shared.sessions.events().store(http_session.session.id(), *stream, sequence, frame.clone());
            live.sequence = sequence;
            if let Some(listener) = &live.listener
                && listener.try_send(frame.clone()).is_err()
            {
                // A listener that cannot keep up resumes again from its last event.
                live.listener = None;
            }
        }
        self.write_frame(frame).await;
    }

    pub(super) async fn write_frame(&mut self, frame: Bytes) {
        if let Some(body) = &self.body
            && body.send(frame).await.is_err()
        {
            self.body = None;
        }
    }

    pub(super) fn finish(&mut self) {
        if let Some((http_session, stream)) = &self.resumable {
            http_session.finish_stream(*stream);
            if let Some(store) = &self.shared.options.session_store {
                store.0.keep_stream_end(http_session.session.id(), *stream, self.shared.options.session_idle_timeout);
            }
        }
        self.body = None;
    }
}

/// Drives `pending` together (each first polled in order, so that a store queues them in
/// order) until all are done; the first error, if any.
async fn all_done(mut pending: Vec<StoreFuture<'_, Result<(), SessionStoreError>>>) -> Result<(), SessionStoreError> {
    let mut failed = None;
    poll_fn(|context| {
        pending.retain_mut(|future| match future.as_mut().poll(context) {
            Poll::Ready(done) => {
                if let Err(err) = done {
                    failed.get_or_insert(err);
                }
                false
            }
            Poll::Pending => true,
        });
        if pending.is_empty() { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
    failed.map_or(Ok(()), Err)
}
