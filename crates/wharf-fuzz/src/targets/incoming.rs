//! `incoming`: the one-pass reader of client messages (`Incoming::parse`, with its hand-written
//! envelope, `tools/call` and `_meta` readers) against the strict two-step decoder
//! (`Envelope::parse`, then `ClientRequest::decode`), on messages shaped like JSON-RPC.

use serde_json::value::RawValue;
use wharf_protocol::{ClientRequest, Envelope, Incoming};

use crate::json_text::{JsonText, KEYS};
use crate::mutate::mutate;
use crate::rng::Rng;
use crate::target::Target;

/// The target.
pub(super) struct IncomingMessages;

const METHODS: &[&str] = &[
    "tools/call",
    "tools/call",
    "tools/call",
    "tools/list",
    "ping",
    "initialize",
    "server/discover",
    "prompts/get",
    "prompts/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "resources/subscribe",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/result",
    "tasks/list",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "tools\\/call",
    "tools/cal",
    "t\\u006fols/call",
    "unknown/method",
    "",
];

/// Member names of params, across methods.
const PARAM_KEYS: &[&str] = &[
    "name",
    "arguments",
    "_meta",
    "uri",
    "cursor",
    "level",
    "ref",
    "argument",
    "context",
    "taskId",
    "task",
    "protocolVersion",
    "capabilities",
    "clientInfo",
    "inputResponses",
    "requestState",
    "requestId",
    "reason",
    "filter",
    "n\\u0061me",
];

/// Member names of `tools/call` params, the common ones more often.
const CALL_KEYS: &[&str] =
    &["arguments", "arguments", "arguments", "_meta", "_meta", "task", "inputResponses", "requestState", "other"];

/// Member names of `_meta`.
const META_KEYS: &[&str] = &[
    "progressToken",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/logLevel",
    "io.modelcontextprotocol/related-task",
    "other/key",
    "progress\\u0054oken",
];

impl Target for IncomingMessages {
    fn name(&self) -> &'static str {
        "incoming"
    }

    fn generate(&self, rng: &mut Rng) -> Vec<u8> {
        let invalid = if rng.one_in(8) { 40 } else { 0 };
        let mut json = JsonText::new(rng, invalid);
        message(&mut json);
        let mut bytes = json.out.into_bytes();
        if rng.one_in(8) {
            mutate(rng, &mut bytes);
        }
        bytes
    }

    fn check(&self, case: &[u8]) -> Result<&'static str, String> {
        let input = String::from_utf8_lossy(case);
        let disagree = |what: &str, left: &dyn std::fmt::Debug, right: &dyn std::fmt::Debug| {
            Err(format!("{what}\ninput: {input}\nIncoming::parse: {left:?}\nstrict: {right:?}"))
        };
        match (Incoming::parse(case), Envelope::parse(case)) {
            (Err(left), Err(right)) if left == right => Ok("refused"),
            (Ok(Incoming::Request { id, request }), Ok(Envelope::Request { id: strict_id, method, params })) => {
                let strict = ClientRequest::decode(&method, params);
                if id != strict_id || strict.as_ref() != Ok(&request) {
                    return disagree("a request decoded differently", &(id, request), &(strict_id, strict));
                }
                Ok(if method == "tools/call" { "tools/call" } else { "other request" })
            }
            (
                Ok(Incoming::Refused { id, method, error }),
                Ok(Envelope::Request { id: strict_id, method: m, params }),
            ) => {
                let strict = ClientRequest::decode(&m, params).map_err(|err| err.to_error_object());
                if id != strict_id || method != m || strict.as_ref().err() != Some(&error) {
                    return disagree("a request refused differently", &(id, method, error), &(strict_id, m, strict));
                }
                Ok("request refused")
            }
            (Ok(Incoming::Notification { method, params }), Ok(Envelope::Notification { method: m, params: p })) => {
                if method != m || params.map(RawValue::get) != p.map(RawValue::get) {
                    return disagree("a notification read differently", &(method, params), &(m, p));
                }
                Ok("notification")
            }
            (Ok(Incoming::Response { id, result }), Ok(Envelope::Response { id: strict_id, result: r })) => {
                if id != strict_id || result.get() != r.get() {
                    return disagree("a response read differently", &(id, result), &(strict_id, r));
                }
                Ok("response")
            }
            (Ok(Incoming::Error { id, error }), Ok(Envelope::Error { id: strict_id, error: e })) => {
                if id != strict_id || error != e {
                    return disagree("an error response read differently", &(id, error), &(strict_id, e));
                }
                Ok("error response")
            }
            (left, right) => disagree("the readers disagree on the kind of message", &left, &right),
        }
    }
}

