#[wharf::tool]
async fn ping() -> String {
    "pong".to_owned()
}

fn main() {}
