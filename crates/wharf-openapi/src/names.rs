//! Tool names for operations: the `operationId`, or the method and path when there is none,
//! kept within the characters and length every client accepts, and made unique in the
//! order of their paths (sorted) and methods.

/// The longest name given: some clients refuse tool names longer than 64 characters.
pub(crate) const MAX_NAME: usize = 64;

/// The tool name of the operation `operation_id` (or `method` `path` without one): characters
/// outside `A-Z a-z 0-9 _ -` become `_`, runs of `_` one, at most [`MAX_NAME`] long.
pub(crate) fn tool_name(operation_id: Option<&str>, method: &str, path: &str) -> String {
    let source = match operation_id {
        Some(id) if !id.trim().is_empty() => id.to_owned(),
        _ => format!("{method}_{path}"),
    };
    let mut name = String::with_capacity(source.len());
    for c in source.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' };
        if !(c == '_' && (name.is_empty() || name.ends_with('_'))) {
            name.push(c);
        }
    }
    let mut name = name.trim_end_matches('_').to_owned();
    name.truncate(MAX_NAME);
    if name.is_empty() { "operation".to_owned() } else { name }
}

/// Makes `names` unique in order: a name met again gets `_2`, `_3`, ... (shortened to stay
/// within [`MAX_NAME`]). Returns each renaming, the name it had and the one it got.
pub(crate) fn make_unique(names: &mut [String]) -> Vec<(String, String)> {
    let mut taken = std::collections::HashSet::new();
    let mut renamed = Vec::new();
    for name in names.iter_mut() {
        if taken.insert(name.clone()) {
            continue;
        }
        let mut suffix = 2;
        let unique = loop {
            let ending = format!("_{suffix}");
            let mut stem = name.clone();
            stem.truncate(MAX_NAME - ending.len());
            let candidate = format!("{stem}{ending}");
            if !taken.contains(&candidate) {
                break candidate;
            }
            suffix += 1;
        };
        taken.insert(unique.clone());
        renamed.push((std::mem::replace(name, unique.clone()), unique));
    }
    renamed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_operation_id_or_the_method_and_path_within_the_rules() {
        assert_eq!(tool_name(Some("listPets"), "get", "/pets"), "listPets");
        assert_eq!(tool_name(Some("pets.list v2"), "get", "/pets"), "pets_list_v2");
        assert_eq!(tool_name(None, "get", "/users/{id}/repos"), "get_users_id_repos");
        assert_eq!(tool_name(Some("  "), "delete", "/"), "delete");
        assert_eq!(tool_name(Some("é"), "get", "/"), "operation");
        assert_eq!(tool_name(Some(&"x".repeat(100)), "get", "/").len(), MAX_NAME);
    }

    #[test]
    fn repeated_names_get_numbers_in_order_and_are_reported() {
        let mut names =
            vec!["a".to_owned(), "a".to_owned(), "a_2".to_owned(), "a".to_owned(), "x".repeat(64), "x".repeat(64)];
        let renamed = make_unique(&mut names);
        assert_eq!(&names[..4], ["a", "a_2", "a_2_2", "a_3"]);
        assert_eq!(names[5], format!("{}_2", "x".repeat(62)));
        assert_eq!(renamed.len(), 4);
        assert_eq!(renamed[0], ("a".to_owned(), "a_2".to_owned()));
    }
}
