//! Encoding results for the request's revision: `resultType`, the server info in `_meta` and
//! cache hints on 2026-07-28, nothing of the kind before.

use serde::Serialize;
use serde_json::Value;
use wharf_protocol::{
    CacheScope, CallToolResult, CompleteResult, DiscoverResult, EmptyResult, Era, GetPromptResult, InputRequiredResult,
    JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ListenResult,
    ProtocolVersion, ReadResourceResult, RequestId, ResultMembers, ResultType,
};

use crate::context::RequestContext;
use crate::error::RpcError;
use crate::server::Server;
use crate::task::record::TaskRecord;
use crate::wire::{encode_into, respond, respond_with};

/// Encodes results the way the request's revision expects.
pub(super) struct Finisher<'a> {
    pub(super) server: &'a Server,
    pub(super) id: &'a RequestId,
    pub(super) version: ProtocolVersion,
}

impl Finisher<'_> {
    /// A result that is never cached.
    pub(super) fn complete<R: Serialize + Stamp>(&self, mut result: R) -> Vec<u8> {
        if self.version.era() == Era::Session {
            return respond_with(self.id, |out| result.encode(out));
        }
        result.set_result_type(ResultType::complete());
        if let Some(meta) = result.meta_mut() {
            // The handler filled in `_meta` itself; the server info joins what it set.
            meta.extend(self.server.server_info_meta().clone());
            return respond_with(self.id, |out| result.encode(out));
        }
        self.with_server_info(|out| result.encode(out))
    }

    /// The handler's result, unless it asked for input it has no answer to yet: then that
    /// request, whatever the handler made of the missing answer.
    pub(super) fn complete_or_input<R: Serialize + Stamp>(
        &self,
        context: &RequestContext,
        outcome: Result<R, RpcError>,
    ) -> Result<Vec<u8>, RpcError> {
        if let Some(required) = context.input_required()? {
            return Ok(self.input_required(&required));
        }
        Ok(self.complete(outcome?))
    }

    /// A result exactly as given.
    pub(super) fn plain(&self, result: &JsonObject) -> Vec<u8> {
        respond(self.id, result)
    }

    /// A result built as a JSON object (the task methods' answers).
    pub(super) fn object(&self, mut result: JsonObject) -> Vec<u8> {
        if self.version.era() == Era::Session {
            return respond(self.id, &result);
        }
        result.insert("resultType".to_owned(), Value::from("complete"));
        self.with_server_info(|out| encode_into(out, &result))
    }

    /// A `CreateTaskResult`: the task's members, flat, with `resultType: "task"`.
    pub(super) fn task_created(&self, record: &TaskRecord) -> Vec<u8> {
        let mut result = record.task_members();
        result.insert("resultType".to_owned(), Value::from("task"));
        self.with_server_info(|out| encode_into(out, &result))
    }

    /// An `InputRequiredResult`: never cached, and never with cache hints.
    pub(super) fn input_required(&self, result: &InputRequiredResult) -> Vec<u8> {
        self.with_server_info(|out| encode_into(out, result))
    }

    /// A 2026-07-28 result without `_meta` of its own: the server info is written from bytes
    /// encoded once, when the server was built.
    fn with_server_info(&self, encode_result: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut bytes = respond_with(self.id, encode_result);
        // The response ends with the result object's closing brace and then its own; the
        // `_meta` member goes in before the first of them. Splicing bytes spares serde's
        // `flatten`, which would route every member of the result through a map serializer.
        let Some(close) = bytes.len().checked_sub(2).filter(|&at| bytes[at..] == *b"}}") else {
            unreachable!("a result is encoded as a JSON object")
        };
        let empty = bytes[close - 1] == b'{';
        bytes.truncate(close);
        if !empty {
            bytes.push(b',');
        }
        bytes.extend_from_slice(b"\"_meta\":");
        bytes.extend_from_slice(self.server.server_info_meta_json().get().as_bytes());
        bytes.extend_from_slice(b"}}");
        bytes
    }

    /// A result that carries cache hints on 2026-07-28: shared by everyone, unless some
    /// component requires scopes, when what each principal is shown is its own.
    pub(super) fn cacheable<R: Serialize + Stamp>(&self, mut result: R) -> Vec<u8> {
        if self.version.era() == Era::Stateless {
            let ttl = u64::try_from(self.server.options().cache_ttl.as_millis()).unwrap_or(u64::MAX);
            let scope = if self.server.registry().is_scoped() { CacheScope::Private } else { CacheScope::Public };
            result.set_cache_hints(ttl, scope);
        }
        self.complete(result)
    }
}

/// How a result is encoded: through serde, unless the result type writes itself. The members
/// every 2026-07-28 result carries come from the protocol's [`ResultMembers`].
pub(super) trait Stamp: Serialize + ResultMembers {
    /// Appends the result's JSON to `out`.
    fn encode(&self, out: &mut Vec<u8>) {
        encode_into(out, self);
    }
}

impl Stamp for GetPromptResult {}
impl Stamp for CompleteResult {}
impl Stamp for EmptyResult {}
impl Stamp for ListenResult {}
impl Stamp for DiscoverResult {}
impl Stamp for ListToolsResult {}
impl Stamp for ListPromptsResult {}
impl Stamp for ListResourcesResult {}
impl Stamp for ListResourceTemplatesResult {}
impl Stamp for ReadResourceResult {}
impl Stamp for wharf_protocol::ListSkillsResult {}
impl Stamp for wharf_protocol::GetSkillResult {}
impl Stamp for wharf_protocol::ReadDirectoryResult {}

impl Stamp for CallToolResult {
    fn encode(&self, out: &mut Vec<u8>) {
        // Encoding into memory cannot fail: every map key is a string.
        self.encode_into(out).unwrap_or_else(|err| unreachable!("encoding a result failed: {err}"));
    }
}
