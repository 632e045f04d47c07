//! Ordinary programs in the table: the network commands, the filesystem verbs and their
//! path operands (seed §3.4, §3.5), and the grammars of tools whose options read,
//! write or run something (`wc --files0-from`, `sort --compress-program`/`-o`, `tar
//! --to-command`/`-I`/`--checkpoint-action`/`-f`/`-x`, `rsync -e`, `zip -TT`, `man -P`,
//! `less +!cmd`), `ip netns exec NAME cmd` (the one `ip` form that runs a command), or
//! whose long options the floor must see spelled out (`rm --rec
//! --for`).

use super::description::{Description, Via};
use super::options::{Abbrev, Arg, Does, Grammar, Opt, Value, l, parse, s, sl};
use super::{Example, Program, Role, basename};

const N: Arg = Arg::No;
const V: Arg = Arg::Required;
const OPT: Arg = Arg::Optional;
const NO: Does = Does::Nothing;

/// Command words that carry `network.access` (seed §3.4, plus the obvious siblings).
pub const NETWORK_COMMANDS: &[&str] = &[
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "ssh",
    "scp",
    "sftp",
    "ftp",
    "telnet",
    "ping",
    "dig",
    "nslookup",
    "socat",
    "ssh-copy-id",
    "aria2c",
    "http",
    "https",
    "xh",
    "lftp",
    "tftp",
    "mosh",
    "whois",
    "host",
    "traceroute",
    "nmap",
    "mtr",
    "websocat",
    "torsocks",
    "proxychains",
    "proxychains4",
];

/// Filesystem verbs whose path arguments are checked against the project (seed §3.5).
pub const FS_VERBS: &[&str] = &[
    "rm", "cp", "mv", "mkdir", "rmdir", "touch", "chmod", "chown", "ln", "dd", "tee", "truncate",
    "install",
];

/// Whether `words` (command word first, compared by basename) opens a network connection by name.
pub fn is_network_command(words: &[String]) -> bool {
    let Some(cmd) = words.first().map(|w| basename(w)) else {
        return false;
    };
    if NETWORK_COMMANDS.contains(&cmd) {
        return true;
    }
    // rsync only with a remote argument: `host:path`, `user@host:path` or `rsync://`.
    cmd == "rsync"
        && words
            .iter()
            .skip(1)
            .any(|w| !w.starts_with('-') && (w.starts_with("rsync://") || is_remote_spec(w)))
}

fn is_remote_spec(w: &str) -> bool {
    match w.split_once(':') {
        Some((host, _)) => !host.is_empty() && !host.contains('/'),
        None => false,
    }
}

/// The non-flag arguments of a filesystem verb (seed §3.5): the words checked against
/// the project. `dd` contributes its `of=` target.
pub fn fs_verb_arguments(words: &[String]) -> Vec<&str> {
    let Some(cmd) = words.first().map(|w| basename(w)) else {
        return Vec::new();
    };
    if !FS_VERBS.contains(&cmd) {
        return Vec::new();
    }
    if cmd == "dd" {
        return words
            .iter()
            .skip(1)
            .filter_map(|w| w.strip_prefix("of="))
            .collect();
    }
    let mut out = Vec::new();
    let mut after_dashdash = false;
    for w in words.iter().skip(1) {
        if !after_dashdash && w == "--" {
            after_dashdash = true;
        } else if after_dashdash || !w.starts_with('-') || w == "-" {
            out.push(w.as_str());
        }
    }
    // chmod's and chown's first operand is a mode or an owner, not a path.
    if (cmd == "chmod" || cmd == "chown") && !out.is_empty() {
        out.remove(0);
    }
    out
}

const RM: &[Opt] = &[
    sl('f', "force", N, NO),
    s('i', N, NO),
    s('I', N, NO),
    l("interactive", OPT, NO),
    l("one-file-system", N, NO),
    l("no-preserve-root", N, NO),
    l("preserve-root", OPT, NO),
    sl('r', "recursive", N, NO),
    s('R', N, NO),
    sl('d', "dir", N, NO),
    sl('v', "verbose", N, NO),
    l("help", N, NO),
    l("version", N, NO),
];

