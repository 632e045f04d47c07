//! The terminal panel on ratatui's test backend: layout, keys, escaping.

use super::draw::wrap_words;
use super::*;
use crossterm::event::KeyEvent;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
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
        screen(&app, 90, 24).contains("always: https://example.com/a  (A: next, Enter: confirm)")
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
    let note = "Writes a file that makes code run later (direnv runs it) averyveryveryverylongword";
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
