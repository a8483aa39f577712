//! Opening a web page in the person's browser: `$BROWSER`, else the desktop's opener.

use std::process::Stdio;

/// Starts the browser on `url` without waiting for it; says on stderr when it cannot.
pub(crate) fn open(url: &str) {
    let browser = std::env::var("BROWSER").ok().filter(|command| !command.trim().is_empty());
    let command: Vec<String> = match browser {
        Some(command) => command.split_whitespace().map(str::to_owned).collect(),
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
