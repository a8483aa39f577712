//! Multi round-trip requests (2026-07-28): `InputRequiredResult` and the input requests it
//! carries.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::types::client_features::{CreateMessageParams, ElicitParams};
use crate::types::common::{JsonObject, ResultType};
use crate::types::meta_keys::META_INPUT_KEY;
use crate::types::params::EmptyParams;
use crate::types::request_meta::RequestMeta;

/// One thing the server needs from the client before it can finish a request.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant, reason = "input requests are few and short-lived")]
pub enum InputRequest {
    /// `{"method":"elicitation/create","params":…}`
    Elicitation(ElicitParams),
    /// `{"method":"sampling/createMessage","params":…}`
    Sampling(Box<CreateMessageParams>),
    /// `{"method":"roots/list"}`
    ListRoots(Option<EmptyParams>),
}

impl InputRequest {
    /// The method this input request stands for.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicitation(_) => "elicitation/create",
            InputRequest::Sampling(_) => "sampling/createMessage",
            InputRequest::ListRoots(_) => "roots/list",
        }
    }

    /// The request's `_meta`, made when it has none.
    fn meta_mut(&mut self) -> &mut RequestMeta {
        let meta = match self {
            InputRequest::Elicitation(params) => &mut params.meta,
            InputRequest::Sampling(params) => &mut params.meta,
            InputRequest::ListRoots(params) => &mut params.get_or_insert_with(EmptyParams::default).meta,
        };
        meta.get_or_insert_with(Box::default)
    }

    /// Names `key` in the request's `_meta` ([`META_INPUT_KEY`]).
    pub fn with_input_key(mut self, key: &str) -> InputRequest {
        self.meta_mut().other.insert(META_INPUT_KEY.to_owned(), serde_json::Value::from(key));
        self
    }

    /// Takes the key [`InputRequest::with_input_key`] named out of the request's `_meta`.
    pub fn take_input_key(&mut self) -> Option<String> {
        let slot = match self {
            InputRequest::Elicitation(params) => &mut params.meta,
            InputRequest::Sampling(params) => &mut params.meta,
            InputRequest::ListRoots(params) => &mut params.as_mut()?.meta,
        };
        let key = slot.as_mut()?.other.remove(META_INPUT_KEY)?;
        if slot.as_deref().is_some_and(|meta| *meta == RequestMeta::default()) {
            *slot = None;
        }
        match key {
            serde_json::Value::String(key) => Some(key),
            _ => None,
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("method", self.method())?;
        match self {
            InputRequest::Elicitation(params) => map.serialize_entry("params", params)?,
            InputRequest::Sampling(params) => map.serialize_entry("params", params)?,
            InputRequest::ListRoots(Some(params)) => map.serialize_entry("params", params)?,
            InputRequest::ListRoots(None) => {}
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<InputRequest, D::Error> {
        #[derive(Deserialize)]
        struct Parts {
            method: String,
            #[serde(default)]
            params: Option<Box<RawValue>>,
        }
        let parts = Parts::deserialize(deserializer)?;
        let params = |what: &str| {
            parts.params.as_deref().ok_or_else(|| de::Error::custom(format_args!("`{what}` needs params")))
        };
        // The method string chooses the params type.
        match parts.method.as_str() {
            "elicitation/create" => serde_json::from_str(params("elicitation/create")?.get())
                .map(InputRequest::Elicitation)
                .map_err(de::Error::custom),
            "sampling/createMessage" => serde_json::from_str(params("sampling/createMessage")?.get())
                .map(|params| InputRequest::Sampling(Box::new(params)))
                .map_err(de::Error::custom),
            "roots/list" => match parts.params.as_deref() {
                None => Ok(InputRequest::ListRoots(None)),
                Some(raw) => serde_json::from_str(raw.get())
                    .map(|params| InputRequest::ListRoots(Some(params)))
                    .map_err(de::Error::custom),
            },
            other => Err(de::Error::custom(format_args!("`{other}` is not an input request method"))),
        }
    }
}

/// The result a server gives when it needs input before it can finish (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always `"input_required"`.
    pub result_type: ResultType,
    /// What the server needs, by a key the client echoes in `inputResponses`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// Opaque state the client echoes on its retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl From<InputRequest> for crate::messages::ServerRequest {
    /// The server-to-client request that asks the same thing in a 2025 session.
    fn from(request: InputRequest) -> crate::messages::ServerRequest {
        use crate::messages::ServerRequest;
        match request {
            InputRequest::Elicitation(params) => ServerRequest::Elicit(params),
            InputRequest::Sampling(params) => ServerRequest::CreateMessage(*params),
            InputRequest::ListRoots(params) => ServerRequest::ListRoots(params.unwrap_or_default()),
        }
    }
}
