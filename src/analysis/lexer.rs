//! The V1 lexer engine (seed §3.1–§3.5): classification and the requests derived from
//! the lexer's tokens, with the floor and always patterns. It is the fail-closed
//! fallback of the AST engine and the second engine the comparison report runs
//! against it.
//!
//! Owns V1's reading of a command on purpose: a redirection is an operator (so `cat a >
//! out` is compound), `cd` is not tracked and wrappers are not unwrapped (the command
//! word is word 0). It must not know rules and must never panic.

use std::collections::HashSet;
use std::mem;

use crate::analysis::arity;
use crate::model::paths;
use crate::model::vocab::{
    Analysis, AnalysisContext, Capability, CapabilityRequest, CommandClass, EngineKind,
    HardlineHit, Part, collapse_whitespace,
};
use crate::shell::ir::{Cwd, Plan};
use crate::shell::join_collapsed;
use crate::shell::lexer::lex;
use crate::{floor, programs};

/// The risk note of any command with a substitution (seed §3.2, word for word).
pub const SUBSTITUTION_RISK_NOTE: &str =
    "Command uses substitution — KHAELOR cannot verify what it will run.";

/// How many parts get derived analysis (paths are resolved on disk, a few syscalls
/// each); a longer command is read as a whole, like an obfuscated one, so a 1 MiB
/// script cannot make one analysis take seconds. The floor still checks every part.
const MAX_PARTS: usize = 1000;

/// Commands whose arguments are shell code: an argument that lexes into operators or a
/// substitution is quoted operator smuggling (seed §3.2).
fn smuggles_code(words: &[String]) -> bool {
    let lexes_into_code = |arg: &str, broken_counts: bool| match lex(arg) {
        Ok(t) => !t.operators.is_empty() || t.has_substitution,
        Err(_) => broken_counts,
    };
    let all: Vec<&str> = words.iter().map(String::as_str).collect();
    // The program table's one unwrapper: wrappers looked through, code strings found
    // the same way the AST effects and the floor find them.
    for layer in crate::programs::unwrap::layers(&all) {
        let here = all.get(layer.start..).unwrap_or_default();
        let d = &layer.description;
        let shell = here.first().is_some_and(|w| crate::programs::is_shell(w));
        // A shell with options the table does not know: its code cannot be located.
        if shell && !d.opaque.is_empty() {
            return true;
        }
        // Code strings of shells and `eval` (seed §3.2); a wrapper's own code string
        // (`su -c`, `watch`) is the AST engine's concern, as in V1.
        let eval = here.first().map(|w| crate::programs::basename(w)) == Some("eval");
        if (shell || eval)
            && d.code
                .iter()
                .any(|c| lexes_into_code(&crate::programs::code_text(c, here), true))
        {
            return true;
        }
        // xargs runs its arguments as an argv, not as code: a broken quote there is data.
        if here.first().map(|w| crate::programs::basename(w)) == Some("xargs")
            && here.iter().skip(1).any(|w| lexes_into_code(w, false))
        {
            return true;
        }
    }
    false
}

/// Whether any NETWORK_COMMANDS name appears as a word anywhere in the raw text: the
/// conservative reading of an obfuscated command (seed §3.2).
fn mentions_network_command(text: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
        .any(|w| programs::NETWORK_COMMANDS.contains(&w))
}

fn display_operator(op: &str) -> &str {
    if op == "\n" { "newline" } else { op }
}

/// The lexer engine's code reader for the floor: code strings and here-documents fed
/// to a shell, lowered from the lexer's tokens.
pub(crate) struct Reader;

impl floor::CodeReader for Reader {
    fn read(&self, code: &str, cwd: &Cwd, _: &AnalysisContext) -> Plan {
        crate::shell::lexer::lower::lower_text(code, cwd)
    }
}

pub(crate) use crate::shell::lexer::lower::{lower, lower_text};

