/// Sets an age.
#[wharf::tool]
async fn set_age(#[arg(min_length = 0, max_length = 150)] age: u32) -> String {
    age.to_string()
}

fn main() {}
