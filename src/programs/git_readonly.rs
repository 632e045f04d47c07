//! git's verified read-only forms: `status`, `diff`, `log`, `show`,
//! `branch` listing forms, `tag -l`, `remote`/`remote -v`/`remote show -n`/`remote
//! get-url`, `rev-parse`, `ls-files`, `ls-tree`, `cat-file -p/-t/-s/-e`, `blame`,
//! `describe`, `stash list/show`, `config --get/--list` (and `config get/list`),
//! `shortlog`, `reflog` (not `delete`/`expire`), `grep` (not `-O`), each with the options
//! listed here spelled out in full.
//!
//! None of git's code-running options is listed: global `-c`, `--config-env`,
//! `--exec-path`, `-p`/`--paginate` (the pager), `--git-dir`/`--work-tree`; nor
//! `--output`, `--ext-diff`, `--textconv`, `--show-signature` (runs gpg), `-O` (an order
//! file, or `grep`'s pager), `log -L`. The files git prints (`show REV:PATH`, `diff
//! --no-index A B`, `blame FILE`) are found by the AST effects' `git_reads`; `git grep`
//! is returned here as a recursive read.
//!
//! Being listed here is not enough: the analysis verifies a git command only in a
//! repository it can vouch for (`git_discovery`). `config_read` says which configuration
//! files a reading `git config` prints and whether it follows their includes;
//! `content_read` says which commands print file contents from history
//! (`git_history`). `config --blob` is not listed: the blob, and what it includes, is
//! only known from the object database.

use std::sync::OnceLock;

use super::options::{Abbrev, Grammar, Opt, Parsed, parse};
use super::verified::{Verified, spec_opts};

/// Diff options shared by `diff`, `log`, `show`, `stash show`.
const DIFF: &str = "p u s z w b a R W :patch :no-patch U:unified= :raw :patch-with-raw :patch-with-stat :stat? :compact-summary :numstat :shortstat :dirstat? :cumulative :dirstat-by-file? :summary :name-only :name-status :submodule? :color? :no-color :color-moved? :no-color-moved :color-moved-ws= :color-words? :word-diff? :word-diff-regex= :no-renames :renames :rename-empty :no-rename-empty :check :ws-error-highlight= :full-index :binary :abbrev? :no-abbrev B:break-rewrites? M:find-renames? C:find-copies? :find-copies-harder D:irreversible-delete l= :diff-filter= S= G= :pickaxe-all :pickaxe-regex :find-object= :relative? :no-relative :text :ignore-cr-at-eol :ignore-space-at-eol :ignore-space-change :ignore-all-space :ignore-blank-lines I:ignore-matching-lines= :indent-heuristic :no-indent-heuristic :minimal :patience :histogram :diff-algorithm= :anchored= :inter-hunk-context= :function-context :exit-code :quiet :no-ext-diff :no-textconv :ignore-submodules? :src-prefix= :dst-prefix= :no-prefix :default-prefix :line-prefix= :ita-invisible-in-index :ita-visible-in-index :stat-width= :stat-name-width= :stat-count= :stat-graph-width= X? :merge-base";

/// Revision and formatting options of `log`, `show`, `shortlog`, `reflog`, `stash list`.
const LOG: &str = ":oneline :graph :decorate? :no-decorate :decorate-refs= :decorate-refs-exclude= :clear-decorations :source :all :branches? :tags? :remotes? :glob= :exclude= n:max-count= :skip= :since= :after= :until= :before= :since-as-filter= :max-age= :min-age= :author= :committer= :grep= :all-match :invert-grep i:regexp-ignore-case E:extended-regexp F:fixed-strings P:perl-regexp :basic-regexp :merges :no-merges :min-parents= :max-parents= :no-min-parents :no-max-parents :first-parent :exclude-first-parent-only :not :reverse :date= :relative-date :format= :pretty? :abbrev-commit :no-abbrev-commit :encoding= :follow :full-history :simplify-by-decoration :simplify-merges :ancestry-path? :dense :sparse :topo-order :date-order :author-date-order :left-right :cherry-pick :cherry-mark :cherry :left-only :right-only :boundary :walk-reflogs g :mailmap :no-mailmap :use-mailmap :no-use-mailmap :notes? :no-notes :show-notes? :parents :children :log-size :full-diff :show-linear-break? :no-walk? :do-walk :reflog :expand-tabs? :no-expand-tabs :diff-merges= :no-diff-merges :cc c m :remerge-diff :dd :combined-all-paths t :root :in-commit-order :single-worktree :ignore-missing :show-pulls";

