//! Deciding a whole tool call: the hardline floor, the layered rules with session grants
//! and the managed ceiling, self-protection, the broken-config cap, combination (seed
//! §4.4), non-interactive resolution (seed §5.2), "always" grants, and deny shaping the
//! tool list (seed §7.2).
//!
//! Owns the order these apply in and the call-level result. Matching is `rules`,
//! loading is `config`, wording and the panel are `messages`; the only I/O here is
//! resolving symlinks on the protected config paths.
//!
//! Per request, strictest wins, in this order:
//! 1. hardline hit -> deny (no rule, no session grant can lift it);
//! 2. rules: session grants, then defaults ++ managed ++ user ++ project (last match
//!    wins, unmatched asks), then the managed ceiling;
//! 3. an obfuscated command (seed §3.2) asks unless an exact-subject rule allows it;
//!    one the AST engine could not parse (fallback) always asks;
//! 4. protected writes (`crate::policy::protected`: `.git/`, hook managers, `.envrc`,
//!    `.khaelor/` in any case, loaded config files, the trust store), or a command naming
//!    `.khaelor` or `khaelor-perm`, are at least ask and offer no "always";
//! 5. a broken config caps allow at ask and offers no "always".

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::contain::{Containment, NotContained, ProfileName};
use crate::model::vocab::{
    AnalysisContext, Capability, CapabilityRequest, CommandClass, HardlineHit, PackHit, Reason,
    Severity, Verdict, collapse_whitespace,
};
use crate::policy::config::{AlwaysScope, ConfigError, PackMode, Policy};
use crate::policy::protected;
use crate::policy::rules::{Action, PermissionRule, RuleSet, RuleSource};
use crate::presentation::messages::{self, Panel, PanelDetail};
use crate::tools::MappedCall;

/// One request of a call with its decision and the rule that decided it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluatedRequest {
    #[serde(flatten)]
    pub request: CapabilityRequest,
    pub decision: Action,
    /// `None`: no rule matched (which asks).
    pub rule: Option<PermissionRule>,
    /// Why the decision is stricter than the rule alone would make it, in the order
    /// the caps applied; empty when the rule decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
}

/// The decision for a whole tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallDecision {
    pub tool: String,
    pub decision: Action,
    pub requests: Vec<EvaluatedRequest>,
    /// What the panel's `A` offers; non-empty only for an ask whose every asking
    /// request offers a pattern and no rule or floor forbids it.
    pub always_patterns: Vec<String>,
    /// The model-facing message for a deny (seed §5.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The ask panel (interactive asks only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub panel: Option<Panel>,
    /// The call in a few words, for "The user declined to allow: …".
    pub summary: String,
    /// Call-level notes: the analysis' notes, hardline, broken config.
    pub risk_notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardline: Option<HardlineHit>,
    /// The config problems that capped this decision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_errors: Vec<ConfigError>,
    /// For `contain`: the sandbox profile and the rewritten command to run instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<Containment>,
}

/// What builds the sandbox for a call the policy contains (`crate::contain`
/// implements it over bubblewrap; the policy layer only asks) under the profile
/// `contain_call` chose.
pub trait Sandbox {
    fn contain(
        &self,
        call: &MappedCall,
        ctx: &AnalysisContext,
        policy: &Policy,
        profile: ProfileName,
    ) -> Result<Containment, NotContained>;
}

/// Decides one mapped call. `interactive = false` turns every ask into a deny. With no
/// sandbox to run it in, a call the policy would contain asks (`NotContained::NoRunner`).
pub fn decide(
    policy: &Policy,
    session_rules: &[PermissionRule],
    call: &MappedCall,
    ctx: &AnalysisContext,
    interactive: bool,
) -> CallDecision {
    decide_with(policy, session_rules, call, ctx, interactive, None)
}

/// Programs that delete or overwrite the files they are given.
const DESTROYERS: &[&str] = &[
    "rm", "rmdir", "unlink", "shred", "truncate", "dd", "mv", "wipe", "srm",
];

/// Whether any command of the call names, in any of its words, a program that deletes
/// or overwrites files, a `-delete`, a shell or a language interpreter (`fd -x rm`,
/// `xargs rm`, `cat a.txt | sh`, `python3 -c 'shutil.rmtree(…)'`): what it writes may be
/// beyond what the analysis saw. Read
/// word by word from the rendered commands, so it can only say yes too often.
fn names_a_destroyer(requests: &[CapabilityRequest]) -> bool {
    requests
        .iter()
        .filter(|r| r.capability == Capability::ProcessExecute)
        .flat_map(|r| r.subject.split_whitespace())
        .any(|word| {
            let word = word.trim_matches(|c| matches!(c, '\'' | '"' | '(' | ')' | ';'));
            let name = word.rsplit('/').next().unwrap_or(word);
            DESTROYERS.contains(&name)
                || crate::programs::is_shell(name)
                || crate::shell::eval::interp::is_interpreter(name)
                || matches!(word, "-delete" | "--delete")
        })
}

