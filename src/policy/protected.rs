//! Never-quiet writes: the one table of paths whose writes always ask and
//! never get an "always" pattern, each with the reason, plus KHAELOR's own config files
//! and trust store.
//!
//! Owns the table, matching a resolved path against it, and the dynamic entries (the
//! config files a policy read, the trust store). It does not decide: `decide` raises a
//! matching write to at least ask and drops its always patterns; `rules` prints the
//! table. Matching is by path component and ignores ASCII case everywhere, because
//! case-insensitive file systems exist (git itself refuses `.GIT` for the same reason).

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

/// One row of the table, as `rules` and `/v1/rules` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProtectedEntry {
    /// The path shape, in any directory (`.git/hooks/` covers everything below it).
    pub path: String,
    /// Why a write there is never quiet.
    pub reason: String,
}

/// How a row matches a path's components.
enum Shape {
    /// These consecutive components, anywhere in the path, and everything below them
    /// (`*` matches any one component).
    Under(&'static [&'static str]),
    /// The last component.
    Named(&'static str),
}

/// The table, most specific first so a hit names the most precise reason.
const TABLE: &[(Shape, &str, &str)] = &[
    (
        Shape::Under(&[".git", "config"]),
        ".git/config",
        "sets core.hooksPath, core.fsmonitor, filters and aliases: git runs the programs it names",
    ),
    (
        Shape::Under(&[".git", "hooks"]),
        ".git/hooks/",
        "hooks run on commit, checkout, merge and push",
    ),
    (
        Shape::Under(&[".git", "info"]),
        ".git/info/",
        "info/attributes can name filter drivers that run on checkout; info/exclude hides files",
    ),
    (
        Shape::Under(&[".git", "commondir"]),
        ".git/commondir",
        "points git at another repository directory, whose config (core.fsmonitor) then runs on `git status`",
    ),
    (
        Shape::Under(&[".git", "objects", "info", "alternates"]),
        ".git/objects/info/alternates",
        "makes git read objects from another directory",
    ),
    (
        Shape::Under(&[".git", "refs"]),
        ".git/refs/",
        "moves branches and tags: changes what the next commit, checkout or push means",
    ),
    (
        Shape::Under(&[".git", "HEAD"]),
        ".git/HEAD",
        "changes the checked-out branch",
    ),
    (
        Shape::Under(&[".git", "packed-refs"]),
        ".git/packed-refs",
        "moves branches and tags: changes what the next commit, checkout or push means",
    ),
    (
        Shape::Under(&[".git", "modules", "*", "config"]),
        ".git/modules/*/config",
        "a submodule's config runs programs just as the repository's does",
    ),
    (
        Shape::Under(&[".git"]),
        ".git",
        "git's own state; a `.git` file (a gitfile) sends git to a directory elsewhere",
    ),
    (
        Shape::Named(".gitattributes"),
        ".gitattributes",
        "names filter and diff drivers that git runs on checkout, add and diff",
    ),
    (
        Shape::Named(".gitmodules"),
        ".gitmodules",
        "submodule URLs and update commands that git fetches and runs",
    ),
    (
        Shape::Under(&[".husky"]),
        ".husky/",
        "hook manager: its scripts run on commit and push",
    ),
    (
        Shape::Under(&[".githooks"]),
        ".githooks/",
        "hook directory: its scripts run on commit and push once configured",
    ),
    (
        Shape::Named("lefthook.yml"),
        "lefthook.yml",
        "hook manager: the commands it lists run on commit and push",
    ),
    (
        Shape::Named("lefthook.yaml"),
        "lefthook.yaml",
        "hook manager: the commands it lists run on commit and push",
    ),
    (
        Shape::Named(".lefthook.yml"),
        ".lefthook.yml",
        "hook manager: the commands it lists run on commit and push",
    ),
    (
        Shape::Named(".pre-commit-config.yaml"),
        ".pre-commit-config.yaml",
        "hook manager: the repositories and commands it lists run on commit",
    ),
    (
        Shape::Under(&[".github", "workflows"]),
        ".github/workflows/",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Under(&[".github", "actions"]),
        ".github/actions/",
        "CI configuration: actions the workflows run with the repository's secrets",
    ),
    (
        Shape::Under(&[".gitea", "workflows"]),
        ".gitea/workflows/",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Under(&[".forgejo", "workflows"]),
        ".forgejo/workflows/",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Named(".gitlab-ci.yml"),
        ".gitlab-ci.yml",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Under(&[".gitlab"]),
        ".gitlab/",
        "CI configuration: `.gitlab-ci.yml` includes the job files kept here",
    ),
    (
        Shape::Under(&[".circleci"]),
        ".circleci/",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Named(".travis.yml"),
        ".travis.yml",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Named("azure-pipelines.yml"),
        "azure-pipelines.yml",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Named("Jenkinsfile"),
        "Jenkinsfile",
        "CI configuration: the pipeline it defines runs with the CI server's credentials",
    ),
    (
        Shape::Named(".drone.yml"),
        ".drone.yml",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Named(".woodpecker.yml"),
        ".woodpecker.yml",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Under(&[".woodpecker"]),
        ".woodpecker/",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Named("bitbucket-pipelines.yml"),
        "bitbucket-pipelines.yml",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Under(&[".buildkite"]),
        ".buildkite/",
        "CI configuration: the pipeline it defines runs with the agents' credentials",
    ),
    (
        Shape::Named("appveyor.yml"),
        "appveyor.yml",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Named(".appveyor.yml"),
        ".appveyor.yml",
        "CI configuration: the jobs it defines run with the repository's secrets and deploy rights",
    ),
    (
        Shape::Named(".envrc"),
        ".envrc",
        "direnv runs it on entering the directory",
    ),
    (
        Shape::Under(&[".khaelor"]),
        ".khaelor/",
        "KHAELOR's own permission configuration: an agent must not grant itself permissions",
    ),
    (
        Shape::Under(&[".claude"]),
        ".claude/",
        "Claude Code's settings: its permission rules count as policy here, and its hooks run commands",
    ),
    (
        Shape::Under(&[".gemini"]),
        ".gemini/",
        "Gemini CLI's settings and policies: its rules count as policy here, and its hooks run commands",
    ),
    (
        Shape::Under(&[".codex"]),
        ".codex/",
        "Codex CLI's configuration and rules: its rules count as policy here, and its hooks run commands",
    ),
    (
        Shape::Under(&[".qwen"]),
        ".qwen/",
        "Qwen Code's settings: its hooks run commands, and a change there can turn khaelor-perm's hook off",
    ),
    (
        Shape::Under(&[".factory"]),
        ".factory/",
        "Factory Droid's settings: the hooks they name run commands, a project's with no trust prompt",
    ),
    (
        Shape::Under(&[".copilot"]),
        ".copilot/",
        "GitHub Copilot CLI's settings and user hooks: its hooks run commands on every tool call",
    ),
    (
        Shape::Under(&[".cline"]),
        ".cline/",
        "Cline CLI's settings, plugins and hooks: it loads the plugins and runs the hooks there on every tool call, a project's with no trust prompt",
    ),
    (
        Shape::Under(&[".clinerules", "hooks"]),
        ".clinerules/hooks/",
        "Cline CLI's project hooks: it runs them on every tool call with no trust prompt",
    ),
    (
        Shape::Under(&["Documents", "Cline", "Hooks"]),
        "Documents/Cline/Hooks/",
        "Cline CLI's user hooks: it runs them on every tool call",
    ),
    (
        Shape::Under(&["Documents", "Cline", "Plugins"]),
        "Documents/Cline/Plugins/",
        "Cline CLI's user plugins: it loads them into every session",
    ),
    (
        Shape::Under(&[".opencode"]),
        ".opencode/",
        "OpenCode's project config and plugins: it loads every plugin there as code, and a change there can turn khaelor-perm's plugin off",
    ),
    (
        Shape::Named("opencode.json"),
        "opencode.json",
        "OpenCode's configuration: the plugins and MCP servers it names run as code, and its permission settings count as policy there",
    ),
    (
        Shape::Named("opencode.jsonc"),
        "opencode.jsonc",
        "OpenCode's configuration: the plugins and MCP servers it names run as code, and its permission settings count as policy there",
    ),
    (
        Shape::Under(&[".github", "hooks"]),
        ".github/hooks/",
        "GitHub Copilot CLI's repository hooks: in a trusted folder it runs the commands they name on every tool call",
    ),
];