/// Whether the floor could find anything in the lexer's reading, so lowering (a few
/// allocations per command) is skipped where it cannot: a word naming a floor command,
/// a shell or a code runner (`floor::may_fire`), an output-redirection target, a
/// here-document, or a `{` (brace expansion, a function definition). Text the lexer
/// cannot read always goes to the floor.
pub(crate) fn floor_relevant(
    text: &str,
    lexed: &Result<crate::shell::lexer::Tokens, crate::shell::lexer::LexError>,
) -> bool {
    match lexed {
        Err(_) => true,
        Ok(t) => {
            text.contains('{')
                || !t.heredocs.is_empty()
                || t.commands.iter().any(|c| {
                    c.after_write_redirect || floor::may_fire(c.words.iter().map(String::as_str))
                })
        }
    }
}

/// `floor_relevant` for a text the caller has not lexed (for the test that proves the
/// filter never hides a hit).
pub fn floor_may_fire(text: &str) -> bool {
    floor_relevant(text, &lex(text))
}

/// The floor on the lexer's reading of `text` alone: what the AST engine consults
/// beside its own reading, and all that is left when it falls back.
pub fn floor(text: &str, ctx: &AnalysisContext) -> Option<HardlineHit> {
    let cwd = Cwd::Known(ctx.cwd().to_path_buf());
    floor::check_plan(&lower_text(text, &cwd), ctx, &Reader)
}

/// Analyzes one command with the V1 lexer (seed §3). Never panics; an empty command gives
/// an analysis with no parts and no requests (empty commands are refused upstream).
pub fn analyze(command: &str, ctx: &AnalysisContext) -> Analysis {
    let cwd_text = ctx.cwd().to_string_lossy().into_owned();
    let mut analysis = Analysis {
        command: command.to_string(),
        class: CommandClass::Simple,
        parts: Vec::new(),
        requests: Vec::new(),
        always_patterns: Vec::new(),
        risk_notes: Vec::new(),
        hardline: None,
        engine: EngineKind::Lexer,
        fallback: None,
    };
    let mut seen = Seen::default();
    // One lex for the floor and the parts.
    let lexed = lex(command);
    let cwd = Cwd::Known(ctx.cwd().to_path_buf());
    // The words stay here for V1's parts; the plan gets copies.
    let hit = if floor_relevant(command, &lexed) {
        floor::check_plan(&lower(command, lexed.clone(), &cwd), ctx, &Reader)
    } else {
        None
    };
    let tokens = match lexed {
        Ok(t) => t,
        Err(e) => {
            analysis.class = CommandClass::Obfuscated;
            analysis.risk_notes.push(format!(
                "KHAELOR could not read this command ({e}) — it cannot verify what it will run."
            ));
            add_obfuscated_requests(&mut analysis, &mut seen, command);
            if let Some(hit) = hit {
                apply_hardline(&mut analysis, hit);
            }
            return analysis;
        }
    };

    analysis.parts = tokens
        .commands
        .into_iter()
        .map(|c| Part {
            text: join_collapsed(&c.words),
            words: c.words,
            cwd: Some(cwd_text.clone()),
        })
        .collect();
    let smuggling = analysis.parts.iter().any(|p| smuggles_code(&p.words));

    if tokens.has_substitution || smuggling {
        analysis.class = CommandClass::Obfuscated;
        if tokens.has_substitution {
            analysis.risk_notes.push(SUBSTITUTION_RISK_NOTE.to_string());
        }
        if smuggling {
            analysis.risk_notes.push(
                "Command passes shell operators inside a quoted argument — KHAELOR cannot verify what it will run."
                    .to_string(),
            );
        }
        add_obfuscated_requests(&mut analysis, &mut seen, command);
    } else if analysis
        .parts
        .iter()
        .any(|p| crate::shell::braces::over_budget(&p.words))
    {
        // A brace bomb: bash builds every word in memory before the command runs.
        analysis.class = CommandClass::Obfuscated;
        analysis.risk_notes.push(format!(
            "Command builds more than {} words by brace expansion, all in memory before it runs — KHAELOR cannot verify what it will run.",
            crate::shell::braces::MAX_COMMAND_WORDS
        ));
        add_obfuscated_requests(&mut analysis, &mut seen, command);
    } else if analysis.parts.len() > MAX_PARTS {
        analysis.class = CommandClass::Obfuscated;
        analysis.risk_notes.push(format!(
            "Command has {} parts, more than KHAELOR checks one by one ({MAX_PARTS}) — it cannot verify what it will run.",
            analysis.parts.len()
        ));
        add_obfuscated_requests(&mut analysis, &mut seen, command);
    } else if analysis.parts.is_empty() && !command.trim().is_empty() {
        // Operators or comments with no command (`;`, `&&`, `# x`): nothing to read as a
        // command, yet not empty; asked about as a whole rather than passed silently.
        analysis.class = CommandClass::Obfuscated;
        analysis.risk_notes.push(
            "KHAELOR found no command in this text — it cannot verify what it will run."
                .to_string(),
        );
        add_obfuscated_requests(&mut analysis, &mut seen, command);
    } else {
        let simple = analysis.parts.len() == 1 && tokens.operators.is_empty();
        analysis.class = if simple || analysis.parts.is_empty() {
            CommandClass::Simple
        } else {
            CommandClass::Compound
        };
        if !simple && !tokens.operators.is_empty() {
            let mut seen: Vec<&str> = Vec::new();
            for op in &tokens.operators {
                let op = display_operator(op);
                if !seen.contains(&op) {
                    seen.push(op);
                }
            }
            let list = seen
                .iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(", ");
            analysis.risk_notes.push(format!(
                "Compound command joined by {list}: every part is checked on its own and no \"always\" pattern is offered."
            ));
        }
        let patterns = match (simple, analysis.parts.first()) {
            (true, Some(p)) => arity::suggest(&p.words, Some(ctx.cwd()), ctx)
                .into_iter()
                .filter(|pattern| arity::no_literal_star(pattern, &p.words))
                .collect(),
            _ => Vec::new(),
        };
        analysis.always_patterns = patterns.clone();
        let parts = mem::take(&mut analysis.parts);
        for part in &parts {
            add_part_requests(&mut analysis, &mut seen, part, &patterns, ctx);
        }
        analysis.parts = parts;
    }

    if let Some(hit) = hit {
        apply_hardline(&mut analysis, hit);
    }
    analysis
}

