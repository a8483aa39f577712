//! Opening a web page in the person's browser: `$BROWSER`, else the desktop's opener.

use std::process::Stdio;

/// Starts the browser on `url` without waiting for it; says on stderr when it cannot.
pub(crate) fn open(url: &str) {
    let browser = std::env::var("BROWSER").ok().filter(|command| !command.trim().is_empty());
    let command: Vec<String> = match browser {
        Some(command) => command_words(&command),
        None if cfg!(target_os = "macos") => vec!["open".to_owned()],
        None => vec!["xdg-open".to_owned()],
    };
    let Some((program, args)) = command.split_first() else { return };
    let spawned = std::process::Command::new(program)
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Err(err) = spawned {
        eprintln!("wharf: could not start `{program}` ({err}); open the address yourself");
    }
}

/// `$BROWSER` split into words as a shell splits a simple command: blanks separate words,
/// except inside single quotes (taken as they are) or double quotes (where `\` escapes `"`
/// and `\`), and a `\` outside quotes escapes the next character. So a program or an
/// argument whose path holds spaces can be named, quoted.
fn command_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut characters = command.chars();
    while let Some(character) = characters.next() {
        match character {
            blank if blank.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let quoted = word.get_or_insert_with(String::new);
                quoted.extend(characters.by_ref().take_while(|&next| next != '\''));
            }
            '"' => {
                let quoted = word.get_or_insert_with(String::new);
                while let Some(next) = characters.next() {
                    match next {
                        '"' => break,
                        '\\' => match characters.next() {
                            Some(escaped @ ('"' | '\\')) => quoted.push(escaped),
                            Some(other) => quoted.extend(['\\', other]),
                            None => quoted.push('\\'),
                        },
                        other => quoted.push(other),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(characters.next()),
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    words.extend(word);
    words
}

#[cfg(test)]
mod tests {
    use super::command_words;

    #[test]
    fn the_browser_command_is_split_as_a_shell_splits_it() {
        assert_eq!(command_words("firefox --new-tab"), ["firefox", "--new-tab"]);
        assert_eq!(
            command_words("python3 '/home/ann/my projects/browser.py'"),
            ["python3", "/home/ann/my projects/browser.py"]
        );
        assert_eq!(command_words(r#"run "a \"b\" c" d\ e ''"#), ["run", r#"a "b" c"#, "d e", ""]);
        assert_eq!(command_words("  "), Vec::<String>::new());
    }
}