/// `decide`, with the sandbox a contained call runs in: the answer then carries its
/// profile and the rewritten command, or asks with the reason it cannot be contained.
pub fn decide_with(
    policy: &Policy,
    session_rules: &[PermissionRule],
    call: &MappedCall,
    ctx: &AnalysisContext,
    interactive: bool,
    sandbox: Option<&dyn Sandbox>,
) -> CallDecision {
    // The decision reads the file system too (the walks of directory reads, the
    // protected paths): one call reads each path once, as the analysis does.
    let _fs = crate::model::paths::CallScope::new(ctx.root());
    let session = (!session_rules.is_empty()).then(|| RuleSet::new(session_rules.to_vec()));
    // Resolving the protected paths costs syscalls; only writes can need them.
    let writes = call.requests.iter().any(|r| {
        matches!(
            r.capability,
            Capability::FileWriteProject | Capability::FileWriteOutsideProject
        )
    });
    let protected = if writes {
        protected_paths(policy, ctx)
    } else {
        Vec::new()
    };
    let broken = !policy.errors().is_empty();
    let autonomous = policy.preset() == crate::policy::presets::Preset::Autonomous;
    // Only `autonomous` contains on its own say, and only then does this matter.
    let may_destroy_unseen = autonomous && names_a_destroyer(&call.requests);

    let mut requests: Vec<CapabilityRequest> = call.requests.clone();
    if requests.is_empty() {
        // Fail closed: a call that maps to nothing still has to be judged.
        let subject = call
            .command
            .as_deref()
            .map(collapse_whitespace)
            .unwrap_or_else(|| call.tool.clone());
        requests.push(CapabilityRequest::new(
            Capability::ProcessExecute,
            subject.clone(),
            format!("Run {subject}"),
        ));
    }

    let obfuscated = call
        .analysis
        .as_ref()
        .is_some_and(|a| a.class == CommandClass::Obfuscated);
    let fallback = call.analysis.as_ref().is_some_and(|a| a.fallback.is_some());
    let unreadable = obfuscated || fallback;
    let mut risk_notes: Vec<String> = call
        .analysis
        .as_ref()
        .map(|a| a.risk_notes.clone())
        .unwrap_or_default();
    // The commands a domain pack names, with the severity of each, where no config
    // turned the pack off.
    let destroying: Vec<(String, Severity)> = requests
        .iter()
        .filter_map(|r| {
            let hit = r.pack.as_ref()?;
            (policy.pack_mode(&hit.pack) != PackMode::Off)
                .then(|| (r.subject.clone(), hit.severity))
        })
        .collect();
    let mut evaluated: Vec<EvaluatedRequest> = Vec::with_capacity(requests.len());
    for mut req in requests {
        let mut reasons: Vec<Reason> = Vec::new();
        // The analysis' verdict on a command (verified read-only, …), which
        // only the active preset's rules match on.
        let verdict = if req.capability == Capability::ProcessExecute {
            req.verdict
        } else {
            None
        };
        let ev = policy.evaluate_verdict(session.as_ref(), req.capability, &req.subject, verdict);
        let mut action = ev.action;
        let mut rule = ev.rule.cloned();
        let mut offer_always = true;
        if autonomous
            && !writes
            && !may_destroy_unseen
            && req.capability == Capability::ProcessExecute
            && action == Action::Ask
            && rule
                .as_ref()
                .is_none_or(|r| r.source == RuleSource::Default && r.pattern == "*")
        {
            // `autonomous` contains what would otherwise ask only because no rule
            // vouches for the command; an ask a person wrote, and every cap below, stays.
            // A call whose writes the analysis sees (`rm -rf build`, `find . -delete`)
            // keeps its ask: the project is writable inside the sandbox, so it would not
            // hold a deletion there. So does one that names a deleting program or a
            // shell anywhere (`fd -x rm`, `xargs rm`, `cat a.txt | sh`): its writes may be
            // there without the analysis seeing them.
            action = Action::Contain;
            rule = Some(crate::policy::presets::Preset::contain_everything_rule());
        }
        if action == Action::Contain && req.capability != Capability::ProcessExecute {
            // The sandbox runs commands; a read, a write or a fetch cannot be contained.
            action = Action::Ask;
            push_reason(
                &mut req,
                &mut reasons,
                Reason::NotContained {
                    why: NotContained::NotACommand,
                },
            );
        }
        if action == Action::Ask
            && let Some(r) = &rule
        {
            // Explicit asks stay asks; the managed ceiling cannot be loosened at all.
            if r.source == RuleSource::Managed || (r.source.is_configured() && !r.allow_always) {
                offer_always = false;
            }
        }
        if unreadable && action < Action::Ask && req.capability.has_command_subject() {
            // Seed §3.2: an obfuscated command asks unless an exact-subject rule allows
            // it; a command the AST engine could not parse is never allowed silently.
            // Nor is either contained: what cannot be read is at most ask.
            let exact = rule.as_ref().is_some_and(|r| !r.pattern.contains('*'));
            if fallback || !exact || action == Action::Contain {
                action = Action::Ask;
                rule = builtin_ask(&req);
                offer_always = false;
                let reason = if fallback {
                    Reason::Unparsed
                } else {
                    Reason::Obfuscated
                };
                // The analysis usually says why already; add ours only when it is silent.
                let analysis_silent = call
                    .analysis
                    .as_ref()
                    .is_none_or(|a| a.risk_notes.is_empty());
                if analysis_silent {
                    push_note(
                        &mut req.risk_notes,
                        &messages::reason_note(&reason, &req.subject),
                    );
                }
                reasons.push(reason);
            }
        }
        if req.reads_program
            && action == Action::Allow
            && rule.as_ref().is_some_and(|r| r.source == RuleSource::Host)
        {
            // A host's "always" names programs (`sh`, Gemini's saved command roots);
            // the code this one reads from its input was never shown in that dialog.
            action = Action::Ask;
            rule = builtin_ask(&req);
            offer_always = false;
            push_reason(&mut req, &mut reasons, Reason::HostGrantUnread);
        }
        if req.capability.has_command_subject()
            && let Some(severity) = destroying
                .iter()
                .filter(|(s, _)| *s == req.subject)
                .map(|(_, v)| *v)
                .max()
        {
            // Every request of a command a pack names (its network access too) offers
            // at most the exact command as "always", and nothing when it is critical.
            narrow_to_exact(&mut req);
            offer_always &= severity != Severity::Critical;
        }
        if req.capability == Capability::ProcessExecute
            && let Some(hit) = req.pack.clone()
        {
            let mode = policy.pack_mode(&hit.pack);
            if mode != PackMode::Off {
                (action, rule) = destructive(&req, &hit, mode, action, rule);
                push_reason(
                    &mut req,
                    &mut reasons,
                    Reason::Destructive {
                        pack: hit.pack,
                        severity: hit.severity,
                        note: hit.note,
                    },
                );
            }
        }
        let path_capability = matches!(
            req.capability,
            Capability::FileRead
                | Capability::FileWriteProject
                | Capability::FileWriteOutsideProject
        );
        if req.capability == Capability::FileRead
            && action != Action::Deny
            && let Some(reach_of) = req.directory_read.clone()
        {
            // A directory read reads what is in it; the secret rules apply
            // to those paths (`list ~/.ssh`, `grep -r key ~`).
            let subject = req.subject.clone();
            let dir = Path::new(&subject);
            let how = crate::policy::reach::Walk {
                skip_hidden: reach_of.skips_hidden,
                follow: reach_of.follow,
                dirs_only: reach_of.names_only,
            };
            let mut reach = if !reach_of.paths.is_empty() {
                // A git reader's history: the paths it can print, wherever they are now.
                reach_of
                    .paths
                    .iter()
                    .map(|p| (std::path::PathBuf::from(p), std::path::PathBuf::from(p)))
                    .collect()
            } else if reach_of.recursive {
                // A recursive read (`grep -r`, `rg`) reads every file below; one the
                // analysis already found over the bound is not walked again.
                let walked = if reach_of.over_bound {
                    Err(crate::policy::reach::OverBound)
                } else {
                    crate::policy::reach::walk(dir, how)
                };
                match walked {
                    Ok(all) => all.into_iter().map(|p| (p.clone(), p)).collect(),
                    Err(crate::policy::reach::OverBound) => {
                        if action == Action::Allow {
                            action = Action::Ask;
                            rule = builtin_ask(&req);
                        }
                        offer_always = false;
                        push_reason(&mut req, &mut reasons, Reason::WalkBound);
                        Vec::new()
                    }
                }
            } else if reach_of.names_only {
                vec![(dir.to_path_buf(), dir.to_path_buf())]
            } else {
                crate::tools::directory_reach_entries(dir)
            };
            if reach_of.names_only {
                // A listing shows what a directory holds, not its files' content: each
                // directory listed is judged as the read of its contents, `D/` (so
                // `*/.ssh/*` covers `ls ~/.ssh`, and a `.env` among the names is not
                // read).
                reach = reach
                    .into_iter()
                    .map(|(listed, resolved)| {
                        let slash = |p: std::path::PathBuf| {
                            std::path::PathBuf::from(format!(
                                "{}/",
                                p.display().to_string().trim_end_matches('/')
                            ))
                        };
                        (slash(listed), slash(resolved))
                    })
                    .collect();
            } else if ctx.home() != dir && crate::model::paths::is_inside(ctx.home(), dir) {
                // `/`, `/home`: a recursive read gets to the user's own secrets too.
                reach.extend(crate::tools::directory_reach_entries(ctx.home()));
            }
            // A glob returns only the names its pattern matches; a pattern globset
            // cannot compile keeps the whole reach.
            let glob = reach_of
                .glob
                .as_deref()
                .and_then(|g| {
                    globset::GlobBuilder::new(g)
                        .literal_separator(true)
                        .build()
                        .ok()
                })
                .map(|g| g.compile_matcher());
            let reach: Vec<std::path::PathBuf> = reach
                .into_iter()
                .filter(|(listed, resolved)| {
                    glob.as_ref()
                        .is_none_or(|g| g.is_match(listed) || g.is_match(resolved))
                })
                .map(|(_, resolved)| resolved)
                .collect();
            let strictest = reach
                .iter()
                .filter_map(|p| {
                    let s = p.display().to_string();
                    let e = policy.evaluate(session.as_ref(), Capability::FileRead, &s);
                    (e.action > action).then(|| (e.action, e.rule.cloned(), s))
                })
                .max_by_key(|(a, _, _)| *a);
            if let Some((a, r, path)) = strictest {
                action = a;
                rule = r;
                offer_always = false;
                push_reason(&mut req, &mut reasons, Reason::DirectoryRead { path });
            }
            if action == Action::Allow
                && by_defaults(rule.as_ref())
                && let Some(path) = reach
                    .iter()
                    .find(|p| crate::programs::holds_credential(p, ctx.home()))
            {
                action = Action::Ask;
                rule = builtin_ask(&req);
                offer_always = false;
                let path = path.display().to_string();
                push_reason(&mut req, &mut reasons, Reason::CredentialInside { path });
            }
        }
        if req.capability == Capability::FileRead
            && req.directory_read.is_none()
            && action == Action::Allow
            && by_defaults(rule.as_ref())
            && crate::programs::holds_credential(Path::new(&req.subject), ctx.home())
        {
            // A git configuration with a token in a remote's URL or an Authorization
            // header, a startup file writing a key out: as secret as `.netrc`, whatever
            // reader prints it.
            action = Action::Ask;
            rule = builtin_ask(&req);
            offer_always = false;
            let path = req.subject.clone();
            push_reason(&mut req, &mut reasons, Reason::CredentialInside { path });
        }
        // A process alias (`/proc/self/…`, `/dev/fd/N`) names the tool's own view, which
        // this process cannot see: as unknown as a variable.
        let unknown_path = req.unresolved
            || !req.subject.starts_with('/')
            || crate::model::paths::is_process_alias(Path::new(&req.subject));
        if path_capability && unknown_path && action == Action::Allow {
            // An unresolved path (`cat $F`, a write after `cd "$X"`): its location is only
            // known when it runs, so no rule written for locations can vouch for it.
            action = Action::Ask;
            rule = builtin_ask(&req);
            offer_always = false;
            push_reason(&mut req, &mut reasons, Reason::UnknownPath);
        }
        if req.capability == Capability::ProcessExecute && req.unresolved && action == Action::Allow
        {
            // A command with an operand only known when it runs (`ls "$d"`, `git show
            // $X`): a rule for its text cannot vouch for what the operand will be. A
            // contained one stays contained: the sandbox holds whatever it names.
            action = Action::Ask;
            rule = builtin_ask(&req);
            offer_always = false;
            push_reason(&mut req, &mut reasons, Reason::UnknownOperand);
        }
        if matches!(
            req.capability,
            Capability::FileWriteProject | Capability::FileWriteOutsideProject
        ) && action != Action::Deny
        {
            // A write to a path the read rules keep from being read silently destroys
            // or plants a secret (`> .env`, `cp x ~/.ssh/authorized_keys`): it is judged
            // at least as the read of it would be, whatever tool writes it, and no
            // pattern for the write could quiet it (this check would still ask).
            let read = policy.evaluate(session.as_ref(), Capability::FileRead, &req.subject);
            if read.action >= Action::Ask {
                if read.action > action {
                    action = read.action;
                    rule = read.rule.cloned();
                }
                offer_always = false;
                push_reason(&mut req, &mut reasons, Reason::SecretWrite);
            }
        }
        if let Some(named) = approval_channel(&req) {
            // Only the person answers a prompt: a command or URL naming the panel token
            // or the answer routes is never quiet and never under an "always" pattern.
            offer_always = false;
            push_reason(
                &mut req,
                &mut reasons,
                Reason::ApprovalChannel {
                    named: named.to_string(),
                },
            );
            if action < Action::Ask {
                action = Action::Ask;
                rule = Some(PermissionRule::new(
                    req.capability.as_str(),
                    format!("*{named}*"),
                    Action::Ask,
                    RuleSource::Builtin,
                ));
            }
        }
        if let Some(hit) = protected_target(&req, &protected) {
            // Never quiet, never under an "always" pattern, whatever tool.
            offer_always = false;
            let reason = if hit.own_config {
                Reason::SelfProtection
            } else {
                Reason::ProtectedWrite {
                    reason: hit.reason.clone(),
                }
            };
            push_reason(&mut req, &mut reasons, reason);
            if action < Action::Ask {
                action = Action::Ask;
                rule = Some(PermissionRule::new(
                    req.capability.as_str(),
                    hit.pattern,
                    Action::Ask,
                    RuleSource::Builtin,
                ));
            }
        }
        // A session grant is the user's own answer to this very panel, given after a
        // 409 told them the config could not carry it: it holds despite the cap.
        let by_session = rule
            .as_ref()
            .is_some_and(|r| r.source == RuleSource::Session);
        if broken && !by_session {
            offer_always = false;
            if action < Action::Ask {
                // The call-level note names the broken file; the reason marks the cap.
                reasons.push(Reason::BrokenConfig);
                action = Action::Ask;
                rule = builtin_ask(&req);
            }
        }
        if call.command.is_none() && req.subject.contains('*') {
            // A tool's subject is literal (a path, a URL, an MCP tool): a `*` in it is a
            // character, and the rule syntax has no escape for it, so it never reaches
            // a pattern as a wildcard. What stays: a glob tool's own pattern (its `*`
            // are wildcards; a literal one was escaped as `[*]`, which would not stay
            // literal either) and a URL's whole origin (`https://host/*`).
            let glob = req
                .directory_read
                .as_ref()
                .is_some_and(|d| d.glob.is_some());
            let subject = req.subject.clone();
            req.always_patterns.retain(|p| {
                if glob {
                    return !p.contains("[*]");
                }
                !p.contains('*')
                    || (*p != subject
                        && p.strip_suffix("/*").is_some_and(|base| !base.contains('*')))
            });
        }
        if !offer_always {
            req.always_patterns.clear();
        } else if policy.always_scope() == AlwaysScope::Exact && !req.always_patterns.is_empty() {
            // Seed 004: remember exactly what was approved. A subject with a `*` would be
            // a wildcard once written as a rule, so it offers nothing rather than more.
            req.always_patterns = if req.subject.contains('*') {
                Vec::new()
            } else {
                vec![req.subject.clone()]
            };
        }
        evaluated.push(EvaluatedRequest {
            request: req,
            decision: action,
            rule,
            reasons,
        });
    }

    if let Some(hit) = &call.hardline {
        apply_hardline(&mut evaluated, hit);
        push_note(&mut risk_notes, messages::HARDLINE_NOTE);
    }
    for ignored in policy.ignored() {
        push_note(
            &mut risk_notes,
            &messages::ignored_allows_note(&ignored.file, ignored.rules.len(), ignored.status),
        );
    }
    for e in policy.errors() {
        push_note(
            &mut risk_notes,
            &format!(
                "The configuration {} is broken at line {}, column {} ({}); every decision is at most ask until it is fixed.",
                e.file, e.line, e.column, e.message
            ),
        );
    }

    let mut decision = evaluated
        .iter()
        .map(|e| e.decision)
        .max()
        .unwrap_or(Action::Ask);
    let mut containment = None;
    if decision == Action::Contain {
        match contain_call(policy, call, ctx, &evaluated, sandbox) {
            Ok(c) => containment = Some(c),
            Err(why) => {
                for e in evaluated
                    .iter_mut()
                    .filter(|e| e.decision == Action::Contain)
                {
                    e.decision = Action::Ask;
                    push_reason(
                        &mut e.request,
                        &mut e.reasons,
                        Reason::NotContained { why: why.clone() },
                    );
                }
                decision = Action::Ask;
            }
        }
    }
    let summary = summarize(call, &evaluated);
    let mut always_patterns = Vec::new();
    let mut message = None;
    let mut panel = None;

    if decision == Action::Ask && !interactive {
        decision = Action::Deny;
        for e in &mut evaluated {
            if e.decision == Action::Ask {
                e.decision = Action::Deny;
                e.reasons.push(Reason::NonInteractive);
            }
        }
        message = Some(messages::NON_INTERACTIVE_MESSAGE.to_string());
    } else if decision == Action::Ask {
        always_patterns = call_always_patterns(&evaluated);
        panel = Some(build_panel(
            call,
            &evaluated,
            &always_patterns,
            &risk_notes,
            ctx,
        ));
    } else if decision == Action::Deny {
        message = deny_message(&evaluated, call.hardline.as_ref());
    }

    CallDecision {
        tool: call.tool.clone(),
        decision,
        requests: evaluated,
        always_patterns,
        message,
        panel,
        summary,
        risk_notes,
        hardline: call.hardline.clone(),
        config_errors: policy.errors().to_vec(),
        containment,
    }
}

