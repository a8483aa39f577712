/// Sends an invoice.
#[wharf::tool(idempotency = "always")]
async fn send_invoice() -> String {
    String::new()
}

fn main() {}
