//! `wharf record -o CASSETTE --url URL`: a transparent Streamable HTTP proxy on a loopback port.
//! Each request goes to the same path at the URL's origin with its headers (hop-by-hop ones
//! aside; `Host` becomes the upstream's), and each response comes back as it streams; the
//! messages of both, and the exchanges that carried them, are written to the cassette with
//! secrets redacted (`Authorization`, cookies, headers named like keys and tokens; session ids
//! become labels: `session-1`, ...). Runs until SIGINT or SIGTERM.

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST};
use http::{HeaderMap, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use super::loopback::{declares_more_than, refusal, serve};
use super::tape::{Carried, SharedTape, write};
use super::tee::{MessageReader, TeeBody, messages_in};
use super::{REDACTED, Side};
use crate::exit;
use crate::server_args::runtime;

/// The largest request body passed on.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// Headers that belong to one connection, not passed through (RFC 9110 §7.6.1).
const HOP_BY_HOP: [&str; 8] =
    ["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "content-length"];

/// Header names whose values are secrets, beside those containing a secret word.
const SECRET_HEADERS: [&str; 4] = ["authorization", "proxy-authorization", "cookie", "set-cookie"];
const SECRET_HEADER_WORDS: [&str; 5] = ["token", "secret", "key", "password", "auth"];

type ProxyBody = Either<TeeBody, Full<Bytes>>;

/// What every proxied exchange shares.
struct Proxy {
    upstream: Uri,
    client: Client<wharf::client::HttpConnector, Full<Bytes>>,
    tape: SharedTape,
    /// Each session id the upstream handed out, and its label in the cassette.
    labels: Mutex<HashMap<String, String>>,
}

impl Proxy {
    /// The label of the session `id`, a new one for an id not seen yet.
    fn label(&self, id: &str) -> String {
        let mut labels = self.labels.lock().unwrap_or_else(PoisonError::into_inner);
        let next = labels.len() + 1;
        labels.entry(id.to_owned()).or_insert_with(|| format!("session-{next}")).clone()
    }

    /// `headers` as the cassette keeps them: secrets redacted, the session id as its label.
    fn redacted(&self, headers: &HeaderMap) -> Value {
        let mut kept = serde_json::Map::new();
        for (name, value) in headers {
            let name = name.as_str();
            let Ok(value) = value.to_str() else { continue };
            let value = if name == "mcp-session-id" {
                self.label(value)
            } else if SECRET_HEADERS.contains(&name) || SECRET_HEADER_WORDS.iter().any(|word| name.contains(word)) {
                REDACTED.to_owned()
            } else {
                value.to_owned()
            };
            kept.insert(name.to_owned(), Value::from(value));
        }
        Value::Object(kept)
    }

    /// The upstream URI for a request to `uri` at the proxy.
    fn upstream_uri(&self, uri: &Uri) -> Result<Uri, http::Error> {
        let path = uri.path_and_query().map_or("/", http::uri::PathAndQuery::as_str);
        let mut parts = self.upstream.clone().into_parts();
        parts.path_and_query = Some(path.parse()?);
        Ok(Uri::from_parts(parts)?)
    }

    async fn pass(self: Arc<Self>, request: Request<Incoming>) -> Result<Response<ProxyBody>, Infallible> {
        if let Some(why) = refusal(request.headers()) {
            return Ok(plain(StatusCode::FORBIDDEN, why));
        }
        let received_ms = self.tape.lock().unwrap_or_else(PoisonError::into_inner).now_ms();
        let (parts, body) = request.into_parts();
        let too_large = declares_more_than(&parts.headers, MAX_REQUEST_BYTES);
        let body = match Limited::new(body, MAX_REQUEST_BYTES).collect().await {
            Ok(collected) if !too_large => collected.to_bytes(),
            _ => return Ok(plain(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large to record")),
        };
        let Ok(uri) = self.upstream_uri(&parts.uri) else {
            return Ok(plain(StatusCode::BAD_REQUEST, "the request's path cannot be passed on"));
        };
        let mut forwarded = Request::builder().method(parts.method.clone()).uri(uri);
        for (name, value) in &parts.headers {
            if name != HOST && !HOP_BY_HOP.contains(&name.as_str()) {
                forwarded = forwarded.header(name, value);
            }
        }
        let Ok(forwarded) = forwarded.body(Full::new(body.clone())) else {
            return Ok(plain(StatusCode::BAD_REQUEST, "the request cannot be passed on"));
        };
        let session_of = |headers: &HeaderMap| {
            headers.get("mcp-session-id").and_then(|id| id.to_str().ok()).map(|id| self.label(id))
        };
        let version_header =
            parts.headers.get("mcp-protocol-version").and_then(|version| version.to_str().ok()).map(str::to_owned);
        let exchange = json!({"method": parts.method.as_str(), "path": parts.uri.path(), "headers": self.redacted(&parts.headers)});
        let answered = self.client.request(forwarded).await;
        // The client's messages are written once the answer's head says their session (an
        // `initialize` is given one in its answer).
        let session = match &answered {
            Ok(response) => session_of(&parts.headers).or_else(|| session_of(response.headers())),
            Err(_) => session_of(&parts.headers),
        };
        let mut carried =
            Carried { session: session.clone(), version_header: version_header.clone(), http: Some(exchange) };
        let messages = messages_in(&body);
        if messages.is_empty() {
            write(&self.tape, Side::Client, received_ms, Value::Null, &carried);
        }
        for message in messages {
            write(&self.tape, Side::Client, received_ms, message, &carried);
            carried.http = None;
        }
        let response = match answered {
            Ok(response) => response,
            Err(err) => {
                let why = format!("the upstream {} did not answer: {err}", self.upstream);
                let carried = Carried { session, version_header, http: Some(json!({"status": 502})) };
                let at_ms = self.tape.lock().unwrap_or_else(PoisonError::into_inner).now_ms();
                write(&self.tape, Side::Server, at_ms, Value::from(why.clone()), &carried);
                return Ok(plain(StatusCode::BAD_GATEWAY, &why));
            }
        };
        let (mut head, body) = response.into_parts();
        let exchange = json!({"status": head.status.as_u16(), "headers": self.redacted(&head.headers)});
        let reader = MessageReader::new(head.headers.get(CONTENT_TYPE).and_then(|value| value.to_str().ok()));
        for name in HOP_BY_HOP {
            head.headers.remove(name);
        }
        let first = Carried { session, version_header, http: Some(exchange) };
        Ok(Response::from_parts(head, Either::Left(TeeBody::new(body, reader, self.tape.clone(), first))))
    }
}

fn plain(status: StatusCode, text: &str) -> Response<ProxyBody> {
    let mut response = Response::new(Either::Right(Full::new(Bytes::from(format!("{text}\n")))));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, http::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// Records the server at `url` through a proxy listening on `listen`, until SIGINT or SIGTERM.
pub(crate) fn record_http(url: &str, listen: &str, output: &Path, tape: SharedTape) -> ExitCode {
    let upstream: Uri = match url.parse::<Uri>() {
        Ok(uri) if matches!(uri.scheme_str(), Some("http" | "https")) && uri.authority().is_some() => uri,
        _ => {
            eprintln!("wharf record: --url {url} is not an http:// or https:// URL");
            return ExitCode::from(exit::USAGE);
        }
    };
    let connector = match wharf::client::http_connector() {
        Ok(connector) => connector,
        Err(err) => {
            eprintln!("wharf record: {err}");
            return ExitCode::FAILURE;
        }
    };
    let client = Client::builder(TokioExecutor::new()).build(connector);
    let path = upstream.path().to_owned();
    let proxy = Arc::new(Proxy { upstream, client, tape, labels: Mutex::new(HashMap::new()) });
    let banner = |local: &str| {
        format!(
            "wharf record: recording {url} to {}, at http://{local}{path} (Streamable HTTP); Ctrl-C stops it",
            output.display()
        )
    };
    let handle = move |request| proxy.clone().pass(request);
    runtime().block_on(serve(listen, "--listen", "wharf record", banner, handle))
}
