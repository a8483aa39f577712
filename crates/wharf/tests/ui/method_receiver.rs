struct Calculator;

impl Calculator {
    /// Adds.
    #[wharf::tool]
    async fn add(&self, a: i64, b: i64) -> String {
        (a + b).to_string()
    }
}

fn main() {}
