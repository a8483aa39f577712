//! One call as the request it makes: the base URL configuration fixed (its scheme, host, port
//! and path prefix; never the model's), the operation's path with each path parameter one
//! encoded segment, the query, headers, cookies and body from the arguments, and the
//! credentials.

use base64::Engine;
use wharf_protocol::JsonObject;

use crate::credentials::Credential;
use crate::encode::{cookie_pair, form_body, header_value, path_segment, percent_encode, query_pairs};
use crate::error::{OpenApiError, OpenApiErrorKind};
use serde_json::Value;

use crate::operation::{BodyKind, OperationTool, Place};

/// Where every call goes: `http` or `https`, a host and port, a path prefix; no query,
/// fragment or user information.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    /// `scheme://host[:port]`.
    origin: String,
    /// The path before each operation's, without a trailing `/` (empty for none).
    prefix: String,
}

impl BaseUrl {
    /// Reads `url`; an error naming what is wrong with it.
    pub fn parse(url: &str) -> Result<BaseUrl, OpenApiError> {
        let wrong = |why: &str| OpenApiError::new(OpenApiErrorKind::BaseUrl, format!("the base URL `{url}` {why}"));
        let (scheme, rest) = url.split_once("://").ok_or_else(|| wrong("has no scheme"))?;
        if scheme != "http" && scheme != "https" {
            return Err(wrong("is neither http nor https"));
        }
        if url.contains(['?', '#']) || url.chars().any(|c| c.is_control() || c == ' ') {
            return Err(wrong("has a query, a fragment or spaces"));
        }
        let (authority, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
        if authority.is_empty() || authority.contains('@') {
            return Err(wrong("has no host, or has user information"));
        }
        Ok(BaseUrl { origin: format!("{scheme}://{authority}"), prefix: path.trim_end_matches('/').to_owned() })
    }

    /// `scheme://host[:port]`, without the path prefix.
    pub(crate) fn origin_only(&self) -> &str {
        &self.origin
    }

    /// True for `https`.
    pub(crate) fn is_https(&self) -> bool {
        self.origin.starts_with("https://")
    }
}

impl std::fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.origin, self.prefix)
    }
}

/// A request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prepared {
    pub(crate) method: String,
    /// The whole URL.
    pub(crate) url: String,
    /// The path alone, for logs and errors (the query may carry a credential).
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    /// The body and its content type.
    pub(crate) body: Option<(String, Vec<u8>)>,
}

/// The request `tool` makes for `arguments` (already checked against its schema) at `base`,
/// carrying `credentials`; an error (for the caller, as invalid arguments) when an argument
/// cannot be written where it goes.
pub(crate) fn prepare(
    tool: &OperationTool,
    base: &BaseUrl,
    arguments: &JsonObject,
    credentials: &[Credential],
) -> Result<Prepared, String> {
    let mut path = base.prefix.clone();
    let mut template = tool.path.as_str();
    while let Some(open) = template.find('{') {
        let close = template[open..].find('}').map(|at| open + at).ok_or("the path template is unclosed")?;
        path.push_str(&template[..open]);
        let name = &template[open + 1..close];
        let parameter = tool.parameters.iter().find(|p| p.place == Place::Path && p.name == name);
        let value = parameter.and_then(|parameter| arguments.get(&parameter.argument));
        let value = value.ok_or_else(|| format!("the path parameter `{name}` is missing"))?;
        path.push_str(&path_segment(name, value)?);
        template = &template[close + 1..];
    }
    path.push_str(template);
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    let mut query = Vec::new();
    let mut headers = Vec::new();
    let mut cookies = Vec::new();
    for parameter in &tool.parameters {
        let Some(value) = arguments.get(&parameter.argument) else { continue };
        match parameter.place {
            Place::Path => {}
            Place::Query => {
                query.extend(query_pairs(&parameter.name, value, parameter.style.as_deref(), parameter.explode))
            }
            Place::Header => {
                headers.push((parameter.name.clone(), header_value(&parameter.name, value, parameter.explode)?))
            }
            Place::Cookie => cookies.push(cookie_pair(&parameter.name, value)),
        }
    }
    for credential in credentials {
        match credential {
            Credential::Header { name, value } => headers.push((name.clone(), value.clone())),
            Credential::Query { name, value } => {
                query.push(format!("{}={}", percent_encode(name), percent_encode(value)));
            }
            Credential::Cookie { name, value } => {
                cookies.push(format!("{}={}", percent_encode(name), percent_encode(value)))
            }
            Credential::Bearer(token) => headers.push(("Authorization".to_owned(), format!("Bearer {token}"))),
            Credential::Basic { user, password } => {
                let pair = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                headers.push(("Authorization".to_owned(), format!("Basic {pair}")));
            }
        }
    }
    if !cookies.is_empty() {
        headers.push(("Cookie".to_owned(), cookies.join("; ")));
    }
    let body = match &tool.body {
        Some(body) => match arguments.get(&body.argument) {
            Some(value) => Some((body.media_type.clone(), body_bytes(body.kind, &body.argument, value)?)),
            None => None,
        },
        None => None,
    };
    let url = if query.is_empty() {
        format!("{}{path}", base.origin)
    } else {
        format!("{}{path}?{}", base.origin, query.join("&"))
    };
    Ok(Prepared { method: tool.method.clone(), url, path, headers, body })
}