/// The reason shown for KHAELOR's own files outside the table (the managed config, a
/// config reached through a link, the trust store).
pub const OWN_CONFIG_REASON: &str =
    "KHAELOR's own permission configuration: an agent must not grant itself permissions";

/// The row for a directory shaped like a git directory, which is found on the file
/// system rather than by name (see `git_shaped_write`).
const GIT_SHAPED: (&str, &str) = (
    "<dir with HEAD, objects/, refs/>/",
    "git takes any directory with HEAD, objects/ and refs/ for a repository and runs the drivers its config and info/attributes name",
);

/// The table as data, for `rules` and `/v1/rules`.
pub fn table() -> Vec<ProtectedEntry> {
    TABLE
        .iter()
        .map(|(_, path, reason)| (*path, *reason))
        .chain(std::iter::once(GIT_SHAPED))
        .map(|(path, reason)| ProtectedEntry {
            path: path.to_string(),
            reason: reason.to_string(),
        })
        .collect()
}

/// A protected write: the rule pattern that names it and the entry's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub pattern: String,
    pub reason: String,
    /// The hit is KHAELOR's own configuration (the self-protection note applies).
    pub own_config: bool,
}

/// Whether a write to `path` (absolute, resolved) is protected: by the table, or by
/// lying in or at one of `extra` (config files, the trust store).
pub fn protected_write(path: &Path, extra: &[PathBuf]) -> Option<Hit> {
    let comps: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    for (shape, shown, reason) in TABLE {
        let hit = match shape {
            Shape::Under(seq) => contains_run(&comps, seq),
            Shape::Named(name) => comps.last().is_some_and(|c| c.eq_ignore_ascii_case(name)),
        };
        if hit {
            let pattern = match shape {
                Shape::Under(_) => format!("*/{}*", shown.trim_end_matches('/')),
                Shape::Named(_) => format!("*/{shown}"),
            };
            return Some(Hit {
                pattern,
                reason: (*reason).to_string(),
                own_config: *shown == ".khaelor/",
            });
        }
    }
    if let Some(hit) = git_shaped_write(path) {
        return Some(hit);
    }
    extra
        .iter()
        .find(|d| crate::model::paths::is_inside(path, d))
        .map(|d| Hit {
            pattern: if path == d.as_path() {
                d.display().to_string()
            } else {
                format!("{}/*", d.display())
            },
            reason: OWN_CONFIG_REASON.to_string(),
            own_config: true,
        })
}