const CHMOD: &[Opt] = &[
    sl('c', "changes", N, NO),
    sl('f', "silent", N, NO),
    l("quiet", N, NO),
    sl('v', "verbose", N, NO),
    l("no-preserve-root", N, NO),
    l("preserve-root", N, NO),
    l("reference", V, Does::Reads),
    sl('R', "recursive", N, NO),
    l("help", N, NO),
    l("version", N, NO),
];

const CHOWN: &[Opt] = &[
    sl('c', "changes", N, NO),
    sl('f', "silent", N, NO),
    l("quiet", N, NO),
    sl('v', "verbose", N, NO),
    l("dereference", N, NO),
    sl('h', "no-dereference", N, NO),
    l("from", V, NO),
    l("no-preserve-root", N, NO),
    l("preserve-root", N, NO),
    l("reference", V, Does::Reads),
    sl('R', "recursive", N, NO),
    s('H', N, NO),
    s('L', N, NO),
    s('P', N, NO),
    l("help", N, NO),
    l("version", N, NO),
];

const WC: &[Opt] = &[
    sl('c', "bytes", N, NO),
    sl('m', "chars", N, NO),
    sl('l', "lines", N, NO),
    l("files0-from", V, Does::ReadsList),
    sl('L', "max-line-length", N, NO),
    sl('w', "words", N, NO),
    l("total", V, NO),
    l("help", N, NO),
    l("version", N, NO),
];

const SORT: &[Opt] = &[
    sl('b', "ignore-leading-blanks", N, NO),
    sl('d', "dictionary-order", N, NO),
    sl('f', "ignore-case", N, NO),
    sl('g', "general-numeric-sort", N, NO),
    sl('i', "ignore-nonprinting", N, NO),
    sl('M', "month-sort", N, NO),
    sl('h', "human-numeric-sort", N, NO),
    sl('n', "numeric-sort", N, NO),
    sl('R', "random-sort", N, NO),
    l("random-source", V, Does::Reads),
    sl('r', "reverse", N, NO),
    l("sort", V, NO),
    sl('V', "version-sort", N, NO),
    l("batch-size", V, NO),
    sl('c', "check", OPT, NO),
    s('C', N, NO),
    // A program name: sort runs it directly, with no arguments and no shell
    // (`--compress-program='touch m'` runs nothing, checked).
    l(
        "compress-program",
        V,
        Does::Runs("runs the program to compress temporary files"),
    ),
    l("debug", N, NO),
    l("files0-from", V, Does::ReadsList),
    sl('k', "key", V, NO),
    sl('m', "merge", N, NO),
    sl('o', "output", V, Does::Writes),
    sl('s', "stable", N, NO),
    sl('S', "buffer-size", V, NO),
    sl('t', "field-separator", V, NO),
    sl('T', "temporary-directory", V, NO),
    l("parallel", V, NO),
    sl('u', "unique", N, NO),
    sl('z', "zero-terminated", N, NO),
    l("help", N, NO),
    l("version", N, NO),
];

const TAR_RUNS_COMPRESSOR: Does =
    Does::RunsCode(Value::Shell, "runs the command to compress or decompress");

