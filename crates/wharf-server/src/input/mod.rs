//! The rounds of a 2026-07-28 multi round-trip request: a handler's unanswered inputs become
//! an `InputRequiredResult`, and the client's retry runs the handler again with every answer
//! so far. (How a handler asks, in either era, is the request context's business.)
//!
//! Between rounds the answers, the handler's own state and what was asked travel in
//! `requestState`, sealed by [`seal`] and bound to the method, a digest of the parameters, the
//! principal and an expiry.

pub(crate) mod digest;
pub(crate) mod seal;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wharf_protocol::{
    ClientRequest, CreateMessageResult, ElicitResult, FromJson, InputRequest, InputRequiredResult, JsonObject,
    ListRootsResult, ResultType, ToolArguments,
};

use crate::error::RpcError;
use crate::principal::Principal;
use seal::{OpenError, Sealer};

/// The rounds of one 2026-07-28 request that may ask for input: what earlier rounds were
/// answered, and what this round asks.
#[derive(Debug, Default)]
pub(crate) struct InputRound {
    binding: Binding,
    round: u32,
    answers: BTreeMap<String, Value>,
    carried: Option<Value>,
    asked: Mutex<BTreeMap<String, InputRequest>>,
    next_state: Mutex<Option<Value>>,
    auto_keys: AtomicUsize,
    /// The first malformed answer the handler took: it fails the request even when the
    /// handler goes on to ask for more.
    malformed: Mutex<Option<RpcError>>,
}

/// What sealed state is bound to.
#[derive(Debug, Default, Clone)]
pub(crate) struct Binding {
    pub(crate) method: &'static str,
    pub(crate) principal: Option<String>,
    /// The parameters the digest covers, kept so that it is only computed when state is
    /// checked or sealed: most requests never ask for input, and hashing every call would
    /// cost more than the rest of a small tool call.
    parameters: Covered,
    digest: OnceLock<String>,
}

impl Binding {
    fn digest(&self) -> &str {
        self.digest.get_or_init(|| self.parameters.digest())
    }
}

/// The parameters a digest covers, as the request gave them.
#[derive(Debug, Clone)]
enum Covered {
    /// A tool call's name and its arguments' text, read as values only for the digest: most
    /// calls never need it.
    ToolCall { name: String, arguments: Option<ToolArguments> },
    /// Any other request's parameters, as values.
    Values(Vec<Value>),
}

impl Default for Covered {
    fn default() -> Covered {
        Covered::Values(Vec::new())
    }
}

impl Covered {
    fn digest(&self) -> String {
        match self {
            Covered::ToolCall { name, arguments } => {
                let arguments = match arguments.as_ref().map(ToolArguments::to_object).transpose() {
                    Ok(object) => Value::Object(object.unwrap_or_default()),
                    // Arguments no Rust string can hold (a lone surrogate) are refused by the
                    // tool's schema check; until then their text is what state is bound to.
                    Err(_) => Value::from(arguments.as_ref().map_or("", ToolArguments::as_str)),
                };
                digest::of(&[Value::from(name.as_str()), arguments])
            }
            Covered::Values(values) => digest::of(values),
        }
    }
}

/// `requestState` before sealing. The names are short because the client carries it back and
/// forth with every round.
#[derive(Debug, Serialize, Deserialize)]
struct SealedRound {
    #[serde(rename = "m")]
    method: String,
    #[serde(rename = "d")]
    digest: String,
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    principal: Option<String>,
    /// Unix milliseconds after which the state is refused.
    #[serde(rename = "x")]
    expires: u64,
    #[serde(rename = "r")]
    round: u32,
    /// Key → method of every input the last round asked for.
    #[serde(rename = "q", default)]
    asked: BTreeMap<String, String>,
    #[serde(rename = "a", default)]
    answers: BTreeMap<String, Value>,
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    state: Option<Value>,
}

fn unix_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis() as u64)
}

