//! Drawing the terminal panel: the header, the seed's box for the call under the
//! cursor (verb and badge, the scrollable body, the working directory, notes, keys),
//! the queue and the footer; and the text helpers every untrusted string goes through
//! (escaped cell by cell, wrapped without losing a character).

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use super::{App, Entry, Link, Mode, QUEUE_LINES};
use crate::presentation::messages::{self, push_terminal_safe, terminal_safe_line};

impl App {
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
pub(super) fn wrap_words(text: &str, width: usize) -> Vec<String> {
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
