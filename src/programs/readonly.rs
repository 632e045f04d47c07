//! Verified read-only programs: programs whose every effect is modelled
//! **for a known set of options** — they read the files they are given (those reads are
//! returned, to be judged by the read rules), write nothing, run nothing, open no
//! network connection and print no environment.
//!
//! Each entry lists only its safe options, in a compact spec (see `spec_opts`). Any
//! option outside the set, an abbreviation of a long option, a missing value or an
//! operand form the entry does not know makes the words *not verified*: `verify`
//! returns `None` and the command is judged as before. Long options must be spelled out
//! (no `getopt_long` prefixes): a prefix of a safe option can be the unique prefix of
//! an unsafe one the table does not list.
//!
//! Knows nothing of bash syntax (the caller checks that the words are literal, that no
//! assignment or write redirect comes with them), of paths or of rules.

use std::sync::OnceLock;

use super::options::{Abbrev, Does, Grammar, Opt, Parsed, parse};
pub use super::verified::Verified;
use super::verified::spec_opts;

/// How an entry's operands are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operands {
    /// No operand is a file (`echo`, `seq`, `uname`, `which NAME`).
    Text,
    /// Every operand is a file or directory that is read (`cat`, `ls`, `stat`).
    Files,
    /// At most this many operands, each read (`uniq IN` — a second one is written).
    FilesAtMost(usize),
    /// A pattern first (unless `-e`/`-f`/`--regexp`/`--file` gave it), then files.
    PatternFiles,
    /// Changes directory: at most one operand.
    Chdir,
}

/// How a program reads its options, as observed on the real program (each checked with
/// `strace` on Debian 12: coreutils 9.1, grep 3.8, diff 3.8, file 5.44, tree 2.1.0,
/// ripgrep 13, fd 8.6, jq 1.6, python yq 3.1 and Go yq's pflag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// GNU `getopt_long` (and jq, argparse): clusters, a value attached or the next
    /// word, an optional value only attached, `--`, options after operands. A long
    /// option must be spelled out here (the program may take a prefix of an unsafe one).
    Getopt,
    /// bash builtins and `getopts` scripts: as `Getopt`, but the first operand ends the
    /// options.
    Builtin,
    /// tree's own parser (`Grammar::tree`): `-Lo 1 FILE` is `-L 1 -o FILE`.
    Tree,
    /// clap (rg, fd) and Go pflag (yq): as `Getopt`, and `-f=FILE` is `-f FILE`.
    Clap,
}

/// One verified program.
struct Entry {
    names: &'static [&'static str],
    spec: &'static str,
    operands: Operands,
    numeric: bool,
    style: Style,
}

const fn e(names: &'static [&'static str], spec: &'static str, operands: Operands) -> Entry {
    Entry {
        names,
        spec,
        operands,
        numeric: false,
        style: Style::Getopt,
    }
}

const fn num(names: &'static [&'static str], spec: &'static str, operands: Operands) -> Entry {
    Entry {
        names,
        spec,
        operands,
        numeric: true,
        style: Style::Getopt,
    }
}

impl Entry {
    const fn style(mut self, style: Style) -> Self {
        self.style = style;
        self
    }
}

use Operands::{Chdir, Files, FilesAtMost, PatternFiles, Text};

