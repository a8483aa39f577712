//! Names matched by the patterns configuration files write: `*` for any run of characters, `?`
//! for one (a gateway's mount filters, an OpenAPI document's path filters).

/// True when `name` matches `pattern`, where `*` stands for any characters (none included) and
/// `?` for one.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let (pattern, name): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic two-pointer walk: back up to the last `*` on a mismatch.
    let (mut at_pattern, mut at_name) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while at_name < name.len() {
        match pattern.get(at_pattern) {
            Some('*') => {
                star = Some((at_pattern, at_name));
                at_pattern += 1;
            }
            Some(&expected) if expected == '?' || expected == name[at_name] => {
                at_pattern += 1;
                at_name += 1;
            }
            _ => match star {
                Some((star_at, matched)) => {
                    at_pattern = star_at + 1;
                    at_name = matched + 1;
                    star = Some((star_at, matched + 1));
                }
                None => return false,
            },
        }
    }
    pattern[at_pattern..].iter().all(|&rest| rest == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_any_run_with_star_and_one_character_with_question_mark() {
        for (pattern, name) in [
            ("*", ""),
            ("search*", "search"),
            ("search*", "search_all"),
            ("*_all", "search_all"),
            ("s?arch", "search"),
            ("*e*e*", "deleted"),
            ("get", "get"),
        ] {
            assert!(glob_matches(pattern, name), "{pattern} matches {name}");
        }
        for (pattern, name) in
            [("search*", "research"), ("s?arch", "sarch"), ("get", "gets"), ("*_all", "all"), ("a*b", "ac")]
        {
            assert!(!glob_matches(pattern, name), "{pattern} does not match {name}");
        }
    }
}
