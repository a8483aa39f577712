/// Looks up the weather.
#[wharf::tool(name = "weather lookup")]
async fn weather(city: String) -> String {
    city
}

fn main() {}
