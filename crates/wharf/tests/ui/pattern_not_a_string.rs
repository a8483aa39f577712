/// Finds a code.
#[wharf::tool]
async fn find(#[arg(pattern = 42)] code: String) -> String {
    code
}

fn main() {}
