/// Greets someone.
#[wharf::tool]
async fn greet(#[arg(minlength = 1)] name: String) -> String {
    name
}

fn main() {}