/// GNU tar (partial: tar has many more options; a prefix of a listed one counts as it).
/// tar hands `-I`, `--to-command`, `--checkpoint-action=exec=`, `-F` and
/// `--new-volume-script` to `/bin/sh -c`, in the directory tar started in (`-C`
/// does not move them), and runs `--rsh-command`/`--rmt-command` directly as
/// programs (all checked with markers, GNU tar 1.34).
const TAR: &[Opt] = &[
    sl('f', "file", V, NO),
    sl('C', "directory", V, Does::Chdir),
    sl('T', "files-from", V, Does::ReadsList),
    sl('X', "exclude-from", V, Does::Reads),
    l(
        "to-command",
        V,
        Does::RunsCode(Value::Shell, "pipes each extracted file to the command"),
    ),
    l(
        "checkpoint-action",
        V,
        Does::RunsCode(
            Value::ShellAfter("exec="),
            "runs `exec=` actions at each checkpoint",
        ),
    ),
    sl('I', "use-compress-program", V, TAR_RUNS_COMPRESSOR),
    l(
        "rsh-command",
        V,
        Does::Runs("runs the command to reach a remote archive"),
    ),
    l(
        "rmt-command",
        V,
        Does::Runs("runs the command as the remote tape server"),
    ),
    sl(
        'F',
        "info-script",
        V,
        Does::RunsCode(Value::Shell, "runs the command at the end of each volume"),
    ),
    l(
        "new-volume-script",
        V,
        Does::RunsCode(Value::Shell, "runs the command at the end of each volume"),
    ),
    sl('x', "extract", N, NO),
    l("get", N, NO),
    sl('c', "create", N, NO),
    sl('t', "list", N, NO),
    sl('r', "append", N, NO),
    sl('u', "update", N, NO),
    sl('A', "catenate", N, NO),
    l("delete", N, NO),
    sl('d', "diff", N, NO),
    sl('P', "absolute-names", N, NO),
    sl('z', "gzip", N, NO),
    sl('j', "bzip2", N, NO),
    sl('J', "xz", N, NO),
    sl('Z', "compress", N, NO),
    sl('a', "auto-compress", N, NO),
    sl('v', "verbose", N, NO),
    sl('k', "keep-old-files", N, NO),
    sl('O', "to-stdout", N, NO),
    sl('p', "preserve-permissions", N, NO),
    sl('h', "dereference", N, NO),
    sl('b', "blocking-factor", V, NO),
    sl('H', "format", V, NO),
    sl('K', "starting-file", V, NO),
    sl('L', "tape-length", V, NO),
    sl('N', "newer", V, NO),
    sl('V', "label", V, NO),
    sl('g', "listed-incremental", V, NO),
    l("exclude", V, NO),
    l("strip-components", V, NO),
    l("transform", V, NO),
    l("owner", V, NO),
    l("group", V, NO),
    l("mode", V, NO),
    l("mtime", V, NO),
];

/// rsync (partial). `-e` is split into words by rsync itself (quotes honoured, no
/// shell); `--rsync-path` is put into the command line the remote shell runs.
const RSYNC: &[Opt] = &[
    sl(
        'e',
        "rsh",
        V,
        Does::RunsCode(Value::Words, "runs the command as the remote shell"),
    ),
    l(
        "rsync-path",
        V,
        Does::RunsCode(
            Value::Shell,
            "runs the command as the remote rsync, through the remote's shell",
        ),
    ),
    l("files-from", V, Does::ReadsList),
    l("exclude-from", V, Does::Reads),
    l("include-from", V, Does::Reads),
    l("password-file", V, Does::Reads),
    l("read-batch", V, Does::Reads),
    l("log-file", V, Does::Writes),
    l("write-batch", V, Does::Writes),
    l("only-write-batch", V, Does::Writes),
    sl('f', "filter", V, NO),
    sl('B', "block-size", V, NO),
    sl('T', "temp-dir", V, NO),
    sl('M', "remote-option", V, NO),
    l("exclude", V, NO),
    l("include", V, NO),
];

/// zip (partial): `-TT CMD` is a two-letter option, handled in `describe`. zip hands
/// the command to the shell (`-T -TT 'touch m; true'` runs `touch`, checked).
const ZIP: &[Opt] = &[l(
    "unzip-command",
    V,
    Does::RunsCode(Value::Shell, "runs the command to test the archive"),
)];

/// systemctl (partial): the options that take a value, so that an abbreviated one
/// (`systemctl --hos h reboot`) is spelled out for the floor, which skips its value.
const SYSTEMCTL: &[Opt] = &[
    sl('H', "host", V, NO),
    sl('M', "machine", V, NO),
    sl('t', "type", V, NO),
    sl('p', "property", V, NO),
    sl('s', "signal", V, NO),
    sl('n', "lines", V, NO),
    sl('o', "output", V, NO),
    l("root", V, NO),
    l("image", V, NO),
    l("when", V, NO),
    l("state", V, NO),
    l("kill-whom", V, NO),
    l("kill-value", V, NO),
    l("what", V, NO),
    l("job-mode", V, NO),
    l("message", V, NO),
    l("timestamp", V, NO),
    l("reboot-argument", V, NO),
    l("boot-loader-menu", V, NO),
    l("boot-loader-entry", V, NO),
    l("drop-in", V, NO),
];