const STATUS: &str = "s:short b:branch :show-stash :porcelain? :long v:verbose u:untracked-files? :ignore-submodules? :ignored? z :column? :no-column :ahead-behind :no-ahead-behind :renames :no-renames :find-renames?";
const BRANCH: &str = "a:all r:remotes l:list v:verbose :show-current :merged= :no-merged= :contains= :no-contains= :points-at= :sort= :format= :color? :no-color :column? :no-column i:ignore-case :abbrev? :no-abbrev q:quiet :omit-empty";
const TAG: &str = "l:list n? :sort= :contains= :no-contains= :merged= :no-merged= :points-at= :format= :color? :column? :no-column i:ignore-case :omit-empty";
const REV_PARSE: &str = ":abbrev-ref? :short? :verify q:quiet :symbolic :symbolic-full-name :show-toplevel :show-prefix :show-cdup :git-dir :git-common-dir :absolute-git-dir :is-inside-git-dir :is-inside-work-tree :is-bare-repository :is-shallow-repository :show-superproject-working-tree :shared-index-path :show-object-format? :show-ref-format :local-env-vars :git-path= :resolve-git-dir=< :all :branches? :tags? :remotes? :glob= :exclude= :since= :until= :revs-only :no-revs :flags :no-flags :default= :sq :not :disambiguate= :path-format=";
const LS_FILES: &str = "c:cached d:deleted m:modified o:others i:ignored s:stage u:unmerged k:killed :directory :no-empty-directory :deduplicate :resolve-undo z t v f :full-name :recurse-submodules :abbrev? :error-unmatch :with-tree= x:exclude= X:exclude-from=< :exclude-standard :sparse :format=";
const LS_TREE: &str =
    "d r t l:long z :name-only :name-status :object-only :full-name :full-tree :abbrev? :format=";
const BLAME: &str = "b :root :show-stats :progress :no-progress f:show-name n:show-number p:porcelain :line-porcelain c l t S=< :reverse= :first-parent :incremental :encoding= :contents=< :date= M? C? :ignore-rev= :ignore-revs-file=< :color-lines :color-by-age e:show-email s w :minimal :abbrev= L= :since=";
const DESCRIBE: &str = ":all :tags :contains :abbrev= :candidates= :exact-match :debug :long :match= :exclude= :always :first-parent :dirty? :broken?";
const CONFIG: &str = ":get :get-all :get-regexp :get-urlmatch :get-color :get-colorbool l:list :show-origin :show-scope :global :system :local :worktree f:file=< :blob= :name-only z:null :type= :bool :int :bool-or-int :path :expiry-date :default= :includes :no-includes :fixed-value :all :regexp :value= :url=";
const SHORTLOG: &str = "n:numbered s:summary e:email c:committer w? :format= :group=";
const GREP: &str = ":cached :no-index :untracked :no-exclude-standard :exclude-standard :recurse-submodules a:text :no-textconv i:ignore-case I :max-depth= r:recursive :no-recursive w:word-regexp v:invert-match h H :full-name E:extended-regexp G:basic-regexp F:fixed-strings P:perl-regexp n:line-number :column l:files-with-matches :name-only L:files-without-match z:null o:only-matching c:count :color? :no-color :break :heading p:show-function A:after-context= B:before-context= C:context= W:function-context :threads= f=< e= :and :or :not :all-match q:quiet m:max-count=";
const STASH_SHOW: &str = "u:include-untracked :only-untracked :no-include-untracked";

/// git's verified global options that take no value (`-C DIR` takes one).
const GLOBAL_FLAGS: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-replace-objects",
    "--no-advice",
];

