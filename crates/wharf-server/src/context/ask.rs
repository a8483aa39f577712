//! Asking the client for input, written once for every era: a server-to-client request in a
//! 2025 session, a round of an `InputRequiredResult` on 2026-07-28, or a wait for
//! `tasks/update` once the request became a task.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wharf_protocol::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, EmptyParams, Era, ErrorCode, FromJson,
    InputRequest, ListRootsResult, ProtocolVersion, ServerRequest,
};

use super::RequestContext;
use crate::error::RpcError;

/// One input a handler asks for, under a key the client echoes with its answer.
///
/// Made by [`RequestContext::input`]. Keys must be unique within a request, across all its
/// rounds, and a handler must ask for the same keys in the same way each time it runs: on
/// 2026-07-28 it runs once per round, and finds the earlier rounds' answers waiting.
#[derive(Debug)]
pub struct Input<'a> {
    pub(crate) context: &'a RequestContext,
    pub(crate) key: String,
}

impl Input<'_> {
    /// Asks the user through the client (elicitation, form or URL mode).
    pub async fn elicit(self, params: ElicitParams) -> Result<ElicitResult, RpcError> {
        self.context.ask_input(self.key, InputRequest::Elicitation(params)).await
    }

    /// Asks the client's model for a message (sampling).
    pub async fn create_message(self, params: CreateMessageParams) -> Result<CreateMessageResult, RpcError> {
        self.context.ask_input(self.key, InputRequest::Sampling(Box::new(params))).await
    }

    /// Asks the client for its roots.
    pub async fn list_roots(self) -> Result<ListRootsResult, RpcError> {
        self.context.ask_input(self.key, InputRequest::ListRoots(Some(EmptyParams::default()))).await
    }
}

