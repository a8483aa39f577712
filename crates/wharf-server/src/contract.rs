//! The transport contract: everything a transport may use of the engine, and nothing else.
//!
//! A transport moves bytes and JSON-RPC envelopes; it never sees tools, prompts or resources.
//! It hands each decoded message in through [`request_work`] (a transport of this crate, which
//! reuses one box from request to request, through [`request_outcome`]; a batch through
//! [`answer_batch`], a client's notification or answer through [`client_messages`]), with a
//! [`Delivery`] saying where the request's messages go, how it is stopped and whom it acts for,
//! and the [`Session`] it belongs to. It writes the errors it answers itself with [`encode_error`], and
//! hears of what happens on the server through [`ServerHooks::subscribe_events`] and
//! [`event_notification`]. Transports that share sessions between instances tell this one of
//! changes made elsewhere with the `relayed_*` hooks.
//!
//! Stdio (`transport/` in this crate) and Streamable HTTP (`wharf-http`) import only this
//! module and the public API; `scripts/check-transport-contract` keeps it so. The contract is
//! hidden from the public docs and may change with any release of `wharf-server`.

use std::time::Instant;

use tokio::sync::broadcast;
use wharf_protocol::ErrorObject;

pub use crate::cancel::Cancellation;
pub use crate::client_key::client_key;
pub use crate::delivery::{Delivery, StreamControl};
pub use crate::dispatch::batch::{allows_batches, answer_batch, batches_refused, check_batch_len};
pub use crate::dispatch::mirrored::check_mirrored_headers;
pub use crate::dispatch::outcome::{
    Outcome, RequestWork, answer_now, decode_error_response, panic_error, request_work, response_or_panic,
};
pub use crate::dispatch::{check_stateless_meta, removed_in_stateless, removed_method, request_outcome};
pub use crate::error::{Error, RpcError, retry_after_seconds};
pub use crate::events::{ListKind, ServerEvent};
pub use crate::layer::{Layer, McpRequest};
pub use crate::lazy_queue::LazyQueue;
pub use crate::panic::{CatchUnwind, poll_catching};
pub use crate::principal::Principal;
pub use crate::random::{hex_id, is_hex_id};
pub use crate::scopes::{Scopes, is_scope_token};
pub use crate::server::Server;
pub use crate::session::{Admission, Closed, Negotiated, Outbound, Session, Transport};
pub use crate::session_end::SessionEndReason;
pub use crate::session_events::event_notification;
pub use crate::task::record::TaskRecord;
pub use crate::task::store::StoreFuture;
pub use crate::wire::encode_error;

/// A client's notifications, and its answers to the server's requests.
pub mod client_messages {
    pub use crate::dispatch::client_messages::{answer, notification, unaddressed_error};
}

/// An [`Error`] for a failed read or write.
pub fn io_error(err: std::io::Error) -> Error {
    Error::io(err)
}

/// The JSON-RPC error object of `error`, as a response carries it.
pub fn error_object(error: RpcError) -> ErrorObject {
    error.into_object()
}

/// The requests one session may have in flight ([`ServerOptions::max_in_flight`](crate::ServerOptions::max_in_flight)).
pub fn max_in_flight(server: &Server) -> usize {
    server.options().max_in_flight
}

/// The reusable buffer messages are encoded into.
pub mod message_buffer {
    pub use crate::message_buffer::{give_back, take};
}

/// What a transport reaches of a [`Server`] beyond its public API.
pub trait ServerHooks {
    /// The middleware around every request, outermost first.
    fn layers(&self) -> &[Box<dyn Layer>];
    /// Tells the layers that `session` ended at `ended_at`, if `initialize` opened it.
    fn end_session(&self, session: &Session, reason: SessionEndReason, ended_at: Instant);
    /// What happens on the server from now on: list changes, resource updates, task changes.
    fn subscribe_events(&self) -> broadcast::Receiver<ServerEvent>;
    /// Enables or disables here what another instance of the server enabled or disabled.
    fn relayed_toggle(&self, kind: ListKind, key: &str, enabled: bool);
    /// Tells this instance's listeners and sessions that a task running elsewhere changed.
    fn relayed_task_change(&self, record: TaskRecord);
    /// Tells this instance's clients that a list changed on another instance.
    fn relayed_list_change(&self, kind: ListKind, scopes: Scopes);
    /// Tells this instance's subscribers of `uri` that another instance changed the resource.
    fn relayed_resource_update(&self, uri: &str);
}

impl ServerHooks for Server {
    fn layers(&self) -> &[Box<dyn Layer>] {
        Server::layers(self)
    }

    fn end_session(&self, session: &Session, reason: SessionEndReason, ended_at: Instant) {
        Server::end_session(self, session, reason, ended_at);
    }

    fn subscribe_events(&self) -> broadcast::Receiver<ServerEvent> {
        Server::subscribe_events(self)
    }

    fn relayed_toggle(&self, kind: ListKind, key: &str, enabled: bool) {
        Server::relayed_toggle(self, kind, key, enabled);
    }

    fn relayed_task_change(&self, record: TaskRecord) {
        Server::relayed_task_change(self, record);
    }

    fn relayed_list_change(&self, kind: ListKind, scopes: Scopes) {
        Server::relayed_list_change(self, kind, scopes);
    }

    fn relayed_resource_update(&self, uri: &str) {
        Server::relayed_resource_update(self, uri);
    }
}
