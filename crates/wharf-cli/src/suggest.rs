//! "Did you mean": the known name closest to a mistyped one (a tool, a prompt), offered only
//! when it is close enough to be a slip of the keyboard rather than another name.

/// The name in `known` that `typed` most likely meant: the nearest by edit distance (letter
/// case aside) within a third of its length (at least one edit), else the only one that starts
/// with it. `None` when no name is that close.
pub(crate) fn closest<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed = typed.to_lowercase();
    let known: Vec<&str> = known.into_iter().collect();
    let allowed = (typed.chars().count() / 3).max(1);
    let nearest = known
        .iter()
        .map(|name| (edit_distance(&typed, &name.to_lowercase()), *name))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by_key(|(distance, _)| *distance);
    if let Some((_, name)) = nearest {
        return Some(name);
    }
    // A name cut short, `calc` for `calculator`: too far by edits, but unmistakable.
    let mut extended =
        known.iter().filter(|name| typed.chars().count() >= 3 && name.to_lowercase().starts_with(&typed));
    match (extended.next(), extended.next()) {
        (Some(name), None) => Some(name),
        _ => None,
    }
}

/// `"; did you mean `NAME`?"` for the closest name, or nothing.
pub(crate) fn did_you_mean<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest(typed, known).map(|name| format!("; did you mean `{name}`?")).unwrap_or_default()
}

/// The Levenshtein distance: the fewest insertions, deletions and substitutions of characters
/// that turn `from` into `to`.
fn edit_distance(from: &str, to: &str) -> usize {
    let to: Vec<char> = to.chars().collect();
    let mut previous: Vec<usize> = (0..=to.len()).collect();
    for (row, from_char) in from.chars().enumerate() {
        let mut current = vec![row + 1; to.len() + 1];
        for (column, to_char) in to.iter().enumerate() {
            let substitution = previous[column] + usize::from(from_char != *to_char);
            current[column + 1] = substitution.min(previous[column + 1] + 1).min(current[column] + 1);
        }
        previous = current;
    }
    previous[to.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: [&str; 7] = ["calculator", "countdown", "echo", "greet_interactively", "log", "summarize", "tick"];

    #[test]
    fn a_slip_of_the_keyboard_is_matched_and_another_name_is_not() {
        assert_eq!(closest("ech", TOOLS), Some("echo"));
        assert_eq!(closest("Echo", TOOLS), Some("echo"), "letter case aside");
        assert_eq!(closest("calcualtor", TOOLS), Some("calculator"));
        assert_eq!(closest("calc", TOOLS), Some("calculator"), "a unique prefix");
        assert_eq!(closest("lg", TOOLS), Some("log"));
        assert_eq!(closest("nope", TOOLS), None);
        assert_eq!(closest("weather", TOOLS), None);
        assert_eq!(closest("c", TOOLS), None, "too short to be a prefix of one");
        assert_eq!(closest("ech", []), None);
    }

    #[test]
    fn the_suggestion_reads_as_the_end_of_a_sentence() {
        assert_eq!(did_you_mean("code_reveiw", ["code_review"]), "; did you mean `code_review`?");
        assert_eq!(did_you_mean("nope", TOOLS), "");
    }

    #[test]
    fn edits_are_counted_per_character() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("héllo", "hello"), 1);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
