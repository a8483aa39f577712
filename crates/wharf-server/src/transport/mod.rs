//! Transports: newline-delimited JSON over any byte stream (stdio, pipes, sockets, in-memory
//! duplex streams), and Streamable HTTP. Transports see bytes, HTTP and JSON-RPC envelopes
//! only, never tools or prompts.

pub(crate) mod connection;
pub(crate) mod line_reader;
pub(crate) mod read_loop;
pub(crate) mod shared_writer;
pub(crate) mod stdio;
pub(crate) mod write_batch;
