//! The files a shell (or direnv) runs when it starts: `~/.bashrc`, `~/.zshrc`,
//! `~/.profile` and their kin, fish's `config.fish`, a project's `.envrc`. People keep
//! keys in them (`export OPENAI_API_KEY=sk-…`), so a reader of one may print a
//! credential: such a file is judged as a secret while its text assigns a variable
//! named like a credential a written-out value. A value fetched when the shell starts
//! (`$(pass show openai)`, `` `op read …` ``, `$OTHER`) is not in the text.

use std::path::Path;

/// Names of startup files, wherever they are (a copy in the project reads the same).
pub const NAMES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".envrc",
];

/// Whether `path` is a startup file (by name; `config.fish` under a `fish` directory)
/// whose text assigns a credential (`text_holds`: one that cannot be read whole is
/// taken to hold one).
pub fn assigns_credential(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let fish = name == "config.fish"
        && path
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|d| d == "fish");
    (NAMES.contains(&name) || fish) && super::text_holds(path, text_assigns_credential)
}

/// Whether a startup file's text assigns a credential-named variable a written-out
/// value: `NAME=v`, `export A=1 NAME=v` (any word of the line), `declare -x NAME=v`,
/// csh's `setenv NAME v`, fish's `set -gx NAME v`.
fn text_assigns_credential(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("setenv ") {
            return written_out(split_blank(rest));
        }
        if let Some(rest) = line.strip_prefix("set ") {
            // fish: `set [-gxU…] NAME VALUE…`
            let rest = rest.trim_start();
            let rest = rest
                .split_once(' ')
                .filter(|(flags, _)| flags.starts_with('-'))
                .map_or(rest, |(_, r)| r);
            return written_out(split_blank(rest));
        }
        line.split_whitespace()
            .take_while(|w| !w.starts_with('#'))
            .filter_map(|w| w.split_once('='))
            .any(written_out)
    })
}

/// A credential-named variable given a written-out value (not `$X`, `$(…)`, `` `…` ``).
fn written_out((name, value): (&str, &str)) -> bool {
    let literal = value.trim().trim_matches(|c| c == '"' || c == '\'');
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && super::environment::credential_variable(name)
        && !literal.is_empty()
        && !literal.starts_with('$')
        && !literal.starts_with('`')
}

fn split_blank(s: &str) -> (&str, &str) {
    s.trim_start()
        .split_once(char::is_whitespace)
        .unwrap_or((s.trim(), ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A startup file that is a pipe or a device is never read to its end (it would
    /// stall the decision, or never end): it is taken to hold a key.
    #[test]
    fn a_file_that_cannot_be_read_whole_holds_one() {
        let tmp = tempfile::tempdir().unwrap();
        let zero = tmp.path().join(".envrc");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(assigns_credential(&zero));
        let big = tmp.path().join(".bashrc");
        std::fs::write(
            &big,
            "x".repeat(super::super::MAX_CHECKED_TEXT as usize + 1),
        )
        .unwrap();
        assert!(assigns_credential(&big));
        let plain = tmp.path().join(".zshrc");
        std::fs::write(&plain, "export EDITOR=vim\n").unwrap();
        assert!(!assigns_credential(&plain));
        assert!(
            !assigns_credential(&tmp.path().join(".profile")),
            "nothing there"
        );
    }

    #[test]
    fn assignments_of_keys_written_out() {
        for held in [
            "export OPENAI_API_KEY=sk-abc123\n",
            "export GITHUB_TOKEN=\"ghp_abc\"\n",
            "  AWS_SECRET_ACCESS_KEY='x/y'\n",
            "declare -x ANTHROPIC_API_KEY=sk-ant-1\n",
            "setenv DB_PASSWORD hunter2\n",
            "set -gx HF_TOKEN hf_abc\n",
            "export EDITOR=vim GITHUB_TOKEN=ghp_abc\n",
        ] {
            assert!(text_assigns_credential(held), "{held:?}");
        }
        for none in [
            "export PATH=$HOME/bin:$PATH\n",
            "export OPENAI_API_KEY=$(pass show openai)\n",
            "export GITHUB_TOKEN=`gh auth token`\n",
            "export GITHUB_TOKEN=\"$GH_TOKEN\"\n",
            "export EDITOR=vim\n# export OPENAI_API_KEY is set elsewhere\n",
            "alias k=kubectl\n",
            "export TOKEN_FILE_DIR=\n",
        ] {
            assert!(!text_assigns_credential(none), "{none:?}");
        }
    }
}
