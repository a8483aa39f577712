/// The configuration.
#[wharf::resource(mime_type = "application/json")]
async fn config() -> String {
    String::new()
}

fn main() {}