impl InputRound {
    /// Opens a round for `request` if it is one of the three methods that may answer
    /// `InputRequiredResult`, taking `inputResponses` and `requestState` out of its params.
    /// `tool_may_ask` is false for a call of a tool whose handler cannot reach the context:
    /// without state to check, such a call needs no round at all.
    pub(crate) fn for_request(
        sealer: &Sealer,
        principal: Option<&Principal>,
        request: &mut ClientRequest,
        tool_may_ask: bool,
    ) -> Result<Option<InputRound>, RpcError> {
        let (method, parameters, state, responses) = match request {
            ClientRequest::CallTool(params) if !tool_may_ask && params.request_state.is_none() => {
                // Answers nobody can ask for are ignored, as the protocol says.
                params.input_responses = None;
                return Ok(None);
            }
            ClientRequest::CallTool(params) => (
                "tools/call",
                Covered::ToolCall { name: params.name.clone(), arguments: params.arguments.clone() },
                params.request_state.take(),
                params.input_responses.take(),
            ),
            ClientRequest::GetPrompt(params) => {
                let arguments = params.arguments.as_ref().map(|arguments| {
                    arguments.iter().map(|(name, value)| (name.clone(), Value::from(value.as_str()))).collect()
                });
                (
                    "prompts/get",
                    Covered::Values(vec![Value::from(params.name.as_str()), digest::object(arguments.as_ref())]),
                    params.request_state.take(),
                    params.input_responses.take(),
                )
            }
            ClientRequest::ReadResource(params) => (
                "resources/read",
                Covered::Values(vec![Value::from(params.uri.as_str())]),
                params.request_state.take(),
                params.input_responses.take(),
            ),
            _ => return Ok(None),
        };
        let principal = principal.map(|principal| principal.as_str().to_owned());
        let binding = Binding { method, principal, parameters, digest: OnceLock::new() };
        InputRound::open(sealer, binding, state, responses).map(Some)
    }

    fn open(
        sealer: &Sealer,
        binding: Binding,
        state: Option<String>,
        responses: Option<JsonObject>,
    ) -> Result<InputRound, RpcError> {
        let Some(state) = state else {
            // A first round may come with answers already, as when the client knows what the
            // handler asks: they are as good as answers to a round without state. Each is
            // checked when the handler takes it, and those it never asks for are ignored.
            let answers = responses.unwrap_or_default().into_iter().collect();
            return Ok(InputRound { binding, answers, ..InputRound::default() });
        };
        let refused = |why: &str| RpcError::invalid_params(format!("Invalid params: `requestState` {why}"));
        let payload = sealer.open(&state).map_err(|err| match err {
            OpenError::Malformed | OpenError::Tampered => refused("failed its integrity check"),
            OpenError::UnknownKey => {
                refused("was sealed with a key this server does not accept; send the request again without it")
            }
        })?;
        let sealed: SealedRound =
            serde_json::from_slice(&payload).map_err(|_| refused("failed its integrity check"))?;
        if sealed.method != binding.method || sealed.digest != binding.digest() {
            return Err(refused("belongs to another request: the method or its parameters differ"));
        }
        if sealed.principal != binding.principal {
            return Err(refused("was issued to another principal"));
        }
        if unix_millis() > sealed.expires {
            return Err(refused("has expired; send the request again without it"));
        }
        let mut answers = sealed.answers;
        let responses = responses.unwrap_or_default();
        for (key, method) in &sealed.asked {
            // Keys that were not asked for are ignored, as the protocol says.
            let Some(answer) = responses.get(key) else { continue };
            check_answer(key, method, answer)?;
            answers.insert(key.clone(), answer.clone());
        }
        Ok(InputRound { binding, round: sealed.round + 1, answers, carried: sealed.state, ..InputRound::default() })
    }

    /// The answer under `key`, or the request recorded for this round's `InputRequiredResult`.
    pub(crate) fn answer_or_ask(&self, key: String, request: InputRequest) -> Result<Value, RpcError> {
        if let Some(answer) = self.answers.get(&key) {
            return Ok(answer.clone());
        }
        let mut asked = self.asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(earlier) = asked.get(&key)
            && *earlier != request
        {
            return Err(RpcError::internal(format!(
                "Internal error: the handler asked for two different inputs under the key `{key}`"
            )));
        }
        asked.insert(key, request);
        Err(RpcError::input_required())
    }

    /// Records that the answer under a key did not have the shape its method returns.
    pub(crate) fn reject(&self, error: RpcError) {
        self.malformed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(error);
    }