/// Writes one message: the envelope's members in the usual order or shuffled, now and then
/// one given twice or spelled with an escape, and params shaped for the method.
fn message(json: &mut JsonText<'_>) {
    let method = *json.rng.pick(METHODS);
    let mut members: Vec<(String, String)> = Vec::new();
    let mut member = |json: &mut JsonText<'_>, name: &str, write: &mut dyn FnMut(&mut JsonText<'_>)| {
        let before = json.out.len();
        write(json);
        let value = json.out.split_off(before);
        members.push((name.to_owned(), value));
    };
    if !json.rng.one_in(30) {
        let name = if json.rng.one_in(30) { "j\\u0073onrpc" } else { "jsonrpc" };
        member(json, name, &mut |json| {
            let version = if json.rng.one_in(15) {
                *json.rng.pick(&["\"1.0\"", "\"2\\u002e0\"", "2.0", "\"2.0 \"", "null"])
            } else {
                "\"2.0\""
            };
            json.out.push_str(version);
        });
    }
    let kind = json.rng.below(10);
    // Requests mostly have an id and answers always should; without one a request is a
    // notification.
    if !json.rng.one_in(if kind < 8 { 6 } else { 20 }) {
        member(json, "id", &mut |json| id(json));
    }
    if kind < 8 {
        let name = if json.rng.one_in(30) { "m\\u0065thod" } else { "method" };
        member(json, name, &mut |json| {
            if json.rng.one_in(20) {
                json.value(1);
            } else {
                json.out.push('"');
                json.out.push_str(method);
                json.out.push('"');
            }
        });
        if !json.rng.one_in(5) {
            member(json, "params", &mut |json| params(json, method));
        }
    }
    if kind == 8 {
        member(json, "result", &mut |json| json.value(3));
    }
    if kind == 9 || json.rng.one_in(40) {
        member(json, "error", &mut |json| error(json));
    }
    if json.rng.one_in(8) {
        let key = *json.rng.pick(KEYS);
        member(json, key, &mut |json| json.value(2));
    }
    if json.rng.one_in(20) && !members.is_empty() {
        let repeated = members[json.rng.below(members.len())].clone();
        members.push(repeated);
    }
    if json.rng.one_in(5) {
        for index in (1..members.len()).rev() {
            let other = json.rng.below(index + 1);
            members.swap(index, other);
        }
    }
    json.space();
    json.out.push('{');
    for (index, (name, value)) in members.iter().enumerate() {
        json.separator(index);
        json.member_name(name);
        json.out.push_str(value);
        json.space();
    }
    json.close(members.len(), '}');
    json.space();
}

/// An id (or progress token): a small integer or a plain string mostly, at the edges now and
/// then.
fn id(json: &mut JsonText<'_>) {
    match json.rng.below(10) {
        0..=4 => {
            let small = (json.rng.below(200) as i64 - 20).to_string();
            json.out.push_str(&small);
        }
        5 | 6 => {
            let plain = format!("\"r{}\"", json.rng.below(1000));
            json.out.push_str(&plain);
        }
        7 => json.number(),
        8 => json.string(),
        _ => json.value(1),
    }
}

fn error(json: &mut JsonText<'_>) {
    json.out.push_str("{\"code\":");
    if json.rng.one_in(4) {
        json.number();
    } else {
        let code = *json.rng.pick(&["-32600", "-32601", "-32602", "-32603", "-32700", "0", "1"]);
        json.out.push_str(code);
    }
    json.out.push_str(",\"message\":");
    json.string();
    if json.rng.one_in(2) {
        json.out.push_str(",\"data\":");
        json.value(2);
    }
    json.out.push('}');
}

/// Params shaped for `method`, with members of the wrong type now and then.
fn params(json: &mut JsonText<'_>, method: &str) {
    if json.rng.one_in(15) {
        json.value(2);
        return;
    }
    json.out.push('{');
    let len = json.rng.below(5);
    let first_name = method.ends_with("call") && !json.rng.one_in(4);
    let mut written = 0;
    if first_name {
        json.member_name("name");
        tool_name(json);
        written += 1;
    }
    let keys = if first_name && !json.rng.one_in(4) { CALL_KEYS } else { PARAM_KEYS };
    for _ in 0..len {
        json.separator(written);
        let key = *json.rng.pick(keys);
        json.member_name(key);
        param_value(json, key);
        written += 1;
    }
    json.close(written, '}');
}

fn tool_name(json: &mut JsonText<'_>) {
    if json.rng.one_in(3) {
        json.string();
    } else {
        let name = *json.rng.pick(&["\"echo\"", "\"add\"", "\"ec\\u0068o\"", "\"\"", "\"a/b\"", "1"]);
        json.out.push_str(name);
    }
}

fn param_value(json: &mut JsonText<'_>, key: &str) {
    if json.rng.one_in(10) {
        json.value(2);
        return;
    }
    match key {
        "name" | "n\\u0061me" => tool_name(json),
        "arguments" | "inputResponses" | "capabilities" | "task" | "context" | "filter" => json.object(3, KEYS),
        "_meta" => meta(json),
        "level" => {
            let level = *json.rng.pick(&["\"debug\"", "\"info\"", "\"emergency\"", "\"loud\""]);
            json.out.push_str(level);
        }
        "ref" => json.out.push_str("{\"type\":\"ref/prompt\",\"name\":\"p\"}"),
        "argument" => {
            json.out.push_str("{\"name\":");
            json.string();
            json.out.push_str(",\"value\":");
            json.string();
            json.out.push('}');
        }
        "clientInfo" => json.out.push_str("{\"name\":\"c\",\"version\":\"1\"}"),
        "requestId" => id(json),
        _ => json.string(),
    }
}

fn meta(json: &mut JsonText<'_>) {
    json.object_with(META_KEYS, |json, key| match key {
        "progressToken" => id(json),
        "io.modelcontextprotocol/protocolVersion" => {
            let version = *json.rng.pick(&["\"2026-07-28\"", "\"2025-11-25\"", "\"1999-01-01\"", "7"]);
            json.out.push_str(version);
        }
        "io.modelcontextprotocol/logLevel" => {
            let level = *json.rng.pick(&["\"debug\"", "\"warning\"", "\"shout\""]);
            json.out.push_str(level);
        }
        "io.modelcontextprotocol/clientInfo" => json.out.push_str("{\"name\":\"c\",\"version\":\"1\"}"),
        _ => json.value(2),
    });
}