/// The sandbox for a call whose strictest request is contained: a shell command run
/// inside the project, built by `sandbox`.
fn contain_call(
    policy: &Policy,
    call: &MappedCall,
    ctx: &AnalysisContext,
    evaluated: &[EvaluatedRequest],
    sandbox: Option<&dyn Sandbox>,
) -> Result<Containment, NotContained> {
    if call.command.is_none() || call.tool != "bash" {
        return Err(NotContained::NotACommand);
    }
    // Every part must run inside the project (`cd /tmp && make` does not), where
    // an unknown working directory counts as outside.
    let parts_inside = call.analysis.as_ref().is_none_or(|a| {
        a.parts.iter().all(|p| {
            p.cwd
                .as_deref()
                .is_some_and(|c| crate::model::paths::is_inside(Path::new(c), ctx.root()))
        })
    });
    if !parts_inside || !crate::model::paths::is_inside(Path::new(&call.cwd), ctx.root()) {
        return Err(NotContained::OutsideProject);
    }
    // The sandbox can only give the whole network or none. Every network request the
    // analysis saw is allowed here (a stricter one would make the call ask), but code
    // run inside may reach any other address: the network is given only where the rules
    // allow every address, and otherwise the command runs without it.
    let network = evaluated
        .iter()
        .any(|e| e.request.capability == Capability::NetworkAccess)
        && policy.evaluate(None, Capability::NetworkAccess, "*").action == Action::Allow;
    // Code written on the command line runs with the project read-only (and no
    // network): nothing has read what it does, and it may delete as well as print.
    let inline = evaluated
        .iter()
        .any(|e| e.decision == Action::Contain && e.request.verdict == Some(Verdict::InlineCode));
    let profile = if inline {
        ProfileName::ReadOnly
    } else if network {
        ProfileName::ProjectNetwork
    } else {
        ProfileName::Project
    };
    match sandbox {
        Some(s) => s.contain(call, ctx, policy, profile),
        None => Err(NotContained::NoRunner),
    }
}

