// khaelor-perm for Cline CLI. Cline loads this module from .cline/plugins/ (project)
// or ~/.cline/plugins/ and calls its `beforeTool` hook before every tool call. The
// hook pipes the call to `khaelor-perm hook cline` and answers what it decided:
// nothing for an allow (Cline's own approval setting applies), Cline's approval
// prompt for an ask (`policy.autoApprove: false`: the TUI asks the person, a headless
// run refuses the call), and a skip for a deny, whose reason the model reads.
// Anything that goes wrong (binary missing, no answer in time, bad JSON) skips the
// call too. Cline gives a plugin hook 3 s; the hook is cut at 2.5 s to answer in time.
// After a call ran, `afterTool` tells the hook, so a call it answered "ask" is
// recorded as approved in Cline's prompt.
//
// Install: `khaelor-perm install cline [--project DIR]` writes this file with the
// binary and its flags filled in the INSTALLED line below. KHAELOR_PERM_BIN overrides
// the binary (default: the installed one, else `khaelor-perm` on PATH);
// KHAELOR_PERM_HOOK_ARGS adds flags (e.g. `--url http://127.0.0.1:8790 --token-file F`).
import { spawnSync } from "node:child_process";

const INSTALLED = { bin: null, args: [] };

const bin = process.env.KHAELOR_PERM_BIN || INSTALLED.bin || "khaelor-perm";
const extra = (process.env.KHAELOR_PERM_HOOK_ARGS || "").split(/\s+/).filter(Boolean);
const args = ["hook", "cline", ...INSTALLED.args, ...extra];

function payload(hookName, ctx) {
  const snap = (ctx && ctx.snapshot) || {};
  const call = (ctx && ctx.toolCall) || {};
  return JSON.stringify({
    hookName,
    taskId: snap.conversationId || snap.runId || snap.agentId,
    cwd: process.cwd(),
    workspaceRoots: [process.cwd()],
    tool_call: { id: call.toolCallId, name: call.toolName, input: ctx ? ctx.input : undefined },
  });
}

function blocked(why) {
  return {
    skip: true,
    reason: `khaelor-perm could not check this tool call, so it was blocked: ${why}. Tell the user; do not retry the same call.`,
  };
}

export default {
  name: "khaelor-perm",
  manifest: { capabilities: ["hooks"] },
  hooks: {
    beforeTool(ctx) {
      const run = spawnSync(bin, args, {
        input: payload("tool_call", ctx),
        encoding: "utf8",
        timeout: 2500,
      });
      let answer = null;
      try {
        answer = JSON.parse(run.stdout);
      } catch {
        // not JSON: blocked below
      }
      if (run.error || answer === null || typeof answer !== "object") {
        return blocked(run.error ? String(run.error) : (run.stderr || "no answer").trim());
      }
      if (answer.decision === "allow") return undefined;
      if (answer.decision === "ask") return { policy: { autoApprove: false } };
      return {
        skip: true,
        reason: (typeof answer.reason === "string" && answer.reason)
          || "khaelor-perm blocked this tool call.",
      };
    },
    // The call ran: only a record, whatever goes wrong here changes nothing. Cline
    // calls this for a call that did not run too (skipped by a hook, refused by its
    // approval), whose result is `{error: reason}` and nothing else: not reported, so
    // the log never says such a call was approved.
    afterTool(ctx) {
      const result = (ctx && ctx.result) || {};
      const out = result.output;
      if (result.isError && out && typeof out === "object" && !Array.isArray(out)
          && Object.keys(out).length === 1 && "error" in out) {
        return undefined;
      }
      spawnSync(bin, args, { input: payload("tool_result", ctx), encoding: "utf8", timeout: 2500 });
      return undefined;
    },
  },
};
