//! Run with: `cargo run -p example-analyze`. Several content blocks in one result: a text, an
//! image made from raw bytes (Wharf does the base64), and another text.

use wharf::protocol::ContentBlock;
use wharf::{Server, content, tool};

/// A 1×1 PNG, standing in for a chart.
const CHART: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49,
    0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1,
    0xd2, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Analyzes a list of numbers: a summary, a chart, and a conclusion.
#[tool(read_only)]
pub async fn analyze(#[arg(description = "The numbers", min_items = 1)] values: Vec<f64>) -> Vec<ContentBlock> {
    let sum: f64 = values.iter().sum();
    let mean = sum / values.len() as f64;
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    vec![
        content::text(format!("{} values, mean {mean:.2}, max {max}", values.len())),
        content::image(CHART, "image/png"),
        content::text(if max > mean * 2.0 { "One value stands out." } else { "The values are even." }),
    ]
}

/// The server: the `analyze` tool.
pub fn server() -> Result<Server, wharf::Error> {
    Server::builder("analyzer", "1.0.0").tool(analyze_tool()).build()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wharf::protocol::{ClientCapabilities, ContentBlock};
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn answers_text_then_an_image_then_text() {
        let client = InMemoryClient::stateless(super::server().unwrap(), ClientCapabilities::default());
        let result = client.call_tool("analyze", json!({"values": [1.0, 2.0, 9.0]})).await.unwrap();
        assert_eq!(result.content.len(), 3);
        assert!(matches!(&result.content[0], ContentBlock::Text(text) if text.text == "3 values, mean 4.00, max 9"));
        let ContentBlock::Image(image) = &result.content[1] else { panic!("{:?}", result.content[1]) };
        assert_eq!(image.mime_type, "image/png");
        assert!(image.data.starts_with("iVBORw0KGgo"), "base64 of the PNG bytes");
        assert!(matches!(&result.content[2], ContentBlock::Text(text) if text.text == "One value stands out."));
    }
}