/// The bytes of a body of `kind` for the argument `value`.
fn body_bytes(kind: BodyKind, argument: &str, value: &Value) -> Result<Vec<u8>, String> {
    match (kind, value) {
        (BodyKind::Json, value) => Ok(value.to_string().into_bytes()),
        (BodyKind::Form, value) => Ok(form_body(value).into_bytes()),
        (BodyKind::Text, Value::String(text)) => Ok(text.clone().into_bytes()),
        (BodyKind::Bytes, Value::String(encoded)) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|err| format!("the argument `{argument}` is not base64: {err}")),
        (_, _) => Err(format!("the argument `{argument}` must be a string")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::operation::operations;

    fn tool() -> OperationTool {
        let document = json!({"openapi": "3.1.0", "paths": {"/users/{id}/files/{name}": {"post": {
            "operationId": "upload",
            "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
                {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                {"name": "lang", "in": "cookie", "schema": {"type": "string"}}
            ],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
            "responses": {"200": {"description": "ok"}}
        }}}});
        operations(&document).unwrap().tools.remove(0)
    }

    fn arguments(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_call_stays_on_its_operations_path_and_the_configured_host() {
        let base = BaseUrl::parse("https://api.example/v1/").unwrap();
        let credentials =
            [Credential::Bearer("t0ken".into()), Credential::Query { name: "key".into(), value: "k&1".into() }];
        let prepared = prepare(
            &tool(),
            &base,
            &arguments(json!({"id": "../admin", "name": "http://evil.example/x?y#z", "tags": ["a", "b c"],
                "X-Trace": "abc", "lang": "en; admin=1", "body": {"x": 1}})),
            &credentials,
        )
        .unwrap();
        assert_eq!(prepared.method, "POST");
        assert_eq!(
            prepared.url,
            "https://api.example/v1/users/..%2Fadmin/files/http%3A%2F%2Fevil.example%2Fx%3Fy%23z?tags=a&tags=b%20c&key=k%261"
        );
        assert!(prepared.headers.contains(&("X-Trace".into(), "abc".into())));
        assert!(prepared.headers.contains(&("Authorization".into(), "Bearer t0ken".into())));
        assert!(prepared.headers.contains(&("Cookie".into(), "lang=en%3B%20admin%3D1".into())));
        assert_eq!(prepared.body, Some(("application/json".to_owned(), br#"{"x":1}"#.to_vec())));
    }

    #[test]
    fn arguments_that_cannot_be_written_are_refused() {
        let base = BaseUrl::parse("http://127.0.0.1:8000").unwrap();
        let err = prepare(&tool(), &base, &arguments(json!({"id": "..", "name": "a"})), &[]).unwrap_err();
        assert!(err.contains("one path segment"), "{err}");
        let err =
            prepare(&tool(), &base, &arguments(json!({"id": "a", "name": "b", "X-Trace": "a\nb"})), &[]).unwrap_err();
        assert!(err.contains("control character"), "{err}");
        let prepared = prepare(&tool(), &base, &arguments(json!({"id": "a", "name": "b"})), &[]).unwrap();
        assert_eq!(prepared.url, "http://127.0.0.1:8000/users/a/files/b");
        assert_eq!(prepared.body, None);
    }

    #[test]
    fn text_and_bytes_bodies_are_sent_with_their_type() {
        let document = json!({"openapi": "3.1.0", "paths": {
            "/notes": {"post": {"operationId": "note", "requestBody": {"content": {"text/markdown": {}, "multipart/form-data": {}}}}},
            "/blobs": {"put": {"operationId": "blob", "requestBody": {"content": {"application/octet-stream": {}}}}}
        }});
        let tools = operations(&document).unwrap().tools;
        let base = BaseUrl::parse("http://127.0.0.1:9").unwrap();
        let (blob, note) = (&tools[0], &tools[1]);
        assert_eq!(note.input_schema["properties"]["body"], json!({"type": "string"}));
        let sent = prepare(note, &base, &arguments(json!({"body": "# Hi"})), &[]).unwrap();
        assert_eq!(sent.body, Some(("text/markdown".to_owned(), b"# Hi".to_vec())));
        assert_eq!(blob.input_schema["properties"]["body"]["contentEncoding"], "base64");
        let sent = prepare(blob, &base, &arguments(json!({"body": "AAEC"})), &[]).unwrap();
        assert_eq!(sent.body, Some(("application/octet-stream".to_owned(), vec![0, 1, 2])));
        let err = prepare(blob, &base, &arguments(json!({"body": "not base64!"})), &[]).unwrap_err();
        assert!(err.contains("not base64"), "{err}");
    }

    #[test]
    fn a_base_url_is_an_origin_and_a_path_only() {
        for bad in
            ["ftp://a", "api.example", "http://user:pw@a/", "http://a/?q=1", "http://a/#x", "http:///x", "http://a b"]
        {
            assert_eq!(BaseUrl::parse(bad).unwrap_err().kind(), OpenApiErrorKind::BaseUrl, "{bad}");
        }
        assert_eq!(BaseUrl::parse("http://a:8080").unwrap().to_string(), "http://a:8080");
        assert!(BaseUrl::parse("https://a/x/").unwrap().is_https());
    }
}