/// Whether an allow came from the defaults or the preset alone, not from a rule a
/// person or a project wrote: a file holding a credential asks as a secret rule would,
/// and a rule written for it can allow it as it can a secret.
fn by_defaults(rule: Option<&PermissionRule>) -> bool {
    rule.is_none_or(|r| matches!(r.source, RuleSource::Default | RuleSource::Preset))
}

/// Records a reason and its note on the request.
/// Offers only the exact subject as "always", where any pattern was offered (a `*`
/// in the subject would be a wildcard in a pattern: then none).
fn narrow_to_exact(req: &mut CapabilityRequest) {
    if !req.always_patterns.is_empty() {
        req.always_patterns = if req.subject.contains('*') {
            Vec::new()
        } else {
            vec![req.subject.clone()]
        };
    }
}

/// A command a domain pack names as destroying never runs contained; a critical one asks whatever the rules say, a high one unless
/// a rule allows exactly this command; a pack the configs set to `deny` denies it.
fn destructive(
    req: &CapabilityRequest,
    hit: &PackHit,
    mode: PackMode,
    action: Action,
    rule: Option<PermissionRule>,
) -> (Action, Option<PermissionRule>) {
    let builtin = |a: Action| {
        Some(
            PermissionRule::new(req.capability.as_str(), "*", a, RuleSource::Builtin)
                .named(format!("{} pack: {}", hit.pack, hit.severity.as_str())),
        )
    };
    if mode == PackMode::Deny {
        return (Action::Deny, builtin(Action::Deny));
    }
    let exact = rule
        .as_ref()
        .is_some_and(|r| r.action == Action::Allow && r.pattern == req.subject);
    let must_ask = action == Action::Contain
        || (action < Action::Ask
            && match hit.severity {
                Severity::Critical => true,
                Severity::High => !exact,
                Severity::Medium => false,
            });
    if must_ask {
        (Action::Ask, builtin(Action::Ask))
    } else {
        (action, rule)
    }
}

