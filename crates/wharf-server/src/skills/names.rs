//! What a skill may be called and where its files may be: the Agent Skills naming rules for
//! a skill's name, and relative paths that stay inside the skill.

/// The longest skill name.
const MAX_NAME: usize = 64;

/// Checks a skill's name: 1 to 64 of `a-z`, `0-9` and `-`, neither starting nor ending with
/// a hyphen, with no two in a row.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let problem = if name.is_empty() {
        Some("is empty")
    } else if name.len() > MAX_NAME {
        Some("is longer than 64 characters")
    } else if !name.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-') {
        Some("may only contain lowercase letters a-z, digits and hyphens")
    } else if name.starts_with('-') || name.ends_with('-') {
        Some("must not start or end with a hyphen")
    } else if name.contains("--") {
        Some("must not contain two hyphens in a row")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(format!("the skill name `{name}` {problem}")),
        None => Ok(()),
    }
}

/// Checks a skill's path (`acme/billing/refunds`): segments that are URI-safe as they are,
/// the last one the skill's name.
pub(crate) fn check_skill_path(path: &str) -> Result<&str, String> {
    let segments: Vec<&str> = path.split('/').collect();
    for segment in &segments {
        check_segment(segment).map_err(|why| format!("the skill path `{path}`: {why}"))?;
    }
    let name = segments.last().copied().unwrap_or_default();
    check_name(name)?;
    Ok(name)
}

/// A file's path inside its skill (`references/GUIDE.md`) as it goes into a URI: relative,
/// no `.`, `..` or empty segment, no control character; bytes a URI cannot carry as they are
/// (a space, `#`, `?`, `%`, non-ASCII) percent-encoded.
pub fn file_path_in_uri(path: &str) -> Result<String, String> {
    if path.is_empty() {
        return Err("a file path is empty".to_owned());
    }
    let mut encoded = String::with_capacity(path.len());
    for (index, segment) in path.split('/').enumerate() {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(format!("the file path `{path}` has an empty, `.` or `..` segment"));
        }
        if segment.chars().any(char::is_control) {
            return Err(format!("the file path `{}` contains a control character", path.escape_debug()));
        }
        if index > 0 {
            encoded.push('/');
        }
        for byte in segment.bytes() {
            if is_unreserved(byte) {
                encoded.push(char::from(byte));
            } else {
                encoded.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    Ok(encoded)
}

fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'+' | b',' | b'=' | b'@')
}

/// A path segment that needs no escaping in a URI and cannot climb out of its directory.
fn check_segment(segment: &str) -> Result<(), String> {
    if segment.is_empty() {
        return Err("a segment is empty".to_owned());
    }
    if segment == "." || segment == ".." {
        return Err(format!("`{segment}` is not allowed"));
    }
    let unsafe_character = segment.chars().find(|character| !(character.is_ascii() && is_unreserved(*character as u8)));
    match unsafe_character {
        Some(character) => Err(format!("`{segment}` contains `{character}`, which a URI would have to escape")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["a", "a1", "pdf-processing", "x".repeat(64).as_str()] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "PDF", "-pdf", "pdf-", "pdf--processing", "pdf_processing", "päf", "x".repeat(65).as_str()] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths_stay_inside_and_need_no_escaping() {
        assert_eq!(check_skill_path("acme/billing/refunds"), Ok("refunds"));
        assert!(check_skill_path("acme/Refunds").is_err());
        assert!(check_skill_path("acme//refunds").is_err());
        assert_eq!(file_path_in_uri("references/GUIDE.md").as_deref(), Ok("references/GUIDE.md"));
        assert_eq!(file_path_in_uri("my notes/a#b?.md").as_deref(), Ok("my%20notes/a%23b%3F.md"));
        assert_eq!(file_path_in_uri("café.md").as_deref(), Ok("caf%C3%A9.md"));
        for bad in ["", "../secret", "a/../../b", "./a", "a//b", "/abs", "bell\u{7}.md"] {
            assert!(file_path_in_uri(bad).is_err(), "{bad}");
        }
    }
}
