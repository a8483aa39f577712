//! Results of any size: a result over its client's budget is answered with a preview and a
//! link; the pages read back are the original bytes; another principal, or another session, is
//! refused them; they expire; budgets come from the server, the tool and the client's name;
//! binary content goes the same way; a tool without a budget is untouched.

use std::time::Duration;

use serde_json::{Value, json};
use wharf_protocol::{ClientCapabilities, ProtocolVersion};
use wharf_server::testing::InMemoryClient;
use wharf_server::{Args, Principal, ResultBudget, Server, ServerBuilder, ToolDef, layer_fn};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Size {
    bytes: usize,
}

/// `bytes` of numbered lines, with characters of every width, so that pages cut between them.
fn text_of(bytes: usize) -> String {
    let mut text = String::new();
    let mut line = 0;
    while text.len() < bytes {
        line += 1;
        text.push_str(&format!("{line:06} é€😀 line\n"));
    }
    text
}

fn builder() -> ServerBuilder {
    let big = ToolDef::new("big", |Args(size): Args<Size>| async move { text_of(size.bytes) }).description("Big text");
    let small_budget = ToolDef::new("big_with_budget", |Args(size): Args<Size>| async move { text_of(size.bytes) })
        .description("Big text, budget of its own")
        .max_result(ResultBudget::bytes(2_000));
    let image = ToolDef::new("picture", |Args(size): Args<Size>| async move {
        let bytes: Vec<u8> = (0..size.bytes).map(|n| (n % 251) as u8).collect();
        wharf_protocol::CallToolResult {
            content: vec![
                wharf_protocol::ContentBlock::Image(wharf_protocol::ImageContent {
                    data: base64(&bytes),
                    mime_type: "image/png".to_owned(),
                    annotations: None,
                    meta: None,
                }),
                wharf_protocol::ContentBlock::text("a picture"),
            ],
            ..Default::default()
        }
    })
    .description("A picture");
    let summarized = ToolDef::new("summarized", || async {
        let mut result = wharf_protocol::CallToolResult::text(text_of(50_000));
        result.meta = json!({"wharf/summary": "50 kB of numbered lines"}).as_object().cloned();
        result
    })
    .description("Big text with a summary");
    // A stand-in for authentication: the principal named in `_meta["test/principal"]`.
    let principals = layer_fn(|mut request, next| {
        let named = request
            .params()
            .meta()
            .and_then(|meta| meta.other.get("test/principal"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(named) = named {
            request.set_principal(Principal::new(named));
        }
        next.run(request)
    });
    Server::builder("large", "1").tool(big).tool(small_budget).tool(image).tool(summarized).layer(principals)
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, byte)| n | u32::from(*byte) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Every page of `uri`, read as `principal`, put together; and how many there were.
async fn read_all(client: &InMemoryClient, uri: &str, principal: Option<&str>, budget: usize) -> (String, usize) {
    let mut whole = String::new();
    let mut page = 1;
    loop {
        let mut params = json!({"uri": format!("{uri}?page={page}")});
        if let Some(principal) = principal {
            params["_meta"] = json!({"test/principal": principal});
        }
        let read = client.request("resources/read", params).await.unwrap();
        let contents = &read["contents"][0];
        let text = contents["text"].as_str().or(contents["blob"].as_str()).unwrap();
        assert!(text.len() <= budget, "a page of {} bytes, over the budget of {budget}", text.len());
        whole.push_str(text);
        let pages = contents["_meta"]["wharf/pages"].as_u64().unwrap() as usize;
        if page == pages {
            return (whole, pages);
        }
        page += 1;
    }
}

fn link(result: &Value) -> String {
    let links: Vec<&Value> =
        result["content"].as_array().unwrap().iter().filter(|block| block["type"] == "resource_link").collect();
    assert_eq!(links.len(), 1, "{result}");
    links[0]["uri"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_result_over_the_budget_is_a_preview_and_pages_that_are_the_whole() {
    let server = builder().max_result(ResultBudget::bytes(10_000)).build().unwrap();
    let client = InMemoryClient::latest_session(server).await;
    // Within the budget: untouched.
    let small = client.request("tools/call", json!({"name": "big", "arguments": {"bytes": 5_000}})).await.unwrap();
    assert_eq!(small["content"][0]["text"], text_of(5_000));
    assert_eq!(small["_meta"], Value::Null);
    // Over it: a preview, a note, a link.
    let original = text_of(200_000);
    let answer = client.request("tools/call", json!({"name": "big", "arguments": {"bytes": 200_000}})).await.unwrap();
    assert!(serde_json::to_string(&answer).unwrap().len() < 10_000, "the answer fits the budget");
    let preview = answer["content"][0]["text"].as_str().unwrap();
    assert!(original.starts_with(preview.split("\n\n[").next().unwrap()), "the preview is the first part");
    let uri = link(&answer);
    assert!(uri.starts_with("wharf-result://") && preview.contains(&format!("{uri}?page=1")), "{preview}");
    let link_block = &answer["content"][1];
    assert_eq!(link_block["size"], original.len());
    assert_eq!(link_block["mimeType"], "text/plain");
    let (whole, pages) = read_all(&client, &uri, None, 10_000).await;
    assert_eq!(whole, original, "the pages put together are the original bytes");
    assert!(pages >= 20, "{pages} pages");
    // The template is listed; a page past the end, or a page that is not a number, is refused.
    let templates = client.request("resources/templates/list", json!({})).await.unwrap();
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "wharf-result://{id}{?page}");
    let past = client.request("resources/read", json!({"uri": format!("{uri}?page={}", pages + 1)})).await;
    assert_eq!(past.unwrap_err().code.0, -32002);
    let nonsense = client.request("resources/read", json!({"uri": format!("{uri}?page=two")})).await;
    assert_eq!(nonsense.unwrap_err().code.0, -32602);
    // The bare link is the first page.
    let first = client.request("resources/read", json!({"uri": uri})).await.unwrap();
    assert!(original.starts_with(first["contents"][0]["text"].as_str().unwrap()));
}

#[tokio::test]
async fn only_the_principal_or_session_that_made_the_call_reads_the_pages() {
    let server = builder().max_result(ResultBudget::bytes(10_000)).build().unwrap();
    let stateless = InMemoryClient::stateless(server.clone(), ClientCapabilities::default());
    let call = json!({"name": "big", "arguments": {"bytes": 30_000}, "_meta": {"test/principal": "ann"}});
    let answer = stateless.request("tools/call", call).await.unwrap();
    assert_eq!(answer["resultType"], "complete");
    let uri = link(&answer);
    let (whole, _) = read_all(&stateless, &uri, Some("ann"), 10_000).await;
    assert_eq!(whole, text_of(30_000));
    for other in [json!({"uri": uri, "_meta": {"test/principal": "bob"}}), json!({"uri": uri})] {
        let refused = stateless.request("resources/read", other).await.unwrap_err();
        assert_eq!(refused.code.0, -32602, "not found, on 2026-07-28: {refused:?}");
    }
    // A session's pages are its own.
    let first = InMemoryClient::latest_session(server.clone()).await;
    let second = InMemoryClient::latest_session(server).await;
    let answer = first.request("tools/call", json!({"name": "big", "arguments": {"bytes": 30_000}})).await.unwrap();
    let uri = link(&answer);
    assert!(first.request("resources/read", json!({"uri": uri})).await.is_ok());
    assert_eq!(second.request("resources/read", json!({"uri": uri})).await.unwrap_err().code.0, -32002);
}

#[tokio::test]
async fn pages_expire() {
    let server =
        builder().max_result(ResultBudget::bytes(10_000)).result_pages_ttl(Duration::from_millis(300)).build().unwrap();
    let client = InMemoryClient::latest_session(server).await;
    let answer = client.request("tools/call", json!({"name": "big", "arguments": {"bytes": 30_000}})).await.unwrap();
    let uri = link(&answer);
    assert!(client.request("resources/read", json!({"uri": uri})).await.is_ok());
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(client.request("resources/read", json!({"uri": uri})).await.unwrap_err().code.0, -32002);
}

#[tokio::test]
async fn budgets_come_from_the_tool_and_the_clients_name_and_are_off_otherwise() {
    // No server budget: only the tool with its own budget is fitted.
    let server = builder().build().unwrap();
    let client = InMemoryClient::latest_session(server.clone()).await;
    let plain = client.request("tools/call", json!({"name": "big", "arguments": {"bytes": 100_000}})).await.unwrap();
    assert_eq!(plain["content"][0]["text"].as_str().unwrap().len(), text_of(100_000).len(), "no budget, no change");
    let own = client.request("tools/call", json!({"name": "big_with_budget", "arguments": {"bytes": 10_000}})).await;
    let own = own.unwrap();
    let (whole, _) = read_all(&client, &link(&own), None, 2_000).await;
    assert_eq!(whole, text_of(10_000));
    // A client known by name gets its budget; others get none.
    let server = builder().max_result_for_client("claude-*", ResultBudget::bytes(8_000)).build().unwrap();
    let named = InMemoryClient::connect(server.clone());
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "claude-code", "version": "2"}});
    named.request("initialize", init).await.unwrap();
    named.notify("notifications/initialized", json!({})).await;
    let answer = named.request("tools/call", json!({"name": "big", "arguments": {"bytes": 20_000}})).await.unwrap();
    let (whole, _) = read_all(&named, &link(&answer), None, 8_000).await;
    assert_eq!(whole, text_of(20_000));
    let other = InMemoryClient::latest_session(server).await;
    let untouched = other.request("tools/call", json!({"name": "big", "arguments": {"bytes": 20_000}})).await.unwrap();
    assert_eq!(untouched["content"][0]["text"], text_of(20_000));
}

