//! Run with: `cargo run -p example-sql-query`. A read-only query tool over an in-memory table,
//! with shared state (`State<T>`) and a limit of 1 to 1000 rows, 100 by default.

use wharf::{Server, State, tool};

/// One row of the `employees` table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Employee {
    /// Its id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Department.
    pub department: String,
}

/// The database: one table, read-only.
#[derive(Debug)]
pub struct Database {
    employees: Vec<Employee>,
}

impl Database {
    /// A few employees.
    pub fn sample() -> Database {
        let rows = [
            (1, "Ada", "engineering"),
            (2, "Grace", "engineering"),
            (3, "Edsger", "research"),
            (4, "Barbara", "research"),
        ];
        Database {
            employees: rows
                .iter()
                .map(|(id, name, department)| Employee {
                    id: *id,
                    name: (*name).to_owned(),
                    department: (*department).to_owned(),
                })
                .collect(),
        }
    }

    /// Runs `SELECT * FROM employees [WHERE department = '...']`; anything else is refused.
    pub fn query(&self, sql: &str, limit: usize) -> Result<Vec<Employee>, String> {
        let sql = sql.trim().trim_end_matches(';');
        let rest = sql
            .strip_prefix("SELECT * FROM employees")
            .ok_or("only `SELECT * FROM employees [WHERE department = '...']` is supported")?;
        let department = match rest.trim() {
            "" => None,
            filter => Some(
                filter
                    .strip_prefix("WHERE department = '")
                    .and_then(|value| value.strip_suffix('\''))
                    .ok_or("the only filter is `WHERE department = '...'`")?,
            ),
        };
        Ok(self
            .employees
            .iter()
            .filter(|employee| department.is_none_or(|department| employee.department == department))
            .take(limit)
            .cloned()
            .collect())
    }
}

/// Runs a read-only SQL query against the employees table and returns the rows as JSON.
#[tool(read_only)]
pub async fn sql_query(
    #[arg(description = "The SELECT statement", min_length = 1)] query: String,
    #[arg(description = "At most this many rows", min = 1, max = 1000, default = 100u32)] limit: u32,
    database: State<Database>,
) -> Result<String, String> {
    let rows = database.0.query(&query, limit as usize)?;
    serde_json::to_string(&rows).map_err(|err| err.to_string())
}

/// The server: the `sql_query` tool over the sample database.
pub fn server() -> Result<Server, wharf::Error> {
    Server::builder("sql", "1.0.0").state(Database::sample()).tool(sql_query_tool()).build()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use wharf::protocol::ClientCapabilities;
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn queries_rows_with_a_limit_and_refuses_other_statements() {
        let client = InMemoryClient::stateless(super::server().unwrap(), ClientCapabilities::default());
        let text = |result: wharf::protocol::CallToolResult| {
            serde_json::to_value(&result.content).unwrap()[0]["text"].as_str().unwrap().to_owned()
        };
        let all = client.call_tool("sql_query", json!({"query": "SELECT * FROM employees"})).await.unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text(all)).unwrap().as_array().unwrap().len(), 4);
        let research = json!({"query": "SELECT * FROM employees WHERE department = 'research'", "limit": 1});
        let rows: Value = serde_json::from_str(&text(client.call_tool("sql_query", research).await.unwrap())).unwrap();
        assert_eq!(rows, json!([{"id": 3, "name": "Edsger", "department": "research"}]));
        let dropped = client.call_tool("sql_query", json!({"query": "DROP TABLE employees"})).await.unwrap();
        assert_eq!(dropped.is_error, Some(true));
        let too_many =
            client.call_tool("sql_query", json!({"query": "SELECT * FROM employees", "limit": 5000})).await.unwrap();
        assert_eq!(too_many.is_error, Some(true));
    }
}
