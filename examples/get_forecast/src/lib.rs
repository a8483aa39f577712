//! Run with: `cargo run -p example-get-forecast`. Structured output: the tool returns an array
//! of days as `Json<T>`, which also declares its output schema.

use wharf::{Json, Server, tool};

/// One day's forecast.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Day {
    /// Days from today, starting at 1.
    pub day: u32,
    /// The high, in °C.
    pub high: i32,
    /// The low, in °C.
    pub low: i32,
    /// In words.
    pub conditions: String,
}

/// The weather forecast for a location.
#[tool(read_only)]
pub async fn get_forecast(
    #[arg(description = "City or place name", min_length = 1, max_length = 100)] location: String,
    #[arg(description = "How many days", min = 1, max = 14, default = 7u32)] days: u32,
) -> Json<Vec<Day>> {
    let seed = location.bytes().map(u32::from).sum::<u32>();
    Json(
        (1..=days)
            .map(|day| {
                let wave = ((seed + day * 7) % 11) as i32;
                Day {
                    day,
                    high: 12 + wave,
                    low: 4 + wave / 2,
                    conditions: ["sunny", "cloudy", "rain"][(wave % 3) as usize].to_owned(),
                }
            })
            .collect(),
    )
}

/// The server: the `get_forecast` tool.
pub fn server() -> Result<Server, wharf::Error> {
    Server::builder("forecast", "1.0.0").tool(get_forecast_tool()).build()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wharf::protocol::ClientCapabilities;
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn returns_an_array_of_days_seven_by_default() {
        let client = InMemoryClient::stateless(super::server().unwrap(), ClientCapabilities::default());
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools.tools[0].output_schema.as_ref().unwrap()["type"], "array");
        let week = client.call_tool("get_forecast", json!({"location": "Oslo"})).await.unwrap();
        let days = week.structured_content.unwrap();
        assert_eq!(days.as_array().unwrap().len(), 7);
        assert_eq!(days[0]["day"], 1);
        let fortnight = client.call_tool("get_forecast", json!({"location": "Oslo", "days": 15})).await.unwrap();
        assert_eq!(fortnight.is_error, Some(true), "at most 14 days");
    }
}
