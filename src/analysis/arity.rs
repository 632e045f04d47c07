//! "Always allow" suggestions for one simple command (seed §3.3): the arity dictionary
//! and the refusals that keep a suggestion from ever being broader than what was read.
//!
//! Owns the ARITY table and the generation rule (first `arity` words, ` *` when
//! arguments were elided); which programs run others comes from `crate::programs`. A
//! literal `*` in a word never reaches a pattern: the rule syntax has no escape for it,
//! so such a command is offered nothing rather than a wildcard. It must not decide classes: callers
//! pass only the words of a fully read simple command and apply the compound/obfuscated refusal themselves. It
//! knows nothing of rules; a pattern it returns always matches the command it came from.

use std::path::Path;

use crate::model::paths;
use crate::model::vocab::AnalysisContext;
use crate::programs;

/// How many leading words form a meaningful prefix for a command.
#[derive(Debug, Clone, Copy)]
enum Arity {
    Fixed(usize),
    /// A default, and overrides keyed by the word after the command (its subcommand).
    BySub(usize, &'static [(&'static str, usize)]),
}

/// The seed's ARITY table (§3.3), entry for entry, followed by additions of ours.
const ARITY: &[(&str, Arity)] = &[
    (
        "git",
        Arity::BySub(
            2,
            &[("config", 3), ("remote", 3), ("stash", 3), ("submodule", 3)],
        ),
    ),
    ("npm", Arity::BySub(2, &[("run", 3), ("exec", 3)])),
    ("pnpm", Arity::BySub(2, &[("run", 3)])),
    ("yarn", Arity::BySub(2, &[("run", 3)])),
    ("npx", Arity::Fixed(2)),
    ("node", Arity::Fixed(2)),
    ("python", Arity::Fixed(2)),
    ("python3", Arity::Fixed(2)),
    ("pip", Arity::Fixed(2)),
    ("pip3", Arity::Fixed(2)),
    ("cargo", Arity::Fixed(2)),
    ("go", Arity::Fixed(2)),
    ("make", Arity::Fixed(2)),
    ("docker", Arity::BySub(2, &[("compose", 3)])),
    ("kubectl", Arity::Fixed(2)),
    ("gh", Arity::Fixed(3)),
    ("brew", Arity::Fixed(2)),
    ("ls", Arity::Fixed(1)),
    ("cat", Arity::Fixed(1)),
    ("mkdir", Arity::Fixed(1)),
    ("touch", Arity::Fixed(1)),
    // Ours: common project tools, keyed like their seed siblings (a subcommand whose
    // next word names a script or task gets one more word, as `npm run`).
    ("pytest", Arity::Fixed(1)),
    (
        "uv",
        Arity::BySub(2, &[("run", 3), ("pip", 3), ("tool", 3)]),
    ),
    ("poetry", Arity::BySub(2, &[("run", 3)])),
    ("bun", Arity::BySub(2, &[("run", 3), ("x", 3)])),
    ("deno", Arity::BySub(2, &[("run", 3), ("task", 3)])),
    ("rustup", Arity::Fixed(2)),
    ("terraform", Arity::Fixed(2)),
    ("helm", Arity::Fixed(2)),
];

/// Interpreters: a flag before the script (`-c`, `-e`, `-m`, `-u`) puts code or a module
/// where the table expects a script, so only the exact command is offered.
const INTERPRETERS: &[&str] = &[
    "python", "python2", "python3", "node", "perl", "ruby", "php", "deno", "bun",
];

/// Flags that pass inline code to an interpreter.
const INLINE_CODE_FLAGS: &[&str] = &["-c", "-e", "-E", "-r", "-p", "--eval", "--print"];

/// Programs whose first operand is a program of their own.
const PROGRAM_TAKERS: &[&str] = &["awk", "gawk", "mawk", "nawk", "sed", "gsed"];

/// Suggests "always allow" patterns for one simple command's words (seed §3.3): one
/// pattern, or the exact command only, or nothing when no pattern can be justified.
pub fn suggest(words: &[String], cwd: Option<&Path>, ctx: &AnalysisContext) -> Vec<String> {
    let Some(first) = words.first() else {
        return Vec::new();
    };
    let name = programs::basename(first);
    let all: Vec<&str> = words.iter().map(String::as_str).collect();
    // Wrappers, shells and code runners, as the program table knows them (`chroot`,
    // `flock`, `strace` … included): what they run is another command.
    let refused = programs::runs_other_programs(&all)
        // Any `=` in the command word: an assignment (`X+=1`, `a[0]=1`) or a name
        // too odd to generalize.
        || first.contains('=')
        || first.contains(['$', '`', '*', '?', '[', ']', '{', '}'])
        // A word with no text would vanish from the collapsed subject: the pattern
        // would then describe a different command.
        || words.iter().any(|w| w.trim().is_empty());
    // A container that gets the host is never generalized, nor repeated.
    if refused || crate::analysis::containers::gets_the_host(words, cwd, ctx) {
        return Vec::new();
    }
    if runs_inline_code(name, words) {
        return exact(words);
    }
    let arity = match ARITY.iter().find(|(cmd, _)| *cmd == first.as_str()) {
        Some((_, Arity::Fixed(n))) => *n,
        Some((_, Arity::BySub(default, subs))) => {
            let sub = words.get(1).map(String::as_str);
            subs.iter()
                .find(|(s, _)| Some(*s) == sub)
                .map_or(*default, |(_, n)| *n)
        }
        None if is_project_path(first, cwd, ctx) => 1,
        None => return exact(words),
    };
    if words.len() <= arity {
        return exact(words);
    }
    let prefix = words.get(..arity).unwrap_or_default();
    // A flag in the prefix (`npx -y *`, `kubectl -n prod *`, `cargo +nightly *`) would
    // stand for whatever follows it.
    let flag = prefix.iter().skip(1).any(|w| {
        w.starts_with('-')
            || w.starts_with('+')
            || w.contains('*')
            || w.contains(char::is_whitespace)
    });
    // The last prefix word names what runs: a wrapper, shell or interpreter there
    // (`npx node *`, `uv run python *`, `docker exec *`) would run anything.
    let runner = arity > 1
        && prefix.last().is_some_and(|w| {
            programs::is_runner_name(w) || INTERPRETERS.contains(&programs::basename(w))
        });
    if flag || runner || first.contains(char::is_whitespace) {
        return exact(words);
    }
    vec![format!("{} *", prefix.join(" "))]
}

