//! The terminal panel of `khaelor-perm approve` (seed §6.1) as a state machine and its
//! drawing: the queue of calls waiting for a person, the panel of the one under the
//! cursor, the keys and what each one asks the service to do.
//!
//! Owns layout, key handling and the escaping of everything drawn. It does no I/O:
//! `cli::approve` feeds it the service's events and keys, sends the `Command`s it
//! returns and reports back how they went. It never decides: what a call asks, its
//! "always" patterns and its panel text are the service's decision, drawn as they are
//! (the panel data is `messages::Panel`, the details text `render_panel_details`).
//!
//! Untrusted text (commands, paths, diffs, ids, notes, error messages) is drawn only
//! through `messages::push_terminal_safe`, so an escape sequence in a command shows as
//! `\u{1b}…` and never reaches the terminal. Monochrome-safe: every mark is a symbol or
//! a text attribute; colour, when the terminal allows it, only repeats a symbol.

use std::ops::Range;
use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

pub use crate::http::api::{PanelCall, PanelResolved};
use crate::policy::decide::CallDecision;
use crate::presentation::messages::{self, Panel, push_terminal_safe, terminal_safe_line};
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

    /// How many calls wait.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The (session, call) under the cursor.
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

    /// Draws the whole screen.
    pub fn draw(&self, frame: &mut Frame) {
        let area = frame.area();
        let queue_lines = if self.calls.len() > 1 {
            self.calls.len().min(QUEUE_LINES) as u16 + 1
        } else {
            0
        };
        // The panel is as tall as its content (the seed's box), up to the room left.
        let width = usize::from(area.width.saturating_sub(4)).max(10);
        let content = self.current().map(|e| (e, self.content(e, width)));
        let want = match &content {
            Some((_, (body, bottom))) => 3 + body.len() + bottom.len(),
            None => 4,
        };
        let [head, panel, queue, foot, _] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Max(u16::try_from(want).unwrap_or(u16::MAX)),
            Constraint::Length(queue_lines),
            Constraint::Length(3),
            Constraint::Min(0),
        ])
        .areas(area);
        frame.render_widget(Paragraph::new(self.header()), head);
        match content {
            Some((e, (body, bottom))) => self.draw_panel(frame, panel, e, body, bottom),
            None => frame.render_widget(
                Paragraph::new(vec![
                    Line::raw(""),
                    Line::raw("  No call is waiting for an answer."),
                ])
                .block(panel_block(" KHAELOR approve ")),
                panel,
            ),
        }
        if queue_lines > 0 {
            frame.render_widget(Paragraph::new(self.queue_lines()), queue);
        }
        frame.render_widget(Paragraph::new(self.footer()), foot);
    }

    /// The panel's scrollable body and its fixed bottom, `width` columns wide.
    fn content(&self, e: &Entry, width: usize) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
        let body = if self.mode == Mode::Details {
            details_lines(e, width)
        } else {
            self.body_lines(e, width)
        };
        (body, self.bottom_lines(e, width))
    }

    fn header(&self) -> Line<'static> {
        let link = match &self.link {
            Link::Connecting => "… connecting".to_string(),
            Link::Connected => "● connected".to_string(),
            Link::Retrying { why } => format!("✗ disconnected, retrying ({why})"),
        };
        let waiting = match self.calls.len() {
            0 => "nothing waiting".to_string(),
            1 => "1 call waiting".to_string(),
            n => format!("{n} calls waiting"),
        };
        Line::from(vec![
            Span::styled(
                " khaelor-perm approve",
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Span::raw(terminal_safe_line(&format!(
                " · {link} · {waiting} · {}",
                self.service
            ))),
        ])
    }

    fn footer(&self) -> Vec<Line<'static>> {
        let mut first = String::new();
        if let (Some(i), Some(e)) = (self.index(), self.current()) {
            let host = e.call.host.as_deref().unwrap_or("api");
            first.push_str(&terminal_safe_line(&format!(
                " session {} · host {host} · call {} · {} of {}",
                e.call.session_id,
                e.call.call_id,
                i + 1,
                self.calls.len()
            )));
            match self.calls.len() - 1 {
                0 => {}
                1 => first.push_str(" · 1 more waiting"),
                n => first.push_str(&format!(" · {n} more waiting")),
            }
        }
        vec![
            Line::raw(first),
            Line::styled(
                " j/k ↑/↓: queue · PgUp/PgDn: scroll · q: quit",
                Style::new().add_modifier(Modifier::DIM),
            ),
            Line::from(Span::styled(
                format!(" {}", self.status),
                Style::new().add_modifier(Modifier::BOLD),
            )),
        ]
    }

    fn queue_lines(&self) -> Vec<Line<'static>> {
        let n = self.calls.len();
        let at = self.index().unwrap_or(0);
        let start = at
            .saturating_sub(QUEUE_LINES / 2)
            .min(n.saturating_sub(QUEUE_LINES));
        let mut lines = vec![Line::raw(format!(" Queue ({n})"))];
        for (i, e) in self.calls.iter().enumerate().skip(start).take(QUEUE_LINES) {
            let mark = if i == at { "▶" } else { " " };
            let text = terminal_safe_line(&format!(
                " {mark} {}. {} {} · session {} · {}",
                i + 1,
                e.panel.verb,
                e.panel.subject,
                e.call.session_id,
                e.call.host.as_deref().unwrap_or("api")
            ));
            let style = if i == at {
                Style::new().add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            };
            lines.push(Line::from(Span::styled(text, style)));
        }
        lines
    }

    fn draw_panel(
        &self,
        frame: &mut Frame,
        area: Rect,
        e: &Entry,
        lines: Vec<Line<'static>>,
        bottom: Vec<Line<'static>>,
    ) {
        let block = panel_block(&format!(" {} ", terminal_safe_line(&e.panel.title)));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let width = usize::from(inner.width.saturating_sub(2)).max(10);
        let [verb, body, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(u16::try_from(bottom.len()).unwrap_or(u16::MAX)),
        ])
        .areas(inner.inner(ratatui::layout::Margin::new(1, 0)));
        frame.render_widget(Paragraph::new(self.verb_line(e, width)), verb);
        let height = usize::from(body.height);
        let (shown, more, max) = scroll_window(&lines, self.scroll, height);
        self.max_scroll.set(max);
        frame.render_widget(Paragraph::new(shown), body);
        if let Some(more) = more {
            // Never let the end of a command or diff go unseen without saying so.
            let y = body.y + body.height.saturating_sub(1);
            let r = Rect::new(body.x, y, body.width, 1);
            frame.render_widget(
                Paragraph::new(Line::from(Span::styled(
                    more,
                    Style::new().add_modifier(Modifier::REVERSED),
                ))),
                r,
            );
        }
        frame.render_widget(Paragraph::new(bottom), foot);
    }

    fn verb_line(&self, e: &Entry, width: usize) -> Line<'static> {
        let verb = terminal_safe_line(&e.panel.verb);
        let badge = terminal_safe_line(&e.panel.badge);
        let gap = width
            .saturating_sub(verb.chars().count() + badge.chars().count() + 2)
            .max(1);
        let mut badge_style = Style::new().add_modifier(Modifier::BOLD);
        if self.color {
            badge_style = badge_style.fg(Color::Cyan);
        }
        Line::from(vec![
            Span::styled(verb, Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(" ".repeat(gap)),
            Span::styled(format!("[{badge}]"), badge_style),
        ])
    }

    /// The scrollable body: the subject (operators marked), the parts of a compound
    /// command, the diff.
    fn body_lines(&self, e: &Entry, width: usize) -> Vec<Line<'static>> {
        let mut lines = marked_lines(&e.panel.subject, &e.operators, width);
        for part in &e.panel.parts {
            for (i, l) in wrap_plain(part, width.saturating_sub(2))
                .into_iter()
                .enumerate()
            {
                lines.push(Line::raw(format!("{} {l}", if i == 0 { "▸" } else { " " })));
            }
        }
        if let Some(diff) = &e.panel.diff {
            lines.push(Line::raw(""));
            for raw in diff.lines() {
                let style = match raw.chars().next() {
                    Some('+') if !raw.starts_with("+++") => {
                        let s = Style::new().add_modifier(Modifier::BOLD);
                        if self.color { s.fg(Color::Green) } else { s }
                    }
                    Some('-') if !raw.starts_with("---") => {
                        let s = Style::new();
                        if self.color { s.fg(Color::Red) } else { s }
                    }
                    Some('@') => Style::new().add_modifier(Modifier::DIM),
                    _ => Style::new(),
                };
                for (i, l) in wrap_plain(raw, width.saturating_sub(1))
                    .into_iter()
                    .enumerate()
                {
                    let l = if i == 0 { l } else { format!("↪{l}") };
                    lines.push(Line::from(Span::styled(l, style)));
                }
            }
        }
        lines
    }

    /// Working directory, risk notes (only when present), then the keys of the mode.
    fn bottom_lines(&self, e: &Entry, width: usize) -> Vec<Line<'static>> {
        let mut lines = vec![
            Line::raw(""),
            Line::styled(
                "Working directory",
                Style::new().add_modifier(Modifier::DIM),
            ),
        ];
        for l in wrap_plain(&e.panel.working_directory, width) {
            lines.push(Line::raw(l));
        }
        if !e.panel.risk_notes.is_empty() {
            lines.push(Line::raw(""));
            for note in &e.panel.risk_notes {
                for (i, l) in wrap_words(note, width.saturating_sub(2))
                    .into_iter()
                    .enumerate()
                {
                    lines.push(Line::raw(format!("{} {l}", if i == 0 { "⚠" } else { " " })));
                }
            }
        }
        lines.push(Line::raw(""));
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let sending = self.sending.as_ref().map(|(s, c)| (s.as_str(), c.as_str())) == Some(e.id());
        if sending {
            lines.push(Line::styled("… sending the answer", bold));
            return lines;
        }
        match &self.mode {
            Mode::Panel => {
                let keys = messages::panel_keys(&e.always);
                let mut last = Vec::new();
                for k in &keys {
                    let label = terminal_safe_line(&k.label);
                    match k.key.as_str() {
                        "Esc" => last.push(format!("[ Esc ]   {label}")),
                        "Tab" => last.push(format!("[ Tab ] {label}")),
                        _ => {
                            for (i, l) in wrap_words(&label, width.saturating_sub(10))
                                .into_iter()
                                .enumerate()
                            {
                                let head = if i == 0 {
                                    format!("[ {} ]", k.key)
                                } else {
                                    String::new()
                                };
                                lines.push(Line::from(vec![
                                    Span::styled(format!("{head:<10}"), bold),
                                    Span::raw(l),
                                ]));
                            }
                        }
                    }
                }
                if let [esc, tab] = last.as_slice() {
                    lines.push(Line::raw(format!("{esc:<26}{tab}")));
                } else {
                    lines.extend(last.into_iter().map(Line::raw));
                }
            }
            Mode::Always(i) => {
                let pattern = e
                    .always
                    .get(*i)
                    .map(|p| terminal_safe_line(p))
                    .unwrap_or_default();
                for l in wrap_words(
                    &format!("always: {pattern}  (A: next, Enter: confirm)"),
                    width,
                ) {
                    lines.push(Line::styled(l, bold));
                }
                lines.push(Line::raw(format!(
                    "pattern {} of {} · written to this project's .khaelor/config.json · Esc: back",
                    i + 1,
                    e.always.len()
                )));
            }
            Mode::Details => {
                lines.push(Line::raw("[ Tab ]   Back to the panel   (j/k: scroll)"));
            }
            Mode::Reason(text) => {
                let line = format!("Deny. Reason (Enter to send, empty for none): {text}▏");
                for l in wrap_plain(&line, width) {
                    lines.push(Line::styled(l, bold));
                }
                lines.push(Line::raw("Esc: back (nothing is sent)"));
            }
        }
        lines
    }
}