#[tokio::test]
async fn binary_content_and_summaries_and_older_revisions() {
    let server = builder().max_result(ResultBudget::bytes(10_000)).build().unwrap();
    let client = InMemoryClient::latest_session(server.clone()).await;
    let answer =
        client.request("tools/call", json!({"name": "picture", "arguments": {"bytes": 30_000}})).await.unwrap();
    let blocks = answer["content"].as_array().unwrap();
    assert_eq!((blocks[1]["type"].as_str(), blocks[2]["text"].as_str()), (Some("resource_link"), Some("a picture")));
    assert_eq!(blocks[1]["mimeType"], "image/png");
    assert_eq!(blocks[1]["size"], 30_000);
    let (whole, _) = read_all(&client, &link(&answer), None, 10_000).await;
    let bytes: Vec<u8> = (0..30_000).map(|n| (n % 251) as u8).collect();
    assert_eq!(whole, base64(&bytes), "base64 pages put together are the image's");
    // The tool's summary is the preview.
    let answer = client.request("tools/call", json!({"name": "summarized", "arguments": {}})).await.unwrap();
    assert!(answer["content"][0]["text"].as_str().unwrap().starts_with("50 kB of numbered lines\n\n[The whole text"));
    assert_eq!(answer["_meta"].get("wharf/summary"), None);
    // 2024-11-05 has no resource links: the note names the pages.
    let (old, _) =
        InMemoryClient::session(server, ProtocolVersion::V2024_11_05, ClientCapabilities::default()).await.unwrap();
    let answer = old.request("tools/call", json!({"name": "big", "arguments": {"bytes": 30_000}})).await.unwrap();
    let blocks = answer["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "{answer}");
    let note = blocks[0]["text"].as_str().unwrap();
    let uri = note.split("the resource ").nth(1).unwrap().split(',').next().unwrap();
    let (whole, _) = read_all(&old, uri, None, 10_000).await;
    assert_eq!(whole, text_of(30_000));
}
