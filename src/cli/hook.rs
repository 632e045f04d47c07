//! `khaelor-perm hook <host>`: the command an agent host runs before each tool call.
//!
//! Owns the I/O of one hook call: stdin, the flags, the policy files, the session log
//! (under an advisory lock, since a host runs hooks of one session in parallel), the
//! optional round trip to a running service (`--url`, plain HTTP on std sockets: the
//! one-shot path has no async runtime), and printing. What the host's JSON means and
//! what the host is told is `crate::hosts`; deciding is `tools` + `decide`.
//!
//! A waiting hook (`--url --wait`) also writes the person's "always" answer that the
//! service hands back (`grantBack`) into this machine's project config, as a local
//! "always" does, once it has checked that the grant answers this very call with
//! exactly the rules this machine's own decision of the call offers
//! (`verified_rules`). A grant that fails the check is not written; the person's
//! answer stands either way.
//!
//! Fails closed: whatever goes wrong (bad input, a missing root, an unwritable log, an
//! unreachable service, even a panic) prints the host's deny form and exits 0, since
//! each host reads a crash or most non-zero statuses as "run the tool".

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use super::print_out;
use crate::hosts::outcome::Outcome;
use crate::hosts::{self, HookCall, Host, Rendered};
use crate::http::api::{HookAnswer, ReturnedGrant};
use crate::model::vocab::AnalysisContext;
use crate::policy::rules::PermissionRule;
use crate::session::audit::{self, AuditSink, CallContext};
use crate::session::grants::PersistedRule;
use crate::session::outbox::Outbox;
use crate::session::{ApprovedBy, GrantScope, SessionIndex};

/// How long handing the outbox to the hub may take (connecting, then each read).
const HUB_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a `--url` round trip may take before the call is denied.
const SERVICE_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest service answer read.
const MAX_RESPONSE_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Reads the host's hook JSON on stdin and prints the host's answer; \
always exits 0 except where the host reads a status (see the book: docs/src/hosts/index.md).\n\n\
Examples:\n  khaelor-perm hook claude\n  \
khaelor-perm hook codex --non-interactive\n  \
khaelor-perm hook gemini --url http://127.0.0.1:8790 --token-file ~/.config/khaelor-perm/token"
)]
pub struct Args {
    /// The agent host whose hook protocol stdin and stdout speak.
    #[arg(value_enum)]
    pub host: Host,
    /// Ask a running service (`khaelor-perm serve`) instead of deciding in process;
    /// plain `http://` only (run the service on loopback).
    #[arg(long, env = "KHAELOR_PERM_URL", value_name = "URL")]
    pub url: Option<String>,
    /// File holding the service's bearer token (with `--url` or `--hub`).
    #[arg(long, env = "KHAELOR_PERM_TOKEN_FILE", value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Directory for session logs [default: as `serve`: $XDG_STATE_HOME/khaelor-perm or
    /// $HOME/.local/state/khaelor-perm].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Project root (absolute) [default: the host's project dir, else the call's cwd].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Home directory for `~` and the user config [default: $HOME].
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// A managed config whose deny and ask rules no other layer can loosen.
    #[arg(long, env = "KHAELOR_PERM_MANAGED_CONFIG", value_name = "FILE")]
    pub managed_config: Option<PathBuf>,
    /// The managed layer as a signed bundle (`--managed-url`, `--managed-key`, …).
    #[command(flatten)]
    pub bundle: crate::cli::bundle::ManagedFlags,
    /// The preset (strict, recommended, autonomous); a managed config's preset caps
    /// it, an untrusted project file may still narrow it [default: recommended, or
    /// what the configs choose].
    #[arg(long, value_name = "PRESET")]
    pub preset: Option<crate::policy::presets::Preset>,
    /// A human answers prompts: asks stay asks (the default except for gemini).
    #[arg(long, conflicts_with = "non_interactive")]
    pub interactive: bool,
    /// Nobody answers prompts: every ask becomes a deny.
    #[arg(long)]
    pub non_interactive: bool,
    /// Leave the host's own permission rules (its "don't ask again" grants, its
    /// settings' allow/ask/deny lists) out of the policy; a config's
    /// `"hostRules": false` does the same.
    #[arg(long, env = "KHAELOR_PERM_NO_HOST_RULES")]
    pub no_host_rules: bool,
    /// With `--url`: when the decision is ask, keep the call pending and wait up to SECS
    /// for a person to answer it in the panel (`khaelor-perm approve`, the web page):
    /// approved → the host's allow, denied → its deny with the person's reason, nobody →
    /// Claude Code's own ask, any other host a deny. A person's "always" answer comes
    /// back and is written into the project's config here, once checked against this
    /// machine's own decision of the call. Cut to fit inside the host's hook timeout
    /// (`--host-timeout`).
    #[arg(long, value_name = "SECS", requires = "url", conflicts_with = "non_interactive",
        value_parser = clap::value_parser!(u64).range(1..=crate::http::hooks::MAX_WAIT_SECS))]
    pub wait: Option<u64>,
    /// The timeout, in seconds, the host's settings give this hook (`install --wait`
    /// writes both) [default: the host's own: Claude Code 600, Codex 600, Gemini CLI
    /// 60, Qwen Code 60, GitHub Copilot CLI 30, Factory Droid 60; OpenCode
    /// none]. `--wait` ends 5 s before it.
    #[arg(long, value_name = "SECS", requires = "wait")]
    pub host_timeout: Option<u64>,
    /// Also append every event this hook records (the decision, what the host reported
    /// after it) as one JSON line to FILE, created owner-only, for a log shipper. With
    /// `--url` the service records the call: give the service `--audit-log` instead.
    #[arg(long, env = "KHAELOR_PERM_AUDIT_LOG", value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Decide here, and hand every event's audit record to the team's hub (`serve`, its
    /// `POST /v1/audit/records`): kept in `<state-dir>/outbox/` until the hub
    /// acknowledges it, so a hub that is down loses nothing and holds up no decision.
    #[arg(
        long,
        env = "KHAELOR_PERM_HUB",
        value_name = "URL",
        conflicts_with = "url"
    )]
    pub hub: Option<String>,
}

