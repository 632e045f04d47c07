//! The terminal panel of `khaelor-perm approve` (seed §6.1) as a state machine: the
//! queue of calls waiting for a person, the call under the cursor, the keys and what
//! each one asks the service to do. Its drawing is the child module `draw`.
//!
//! Owns layout, key handling and the escaping of everything drawn. It does no I/O:
//! the parent (`cli::approve`) feeds it the service's events and keys, sends the
//! `Command`s it returns and reports back how they went. It never decides: what a call asks, its
//! "always" patterns and its panel text are the service's decision, drawn as they are
//! (the panel data is `messages::Panel`, the details text `render_panel_details`).
//!
//! Untrusted text (commands, paths, diffs, ids, notes, error messages) is drawn only
//! through `messages::push_terminal_safe`, so an escape sequence in a command shows as
//! `\u{1b}…` and never reaches the terminal. Monochrome-safe: every mark is a symbol or
//! a text attribute; colour, when the terminal allows it, only repeats a symbol.

use std::ops::Range;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

pub use crate::http::api::{PanelCall, PanelResolved};
use crate::policy::decide::CallDecision;
use crate::presentation::messages::{self, Panel, terminal_safe_line};
use crate::session::CallStatus;

/// Action keys pressed this soon after the call under the cursor changed by itself (an
/// answer from elsewhere, a new call) are not taken: the key was meant for the call
/// that was there.
pub const CHANGE_GUARD: Duration = Duration::from_millis(400);
/// Longest reason line kept (the model reads it).
const MAX_REASON_CHARS: usize = 500;
/// Queue lines shown under the panel.
const QUEUE_LINES: usize = 5;

/// What the service's event stream says.
#[derive(Debug, Clone)]
pub enum StreamEvent {
    /// Every call waiting now, oldest first.
    Snapshot(Vec<PanelCall>),
    /// A call started waiting.
    Pending(Box<PanelCall>),
    /// A call stopped waiting: approved or denied, and by whom.
    Resolved(PanelResolved),
}

/// What the panel asks the caller to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `POST …/grant {"scope":"once"}`.
    AllowOnce {
        session_id: String,
        call_id: String,
    },
    /// `POST …/grant {"scope":"always","pattern":…}`.
    AllowAlways {
        session_id: String,
        call_id: String,
        pattern: String,
    },
    /// `POST …/deny {"feedback":…}`.
    Deny {
        session_id: String,
        call_id: String,
        feedback: Option<String>,
    },
    Quit,
}

/// Where the panel is in answering the call under the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Panel,
    /// `A` pressed: the pattern at this index of `alwaysPatterns` is the one offered.
    Always(usize),
    /// `Tab`: every request, its rule and source.
    Details,
    /// `Esc` pressed: the one-line reason being typed.
    Reason(String),
}

/// The connection to the service, as the header line shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    Connecting,
    Connected,
    /// Lost; the caller retries (`why` is shown).
    Retrying {
        why: String,
    },
}

/// A waiting call with what its panel needs, computed once when it arrives.
#[derive(Debug, Clone)]
struct Entry {
    call: PanelCall,
    panel: Panel,
    always: Vec<String>,
    /// Operator byte ranges of a shell command subject.
    operators: Vec<Range<usize>>,
}

impl Entry {
    fn new(call: PanelCall) -> Entry {
        let decision: Option<CallDecision> = serde_json::from_value(call.decision.clone()).ok();
        let panel = match decision.as_ref().and_then(|d| d.panel.clone()) {
            Some(p) => p,
            None => fallback_panel(&call, decision.as_ref()),
        };
        let always = decision
            .as_ref()
            .map(|d| d.always_patterns.clone())
            .unwrap_or_default();
        let operators = if matches!(call.tool.as_str(), "bash" | "process_start") {
            crate::analysis::ast::operator_spans(&panel.subject)
        } else {
            Vec::new()
        };
        Entry {
            call,
            panel,
            always,
            operators,
        }
    }

    fn id(&self) -> (&str, &str) {
        (&self.call.session_id, &self.call.call_id)
    }
}

/// A panel for a decision that carries none (or that this build cannot read): the
/// call's tool, its summary, notes and cwd; never an "always".
fn fallback_panel(call: &PanelCall, decision: Option<&CallDecision>) -> Panel {
    let summary = decision.map(|d| d.summary.clone()).unwrap_or_else(|| {
        call.decision
            .get("summary")
            .and_then(|s| s.as_str())
            .unwrap_or("(this call's decision could not be read)")
            .to_string()
    });
    Panel {
        title: "KHAELOR requests permission".into(),
        verb: messages::verb_for_tool(&call.tool).into(),
        badge: decision
            .and_then(|d| d.requests.first())
            .map(|r| r.request.capability.as_str().to_string())
            .unwrap_or_default(),
        subject: summary,
        working_directory: call.cwd.clone(),
        parts: Vec::new(),
        diff: None,
        risk_notes: decision.map(|d| d.risk_notes.clone()).unwrap_or_default(),
        always_patterns: Vec::new(),
        keys: messages::panel_keys(&[]),
        details: Vec::new(),
    }
}

