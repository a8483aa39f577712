//! The bare baseline: reads JSON-RPC lines from stdin, parses each with serde_json, and writes
//! a hand-built echo result. It does no validation, no dispatch and no concurrency: it is the
//! floor that a framework's overhead is measured against.

use std::io::{BufRead, BufWriter, Write};

#[derive(serde::Deserialize)]
struct Request {
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

fn main() {
    let mut input = std::io::BufReader::with_capacity(1 << 16, std::io::stdin().lock());
    let mut output = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let Ok(request) = serde_json::from_str::<Request>(&line) else { continue };
        let Some(id) = request.id else { continue };
        let message =
            request.params.and_then(|params| params.arguments).map(|arguments| arguments.message).unwrap_or_default();
        let text = serde_json::to_string(&message).unwrap_or_default();
        writeln!(output, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{text}}}]}}}}"#)
            .ok();
        // Write out when no more input is already buffered, as a pipelining server should.
        if input.buffer().is_empty() {
            output.flush().ok();
        }
    }
    output.flush().ok();
}