/// One verified git form as the table lists it: the subcommand words (`stash show`)
/// and the options allowed after them. `remote` and `cat-file` are read by hand (their
/// few fixed shapes are in `verify`) and listed with no options.
#[derive(Debug, Clone)]
pub struct Form {
    pub words: &'static [&'static str],
    pub opts: Vec<Opt>,
}

/// Every verified git form and its options, for the program oracle's generator and
/// coverage (`oracle::programs`), and git's global flags. Built once: the analysis asks
/// for the forms' names on every git command it reads.
pub fn forms() -> (&'static [Form], &'static [&'static str]) {
    static FORMS: OnceLock<Vec<Form>> = OnceLock::new();
    (FORMS.get_or_init(build_forms), GLOBAL_FLAGS)
}

fn build_forms() -> Vec<Form> {
    let form = |words: &'static [&'static str], specs: &[&'static str]| Form {
        words,
        opts: specs.iter().flat_map(|s| spec_opts(s)).collect(),
    };
    vec![
        form(&["status"], &[STATUS]),
        form(&["diff"], &[DIFF, ":cached :staged :no-index"]),
        form(&["log"], &[LOG, DIFF]),
        form(&["whatchanged"], &[LOG, DIFF]),
        form(&["show"], &[LOG, DIFF]),
        form(&["shortlog"], &[SHORTLOG, LOG]),
        form(&["reflog"], &[LOG, DIFF]),
        form(&["reflog", "show"], &[LOG, DIFF]),
        form(&["branch"], &[BRANCH]),
        form(&["tag"], &[TAG]),
        form(&["remote"], &[]),
        form(&["rev-parse"], &[REV_PARSE]),
        form(&["ls-files"], &[LS_FILES]),
        form(&["ls-tree"], &[LS_TREE]),
        form(&["cat-file"], &[]),
        form(&["blame"], &[BLAME]),
        form(&["annotate"], &[BLAME]),
        form(&["describe"], &[DESCRIBE]),
        form(&["stash", "list"], &[LOG, DIFF]),
        form(&["stash", "show"], &[STASH_SHOW, DIFF]),
        form(&["config"], &[CONFIG]),
        form(&["grep"], &[GREP]),
    ]
}

/// A grammar built once from a spec (git options are given in full: no abbreviations).
fn grammar(cell: &'static OnceLock<Grammar>, specs: &[&'static str]) -> &'static Grammar {
    cell.get_or_init(|| {
        let mut opts: Vec<Opt> = Vec::new();
        for s in specs {
            opts.extend(spec_opts(s));
        }
        let opts: &'static [Opt] = Box::leak(opts.into_boxed_slice());
        Grammar::new(opts, Abbrev::None).numeric()
    })
}

macro_rules! g {
    ($($spec:expr),+) => {{
        static CELL: OnceLock<Grammar> = OnceLock::new();
        grammar(&CELL, &[$($spec),+])
    }};
}

/// git's safe global options; `-C DIR` moves where git reads (the effects resolve it).
fn globals(words: &[&str]) -> Option<usize> {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        match *w {
            "-C" => i += 2,
            w if GLOBAL_FLAGS.contains(&w) => i += 1,
            w if w.starts_with('-') => return None,
            _ => return Some(i),
        }
    }
    // `git` alone or `git -C x`: prints usage.
    None
}

/// Parses the subcommand's words (from `start`) by `g`: `None` on anything unknown.
fn parsed(g: &Grammar, words: &[&str], start: usize) -> Option<Parsed> {
    let p = parse(g, words, start);
    (p.unknown.is_empty() && !p.missing_value).then_some(p)
}