/// The rule a cap that asks names: built in, for the request's capability, any subject.
fn builtin_ask(req: &CapabilityRequest) -> Option<PermissionRule> {
    Some(PermissionRule::new(
        req.capability.as_str(),
        "*",
        Action::Ask,
        RuleSource::Builtin,
    ))
}

fn push_reason(req: &mut CapabilityRequest, reasons: &mut Vec<Reason>, reason: Reason) {
    push_note(
        &mut req.risk_notes,
        &messages::reason_note(&reason, &req.subject),
    );
    if !reasons.contains(&reason) {
        reasons.push(reason);
    }
}

fn push_note(notes: &mut Vec<String>, note: &str) {
    if !notes.iter().any(|n| n == note) {
        notes.push(note.to_string());
    }
}

fn hardline_rule(hit: &HardlineHit, cap: Capability) -> PermissionRule {
    PermissionRule::new(
        cap.as_str(),
        hit.rule.clone(),
        Action::Deny,
        RuleSource::Hardline,
    )
}

/// Marks the request(s) the hit belongs to: the request whose subject is the hit's
/// rendering (a command part, or the device a redirect writes), else the command parts
/// starting with the same word, else every command part, else every request. Any mark
/// denies the whole call.
fn apply_hardline(evaluated: &mut [EvaluatedRequest], hit: &HardlineHit) {
    let rendering = collapse_whitespace(&hit.rendering);
    let first_word = rendering.split(' ').next().unwrap_or_default().to_string();
    let is_exec = |e: &EvaluatedRequest| e.request.capability == Capability::ProcessExecute;
    let exact: Vec<usize> = indices(evaluated, |e| {
        collapse_whitespace(&e.request.subject) == rendering
    });
    let by_word: Vec<usize> = indices(evaluated, |e| {
        is_exec(e)
            && e.request
                .subject
                .split(crate::model::vocab::is_bash_blank)
                .next()
                == Some(first_word.as_str())
    });
    let exec: Vec<usize> = indices(evaluated, is_exec);
    let targets = [exact, by_word, exec]
        .into_iter()
        .find(|v| !v.is_empty())
        .unwrap_or_else(|| (0..evaluated.len()).collect());
    for i in targets {
        if let Some(e) = evaluated.get_mut(i) {
            e.decision = Action::Deny;
            e.rule = Some(hardline_rule(hit, e.request.capability));
            push_reason(
                &mut e.request,
                &mut e.reasons,
                Reason::Hardline {
                    rule: hit.rule.clone(),
                },
            );
        }
    }
    for e in evaluated.iter_mut() {
        e.request.always_patterns.clear();
    }
}

