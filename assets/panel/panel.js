// The khaelor-perm web panel: lists the calls waiting for a person (live, from the
// service's server-sent events) and answers them through the grant and deny routes.
//
// Every piece of text that comes from a call (commands, paths, diffs, notes, rules) is
// inserted with `textContent` after its control characters were made visible: nothing
// from a call is ever parsed as markup, set as an attribute that runs code, or used as
// a URL (ids are percent-encoded into the API's paths).
"use strict";

(function () {
  const csrfMeta = document.querySelector('meta[name="csrf-token"]');
  const CSRF = csrfMeta ? csrfMeta.getAttribute("content") : "";

  const ui = {
    conn: document.getElementById("conn"),
    count: document.getElementById("count"),
    queue: document.getElementById("queue"),
    empty: document.getElementById("empty"),
    panel: document.getElementById("panel"),
    outcome: document.getElementById("outcome"),
    sessions: document.getElementById("sessions"),
    history: document.getElementById("history"),
  };

  const state = {
    calls: new Map(), // key → PanelCall
    selected: null, // key of the call shown
    mode: "panel", // "panel" | "always" | "deny"
    patternIndex: 0,
    details: false,
    busy: false,
    sessions: [], // session ids seen, most recent first
    historySession: null,
    shown: null, // key of the call the panel last drew
    armedAt: 0, // time from which the drawn call may be answered
  };

  // When the panel starts showing another call (the one shown was answered elsewhere,
  // or the person moved in the queue), answers are ignored for a moment, so a key
  // pressed for one call never lands on the next.
  const ARM_DELAY_MS = 300;

  const key = (c) => c.sessionId + "\u0000" + c.callId;

  // ---- Text that comes from a call -------------------------------------------------

  // Control characters and invisible direction marks made visible: a terminal escape,
  // a carriage return or a right-to-left override must not hide or reorder what the
  // person reads. Newlines and tabs stay (multi-line commands, diffs). Names in angle
  // brackets rather than the Unicode control pictures, which many fonts lack.
  const C0 = [
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF",
    "CR", "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM",
    "SUB", "ESC", "FS", "GS", "RS", "US",
  ];
  function visible(text) {
    const s = typeof text === "string" ? text : JSON.stringify(text);
    let out = "";
    for (const ch of s) {
      const cp = ch.codePointAt(0);
      if (ch === "\n" || ch === "\t") {
        out += ch;
      } else if (cp < 0x20) {
        out += "\u27e8" + C0[cp] + "\u27e9"; // ⟨ESC⟩, ⟨CR⟩ …
      } else if (cp === 0x7f) {
        out += "\u27e8DEL\u27e9";
      } else if (
        (cp >= 0x80 && cp <= 0x9f) ||
        cp === 0xad ||
        cp === 0x061c ||
        (cp >= 0x200b && cp <= 0x200f) ||
        (cp >= 0x2028 && cp <= 0x202e) ||
        (cp >= 0x2060 && cp <= 0x2069) ||
        cp === 0xfeff
      ) {
        out += "\u27e8U+" + cp.toString(16).toUpperCase().padStart(4, "0") + "\u27e9";
      } else {
        out += ch;
      }
    }
    return out;
  }

  // An element with a class and text (always through textContent).
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = visible(String(text));
    return e;
  }

  // A fixed label of ours (no visible() needed, but textContent all the same).
  function label(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    e.textContent = text;
    return e;
  }

  // Splits a bash command into plain text and operator tokens (`&&`, `||`, `|`, `;`,
  // `&`, redirections, command substitutions), outside quotes. Display only: the
  // service's analysis decides; this marks where one command ends and the next begins.
  function commandTokens(cmd) {
    const tokens = [];
    let buf = "";
    const flush = () => {
      if (buf) tokens.push({ op: false, text: buf });
      buf = "";
    };
    const ops = [
      "<<<", "&&", "||", ";;", "|&", "&>>", "&>", ">>", ">&", "<&", "<<", "<>", ">|",
      "$(", "|", ";", "&", ">", "<", "(", ")", "`",
    ];
    let quote = null;
    for (let i = 0; i < cmd.length; ) {
      const ch = cmd[i];
      if (quote === "'") {
        buf += ch;
        if (ch === "'") quote = null;
        i += 1;
        continue;
      }
      if (ch === "\\" && i + 1 < cmd.length) {
        buf += ch + cmd[i + 1];
        i += 2;
        continue;
      }
      if (quote === '"') {
        if (cmd.startsWith("$(", i) || ch === "`") {
          const t = ch === "`" ? "`" : "$(";
          flush();
          tokens.push({ op: true, text: t });
          i += t.length;
          continue;
        }
        buf += ch;
        if (ch === '"') quote = null;
        i += 1;
        continue;
      }
      if (ch === "'" || ch === '"') {
        quote = ch;
        buf += ch;
        i += 1;
        continue;
      }
      const op = ops.find((o) => cmd.startsWith(o, i));
      if (op) {
        // A file descriptor number right before a redirection belongs to it (`2>`).
        let text = op;
        if (/^[<>]/.test(op) || op === ">&") {
          const m = /(^|\s)(\d+)$/.exec(buf);
          if (m) {
            buf = buf.slice(0, buf.length - m[2].length);
            text = m[2] + op;
          }
        }
        flush();
        tokens.push({ op: true, text: text });
        i += op.length;
        continue;
      }
      buf += ch;
      i += 1;
    }
    flush();
    return tokens;
  }

  function commandView(cmd) {
    const pre = el("pre", "subject command");
    const code = document.createElement("code");
    for (const t of commandTokens(cmd)) {
      if (t.op) {
        const m = el("mark", "op", t.text);
        m.title = "operator";
        code.appendChild(m);
      } else {
        code.appendChild(document.createTextNode(visible(t.text)));
      }
    }
    pre.appendChild(code);
    return pre;
  }

  function diffView(diff) {
    const pre = el("pre", "diff");
    pre.tabIndex = 0;
    for (const line of diff.split("\n")) {
      let cls = "ctx";
      if (line.startsWith("+++") || line.startsWith("---")) cls = "file";
      else if (line.startsWith("@@")) cls = "hunk";
      else if (line.startsWith("+")) cls = "add";
      else if (line.startsWith("-")) cls = "del";
      pre.appendChild(el("span", "line " + cls, line));
    }
    return pre;
  }

  function ruleText(rule) {
    if (!rule) return "no rule matched (asks)";
    let t = rule.capability + " " + JSON.stringify(rule.pattern) + " \u2192 " + rule.action;
    t += " (" + (rule.source || "?");
    const o = rule.origin;
    if (o && o.file) t += ", " + o.file + (o.line ? ":" + o.line : "");
    return t + ")";
  }

  // ---- The queue ---------------------------------------------------------------------

  function ordered() {
    return Array.from(state.calls.values()).sort((a, b) =>
      a.requestedAt < b.requestedAt ? -1 : a.requestedAt > b.requestedAt ? 1 : 0
    );
  }

  function rememberSession(sid) {
    state.sessions = [sid].concat(state.sessions.filter((s) => s !== sid)).slice(0, 12);
  }

  function select(k) {
    if (state.selected !== k) {
      state.selected = k;
      state.mode = "panel";
      state.patternIndex = 0;
      state.details = false;
    }
    const c = state.calls.get(k);
    if (c && state.historySession !== c.sessionId) loadHistory(c.sessionId);
    render();
  }

  function ensureSelection() {
    if (state.selected && state.calls.has(state.selected)) return;
    const first = ordered()[0];
    state.selected = first ? key(first) : null;
    state.mode = "panel";
    state.patternIndex = 0;
    state.details = false;
    if (first && state.historySession !== first.sessionId) loadHistory(first.sessionId);
  }

  function move(delta) {
    const list = ordered();
    if (!list.length) return;
    let i = list.findIndex((c) => key(c) === state.selected);
    i = Math.min(list.length - 1, Math.max(0, i + delta));
    select(key(list[i]));
  }

  function renderQueue() {
    const list = ordered();
    ui.count.textContent = String(list.length);
    ui.empty.hidden = list.length > 0;
    ui.queue.replaceChildren();
    for (const c of list) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "queue-item" + (key(c) === state.selected ? " selected" : "");
      b.setAttribute("aria-current", key(c) === state.selected ? "true" : "false");
      const p = (c.decision && c.decision.panel) || {};
      b.appendChild(label("span", "marker", key(c) === state.selected ? "\u25b6" : "\u00b7"));
      b.appendChild(el("span", "q-verb", p.verb || c.tool));
      b.appendChild(el("span", "q-subject", p.subject || (c.decision && c.decision.summary) || ""));
      b.appendChild(
        el("span", "q-meta", "session " + c.sessionId + (c.host ? " \u00b7 " + c.host : ""))
      );
      b.addEventListener("click", () => select(key(c)));
      li.appendChild(b);
      ui.queue.appendChild(li);
    }
  }

  // ---- The panel (seed §6.1) ---------------------------------------------------------

  function keyButton(keyName, text, action, cls) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "key" + (cls ? " " + cls : "");
    b.appendChild(label("kbd", null, keyName));
    b.appendChild(el("span", "key-label", text));
    b.addEventListener("click", action);
    b.disabled = state.busy;
    return b;
  }

  function renderPanel() {
    const c = state.selected && state.calls.get(state.selected);
    ui.panel.replaceChildren();
    if (!c) {
      state.shown = null;
      ui.panel.className = "panel idle";
      ui.panel.appendChild(label("p", "idle-text", "Nothing to answer. Calls appear here as soon as an agent asks."));
      return;
    }
    const d = c.decision || {};
    const p = d.panel || {};
    const patterns = d.alwaysPatterns || p.alwaysPatterns || [];
    if (state.shown !== state.selected) {
      state.shown = state.selected;
      state.armedAt = performance.now() + ARM_DELAY_MS;
      setTimeout(() => ui.panel.classList.add("armed"), ARM_DELAY_MS);
    }
    ui.panel.className = "panel" + (performance.now() >= state.armedAt ? " armed" : "");

    ui.panel.appendChild(label("h2", "panel-title", p.title || "KHAELOR requests permission"));
    const head = el("div", "verb-line");
    head.appendChild(el("span", "verb", p.verb || c.tool));
    head.appendChild(el("span", "badge", p.badge || ""));
    ui.panel.appendChild(head);

    const subject = p.subject !== undefined ? p.subject : d.summary || "";
    if (c.tool === "bash") {
      ui.panel.appendChild(commandView(subject));
    } else {
      ui.panel.appendChild(el("pre", "subject", subject));
    }

    ui.panel.appendChild(label("h3", "field", "Working directory"));
    ui.panel.appendChild(el("p", "cwd", p.workingDirectory || c.cwd || ""));

    const notes = (p.riskNotes && p.riskNotes.length ? p.riskNotes : d.riskNotes) || [];
    if (notes.length) {
      const ul = el("ul", "risk-notes");
      for (const n of notes) ul.appendChild(el("li", "risk", "\u26a0 " + n));
      ui.panel.appendChild(ul);
    }

    if (p.diff) ui.panel.appendChild(diffView(p.diff));

    ui.panel.appendChild(
      el("p", "origin", "session " + c.sessionId + (c.host ? " \u00b7 host " + c.host : "") +
        " \u00b7 call " + c.callId + " \u00b7 asked " + (c.requestedAt || ""))
    );

    const keys = el("div", "keys");
    if (state.mode === "always" && patterns.length) {
      const pat = patterns[state.patternIndex % patterns.length];
      const line = el("p", "always-line");
      line.appendChild(label("span", null, "always: "));
      line.appendChild(el("code", "pattern", pat));
      line.appendChild(label("span", "hint", "  (A: next, Enter: confirm)  " +
        (state.patternIndex % patterns.length + 1) + "/" + patterns.length));
      keys.appendChild(line);
      keys.appendChild(keyButton("Enter", "Always allow \u201c" + pat + "\u201d in this project", grantAlways, "primary"));
      if (patterns.length > 1) keys.appendChild(keyButton("A", "Next pattern", nextPattern));
      keys.appendChild(keyButton("Esc", "Back", back));
    } else if (state.mode === "deny") {
      const form = el("form", "deny-form");
      const lbl = label("label", null, "Reason (Enter to skip): ");
      const input = document.createElement("input");
      input.type = "text";
      input.id = "reason";
      input.maxLength = 500;
      input.autocomplete = "off";
      input.spellcheck = false;
      lbl.appendChild(input);
      form.appendChild(lbl);
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        deny(input.value);
      });
      input.addEventListener("keydown", (e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          back();
        }
      });
      keys.appendChild(form);
      keys.appendChild(keyButton("Enter", "Deny", () => deny(input.value), "danger"));
      keys.appendChild(keyButton("Esc", "Back", back));
      setTimeout(() => input.focus(), 0);
    } else {
      keys.appendChild(keyButton("Enter", "Allow once", grantOnce, "primary"));
      if (patterns.length) {
        keys.appendChild(keyButton("A", "Always allow \u201c" + patterns[0] + "\u201d in this project", startAlways));
      }
      keys.appendChild(keyButton("Esc", "Deny", startDeny, "danger"));
      keys.appendChild(keyButton("Tab", state.details ? "Hide details" : "Details", toggleDetails));
    }
    ui.panel.appendChild(keys);

    if (state.details) ui.panel.appendChild(detailsView(d));
  }

  function detailsView(d) {
    const box = el("div", "details");
    box.appendChild(label("h3", "field", "Details"));
    const ol = el("ol", "requests");
    for (const r of d.requests || []) {
      const li = document.createElement("li");
      const mark = r.decision === "allow" ? "\u2713" : r.decision === "deny" ? "\u2717" : "?";
      li.appendChild(el("span", "decision " + r.decision, mark + " " + r.decision));
      li.appendChild(el("span", "capability", r.capability));
      li.appendChild(el("code", "req-subject", r.subject));
      li.appendChild(el("span", "rule", "rule: " + ruleText(r.rule)));
      const path = r.metadata && (r.metadata.resolvedPath || r.metadata.path);
      if (path) li.appendChild(el("span", "resolved", "path: " + path));
      for (const why of r.reasons || []) {
        li.appendChild(el("span", "reason", "capped: " + (why.message || why.reason || JSON.stringify(why))));
      }
      ol.appendChild(li);
    }
    box.appendChild(ol);
    return box;
  }

  function render() {
    ensureSelection();
    renderQueue();
    renderPanel();
  }

  // ---- Actions -------------------------------------------------------------------------

  function current() {
    return state.selected ? state.calls.get(state.selected) : null;
  }

  function say(text, cls) {
    ui.outcome.className = "outcome " + (cls || "");
    ui.outcome.textContent = visible(text);
  }

  async function post(c, verb, body) {
    const url =
      "/v1/sessions/" + encodeURIComponent(c.sessionId) + "/calls/" +
      encodeURIComponent(c.callId) + "/" + verb;
    const resp = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": CSRF },
      body: JSON.stringify(body),
    });
    let json = null;
    try {
      json = await resp.json();
    } catch (_) {
      json = null;
    }
    if (!resp.ok) {
      const msg = json && json.error ? json.error.message : "HTTP " + resp.status;
      throw new Error(msg);
    }
    return json;
  }

  async function act(verb, body, done) {
    const c = current();
    if (!c || state.busy) return;
    if (performance.now() < state.armedAt) {
      say("Not sent: the panel had just changed to call " + c.callId + "; read it, then answer.", "error");
      return;
    }
    state.busy = true;
    renderPanel();
    try {
      const r = await post(c, verb, body);
      state.calls.delete(key(c));
      state.mode = "panel";
      say(done(r, c), "ok");
    } catch (e) {
      say("Could not answer call " + c.callId + ": " + e.message, "error");
    } finally {
      state.busy = false;
      render();
      refreshHistory(c.sessionId);
    }
  }

  function grantOnce() {
    act("grant", { scope: "once" }, (r, c) => "\u2713 Allowed once: " + c.callId);
  }

  function grantAlways() {
    const c = current();
    if (!c) return;
    const patterns = (c.decision && c.decision.alwaysPatterns) || [];
    if (!patterns.length) return;
    const pattern = patterns[state.patternIndex % patterns.length];
    act("grant", { scope: "always", pattern: pattern }, (r) =>
      "\u2713 Always allowed \u201c" + pattern + "\u201d, saved to " + (r.configFile || "the project config") +
      (r.autoApproved && r.autoApproved.length ? "; also approved: " + r.autoApproved.join(", ") : "")
    );
  }

  function deny(reason) {
    const line = (reason || "").replace(/[\r\n]+/g, " ").trim();
    const body = line ? { feedback: line } : {};
    act("deny", body, (r) => "\u2717 Denied. The model reads: " + r.message);
  }

  function startAlways() {
    const c = current();
    if (!c || !((c.decision && c.decision.alwaysPatterns) || []).length) return;
    state.mode = "always";
    state.patternIndex = 0;
    renderPanel();
  }

  function nextPattern() {
    state.patternIndex += 1;
    renderPanel();
  }

  function startDeny() {
    if (!current()) return;
    state.mode = "deny";
    renderPanel();
  }

  function back() {
    state.mode = "panel";
    renderPanel();
  }

  function toggleDetails() {
    state.details = !state.details;
    renderPanel();
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const typing = e.target && e.target.tagName === "INPUT";
    if (typing) return; // the reason line handles its own Enter and Esc
    if (!current() || state.busy) return;
    const k = e.key;
    if (state.mode === "always") {
      if (k === "a" || k === "A") nextPattern();
      else if (k === "Enter") grantAlways();
      else if (k === "Escape") back();
      else return;
    } else if (state.mode === "deny") {
      if (k === "Escape") back();
      else return;
    } else if (k === "Enter") {
      grantOnce();
    } else if (k === "a" || k === "A") {
      startAlways();
    } else if (k === "Tab") {
      toggleDetails();
    } else if (k === "Escape") {
      startDeny();
    } else if (k === "j" || k === "ArrowDown") {
      move(1);
    } else if (k === "k" || k === "ArrowUp") {
      move(-1);
    } else {
      return;
    }
    e.preventDefault();
  });

  // ---- History -------------------------------------------------------------------------

  function eventSummary(ev) {
    switch (ev.type) {
      case "ToolRequested": {
        const i = ev.input || {};
        const what = i.command !== undefined ? i.command : i.path || i.file_path || i.url || JSON.stringify(i);
        return ev.tool + ": " + what;
      }
      case "PermissionRequested": {
        const d = ev.decision || {};
        const rules = (d.requests || []).map((r) => r.subject + ": " + ruleText(r.rule));
        return d.decision + " \u2014 " + rules.join("; ");
      }
      case "PermissionGranted":
        return (
          "granted " + ev.scope + (ev.pattern ? " \u201c" + ev.pattern + "\u201d" : "") +
          (ev.configFile ? " \u2192 " + ev.configFile + (ev.persisted ? "" : " (not written: " + (ev.persistError || "?") + ")") : "")
        );
      case "ToolApproved": {
        const rules = (ev.decisions || []).map((r) => r.subject + ": " + ruleText(r.rule));
        return "approved by " + ev.by + (ev.resolvedBy ? " (after " + ev.resolvedBy + ")" : "") +
          (rules.length ? "; " + rules.join("; ") : "");
      }
      case "PermissionDenied":
        return "denied by " + ev.by + (ev.feedback ? " \u2014 reason: \u201c" + ev.feedback + "\u201d" : "") +
          (ev.deniedWith ? " (with " + ev.deniedWith + ")" : "");
      case "ToolFailed":
        return "model reads: " + ev.message;
      default:
        return ev.type;
    }
  }

  function renderSessions() {
    ui.sessions.replaceChildren();
    for (const sid of state.sessions) {
      const b = el("button", "session" + (sid === state.historySession ? " selected" : ""), sid);
      b.type = "button";
      b.addEventListener("click", () => loadHistory(sid));
      ui.sessions.appendChild(b);
    }
  }

  // Reloads the shown history at most every quarter second, however fast calls come.
  let historyTimer = null;
  function refreshHistory(sid) {
    if (state.historySession !== sid || historyTimer) return;
    historyTimer = setTimeout(() => {
      historyTimer = null;
      if (state.historySession) loadHistory(state.historySession);
    }, 250);
  }

  let historySeq = 0;
  async function loadHistory(sid) {
    const seq = ++historySeq; // only the latest load may draw
    state.historySession = sid;
    rememberSession(sid);
    renderSessions();
    try {
      const resp = await fetch("/v1/sessions/" + encodeURIComponent(sid) + "/events", {
        credentials: "same-origin",
      });
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      const body = await resp.json();
      if (seq !== historySeq) return;
      ui.history.replaceChildren();
      for (const ev of body.events || []) {
        const li = el("li", "event " + String(ev.type));
        li.appendChild(el("span", "ev-time", (ev.at || "").replace("T", " ").replace("Z", "")));
        li.appendChild(el("span", "ev-call", ev.callId || ""));
        li.appendChild(el("span", "ev-type", ev.type));
        li.appendChild(el("span", "ev-summary", eventSummary(ev)));
        ui.history.appendChild(li);
      }
    } catch (e) {
      if (seq !== historySeq) return;
      ui.history.replaceChildren(el("li", "event error", "could not read session " + sid + ": " + e.message));
    }
  }

  // ---- The live stream -----------------------------------------------------------------

  function connect() {
    const es = new EventSource("/v1/pending/stream");
    es.addEventListener("open", () => {
      ui.conn.textContent = "\u25cf live";
      ui.conn.className = "conn live";
    });
    es.addEventListener("snapshot", (e) => {
      const data = JSON.parse(e.data);
      state.calls.clear();
      for (const c of data.calls || []) {
        state.calls.set(key(c), c);
        rememberSession(c.sessionId);
      }
      renderSessions();
      render();
    });
    es.addEventListener("pending", (e) => {
      const c = JSON.parse(e.data);
      state.calls.set(key(c), c);
      rememberSession(c.sessionId);
      renderSessions();
      render();
      refreshHistory(c.sessionId);
    });
    es.addEventListener("resolved", (e) => {
      const r = JSON.parse(e.data);
      const k = r.sessionId + "\u0000" + r.callId;
      const had = state.calls.delete(k);
      if (had && state.selected === k) {
        say("Call " + r.callId + " was " + r.status + " (by " + r.by + ")", "info");
      }
      render();
      refreshHistory(r.sessionId);
    });
    es.addEventListener("error", () => {
      if (es.readyState === EventSource.CLOSED) {
        ui.conn.textContent = "\u2717 signed out or refused: open a new login link";
        ui.conn.className = "conn down";
      } else {
        ui.conn.textContent = "\u25cb disconnected, retrying\u2026";
        ui.conn.className = "conn down";
      }
    });
  }

  render();
  connect();
})();