/// ssh (`ssh(1)`, OpenSSH 9). Options that run something here, on this machine: a
/// `-o` option naming a local command (see `ssh_options`), `-F` a config file whose
/// `ProxyCommand`/`LocalCommand`/`Match exec` run, `-I` a PKCS#11 library it loads. The
/// remote command runs on the other host and is not read as code here.
const SSH: &[Opt] = &[
    s('4', N, NO),
    s('6', N, NO),
    s('A', N, NO),
    s('a', N, NO),
    s('C', N, NO),
    s('f', N, NO),
    s('G', N, NO),
    s('g', N, NO),
    s('K', N, NO),
    s('k', N, NO),
    s('M', N, NO),
    s('N', N, NO),
    s('n', N, NO),
    s('q', N, NO),
    s('s', N, NO),
    s('T', N, NO),
    s('t', N, NO),
    s('V', N, NO),
    s('v', N, NO),
    s('X', N, NO),
    s('x', N, NO),
    s('Y', N, NO),
    s('y', N, NO),
    s('B', V, NO),
    s('b', V, NO),
    s('c', V, NO),
    s('D', V, NO),
    s('E', V, Does::Writes),
    s('e', V, NO),
    s('F', V, SSH_CONFIG),
    s('I', V, SSH_PKCS11),
    s('i', V, NO),
    s('J', V, NO),
    s('L', V, NO),
    s('l', V, NO),
    s('m', V, NO),
    s('O', V, NO),
    s('o', V, NO),
    s('P', V, NO),
    s('p', V, NO),
    s('Q', V, NO),
    s('R', V, NO),
    s('S', V, NO),
    s('W', V, NO),
    s('w', V, NO),
];

const SSH_CONFIG: Does =
    Does::RunsFile("reads a config file, whose ProxyCommand, LocalCommand or Match exec run");
const SSH_PKCS11: Does = Does::RunsFile("loads the PKCS#11 library into ssh");

/// scp (`scp(1)`): `-S PROGRAM` runs that program in place of ssh.
const SCP: &[Opt] = &[
    s('3', N, NO),
    s('4', N, NO),
    s('6', N, NO),
    s('A', N, NO),
    s('B', N, NO),
    s('C', N, NO),
    s('O', N, NO),
    s('p', N, NO),
    s('q', N, NO),
    s('R', N, NO),
    s('r', N, NO),
    s('s', N, NO),
    s('T', N, NO),
    s('v', N, NO),
    s('c', V, NO),
    s('D', V, Does::Runs("runs the program as the sftp server")),
    s('F', V, SSH_CONFIG),
    s('i', V, NO),
    s('J', V, NO),
    s('l', V, NO),
    s('o', V, NO),
    s('P', V, NO),
    s('S', V, Does::Runs("runs the program in place of ssh")),
    s('X', V, NO),
];

/// sftp (`sftp(1)`): `-S PROGRAM` runs in place of ssh, `-D COMMAND` is a local sftp
/// server it starts.
const SFTP: &[Opt] = &[
    s('4', N, NO),
    s('6', N, NO),
    s('A', N, NO),
    s('a', N, NO),
    s('C', N, NO),
    s('f', N, NO),
    s('N', N, NO),
    s('p', N, NO),
    s('q', N, NO),
    s('r', N, NO),
    s('v', N, NO),
    s('B', V, NO),
    s('b', V, Does::Reads),
    s('c', V, NO),
    s(
        'D',
        V,
        Does::RunsCode(Value::Words, "starts the command as a local sftp server"),
    ),
    s('F', V, SSH_CONFIG),
    s('i', V, NO),
    s('J', V, NO),
    s('l', V, NO),
    s('o', V, NO),
    s('P', V, NO),
    s('R', V, NO),
    s(
        'S',
        V,
        Does::RunsCode(Value::Words, "runs the program in place of ssh"),
    ),
    s('s', V, NO),
    s('X', V, NO),
];

/// ssh options (`ssh_config(5)`) whose value is a command run on this machine, by the
/// user's shell.
const SSH_COMMAND_OPTIONS: &[(&str, &str)] = &[
    ("proxycommand", "runs the command to reach the host"),
    (
        "localcommand",
        "runs the command on this machine after connecting",
    ),
    ("knownhostscommand", "runs the command to list host keys"),
];