fn indices(v: &[EvaluatedRequest], f: impl Fn(&EvaluatedRequest) -> bool) -> Vec<usize> {
    v.iter()
        .enumerate()
        .filter(|(_, e)| f(e))
        .map(|(i, _)| i)
        .collect()
}

fn deny_message(evaluated: &[EvaluatedRequest], hit: Option<&HardlineHit>) -> Option<String> {
    if let Some(hit) = hit
        && let Some(e) = evaluated.iter().find(|e| {
            e.rule
                .as_ref()
                .is_some_and(|r| r.source == RuleSource::Hardline)
        })
    {
        return Some(messages::hardline_deny_message(&e.request, hit));
    }
    evaluated
        .iter()
        .find(|e| e.decision == Action::Deny)
        .map(|e| messages::policy_deny_message(&e.request, e.rule.as_ref()))
}

/// The union, in order, of the asking requests' patterns; empty unless every asking
/// request offers at least one.
fn call_always_patterns(evaluated: &[EvaluatedRequest]) -> Vec<String> {
    let asking: Vec<&EvaluatedRequest> = evaluated
        .iter()
        .filter(|e| e.decision == Action::Ask)
        .collect();
    if asking.is_empty() || asking.iter().any(|e| e.request.always_patterns.is_empty()) {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for e in asking {
        for p in &e.request.always_patterns {
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
    }
    out
}

fn summarize(call: &MappedCall, evaluated: &[EvaluatedRequest]) -> String {
    if let Some(cmd) = &call.command {
        return collapse_whitespace(cmd);
    }
    let mut parts: Vec<String> = Vec::new();
    for e in evaluated {
        let d = crate::presentation::messages::lower_first(&e.request.display);
        if !parts.contains(&d) {
            parts.push(d);
        }
    }
    parts.join(", ")
}

/// KHAELOR's own files outside the protected table: every config file the policy read
/// (the managed one too) and the trust store, each as given and with symlinks resolved.
/// The project's and the user's `.khaelor/` are rows of the table itself.
fn protected_paths(policy: &Policy, ctx: &AnalysisContext) -> Vec<PathBuf> {
    let mut v = vec![ctx.root().join(".khaelor"), ctx.home().join(".khaelor")];
    v.extend(policy.files().iter().cloned());
    v.extend(policy.trust_dir().map(Path::to_path_buf));
    // A managed config from a signed bundle: its whole cache (the rollback floor and
    // the time of the last confirmation live beside it, unsigned).
    v.extend(
        policy
            .files()
            .iter()
            .filter_map(|f| crate::policy::bundle::store::cache_dir_of(f)),
    );
    let resolved: Vec<PathBuf> = v
        .iter()
        .map(|p| crate::model::paths::resolve_existing_prefix(p))
        .collect();
    v.extend(resolved);
    v.sort();
    v.dedup();
    v
}

/// The protected-write hit for `req`, if any (`crate::policy::protected` owns the table).
fn protected_target(req: &CapabilityRequest, extra: &[PathBuf]) -> Option<protected::Hit> {
    match req.capability {
        Capability::FileWriteProject | Capability::FileWriteOutsideProject => {
            protected::protected_write(Path::new(&req.subject), extra)
        }
        // A command that names the config directory or the tool itself (`rm -rf
        // .khaelor`, `khaelor-perm trust .`) may change them in ways the analysis
        // cannot see.
        Capability::ProcessExecute if protected::command_names_own_config(&req.subject) => {
            Some(protected::Hit {
                pattern: "*khaelor*".to_string(),
                reason: protected::OWN_CONFIG_REASON.to_string(),
                own_config: true,
            })
        }
        _ => None,
    }
}

/// The fragment by which a request names the service's way of answering prompts: a
/// command or URL naming the panel token or the answer routes
/// (`protected::names_approval_channel`), or a read or write of a file named like the
/// panel token. The read rules already ask for it (`secret: KHAELOR panel token`);
/// this holds under any configuration, an allow-everything one included.
fn approval_channel(req: &CapabilityRequest) -> Option<&'static str> {
    match req.capability {
        Capability::ProcessExecute | Capability::ProcessBackground | Capability::NetworkAccess => {
            protected::names_approval_channel(&req.subject)
        }
        Capability::FileRead
        | Capability::FileWriteProject
        | Capability::FileWriteOutsideProject => Path::new(&req.subject)
            .file_name()
            .is_some_and(|n| {
                n.to_string_lossy()
                    .eq_ignore_ascii_case(crate::policy::trust::PANEL_TOKEN_FILE)
            })
            .then_some(crate::policy::trust::PANEL_TOKEN_FILE),
        _ => None,
    }
}

fn build_panel(
    call: &MappedCall,
    evaluated: &[EvaluatedRequest],
    always_patterns: &[String],
    call_notes: &[String],
    ctx: &AnalysisContext,
) -> Panel {
    let asking: Vec<&EvaluatedRequest> = evaluated
        .iter()
        .filter(|e| e.decision == Action::Ask)
        .collect();
    let head = asking.first().copied().or_else(|| evaluated.first());
    let badge = match call.tool.as_str() {
        "bash" => Capability::ProcessExecute.as_str().to_string(),
        "process_start" => Capability::ProcessBackground.as_str().to_string(),
        _ => head
            .map(|e| e.request.capability.as_str().to_string())
            .unwrap_or_default(),
    };
    let subject = match &call.command {
        Some(c) => c.clone(),
        None => {
            let mut subjects: Vec<String> = Vec::new();
            for e in evaluated {
                let s = match e.request.capability {
                    Capability::FileRead
                    | Capability::FileWriteProject
                    | Capability::FileWriteOutsideProject => {
                        crate::tools::display_path(Path::new(&e.request.subject), ctx)
                    }
                    _ => e.request.subject.clone(),
                };
                if !subjects.contains(&s) {
                    subjects.push(s);
                }
            }
            subjects.join("\n")
        }
    };
    let parts = match &call.analysis {
        Some(a) if a.class != CommandClass::Simple && a.parts.len() > 1 => {
            a.parts.iter().map(|p| p.text.clone()).collect()
        }
        _ => Vec::new(),
    };
    let diff = {
        let diffs: Vec<&str> = asking
            .iter()
            .filter_map(|e| e.request.metadata.get("diff").and_then(|d| d.as_str()))
            .collect();
        (!diffs.is_empty()).then(|| diffs.concat())
    };
    let mut risk_notes: Vec<String> = Vec::new();
    for n in call_notes
        .iter()
        .chain(asking.iter().flat_map(|e| e.request.risk_notes.iter()))
    {
        push_note(&mut risk_notes, n);
    }
    let cwd = crate::tools::display_path(Path::new(&call.cwd), ctx);
    let working_directory = if cwd == "." {
        // Inside the project the panel shows where, not `.`.
        home_relative(ctx.root(), ctx)
    } else if Path::new(&call.cwd).starts_with(ctx.root()) {
        home_relative(Path::new(&call.cwd), ctx)
    } else {
        cwd
    };
    Panel {
        title: "KHAELOR requests permission".to_string(),
        verb: messages::verb_for_tool(&call.tool).to_string(),
        badge,
        subject,
        working_directory,
        parts,
        diff,
        risk_notes,
        always_patterns: always_patterns.to_vec(),
        keys: messages::panel_keys(always_patterns),
        details: evaluated
            .iter()
            .map(|e| PanelDetail {
                decision: e.decision,
                capability: e.request.capability,
                subject: e.request.subject.clone(),
                display: e.request.display.clone(),
                rule: e.rule.clone(),
            })
            .collect(),
    }
}

fn home_relative(p: &Path, ctx: &AnalysisContext) -> String {
    match p.strip_prefix(ctx.home()) {
        Ok(rel) if rel.as_os_str().is_empty() => "~".to_string(),
        Ok(rel) => format!("~/{}", rel.display()),
        Err(_) => p.display().to_string(),
    }
}

/// Why an "always" grant cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    #[error("the call does not ask, so there is nothing to grant")]
    NotAsking,
    #[error("this call offers no \"always\" pattern")]
    NothingOffered,
    #[error("the pattern `{0}` is not one this call offers")]
    NotOffered(String),
}