/// Whether `words` (`git …`) is a verified read-only git command.
pub fn verify(words: &[&str]) -> Option<Verified> {
    let sub_at = globals(words)?;
    let sub = *words.get(sub_at)?;
    let args = words.get(sub_at + 1..).unwrap_or_default();
    let start = sub_at + 1;
    let ok = Some(Verified::default());
    let operands = |p: &Parsed| p.operands.len();
    match sub {
        "status" => parsed(g!(STATUS), words, start).and(ok),
        "diff" => {
            let p = parsed(g!(DIFF, ":cached :staged :no-index"), words, start)?;
            if !p.has("no-index") {
                return ok;
            }
            // `--no-index A B` compares two paths of the file system, directories
            // recursively: every file under them is read.
            if words.get(1..sub_at).unwrap_or_default().contains(&"-C") {
                return None;
            }
            Some(Verified {
                recursive: p
                    .operands
                    .iter()
                    .filter_map(|&i| words.get(i).map(|w| (*w).to_string()))
                    .filter(|w| w != "/dev/null")
                    .collect(),
                ..Verified::default()
            })
        }
        "log" | "whatchanged" => parsed(g!(LOG, DIFF), words, start).and(ok),
        "show" => parsed(g!(LOG, DIFF), words, start).and(ok),
        "shortlog" => parsed(g!(SHORTLOG, LOG), words, start).and(ok),
        "reflog" => {
            let (first, from) = match args.first() {
                Some(&("show" | "list")) => (true, start + 1),
                Some(w)
                    if !w.starts_with('-')
                        && matches!(*w, "expire" | "delete" | "exists" | "drop") =>
                {
                    return None;
                }
                _ => (false, start),
            };
            let _ = first;
            parsed(g!(LOG, DIFF), words, from).and(ok)
        }
        "branch" => {
            let p = parsed(g!(BRANCH), words, start)?;
            let listing = p.has("list")
                || [
                    "merged",
                    "no-merged",
                    "contains",
                    "no-contains",
                    "points-at",
                ]
                .iter()
                .any(|o| p.has(o));
            (operands(&p) == 0 || listing).then_some(Verified::default())
        }
        "tag" => {
            let p = parsed(g!(TAG), words, start)?;
            (operands(&p) == 0 || p.has("list")).then_some(Verified::default())
        }
        "remote" => match args {
            [] | ["-v"] | ["--verbose"] => ok,
            ["show", "-n", name] if !name.starts_with('-') => ok,
            ["get-url", rest @ ..] => {
                let names: Vec<&&str> = rest
                    .iter()
                    .filter(|w| !matches!(**w, "--push" | "--all"))
                    .collect();
                (names.len() == 1 && names.iter().all(|w| !w.starts_with('-')))
                    .then_some(Verified::default())
            }
            _ => None,
        },
        "rev-parse" => parsed(g!(REV_PARSE), words, start).map(|p| reads_of(&p)),
        "ls-files" => parsed(g!(LS_FILES), words, start).map(|p| reads_of(&p)),
        "ls-tree" => parsed(g!(LS_TREE), words, start).and(ok),
        "cat-file" => match args {
            [mode, object]
                if matches!(*mode, "-p" | "-t" | "-s" | "-e") && !object.starts_with('-') =>
            {
                ok
            }
            _ => None,
        },
        "blame" | "annotate" => parsed(g!(BLAME), words, start).map(|p| reads_of(&p)),
        "describe" => parsed(g!(DESCRIBE), words, start).and(ok),
        "stash" => match args.first() {
            Some(&"list") => parsed(g!(LOG, DIFF), words, start + 1).and(ok),
            Some(&"show") => parsed(g!(STASH_SHOW, DIFF), words, start + 1).and(ok),
            _ => None,
        },
        "config" => config(words, start, args),
        "grep" => {
            // `-C` moves git: the recursive read below is relative to the cwd.
            if words.get(1..sub_at).unwrap_or_default().contains(&"-C") {
                return None;
            }
            let p = parsed(g!(GREP), words, start)?;
            let mut v = reads_of(&p);
            let pattern_given = p.has_short('e') || p.has_short('f');
            let mut ops: Vec<String> = p
                .operands
                .iter()
                .filter_map(|&i| words.get(i).map(|s| (*s).to_string()))
                .collect();
            if !pattern_given && !ops.is_empty() {
                ops.remove(0);
            }
            // Revisions and pathspecs: read as directories (a revision that is not a
            // path only adds a read); none means the whole working tree below the cwd.
            if ops.is_empty() {
                v.recursive.push(".".to_string());
            } else {
                v.recursive.extend(ops);
            }
            Some(v)
        }
        _ => None,
    }
}