/// Whether `path` is a row of the table (no file system access): the sandbox binds
/// each such path it finds read-only (`crate::contain`).
pub fn in_table(path: &Path) -> bool {
    let comps: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    TABLE.iter().any(|(shape, _, _)| match shape {
        Shape::Under(seq) => contains_run(&comps, seq),
        Shape::Named(name) => comps.last().is_some_and(|c| c.eq_ignore_ascii_case(name)),
    })
}

/// Whether the directory `dir` has the shape of a git directory now (see
/// `git_shaped_write`): the sandbox binds it read-only like `.git/`.
pub fn is_git_shaped(dir: &Path) -> bool {
    crate::programs::git_discovery::git_shaped_after(dir, Path::new(""))
}

/// A write into a directory that has, or with this write gets, the shape of a git
/// directory (`HEAD`, `objects/`, `refs/`, or `HEAD` and `commondir`): git run there,
/// or below it, takes it for a repository, reads its `config`, `info/attributes` and
/// `objects/info/alternates` — none of them under `.git/` — and runs the textconv and
/// diff drivers they name on `git show` and `git log -p`. Such a directory is as
/// protected as `.git/` itself, and so is the write that completes its shape. Looks
/// at the file system: the ancestors of `path` as they are now.
fn git_shaped_write(path: &Path) -> Option<Hit> {
    path.ancestors()
        .skip(1)
        .find(|d| crate::programs::git_discovery::git_shaped_after(d, path))
        .map(|d| Hit {
            pattern: format!("{}/*", d.display()),
            reason: GIT_SHAPED.1.to_string(),
            own_config: false,
        })
}

