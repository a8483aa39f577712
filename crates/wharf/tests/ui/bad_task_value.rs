/// Runs a long job.
#[wharf::tool(task = "always")]
async fn job() -> String {
    String::new()
}

fn main() {}