/// The files option values read.
fn reads_of(p: &Parsed) -> Verified {
    let mut v = Verified::default();
    for f in &p.found {
        if f.opt.does == super::options::Does::Reads
            && let Some(val) = &f.value
        {
            v.reads.push(val.clone());
        }
    }
    v
}

/// `git config --get NAME`, `--get-all`, `--get-regexp`, `-l`/`--list`, and the newer
/// `git config get NAME`/`git config list`. Any other form may set something.
fn config(words: &[&str], start: usize, args: &[&str]) -> Option<Verified> {
    let (from, subcommand) = match args.first() {
        Some(&("get" | "list")) => (start + 1, true),
        _ => (start, false),
    };
    let p = parsed(g!(CONFIG), words, from)?;
    // A blob's configuration, and what it includes, is only known from the object
    // database.
    if p.has("blob") {
        return None;
    }
    let reading = subcommand
        || [
            "get",
            "get-all",
            "get-regexp",
            "get-urlmatch",
            "get-color",
            "get-colorbool",
            "list",
        ]
        .iter()
        .any(|o| p.has(o));
    if !reading {
        return None;
    }
    Some(reads_of(&p))
}

/// Which configuration a reading `git config` form prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigScope {
    /// Every file git reads: system, user, repository, worktree.
    All,
    /// `--system`.
    System,
    /// `--global`: the user's files.
    Global,
    /// `--local`: the repository's `config`.
    Local,
    /// `--worktree`: the worktree's `config.worktree` (or `config`).
    Worktree,
    /// `--file FILE`, as written.
    File(String),
}

/// What a verified `git config` reading form (`git config --list`, `--get`, `get`,
/// `list`, …) reads: its scope, and whether it follows `include.path` and
/// `includeIf.*.path` (git: on when reading every file, off for one file, `--includes`
/// and `--no-includes` decide, the last one given wins; checked with git 2.47:
/// `--file x.cfg --list` prints `include.path=…` but not the included values,
/// `--includes` prints them). `None`: not such a form.
pub fn config_read(words: &[&str]) -> Option<(ConfigScope, bool)> {
    let sub_at = globals(words)?;
    if words.get(sub_at) != Some(&"config") {
        return None;
    }
    config(
        words,
        sub_at + 1,
        words.get(sub_at + 1..).unwrap_or_default(),
    )?;
    let from = match words.get(sub_at + 1) {
        Some(&("get" | "list")) => sub_at + 2,
        _ => sub_at + 1,
    };
    let p = parsed(g!(CONFIG), words, from)?;
    let scope = if let Some(f) = p.values("file").last() {
        ConfigScope::File((*f).to_string())
    } else if p.has("system") {
        ConfigScope::System
    } else if p.has("global") {
        ConfigScope::Global
    } else if p.has("local") {
        ConfigScope::Local
    } else if p.has("worktree") {
        ConfigScope::Worktree
    } else {
        ConfigScope::All
    };
    let mut includes = scope == ConfigScope::All;
    for f in &p.found {
        match f.opt.long {
            Some("includes") => includes = true,
            Some("no-includes") => includes = false,
            _ => {}
        }
    }
    Some((scope, includes))
}

/// Whether a verified `git remote` form prints the remotes' URLs (`remote -v`,
/// `remote get-url`, `remote show -n`), which it takes from every configuration file
/// git reads, includes followed: as `config --list` does.
pub fn remote_prints_urls(words: &[&str]) -> bool {
    let Some(sub_at) = globals(words) else {
        return false;
    };
    if words.get(sub_at) != Some(&"remote") {
        return false;
    }
    let args = words.get(sub_at + 1..).unwrap_or_default();
    !args.is_empty() && verify(words).is_some()
}

