use wharf::{Args, ToolDef};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

fn main() {
    let _ = ToolDef::new("count", |Args(text): Args<Text>| async move { text.text.len() as u64 });
}
