/// Calls someone.
#[wharf::tool]
async fn call(#[arg(format = "phone")] number: String) -> String {
    number
}

fn main() {}