/// man (partial). man-db splits the pager's command line into words itself (`-P
/// 'touch m; cat'` touches `m;` and `cat`, checked).
const MAN: &[Opt] = &[
    sl(
        'P',
        "pager",
        V,
        Does::RunsCode(Value::Words, "runs the pager it names"),
    ),
    sl('H', "html", OPT, Does::Runs("runs the browser it names")),
    sl('C', "config-file", V, Does::Reads),
];

/// tree 2.x (checked with strace, tree 2.1.0): `-o FILE` writes FILE, `--gitfile`,
/// `--infofile`, `--hintro`, `--houtro` name files it reads. Its own parser gives each
/// value letter of a cluster the next word in turn (`tree -Lo 1 F` writes F).
const TREE: &[Opt] = &[
    s('L', V, NO),
    s('P', V, NO),
    s('I', V, NO),
    s('o', V, Does::Writes),
    s('H', V, NO),
    s('T', V, NO),
    l("gitfile", V, Does::Reads),
    l("infofile", V, Does::Reads),
    l("hintro", V, Does::Reads),
    l("houtro", V, Does::Reads),
    l("charset", V, NO),
    l("filelimit", V, NO),
    l("timefmt", V, NO),
    l("sort", V, NO),
    l("gitignore", N, NO),
    l("ignore-case", N, NO),
    l("matchdirs", N, NO),
    l("metafirst", N, NO),
    l("prune", N, NO),
    l("info", N, NO),
    l("noreport", N, NO),
    l("du", N, NO),
    l("si", N, NO),
    l("dirsfirst", N, NO),
    l("filesfirst", N, NO),
    l("inodes", N, NO),
    l("device", N, NO),
    l("nolinks", N, NO),
    l("fflinks", N, NO),
    l("fromfile", N, NO),
    l("help", N, NO),
    l("version", N, NO),
    s('a', N, NO),
    s('d', N, NO),
    s('l', N, NO),
    s('f', N, NO),
    s('x', N, NO),
    s('R', N, NO),
    s('q', N, NO),
    s('N', N, NO),
    s('Q', N, NO),
    s('p', N, NO),
    s('u', N, NO),
    s('g', N, NO),
    s('s', N, NO),
    s('h', N, NO),
    s('D', N, NO),
    s('F', N, NO),
    s('v', N, NO),
    s('t', N, NO),
    s('c', N, NO),
    s('U', N, NO),
    s('r', N, NO),
    s('A', N, NO),
    s('S', N, NO),
    s('n', N, NO),
    s('C', N, NO),
    s('J', N, NO),
    s('X', N, NO),
    s('i', N, NO),
];

const fn tool(
    names: &'static [&'static str],
    grammar: Grammar,
    examples: &'static [Example],
) -> Program {
    Program {
        names,
        grammar,
        role: Role::Tool,
        examples,
    }
}

const U: Abbrev = Abbrev::Unique;

