// Renders one bundled component with the real React and reports what happened: react-dom/server
// first (no DOM, as a server would), then react-dom/client on a linkedom DOM under React.act
// (effects run; a second render catches hooks that change order).
//
// One fresh process per sample, started by botgrpo_jsx/render.py as
//   unshare -rnp --fork node --experimental-permission --allow-fs-read=<react, this file>
//        --disallow-code-generation-from-strings render.js
// so the sample has no network (an empty network namespace), sees no other process (its own pid
// namespace), cannot read files beyond React nor write any, start processes, workers, addons or
// WASI (Node's permission model), cannot patch the built-ins the harness relies on (frozen
// below, after the console is redirected; Node's --frozen-intrinsics would freeze the console
// too) and cannot eval. Its time and memory are bounded from outside
// (SIGKILL after the deadline, RLIMIT_AS, --max-old-space-size).
//
// stdin: one JSON object {nonce, code, props}; `code` is a CommonJS bundle (esbuild) whose imports
// of anything but React resolve to inert stubs. stdout: one line "<nonce> <json>", written with a
// function captured before the sample runs: {ok, html, error: {message, line, column, source},
// warnings}. Lines are 1-based and columns 0-based in `code` (the source map is applied by the
// caller); `source` is a position in the original file (an error React throws about an element).
"use strict";

const fs = require("fs");
const path = require("path");
const util = require("util");
const vm = require("vm");

const writeSync = fs.writeSync;
const stringify = JSON.stringify;
const format = util.format;
const modulesDir = process.env.BOTGRPO_JSX_NODE_MODULES;
const FILENAME = "component.js";
const WRAP = "(function (exports, require, module, React) {\n"; // the sample starts on line 2

const React = require(path.join(modulesDir, "react"));
const jsxRuntime = require(path.join(modulesDir, "react", "jsx-runtime"));
const jsxDevRuntime = require(path.join(modulesDir, "react", "jsx-dev-runtime"));
const ReactDOM = require(path.join(modulesDir, "react-dom"));
// The server renderer has no portals: a portal's children render in place.
const reactDomForServer = Object.freeze({ ...ReactDOM, createPortal: (children) => children });
const renderToString = require(path.join(modulesDir, "react-dom", "server.node")).renderToString;
const createRoot = require(path.join(modulesDir, "react-dom", "client")).createRoot;
const { parseHTML } = require(path.join(modulesDir, "linkedom"));

const warnings = [];
function capture(...args) {
  if (warnings.length < 50) {
    const text = format(...args).slice(0, 2000);
    warnings.push({ text, where: location(new Error().stack), source: nestingSource(text) });
  }
}
console.error = capture;
console.warn = capture;
console.log = () => {};
console.info = () => {};
console.debug = () => {};

// Enough frames to reach the component's own through React's (a component rendering itself).
Error.stackTraceLimit = 200;

// What the harness uses after the sample has run must be what it was before.
for (const value of [
  Object, Object.prototype, Function.prototype, Array, Array.prototype, String, String.prototype,
  Number.prototype, Boolean.prototype, Symbol, Symbol.prototype, Error, Error.prototype, RegExp,
  RegExp.prototype, JSON, Math, Reflect, Promise, Promise.prototype, Map.prototype, Set.prototype,
  WeakMap.prototype, console, process.stdout, fs,
]) {
  Object.freeze(value);
}

// The first frame of the sample's own code in a stack: {line, column} of `code`, or null.
function location(stack) {
  const re = new RegExp(FILENAME.replace(".", "\\.") + ":(\\d+):(\\d+)");
  const match = re.exec(String(stack || ""));
  if (!match) return null;
  return { line: Number(match[1]) - 1, column: Number(match[2]) - 1 };
}

// A value from an import we do not have (a CSS module, a design system, a router): callable
// (returns its `children` when React calls it as a component, else another stub), indexable,
// iterable (empty), constructible and extendable, and empty as a string or number.
class StubComponent extends React.Component {
  render() {
    return this.props.children === undefined ? null : this.props.children;
  }
}

// Whether a stub became a string or a property key since the last element was made: a lookup such
// as `table[stubValue]` then finds nothing where the real import's value would find an entry.
let stubCoerced = false;
const coerceStub = () => {
  stubCoerced = true;
  return "";
};