/// The safe options of each program. Spec tokens, separated by blanks: `a` (short
/// flag), `a:all` (short and long), `:all` (long only); a trailing `=` takes a value,
/// `?` an optional attached value; a final `<` means the value is a file that is read.
/// `popd` is not listed: where it goes is on the directory stack, which the analysis
/// does not know. Options that write, run, read a list of further files, or are otherwise not
/// modelled are simply not listed: `sort -o`/`--compress-program`/`-T`/`--files0-from`,
/// `tree -o`/`-R`/`-H`/`--fromfile`, `date -s`, `hash -p`, `printf -v`, `*sum -c`,
/// `diff -l`, `diff -N`/`--unidirectional-new-file` (with directory operands they print
/// every file only one side holds, a read of a whole directory), `file -C`/`-f`, `fd -x`/`-X`/`-l`, `rg --pre`, `jq -f`/`-L`/`--rawfile`.
const ENTRIES: &[Entry] = &[
    e(&["pwd"], "L P", Text).style(Style::Builtin),
    e(&["whoami"], ":help :version", Text),
    e(
        &["id"],
        "u:user g:group G:groups n:name r:real z:zero Z:context :help :version",
        Text,
    ),
    e(
        &["uname"],
        "a:all s:kernel-name n:nodename r:kernel-release v:kernel-version m:machine p:processor i:hardware-platform o:operating-system :help :version",
        Text,
    ),
    e(
        &["seq"],
        "f:format= s:separator= w:equal-width :help :version",
        Text,
    ),
    e(
        &["date"],
        "d:date= u:utc:universal R:rfc-email I:iso-8601? :rfc-3339= r:reference=< f:file=< :debug :help :version",
        Text,
    ),
    e(
        &["basename"],
        "a:multiple s:suffix= z:zero :help :version",
        Text,
    ),
    e(&["dirname"], "z:zero :help :version", Text),
    e(
        &["realpath"],
        "e:canonicalize-existing m:canonicalize-missing L:logical P:physical q:quiet s:strip:no-symlinks :relative-to= :relative-base= z:zero :help :version",
        Files,
    ),
    e(
        &["readlink"],
        "f:canonicalize e:canonicalize-existing m:canonicalize-missing n:no-newline q:quiet s:silent v:verbose z:zero :help :version",
        Files,
    ),
    e(&["which"], "a s", Text).style(Style::Builtin),
    e(&["whereis"], "b m s u l", Text),
    e(&["type"], "a f p P t", Text).style(Style::Builtin),
    e(&["hash"], "r t d l", Text).style(Style::Builtin),
    e(&["cd"], "L P e @", Chdir).style(Style::Builtin),
    e(&["pushd"], "n", Chdir).style(Style::Builtin),
    e(&["dirs"], "c l p v", Text).style(Style::Builtin),
    // The shell's own job table; never `-x` (it runs a command).
    e(&["jobs"], "l n p r s", Text).style(Style::Builtin),
    e(
        &["ls"],
        "a:all A:almost-all b:escape B:ignore-backups c C d:directory D:dired f F :classify? :file-type :format= :full-time g G:no-group h:human-readable :si H:dereference-command-line :dereference-command-line-symlink-to-dir :hide= :hyperlink? :indicator-style= i:inode I:ignore= k:kibibytes l L:dereference m n:numeric-uid-gid N:literal o p q:hide-control-chars :show-control-chars Q:quote-name :quoting-style= r:reverse R:recursive s:size S :sort= t :time= :time-style= T:tabsize= u U v w:width= x X Z:context :zero 1 :color? :group-directories-first :author :block-size= :help :version",
        Files,
    ),
    e(
        &["cat"],
        "A:show-all b:number-nonblank e E:show-ends n:number s:squeeze-blank t T:show-tabs u v:show-nonprinting :help :version",
        Files,
    ),
    num(
        &["head"],
        "n:lines= c:bytes= q:quiet:silent v:verbose z:zero-terminated :help :version",
        Files,
    ),
    num(
        &["tail"],
        "n:lines= c:bytes= f :follow? F q:quiet:silent v:verbose z:zero-terminated s:sleep-interval= :pid= :retry :max-unchanged-stats= :help :version",
        Files,
    ),
    e(
        &["wc"],
        "c:bytes m:chars l:lines w:words L:max-line-length :total= :help :version",
        Files,
    ),
    e(
        &["nl"],
        "b:body-numbering= d:section-delimiter= f:footer-numbering= h:header-numbering= i:line-increment= l:join-blank-lines= n:number-format= p:no-renumber s:number-separator= v:starting-line-number= w:number-width= :help :version",
        Files,
    ),
    e(
        &["tac"],
        "b:before r:regex s:separator= :help :version",
        Files,
    ),
    e(
        &["cut"],
        "b:bytes= c:characters= d:delimiter= f:fields= n s:only-delimited z:zero-terminated :complement :output-delimiter= :help :version",
        Files,
    ),
    e(
        &["tr"],
        "c C d:delete s:squeeze-repeats t:truncate-set1 :complement :help :version",
        Text,
    ),
    e(
        &["sort"],
        "b:ignore-leading-blanks d:dictionary-order f:ignore-case g:general-numeric-sort i:ignore-nonprinting M:month-sort h:human-numeric-sort n:numeric-sort R:random-sort r:reverse :sort= V:version-sort :batch-size= c :check? C m:merge s:stable S:buffer-size= t:field-separator= k:key= :parallel= u:unique z:zero-terminated :debug :help :version",
        Files,
    ),
    e(
        &["uniq"],
        "c:count d:repeated D :all-repeated? f:skip-fields= :group? i:ignore-case s:skip-chars= u:unique z:zero-terminated w:check-chars= :help :version",
        FilesAtMost(1),
    ),
    e(
        &["diff"],
        "i:ignore-case :ignore-file-name-case :no-ignore-file-name-case E:ignore-tab-expansion Z:ignore-trailing-space b:ignore-space-change w:ignore-all-space B:ignore-blank-lines I:ignore-matching-lines= a:text :strip-trailing-cr r:recursive s:report-identical-files q:brief c C= :context? u U= :unified? e:ed n:rcs y:side-by-side W:width= :left-column :suppress-common-lines p:show-c-function F:show-function-line= :label= t:expand-tabs T:initial-tab :tabsize= :suppress-blank-empty d:minimal :speed-large-files :horizon-lines= :normal x:exclude= X:exclude-from=< S:starting-file= :from-file=< :to-file=< :color? :palette= :no-dereference :old-line-format= :new-line-format= :unchanged-line-format= :line-format= :old-group-format= :new-group-format= :changed-group-format= :unchanged-group-format= D:ifdef= :help :version",
        Files,
    ),
    e(
        &["cmp"],
        "b:print-bytes i:ignore-initial= l:verbose n:bytes= s:quiet:silent :help :version",
        Files,
    ),
    e(
        &["comm"],
        "1 2 3 :check-order :nocheck-order :output-delimiter= :total z:zero-terminated :help :version",
        Files,
    ),
    e(&["fold"], "b:bytes s:spaces w:width= :help :version", Files),
    e(&["expand"], "i:initial t:tabs= :help :version", Files),
    e(
        &["paste"],
        "d:delimiters= s:serial z:zero-terminated :help :version",
        Files,
    ),
    e(
        &["join"],
        "a= e= i:ignore-case j= o= t= v= 1= 2= :check-order :nocheck-order :header z:zero-terminated :help :version",
        Files,
    ),
    e(
        &["column"],
        "t:table s:separator= o:output-separator= c:output-width= x:fillrows n e J:json N:table-columns= R:table-right= T:table-truncate= E:table-noextreme W:table-wrap= H:table-hide= O:table-order= l:table-columns-limit= L:keep-empty-lines d:table-noheadings r:tree= :help :version",
        Files,
    ),
    e(
        &["base64"],
        "d:decode i:ignore-garbage w:wrap= :help :version",
        FilesAtMost(1),
    ),
    e(
        &[
            "md5sum",
            "sha1sum",
            "sha224sum",
            "sha256sum",
            "sha384sum",
            "sha512sum",
            "b2sum",
        ],
        "b:binary t:text z:zero :tag c:check :ignore-missing :quiet :status :strict w:warn :help :version",
        Files,
    ),
    e(
        &["stat"],
        "L:dereference f:file-system c:format= :printf= t:terse :cached= :help :version",
        Files,
    ),
    e(
        &["file"],
        "b:brief i:mime :mime-type :mime-encoding L:dereference h:no-dereference z:uncompress Z:uncompress-noreport k:keep-going s:special-files E N:no-pad n:no-buffer p:preserve-date r:raw F:separator= e:exclude= P:parameter= m:magic-file=< 0:print0 :extension :apple :help :version",
        Files,
    ),
    e(
        &["du"],
        "a:all :apparent-size B:block-size= b:bytes c:total D:dereference-args d:max-depth= H h:human-readable :inodes k L:dereference l:count-links m P:no-dereference S:separate-dirs :si s:summarize t:threshold= :time? :time-style= x:one-file-system :exclude= 0:null :help :version",
        Files,
    ),
    e(
        &["df"],
        "a:all B:block-size= h:human-readable H :si i:inodes k l:local :no-sync :output? P:portability :sync :total t:type= T:print-type x:exclude-type= :help :version",
        Files,
    ),
    e(
        &["tree"],
        "a d l f x L= P= I= :gitignore :gitfile=< :ignore-case :matchdirs :metafirst :prune :info :noreport :charset= :filelimit= :timefmt= :du :si :sort= :dirsfirst :filesfirst :inodes :device :help :version q N Q p u g s h D F v t c U r A S n C J X i",
        Files,
    )
    .style(Style::Tree),
    num(
        &["grep", "egrep", "fgrep"],
        "E:extended-regexp F:fixed-strings G:basic-regexp P:perl-regexp e:regexp= f:file=< i:ignore-case y :no-ignore-case v:invert-match w:word-regexp x:line-regexp c:count :color? :colour? L:files-without-match l:files-with-matches m:max-count= o:only-matching q:quiet:silent s:no-messages b:byte-offset H:with-filename h:no-filename :label= n:line-number T:initial-tab Z:null A:after-context= B:before-context= C:context= a:text :binary-files= I D:devices= d:directories= :exclude= :exclude-from=< :exclude-dir= :include= r:recursive R:dereference-recursive :line-buffered U:binary z:null-data :help :version",
        PatternFiles,
    ),
    e(
        &["rg"],
        "e:regexp= f:file=< A:after-context= B:before-context= C:context= :binary :no-binary :block-buffered :line-buffered b:byte-offset s:case-sensitive :color= :colors= :column :no-column :context-separator= :no-context-separator c:count :count-matches :crlf :no-crlf :debug :trace :dfa-size-limit= E:encoding= :engine= :field-context-separator= :field-match-separator= :files l:files-with-matches :files-without-match F:fixed-strings L:follow :no-follow g:glob= :glob-case-insensitive :no-glob-case-insensitive :heading :no-heading .:hidden :no-hidden :iglob= i:ignore-case :ignore-file=< :ignore-file-case-insensitive :include-zero :invert-match v :json :no-json :line-number n N:no-line-number x:line-regexp M:max-columns= :max-columns-preview m:max-count= d:max-depth= :max-filesize= :mmap :no-mmap U:multiline :multiline-dotall :no-config :no-ignore :no-ignore-dot :no-ignore-exclude :no-ignore-files :no-ignore-global :no-ignore-parent :no-ignore-vcs :no-messages :no-require-git 0:null :null-data :one-file-system o:only-matching :passthru :passthrough P:pcre2 :no-pcre2 :pcre2-version :path-separator= :no-pre q:quiet :regex-size-limit= r:replace= z:search-zip :no-search-zip S:smart-case :sort= :sortr= :stats :stop-on-nonmatch a:text j:threads= :trim :no-trim t:type= T:type-not= :type-add= :type-clear= :type-list u:unrestricted :vimgrep H:with-filename I:no-filename w:word-regexp p:pretty h:help V:version",
        PatternFiles,
    )
    .style(Style::Clap),
    e(
        &["fd", "fdfind"],
        "H:hidden I:no-ignore :no-ignore-vcs :no-ignore-parent u:unrestricted s:case-sensitive i:ignore-case g:glob :regex F:fixed-strings a:absolute-path L:follow p:full-path 0:print0 d:max-depth= :min-depth= :exact-depth= :prune t:type= e:extension= E:exclude= S:size= :changed-within= :changed-before= :newer= :older= o:owner= c:color= j:threads= :max-results= 1 q:quiet :show-errors :path-separator= :strip-cwd-prefix? :one-file-system :format= :ignore-file=< :hyperlink? h:help V:version",
        PatternFiles,
    )
    .style(Style::Clap),
    e(
        &["jq"],
        "r:raw-output :raw-output0 j:join-output a:ascii-output c:compact-output s:slurp n:null-input e:exit-status S:sort-keys C:color-output M:monochrome-output :tab :indent= R:raw-input :arg=2 :argjson=2 :args :jsonargs :seq :stream :stream-errors :unbuffered h:help V:version",
        PatternFiles,
    ),
    e(
        &["yq"],
        "e:exit-status o:output-format= p:input-format= P:prettyPrint I:indent= C:colors M:no-colors N:no-doc n:null-input r:unwrapScalar j:tojson y:yaml-output Y:yaml-roundtrip c:compact-output S:sort-keys :raw-output h:help V:version",
        Files,
    )
    .style(Style::Clap),
    // Dumps of a file's bytes (coreutils 9.1 `od`, binutils 2.40 `strings`; each traced
    // with strace: the files named are opened read-only, nothing else). `od
    // --traditional` reads its operands as offsets and labels, `strings -T` picks a BFD
    // target (plugins among them): not listed. A word of
    // `strings` starting with `@` is a file of further options (`verify` refuses it).
    e(
        &["od"],
        "A:address-radix= :endian= j:skip-bytes= N:read-bytes= S= :strings? t:format= v:output-duplicates w:width? a b c d f i l o s x :help :version",
        Files,
    ),
    // GNU sed 4.9 reading files with a script of the printing subset
    // (`sed_script::print_only`): no `-i`, no `-f` script file, no `--follow-symlinks`.
    e(
        &["sed"],
        "n:quiet:silent e:expression= E r:regexp-extended s:separate z:null-data u:unbuffered l:line-length= :posix :debug :sandbox :help :version",
        Files,
    ),
    // coreutils 9.1 `sleep`: waits, reads nothing (traced).
    e(&["sleep"], ":help :version", Text),
    // util-linux 2.38 `hexdump` (traced: opens its operands read-only, nothing else).
    // `-L`/`--color` (reads terminal colour schemes) is not listed; `-f` reads a file
    // of formats.
    e(
        &["hexdump"],
        "b:one-byte-octal c:one-byte-char C:canonical d:two-bytes-decimal o:two-bytes-octal x:two-bytes-hex e:format= f:format-file=< n:length= s:skip= v:no-squeezing h:help V:version",
        Files,
    ),
    // procps-ng 4.0.2 `ps` (traced: reads `/proc`, `/etc/passwd` and the terminal,
    // asks the name service over its local socket, writes and runs nothing). It
    // prints each process's environment with the BSD option `e` (`ps aux e`), and it
    // reads a word again as BSD options when its UNIX reading fails: `ps -auxe`
    // (`-u` with the unknown user `xe`) and `ps -exx` print the environment too. So
    // `ps_words` admits only clusters of UNIX switches, a value only in the next
    // word, and BSD words of letters that choose and format processes.
    e(
        &["ps"],
        "A e a d N f F l j y H c L T M w C= G= g= o= O= p= q= s= t= u= U= :deselect :format= :sort= :pid= :ppid= :quick-pid= :sid= :tty= :user= :User= :group= :Group= :forest :no-headers :headers :cols= :columns= :width= :lines= :rows= :cumulative :help :version",
        Text,
    ),
    // procps-ng 4.0.2 `pgrep` (traced: reads `/proc`, nothing else). `-F`/`--pidfile`
    // reads a file and `-L` locks it; `pkill`'s `--signal` is not listed.
    e(
        &["pgrep"],
        "d:delimiter= l:list-name a:list-full v:inverse w:lightweight c:count f:full g:pgroup= G:group= i:ignore-case n:newest o:oldest O:older= P:parent= s:session= t:terminal= u:euid= U:uid= x:exact r:runstates= A:ignore-ancestors :cgroup= :ns= :nslist= h:help V:version",
        Text,
    ),
    num(
        &["strings"],
        "a:all d:data f:print-file-name n:bytes= t:radix= w:include-all-whitespace o e:encoding= :unicode= U= s:output-separator= h:help v V:version",
        Files,
    ),
];