pub const PROGRAMS: &[Program] = &[
    tool(
        &["rm"],
        Grammar::new(RM, U),
        &[Example::new("rm --rec --for /"), Example::new("rm -rf x")],
    ),
    tool(
        &["chmod"],
        Grammar::new(CHMOD, U),
        &[Example::new("chmod --rec 777 /")],
    ),
    tool(
        &["chown", "chgrp"],
        Grammar::new(CHOWN, U),
        &[Example::new("chown --reference=a b").reads(&["a"])],
    ),
    tool(
        &["wc"],
        Grammar::new(WC, U),
        &[
            Example::new("wc --files0-from=F").reads(&["F"]).opaque(),
            Example::new("wc --files0=F").reads(&["F"]).opaque(),
            Example::new("wc -l a"),
        ],
    ),
    tool(
        &["tree"],
        Grammar::new(TREE, Abbrev::None).tree(),
        &[
            Example::new("tree -o out .").writes(&["out"]),
            Example::new("tree -Lo 1 out").writes(&["out"]),
            Example::new("tree -Io x out .").writes(&["out"]),
            Example::new("tree -L2 -a src"),
        ],
    ),
    tool(
        &["sort"],
        Grammar::new(SORT, U),
        &[
            Example::new("sort --compress-program=x a").runs(),
            Example::new("sort --compress-p x a").runs(),
            Example::new("sort -o out a").writes(&["out"]),
            Example::new("sort -k2 -n a"),
        ],
    ),
    tool(
        &["tar", "gtar"],
        Grammar::new(TAR, U).partial(),
        &[
            Example::new("tar --to-command=x -xf a.tar")
                .runs()
                .reads(&["a.tar"])
                .writes(&["."]),
            Example::new("tar --to-com=x -xf a.tar")
                .runs()
                .reads(&["a.tar"])
                .writes(&["."]),
            Example::new("tar -I x -xf a.tar -C out")
                .runs()
                .reads(&["a.tar"])
                .writes(&["out"]),
            Example::new("tar --checkpoint=1 --checkpoint-action=exec=x -cf a.tar src")
                .runs()
                .writes(&["a.tar"]),
            Example::new("tar xzf a.tgz")
                .reads(&["a.tgz"])
                .writes(&["."]),
            Example::new("tar czf out.tgz src").writes(&["out.tgz"]),
            Example::new("tar -tf a.tar").reads(&["a.tar"]),
            Example::new("tar -xPf a.tar")
                .reads(&["a.tar"])
                .writes(&["/"]),
            Example::new("tar -I x;y -cf a.tar f")
                .runs()
                .code("x;y")
                .writes(&["a.tar"]),
            Example::new("tar cIf x;y a.tar f")
                .runs()
                .code("x;y")
                .writes(&["a.tar"]),
            Example::new("tar --checkpoint-action=exec=x;y -cf a.tar f")
                .runs()
                .code("x;y")
                .writes(&["a.tar"]),
            Example::new("tar --checkpoint-action=dot;x -cf a.tar f")
                .runs()
                .writes(&["a.tar"]),
        ],
    ),
    tool(
        &["rsync"],
        Grammar::new(RSYNC, U).partial(),
        &[
            Example::new("rsync -e x a h:b").runs(),
            Example::new("rsync -e x;y a h:b").runs().code("x;y"),
            Example::new("rsync --rsync-path=x a h:b").runs(),
            Example::new("rsync -a src/ dst/"),
        ],
    ),
    tool(
        &["zip"],
        Grammar::new(ZIP, U).partial(),
        &[
            Example::new("zip -T -TT x a.zip").runs(),
            Example::new("zip -T -TT=x;y a.zip").runs().code("x;y"),
            Example::new("zip -T --unzip-com=x a.zip").runs(),
            Example::new("zip -r a.zip src"),
        ],
    ),
    tool(
        &["man"],
        Grammar::new(MAN, U).partial(),
        &[
            Example::new("man -P x ls").runs(),
            Example::new("man -Px;y ls").runs().code("x;y"),
            Example::new("man ls"),
        ],
    ),
    tool(
        &["systemctl"],
        Grammar::new(SYSTEMCTL, U).partial(),
        &[
            Example::new("systemctl --hos h reboot"),
            Example::new("systemctl status"),
        ],
    ),
    tool(
        &["ip"],
        Grammar::new(&[], Abbrev::None).partial(),
        &[
            Example::new("ip netns exec ns1 rm -rf /").inner("rm -rf /"),
            Example::new("ip -all netns exec rm -rf /").inner("rm -rf /"),
            Example::new("ip -n ns1 addr"),
            Example::new("ip addr show"),
        ],
    ),
    tool(
        &["ssh"],
        Grammar::wrapper(SSH, Abbrev::None),
        &[
            Example::new("ssh -o ProxyCommand=x;y h").runs().code("x;y"),
            Example::new("ssh -oProxyCommand=nc h").runs(),
            Example::new("ssh -o LocalCommand=x;y -o PermitLocalCommand=yes h")
                .runs()
                .code("x;y"),
            Example::new("ssh -F cfg h").runs().reads(&["cfg"]),
            Example::new("ssh -o ProxyCommand=none h"),
            Example::new("ssh -p 22 -i key h uptime"),
            Example::new("ssh -Z h").opaque(),
        ],
    ),
    tool(
        &["scp"],
        Grammar::wrapper(SCP, Abbrev::None),
        &[
            Example::new("scp -S x a h:b").runs(),
            Example::new("scp -o ProxyCommand=x;y a h:b")
                .runs()
                .code("x;y"),
            Example::new("scp -P 22 a h:b"),
        ],
    ),
    tool(
        &["sftp"],
        Grammar::wrapper(SFTP, Abbrev::None),
        &[
            Example::new("sftp -S x;y h").runs().code("x;y"),
            Example::new("sftp -D x;y").runs().code("x;y"),
            Example::new("sftp -o ProxyCommand=x;y h")
                .runs()
                .code("x;y"),
            Example::new("sftp -P 22 h"),
        ],
    ),
    tool(
        &["less"],
        Grammar::new(&[], Abbrev::None).partial(),
        &[
            Example::new("less +!x a").runs(),
            Example::new("less +!x;y a").runs().code("x;y"),
            Example::new("less +G a"),
            Example::new("less -N a"),
        ],
    ),
];

