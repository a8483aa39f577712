/// Deletes a file.
#[wharf::tool(readonly)]
async fn delete(path: String) -> String {
    path
}

fn main() {}
