struct Counter {
    count: u64,
}

#[wharf::tool]
impl Counter {
    /// Counts.
    async fn bump(&mut self) -> String {
        self.count += 1;
        self.count.to_string()
    }
}

fn main() {}