impl Args {
    /// The wait asked for, cut to end before the host kills the hook; says so on
    /// stderr when it cuts (a hook the host kills gives no answer: Gemini CLI then runs
    /// the tool).
    fn wait(&self) -> Option<u64> {
        let asked = self.wait?;
        let host_timeout = self.host_timeout.map(Duration::from_secs);
        match hosts::longest_wait(self.host, host_timeout) {
            Some(most) if asked > most => {
                let limit = host_timeout
                    .or_else(|| hosts::default_hook_timeout(self.host))
                    .map_or(0, |t| t.as_secs());
                eprintln!(
                    "khaelor-perm hook {}: --wait {asked} is longer than {} lets its hook run ({limit} s): waiting {most} s; raise the hook's timeout in the host's settings and pass it as --host-timeout (`khaelor-perm install {} --wait {asked}` does both)",
                    self.host,
                    self.host.display_name(),
                    self.host
                );
                (most > 0).then_some(most)
            }
            _ => Some(asked),
        }
    }

    /// Where this call's audit records go: the sink, the hub's outbox.
    fn audit(&self, state: &Path) -> Result<Audit, String> {
        Ok(Audit {
            sink: self.audit_sink()?,
            outbox: self.hub.as_ref().map(|_| Outbox::new(state)),
        })
    }

    /// The audit sink, if one is named. Standard output is the host's channel, so `-`
    /// is refused; a file that cannot be opened is said on stderr and the call goes on
    /// (the session log still records it).
    fn audit_sink(&self) -> Result<Option<AuditSink>, String> {
        let Some(path) = &self.audit_log else {
            return Ok(None);
        };
        if path == Path::new("-") {
            return Err(
                "`--audit-log -` would write into the host's answer on stdout; name a file"
                    .to_string(),
            );
        }
        match AuditSink::open(path) {
            Ok(sink) => Ok(Some(sink)),
            Err(e) => {
                eprintln!("khaelor-perm hook {}: {e}", self.host);
                Ok(None)
            }
        }
    }

