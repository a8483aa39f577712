//! The line transports: newline-delimited JSON over any byte stream (stdio, pipes, sockets,
//! in-memory duplex streams). They see bytes and JSON-RPC envelopes only, never tools or
//! prompts, and reach the engine through the transport contract (`crate::contract`) alone.
//! Streamable HTTP is the `wharf-http` crate.

pub(crate) mod connection;
pub(crate) mod line_reader;
pub(crate) mod read_loop;
pub(crate) mod serving;
pub(crate) mod shared_writer;
pub(crate) mod stdio;
pub(crate) mod stdio_options;
pub(crate) mod write_batch;
