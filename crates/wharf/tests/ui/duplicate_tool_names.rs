struct Tools;

#[wharf::tool]
impl Tools {
    /// Adds.
    async fn add(&self, a: i64, b: i64) -> String {
        (a + b).to_string()
    }

    /// Also adds.
    #[tool(name = "add")]
    async fn plus(&self, a: i64, b: i64) -> String {
        (a + b).to_string()
    }
}

fn main() {}
