/// Counts down.
#[wharf::prompt]
async fn countdown(from: u32) -> String {
    from.to_string()
}

fn main() {}