/// The (capability, subject) pairs already requested. A scan of the requests while they
/// are few (the usual case: one to five); a set once a long compound command makes a
/// scan quadratic.
#[derive(Default)]
struct Seen {
    set: Option<HashSet<(Capability, String)>>,
}

/// Requests beyond which duplicates are found through a set.
const SCAN_LIMIT: usize = 32;

fn push_request(analysis: &mut Analysis, seen: &mut Seen, request: CapabilityRequest) {
    let requests = &analysis.requests;
    if seen.set.is_none() && requests.len() >= SCAN_LIMIT {
        seen.set = Some(
            requests
                .iter()
                .map(|r| (r.capability, r.subject.clone()))
                .collect(),
        );
    }
    let fresh = match &mut seen.set {
        Some(set) => set.insert((request.capability, request.subject.clone())),
        None => !requests
            .iter()
            .any(|r| r.capability == request.capability && r.subject == request.subject),
    };
    if fresh {
        analysis.requests.push(request);
    }
}

fn run_request(subject: &str, patterns: &[String], notes: &[String]) -> CapabilityRequest {
    let mut r = CapabilityRequest::new(
        Capability::ProcessExecute,
        subject,
        format!("Run {subject}"),
    );
    r.always_patterns = patterns.to_vec();
    r.risk_notes = notes.to_vec();
    r
}