    fn interactive(&self) -> bool {
        if self.interactive {
            true
        } else if self.non_interactive {
            false
        } else {
            self.host.interactive_by_default()
        }
    }
}

pub fn run(args: Args) -> ExitCode {
    let host = args.host;
    let rendered = match std::panic::catch_unwind(|| answer(&args)) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            eprintln!("khaelor-perm hook {host}: {e}");
            hosts::render_failure(host, &e)
        }
        Err(_) => hosts::render_failure(host, "internal error"),
    };
    print_out(&rendered.stdout);
    ExitCode::from(rendered.exit)
}

/// The whole hook call; an `Err` is rendered as the host's deny.
fn answer(args: &Args) -> Result<Rendered, String> {
    let mut raw = Vec::new();
    std::io::stdin()
        .lock()
        .take(hosts::MAX_HOOK_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut raw)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    if let Some(outcome) = hosts::outcome::post_call_event(args.host, &raw) {
        // With a service, the outcome goes to the session it holds (and its live
        // stream); the local log never sees those calls.
        if let Some(url) = &args.url {
            return ask_service(args, url, &raw, None).map(|(r, _)| r);
        }
        return record_outcome(args, outcome);
    }
    let call = hosts::parse(args.host, &raw).map_err(|e| e.to_string())?;
    let root = project_root(args, &call)?;
    if let Some(url) = &args.url {
        let (rendered, grant) = ask_service(args, url, &raw, Some(&root))?;
        if let Some(grant) = grant {
            // The person's answer stands whatever happens to the grant: a grant that
            // cannot be verified or written is said on stderr and not written.
            match blocking_write_returned_grant(args, &call, &root, &grant) {
                Ok(file) => eprintln!(
                    "khaelor-perm hook {}: the \"always\" grant `{}` is written to {}",
                    args.host,
                    crate::presentation::messages::terminal_safe(&grant.pattern),
                    file.display()
                ),
                Err(e) => eprintln!(
                    "khaelor-perm hook {}: the \"always\" grant is not written: {}",
                    args.host,
                    crate::presentation::messages::terminal_safe(&e)
                ),
            }
        }
        return Ok(rendered);
    }
    let home = home(args)?;
    // The host runs the command with the environment it gave this hook: its `PATH`
    // says which file each program name is (`programs::search_path`).
    let ctx = AnalysisContext::new(&root, call.cwd.as_deref().map(Path::new), &home)
        .map(|c| c.with_search_path(std::env::var_os("PATH").as_deref()))
        .map_err(|e| e.to_string())?;
    let state = super::state_dir(args.state_dir.as_deref())?;
    let policy = local_policy(args, &ctx, &state)?;
    let interactive = args.interactive();
    let input = call.input.clone();
    let audit = args.audit(&state)?;
    let decided = blocking_decide_and_record(
        &state.join("sessions"),
        call,
        |call, rules| hosts::decide_host_call(call, &policy, rules, &ctx, interactive),
        &ctx,
        interactive,
        &audit,
    )?;
    send_to_hub(args, &state);
    Ok(hosts::render_decided(args.host, &input, &decided))
}

/// The policy this machine decides with: the configs of `ctx`'s project and home, the
/// managed layer, the host's own rules unless they are off; warnings and broken
/// configs said on stderr.
fn local_policy(
    args: &Args,
    ctx: &AnalysisContext,
    state: &Path,
) -> Result<crate::policy::config::Policy, String> {
    // The same trust store as `serve` and `khaelor-perm trust`: a project file's allow
    // rules apply only once the user has trusted its current content.
    let trust = crate::policy::trust::TrustStore::new(state);
    let (managed, _) =
        super::bundle::managed_path(args.managed_config.as_deref(), &args.bundle, Some(state))?;
    let layers = crate::policy::config::load_layers(
        ctx.root(),
        ctx.home(),
        managed.as_deref(),
        Some(&trust),
        args.preset,
    );
    let host = (!args.no_host_rules).then_some(args.host);
    let (policy, warnings) = hosts::grants::hook_policy(layers, host, ctx.home());
    for w in warnings {
        eprintln!(
            "khaelor-perm: {}",
            crate::presentation::messages::terminal_safe(&w)
        );
    }
    for e in policy.errors() {
        eprintln!(
            "khaelor-perm: broken config, every decision is at most ask: {}",
            crate::presentation::messages::terminal_safe(&e.to_string())
        );
    }
    Ok(policy)
}