/// The compiled grammar the verified table reads `name` with.
pub(super) fn grammar_of(name: &str) -> Option<&'static Grammar> {
    grammar_at(entry_index(name)?)
}

/// Programs that read a pattern, filter or program text first (not a file).
fn entry(name: &str) -> Option<&'static Entry> {
    ENTRIES.get(entry_index(name)?)
}

/// The index of the entry that lists `name`. Every command asks (is it a reader, is it
/// verified): a search of the sorted names instead of a scan of every entry's.
fn entry_index(name: &str) -> Option<usize> {
    static BY_NAME: OnceLock<Vec<(&'static str, usize)>> = OnceLock::new();
    let by_name = BY_NAME.get_or_init(|| {
        let mut v: Vec<(&'static str, usize)> = Vec::new();
        for (i, e) in ENTRIES.iter().enumerate() {
            for n in e.names {
                // The first entry that lists a name is the one a scan would find.
                if !v.iter().any(|(m, _)| m == n) {
                    v.push((n, i));
                }
            }
        }
        v.sort_unstable();
        v
    });
    let at = by_name.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
    by_name.get(at).map(|(_, i)| *i)
}

/// The compiled grammar of entry `idx`, built the first time a command needs it: a hook
/// process reads one command, and compiling every entry's options cost it 600,000
/// instructions where `ls` needs one entry's.
fn grammar_at(idx: usize) -> Option<&'static Grammar> {
    static G: OnceLock<Vec<OnceLock<Grammar>>> = OnceLock::new();
    let slot = G
        .get_or_init(|| ENTRIES.iter().map(|_| OnceLock::new()).collect())
        .get(idx)?;
    let e = ENTRIES.get(idx)?;
    Some(slot.get_or_init(|| {
        let opts: &'static [Opt] = Box::leak(spec_opts(e.spec).into_boxed_slice());
        let g = Grammar::new(opts, Abbrev::None);
        let g = if e.numeric { g.numeric() } else { g };
        match e.style {
            Style::Getopt => g,
            Style::Builtin => g.no_permute(),
            Style::Tree => g.tree(),
            Style::Clap => g.short_eq(),
        }
    }))
}

/// Whether `words` name a reader the verified table describes (a program of its
/// entries, or one of git's read-only subcommands after its global options), whatever
/// the rest of the words: when `verify` then refuses them (an option it does not list,
/// an abbreviation), what the command reads is not known.
pub fn describes_reader(words: &[&str]) -> bool {
    let Some(name) = words.first() else {
        return false;
    };
    if *name == "git" {
        let owned: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
        return super::git::git_subcommand(&owned).is_some_and(|(_, sub)| {
            super::git_readonly::forms()
                .0
                .iter()
                .any(|f| f.words.first() == Some(&sub))
        });
    }
    entry_index(name).is_some() || matches!(*name, "find" | "xxd" | "awk" | "mawk")
}

/// Every name the verified table knows (for the golden tests and the docs).
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = ENTRIES
        .iter()
        .flat_map(|e| e.names.iter().copied())
        .collect();
    v.extend([
        "echo", "printf", "true", "false", ":", "test", "[", "command", "find", "xxd", "git",
        "awk", "mawk",
    ]);
    v
}

/// One verified program as the table lists it: its names and the options its spec
/// allows. The program oracle (`oracle::programs`) generates commands from these and
/// counts which were run, so that no option is verified without being run.
#[derive(Debug, Clone)]
pub struct TableEntry {
    pub names: &'static [&'static str],
    pub opts: Vec<Opt>,
}

/// Every entry of the option table (not the hand-read programs: see `find_words` and
/// `xxd_words`; `echo`, `printf`, `test`, `command` run no file and are builtins).
pub fn table() -> Vec<TableEntry> {
    ENTRIES
        .iter()
        .map(|e| TableEntry {
            names: e.names,
            opts: spec_opts(e.spec),
        })
        .collect()
}

/// `find`'s verified words: leading options, expression words without a value, and
/// expression words with one.
pub fn find_words() -> (
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
) {
    (&["-H", "-L", "-P"], FIND_NO_VALUE, FIND_ONE_VALUE)
}

/// `xxd`'s verified words: flags, and words that take a numeric value.
pub fn xxd_words() -> (&'static [&'static str], &'static [&'static str]) {
    (XXD_FLAGS, XXD_VALUED)
}

