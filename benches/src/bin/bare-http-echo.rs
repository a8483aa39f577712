//! The bare HTTP baseline, started as `bare-http-echo ADDRESS:PORT`: a hyper HTTP/1.1 server
//! on the same multi-threaded tokio runtime Wharf uses, that reads each POST body whole, parses
//! it with serde_json and answers a hand-built echo result. No header checks, sessions, dispatch
//! or validation: it is the floor that Wharf's HTTP overhead is measured against.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::{Request, Response};

#[derive(serde::Deserialize)]
struct EchoRequest {
    id: Option<serde_json::Value>,
    #[serde(default)]
    params: Option<Params>,
}

#[derive(serde::Deserialize)]
struct Params {
    #[serde(default)]
    arguments: Option<Arguments>,
}

#[derive(serde::Deserialize)]
struct Arguments {
    #[serde(default)]
    message: String,
}

/// A body sent in one piece.
struct Whole(Option<Bytes>);

impl Body for Whole {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.take().map(|bytes| Ok(Frame::data(bytes))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.as_ref().map_or(0, |bytes| bytes.len() as u64))
    }
}

async fn echo(request: Request<Incoming>) -> Result<Response<Whole>, Infallible> {
    let mut body = std::pin::pin!(request.into_body());
    let mut bytes = Vec::new();
    while let Some(Ok(frame)) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        if let Ok(mut data) = frame.into_data() {
            while data.has_remaining() {
                let chunk = data.chunk();
                bytes.extend_from_slice(chunk);
                let read = chunk.len();
                data.advance(read);
            }
        }
    }
    let answer = match serde_json::from_slice::<EchoRequest>(&bytes) {
        Ok(EchoRequest { id: Some(id), params }) => {
            let message = params.and_then(|params| params.arguments).map(|arguments| arguments.message);
            let text = serde_json::to_string(&message.unwrap_or_default()).unwrap_or_default();
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{text}}}]}}}}"#)
        }
        _ => String::new(),
    };
    let status = if answer.is_empty() { 400 } else { 200 };
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
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address).await.expect("a listening socket");
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), hyper::service::service_fn(echo));
                let _ = connection.await;
            });
        }
    });
}