/// What a tool's options read, write and run. `words[0]` is the tool.
pub fn describe(p: &'static Program, words: &[&str], d: &mut Description) {
    let name = basename(words.first().copied().unwrap_or_default());
    match name {
        "tar" | "gtar" => return tar(p, words, d),
        "ip" => return ip_netns(words, d),
        "less" => {
            less(words, d);
            return;
        }
        // `-TT CMD` (also `-TT=CMD`): zip's two-letter option, shell code.
        "zip" => {
            for (i, w) in words.iter().enumerate().skip(1) {
                let at = match *w {
                    "-TT" => Some((i + 1, 0)),
                    w if w.starts_with("-TT=") => Some((i, 4)),
                    _ => None,
                };
                let Some((word, offset)) = at else { continue };
                d.runs.push(Via {
                    what: "zip -TT".to_string(),
                    why: "runs the command to test the archive",
                });
                let value = words.get(word).and_then(|v| v.get(offset..));
                if let Some(v) = value
                    && let Some(code) = Value::Shell.code_start(v).and_then(|at| v.get(at..))
                {
                    d.option_code.push(code.to_string());
                }
            }
        }
        _ => {}
    }
    let parsed = parse(&p.grammar, words, 1);
    d.apply_options(&parsed, words, name);
    if matches!(name, "ssh" | "scp" | "sftp") {
        ssh_options(&parsed, name, d);
    }
}

/// `-o KEY=VALUE` (or `-o 'KEY VALUE'`, the key in any case) naming a command ssh runs
/// on this machine: shell code, like the option values the grammar marks. An option
/// ssh does not know makes the words opaque: which word is the host is then unknown.
fn ssh_options(parsed: &super::options::Parsed, name: &str, d: &mut Description) {
    for u in &parsed.unknown {
        d.opaque.push(format!(
            "`{name}` with the option `{u}`, which KHAELOR does not know"
        ));
    }
    for f in parsed.found.iter().filter(|f| f.opt.short == Some('o')) {
        let Some(kv) = f.value.as_deref() else {
            continue;
        };
        let kv = kv.trim_start();
        let split = kv.find(['=', ' ', '\t']).unwrap_or(kv.len());
        let (key, value) = kv.split_at(split);
        let value = value
            .trim_start_matches([' ', '\t'])
            .trim_start_matches('=')
            .trim_start();
        let Some((_, why)) = SSH_COMMAND_OPTIONS
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
        else {
            continue;
        };
        if value.is_empty() || value.eq_ignore_ascii_case("none") {
            continue;
        }
        d.runs.push(Via {
            what: format!("{name} -o {key}"),
            why,
        });
        if let Some(code) = Value::Shell
            .code_start(value)
            .and_then(|at| value.get(at..))
        {
            d.option_code.push(code.to_string());
        }
    }
}

/// `ip [-all] netns exec NAME cmd…`: the only `ip` form that runs a command.
fn ip_netns(words: &[&str], d: &mut Description) {
    let Some(n) = words.iter().position(|w| *w == "netns") else {
        return;
    };
    if words
        .get(n + 1)
        .is_none_or(|w| !"exec".starts_with(w) || w.is_empty())
    {
        return;
    }
    let all = words
        .get(1..n)
        .unwrap_or_default()
        .iter()
        .any(|w| w.starts_with("-a"));
    let start = if all { n + 2 } else { n + 3 };
    if start < words.len() {
        d.inner = Some(start);
    }
}