/// Whether these words (command word first, literal, unquoted) are a verified read-only
/// command, and what it reads. `None`: not verified (judge it as any other command).
pub fn verify(words: &[&str]) -> Option<Verified> {
    let name = *words.first()?;
    // A path to a program (`./cat`, `/tmp/ls`) may be anything.
    if name.contains('/') {
        return None;
    }
    let rest = words.get(1..).unwrap_or_default();
    // `PROG --version` / `PROG --help` of a program in the table.
    if matches!(rest, ["--version"] | ["--help"])
        && (entry(name).is_some() || names().contains(&name) || super::lookup(name).is_some())
    {
        return Some(Verified::default());
    }
    // binutils expands `@FILE` into the options FILE holds before it reads any.
    if name == "strings" && rest.iter().any(|w| w.starts_with('@')) {
        return None;
    }
    if name == "ps" && !ps_words(rest) {
        return None;
    }
    match name {
        // Print their operands; nothing is read (`printf -v` assigns a variable).
        "echo" | "true" | "false" | ":" => return Some(Verified::default()),
        // bash evaluates an array subscript in `test -v 'a[$(cmd)]'`: no operand may
        // hold a subscript or an expansion.
        "test" | "[" => {
            let plain = rest
                .iter()
                .all(|w| *w == "]" || !w.contains(['[', '$', '`']));
            let closed = name == "test" || rest.last() == Some(&"]");
            return (plain && closed).then(Verified::default);
        }
        "printf" => {
            let assigns = rest
                .iter()
                .take_while(|w| w.starts_with('-') && **w != "--")
                .any(|w| w.contains('v'));
            return (!assigns && !rest.is_empty()).then(Verified::default);
        }
        "command" => return command_v(rest),
        "find" => return find(rest),
        "xxd" => return xxd(rest),
        // Node 20's syntax check parses the one file it is given and runs none of it
        // (traced: the file and the `package.json` files above it, for the module type,
        // are read; a `.node` file is read as text, not loaded). Any other word can run
        // code (a script, `-e`, `-r`, `--import`, words after the file go to a script),
        // so only these forms.
        "node" => {
            return match rest {
                ["-v"] | ["--version"] => Some(Verified::default()),
                [flag, file] if matches!(*flag, "-c" | "--check") && !file.starts_with('-') => {
                    Some(Verified {
                        reads: vec![(*file).to_string()],
                        ..Verified::default()
                    })
                }
                _ => None,
            };
        }
        "awk" | "mawk" => return awk(rest),
        "git" => return super::git_readonly::verify(words),
        _ => {}
    }
    let idx = entry_index(name)?;
    let e = ENTRIES.get(idx)?;
    let g = grammar_at(idx)?;
    let parsed = parse(g, words, 1);
    if !parsed.unknown.is_empty() || parsed.missing_value {
        return None;
    }
    let mut v = Verified::default();
    let mut ops: Vec<&str> = parsed
        .operands
        .iter()
        .filter_map(|&i| words.get(i).copied())
        .collect();
    match name {
        "date" if ops.iter().any(|o| !o.starts_with('+')) => return None,
        // `pushd +N` rotates the directory stack: it goes to a directory the words do
        // not name (bash: `pushd /etc; cd p; pushd +1` is back in /etc).
        "pushd" if ops.iter().any(|o| o.starts_with('+')) => return None,
        "tail" | "head" => {}
        "jq" => {
            let filter_given = !ops.is_empty();
            if filter_given {
                let filter = ops.remove(0);
                if !jq_filter_safe(filter) {
                    return None;
                }
            }
            if parsed.has("args") || parsed.has("jsonargs") {
                // The operands after the filter are values, not files.
                ops.clear();
            }
        }
        // The script is the first operand unless `-e` gave it; it must only print.
        "sed" => {
            let mut scripts = parsed.values("expression");
            if scripts.is_empty() {
                if ops.is_empty() {
                    return None;
                }
                scripts.push(ops.remove(0));
            }
            if !super::sed_script::print_only(&scripts.join("\n")) {
                return None;
            }
        }
        // `yq eval FILTER FILE`: the subcommand and filter are not files; reading them
        // as paths only adds reads.
        "yq" if ops.iter().any(|o| !jq_filter_safe(o)) => return None,
        _ => {}
    }
    match e.operands {
        Text => {}
        Files => v.reads.extend(ops.iter().map(|s| (*s).to_string())),
        FilesAtMost(n) => {
            if ops.len() > n {
                return None;
            }
            v.reads.extend(ops.iter().map(|s| (*s).to_string()));
        }
        Chdir => {
            if ops.len() > 1 {
                return None;
            }
            v.chdir_only = true;
        }
        PatternFiles => pattern_files(name, &parsed, ops, &mut v)?,
    }
    match name {
        "diff" => {
            // Directory operands are compared file by file: without `-r` the files of the
            // same name in both (`diff notes ~` reads `~/.pypirc` when `notes/.pypirc`
            // exists), with `-r` the whole trees, through symlinks to directories (unless
            // `--no-dereference`). Both are read as the trees, the one level included.
            let recursive = parsed.has("recursive") || parsed.has_short('r');
            v.recursive.append(&mut v.reads);
            v.follow = recursive && !parsed.has("no-dereference");
        }
        "ls" => listing_ls(&parsed, &mut v),
        "tree" => {
            // A recursive listing: hidden names with `-a`, symlinked directories
            // entered with `-l`.
            listing_tree(&mut v, parsed.has_short('a'), parsed.has_short('l'));
        }
        // `-c`: the operands are lists of names, each named file read. With `-z` the
        // list's own format changes: not modelled.
        n if n.ends_with("sum") && parsed.has("check") => {
            if parsed.has("zero") {
                return None;
            }
            if v.reads.is_empty() {
                v.reads.push("-".to_string());
            }
            v.checksum_lists.append(&mut v.reads);
            if v.checksum_lists.iter().any(|l| l == "-") {
                // The list comes from standard input: its names are unknown here.
                return None;
            }
        }
        // `-s`: one total per operand, no name below it.
        "du" if parsed.has("summarize") && v.reads.is_empty() => v.reads.push(".".to_string()),
        "du" if parsed.has("summarize") => {}
        "du" => {
            // Names of every directory below (and with `-a` every file), through
            // symlinks with `-L`.
            listing_tree(&mut v, true, parsed.has("dereference"));
        }
        _ => {}
    }
    option_reads(&parsed, &mut v);
    v.reads.retain(|r| *r != "-");
    Some(v)
}

/// The words of `ps` that procps reads as written (see its entry): `--long` options (a
/// valued one's value attached or next), clusters of UNIX switches, at most ending in
/// one that takes a value from the next word (`-ef`, `-eo pid,cmd`, `-p 1`), and BSD
/// words of `a u x w f j l v r c h T S` or a list of process ids (`aux`, `auxf`, `ps
/// 123`). Never a value attached to a short option (`-uxe` falls back to BSD `uxe`)
/// or a BSD `e` (the environment).
fn ps_words(rest: &[&str]) -> bool {
    const SWITCHES: &str = "AadefFHjlLNTwycM";
    const VALUED: &str = "CGgoOpqstuU";
    const BSD: &str = "auxwfjlvrchTS";
    const LONG_VALUED: &[&str] = &[
        "--format",
        "--sort",
        "--pid",
        "--ppid",
        "--quick-pid",
        "--sid",
        "--tty",
        "--user",
        "--User",
        "--group",
        "--Group",
        "--cols",
        "--columns",
        "--width",
        "--lines",
        "--rows",
    ];
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        i += 1;
        if w.starts_with("--") {
            if LONG_VALUED.contains(w) {
                i += 1;
            }
            continue;
        }
        if let Some(letters) = w.strip_prefix('-') {
            let n = letters.chars().count();
            if n == 0 {
                return false;
            }
            for (k, c) in letters.chars().enumerate() {
                if VALUED.contains(c) && k + 1 == n {
                    i += 1;
                } else if !SWITCHES.contains(c) {
                    return false;
                }
            }
            continue;
        }
        let pids = w.chars().all(|c| c.is_ascii_digit() || c == ',');
        let bsd = w.chars().all(|c| BSD.contains(c));
        if w.is_empty() || !(pids || bsd) {
            return false;
        }
    }
    true
}

/// `ls`: a directory operand's entries are listed (`.` when none is named); with `-R`
/// its whole tree (through symlinked directories with `-L`); with `-d` only the
/// directory itself is read.
fn listing_ls(parsed: &Parsed, v: &mut Verified) {
    if parsed.has("directory") {
        return;
    }
    if v.reads.is_empty() {
        v.reads.push(".".to_string());
    }
    if parsed.has("recursive") {
        let all = parsed.has("all") || parsed.has("almost-all") || parsed.has_short('f');
        listing_tree(v, all, parsed.has_short('L'));
    } else {
        v.lists.append(&mut v.reads);
    }
}

/// A recursive listing of names of the operands (`.` when none is named).
fn listing_tree(v: &mut Verified, hidden: bool, follow: bool) {
    if v.reads.is_empty() {
        v.reads.push(".".to_string());
    }
    v.recursive.append(&mut v.reads);
    v.names_only = true;
    v.skips_hidden = !hidden;
    v.follow = follow;
}

/// The files option values read (`grep -f F`, `date -r F`).
fn option_reads(parsed: &Parsed, v: &mut Verified) {
    for f in &parsed.found {
        if f.opt.does == Does::Reads
            && let Some(val) = &f.value
        {
            v.reads.push(val.clone());
        }
    }
}

