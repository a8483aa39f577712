//! Transports: newline-delimited JSON over any byte stream (stdio, pipes, sockets, in-memory
//! duplex streams). Transports see bytes and JSON-RPC envelopes only, never tools or prompts.

pub(crate) mod connection;
pub(crate) mod line_reader;
pub(crate) mod stdio;
