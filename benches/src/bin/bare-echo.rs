//! The bare baseline: reads JSON-RPC lines from stdin, parses each with serde_json, and writes
//! a hand-built echo result. It does no validation, no dispatch and no concurrency: it is the
//! floor that a framework's overhead is measured against. Started as `bare-echo [SERVER_INFO]`:
//! the JSON object it names as `serverInfo` in 2026-07-28 results.

use std::io::{BufRead, BufWriter, Write};

use wharf_bench::baseline::{DEFAULT_SERVER_INFO, write_echo_answer};

fn main() {
    let server_info = std::env::args().nth(1).unwrap_or_else(|| DEFAULT_SERVER_INFO.to_owned());
    let mut input = std::io::BufReader::with_capacity(1 << 16, std::io::stdin().lock());
    let mut output = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if !write_echo_answer(line.as_bytes(), &server_info, &mut output).unwrap_or(false) {
            continue;
        }
        output.write_all(b"\n").ok();
        // Write out when no more input is already buffered, as a pipelining server should.
        if input.buffer().is_empty() {
            output.flush().ok();
        }
    }
    output.flush().ok();
}