/// Whether `seq` occurs as consecutive components of `comps` (ASCII case ignored, `*`
/// matches one component).
fn contains_run(comps: &[String], seq: &[&str]) -> bool {
    if seq.is_empty() || comps.len() < seq.len() {
        return false;
    }
    comps.windows(seq.len()).any(|w| {
        w.iter()
            .zip(seq)
            .all(|(c, s)| *s == "*" || c.eq_ignore_ascii_case(s))
    })
}

/// Whether a command's text names KHAELOR's configuration or the tool itself
/// (`rm -rf .khaelor`, `sed -i … .KHAELOR/config.json`, `khaelor-perm trust .`): it may
/// change them in ways the analysis cannot see.
pub fn command_names_own_config(subject: &str) -> bool {
    let lower = subject.to_ascii_lowercase();
    lower.contains(".khaelor") || lower.contains("khaelor-perm")
}

/// The fragment by which a command or URL names the service's way of answering
/// prompts, if it does: the panel token file (`panel-token` as a whole file name), the trust route
/// (`/v1/trust`), or a session call's grant or deny route (`/v1/sessions/…/calls/…/grant`,
/// `…/deny`). A request that names them asks and never gets an "always" pattern: a
/// script the agent wrote must not answer the agent's own prompts (the service
/// requires the panel token for them; this keeps the attempt in front of the person).
/// ASCII case is ignored; `/calls/` and the last segment are looked for apart, since a
/// URL can be built from pieces (`$BASE/sessions/$S/calls/$C/grant`) or carry other
/// segments (`/./`, `//`) between them.
pub fn names_approval_channel(subject: &str) -> Option<&'static str> {
    let lower = subject.to_ascii_lowercase();
    if names_file(&lower, crate::policy::trust::PANEL_TOKEN_FILE) {
        return Some(crate::policy::trust::PANEL_TOKEN_FILE);
    }
    if lower.contains("/v1/trust") {
        return Some("/v1/trust");
    }
    if lower.contains("/calls/") {
        return ["grant", "deny"]
            .into_iter()
            .find(|r| names_file(&lower, r) && lower.contains(&format!("/{r}")))
            .map(|r| if r == "grant" { "/grant" } else { "/deny" });
    }
    None
}