/// grep, rg, fd, jq: a pattern first unless an option gave it, then files; grep's
/// `-r` and rg read directories recursively (`.` when none is named).
fn pattern_files(name: &str, parsed: &Parsed, mut ops: Vec<&str>, v: &mut Verified) -> Option<()> {
    match name {
        "jq" => {
            v.reads.extend(ops.iter().map(|s| (*s).to_string()));
            return Some(());
        }
        "fd" | "fdfind" => {
            // fd lists names; it reads no file's content. Its paths come after the
            // pattern; it walks them (`.` when none), hidden names with `-H`/`-u`,
            // symlinked directories with `-L`.
            if !ops.is_empty() {
                ops.remove(0);
            }
            let mut paths: Vec<String> = ops.iter().map(|s| (*s).to_string()).collect();
            if paths.is_empty() {
                paths.push(".".to_string());
            }
            v.recursive.extend(paths);
            v.names_only = true;
            v.skips_hidden = !(parsed.has("hidden") || parsed.has("unrestricted"));
            v.follow = parsed.has("follow");
            return Some(());
        }
        _ => {}
    }
    let pattern_given = parsed.has("regexp") || parsed.has("file");
    let listing = name == "rg" && (parsed.has("files") || parsed.has("type-list"));
    if !pattern_given && !listing {
        if ops.is_empty() {
            // `grep` with no pattern is a usage error; nothing is read.
            return Some(());
        }
        ops.remove(0);
    }
    let recursive = match name {
        "rg" => true,
        _ => {
            parsed.has("recursive")
                || parsed.has("dereference-recursive")
                || parsed.values("directories").contains(&"recurse")
        }
    };
    // `grep -R` enters symlinked directories, `grep -r` only those named as operands;
    // `rg` only with `-L`/`--follow`.
    v.follow = parsed.has("dereference-recursive") || (name == "rg" && parsed.has("follow"));
    if name == "rg" {
        let unrestricted = parsed
            .found
            .iter()
            .filter(|f| f.opt.short == Some('u'))
            .count();
        v.skips_hidden = !(parsed.has("hidden") || unrestricted >= 2);
    }
    let paths: Vec<String> = ops.iter().map(|s| (*s).to_string()).collect();
    if recursive && name != "rg" {
        v.name_filter = grep_included(parsed);
    }
    if recursive {
        if paths.is_empty() {
            v.recursive.push(".".to_string());
        } else {
            v.recursive.extend(paths);
        }
    } else {
        v.reads.extend(paths);
    }
    Some(())
}

/// The names a recursive grep reads below its directories when its `--include`
/// options choose them: GNU grep reads a file found in the walk when the last of the
/// `--include`/`--exclude`/`--exclude-from` patterns it matches is an `--include`, and
/// one that matches none only when the first such option is not an `--include`. So
/// when the first is an `--include`, a file it reads matches some `--include` (a later
/// `--exclude` only takes more away). Only the patterns `*SUFFIX` with no other
/// wildcard are read here (`--include=*.py`): its `fnmatch` (no `FNM_PERIOD`, no
/// `FNM_CASEFOLD`) matches them exactly when the name ends with SUFFIX, whether it is
/// given the base name or the path. Any other shape, or an exclusion first, keeps every
/// file. The files named on the command line are read in any case.
fn grep_included(parsed: &Parsed) -> Vec<String> {
    let chosen: Vec<(&str, Option<&str>)> = parsed
        .found
        .iter()
        .filter_map(|f| match f.opt.long {
            Some(l @ ("include" | "exclude" | "exclude-from")) => Some((l, f.value.as_deref())),
            _ => None,
        })
        .collect();
    if chosen.first().map(|(l, _)| *l) != Some("include") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (long, value) in chosen {
        if long != "include" {
            continue;
        }
        let Some(suffix) = value.and_then(|p| p.strip_prefix('*')) else {
            return Vec::new();
        };
        if suffix.is_empty() || suffix.contains(['*', '?', '[', ']', '\\', '{', '}', '/']) {
            return Vec::new();
        }
        out.push(format!("*{suffix}"));
    }
    out
}

/// `command -v NAME…` / `command -V NAME…`: describes, runs nothing.
fn command_v(rest: &[&str]) -> Option<Verified> {
    let mut describes = false;
    for w in rest {
        if let Some(flags) = w.strip_prefix('-') {
            if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'v' | 'V' | 'p')) {
                return None;
            }
            describes |= flags.contains(['v', 'V']);
        }
    }
    describes.then(Verified::default)
}

/// `find`'s expression words that take no value (tests, printing actions, operators).
const FIND_NO_VALUE: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-true",
    "-false",
    "-empty",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-d",
    "-follow",
    "-xdev",
    "-mount",
    "-daystart",
    "-noleaf",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-not",
    "!",
    "(",
    ")",
    "\\(",
    "\\)",
    "-a",
    "-and",
    "-o",
    "-or",
    ",",
];

/// `find`'s expression words that take one value (the next word).
pub(super) const FIND_ONE_VALUE: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-maxdepth",
    "-mindepth",
    "-links",
    "-inum",
    "-samefile",
    "-printf",
    "-regextype",
    "-used",
    "-fstype",
    "-context",
];

/// `find`: start paths, then an expression of tests and printing actions only. Any
/// action that runs, deletes or writes (`-exec*`, `-ok*`, `-delete`, `-fprint*`,
/// `-fls`) or a primary not listed makes it not verified.
///
/// find lists the names below its start paths (a recursive listing, judged by the
/// directories it lists), except a query for one literal name (`find / -name apt`,
/// only tests joined by "and"): it prints only entries of the name the command spells,
/// so it tells whether that name exists, not what a directory holds.
fn find(rest: &[&str]) -> Option<Verified> {
    if matches!(rest, ["-version" | "--version" | "-help" | "--help"]) {
        return Some(Verified::default());
    }
    let mut i = 0;
    let mut v = Verified::default();
    // Leading options (`-H -L -P`) before the start paths; the last one counts. `-L`
    // enters symlinked directories; `-H` only start paths, which are resolved anyway.
    while let Some(w) = rest.get(i) {
        match *w {
            "-L" => v.follow = true,
            "-H" | "-P" => v.follow = false,
            _ => break,
        }
        i += 1;
    }
    // find lists the names of everything below its start paths.
    v.names_only = true;
    while let Some(w) = rest.get(i) {
        if w.starts_with('-') || matches!(*w, "!" | "(" | ")" | "\\(" | "\\)" | ",") {
            break;
        }
        v.recursive.push((*w).to_string());
        i += 1;
    }
    let mut branches = false;
    let mut literal_name = false;
    // Before the first `-exec`: the `-name` pattern, `-type f`, and whether anything
    // printed names there (then the filter does not hold for what is printed).
    let mut name_pattern: Option<&str> = None;
    let mut type_file = false;
    let mut printed = false;
    // What the `-exec` commands read besides the names found (`-exec grep -f PATS {} +`),
    // and whether one of them enters a found directory (`-exec grep -R x {} +`).
    let mut exec: Option<Verified> = None;
    while let Some(w) = rest.get(i) {
        if *w == "-exec" {
            let (inner, used) = find_exec_command(rest.get(i + 1..)?)?;
            let ran = exec.get_or_insert_with(Verified::default);
            ran.reads.extend(inner.reads);
            ran.follow |= inner.follow;
            i += 1 + used;
        } else if FIND_NO_VALUE.contains(w) {
            // `-follow` acts as `-L` from where it stands; taken for the whole walk.
            v.follow |= *w == "-follow";
            printed |= exec.is_none() && matches!(*w, "-print" | "-print0" | "-ls");
            branches |= matches!(
                *w,
                "-o" | "-or" | "," | "!" | "-not" | "(" | ")" | "\\(" | "\\)"
            );
            i += 1;
        } else if FIND_ONE_VALUE.contains(w) {
            let value = rest.get(i + 1)?;
            literal_name |= matches!(*w, "-name" | "-iname")
                && !value.is_empty()
                && !value.contains(['*', '?', '[', '\\']);
            if exec.is_none() {
                match *w {
                    "-name" if name_pattern.is_none() => name_pattern = Some(value),
                    "-type" => type_file |= *value == "f",
                    _ => {}
                }
            }
            if matches!(*w, "-newer" | "-anewer" | "-cnewer" | "-samefile") {
                v.reads.push(rest.get(i + 1)?.to_string());
            }
            i += 2;
        } else if w.starts_with("-newer") && w.len() == 8 {
            // `-newerXY REF`
            v.reads.push(rest.get(i + 1)?.to_string());
            i += 2;
        } else {
            return None;
        }
    }
    if v.recursive.is_empty() {
        v.recursive.push(".".to_string());
    }
    if let Some(ran) = exec {
        // The commands read every name found, hidden ones included: the whole walk is
        // read, file by file (a symlinked file as the file it names).
        v.names_only = false;
        v.follow |= ran.follow;
        v.reads.extend(ran.reads);
        // `find DIR -name '*.py' -type f -exec grep -l X {} +`: only regular files
        // named by the pattern reach the command (and only their names are printed),
        // when every test before it must hold (no `-o`, `!`, parentheses).
        if !branches && !printed && type_file {
            v.name_filter = name_pattern
                .filter(|p| name_pattern_plain(p))
                .map(str::to_string)
                .into_iter()
                .collect();
        }
        return Some(v);
    }
    if literal_name && !branches {
        v.reads.append(&mut v.recursive);
        v.names_only = false;
        v.follow = false;
    }
    Some(v)
}

