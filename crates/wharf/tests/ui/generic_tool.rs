/// Echoes anything.
#[wharf::tool]
async fn echo<T: ToString>(value: String) -> String {
    value
}

fn main() {}
