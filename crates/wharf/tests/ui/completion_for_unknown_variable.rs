/// A user's profile.
#[wharf::resource_template("user://{username}/profile")]
async fn profile(#[arg(complete = ["alice"])] user: String) -> String {
    user
}

fn main() {}
