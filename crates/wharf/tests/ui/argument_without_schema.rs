struct Point {
    x: i64,
}

/// Moves a point.
#[wharf::tool]
async fn shift(point: Point) -> String {
    point.x.to_string()
}

fn main() {}
