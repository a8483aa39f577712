//! The discovery documents an endpoint with a [`ServerCard`](crate::ServerCard) publishes: the
//! card at `<endpoint>/server-card` and at `/.well-known/mcp/server-card.json`, and the AI
//! Catalog at `/.well-known/ai-catalog.json`. Public, read-only and cacheable: a strong `ETag`
//! (the hash of the body) answered 304 to a matching `If-None-Match`, `Cache-Control`, and CORS
//! open to every origin; only `Host` is checked, as for every public document.

use std::hash::{Hash, Hasher};

use bytes::Bytes;
use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ALLOW, CACHE_CONTROL, ETAG, HOST, HeaderValue, IF_NONE_MATCH,
};
use http::{Method, Request, Response, StatusCode};
use wharf_server::contract::Server;

use crate::body::McpBody;
use crate::guard;
use crate::options::HttpOptions;
use crate::reply;
use crate::server_card::{CARD_MEDIA_TYPE, CARD_SUFFIX, CATALOG_MEDIA_TYPE, CATALOG_PATH, LEGACY_CARD_PATH};

/// Which document a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Document {
    Card,
    Catalog,
}

fn document_at(options: &HttpOptions, path: &str) -> Option<Document> {
    options.server_card.as_ref()?;
    if path == LEGACY_CARD_PATH || path.strip_prefix(options.path.as_str()) == Some(CARD_SUFFIX) {
        Some(Document::Card)
    } else if path == CATALOG_PATH {
        Some(Document::Catalog)
    } else {
        None
    }
}

/// True when `path` is a discovery document the options publish.
pub(crate) fn publishes(options: &HttpOptions, path: &str) -> bool {
    document_at(options, path).is_some()
}

/// The endpoint's URL: the card's, else the request's `Host` over `http://`.
fn endpoint_url<B>(options: &HttpOptions, request: &Request<B>) -> String {
    if let Some(url) = options.server_card.as_ref().and_then(|card| card.public_url()) {
        return url.to_owned();
    }
    let host = request.headers().get(HOST).and_then(|host| host.to_str().ok()).unwrap_or("localhost");
    format!("http://{host}{}", options.path)
}

/// A strong entity tag: the body's hash, the same for the same bytes on every instance of a
/// build.
fn entity_tag(body: &[u8]) -> String {
    let mut hasher = std::hash::DefaultHasher::new();
    body.hash(&mut hasher);
    format!("\"{:016x}\"", hasher.finish())
}

/// True when `If-None-Match` names `tag` (or `*`), compared weakly as RFC 9110 §13.1.2 says.
fn not_modified(if_none_match: Option<&HeaderValue>, tag: &str) -> bool {
    let Some(listed) = if_none_match.and_then(|value| value.to_str().ok()) else { return false };
    listed.split(',').map(str::trim).any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == tag)
}

/// The answer to a request for a discovery document, when `request` asks for one.
pub(crate) fn answer<B>(options: &HttpOptions, server: &Server, request: &Request<B>) -> Option<Response<McpBody>> {
    let document = document_at(options, request.uri().path())?;
    let card = options.server_card.as_ref()?;
    if let Err(refusal) = guard::check_host(options, request.headers()) {
        return Some(reply::forbidden(refusal));
    }
    let mut response = match *request.method() {
        Method::GET | Method::HEAD => {
            let endpoint = endpoint_url(options, request);
            let (body, media_type) = match document {
                Document::Card => (card.document(server.info(), &endpoint, options.auth.is_some()), CARD_MEDIA_TYPE),
                Document::Catalog => {
                    (card.catalog(server.info(), &format!("{endpoint}{CARD_SUFFIX}")), CATALOG_MEDIA_TYPE)
                }
            };
            let body = Bytes::from(body.to_string());
            let tag = entity_tag(&body);
            let mut response = if not_modified(request.headers().get(IF_NONE_MATCH), &tag) {
                reply::with_body(StatusCode::NOT_MODIFIED, None, McpBody::empty())
            } else {
                let body = if request.method() == Method::HEAD { McpBody::empty() } else { McpBody::full(body) };
                reply::with_body(StatusCode::OK, Some(media_type), body)
            };
            let headers = response.headers_mut();
            if let Ok(tag) = HeaderValue::from_str(&tag) {
                headers.insert(ETAG, tag);
            }
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
            response
        }
        Method::OPTIONS => reply::no_content(),
        _ => {
            let mut response = reply::with_body(StatusCode::METHOD_NOT_ALLOWED, None, McpBody::empty());
            response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
            response
        }
    };
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET"));
    headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("Content-Type, If-None-Match"));
    headers.insert(ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("ETag"));
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists_and_stars() {
        let tag = entity_tag(b"{}");
        assert_eq!(tag, entity_tag(b"{}"));
        assert_ne!(tag, entity_tag(b"{ }"));
        assert!(tag.starts_with('"') && tag.ends_with('"'));
        let header = |text: &str| HeaderValue::from_str(text).unwrap();
        assert!(not_modified(Some(&header(&tag)), &tag));
        assert!(not_modified(Some(&header(&format!("\"other\", W/{tag}"))), &tag));
        assert!(not_modified(Some(&header("*")), &tag));
        assert!(!not_modified(Some(&header("\"other\"")), &tag));
        assert!(!not_modified(None, &tag));
    }
}
