/// Moves a point.
#[wharf::tool]
async fn shift((x, y): (i64, i64)) -> String {
    format!("{x},{y}")
}

fn main() {}
