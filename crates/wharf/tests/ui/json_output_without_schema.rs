use wharf::Json;

#[derive(serde::Serialize)]
struct Count {
    words: u64,
}

/// Counts the words of a text.
#[wharf::tool]
async fn count_words(text: String) -> Json<Count> {
    Json(Count { words: text.split_whitespace().count() as u64 })
}

fn main() {}
