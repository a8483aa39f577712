const VIEW: &str = wharf::include_view!("tests/views/nowhere");

fn main() {
    let _ = VIEW;
}
