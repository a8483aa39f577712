#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    /// The SQL.
    sql: String,
}

/// Runs a query.
#[wharf::tool]
async fn query(wharf::Args(query): wharf::Args<Query>, limit: u32) -> String {
    format!("{} {limit}", query.sql)
}

fn main() {}
