// khaelor-perm for OpenCode. OpenCode has no deciding hook; a plugin's
// `tool.execute.before` can only throw, and the thrown message becomes the tool result
// the model reads. This plugin pipes each tool call to `khaelor-perm hook opencode`
// and throws on a deny, and on an ask unless a human is attached
// (KHAELOR_PERM_INTERACTIVE=1: then OpenCode's own `permission` settings decide).
// A contained call (`"decision":"contain"`) runs without a prompt: the plugin replaces
// the command with the one the answer gives, which runs it through
// `khaelor-perm exec --contain` (the project writable, secrets masked, no network).
// Anything that goes wrong (binary missing, no answer, bad JSON) blocks the call.
// After a call ran, `tool.execute.after` tells the hook, so a call it answered "ask"
// is recorded as approved in OpenCode.
//
// Install: `khaelor-perm install opencode [--project DIR]` writes this file to
// .opencode/plugin/ (project) or ~/.config/opencode/plugin/ with the binary and its
// flags filled in the INSTALLED line below. KHAELOR_PERM_BIN overrides the binary
// (default: the installed one, else `khaelor-perm` on PATH); KHAELOR_PERM_HOOK_ARGS
// adds flags (e.g. `--url http://127.0.0.1:8790 --token-file F`).
import { spawnSync } from "node:child_process";

const INSTALLED = { bin: null, args: [] };

export const KhaelorPerm = async ({ directory, worktree }) => {
  const bin = process.env.KHAELOR_PERM_BIN || INSTALLED.bin || "khaelor-perm";
  const human = process.env.KHAELOR_PERM_INTERACTIVE === "1";
  const extra = (process.env.KHAELOR_PERM_HOOK_ARGS || "").split(/\s+/).filter(Boolean);
  const args = ["hook", "opencode", human ? "--interactive" : "--non-interactive",
    ...INSTALLED.args, ...extra];
  return {
    "tool.execute.before": async (input, output) => {
      const payload = JSON.stringify({
        tool: input.tool,
        sessionID: input.sessionID,
        callID: input.callID,
        args: output.args,
        cwd: directory,
        root: worktree && worktree !== "/" ? worktree : directory,
      });
      const run = spawnSync(bin, args, { input: payload, encoding: "utf8", timeout: 30000 });
      let answer;
      try {
        answer = JSON.parse(run.stdout);
      } catch {
        const why = run.error ? String(run.error) : (run.stderr || "no answer").trim();
        throw new Error(`khaelor-perm could not check this tool call, so it was blocked: ${why}`);
      }
      if (answer.decision === "allow") return;
      // Contained: the same command, run through `khaelor-perm exec --contain`.
      if (answer.decision === "contain" && typeof answer.command === "string"
          && output.args && typeof output.args.command === "string") {
        output.args.command = answer.command;
        return;
      }
      if (answer.decision === "ask" && human) return;
      throw new Error(answer.reason || "khaelor-perm blocked this tool call.");
    },
    // The call ran: a call khaelor-perm answered "ask" was approved in OpenCode, which
    // the session log records. Only a record: whatever goes wrong here changes nothing.
    "tool.execute.after": async (input) => {
      const payload = JSON.stringify({
        event: "tool.execute.after",
        tool: input.tool,
        sessionID: input.sessionID,
        callID: input.callID,
      });
      spawnSync(bin, args, { input: payload, encoding: "utf8", timeout: 30000 });
    },
  };
};