/// Writes the person's "always" grant the hub sent back into this machine's project
/// config, exactly as a local "always" writes it (`grants::blocking_append_rules`, with
/// this machine's trust store), once it is verified as the answer to this very call
/// (`verified_rules`). The config file written, or why nothing was.
fn blocking_write_returned_grant(
    args: &Args,
    call: &HookCall,
    root: &Path,
    grant: &ReturnedGrant,
) -> Result<PathBuf, String> {
    let home = home(args)?;
    let ctx = AnalysisContext::new(root, call.cwd.as_deref().map(Path::new), &home)
        .map(|c| c.with_search_path(std::env::var_os("PATH").as_deref()))
        .map_err(|e| e.to_string())?;
    let state = super::state_dir(args.state_dir.as_deref())?;
    let policy = local_policy(args, &ctx, &state)?;
    // Decided here as a person would be asked here: the patterns this machine offers
    // for the call are the only ones a grant of it may write.
    let local = hosts::decide_host_call(call, &policy, &[], &ctx, true);
    let rules = verified_rules(grant, call, &ctx, &local.decision)?;
    let trust = crate::policy::trust::TrustStore::new(&state);
    let written = crate::session::grants::blocking_append_rules(ctx.root(), &rules, Some(&trust))
        .map_err(|e| e.to_string())?;
    Ok(written.file)
}

/// The rules of `grant` when it is the person's "always" answer to this call: for this
/// call's session and call id and this project, by a person, with a pattern this
/// machine's own decision of the call offers, and rules exactly those a local
/// "always" of that pattern writes (`decide::grant_rules`): never broader, never for
/// another capability. Anything else is refused with the reason.
fn verified_rules(
    grant: &ReturnedGrant,
    call: &HookCall,
    ctx: &AnalysisContext,
    local: &crate::policy::decide::CallDecision,
) -> Result<Vec<PersistedRule>, String> {
    if grant.session_id != call.session_id || grant.call_id != call.call_id {
        return Err(format!(
            "it answers call `{}` of session `{}`, not this call `{}` of session `{}`",
            grant.call_id, grant.session_id, call.call_id, call.session_id
        ));
    }
    if grant.scope != GrantScope::Always || grant.granted_by != ApprovedBy::User {
        return Err("it is not a person's \"always\" grant".to_string());
    }
    let root = ctx.root().display().to_string();
    if grant.project_root != root {
        return Err(format!(
            "it was decided for the project `{}`, not `{root}`",
            grant.project_root
        ));
    }
    let expected: Vec<PersistedRule> = crate::policy::decide::grant_rules(local, &grant.pattern)
        .map_err(|e| format!("this machine's decision of the call does not allow it: {e}"))?
        .iter()
        .map(PersistedRule::of)
        .collect();
    let same =
        expected.len() == grant.rules.len() && expected.iter().all(|r| grant.rules.contains(r));
    if !same {
        return Err(format!(
            "its rules are not those this call's pattern `{}` adds here",
            grant.pattern
        ));
    }
    Ok(expected)
}