/// The exact command as its only pattern; nothing when the text holds a `*` (it would
/// be read as a wildcard and allow more than this command), nor when a word holds a
/// blank: words are joined by spaces, so `rm 'a b'` would offer `rm a b`, which once
/// granted covers removing `a` and `b` (and `l \<TAB>s` would offer `l s`; the oracle
/// found it).
pub fn exact(words: &[String]) -> Vec<String> {
    if words.iter().any(|w| w.contains(char::is_whitespace)) {
        return Vec::new();
    }
    let text = crate::shell::join_collapsed(words);
    if text.is_empty() || text.contains('*') {
        Vec::new()
    } else {
        vec![text]
    }
}

/// Whether `pattern`, offered for the command `words`, holds no `*` that comes from a
/// word: the rule syntax has no escape, so a `*` a word holds (quoted, escaped, or an
/// unquoted glob kept verbatim) would be a wildcard once granted (`bash '*'` must not
/// earn `bash *`). The one `*` a pattern may hold is the one standing for elided
/// arguments: a final ` *` after a prefix of the words, none of which holds a `*`. A
/// pattern that is the whole command is taken as the whole command, even where it could
/// also be read as a prefix and an elision (`ls '*'` is offered nothing).
pub fn no_literal_star(pattern: &str, words: &[String]) -> bool {
    if !pattern.contains('*') {
        return true;
    }
    let star = |ws: &[String]| ws.iter().any(|w| w.contains('*'));
    if pattern == crate::shell::join_collapsed(words) {
        return !star(words);
    }
    let Some(prefix) = pattern.strip_suffix(" *") else {
        return false;
    };
    (1..words.len()).any(|k| {
        let kept = words.get(..k).unwrap_or_default();
        crate::shell::join_collapsed(kept) == prefix && !star(kept)
    })
}

/// Inline code or a program text: `python -c`, `node -e`, `deno eval`, `awk '{…}'`,
/// `find … -exec`, or an interpreter reading its script from stdin.
fn runs_inline_code(name: &str, words: &[String]) -> bool {
    let args = words.get(1..).unwrap_or_default();
    if INTERPRETERS.contains(&name) {
        let script = args.iter().find(|a| !a.starts_with('-'));
        return args.iter().any(|a| INLINE_CODE_FLAGS.contains(&a.as_str()))
            || args.first().is_some_and(|a| a == "eval" || a == "-")
            || script.is_none();
    }
    if PROGRAM_TAKERS.contains(&name) {
        return true;
    }
    name == "find"
        && args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete"
            )
        })
}

/// An unknown command word earns `word *` only when it is a path (it holds a `/`) that
/// resolves inside the project: a project script, not whatever `PATH` finds.
fn is_project_path(word: &str, cwd: Option<&Path>, ctx: &AnalysisContext) -> bool {
    word.contains('/')
        && paths::resolve_word(word, cwd, ctx.home())
            .is_some_and(|p| paths::is_inside(&p, ctx.root()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn seed_examples() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = AnalysisContext::new(dir.path(), None, Path::new("/home/tester")).unwrap();
        let cwd = Some(ctx.cwd());
        assert_eq!(
            suggest(&w("git push origin main"), cwd, &ctx),
            vec!["git push *"]
        );
        assert_eq!(suggest(&w("npm run dev"), cwd, &ctx), vec!["npm run dev"]);
        assert_eq!(
            suggest(&w("./scripts/build.sh --prod"), cwd, &ctx),
            vec!["./scripts/build.sh *"]
        );
        assert_eq!(
            suggest(&w("/usr/local/bin/tool --prod"), cwd, &ctx),
            vec!["/usr/local/bin/tool --prod"]
        );
        assert!(suggest(&w("sudo ls"), cwd, &ctx).is_empty());
        assert!(suggest(&w("rm *.o"), cwd, &ctx).is_empty());
    }

    #[test]
    fn a_literal_star_never_becomes_a_wildcard() {
        // The words as the analysis has them: quotes gone.
        assert!(!no_literal_star("bash *", &w("bash *")));
        assert!(!no_literal_star("ls *", &w("ls *")));
        assert!(!no_literal_star("echo a*b", &w("echo a*b")));
        assert!(!no_literal_star("git commit *", &w("git c*mmit -m x")));
        assert!(no_literal_star("git commit *", &w("git commit -m *")));
        assert!(no_literal_star("bash x.sh", &w("bash x.sh")));
        assert!(no_literal_star("git push *", &w("git push origin main")));
    }
}
