// Long-lived compile worker for botgrpo-jsx: one JSON object per line in, one per line out.
//
// Requests:  {"id": 1, "op": "compile", "code": "...", "loader": "tsx" | "jsx"}
//            {"id": 2, "op": "check",   "code": "...", "loader": "tsx" | "jsx", "ignore": [2307]}
//            {"id": 6, "op": "compile_batch", "codes": ["...", ...], "loader": "tsx"} -> {ok, results: [...]}
//            {"id": 3, "op": "versions"}
//            {"id": 4, "op": "cjs", "code": "...", "loader": "tsx"} -> {ok, code, map} (jsx.renders)
//            {"id": 5, "op": "locate", "map": "...", "positions": [{line, column}]} -> {ok, positions}
// Responses: {"id": 1, "ok": true} or {"id": 1, "ok": false, "errors": [...]}
//   compile errors: {line (1-based), column (0-based UTF-8 bytes), length (bytes), text}  (esbuild's units)
//   check errors:   {start, length (UTF-16 code units), code, text}                      (TypeScript's units)
//
// Spawning node per sample costs ~100x a request here, so the Python side keeps this process alive
// and kills/restarts it only when a request exceeds its deadline. NODE_PATH points at the pinned
// node_modules installed by `python -m botgrpo_jsx.setup`.
//
// esbuild's JS API runs its Go service as a child process; an input that overflows the service's
// stack kills it, and the API then fails every later call ("The service is no longer running").
// This worker exits (code 70) when that happens instead of answering, so the Python side restarts
// the whole process and retries the requests that were in flight, one at a time.
"use strict";

const path = require("path");
const readline = require("readline");

const modulesDir = process.env.BOTGRPO_JSX_NODE_MODULES;
const load = (name) => require(path.join(modulesDir, name));

let esbuild = null;
let ts = null;
let service = null;
const files = new Map(); // virtual file name -> {text, version}

const SERVICE_DEAD = /The service (was stopped|is no longer running)/;

function serviceDied(err) {
  process.stderr.write("esbuild's service died: " + err.message + "\n");
  process.exit(70); // stdout is a pipe, written synchronously on POSIX: earlier replies are out
}