/// Seed §3.2: an obfuscated command carries one `process.execute` for the whole text,
/// plus `network.access` when a network tool's name appears anywhere in it.
fn add_obfuscated_requests(analysis: &mut Analysis, seen: &mut Seen, command: &str) {
    let subject = collapse_whitespace(command);
    let request = run_request(&subject, &[], &analysis.risk_notes);
    push_request(analysis, seen, request);
    if mentions_network_command(command) {
        let r = CapabilityRequest::new(
            Capability::NetworkAccess,
            subject.clone(),
            format!("Run {subject}"),
        );
        push_request(analysis, seen, r);
    }
    // `exec 3<>/dev/tcp/h/80`: bash connects by itself, whatever the text around it.
    for word in command.split(|c: char| c.is_whitespace() || "<>&;|()'\"".contains(c)) {
        network_device_request(analysis, seen, word);
    }
}

/// A `network.access` request naming `host:port` when `word` is one of bash's network
/// devices (`/dev/tcp/HOST/PORT`): V1 splits at redirection operators, so a redirect
/// target is the first word of a part of its own.
fn network_device_request(analysis: &mut Analysis, seen: &mut Seen, word: &str) {
    if let Some(endpoint) = crate::shell::network_endpoint(word) {
        let r = CapabilityRequest::new(
            Capability::NetworkAccess,
            endpoint.clone(),
            format!("Connect to {endpoint}"),
        );
        push_request(analysis, seen, r);
    }
}

/// One part of a simple or compound command: its `process.execute` and the requests
/// derived from its words (seed §3.4, §3.5).
fn add_part_requests(
    analysis: &mut Analysis,
    seen: &mut Seen,
    part: &Part,
    patterns: &[String],
    ctx: &AnalysisContext,
) {
    let request = run_request(&part.text, patterns, &analysis.risk_notes);
    push_request(analysis, seen, request);
    if let Some(first) = part.words.first() {
        network_device_request(analysis, seen, first);
    }
    for (derived, capability) in [
        (
            programs::is_network_command(&part.words),
            Capability::NetworkAccess,
        ),
        (
            programs::git::is_git_modify(&part.words),
            Capability::GitModify,
        ),
    ] {
        if derived {
            let mut r =
                CapabilityRequest::new(capability, part.text.clone(), format!("Run {}", part.text));
            r.always_patterns = patterns.to_vec();
            push_request(analysis, seen, r);
        }
    }
    for word in programs::fs_verb_arguments(&part.words) {
        // A glob or an expansion names a place only known when it runs.
        let pattern = word.contains(['*', '?', '[', '$', '`']);
        let request = match paths::resolve_word(word, Some(ctx.cwd()), ctx.home()) {
            Some(_) if pattern => CapabilityRequest::unresolved(
                Capability::FileWriteOutsideProject,
                word,
                format!("Write {word}"),
            ),
            Some(p) if paths::is_inside(&p, ctx.root()) => continue,
            Some(p) => {
                let subject = p.to_string_lossy().into_owned();
                let display = format!("Write {subject}");
                CapabilityRequest::new(Capability::FileWriteOutsideProject, subject, display)
            }
            None => CapabilityRequest::unresolved(
                Capability::FileWriteOutsideProject,
                word,
                format!("Write {word}"),
            ),
        };
        push_request(analysis, seen, request);
    }
}

/// The floor overrides everything: no "always" pattern anywhere, and the floor's note.
fn apply_hardline(analysis: &mut Analysis, hit: HardlineHit) {
    analysis.always_patterns.clear();
    let note = floor::HARDLINE_RISK_NOTE.to_string();
    for r in &mut analysis.requests {
        r.always_patterns.clear();
        if r.capability == Capability::ProcessExecute && !r.risk_notes.contains(&note) {
            r.risk_notes.push(note.clone());
        }
    }
    if !analysis.risk_notes.contains(&note) {
        analysis.risk_notes.push(note);
    }
    analysis.hardline = Some(hit);
}