    /// A key for an input the handler did not name: its place in the order of asking.
    pub(crate) fn next_auto_key(&self) -> String {
        format!("input-{}", self.auto_keys.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// True when the client answered the input under `key`, in this round or an earlier one.
    pub(crate) fn has_answer(&self, key: &str) -> bool {
        self.answers.contains_key(key)
    }

    pub(crate) fn carried_state(&self) -> Option<&Value> {
        self.carried.as_ref()
    }

    pub(crate) fn carry_state(&self, state: Value) {
        *self.next_state.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(state);
    }

    /// True when the handler asked for input this round has no answer to.
    pub(crate) fn lacks_input(&self) -> bool {
        !self.asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_empty()
    }

    /// The `InputRequiredResult` that asks for this round's unanswered inputs, with the state
    /// the next round starts from; `None` when the handler asked for nothing it lacked.
    pub(crate) fn finish(&self, sealer: &Sealer, lifetime: Duration) -> Result<Option<InputRequiredResult>, RpcError> {
        if let Some(error) = self.malformed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            return Err(error);
        }
        let asked = std::mem::take(&mut *self.asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        if asked.is_empty() {
            return Ok(None);
        }
        let state = self.next_state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let sealed = SealedRound {
            method: self.binding.method.to_owned(),
            digest: self.binding.digest().to_owned(),
            principal: self.binding.principal.clone(),
            expires: unix_millis().saturating_add(lifetime.as_millis() as u64),
            round: self.round,
            asked: asked.iter().map(|(key, request)| (key.clone(), request.method().to_owned())).collect(),
            answers: self.answers.clone(),
            state: state.or_else(|| self.carried.clone()),
        };
        let payload = serde_json::to_vec(&sealed).unwrap_or_else(|err| unreachable!("state serializes: {err}"));
        Ok(Some(InputRequiredResult {
            result_type: ResultType::input_required(),
            input_requests: Some(asked),
            request_state: Some(sealer.seal(&payload)),
            meta: None,
        }))
    }
}

/// Checks that an answer has the shape of the result of the method it answers.
pub(crate) fn check_answer(key: &str, method: &str, answer: &Value) -> Result<(), RpcError> {
    let outcome = match method {
        "elicitation/create" => parse::<ElicitResult>(answer),
        "sampling/createMessage" => parse::<CreateMessageResult>(answer),
        "roots/list" => parse::<ListRootsResult>(answer),
        _ => Ok(()),
    };
    outcome.map_err(|err| {
        RpcError::invalid_params(format!(
            "Invalid params: `inputResponses.{key}` is not a valid answer to {method}: {err}"
        ))
    })
}

fn parse<T: FromJson>(answer: &Value) -> Result<(), serde_json::Error> {
    T::from_json_ref(answer).map(drop)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::value::RawValue;
    use wharf_protocol::{ClientRequest, InputRequest};

    use super::InputRound;
    use super::seal::{Sealer, StateKey};

    fn call(arguments: &str, state: Option<&str>) -> ClientRequest {
        let state = state.map_or(String::new(), |state| format!(r#","requestState":"{state}""#));
        let params = format!(r#"{{"name":"t","arguments":{arguments}{state}}}"#);
        let params: &RawValue = serde_json::from_str(&params).unwrap();
        ClientRequest::decode("tools/call", Some(params)).unwrap()
    }

    /// The state a first round of `arguments` seals, its handler having asked for the roots.
    fn sealed(sealer: &Sealer, arguments: &str) -> String {
        let round = InputRound::for_request(sealer, None, &mut call(arguments, None), true).unwrap().unwrap();
        assert!(round.answer_or_ask("roots".to_owned(), InputRequest::ListRoots(None)).is_err());
        let asked = round.finish(sealer, Duration::from_secs(60)).unwrap().unwrap();
        asked.request_state.unwrap()
    }

    fn retried(sealer: &Sealer, arguments: &str, state: &str) -> Result<(), String> {
        InputRound::for_request(sealer, None, &mut call(arguments, Some(state)), true)
            .map(|round| assert!(round.is_some()))
            .map_err(|err| err.message().to_owned())
    }

    /// A retry's state is bound to the tool and its arguments, whatever the order of their
    /// members; arguments no Rust string can hold are bound by their text, and refused later by
    /// the tool's schema check.
    #[test]
    fn state_is_bound_to_the_calls_arguments_read_only_when_it_is_sealed_or_checked() {
        let sealer = Sealer::new(StateKey::new("k", &[7; 32]), Vec::new());
        let state = sealed(&sealer, r#"{"b":1,"a":{"y":[1,2],"x":"s"}}"#);
        assert_eq!(retried(&sealer, r#"{"a":{"x":"s","y":[1,2]},"b":1}"#, &state), Ok(()));
        let other = retried(&sealer, r#"{"a":{"x":"s","y":[1,3]},"b":1}"#, &state).unwrap_err();
        assert!(other.contains("belongs to another request"), "{other}");
        let unreadable = sealed(&sealer, r#"{"note":"\ud800"}"#);
        assert_eq!(retried(&sealer, r#"{"note":"\ud800"}"#, &unreadable), Ok(()));
        let other = retried(&sealer, r#"{"note":"\ud801"}"#, &unreadable).unwrap_err();
        assert!(other.contains("belongs to another request"), "{other}");
    }
}
