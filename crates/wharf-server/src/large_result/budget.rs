//! How much of a tool result a client takes ([`ResultBudget`]): bytes, or tokens counted as
//! `wharf tokens` counts them (the `token-count` feature). A token is at least one byte, so a
//! page of as many bytes as the budget has tokens always fits it.

#[cfg(feature = "token-count")]
use super::tokens::count_tokens;

/// What a budget counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Bytes,
    #[cfg(feature = "token-count")]
    Tokens,
}

/// The most of a tool result a client is handed at once; a result over it is answered with a
/// preview and a link to the whole, read in pages that each fit the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultBudget {
    limit: usize,
    unit: Unit,
}

/// The smallest budget: a preview and a link must fit in it.
const MIN_BUDGET: usize = 1024;

impl ResultBudget {
    /// At most `bytes` of text and encoded binary (at least 1,024).
    pub fn bytes(bytes: usize) -> ResultBudget {
        ResultBudget { limit: bytes.max(MIN_BUDGET), unit: Unit::Bytes }
    }

    /// At most `tokens` tokens (at least 1,024), counted with OpenAI's `o200k_base` encoding,
    /// as `wharf tokens` counts them; other vendors' tokenizers count within a few percent.
    #[cfg(feature = "token-count")]
    pub fn tokens(tokens: usize) -> ResultBudget {
        ResultBudget { limit: tokens.max(MIN_BUDGET), unit: Unit::Tokens }
    }

    /// The smaller of two budgets; one counted in tokens wins a tie, being the stricter.
    pub(crate) fn min(self, other: ResultBudget) -> ResultBudget {
        if other.limit < self.limit { other } else { self }
    }

    /// How much of `parts` the budget counts.
    pub(crate) fn measure(&self, parts: &[&str]) -> usize {
        let bytes = parts.iter().map(|part| part.len()).sum();
        match self.unit {
            Unit::Bytes => bytes,
            // Every token is at least a byte: text within the budget in bytes needs no count.
            #[cfg(feature = "token-count")]
            Unit::Tokens if bytes <= self.limit => bytes,
            #[cfg(feature = "token-count")]
            Unit::Tokens => parts.iter().map(|part| count_tokens(part)).sum(),
        }
    }

    /// True when `bytes` of anything fit the budget whatever it counts (a token is at least a
    /// byte); false says only that counting is needed.
    pub(crate) fn fits_bytes(&self, bytes: usize) -> bool {
        bytes <= self.limit
    }

    /// True when `parts` fit the budget.
    pub(crate) fn fits(&self, parts: &[&str]) -> bool {
        self.measure(parts) <= self.limit
    }

    /// The bytes of one page: a page of them fits the budget whatever it holds, with room for
    /// the resource's own members.
    pub(crate) fn page_bytes(&self) -> usize {
        (self.limit - self.limit / 16).min(4 * 1024 * 1024)
    }

    /// The bytes of a preview: a quarter of the budget, at most 4 KiB.
    pub(crate) fn preview_bytes(&self) -> usize {
        (self.limit / 4).min(4 * 1024)
    }

    /// The budget as a person reads it.
    pub(crate) fn describe(&self) -> String {
        match self.unit {
            Unit::Bytes => format!("{} bytes", self.limit),
            #[cfg(feature = "token-count")]
            Unit::Tokens => format!("{} tokens", self.limit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_count_bytes_and_keep_room_for_a_preview() {
        let budget = ResultBudget::bytes(10_000);
        assert!(budget.fits(&["a".repeat(6_000).as_str(), "b".repeat(4_000).as_str()]));
        assert!(!budget.fits(&["a".repeat(10_001).as_str()]));
        assert_eq!(ResultBudget::bytes(10).describe(), "1024 bytes", "a budget has room for its preview");
        assert!(budget.page_bytes() < 10_000 && budget.preview_bytes() == 2_500);
        assert_eq!(budget.min(ResultBudget::bytes(5_000)), ResultBudget::bytes(5_000));
    }

    #[cfg(feature = "token-count")]
    #[test]
    fn token_budgets_count_with_the_tokenizer_only_past_the_bytes() {
        let budget = ResultBudget::tokens(2_000);
        let words = "the quick brown fox ".repeat(200);
        assert_eq!(budget.measure(&[&words]), count_tokens(&words), "4,000 bytes are counted");
        assert!(budget.measure(&[&words]) < 1_000, "about four bytes a token");
        assert!(budget.fits(&[&words]));
        assert_eq!(budget.measure(&["tiny"]), 4, "within the budget in bytes: not counted");
    }
}
