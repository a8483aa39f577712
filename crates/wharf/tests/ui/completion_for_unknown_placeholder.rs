/// Review code.
#[wharf::prompt(complete(language = ["rust", "go"]))]
const CODE_REVIEW: &str = "Review this code:\n{code}";

fn main() {}