function reply(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

async function compile(req) {
  esbuild = esbuild || load("esbuild");
  try {
    await esbuild.transform(req.code, { loader: req.loader || "tsx", jsx: "automatic", logLevel: "silent" });
    return { ok: true };
  } catch (err) {
    if (SERVICE_DEAD.test(String(err && err.message))) serviceDied(err);
    const errors = (err.errors || []).map((e) => ({
      line: e.location ? e.location.line : 0,
      column: e.location ? e.location.column : 0,
      length: e.location ? e.location.length : 0,
      text: e.text,
    }));
    if (errors.length === 0) throw err; // not a compile error: report as a worker error
    return { ok: false, errors };
  }
}

// Many snippets in one esbuild build (no bundling; each snippet an entry point served from memory):
// the same verdicts and errors as one `compile` each (checked on 2,796 snippets, both loaders), at
// about a third of the cost, since a transform call pays esbuild's per-call set-up.
async function compileBatch(req) {
  esbuild = esbuild || load("esbuild");
  const codes = req.codes;
  const loader = req.loader || "tsx";
  const memory = {
    name: "botgrpo-memory",
    setup(build) {
      build.onResolve({ filter: /^snippet:\d+$/ }, (args) => ({ path: args.path, namespace: "snippet" }));
      build.onLoad({ filter: /.*/, namespace: "snippet" }, (args) => ({
        contents: codes[Number(args.path.slice("snippet:".length))],
        loader,
      }));
    },
  };
  let result;
  try {
    result = await esbuild.build({
      entryPoints: codes.map((_, i) => "snippet:" + i),
      bundle: false,
      write: false,
      outdir: "/nonexistent", // write: false: nothing is written; the name only keeps outputs apart
      jsx: "automatic",
      logLevel: "silent",
      logLimit: 0, // every error of every snippet
      plugins: [memory],
    });
  } catch (err) {
    if (SERVICE_DEAD.test(String(err && err.message))) serviceDied(err);
    if (!err.errors) throw err;
    result = err;
  }
  const results = codes.map(() => ({ ok: true }));
  for (const e of result.errors || []) {
    const at = e.location && /(\d+)$/.exec(e.location.file);
    if (!at) throw new Error("an esbuild error without a snippet: " + e.text); // the caller retries one by one
    const i = Number(at[1]);
    if (results[i].ok) results[i] = { ok: false, errors: [] };
    results[i].errors.push({ line: e.location.line, column: e.location.column, length: e.location.length, text: e.text });
  }
  return { ok: true, results };
}

// For jsx.renders: one CommonJS module (imports become require calls the renderer resolves) and
// its source map, whose mappings `locate` reads back.
async function cjs(req) {
  esbuild = esbuild || load("esbuild");
  try {
    const out = await esbuild.transform(req.code, {
      loader: req.loader || "tsx",
      format: "cjs",
      jsx: "automatic",
      jsxDev: true,
      // imports stay as written (as a bundler resolves them), an unused one included
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
      sourcemap: "external",
      sourcefile: "input." + (req.loader || "tsx"),
      logLevel: "silent",
    });
    return { ok: true, code: out.code, map: out.map };
  } catch (err) {
    if (SERVICE_DEAD.test(String(err && err.message))) serviceDied(err);
    if (!err.errors || err.errors.length === 0) throw err;
    return { ok: false, errors: err.errors.map((e) => ({ text: e.text })) };
  }
}

// Map {line (1-based), column (0-based)} of the generated code to the original (same units).
function locate(req) {
  const { SourceMap } = require("module");
  const map = new SourceMap(JSON.parse(req.map));
  const positions = (req.positions || []).map((p) => {
    const entry = map.findEntry(p.line - 1, p.column);
    if (!entry || entry.originalLine === undefined) return null;
    return { line: entry.originalLine + 1, column: entry.originalColumn };
  });
  return { ok: true, positions };
}

function languageService() {
  ts = ts || load("typescript");
  if (service) return service;
  // The virtual file lives inside the node_modules' parent so that `react` resolves to @types/react.
  const root = path.dirname(modulesDir);
  const options = {
    // Strict mode means "undefined names and type errors", not "annotate everything": implicit
    // `any` and null-strictness would fail most valid plain-JS components (measured on the corpus).
    strict: false,
    noImplicitAny: false,
    noEmit: true,
    jsx: ts.JsxEmit.ReactJSX,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    allowJs: true,
    checkJs: true,
    esModuleInterop: true,
    skipLibCheck: true,
    isolatedModules: true,
    // Every input is a module, so the two virtual files never share a global scope.
    moduleDetection: ts.ModuleDetectionKind.Force,
    types: [],
    typeRoots: [path.join(modulesDir, "@types")],
  };
  const host = {
    getScriptFileNames: () => Array.from(files.keys()),
    getScriptVersion: (f) => (files.has(f) ? String(files.get(f).version) : "0"),
    getScriptSnapshot: (f) => {
      if (files.has(f)) return ts.ScriptSnapshot.fromString(files.get(f).text);
      if (!ts.sys.fileExists(f)) return undefined;
      return ts.ScriptSnapshot.fromString(ts.sys.readFile(f));
    },
    getCurrentDirectory: () => root,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (f) => files.has(f) || ts.sys.fileExists(f),
    readFile: (f) => (files.has(f) ? files.get(f).text : ts.sys.readFile(f)),
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  };
  service = ts.createLanguageService(host, ts.createDocumentRegistry());
  service.root = root;
  // A fixed set of root files: changing it would rebuild the program (seconds); a new version of
  // one file is an incremental update (~0.3 s).
  for (const ext of ["tsx", "jsx"]) {
    files.set(path.join(root, "__botgrpo__", "input." + ext), { text: "export {};", version: 0 });
  }
  return service;
}

function check(req) {
  const svc = languageService();
  const name = path.join(svc.root, "__botgrpo__", req.loader === "jsx" ? "input.jsx" : "input.tsx");
  files.set(name, { text: req.code, version: files.get(name).version + 1 });
  const ignore = new Set(req.ignore || []);
  // `only`: of the semantic diagnostics, report just these codes (e.g. name resolution) when the caller
  // does not trust the rest on partial code; syntax errors always count.
  const only = req.only ? new Set(req.only) : null;
  const semantic = svc.getSemanticDiagnostics(name).filter((d) => only === null || only.has(d.code));
  const diags = svc.getSyntacticDiagnostics(name).concat(semantic);
  const errors = diags
    .filter((d) => d.category === ts.DiagnosticCategory.Error && !ignore.has(d.code))
    .map((d) => ({
      start: d.start || 0,
      length: d.length || 0,
      code: d.code,
      text: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
    }));
  return errors.length ? { ok: false, errors } : { ok: true };
}

async function handle(line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (err) {
    reply({ id: null, error: "bad request: " + err.message });
    return;
  }
  try {
    let out;
    if (req.op === "compile") out = await compile(req);
    else if (req.op === "compile_batch") out = await compileBatch(req);
    else if (req.op === "cjs") out = await cjs(req);
    else if (req.op === "locate") out = locate(req);
    else if (req.op === "check") out = check(req);
    else if (req.op === "versions") {
      out = { ok: true, node: process.versions.node, esbuild: load("esbuild").version };
      try {
        out.typescript = load("typescript").version;
      } catch (err) {
        out.typescript = null;
      }
    } else throw new Error("unknown op " + req.op);
    reply(Object.assign({ id: req.id }, out));
  } catch (err) {
    reply({ id: req.id, error: String((err && err.stack) || err).slice(0, 2000) });
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
rl.on("line", (line) => {
  if (line.trim()) handle(line);
});
rl.on("close", () => process.exit(0));