/// `less +CMD`: the command runs at startup; `!` there runs a shell command (read as
/// code) and `|` pipes to one. Searches and motions (`+G`, `+/x`, `+42`) run nothing.
fn less(words: &[&str], d: &mut Description) {
    for w in words.iter().skip(1) {
        let Some(cmd) = w.strip_prefix('+') else {
            continue;
        };
        // `++CMD` runs CMD on every file.
        let cmd = cmd.strip_prefix('+').unwrap_or(cmd);
        if let Some(shell) = cmd.strip_prefix('!')
            && Value::Shell.code_start(shell).is_some()
        {
            d.option_code.push(shell.to_string());
        }
        let harmless = cmd.is_empty()
            || cmd.starts_with('/')
            || cmd.starts_with('?')
            || cmd
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, 'G' | 'g' | 'F'));
        if !harmless {
            d.runs.push(Via {
                what: format!("less {w}"),
                why: "runs a startup command, which can run a shell command",
            });
        }
    }
}

/// GNU tar, old style (`tar xzf a.tgz`) included: the first word's letters are
/// options, each value letter taking the next word in turn.
fn tar(p: &'static Program, words: &[&str], d: &mut Description) {
    let mut expanded: Vec<String> = Vec::new();
    expanded.push(words.first().copied().unwrap_or("tar").to_string());
    let mut rest = words.iter().skip(1);
    if let Some(first) = words.get(1)
        && !first.starts_with('-')
    {
        rest.next();
        let mut values = Vec::new();
        for c in first.chars() {
            expanded.push(format!("-{c}"));
            let takes_value = p
                .grammar
                .opts
                .iter()
                .any(|o| o.short == Some(c) && o.arg == Arg::Required);
            if takes_value && let Some(v) = rest.next() {
                values.push(expanded.len());
                expanded.push((*v).to_string());
            }
        }
    }
    expanded.extend(rest.map(|w| (*w).to_string()));
    let refs: Vec<&str> = expanded.iter().map(String::as_str).collect();
    let parsed = parse(&p.grammar, &refs, 1);
    d.apply_options(&parsed, &refs, "tar");
    // Indices of the expanded words do not index the caller's words.
    d.canonical = None;
    let archive = parsed
        .values("file")
        .last()
        .map(|s| (*s).to_string())
        .filter(|f| f != "-");
    let extract = parsed.has("extract") || parsed.has("get");
    let creates = ["create", "append", "update", "catenate", "delete"]
        .iter()
        .any(|m| parsed.has(m));
    if let Some(f) = &archive {
        if creates {
            d.writes.push(f.clone());
        } else {
            d.reads.push(f.clone());
        }
    }
    if extract && !parsed.has("to-stdout") {
        // Extraction writes under the directory; with `-P` absolute names go anywhere.
        let dir = if parsed.has("absolute-names") {
            "/".to_string()
        } else {
            d.chdir.clone().unwrap_or_else(|| ".".to_string())
        };
        d.writes.push(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn rsync_is_network_only_with_a_remote() {
        assert!(is_network_command(&w("rsync -a src/ host:/dst")));
        assert!(!is_network_command(&w("rsync -a src/ dst/")));
    }

    #[test]
    fn fs_verb_arguments_skip_flags_and_modes() {
        assert_eq!(fs_verb_arguments(&w("rm -rf a b")), vec!["a", "b"]);
        assert_eq!(fs_verb_arguments(&w("chmod -R 755 dir")), vec!["dir"]);
        assert_eq!(
            fs_verb_arguments(&w("dd if=/dev/zero of=/tmp/x")),
            vec!["/tmp/x"]
        );
    }

    #[test]
    fn systemctl_value_options_are_spelled_out() {
        let words: Vec<&str> = "systemctl --hos h reboot".split_whitespace().collect();
        let d = crate::programs::describe(&words);
        assert_eq!(
            d.canonical.map(|c| c.join(" ")).as_deref(),
            Some("systemctl --host h reboot")
        );
    }

    #[test]
    fn rm_abbreviations_are_spelled_out() {
        let words: Vec<&str> = "rm --rec --for /".split_whitespace().collect();
        let d = crate::programs::describe(&words);
        assert_eq!(
            d.canonical.map(|c| c.join(" ")).as_deref(),
            Some("rm --recursive --force /")
        );
    }
}