/// Records what the host reported for calls of ours still waiting for an answer in
/// the local log (`crate::hosts::outcome`), and answers the host with nothing
/// (post-call events need no decision).
fn record_outcome(args: &Args, outcome: Outcome) -> Result<Rendered, String> {
    let state = super::state_dir(args.state_dir.as_deref())?;
    let sessions = state.join("sessions");
    let session = outcome.session().to_string();
    let lock = crate::session::lock_log(&sessions, &session).map_err(|e| e.to_string())?;
    let mut index = SessionIndex::blocking_open(&sessions, &session).map_err(|e| e.to_string())?;
    let events = hosts::outcome::outcome_events(
        args.host,
        &outcome,
        index.pending_calls(),
        |tool, input| matching_pending(&sessions, &session, index.pending_calls(), tool, input),
    )?;
    if !events.is_empty() {
        let written = index
            .blocking_make_room(crate::session::DEFAULT_MAX_EVENTS, events.len())
            .and_then(|_| index.blocking_append_with(events, crate::session::Durability::Flushed))
            .map_err(|e| e.to_string())?;
        let host = args.host.as_str().to_string();
        write_audit(&args.audit(&state)?, &session, &written, |_| {
            Some(CallContext {
                host: Some(host.clone()),
                ..CallContext::default()
            })
        });
        // Not under the log's lock: the hub's round trip must not hold up this
        // session's other hooks.
        drop(lock);
        send_to_hub(args, &state);
    }
    Ok(Rendered {
        stdout: String::new(),
        exit: 0,
    })
}

/// Where a call's audit records go.
#[derive(Debug, Default)]
struct Audit {
    sink: Option<AuditSink>,
    outbox: Option<Outbox>,
}

/// Writes the audit records of events just appended to the sink and the hub's outbox;
/// one that fails is said on stderr (the session log has them).
fn write_audit(
    audit: &Audit,
    session: &str,
    events: &[crate::session::Event],
    known: impl FnMut(&str) -> Option<CallContext>,
) {
    if audit.sink.is_none() && audit.outbox.is_none() {
        return;
    }
    let records = audit::records(session, events, Some(audit::Origin::current()), known);
    if let Some(sink) = &audit.sink
        && let Err(e) = sink.write(&records)
    {
        eprintln!("khaelor-perm hook: {e}");
    }
    if let Some(outbox) = &audit.outbox
        && let Err(e) = outbox.blocking_put(session, &records)
    {
        eprintln!("khaelor-perm hook: {e}");
    }
}

/// Sends what waits in the outbox to the hub (`--hub`), briefly: a hub that does not
/// answer within `HUB_TIMEOUT` is tried again by a later call (after the outbox's
/// backoff), and the decision never waits longer.
fn send_to_hub(args: &Args, state: &Path) {
    let Some(hub) = &args.hub else { return };
    let token = match token(args) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("khaelor-perm hook: {e}");
            return;
        }
    };
    let drained = Outbox::new(state).blocking_drain(|records| {
        let body = serde_json::to_vec(&serde_json::json!({ "records": records }))
            .map_err(|e| e.to_string())?;
        let (status, text) = post(
            hub,
            "/v1/audit/records",
            &body,
            token.as_deref(),
            HUB_TIMEOUT,
            HUB_TIMEOUT,
        )?;
        if status == "200" {
            Ok(())
        } else {
            Err(format!("the hub answered {status}: {}", text.trim()))
        }
    });
    if drained.set_aside > 0 {
        eprintln!(
            "khaelor-perm hook: {} audit batches are too large for the hub and were kept in {} (`.oversize`)",
            drained.set_aside,
            state.join("outbox").display()
        );
    }
    if let Some(why) = drained.stopped.filter(|_| drained.left > 0) {
        eprintln!(
            "khaelor-perm hook: {} audit batches wait for the hub: {why}",
            drained.left
        );
    }
}

/// The oldest pending call of the local log whose host tool and input are exactly
/// `tool` and `input` (see `hosts::outcome::outcome_events`). Reads the whole log, only
/// when some call is pending (after an ask). The caller holds the log's lock.
fn matching_pending(
    sessions: &Path,
    session: &str,
    pending: &[String],
    tool: &str,
    input: &serde_json::Value,
) -> Result<Option<String>, String> {
    let full =
        crate::session::Session::blocking_open(sessions, session).map_err(|e| e.to_string())?;
    Ok(pending
        .iter()
        .find(|id| {
            full.call(id)
                .is_some_and(|c| hosts::outcome::same_host_call(&c.input, tool, input))
        })
        .cloned())
}