/// A `-name` pattern a glob matcher reads as find's `fnmatch` does: `*`, `?` and plain
/// bracket sets only (no braces, which globset expands and find takes literally; no
/// backslash, `**`, `/`, POSIX classes or a leading `]`).
fn name_pattern_plain(p: &str) -> bool {
    !p.is_empty() && !p.contains(['{', '}', '\\', '/']) && !p.contains("**") && brackets_plain(p)
}

/// Every `[` opens a set of plain characters closed by a `]` (`[ab]`, `[!a-z]`), and
/// no `]` stands alone.
fn brackets_plain(p: &str) -> bool {
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ']' => return false,
            '[' => {
                if matches!(chars.peek(), Some('!' | '^')) {
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    return false;
                }
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == ']' {
                        closed = true;
                        break;
                    }
                    if d == '[' {
                        return false;
                    }
                }
                if !closed {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// Programs a verified program may itself run (the program oracle holds each to this
/// list): Debian's `egrep`/`fgrep` are scripts that run `grep`; Debian's `yq` is a
/// Python wrapper that runs `jq`; git runs git. Interpreters named by a script's `#!`
/// line do not show: the kernel runs them inside the same `execve`.
pub fn helpers(program: &str) -> &'static [&'static str] {
    match program {
        "egrep" | "fgrep" => &["grep"],
        "yq" => &["jq"],
        "git" => &["git"],
        _ => &[],
    }
}

/// Programs a `find -exec` command may be: those the verified table reads, except the
/// ones whose reading needs more than words (git finds a repository and its
/// configuration), builtins `find` cannot run, and `find` itself.
pub fn exec_program(name: &str) -> bool {
    !matches!(
        name,
        "git" | "find" | "command" | "cd" | "pushd" | "dirs" | "type" | "hash"
    ) && (entry(name).is_some()
        || matches!(name, "xxd" | "echo" | "printf" | "test" | "true" | "false"))
}

/// One `-exec PROG ARGS… {} +` / `-exec PROG ARGS… ;` of `find` (the words after
/// `-exec`), as GNU find 4.9 reads it: `;` ends it, and so does `+` right after `{}`
/// (any other `+` is an argument); `{}` stands for each name found. Verified when PROG
/// with its fixed words is, and `{}` is only ever a whole word (find also replaces it
/// inside a word, `{}.bak`, which would name files the walk does not hold). Returns
/// what the command reads besides the names found (each found name is a read of the
/// walk: `composed_reader`) and the number of words used, terminator included.
/// `None`: not verified (`-execdir`, `-ok`, `-okdir` are never; no terminator is not
/// either).
fn find_exec_command(words: &[&str]) -> Option<(Verified, usize)> {
    let mut end = None;
    for (k, w) in words.iter().enumerate() {
        if *w == ";" || (*w == "+" && k > 0 && words.get(k - 1) == Some(&"{}")) {
            end = Some(k);
            break;
        }
    }
    let end = end?;
    Some((composed_reader(words.get(..end)?)?, end + 1))
}

/// A reader run on found names: `inner` is its words with `{}` for each name (`find
/// -exec`, and `xargs` through `composed`). What it reads besides the names, with
/// `follow` set when it enters a name that is a directory. `None` unless PROG is a
/// verified reader `exec_program` accepts, with `{}` only as a whole word.
pub(super) fn composed_reader(inner: &[&str]) -> Option<Verified> {
    let name = *inner.first()?;
    if !exec_program(name) || inner.iter().any(|w| *w != "{}" && w.contains("{}")) {
        return None;
    }
    let v = verify(inner)?;
    if v.chdir_only || !v.checksum_lists.is_empty() {
        return None;
    }
    let found = "{}";
    let enters = v.recursive.iter().chain(&v.lists).any(|r| r == found);
    let mut out = Verified {
        follow: enters,
        ..Verified::default()
    };
    // Fixed operands (`-exec diff {} ref ;`, `-exec grep -f pats {} +`) are read as
    // themselves; a fixed directory the program walks or lists is not modelled here.
    out.reads.extend(v.reads.into_iter().filter(|r| r != found));
    if v.recursive.iter().chain(&v.lists).any(|r| r != found) {
        return None;
    }
    Some(out)
}

/// `awk`/`mawk` as POSIX awk reads its words: options `-F FS`, `-v NAME=V` (a value
/// attached or the next word) and `--` before the program; the program (the first
/// operand) must be in `awk_program`'s subset; each later operand is a file read, or an
/// assignment `NAME=V` of a name awk may be given. Any other option (`-f`, mawk's
/// `-W`, gawk's long options, `-e`) is not verified.
fn awk(rest: &[&str]) -> Option<Verified> {
    let mut i = 0;
    let program = loop {
        let w = *rest.get(i)?;
        i += 1;
        match w {
            "--" => break *rest.get(i).inspect(|_| i += 1)?,
            "-F" => i += 1,
            "-v" => {
                let (name, _) = rest.get(i)?.split_once('=')?;
                if !super::awk_program::assignable(name) {
                    return None;
                }
                i += 1;
            }
            w if w.starts_with("-F") => {}
            w if w.starts_with("-v") => {
                let (name, _) = w.get(2..)?.split_once('=')?;
                if !super::awk_program::assignable(name) {
                    return None;
                }
            }
            w if w.starts_with('-') && w != "-" => return None,
            w => break w,
        }
    };
    if !super::awk_program::print_only(program) {
        return None;
    }
    let mut v = Verified::default();
    for w in rest.get(i..).unwrap_or_default() {
        match w.split_once('=') {
            Some((name, _))
                if name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                if !super::awk_program::assignable(name) {
                    return None;
                }
            }
            // gawk (often what `awk` is) opens a TCP or UDP connection for an operand
            // named `/inet/tcp/0/HOST/PORT` (also `/inet4/`, `/inet6/`) instead of a
            // file: a network access, not a read.
            _ if ["/inet/", "/inet4/", "/inet6/"]
                .iter()
                .any(|p| w.starts_with(p)) =>
            {
                return None;
            }
            _ => v.reads.push((*w).to_string()),
        }
    }
    v.reads.retain(|r| r != "-");
    Some(v)
}

/// `xxd`'s flag words (it reads `-ps` as one word, not a cluster).
const XXD_FLAGS: &[&str] = &[
    "-a",
    "-b",
    "-C",
    "-E",
    "-e",
    "-i",
    "-p",
    "-ps",
    "-plain",
    "-postscript",
    "-r",
    "-u",
    "-d",
    "-h",
    "-v",
    "-version",
];

/// `xxd`'s words that take a (numeric) value, the next word.
const XXD_VALUED: &[&str] = &[
    "-c",
    "-cols",
    "-g",
    "-groupsize",
    "-l",
    "-len",
    "-s",
    "-seek",
    "-o",
];

/// `xxd` reads its options its own way (`-ps`, `-cols 8`): only these exact words, the
/// value options with a numeric value, and at most one operand (a second is written).
fn xxd(rest: &[&str]) -> Option<Verified> {
    let mut i = 0;
    let mut ops = Vec::new();
    while let Some(w) = rest.get(i) {
        if XXD_FLAGS.contains(w) {
            i += 1;
        } else if XXD_VALUED.contains(w) {
            let val = rest.get(i + 1)?;
            let numeric = !val.is_empty()
                && val
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || matches!(c, 'x' | 'X' | '+' | '-'));
            if !numeric {
                return None;
            }
            i += 2;
        } else if w.starts_with('-') && *w != "-" {
            return None;
        } else {
            ops.push((*w).to_string());
            i += 1;
        }
    }
    if ops.len() > 1 {
        return None;
    }
    ops.retain(|o| o != "-");
    Some(Verified {
        reads: ops,
        ..Verified::default()
    })
}

/// Whether a jq/yq filter reads nothing but its input: no environment (`env`, `$ENV`,
/// yq's `strenv`/`envsubst`), no modules or files (`import`, `include`, `input_filename`
/// is harmless, yq's `load*`), no `$__prog_args`-style internals. Identifiers after a
/// `.` are field names (`.env` is a key) and fine.
pub fn jq_filter_safe(filter: &str) -> bool {
    const DENIED: &[&str] = &[
        "env",
        "$ENV",
        "ENV",
        "strenv",
        "envsubst",
        "import",
        "include",
        "modulemeta",
        "get_search_list",
        "get_jq_origin",
        "get_prog_origin",
        "$__prog_args",
        "$__loc__",
        "load",
        "load_str",
        "load_xml",
        "load_props",
        "load_base64",
        "input_line_number",
        "halt_error",
        "@sh",
    ];
    let bytes: Vec<char> = filter.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes.get(i).copied().unwrap_or(' ');
        if c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '@' {
            let start = i;
            i += 1;
            while bytes
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            let word: String = bytes.get(start..i).unwrap_or_default().iter().collect();
            let field = start > 0 && bytes.get(start - 1) == Some(&'.');
            if !field && DENIED.contains(&word.as_str()) {
                return false;
            }
        } else {
            i += 1;
        }
    }
    true
}

