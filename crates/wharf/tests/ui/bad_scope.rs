/// Reads a file.
#[wharf::tool(scopes = ["files:read", "files read"])]
async fn read_file() -> String {
    String::new()
}

/// Greets.
#[wharf::prompt(scopes = "greet")]
async fn greet() -> String {
    String::new()
}

fn main() {}