/// The root: `--root`, else the host's project directory variable, else the root the
/// call names, else its cwd, else the current directory.
fn project_root(args: &Args, call: &HookCall) -> Result<PathBuf, String> {
    if let Some(r) = &args.root {
        return Ok(r.clone());
    }
    let env = match args.host {
        Host::Claude => Some("CLAUDE_PROJECT_DIR"),
        Host::Gemini => Some("GEMINI_PROJECT_DIR"),
        Host::Qwen => Some("QWEN_PROJECT_DIR"),
        Host::Copilot => Some("COPILOT_PROJECT_DIR"),
        Host::Droid => Some("FACTORY_PROJECT_DIR"),
        Host::Codex | Host::Opencode | Host::Cline => None,
    };
    if let Some(v) = env.and_then(std::env::var_os).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(v));
    }
    if let Some(r) = call.project_root.as_deref().or(call.cwd.as_deref()) {
        return Ok(PathBuf::from(r));
    }
    std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))
}

fn home(args: &Args) -> Result<PathBuf, String> {
    match &args.home {
        Some(h) => Ok(h.clone()),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| "`HOME` is not set; pass `--home DIR`".to_string()),
    }
}

/// Decides under the session's lock and appends the call's events before answering:
/// the lock file `<id>.lock` serialises the hook processes of one session, so their
/// sequence numbers never collide and a session grant is seen by the next call.
fn blocking_decide_and_record(
    sessions: &Path,
    mut call: HookCall,
    decide: impl FnOnce(&HookCall, &[PermissionRule]) -> hosts::HookDecision,
    ctx: &AnalysisContext,
    interactive: bool,
    audit: &Audit,
) -> Result<hosts::HookDecision, String> {
    // The log's file lock, held until the events are appended (and across a
    // compaction, which must not take it again).
    let _lock = crate::session::lock_log(sessions, &call.session_id).map_err(|e| e.to_string())?;
    let mut session =
        SessionIndex::blocking_open(sessions, &call.session_id).map_err(|e| e.to_string())?;
    if session.has_call(&call.call_id) {
        // A host that reuses an id (or a hook run twice) must not rewrite history.
        call.call_id = hosts::fresh_call_id(call.host);
    }
    let rules = crate::session::allow_rules(&session.session_rules_for(ctx.root()));
    let decided = decide(&call, &rules);
    let events = hosts::events(
        &call,
        decided.mapped.as_ref(),
        ctx,
        interactive,
        &decided.decision,
    )
    .map_err(|e| format!("cannot encode the session events: {e}"))?;
    // Audit events: flushed, not synced (see `Durability::Flushed`).
    let written = session
        .blocking_make_room(crate::session::DEFAULT_MAX_EVENTS, events.len())
        .and_then(|_| session.blocking_append_with(events, crate::session::Durability::Flushed))
        .map_err(|e| e.to_string())?;
    write_audit(audit, &call.session_id, &written, |_| None);
    Ok(decided)
}

