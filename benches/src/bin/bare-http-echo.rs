//! The bare HTTP baseline, started as `bare-http-echo ADDRESS:PORT [SERVER_INFO]` (the JSON
//! object it names as `serverInfo` in 2026-07-28 results): a hyper HTTP/1.1 server
//! on the same multi-threaded tokio runtime Wharf uses, that reads each POST body whole, parses
//! it with serde_json and answers a hand-built echo result. No header checks, sessions, dispatch
//! or validation: it is the floor that Wharf's HTTP overhead is measured against.

use std::convert::Infallible;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::{Request, Response};
use wharf_bench::baseline::{DEFAULT_SERVER_INFO, write_echo_answer};
use wharf_bench::whole_body::{Whole, read_whole};

async fn echo(request: Request<Incoming>, server_info: &str) -> Result<Response<Whole>, Infallible> {
    let bytes = read_whole(request.into_body()).await;
    let mut answer = Vec::with_capacity(128);
    let answered = write_echo_answer(&bytes, server_info, &mut answer).unwrap_or(false);
    let status = if answered { 200 } else { 400 };
    let response = Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Whole(Some(Bytes::from(answer))))
        .unwrap_or_else(|_| Response::new(Whole(None)));
    Ok(response)
}

fn main() {
    let address: std::net::SocketAddr =
        std::env::args().nth(1).and_then(|address| address.parse().ok()).expect("usage: bare-http-echo ADDRESS:PORT");
    // Every connection's service needs the string for as long as the process runs; leaked once,
    // it is shared without a copy or a reference count.
    let server_info: &'static str =
        Box::leak(std::env::args().nth(2).unwrap_or_else(|| DEFAULT_SERVER_INFO.to_owned()).into_boxed_str());
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address).await.expect("a listening socket");
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new().serve_connection(
                    hyper_util::rt::TokioIo::new(stream),
                    hyper::service::service_fn(move |request| echo(request, server_info)),
                );
                let _ = connection.await;
            });
        }
    });
}
