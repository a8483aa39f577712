//! Counting tokens as `wharf tokens` does: OpenAI's `o200k_base` encoding (GPT-4o and later),
//! which other vendors' tokenizers match within a few percent on JSON and English.

/// The encoding tokens are counted in.
pub const TOKEN_ENCODING: &str = "o200k_base";

/// How many `o200k_base` tokens `text` is.
pub fn count_tokens(text: &str) -> usize {
    // The tables are built once per process, on first use.
    tiktoken::get_encoding(TOKEN_ENCODING).map_or(text.len(), |encoding| encoding.count(text))
}