fn panel_block(title: &str) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .title(title.to_string())
}

/// The details view (`Tab`): the call, then every request with its decision, rule and
/// source (`render_panel_details`), the subjects being the resolved paths.
fn details_lines(e: &Entry, width: usize) -> Vec<Line<'static>> {
    let c = &e.call;
    let mut text = format!(
        "tool {} · call {}{}\nsession {} · host {}\nproject {}\ncwd {}\nrequested {}\n\n",
        c.tool,
        c.call_id,
        c.turn_id
            .as_deref()
            .map(|t| format!(" · turn {t}"))
            .unwrap_or_default(),
        c.session_id,
        c.host.as_deref().unwrap_or("api"),
        c.project_root,
        c.cwd,
        c.requested_at,
    );
    if e.panel.details.is_empty() {
        text.push_str("(no request details in this decision)\n");
    } else {
        text.push_str(&messages::render_panel_details(&e.panel));
    }
    if !e.always.is_empty() {
        text.push_str("\nalways patterns offered:\n");
        for p in &e.always {
            text.push_str(&format!("  {p}\n"));
        }
    }
    wrap_plain(&text, width)
        .into_iter()
        .map(Line::raw)
        .collect()
}

/// The lines from `scroll` that fit `height`, and when the text does not fit, the
/// line saying which part shows (drawn in the last row, which is kept for it), and the
/// largest useful scroll.
fn scroll_window(
    lines: &[Line<'static>],
    scroll: usize,
    height: usize,
) -> (Vec<Line<'static>>, Option<String>, usize) {
    if lines.len() <= height {
        return (lines.to_vec(), None, 0);
    }
    let room = height.saturating_sub(1).max(1);
    let max = lines.len().saturating_sub(room);
    let start = scroll.min(max);
    let shown: Vec<Line<'static>> = lines.iter().skip(start).take(room).cloned().collect();
    let up = if start > 0 { "↑" } else { " " };
    let down = if start < max { "↓" } else { " " };
    let more = format!(
        "{up}{down} lines {}–{} of {} · PgUp/PgDn: scroll",
        start + 1,
        start + shown.len(),
        lines.len()
    );
    (shown, Some(more), max)
}

/// One drawn character: what shows and whether it belongs to an operator.
struct Cell {
    text: String,
    operator: bool,
}

/// `text` made terminal-safe cell by cell, hard-wrapped at `width` columns (every
/// character kept, a newline breaks the line).
fn safe_rows(text: &str, operators: &[Range<usize>], width: usize) -> Vec<Vec<Cell>> {
    let mut rows: Vec<Vec<Cell>> = vec![Vec::new()];
    let mut cols = 0usize;
    for (at, c) in text.char_indices() {
        if c == '\n' {
            rows.push(Vec::new());
            cols = 0;
            continue;
        }
        let mut shown = String::new();
        push_terminal_safe(&mut shown, c);
        let w = Span::raw(shown.as_str()).width();
        if cols + w > width && cols > 0 {
            rows.push(Vec::new());
            cols = 0;
        }
        cols += w;
        if let Some(row) = rows.last_mut() {
            row.push(Cell {
                text: shown,
                operator: operators.iter().any(|r| r.contains(&at)),
            });
        }
    }
    rows
}

/// A command with its operators underlined and bold, and a row of `^` under each row
/// that holds one (a mark that survives a monochrome terminal, a screen reader and a
/// copy of the screen).
fn marked_lines(text: &str, operators: &[Range<usize>], width: usize) -> Vec<Line<'static>> {
    let op = Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    let mut lines = Vec::new();
    for row in safe_rows(text, operators, width) {
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut marks = String::new();
        let mut run = String::new();
        let mut run_op = false;
        for cell in &row {
            if cell.operator != run_op && !run.is_empty() {
                let s = std::mem::take(&mut run);
                spans.push(if run_op {
                    Span::styled(s, op)
                } else {
                    Span::raw(s)
                });
            }
            run_op = cell.operator;
            run.push_str(&cell.text);
            let w = Span::raw(cell.text.as_str()).width();
            marks.push_str(&(if cell.operator { "^" } else { " " }).repeat(w));
        }
        if !run.is_empty() {
            spans.push(if run_op {
                Span::styled(run, op)
            } else {
                Span::raw(run)
            });
        }
        lines.push(Line::from(spans));
        if row.iter().any(|c| c.operator) {
            lines.push(Line::raw(marks.trim_end().to_string()));
        }
    }
    lines
}

