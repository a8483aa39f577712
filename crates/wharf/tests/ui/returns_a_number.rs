/// Counts the words of a text.
#[wharf::tool]
async fn count_words(text: String) -> u64 {
    text.split_whitespace().count() as u64
}

fn main() {}
