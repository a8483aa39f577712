//! Integration tests of Streamable HTTP: raw HTTP/1.1 bytes written to a served endpoint and
//! the raw answers read, for every status code path of both eras, the limits, streams,
//! sessions, the authentication hook, scopes, quotas, middleware and the Server Card over HTTP.

mod auth_hook;
mod http;
mod http_streams;
mod limits;
mod middleware;
mod quotas;
mod scopes;
mod server_card;
mod support;
