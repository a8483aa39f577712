/// Refreshes the dashboard.
#[wharf::tool(ui = "ui://weather/dashboard", visibility = ["app", "agent", "app"])]
async fn refresh() -> String {
    String::new()
}

/// Nobody may call this.
#[wharf::tool(ui = "ui://weather/dashboard", visibility = [])]
async fn hidden() -> String {
    String::new()
}

fn main() {}