/// Whether a git command (`words`, git first) prints file contents from the object
/// database or the index, and what it reaches (`git_history::content_read`). Forms the
/// grammar does not know (`git log -p --unknown`, allowed by name by the seed's
/// `git log *`) count as printing everything they could. `is_path`: whether an operand
/// names an existing file.
pub fn content_read(
    words: &[&str],
    is_path: &dyn Fn(&str) -> bool,
) -> Option<super::git_history::ContentRead> {
    use super::git_history::{ContentRead, content_read as reach_of};
    let everything = || Some(ContentRead::default());
    let Some(sub_at) = globals(words) else {
        // Options only `git_readonly` does not list (`--git-dir`, `-c`): judged as a
        // reader of anything when its subcommand prints contents.
        return match crate::programs::git::git_subcommand(
            &words.iter().map(|w| (*w).to_string()).collect::<Vec<_>>(),
        ) {
            Some((_, sub)) if PRINTERS.contains(&sub) => everything(),
            _ => None,
        };
    };
    let sub = *words.get(sub_at)?;
    if !PRINTERS.contains(&sub) {
        return None;
    }
    let start = sub_at + 1;
    let grammar = match sub {
        "diff" => g!(DIFF, ":cached :staged :no-index"),
        "log" | "whatchanged" | "show" | "reflog" => g!(LOG, DIFF),
        "grep" => g!(GREP),
        "stash" => match words.get(start) {
            Some(&"list") => g!(LOG, DIFF),
            Some(&"show") => g!(STASH_SHOW, DIFF),
            _ => return None,
        },
        "cat-file" => {
            return match words.get(start..).unwrap_or_default() {
                // A commit or tag prints its header; a blob its content, which only an
                // id can name here (`REV:PATH` is a read of PATH of its own).
                ["-p", object] => {
                    let ids = super::git_history::id_parts(object);
                    let names = super::git_history::name_parts(object);
                    (!ids.is_empty() || !names.is_empty()).then_some(ContentRead {
                        pathspecs: Vec::new(),
                        object_ids: ids,
                        names,
                        objects_only: true,
                    })
                }
                [mode, _] if matches!(*mode, "-t" | "-s" | "-e") => None,
                _ => everything(),
            };
        }
        _ => return None,
    };
    let from = if sub == "stash"
        || (sub == "reflog" && matches!(words.get(start), Some(&("show" | "list"))))
    {
        start + 1
    } else {
        start
    };
    let p = parse(grammar, words, from);
    if !p.unknown.is_empty() || p.missing_value {
        return everything();
    }
    reach_of(words, sub_at, &p, is_path)
}

/// The subcommands that can print file contents from the object database or index.
const PRINTERS: &[&str] = &[
    "log",
    "whatchanged",
    "show",
    "reflog",
    "diff",
    "grep",
    "stash",
    "cat-file",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> bool {
        let w: Vec<&str> = s.split_whitespace().collect();
        verify(&w).is_some()
    }

    #[test]
    fn read_only_forms() {
        for ok in [
            "git status",
            "git status --porcelain",
            "git diff --stat HEAD~1",
            "git log --oneline -n 5",
            "git log -5 --format=%H",
            "git show HEAD --stat",
            "git branch -a",
            "git branch --list feat*",
            "git branch --abbrev=10",
            "git tag -l v1*",
            "git remote -v",
            "git rev-parse --show-toplevel",
            "git ls-files",
            "git cat-file -p HEAD",
            "git blame src/main.rs",
            "git describe --tags",
            "git stash list",
            "git config --get user.name",
            "git config --list",
            "git --no-pager log",
            "git grep -n TODO",
        ] {
            assert!(v(ok), "{ok} should be verified");
        }
        for bad in [
            "git -c core.pager=x log",
            "git --exec-path=/x status",
            "git -p log",
            "git branch new",
            // `--abbrev` takes its value only attached: `10` is a new branch's name.
            "git branch --abbrev 10",
            "git branch -D x",
            "git tag v1",
            "git remote add o u",
            "git remote show origin",
            "git stash",
            "git stash pop",
            "git config user.name x",
            "git reflog expire --all",
            "git reflog delete x",
            "git grep -O x",
            "git grep --open-files-in-pager x",
            "git diff --output=x",
            "git log --ext-diff",
            "git diff --textconv",
            "git log --show-signature",
            "git log --out=x",
            "git push",
            "git cat-file --batch",
            "git diff -Ox",
        ] {
            assert!(!v(bad), "{bad} should not be verified");
        }
    }
}
