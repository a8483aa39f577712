//! The server's requests to the client, on the wire (issue 38, item 7): a server that asks
//! many questions at once gets at most `ClientOptions::max_server_requests` handled together,
//! and the rest refused at once with an error that names the limit. The server is
//! `fixtures/asking_server.py` over stdio.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use wharf_client::protocol::{ClientCapabilities, ContentBlock, ElicitParams, ElicitResult, ElicitationCapability};
use wharf_client::{Answer, Client, ClientHandler, ClientOptions, Target};

/// Counts the questions it is asked and answers none: each holds its place until the end.
struct NeverAnswers(Arc<AtomicUsize>);

impl ClientHandler for NeverAnswers {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities { elicitation: Some(ElicitationCapability::default()), ..ClientCapabilities::default() }
    }

    fn elicit(&self, _params: ElicitParams) -> Answer<'_, ElicitResult> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::pending())
    }
}

/// Connects to the asking server with `options`, has it ask `asked` questions, and returns
/// how many reached the handler and what the server says the client answered.
async fn ask(asked: usize, options: ClientOptions) -> (usize, Value) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/asking_server.py");
    let target = Target::command("python3", [fixture.to_str().unwrap().to_owned(), asked.to_string()]);
    let started = Arc::new(AtomicUsize::new(0));
    let client = Client::connect_with(target, options.handler(NeverAnswers(started.clone()))).await.unwrap();
    let result = client.call_tool("ask", json!({})).await.unwrap();
    client.close().await;
    let Some(ContentBlock::Text(text)) = result.content.first() else { panic!("{result:?}") };
    (started.load(Ordering::SeqCst), serde_json::from_str(&text.text).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_past_the_limit_are_refused_at_once_and_name_it() {
    let (started, seen) = ask(40, ClientOptions::default()).await;
    assert_eq!(started, 16, "handled at once by default");
    assert_eq!(seen["answered"], 24, "{seen}");
    for error in seen["errors"].as_array().unwrap() {
        assert_eq!(error["code"], -32000, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("16 requests of the server at once (ClientOptions::max_server_requests)"),
            "{message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_is_an_option() {
    let (started, seen) = ask(10, ClientOptions::default().max_server_requests(3)).await;
    assert_eq!(started, 3);
    assert_eq!(seen["answered"], 7, "{seen}");
    let message = seen["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("already handles 3 requests of the server at once"), "{message}");
}