/// The rules an "always" grant with `pattern` persists (project source, action allow):
/// one per asking request, its capability, `pattern` when that request offers it, else
/// its own first pattern.
pub fn grant_rules(
    decision: &CallDecision,
    pattern: &str,
) -> Result<Vec<PermissionRule>, GrantError> {
    if decision.decision != Action::Ask {
        return Err(GrantError::NotAsking);
    }
    if decision.always_patterns.is_empty() {
        return Err(GrantError::NothingOffered);
    }
    if !decision.always_patterns.iter().any(|p| p == pattern) {
        return Err(GrantError::NotOffered(pattern.to_string()));
    }
    let mut out: Vec<PermissionRule> = Vec::new();
    for e in decision
        .requests
        .iter()
        .filter(|e| e.decision == Action::Ask)
    {
        let own = &e.request.always_patterns;
        let chosen = if own.iter().any(|p| p == pattern) {
            pattern.to_string()
        } else {
            match own.first() {
                Some(p) => p.clone(),
                None => return Err(GrantError::NothingOffered),
            }
        };
        let rule = PermissionRule::new(
            e.request.capability.as_str(),
            chosen,
            Action::Allow,
            RuleSource::Project,
        );
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    Ok(out)
}

/// The capabilities a tool needs, as a conjunction of alternatives: a call of the tool
/// needs one capability from each inner list.
fn tool_needs(tool: &str) -> Option<&'static [&'static [Capability]]> {
    const READ: &[&[Capability]] = &[&[Capability::FileRead]];
    const WRITE: &[&[Capability]] = &[&[
        Capability::FileWriteProject,
        Capability::FileWriteOutsideProject,
    ]];
    const EXEC: &[&[Capability]] = &[&[Capability::ProcessExecute]];
    const START: &[&[Capability]] = &[
        &[Capability::ProcessBackground],
        &[Capability::ProcessExecute],
    ];
    const STDIN: &[&[Capability]] = &[&[Capability::ProcessBackground]];
    const FETCH: &[&[Capability]] = &[&[Capability::NetworkAccess]];
    const MCP: &[&[Capability]] = &[&[Capability::McpCall]];
    match tool {
        "read" | "glob" | "grep" | "list" => Some(READ),
        "write" | "edit" | "apply_patch" => Some(WRITE),
        "bash" => Some(EXEC),
        "process_start" => Some(START),
        "process_stdin" => Some(STDIN),
        "webfetch" => Some(FETCH),
        "mcp" => Some(MCP),
        _ => None,
    }
}

/// Seed §7.2: the tools still worth offering the model. A tool goes when some
/// capability it always needs is denied for every subject (all alternatives, for
/// write/edit/apply_patch: both project and outside). Pattern-scoped denies keep it;
/// tools this mapping does not know are kept (they are not ours to judge).
pub fn available_tools(policy: &Policy, tools: &[String]) -> Vec<String> {
    tools
        .iter()
        .filter(|t| match tool_needs(t) {
            Some(needs) => !needs
                .iter()
                .any(|alts| alts.iter().all(|c| policy.denies_everything(*c))),
            None => true,
        })
        .cloned()
        .collect()
}