/// Untrusted text, terminal-safe and hard-wrapped at `width` columns.
fn wrap_plain(text: &str, width: usize) -> Vec<String> {
    safe_rows(text, &[], width.max(1))
        .into_iter()
        .map(|row| row.into_iter().map(|c| c.text).collect())
        .collect()
}

/// Text for people (notes, key labels), terminal-safe and wrapped at spaces where it
/// can be; a word longer than a line is cut, never dropped.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    for row in wrap_plain(text, usize::MAX).into_iter() {
        let mut line = String::new();
        let mut cols = 0usize;
        for word in row.split(' ') {
            let w = Span::raw(word).width();
            if cols > 0 && cols + 1 + w <= width {
                line.push(' ');
                line.push_str(word);
                cols += 1 + w;
                continue;
            }
            if cols > 0 || !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            let mut pieces = wrap_plain(word, width);
            let last = pieces.pop().unwrap_or_default();
            out.extend(pieces);
            cols = Span::raw(last.as_str()).width();
            line = last;
        }
        out.push(line);
    }
    out
}

/// Whether colour may repeat the symbols: not under `NO_COLOR`, nor a monochrome or
/// dumb `TERM`.
pub fn color_allowed(no_color: Option<&str>, term: Option<&str>) -> bool {
    if no_color.is_some_and(|v| !v.is_empty()) {
        return false;
    }
    !term.is_some_and(|t| t == "dumb" || t.contains("mono"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::KeyEvent;
    use serde_json::json;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    /// A decision as the service records it for an asking bash call.
    fn bash_decision(command: &str, always: &[&str], notes: &[&str]) -> serde_json::Value {
        let request = json!({
            "capability": "process.execute", "subject": command,
            "display": format!("Run {command}"), "alwaysPatterns": always,
            "riskNotes": notes, "decision": "ask",
            "rule": { "capability": "process.execute", "pattern": "*", "action": "ask",
                      "source": "project",
                      "origin": { "file": "/p/.khaelor/config.json", "line": 4, "column": 7 } }
        });
        json!({
            "tool": "bash", "decision": "ask", "requests": [request],
            "alwaysPatterns": always,
            "panel": {
                "title": "KHAELOR requests permission", "verb": "Run",
                "badge": "process.execute", "subject": command,
                "workingDirectory": "~/dev/project", "riskNotes": notes,
                "alwaysPatterns": always, "keys": [],
                "details": [{ "decision": "ask", "capability": "process.execute",
                              "subject": command, "display": format!("Run {command}"),
                              "rule": request["rule"] }]
            },
            "summary": command, "riskNotes": notes
        })
    }

    fn call(id: &str, tool: &str, decision: serde_json::Value) -> PanelCall {
        PanelCall {
            session_id: "s1".into(),
            host: Some("claude".into()),
            call_id: id.into(),
            turn_id: None,
            tool: tool.into(),
            input: json!({}),
            project_root: "/p".into(),
            cwd: "/p".into(),
            requested_at: "2026-12-05T17:00:00Z".into(),
            decision,
        }
    }

    fn screen(app: &App, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| app.draw(f)).unwrap();
        let buf = t.backend().buffer().clone();
        let mut out = String::new();
        for y in 0..h {
            for x in 0..w {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    /// An app holding `calls`, past the change guard.
    fn app_with(calls: Vec<PanelCall>) -> (App, Instant) {
        let mut app = App::new("http://127.0.0.1:8790", false);
        let t0 = Instant::now();
        app.apply(StreamEvent::Snapshot(calls), t0);
        (app, t0 + CHANGE_GUARD)
    }

    #[test]
    fn the_seed_panel_top_to_bottom() {
        let (app, _) = app_with(vec![call(
            "c1",
            "bash",
            bash_decision("npm install", &["npm install *"], &[]),
        )]);
        let s = screen(&app, 80, 24);
        let at = |t: &str| s.find(t).unwrap_or_else(|| panic!("no {t:?} in\n{s}"));
        assert!(at("Run") < at("[process.execute]"));
        assert!(at("[process.execute]") < at("npm install"));
        assert!(at("npm install") < at("Working directory"));
        assert!(at("Working directory") < at("~/dev/project"));
        assert!(at("~/dev/project") < at("[ Enter ] Allow once"));
        assert!(s.contains("[ A ]     Always allow \"npm install *\" in this project"));
        assert!(
            s.contains("[ Esc ]   Deny            [ Tab ] Details"),
            "{s}"
        );
        assert!(!s.contains('⚠'), "no notes, no note line:\n{s}");
        assert!(s.contains("session s1 · host claude · call c1 · 1 of 1"));
        assert!(s.contains("● connected"));
    }

    #[test]
    fn operators_are_marked_by_a_symbol_row_and_notes_show() {
        let cmd = "npm test && curl -s x | sh > out";
        let (app, _) = app_with(vec![call(
            "c1",
            "bash",
            bash_decision(cmd, &[], &["Compound command"]),
        )]);
        let s = screen(&app, 80, 24);
        let lines: Vec<&str> = s.lines().collect();
        let row = lines.iter().position(|l| l.contains(cmd)).unwrap();
        let col = |l: &str, t: &str| l.chars().count() - l[l.find(t).unwrap()..].chars().count();
        let marks = lines[row + 1];
        for (op, w) in [("&&", 2), ("|", 1), (">", 1)] {
            let c = col(lines[row], &format!(" {op} ")) + 1;
            let under: String = marks.chars().skip(c).take(w).collect();
            assert_eq!(under, "^".repeat(w), "{op} unmarked:\n{s}");
        }
        assert_eq!(marks.matches('^').count(), 4, "{s}");
        assert!(s.contains("⚠ Compound command"));
        assert!(!s.contains("[ A ]"), "no patterns, no A:\n{s}");
    }

    #[test]
    fn escape_sequences_are_drawn_inert() {
        let cmd = "echo \u{1b}]0;pwned\u{7} \u{1b}[2J && ls";
        let mut d = bash_decision(cmd, &[], &[]);
        d["panel"]["workingDirectory"] = json!("/p/\u{1b}[31mred");
        let (app, _) = app_with(vec![call("c1", "bash", d)]);
        let s = screen(&app, 100, 24);
        assert!(
            s.contains(r"echo \u{1b}]0;pwned\u{7} \u{1b}[2J && ls"),
            "{s}"
        );
        assert!(s.contains(r"/p/\u{1b}[31mred"), "{s}");
        assert!(!s.chars().any(|c| c.is_control() && c != '\n'), "{s:?}");
    }

    #[test]
    fn enter_allows_once() {
        let (mut app, now) = app_with(vec![call("c1", "bash", bash_decision("ls", &[], &[]))]);
        assert_eq!(
            app.key(key(KeyCode::Enter), now),
            Some(Command::AllowOnce {
                session_id: "s1".into(),
                call_id: "c1".into()
            })
        );
        // One answer at a time.
        assert_eq!(app.key(key(KeyCode::Enter), now), None);
        app.finished("s1", "c1", Ok("✓ allowed once: call c1".into()), now);
        assert!(app.is_empty());
        assert!(screen(&app, 80, 20).contains("✓ allowed once: call c1"));
    }

    #[test]
    fn a_second_press_does_not_answer_the_next_call_unseen() {
        let (mut app, now) = app_with(vec![
            call("c1", "bash", bash_decision("one", &[], &[])),
            call("c2", "bash", bash_decision("two", &[], &[])),
        ]);
        assert!(app.key(key(KeyCode::Enter), now).is_some());
        app.finished("s1", "c1", Ok("✓ allowed once: call c1".into()), now);
        assert_eq!(app.selected(), Some(("s1", "c2")));
        assert_eq!(app.key(key(KeyCode::Enter), now), None);
        assert!(app.key(key(KeyCode::Enter), now + CHANGE_GUARD).is_some());
    }

    #[test]
    fn a_refused_answer_is_shown_and_the_call_stays() {
        let (mut app, now) = app_with(vec![call("c1", "bash", bash_decision("one", &[], &[]))]);
        assert!(app.key(key(KeyCode::Enter), now).is_some());
        app.finished(
            "s1",
            "c1",
            Err("the service answered 409: \u{1b}[2J not pending".into()),
            now,
        );
        assert_eq!(app.selected(), Some(("s1", "c1")));
        let s = screen(&app, 80, 20);
        assert!(
            s.contains(r"error: the service answered 409: \u{1b}[2J not pending"),
            "{s}"
        );
        // And it can be answered again.
        assert!(app.key(key(KeyCode::Enter), now).is_some());
    }

    #[test]
    fn a_cycles_the_patterns_and_enter_confirms_the_one_shown() {
        let d = bash_decision(
            "webfetch",
            &["https://example.com/a", "https://example.com/*"],
            &[],
        );
        let (mut app, now) = app_with(vec![call("c1", "webfetch", d)]);
        assert_eq!(app.key(key(KeyCode::Char('A')), now), None);
        assert!(
            screen(&app, 90, 24)
                .contains("always: https://example.com/a  (A: next, Enter: confirm)")
        );
        app.key(key(KeyCode::Char('a')), now);
        let s = screen(&app, 90, 24);
        assert!(
            s.contains("always: https://example.com/*  (A: next, Enter: confirm)"),
            "{s}"
        );
        assert!(s.contains("pattern 2 of 2"));
        // Esc backs out of "always" without denying.
        app.key(key(KeyCode::Esc), now);
        assert_eq!(app.mode, Mode::Panel);
        app.key(key(KeyCode::Char('A')), now);
        app.key(key(KeyCode::Char('A')), now);
        app.key(key(KeyCode::Char('A')), now);
        assert_eq!(app.mode, Mode::Always(0), "cycles back to the first");
        app.key(key(KeyCode::Char('A')), now);
        assert_eq!(
            app.key(key(KeyCode::Enter), now),
            Some(Command::AllowAlways {
                session_id: "s1".into(),
                call_id: "c1".into(),
                pattern: "https://example.com/*".into()
            })
        );
    }

    #[test]
    fn a_is_refused_without_patterns() {
        let (mut app, now) = app_with(vec![call("c1", "bash", bash_decision("a && b", &[], &[]))]);
        app.key(key(KeyCode::Char('A')), now);
        assert_eq!(app.mode, Mode::Panel);
        assert_eq!(
            app.key(key(KeyCode::Enter), now)
                .map(|c| matches!(c, Command::AllowOnce { .. })),
            Some(true)
        );
    }

    #[test]
    fn esc_then_a_reason_denies_with_it() {
        let (mut app, now) = app_with(vec![call("c1", "bash", bash_decision("npm i", &[], &[]))]);
        app.key(key(KeyCode::Esc), now);
        for c in "use pnpmX".chars() {
            app.key(key(KeyCode::Char(c)), now);
        }
        app.key(key(KeyCode::Backspace), now);
        // A control character typed into the line is not kept.
        app.key(key(KeyCode::Char('\u{1b}')), now);
        assert!(screen(&app, 90, 24).contains("Reason (Enter to send, empty for none): use pnpm"));
        assert_eq!(
            app.key(key(KeyCode::Enter), now),
            Some(Command::Deny {
                session_id: "s1".into(),
                call_id: "c1".into(),
                feedback: Some("use pnpm".into())
            })
        );
    }

    #[test]
    fn an_empty_reason_is_no_reason_and_esc_backs_out() {
        let (mut app, now) = app_with(vec![call("c1", "bash", bash_decision("npm i", &[], &[]))]);
        app.key(key(KeyCode::Esc), now);
        app.key(key(KeyCode::Esc), now);
        assert_eq!(app.mode, Mode::Panel);
        app.key(key(KeyCode::Esc), now);
        app.key(key(KeyCode::Char(' ')), now);
        assert!(matches!(
            app.key(key(KeyCode::Enter), now),
            Some(Command::Deny { feedback: None, .. })
        ));
    }

    #[test]
    fn tab_shows_every_request_with_its_rule_and_source() {
        let (mut app, now) = app_with(vec![call(
            "c1",
            "bash",
            bash_decision("make", &["make"], &[]),
        )]);
        app.key(key(KeyCode::Tab), now);
        let s = screen(&app, 110, 30);
        assert!(s.contains("ask   process.execute make"), "{s}");
        assert!(
            s.contains("rule: process.execute / \"*\" (project, /p/.khaelor/config.json:4:7)"),
            "{s}"
        );
        assert!(s.contains("always patterns offered:"));
        // Keys of the panel do nothing in the details but Tab, which goes back.
        assert_eq!(app.key(key(KeyCode::Enter), now), None);
        app.key(key(KeyCode::Esc), now);
        assert_eq!(app.mode, Mode::Panel);
    }

    #[test]
    fn a_write_shows_its_diff_and_it_scrolls() {
        let mut diff = String::from("--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,40 +1,40 @@\n");
        for i in 0..40 {
            diff.push_str(&format!("+line {i}\n"));
        }
        let d = json!({
            "tool": "write", "decision": "ask", "requests": [], "alwaysPatterns": [],
            "panel": { "title": "KHAELOR requests permission", "verb": "Write",
                       "badge": "file.write.project", "subject": "src/a.rs",
                       "workingDirectory": "~/p", "diff": diff, "riskNotes": [],
                       "alwaysPatterns": [], "keys": [], "details": [] },
            "summary": "write src/a.rs", "riskNotes": []
        });
        let (mut app, now) = app_with(vec![call("c1", "write", d)]);
        let s = screen(&app, 80, 30);
        assert!(s.contains("Write") && s.contains("[file.write.project]"));
        assert!(s.contains("+++ b/src/a.rs") && s.contains("+line 0"), "{s}");
        assert!(!s.contains("+line 39"));
        assert!(
            s.contains("↓ lines 1–"),
            "the hidden rest is announced:\n{s}"
        );
        for _ in 0..10 {
            app.key(key(KeyCode::PageDown), now);
        }
        let s = screen(&app, 80, 30);
        assert!(s.contains("+line 39"), "{s}");
        assert!(
            s.contains("[ Enter ] Allow once"),
            "keys stay visible:\n{s}"
        );
    }

    #[test]
    fn the_queue_moves_and_a_call_answered_elsewhere_resets_the_panel() {
        let (mut app, now) = app_with(vec![
            call("c1", "bash", bash_decision("one", &[], &[])),
            call("c2", "bash", bash_decision("two", &[], &[])),
        ]);
        let s = screen(&app, 90, 30);
        assert!(s.contains("1 of 2 · 1 more waiting"), "{s}");
        assert!(s.contains("Queue (2)") && s.contains("▶ 1. Run one"));
        app.key(key(KeyCode::Char('j')), now);
        assert_eq!(app.selected(), Some(("s1", "c2")));
        app.key(key(KeyCode::Up), now);
        assert_eq!(app.selected(), Some(("s1", "c1")));
        // A reason typed for c1, then c1 is answered in the host: nothing goes to c2.
        app.key(key(KeyCode::Esc), now);
        app.key(key(KeyCode::Char('x')), now);
        app.apply(
            StreamEvent::Resolved(PanelResolved {
                session_id: "s1".into(),
                call_id: "c1".into(),
                status: CallStatus::Approved,
                by: "host".into(),
            }),
            now,
        );
        assert_eq!(app.selected(), Some(("s1", "c2")));
        assert_eq!(app.mode, Mode::Panel);
        // An Enter right after the change is not taken for the new call.
        assert_eq!(app.key(key(KeyCode::Enter), now), None);
        assert!(app.status.contains("just changed"));
        assert!(matches!(
            app.key(key(KeyCode::Enter), now + CHANGE_GUARD),
            Some(Command::AllowOnce { ref call_id, .. }) if call_id == "c2"
        ));
    }

    #[test]
    fn a_pending_event_queues_and_the_link_shows() {
        let (mut app, now) = app_with(vec![]);
        assert!(screen(&app, 80, 12).contains("No call is waiting"));
        app.apply(
            StreamEvent::Pending(Box::new(call("c9", "bash", bash_decision("ls", &[], &[])))),
            now,
        );
        assert_eq!(app.selected(), Some(("s1", "c9")));
        app.set_link(Link::Retrying {
            why: "refused".into(),
        });
        assert!(screen(&app, 80, 20).contains("✗ disconnected, retrying (refused)"));
    }

    #[test]
    fn an_undecodable_decision_still_shows_and_offers_no_always() {
        let d = json!({ "summary": "odd \u{1b}[2J call", "alwaysPatterns": ["x"] });
        let (mut app, now) = app_with(vec![call("c1", "bash", d)]);
        let s = screen(&app, 80, 20);
        assert!(s.contains(r"odd \u{1b}[2J call"), "{s}");
        app.key(key(KeyCode::Char('A')), now);
        assert_eq!(app.mode, Mode::Panel);
    }

    #[test]
    fn notes_wrap_at_spaces_and_keep_every_character() {
        let note =
            "Writes a file that makes code run later (direnv runs it) averyveryveryverylongword";
        let lines = wrap_words(note, 20);
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        assert_eq!(lines[0], "Writes a file that");
        assert_eq!(lines.concat().replace(' ', ""), note.replace(' ', ""));
        assert_eq!(wrap_words("a\u{1b}b", 20), vec![r"a\u{1b}b"]);
    }

    #[test]
    fn colour_only_where_allowed() {
        assert!(!color_allowed(Some("1"), Some("xterm-256color")));
        assert!(!color_allowed(None, Some("xterm-mono")));
        assert!(!color_allowed(None, Some("dumb")));
        assert!(color_allowed(None, Some("xterm-256color")));
        assert!(color_allowed(Some(""), None));
    }
}