/// Whether `name` occurs in `text` as a whole file name: not glued to other name
/// characters on either side (`/s/panel-token'` names it, `panel-token.md` does not).
fn names_file(text: &str, name: &str) -> bool {
    let glued = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    text.match_indices(name).any(|(at, _)| {
        let before = text.get(..at).and_then(|t| t.chars().next_back());
        let after = text.get(at + name.len()..).and_then(|t| t.chars().next());
        !glued(before) && !glued(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(p: &str) -> Option<String> {
        protected_write(Path::new(p), &[]).map(|h| h.pattern)
    }

    #[test]
    fn table_rows_match_anywhere_and_in_any_case() {
        assert_eq!(
            hit("/p/.git/hooks/pre-commit").as_deref(),
            Some("*/.git/hooks*")
        );
        assert_eq!(hit("/p/.GIT/Config").as_deref(), Some("*/.git/config*"));
        assert_eq!(
            hit("/p/.git/commondir").as_deref(),
            Some("*/.git/commondir*")
        );
        assert_eq!(
            hit("/p/.git/modules/sub/config").as_deref(),
            Some("*/.git/modules/*/config*")
        );
        assert_eq!(hit("/p/sub/.git").as_deref(), Some("*/.git*"));
        assert_eq!(
            hit("/p/.Khaelor/config.json").as_deref(),
            Some("*/.khaelor*")
        );
        assert_eq!(hit("/p/a/.envrc").as_deref(), Some("*/.envrc"));
        assert_eq!(hit("/p/.husky/pre-push").as_deref(), Some("*/.husky*"));
        assert_eq!(
            hit("/p/.github/workflows/ci.yml").as_deref(),
            Some("*/.github/workflows*")
        );
        assert_eq!(
            hit("/p/.GitHub/Workflows/release.yaml").as_deref(),
            Some("*/.github/workflows*")
        );
        assert_eq!(
            hit("/p/.gitlab-ci.yml").as_deref(),
            Some("*/.gitlab-ci.yml")
        );
        assert_eq!(
            hit("/p/.circleci/config.yml").as_deref(),
            Some("*/.circleci*")
        );
        assert_eq!(hit("/p/Jenkinsfile").as_deref(), Some("*/Jenkinsfile"));
        assert_eq!(
            hit("/home/u/.qwen/settings.json").as_deref(),
            Some("*/.qwen*")
        );
    }

    #[test]
    fn neighbours_are_not_protected() {
        for p in [
            "/p/src/git/config",
            "/p/.github/ISSUE_TEMPLATE/bug.md",
            "/p/.github/CODEOWNERS",
            "/p/docs/workflows/ci.yml",
            "/p/ci/gitlab-ci.yml.md",
            "/p/.gitignore",
            "/p/docs/envrc.md",
            "/p/.git-blame-ignore-revs",
            "/p/khaelor/notes.md",
            "/p/qwen/settings.json",
            "/p/.qwenignore",
        ] {
            assert_eq!(hit(p), None, "{p}");
        }
    }

    #[test]
    fn writes_that_make_or_fill_a_git_shaped_directory_are_protected() {
        let t = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(t.path()).unwrap().join("bare");
        std::fs::create_dir_all(d.join("objects/info")).unwrap();
        std::fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        // Not yet a repository: an ordinary file next to the parts is not protected...
        assert_eq!(protected_write(&d.join("notes.txt"), &[]), None);
        // ...the write that completes the shape is,
        let h = protected_write(&d.join("refs/heads/main"), &[]).unwrap();
        assert_eq!(h.pattern, format!("{}/*", d.display()));
        // and, once it has the shape, every write into it.
        std::fs::create_dir_all(d.join("refs")).unwrap();
        for f in [
            "config",
            "info/attributes",
            "objects/info/alternates",
            "x/y",
        ] {
            assert!(protected_write(&d.join(f), &[]).is_some(), "{f}");
        }
        // A neighbour is not.
        assert_eq!(protected_write(&d.with_file_name("other.txt"), &[]), None);
    }

    #[test]
    fn approval_routes_and_the_panel_token_are_named() {
        for (s, want) in [
            (
                "cat /h/.local/state/khaelor-perm/panel-token",
                "panel-token",
            ),
            ("cat /srv/state/PANEL-TOKEN", "panel-token"),
            (
                "curl -X POST http://127.0.0.1:8790/v1/sessions/s/calls/c/grant -d {}",
                "/grant",
            ),
            (
                "curl -XPOST localhost:8790/v1/./sessions/s/calls/c/deny",
                "/deny",
            ),
            (
                "wget --post-data {} http://[::1]:8790/v1/trust",
                "/v1/trust",
            ),
            ("curl -X POST $B/sessions/$S/calls/$C/grant", "/grant"),
            (
                "curl -X POST 'http://h/v1/sessions/s/calls/c/deny?x=1'",
                "/deny",
            ),
        ] {
            assert_eq!(names_approval_channel(s), Some(want), "{s}");
        }
        for s in [
            "cat panel.token",
            "cat panel-token.md",
            "cat my-panel-token",
            "curl http://127.0.0.1:8790/v1/evaluate",
            "curl https://example.com/grants/apply",
            "git log --grep=deny",
            "ls sessions/",
            "cat src/sessions/deny.rs",
            "cat src/calls/denylist.rs",
            "grep -rn grant src/calls/",
        ] {
            assert_eq!(names_approval_channel(s), None, "{s}");
        }
    }

    #[test]
    fn extra_paths_are_own_config() {
        let extra = [PathBuf::from("/etc/khaelor/managed.json")];
        let h = protected_write(Path::new("/etc/khaelor/managed.json"), &extra).unwrap();
        assert!(h.own_config);
        assert_eq!(h.pattern, "/etc/khaelor/managed.json");
    }
}