impl RequestContext {
    /// An input to ask the client for, under `key`: see [`Input`] for the methods, and for the
    /// rule that keys are unique within a request.
    ///
    /// In a 2025 session the request goes to the client at once and the answer comes back.
    /// On 2026-07-28, a first run finds no answer: the call returns an error for which
    /// [`RpcError::is_input_required`] is true, and Wharf answers the request with an
    /// `InputRequiredResult` asking for every input this run asked for. Ask for several in
    /// one round by awaiting them together (`tokio::join!`). The client's retry runs the
    /// handler again, and this time the answers are there.
    pub fn input(&self, key: impl Into<String>) -> Input<'_> {
        Input { context: self, key: key.into() }
    }

    /// Asks the user for input through the client (elicitation), under a key made from the
    /// order of asking; see [`RequestContext::input`].
    ///
    /// The client must have declared the `elicitation` capability (and `url` for URL mode).
    pub async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult, RpcError> {
        self.input(self.auto_key()).elicit(params).await
    }

    /// Asks the client's model for a completion (sampling); see [`RequestContext::input`].
    pub async fn create_message(&self, params: CreateMessageParams) -> Result<CreateMessageResult, RpcError> {
        self.input(self.auto_key()).create_message(params).await
    }

    /// Asks the client for its filesystem roots; see [`RequestContext::input`].
    pub async fn list_roots(&self) -> Result<ListRootsResult, RpcError> {
        self.input(self.auto_key()).list_roots().await
    }

    /// True when the client's answer to the input under `key` came with this 2026-07-28
    /// request (its `inputResponses`, or an earlier round's): asking for it returns that answer
    /// without asking again. A handler that must do other work before it asks for what is
    /// still missing looks here first, since once a request lacks an input it may be answered
    /// with the `InputRequiredResult` at its next wait.
    pub fn has_input(&self, key: &str) -> bool {
        self.inner.input.as_ref().is_some_and(|round| round.has_answer(key))
    }

    /// What this handler kept for itself in the previous round of a 2026-07-28 request, with
    /// [`RequestContext::set_round_state`]. It travels inside the sealed `requestState`: the
    /// client cannot change it, but can read it, so keep secrets out of it.
    pub fn round_state<T: DeserializeOwned>(&self) -> Option<T> {
        let state = self.inner.input.as_ref()?.carried_state()?;
        T::deserialize(state).ok()
    }

    /// Keeps `state` for the next round of this request, if it asks for input (2026-07-28);
    /// without a call the previous round's state is kept. Does nothing in a 2025 session,
    /// where the handler runs once and keeps its state in its variables.
    pub fn set_round_state<T: Serialize>(&self, state: &T) -> Result<(), RpcError> {
        let Some(round) = &self.inner.input else { return Ok(()) };
        let value = serde_json::to_value(state)
            .map_err(|err| RpcError::internal(format!("Internal error: the round state cannot be encoded: {err}")))?;
        round.carry_state(value);
        Ok(())
    }

    fn auto_key(&self) -> String {
        match &self.inner.input {
            Some(round) => round.next_auto_key(),
            None => String::new(),
        }
    }

    pub(crate) async fn ask_input<R: FromJson>(&self, key: String, request: InputRequest) -> Result<R, RpcError> {
        self.check_client_can_answer(&request)?;
        let request = self.with_elicitation_id(request)?;
        self.task_to_come().await;
        if let Some(running) = self.inner.task.get() {
            let method = request.method();
            let answer = running.ask(key.clone(), request).await?;
            return parse_answer(&key, method, &answer);
        }
        if self.inner.version.era() == Era::Session {
            // The key rides along, for a gateway that passes the question to a 2026 client.
            let request = if key.is_empty() { request } else { request.with_input_key(&key) };
            return self.ask(ServerRequest::from(request)).await;
        }
        let Some(round) = &self.inner.input else {
            return Err(RpcError::internal(
                "Internal error: on 2026-07-28 only tools/call, prompts/get and resources/read can ask for input",
            ));
        };
        let request = match request {
            // 2026-07-28 elicitations carry no id: the round trip is the request itself.
            InputRequest::Elicitation(mut params) => {
                params.elicitation_id = None;
                InputRequest::Elicitation(params)
            }
            other => other,
        };
        let method = request.method();
        let answer = round.answer_or_ask(key.clone(), request)?;
        parse_answer(&key, method, &answer).inspect_err(|error| round.reject(error.clone()))
    }

    /// A 2025-11-25 URL elicitation carries an id, for `notifications/elicitation/complete`;
    /// Wharf makes one when the handler did not.
    fn with_elicitation_id(&self, request: InputRequest) -> Result<InputRequest, RpcError> {
        match request {
            InputRequest::Elicitation(mut params)
                if params.mode.as_deref() == Some("url")
                    && params.elicitation_id.is_none()
                    && self.inner.version == ProtocolVersion::V2025_11_25 =>
            {
                let id = crate::random::hex_id()
                    .map_err(|err| RpcError::internal(format!("Internal error: no random source: {err}")))?;
                params.elicitation_id = Some(id);
                Ok(InputRequest::Elicitation(params))
            }
            other => Ok(other),
        }
    }

    /// The error for a request that cannot go on until the user finishes URL elicitations
    /// (2025-11-25: `-32042` with the elicitations in `data`). On 2026-07-28 the elicitations
    /// are asked for in an `InputRequiredResult` instead (return the error all the same);
    /// earlier revisions have no URL elicitation, so it is an internal error there.
    pub fn url_elicitation_required(&self, elicitations: Vec<ElicitParams>) -> RpcError {
        match self.inner.version {
            ProtocolVersion::V2025_11_25 => {
                let mut listed = Vec::with_capacity(elicitations.len());
                for params in elicitations {
                    let request = self.with_elicitation_id(InputRequest::Elicitation(params));
                    if let Ok(InputRequest::Elicitation(params)) = request {
                        listed.push(params);
                    }
                }
                RpcError::new(
                    ErrorCode::URL_ELICITATION_REQUIRED.0,
                    "URL elicitation required: the user must finish the linked flow first",
                )
                .with_data(serde_json::json!({ "elicitations": listed }))
            }
            version if version.era() == Era::Stateless => {
                let Some(round) = &self.inner.input else {
                    return RpcError::internal("Internal error: this request cannot ask for input");
                };
                let mut asked = false;
                for params in elicitations {
                    let key = round.next_auto_key();
                    let mut params = params;
                    params.elicitation_id = None;
                    if let Err(error) = round.answer_or_ask(key, InputRequest::Elicitation(params)) {
                        if !error.is_input_required() {
                            return error;
                        }
                        asked = true;
                    }
                }
                if asked {
                    RpcError::input_required()
                } else {
                    // Each was answered in an earlier round: the user consented, and it is for
                    // the handler to know whether the flows have finished.
                    RpcError::internal("Internal error: the URL elicitations were answered but are still required")
                }
            }
            version => {
                RpcError::internal(format!("Internal error: URL elicitation does not exist in revision {version}"))
            }
        }
    }

    /// Wharf never asks for what the client did not declare it can give.
    fn check_client_can_answer(&self, request: &InputRequest) -> Result<(), RpcError> {
        let caps = self.client_capabilities();
        match request {
            InputRequest::Elicitation(params) => {
                let url_mode = params.mode.as_deref() == Some("url");
                let supported =
                    if url_mode { caps.supports_url_elicitation() } else { caps.supports_form_elicitation() };
                if !supported {
                    let mode = if url_mode { "url" } else { "form" };
                    return Err(self.missing_capability(
                        &format!("the client did not declare elicitation in {mode} mode"),
                        serde_json::json!({ "elicitation": { mode: {} } }),
                    ));
                }
            }
            InputRequest::Sampling(_) if caps.sampling.is_none() => {
                return Err(self.missing_capability(
                    "the client did not declare the sampling capability",
                    serde_json::json!({ "sampling": {} }),
                ));
            }
            InputRequest::ListRoots(_) if caps.roots.is_none() => {
                return Err(self.missing_capability(
                    "the client did not declare the roots capability",
                    serde_json::json!({ "roots": {} }),
                ));
            }
            _ => {}
        }
        Ok(())
    }

    fn missing_capability(&self, why: &str, required: Value) -> RpcError {
        if self.inner.version.era() == Era::Stateless {
            RpcError::new(-32021, format!("Missing required client capability: {why}"))
                .with_data(serde_json::json!({ "requiredCapabilities": required }))
        } else {
            RpcError::invalid_request(format!("Cannot ask the client: {why}"))
        }
    }

    /// Sends a server-to-client request on this request's stream and awaits the answer.
    async fn ask<R: FromJson>(&self, request: ServerRequest) -> Result<R, RpcError> {
        let timeout = self.inner.server.options().client_request_timeout;
        let sending = self.send_request(&request, timeout);
        // A task waiting on its client is `input_required` meanwhile.
        let value = match self.inner.session_task.get() {
            Some(task) => task.running.awaiting_client(sending).await,
            None => sending.await,
        };
        let value = value.map_err(|err| {
            if err.is_timeout() {
                RpcError::internal(format!("The client did not answer `{}` in time", request.method()))
            } else {
                RpcError::internal(format!("The client could not answer `{}`: {err}", request.method()))
            }
        })?;
        match value {
            Ok(result) => R::from_json_value(result).map_err(|err| {
                RpcError::internal(format!("The client's answer to `{}` is malformed: {err}", request.method()))
            }),
            Err(error) => Err(RpcError::from(error)),
        }
    }
}

/// The client's answer under `key` to an input request of `method`, as the handler's type.
fn parse_answer<R: FromJson>(key: &str, method: &str, answer: &Value) -> Result<R, RpcError> {
    R::from_json_ref(answer).map_err(|err| {
        RpcError::invalid_params(format!(
            "Invalid params: `inputResponses.{key}` is not a valid answer to {method}: {err}"
        ))
    })
}