/// The whole state of the terminal panel.
#[derive(Debug)]
pub struct App {
    /// The service, for the header.
    pub service: String,
    calls: Vec<Entry>,
    /// The call under the cursor, by identity (an index would silently move to another
    /// call when one above it is answered).
    selected: Option<(String, String)>,
    /// When the call under the cursor last changed without a key of the person's.
    changed_at: Option<Instant>,
    pub mode: Mode,
    pub link: Link,
    /// The last outcome or error, one line.
    pub status: String,
    /// The call whose answer is being sent (its keys wait for the result).
    sending: Option<(String, String)>,
    /// First line of the panel body shown (diffs and long commands scroll).
    scroll: usize,
    /// The largest useful `scroll` at the last draw.
    max_scroll: std::cell::Cell<usize>,
    /// Whether colour may repeat the symbols.
    color: bool,
}

impl App {
    pub fn new(service: impl Into<String>, color: bool) -> App {
        App {
            service: service.into(),
            calls: Vec::new(),
            selected: None,
            changed_at: None,
            mode: Mode::Panel,
            link: Link::Connecting,
            status: String::new(),
            sending: None,
            scroll: 0,
            max_scroll: std::cell::Cell::new(0),
            color,
        }
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The (session, call) under the cursor.
    #[cfg(test)]
    pub fn selected(&self) -> Option<(&str, &str)> {
        self.current().map(Entry::id)
    }

    fn index(&self) -> Option<usize> {
        let (s, c) = self.selected.as_ref()?;
        self.calls
            .iter()
            .position(|e| e.call.session_id == *s && e.call.call_id == *c)
    }

    fn current(&self) -> Option<&Entry> {
        self.index().and_then(|i| self.calls.get(i))
    }

    /// Puts the cursor on the call at `i` (clamped); `by_person`: a key moved it.
    fn select(&mut self, i: usize, by_person: bool, now: Instant) {
        let before = self.selected.clone();
        self.selected = self
            .calls
            .get(i.min(self.calls.len().saturating_sub(1)))
            .map(|e| (e.call.session_id.clone(), e.call.call_id.clone()));
        if self.selected != before {
            self.scroll = 0;
            if !by_person {
                self.changed_at = Some(now);
                if self.mode != Mode::Panel {
                    self.status =
                        "the call you were answering is no longer waiting; nothing was sent for it"
                            .into();
                }
            }
            self.mode = Mode::Panel;
        }
    }

    /// Applies one event of the service's stream.
    pub fn apply(&mut self, event: StreamEvent, now: Instant) {
        let at = self.index().unwrap_or(0);
        match event {
            StreamEvent::Snapshot(calls) => {
                self.calls = calls.into_iter().map(Entry::new).collect();
                self.link = Link::Connected;
            }
            StreamEvent::Pending(call) => {
                let known = self.calls.iter().any(|e| {
                    e.call.session_id == call.session_id && e.call.call_id == call.call_id
                });
                if !known {
                    self.calls.push(Entry::new(*call));
                }
            }
            StreamEvent::Resolved(PanelResolved {
                session_id,
                call_id,
                status,
                by,
            }) => {
                let status = match status {
                    CallStatus::Approved => "approved",
                    CallStatus::Denied => "denied",
                    CallStatus::Pending | CallStatus::Requested => "answered",
                };
                let before = self.calls.len();
                self.calls
                    .retain(|e| !(e.call.session_id == session_id && e.call.call_id == call_id));
                let ours = self.sending.as_ref() == Some(&(session_id.clone(), call_id.clone()));
                if self.calls.len() < before && !ours {
                    self.status = terminal_safe_line(&format!(
                        "call {call_id} of session {session_id}: {status} by {by}"
                    ));
                }
            }
        }
        if self.index().is_none() {
            self.select(at, false, now);
        }
    }

    /// The caller lost or regained the stream.
    pub fn set_link(&mut self, link: Link) {
        self.link = link;
    }

    /// How the caller's `Command` went: `Ok` with what to say, or the error.
    pub fn finished(
        &mut self,
        session_id: &str,
        call_id: &str,
        result: Result<String, String>,
        now: Instant,
    ) {
        if self.sending.as_ref().map(|(s, c)| (s.as_str(), c.as_str()))
            == Some((session_id, call_id))
        {
            self.sending = None;
        }
        match result {
            Ok(what) => {
                let at = self.index().unwrap_or(0);
                self.calls
                    .retain(|e| !(e.call.session_id == session_id && e.call.call_id == call_id));
                self.status = terminal_safe_line(&what);
                if self.index().is_none() {
                    // The next call is one the person has not seen yet: a second press
                    // of the key that answered this one must not answer it.
                    self.select(at, false, now);
                }
            }
            Err(e) => self.status = terminal_safe_line(&format!("error: {e}")),
        }
    }

    /// Handles one key; returns what the caller must do.
    pub fn key(&mut self, key: KeyEvent, now: Instant) -> Option<Command> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Some(Command::Quit);
        }
        if let Mode::Reason(text) = &mut self.mode {
            match key.code {
                KeyCode::Enter => {
                    let line = text.trim().to_string();
                    let feedback = (!line.is_empty()).then_some(line);
                    return self.act(now, |id| Command::Deny {
                        session_id: id.0,
                        call_id: id.1,
                        feedback,
                    });
                }
                KeyCode::Esc => self.mode = Mode::Panel,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c)
                    if !c.is_control()
                        && !key.modifiers.contains(KeyModifiers::CONTROL)
                        && text.chars().count() < MAX_REASON_CHARS =>
                {
                    text.push(c)
                }
                _ => {}
            }
            return None;
        }
        match key.code {
            KeyCode::Char('q') => return Some(Command::Quit),
            KeyCode::Char('j') | KeyCode::Down if self.mode != Mode::Details => {
                let i = self.index().map_or(0, |i| i + 1);
                self.select(i, true, now);
            }
            KeyCode::Char('k') | KeyCode::Up if self.mode != Mode::Details => {
                let i = self.index().map_or(0, |i| i.saturating_sub(1));
                self.select(i, true, now);
            }
            KeyCode::Char('j') | KeyCode::Down => self.scroll_by(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll_by(10),
            KeyCode::Char('k') | KeyCode::Up => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageUp | KeyCode::Char('b') => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Home => self.scroll = 0,
            KeyCode::Tab => {
                self.scroll = 0;
                self.mode = if self.mode == Mode::Details {
                    Mode::Panel
                } else {
                    Mode::Details
                };
            }
            KeyCode::Char('a') | KeyCode::Char('A') => {
                let n = self.current().map_or(0, |e| e.always.len());
                if n == 0 {
                    if self.current().is_some() {
                        self.status =
                            "no \"always\" for this call: only once, or deny (nothing persistable was offered)".into();
                    }
                } else {
                    self.mode = match self.mode {
                        Mode::Always(i) => Mode::Always((i + 1) % n),
                        _ => Mode::Always(0),
                    };
                }
            }
            KeyCode::Enter => {
                return match self.mode.clone() {
                    Mode::Always(i) => {
                        let pattern = self.current().and_then(|e| e.always.get(i)).cloned()?;
                        self.act(now, |id| Command::AllowAlways {
                            session_id: id.0,
                            call_id: id.1,
                            pattern,
                        })
                    }
                    Mode::Panel => self.act(now, |id| Command::AllowOnce {
                        session_id: id.0,
                        call_id: id.1,
                    }),
                    _ => None,
                };
            }
            KeyCode::Esc => match self.mode {
                Mode::Panel if self.current().is_some() => self.mode = Mode::Reason(String::new()),
                _ => self.mode = Mode::Panel,
            },
            _ => {}
        }
        None
    }

    fn scroll_by(&mut self, n: usize) {
        self.scroll = (self.scroll + n).min(self.max_scroll.get());
    }

    /// An answer for the call under the cursor, unless one is in flight or the call
    /// just changed under the person's finger.
    fn act(
        &mut self,
        now: Instant,
        make: impl FnOnce((String, String)) -> Command,
    ) -> Option<Command> {
        let id = self.selected.clone().filter(|_| self.index().is_some())?;
        if self.sending.is_some() {
            self.status = "still sending the last answer".into();
            return None;
        }
        if self
            .changed_at
            .is_some_and(|t| now.saturating_duration_since(t) < CHANGE_GUARD)
        {
            self.status = "the call on screen just changed; look, then press again".into();
            return None;
        }
        self.mode = Mode::Panel;
        self.sending = Some(id.clone());
        self.status = "sending…".into();
        Some(make(id))
    }
}

mod draw;
pub use draw::color_allowed;

#[cfg(test)]
mod tests;
