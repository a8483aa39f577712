/// Shows the weather.
#[wharf::tool(ui = "https://example.com/weather.html")]
async fn weather() -> String {
    String::new()
}

fn main() {}