/// The names a checksum list holds, as `md5sum -c` reads them (GNU coreutils 9:
/// `HASH  NAME`, `HASH *NAME`, a leading `\\` escaping `\\n` and `\\\\` in the name, and
/// `--tag`'s `ALGO (NAME) = HASH`), blank lines skipped. `None` for any other line
/// (a form this reader does not know may name a file it missed).
pub fn checksum_names(text: &str) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let (escaped, line) = match line.strip_prefix('\\') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let name = if let Some((hash, rest)) = line.split_once(' ') {
            if !hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()) {
                rest.strip_prefix(' ').or_else(|| rest.strip_prefix('*'))?
            } else {
                // `MD5 (NAME) = HASH`
                let (_, tagged) = line.split_once(" (")?;
                let (name, hash) = tagged.rsplit_once(") = ")?;
                if hash.is_empty() || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
                    return None;
                }
                name
            }
        } else {
            return None;
        };
        if name.is_empty() {
            return None;
        }
        let name = if escaped {
            let mut out = String::new();
            let mut chars = name.chars();
            while let Some(c) = chars.next() {
                match (c, c == '\\') {
                    (_, true) => match chars.next() {
                        Some('n') => out.push('\n'),
                        Some('\\') => out.push('\\'),
                        _ => return None,
                    },
                    (c, false) => out.push(c),
                }
            }
            out
        } else {
            name.to_string()
        };
        names.push(name);
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::super::options::Arg;
    use super::*;

    #[test]
    fn checksum_lists_as_md5sum_reads_them() {
        let names = |t: &str| checksum_names(t);
        assert_eq!(
            names("401b30e3b8b5d629635a5c613cdb7919  a.txt\n6b39  .env\n\n"),
            Some(vec!["a.txt".to_string(), ".env".to_string()])
        );
        assert_eq!(names("abcd *bin.dat\n"), Some(vec!["bin.dat".to_string()]));
        assert_eq!(
            names("MD5 (dir/x y) = 401b30e3\n"),
            Some(vec!["dir/x y".to_string()])
        );
        assert_eq!(
            names("\\abcd  a\\\\b\\nc\n"),
            Some(vec!["a\\b\nc".to_string()])
        );
        assert_eq!(names("# comment\n"), None);
        assert_eq!(names("abcd a.txt\n"), None);
        assert_eq!(names("\\abcd  a\\xb\n"), None);
        let v = |s: &str| verify(&s.split_whitespace().collect::<Vec<_>>());
        assert_eq!(
            v("md5sum -c --quiet SUMS").map(|x| x.checksum_lists),
            Some(vec!["SUMS".to_string()])
        );
        assert!(v("md5sum -c").is_none());
        assert!(v("sha256sum -c -").is_none());
        assert!(v("md5sum -cz SUMS").is_none());
    }

    fn v(s: &str) -> Option<Verified> {
        let w: Vec<&str> = s.split_whitespace().collect();
        verify(&w)
    }

    #[test]
    fn specs_parse_to_options() {
        let o = spec_opts("n:lines= c:bytes= q:quiet:silent f:file=< :arg=2 :color?");
        assert!(
            o.iter()
                .any(|x| x.short == Some('n') && x.long == Some("lines"))
        );
        assert!(
            o.iter()
                .any(|x| x.long == Some("silent") && x.short.is_none())
        );
        assert!(
            o.iter()
                .any(|x| x.long == Some("file") && x.does == Does::Reads)
        );
        assert!(o.iter().any(|x| x.long == Some("arg") && x.arg == Arg::Two));
        assert!(
            o.iter()
                .any(|x| x.long == Some("color") && x.arg == Arg::Optional)
        );
    }

    #[test]
    fn no_name_twice() {
        let mut seen = Vec::new();
        for n in names() {
            assert!(!seen.contains(&n), "{n} twice");
            seen.push(n);
        }
    }

    #[test]
    fn safe_and_unsafe_forms() {
        assert_eq!(
            v("cat a b").map(|x| x.reads),
            Some(vec!["a".into(), "b".into()])
        );
        assert!(v("sort -o out a").is_none());
        assert!(v("sort --out=x a").is_none());
        assert!(v("sort --compress-program=gzip a").is_none());
        assert!(v("find . -name x -delete").is_none());
        assert!(v("find . -exec rm {} ;").is_none());
        assert!(v("rg --pre cat x").is_none());
        assert!(v("jq env").is_none());
        assert!(v("jq $ENV.HOME").is_none());
        assert!(v("jq .env package.json").is_some());
        assert!(v("printf -v x y").is_none());
        assert!(v("test -v a[$(id)]").is_none());
        assert!(v("test -f a").is_some());
        assert!(v("date -s now").is_none());
        assert!(v("date 010100002020").is_none());
        assert!(v("uniq a b").is_none());
        assert!(v("xxd -ps a").is_some_and(|x| x.reads == vec!["a".to_string()]));
        assert!(v("xxd a b").is_none());
        assert_eq!(
            v("grep -rn TODO src").map(|x| x.recursive),
            Some(vec!["src".into()])
        );
        assert_eq!(v("rg foo").map(|x| x.recursive), Some(vec![".".into()]));
        assert!(v("./cat x").is_none());
        assert!(v("command rm x").is_none());
        assert!(v("command -v cargo").is_some());
    }

    /// Each program's options as the program itself reads them (checked with strace).
    #[test]
    fn options_are_read_by_each_programs_own_rules() {
        // tree: a cluster's value letters take the next words in turn, so `-Lo 1 F`
        // writes F; `-L2` is a level (tree 2.2), `-L2a` is read differently by versions.
        assert!(v("tree -Lo 1 out").is_none());
        assert!(v("tree -L 1").is_some_and(|x| x.reads.is_empty()));
        assert_eq!(
            v("tree -aL 2 src").map(|x| x.recursive),
            Some(vec!["src".into()])
        );
        assert_eq!(
            v("tree -La 2 src").map(|x| x.recursive),
            Some(vec!["src".into()])
        );
        assert!(v("tree -L2 src").is_some());
        assert!(v("tree -L2a src").is_none());
        assert_eq!(
            v("tree --gitfile f src").map(|x| (x.reads, x.recursive)),
            Some((vec!["f".into()], vec!["src".into()]))
        );
        // rg/fd (clap): `-f=F` reads F, not `=F`.
        assert_eq!(
            v("rg -f=/h/.ssh/id_rsa x").map(|x| x.reads),
            Some(vec!["/h/.ssh/id_rsa".into()])
        );
        // grep (getopt): `-f=F` reads the file `=F`.
        assert_eq!(
            v("grep -f=pats x").map(|x| x.reads),
            Some(vec!["x".into(), "=pats".into()])
        );
        // A short flag whose long form takes an optional value stays a flag: `ls -Fa`
        // is `-F -a`, `yq -ri` is `-r -i` (Go yq's in-place edit).
        assert!(v("yq -ri .a=1 f.yml").is_none());
        assert!(v("yq -r .a f.yml").is_some());
        assert!(v("sort -co out f").is_none());
        // diff's `-C NUM`/`-U NUM` take the next word.
        assert_eq!(
            v("diff -U 3 a b").map(|x| x.recursive),
            Some(vec!["a".into(), "b".into()])
        );
        // Builtins stop at the first operand: `type pwd -a` looks up `-a`.
        assert!(v("cd src -P").is_none());
        assert!(v("pushd +1").is_none());
        assert!(v("du -sh ~/.ssh").is_some_and(|x| x.recursive.is_empty()));
        assert!(v("du -h ~/.ssh").is_some_and(|x| x.names_only));
        assert!(v("pushd src").is_some());
    }

    /// `find -exec PROG … {} +` / `;` as GNU find 4.9 reads it (each form run): the walk
    /// is read file by file, the fixed words as PROG reads them.
    #[test]
    fn find_exec_of_a_verified_reader_reads_the_walk() {
        let walk = |s: &str| v(s).map(|x| (x.recursive, x.names_only, x.follow, x.reads));
        assert_eq!(
            walk("find . -name *.rs -exec grep -l TODO {} +"),
            Some((vec![".".into()], false, false, vec![]))
        );
        assert_eq!(
            walk("find src -type f -exec wc -l {} ;"),
            Some((vec!["src".into()], false, false, vec![]))
        );
        // A literal name no longer says only whether it exists: the files are read.
        assert_eq!(
            walk("find / -name apt -exec cat {} +"),
            Some((vec!["/".into()], false, false, vec![]))
        );
        assert_eq!(
            walk("find . -exec grep -f pats {} +"),
            Some((vec![".".into()], false, false, vec!["pats".into()]))
        );
        // A reader that enters what it is given enters found symlinks to directories.
        assert_eq!(
            walk("find docs -type d -exec ls {} +").map(|w| w.2),
            Some(true)
        );
        assert_eq!(walk("find -L docs -exec cat {} +").map(|w| w.2), Some(true));
        // `+` ends the command only right after `{}`; `\;` is an argument.
        assert!(v("find . -exec echo + {} +").is_some());
        assert!(v("find . -exec cat {} x +").is_none());
        assert!(v("find . -exec cat {} \\;").is_none());
        // Never verified: a program that writes or runs, a name inside a word, the
        // other running actions, checksum lists, git, find itself.
        assert!(v("find . -exec rm {} +").is_none());
        assert!(v("find . -exec sort -o out {} +").is_none());
        assert!(v("find . -exec cat {}.bak ;").is_none());
        assert!(v("find . -exec cat {} + -delete").is_none());
        assert!(v("find . -execdir cat {} +").is_none());
        assert!(v("find . -ok cat {} ;").is_none());
        assert!(v("find . -exec sh -c cat {} +").is_none());
        assert!(v("find . -exec md5sum -c {} +").is_none());
        assert!(v("find . -exec git log {} +").is_none());
        assert!(v("find . -exec find {} -delete ;").is_none());
        assert!(v("find . -exec ./cat {} +").is_none());
        assert!(v("find . -exec diff -r {} ref ;").is_none());
        assert!(v("find . -exec cat {} + -fprint out").is_none());
    }

    /// `sed` with a printing script reads its files; any other script, `-i`, `-f` is
    /// not verified (each run with GNU sed 4.9 under strace).
    #[test]
    fn sed_reads_its_files_with_a_printing_script() {
        assert_eq!(
            v("sed -n 1,20p src/main.rs").map(|x| x.reads),
            Some(vec!["src/main.rs".into()])
        );
        assert_eq!(
            v("sed -n -e 1p -e $p a b").map(|x| x.reads),
            Some(vec!["a".into(), "b".into()])
        );
        assert!(v("sed -n /KEY/p").is_some_and(|x| x.reads.is_empty()));
        assert!(v("sed -n 1w.out a").is_none());
        assert!(v("sed -i s/a/b/ a").is_none());
        assert!(v("sed -n -f script a").is_none());
        assert!(v("sed -n 1e.id a").is_none());
        assert!(v("sed -n 1r.~/.ssh/id_rsa a").is_none());
        assert!(v("sed --in-place s/a/b/ a").is_none());
        assert!(v("sed -n").is_none());
        // An abbreviation of a long option is not read (`--e` could be `--expression`).
        assert!(v("sed --quie 1p a").is_none());
    }

    /// `awk` with a program of the subset reads its files (mawk 1.3.4, traced).
    #[test]
    fn awk_reads_its_files_with_a_program_of_the_subset() {
        let w = |s: &[&str]| verify(s).map(|x| x.reads);
        assert_eq!(
            w(&["awk", "-F:", "{print $1}", "/etc/passwd"]),
            Some(vec!["/etc/passwd".into()])
        );
        assert_eq!(
            w(&["awk", "-v", "n=2", "NR>n", "a", "x=1", "b"]),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(w(&["mawk", "--", "{print}", "-"]), Some(vec![]));
        assert!(w(&["awk", "-f", "p.awk", "a"]).is_none());
        assert!(w(&["awk", "-W", "exec", "p.awk"]).is_none());
        assert!(w(&["awk", "--source", "{print}", "a"]).is_none());
        assert!(w(&["awk", r#"{print > "o"}"#, "a"]).is_none());
        assert!(w(&["awk", "-v", "ARGV=x", "{print}", "a"]).is_none());
        assert!(w(&["awk", "{print}", "ARGC=3", "a"]).is_none());
        assert!(w(&["awk", r#"BEGIN{system("id")}"#]).is_none());
        assert!(w(&["awk"]).is_none());
        assert!(w(&["awk", "--"]).is_none());
        // gawk connects for these names (traced: connect() to 127.0.0.1).
        assert!(w(&["awk", "{print}", "/inet/tcp/0/127.0.0.1/9"]).is_none());
        assert!(w(&["awk", "{print}", "a", "/inet6/udp/0/::1/53"]).is_none());
        assert!(w(&["awk", "{print}", "inet/tcp/0/h/1"]).is_some());
    }

    /// `ps` and `pgrep` (procps-ng 4.0.2, traced): their plain forms; never `ps`'s
    /// BSD `e`, a value glued to a short option (read again as BSD words), `pgrep -F`.
    #[test]
    fn process_listers_in_their_plain_forms() {
        let w = |s: &[&str]| verify(s);
        for ok in [
            &["ps", "aux"][..],
            &["ps", "-ef"],
            &["ps", "auxf"],
            &["ps", "-eo", "pid,ppid,cmd", "--sort=-pid"],
            &["ps", "-p", "123", "-o", "pid,cmd"],
            &["ps", "--no-headers", "-o", "pid", "-C", "node"],
            &["pgrep", "-f", "extract_single.py"],
            &["pgrep", "-af", "node"],
        ] {
            assert!(w(ok).is_some(), "{ok:?}");
        }
        for no in [
            &["ps", "aux", "e"][..],
            &["ps", "eww"],
            &["ps", "-auxe"],
            &["ps", "-exx"],
            &["ps", "-eo", "pid,args", "e"],
            &["ps", "-uroot"],
            &["pgrep", "-F", "/tmp/pids"],
            &["pgrep", "--signal", "9", "x"],
        ] {
            assert!(w(no).is_none(), "{no:?}");
        }
    }

    /// `od` and `strings` (each traced): the files named are read; `strings @FILE`
    /// takes options from FILE.
    #[test]
    fn byte_dumps_read_their_files() {
        assert_eq!(
            v("od -A x -t x1z -N 8 f.bin").map(|x| x.reads),
            Some(vec!["f.bin".into()])
        );
        assert_eq!(
            v("strings -a -n 8 -t x a.out").map(|x| x.reads),
            Some(vec!["a.out".into()])
        );
        assert!(v("strings -8 a.out").is_some());
        assert!(v("strings @opts a.out").is_none());
        assert!(v("strings -T plugin a.out").is_none());
        assert!(v("od --traditional f 1").is_none());
        assert!(v("od --str f").is_none());
    }

    /// Recursive readers and listings follow symlinked directories exactly when the
    /// program does (each checked on the real program with a link to `~/.aws`).
    #[test]
    fn recursive_readers_follow_what_the_program_follows() {
        let follows = |s: &str| v(s).map(|x| x.follow);
        assert_eq!(follows("grep -R x docs"), Some(true));
        assert_eq!(follows("grep -r x docs"), Some(false));
        assert_eq!(follows("rg -L x docs"), Some(true));
        assert_eq!(follows("rg x docs"), Some(false));
        assert_eq!(follows("diff -r a b"), Some(true));
        assert_eq!(follows("find -L docs"), Some(true));
        assert_eq!(follows("find docs -follow"), Some(true));
        assert_eq!(follows("find docs"), Some(false));
        assert_eq!(follows("du -aL docs"), Some(true));
        assert_eq!(follows("ls -RL docs"), Some(true));
        assert_eq!(follows("tree -l docs"), Some(true));
        assert_eq!(follows("tree docs"), Some(false));
        assert_eq!(follows("fd -L x docs"), Some(true));
        // Listings read names: `ls DIR` lists, `ls -d DIR` reads the directory only.
        assert_eq!(
            v("ls -la ~/.ssh").map(|x| x.lists),
            Some(vec!["~/.ssh".into()])
        );
        assert!(v("ls -d ~/.ssh").is_some_and(|x| x.lists.is_empty()));
        assert!(v("find ~/.ssh").is_some_and(|x| x.names_only));
        assert!(v("find ~/.ssh -name 'id_*'").is_some_and(|x| x.names_only));
        assert!(v("find ~/.ssh -name a -o -print").is_some_and(|x| x.names_only));
        assert_eq!(
            v("find / -type d -name apt").map(|x| (x.reads, x.recursive)),
            Some((vec!["/".into()], vec![]))
        );
    }
}
