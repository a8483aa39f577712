/// Rounds a number.
#[wharf::tool]
async fn round(#[arg(items(min = 0))] value: f64) -> String {
    value.round().to_string()
}

fn main() {}