function stub() {
  const target = function Stub() {};
  const handler = {
    get(t, key) {
      if (key === Symbol.toPrimitive) return coerceStub;
      if (key === Symbol.iterator) return function* empty() {};
      if (typeof key === "symbol") return undefined;
      // React renders a stub element as this class; a class that extends a stub extends it too
      if (key === "prototype") return StubComponent.prototype;
      if (key === "$$typeof" || key === "then") return undefined;
      if (key === "length") return 0;
      if (key === "toString" || key === "valueOf" || key === "toJSON") return () => "";
      return proxy;
    },
    apply(t, self, args) {
      const props = args[0];
      return props && typeof props === "object" && "children" in props ? props.children : proxy;
    },
    construct(t, args, newTarget) {
      return Reflect.construct(StubComponent, args, newTarget === proxy ? StubComponent : newTarget);
    },
  };
  const proxy = new Proxy(target, handler);
  return proxy;
}

// A module we do not have: every export (default or named) is a stub. Exports live on the
// prototype, so esbuild's interop (which copies a module's own properties) still finds them.
function stubModule() {
  const exports = new Proxy(Object.create(null), {
    get(t, key) {
      if (key === "__esModule") return true;
      if (typeof key === "symbol" || key === "then") return undefined;
      return stub();
    },
  });
  return Object.create(exports);
}

// The source position (esbuild's jsxDev `source`, in the original file) of the first element made
// with an invalid type or an invalid child: React throws about those from its own code, with no
// frame of the component's, so this is where the error is placed.
let suspect = null;
const invalidChild = (c) =>
  c !== null && typeof c === "object" && c.$$typeof === undefined && !(Symbol.iterator in c);
function checkElement(type, props, source) {
  if (suspect !== null || !source) return;
  const children = props ? props.children : undefined;
  const badType = type === undefined || type === null || (typeof type === "object" && type.$$typeof === undefined);
  const badChild = Array.isArray(children) ? children.some(invalidChild) : invalidChild(children);
  if (badType || badChild) suspect = { line: source.lineNumber, column: Math.max(0, source.columnNumber - 1) };
}
// Where each DOM element was made and the element type around it, for React's DOM-nesting
// warning (it names the tags only, from react-dom's code).
const madeAt = new WeakMap();
const parentType = new WeakMap();
const domElements = [];
function noteElement(element, type, props, source) {
  if (source) madeAt.set(element, { line: source.lineNumber, column: Math.max(0, source.columnNumber - 1) });
  const children = props ? props.children : undefined;
  for (const child of Array.isArray(children) ? children : [children]) {
    if (child !== null && typeof child === "object" && child.$$typeof !== undefined) parentType.set(child, type);
  }
  if (typeof type === "string" && domElements.length < 10000) domElements.push(element);
}
function nestingSource(text) {
  const match = /In HTML, <(\w+)> cannot be (?:a child|a descendant) of <(\w+)>/.exec(text);
  if (!match) return null;
  const [, inner, outer] = match;
  const made = domElements.filter((e) => e.type === inner);
  const direct = made.find((e) => parentType.get(e) === outer);
  return madeAt.get(direct || made[0]) || null;
}
const jsxDevChecked = Object.freeze({
  Fragment: jsxDevRuntime.Fragment,
  jsxDEV(type, props, key, isStatic, source, self) {
    // `const C = table[stubValue]; <C />`: the type is missing because an import is stubbed, not
    // because of the code, so the element renders as a stub (its children)
    if (type === undefined && stubCoerced) type = StubComponent;
    stubCoerced = false;
    checkElement(type, props, source);
    const element = jsxDevRuntime.jsxDEV(type, props, key, isStatic, source, self);
    noteElement(element, type, props, source);
    return element;
  },
});

function sampleRequire(name) {
  if (name === "react") return React;
  if (name === "react/jsx-runtime") return jsxRuntime;
  if (name === "react/jsx-dev-runtime") return jsxDevChecked;
  if (name === "react-dom") return reactDomForServer;
  return stubModule();
}

