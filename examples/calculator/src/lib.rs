//! Run with: `cargo run -p example-calculator`. Arithmetic as one tool with an operation enum;
//! dividing by zero is a tool error the model can read, not a protocol error.

use wharf::{Server, tool};

/// What to compute.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// a + b
    Add,
    /// a - b
    Subtract,
    /// a × b
    Multiply,
    /// a ÷ b
    Divide,
}

/// Performs an arithmetic operation on two numbers.
#[tool(read_only, idempotent)]
pub async fn calculate(
    #[arg(description = "The operation")] operation: Operation,
    #[arg(description = "The first operand")] a: f64,
    #[arg(description = "The second operand")] b: f64,
) -> Result<String, String> {
    let value = match operation {
        Operation::Add => a + b,
        Operation::Subtract => a - b,
        Operation::Multiply => a * b,
        Operation::Divide if b == 0.0 => return Err("Cannot divide by zero".to_owned()),
        Operation::Divide => a / b,
    };
    Ok(value.to_string())
}

/// The server: the `calculate` tool.
pub fn server() -> Result<Server, wharf::Error> {
    Server::builder("calculator", "1.0.0").tool(calculate_tool()).build()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn computes_and_reports_division_by_zero_as_a_tool_error() {
        let client = InMemoryClient::latest_session(super::server().unwrap()).await;
        let product = client.call_tool("calculate", json!({"operation": "multiply", "a": 6, "b": 7})).await.unwrap();
        assert_eq!(product.first_text(), Some("42"));
        let divided = client.call_tool("calculate", json!({"operation": "divide", "a": 1, "b": 0})).await.unwrap();
        assert_eq!(divided.is_error, Some(true));
        assert_eq!(divided.first_text(), Some("Cannot divide by zero"));
        let unknown = client.call_tool("calculate", json!({"operation": "modulo", "a": 1, "b": 2})).await.unwrap();
        assert_eq!(unknown.is_error, Some(true), "not one of the operations");
    }
}
