// OpenCode's bash parser as its bash tool runs it: web-tree-sitter (WASM) with the
// tree-sitter-bash wasm, then a walk over every `command` node collecting the words
// OpenCode checks (command_name, word, string, raw_string, concatenation).
// Usage: node opencode.mjs NODE_MODULES_PREFIX FILE...   (prints one JSON object)
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [prefix, ...files] = process.argv.slice(2);
const require = createRequire(path.join(prefix, "node_modules", "x.js"));
const { Parser, Language } = await import(require.resolve("web-tree-sitter"));
await Parser.init();
const bash = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
const parser = new Parser();
parser.setLanguage(bash);

const commands = files.flatMap((f) =>
  readFileSync(f, "utf8").split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#")));

const KEEP = new Set(["command_name", "word", "string", "raw_string", "concatenation"]);
function walk(tree) {
  const out = [];
  for (const node of tree.rootNode.descendantsOfType("command")) {
    const words = [];
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child && KEEP.has(child.type)) words.push(child.text);
    }
    out.push(words);
  }
  return out;
}

// Warm-up (JIT), not measured.
for (const c of commands.slice(0, 2000)) { const t = parser.parse(c); walk(t); t.delete(); }

const parse = new Float64Array(commands.length);
const both = new Float64Array(commands.length);
let found = 0;
for (let i = 0; i < commands.length; i++) {
  const t0 = process.hrtime.bigint();
  const tree = parser.parse(commands[i]);
  const t1 = process.hrtime.bigint();
  found += walk(tree).length;
  const t2 = process.hrtime.bigint();
  tree.delete();
  parse[i] = Number(t1 - t0);
  both[i] = Number(t2 - t0);
}
const stats = (a) => {
  const s = Float64Array.from(a).sort();
  const mean = s.reduce((x, y) => x + y, 0) / s.length;
  return { medianNs: s[Math.floor(s.length / 2)], meanNs: mean, p99Ns: s[Math.floor(s.length * 0.99)] };
};
console.log(JSON.stringify({
  commands: commands.length,
  commandNodes: found,
  stages: [
    { stage: "OpenCode: web-tree-sitter parse", ...stats(parse) },
    { stage: "OpenCode: parse + command walk", ...stats(both) },
  ],
}));