// Props from the caller: {"$botgrpo": "stub"} and {"$botgrpo": "function"} markers become values.
function revive(value) {
  if (Array.isArray(value)) return value.map(revive);
  if (value === null || typeof value !== "object") return value;
  if (value.$botgrpo === "stub") return stub();
  if (value.$botgrpo === "function") return () => undefined;
  const out = {};
  for (const key of Object.keys(value)) out[key] = revive(value[key]);
  return out;
}

function pickComponent(exports) {
  const isComponent = (v) =>
    typeof v === "function" || (v !== null && typeof v === "object" && v.$$typeof !== undefined);
  if (exports && isComponent(exports.default)) return exports.default;
  if (isComponent(exports)) return exports;
  for (const key of Object.keys(exports || {})) {
    if (/^[A-Z]/.test(key) && isComponent(exports[key])) return exports[key];
  }
  return null;
}

// A DOM (linkedom) for the client render, installed after the server render: module code and the
// server render see no `window`, as under server rendering; effects and re-renders see one.
function installDom() {
  const { window, document } = parseHTML("<!doctype html><html><head></head><body><div id='root'></div></body></html>");
  const inert = () => ({ observe() {}, unobserve() {}, disconnect() {} });
  const memory = () => {
    const data = new Map();
    return { getItem: (k) => (data.has(k) ? data.get(k) : null), setItem: (k, v) => data.set(k, String(v)), removeItem: (k) => data.delete(k), clear: () => data.clear() };
  };
  const extra = {
    navigator: { userAgent: "botgrpo", language: "en" },
    matchMedia: () => ({ matches: false, addListener() {}, removeListener() {}, addEventListener() {}, removeEventListener() {} }),
    ResizeObserver: function ResizeObserver() { return inert(); },
    IntersectionObserver: function IntersectionObserver() { return inert(); },
    MutationObserver: function MutationObserver() { return inert(); },
    requestAnimationFrame: (cb) => setTimeout(() => cb(Date.now()), 0),
    cancelAnimationFrame: (id) => clearTimeout(id),
    localStorage: memory(),
    sessionStorage: memory(),
    scrollTo: () => {},
  };
  for (const [key, value] of Object.entries(extra)) {
    if (window[key] === undefined) window[key] = value;
  }
  for (const key of ["window", "document", "navigator", "HTMLElement", "Element", "Node", "Text", "Event",
    "CustomEvent", "getComputedStyle", ...Object.keys(extra)]) {
    globalThis[key] = key === "window" ? window : key === "document" ? document : window[key];
  }
  globalThis.IS_REACT_ACT_ENVIRONMENT = true;
  return document.getElementById("root");
}

// Mount with react-dom/client: effects run, and a second render checks the hooks keep their order.
async function clientRender(element) {
  const container = installDom();
  const errors = [];
  const root = createRoot(container, { onUncaughtError: (e) => errors.push(e), onCaughtError: (e) => errors.push(e) });
  for (let pass = 0; pass < 2 && errors.length === 0; pass++) {
    await React.act(async () => root.render(element()));
  }
  if (errors.length) throw errors[0];
  return container.innerHTML;
}

async function run(request) {
  const module = { exports: {} };
  const fn = vm.runInThisContext(WRAP + request.code + "\n})", { filename: FILENAME });
  fn(module.exports, sampleRequire, module, React);
  const Component = pickComponent(module.exports);
  if (Component === null) {
    return { ok: false, error: { message: "the code exports no component", line: null, column: null } };
  }
  const props = revive(request.props || {});
  const element = () => React.createElement(Component, props);
  const html = renderToString(element());
  const mounted = request.client === false ? html : await clientRender(element);
  return { ok: true, html: String(mounted).slice(0, request.max_html || 100000) };
}

async function main() {
  const input = fs.readFileSync(0, "utf8");
  const request = JSON.parse(input);
  const nonce = String(request.nonce);
  let result;
  try {
    result = await run(request);
  } catch (err) {
    const message = err instanceof Error ? err.message : "thrown: " + String(err);
    const where = err instanceof Error ? location(err.stack) : null;
    result = { ok: false, error: { message: String(message).slice(0, 2000), ...(where || {}) } };
    if (where === null && suspect !== null) result.error.source = suspect;
  }
  result.warnings = warnings;
  writeSync(1, nonce + " " + stringify(result) + "\n");
}

process.on("unhandledRejection", () => {});
main().then(() => process.exit(0));
