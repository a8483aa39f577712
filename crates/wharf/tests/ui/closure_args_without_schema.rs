use wharf::{Args, ToolDef};

#[derive(serde::Deserialize)]
struct Shout {
    text: String,
}

fn main() {
    let _ = ToolDef::new("shout", |Args(shout): Args<Shout>| async move { shout.text.to_uppercase() });
}