/// Forwards the hook input to `POST <url>/v1/hooks/<host>` and prints its answer as is.
/// `root` is the project root of a call to decide; a post-call event has none to send.
/// A waiting call asks for the person's "always" grant back (`grantBack=true`): the
/// answer is then a `HookAnswer`, the host's answer beside the grant, unless it is a
/// failure in the host's own form.
fn ask_service(
    args: &Args,
    url: &str,
    body: &[u8],
    root: Option<&Path>,
) -> Result<(Rendered, Option<ReturnedGrant>), String> {
    let token = token(args)?;
    let wait = args.wait();
    // A person answers a waiting hook: it is interactive whatever the host's default.
    let mut query = format!("interactive={}", args.interactive() || wait.is_some());
    if let Some(root) = root {
        query.push_str(&format!(
            "&projectRoot={}",
            percent_encode(&root.display().to_string())
        ));
    }
    if args.no_host_rules {
        query.push_str("&hostRules=false");
    }
    // The host runs the command with this process's PATH: the service reads program
    // names on it as this hook would (`programs::search_path`).
    if let Some(path) = std::env::var_os("PATH") {
        query.push_str(&format!(
            "&searchPath={}",
            percent_encode(&path.to_string_lossy())
        ));
    }
    if let Some(w) = wait {
        query.push_str(&format!("&wait={w}"));
        if root.is_some() {
            query.push_str("&grantBack=true");
        }
    }
    let read_timeout = SERVICE_TIMEOUT + Duration::from_secs(wait.unwrap_or(0));
    let (status, body) = post(
        url,
        &format!("/v1/hooks/{}?{query}", args.host),
        body,
        token.as_deref(),
        SERVICE_TIMEOUT,
        read_timeout,
    )?;
    if status != "200" {
        return Err(format!("the service answered {status}: {}", body.trim()));
    }
    // The envelope has a field no host's answer has (`hookAnswer`) and no other: a
    // host-form failure never reads as one.
    let (stdout, grant) = match serde_json::from_str::<HookAnswer>(&body) {
        Ok(a) => (a.hook_answer, a.grant),
        Err(_) => (body, None),
    };
    Ok((Rendered { stdout, exit: 0 }, grant))
}

/// The bearer token of `--token-file`, if one is given.
fn token(args: &Args) -> Result<Option<String>, String> {
    match &args.token_file {
        Some(f) => {
            let t = std::fs::read_to_string(f)
                .map_err(|e| format!("cannot read token file `{}`: {e}", f.display()))?;
            Ok(Some(t.trim().to_string()))
        }
        None => Ok(None),
    }
}

/// One HTTP/1.1 POST of a JSON body to `url` + `path` on std sockets (no async runtime
/// in the one-shot hook): the status code and the body. Plain `http://` only.
fn post(
    url: &str,
    path: &str,
    body: &[u8],
    token: Option<&str>,
    connect_timeout: Duration,
    read_timeout: Duration,
) -> Result<(String, String), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("`{url}` is not an `http://` URL"))?;
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (rest.get(..i).unwrap_or(rest), rest.get(i..).unwrap_or("")),
        None => (rest, ""),
    };
    let prefix = prefix.trim_end_matches('/');
    let mut head = format!(
        "POST {prefix}{path} HTTP/1.1\r\nHost: {authority}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if let Some(t) = token {
        head.push_str(&format!("authorization: Bearer {t}\r\n"));
    }
    head.push_str("\r\n");
    let addr = std::net::ToSocketAddrs::to_socket_addrs(authority)
        .map_err(|e| format!("cannot resolve `{authority}`: {e}"))?
        .next()
        .ok_or_else(|| format!("`{authority}` resolves to no address"))?;
    let mut stream = TcpStream::connect_timeout(&addr, connect_timeout)
        .map_err(|e| format!("cannot reach the service at `{url}`: {e}"))?;
    let io = |e: std::io::Error| format!("the service at `{url}` failed: {e}");
    stream.set_read_timeout(Some(read_timeout)).map_err(io)?;
    stream
        .set_write_timeout(Some(connect_timeout))
        .map_err(io)?;
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(body).map_err(io)?;
    let mut resp = Vec::new();
    stream
        .take(MAX_RESPONSE_BYTES)
        .read_to_end(&mut resp)
        .map_err(io)?;
    let text =
        String::from_utf8(resp).map_err(|_| "the service's answer is not UTF-8".to_string())?;
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or("the service's answer has no header end")?;
    let status = head.split(' ').nth(1).unwrap_or_default().to_string();
    if head
        .lines()
        .any(|l| l.to_ascii_lowercase().starts_with("transfer-encoding:"))
    {
        return Err("the service's answer is chunked, which this client does not read".into());
    }
    Ok((status, body.to_string()))
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
