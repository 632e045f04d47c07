//! Reading bash as bash does: the layer under both engines.
//!
//! Owns what happens to the text before any engine tokenizes it (`source`: line
//! continuations spliced exactly where bash splices them), and the form command
//! subjects take (`join_collapsed`). The engines lower what they
//! read into the same plan of simple commands; what commands do is `programs`' and the
//! analysis' concern, not this module's.

pub(crate) mod arith;
pub mod braces;
pub mod eval;
pub(crate) mod ir;
pub mod lexer;
pub mod source;

/// `collapse_whitespace(&words.join(" "))` in one allocation: the form command subjects
/// take (seed §4.1).
pub fn join_collapsed(words: &[String]) -> String {
    let mut out = String::with_capacity(words.iter().map(|w| w.len() + 1).sum());
    for piece in words
        .iter()
        .flat_map(|w| w.split(crate::model::vocab::is_bash_blank))
        .filter(|p| !p.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(piece);
    }
    out
}

/// The endpoint a path names when bash opens it as a socket itself: `/dev/tcp/HOST/PORT`
/// and `/dev/udp/HOST/PORT` are not files, bash connects to `HOST:PORT` (its
/// `redir_special_open`), whichever command or `exec` the redirect belongs to. `None` for
/// any other path. A malformed one (`/dev/tcp/h`) is still a connection attempt: its
/// endpoint is what follows the device.
pub fn network_endpoint(path: &str) -> Option<String> {
    let rest = path
        .strip_prefix("/dev/tcp/")
        .or_else(|| path.strip_prefix("/dev/udp/"))?;
    Some(match rest.split_once('/') {
        Some((host, port)) if !host.is_empty() && !port.is_empty() => format!("{host}:{port}"),
        _ => rest.to_string(),
    })
}

/// Words to one command (`check -- …`, Codex's argv): a single word is the command
/// text itself; several are quoted where the shell would need it, so
/// `check -- git commit -m "a b"` keeps `a b` one argument.
pub fn join_command(words: &[String]) -> String {
    match words {
        [one] => one.clone(),
        _ => words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

fn shell_quote(w: &str) -> String {
    let safe = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    if safe {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::vocab::collapse_whitespace;

    #[test]
    fn bash_network_devices_name_their_endpoint() {
        assert_eq!(
            network_endpoint("/dev/tcp/example.com/80").as_deref(),
            Some("example.com:80")
        );
        assert_eq!(
            network_endpoint("/dev/udp/8.8.8.8/53").as_deref(),
            Some("8.8.8.8:53")
        );
        assert_eq!(network_endpoint("/dev/tcp/h").as_deref(), Some("h"));
        assert_eq!(network_endpoint("/dev/tty"), None);
        assert_eq!(network_endpoint("/tmp/dev/tcp/h/1"), None);
    }

    #[test]
    fn several_words_are_requoted() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(join_command(&w(&["git status && ls"])), "git status && ls");
        assert_eq!(
            join_command(&w(&["git", "commit", "-m", "a b"])),
            "git commit -m 'a b'"
        );
        assert_eq!(join_command(&w(&["echo", "it's"])), "echo 'it'\\''s'");
        assert_eq!(join_command(&w(&["ls", "|", "cat"])), "ls '|' cat");
    }

    proptest::proptest! {
        #[test]
        fn join_collapsed_is_collapse_of_join(words in proptest::collection::vec("[ a\t\n\r\u{c}\u{a0}b]{0,4}", 0..6)) {
            proptest::prop_assert_eq!(join_collapsed(&words), collapse_whitespace(&words.join(" ")));
        }
    }
}
