/// Picks a day count.
#[wharf::tool]
async fn forecast(#[arg(min = 14, max = 1)] days: u32) -> String {
    days.to_string()
}

fn main() {}
