// Renders one bundled component with the real React as a browser page would and reports what
// happened: a linkedom DOM (window, document, localStorage, a <div id="root">) is in place before the
// module runs, the module runs under React.act (an entry file's createRoot(...).render(...) mounts
// there), then react-dom/client mounts the exported component under React.act (effects run; a second
// render catches hooks that change order). What a browser lacks, the sample lacks: importing a Node
// built-in fails as it does in a browser bundle, and Node's globals (process, Buffer, global,
// setImmediate, __dirname) are not in its scope (process.env.NODE_ENV is, as bundlers define it).
// With `client: false` in the request, react-dom/server renders instead, with no DOM.
//
// One fresh process per sample, started by botgrpo_jsx/sandbox.py as
//   unshare -rnp --fork setsid node --experimental-permission --allow-fs-read=<react, this file>
//        --disallow-code-generation-from-strings render.js
// so the sample has no network (an empty network namespace), sees no other process (its own pid
// namespace), cannot read files beyond React nor write any, start processes, workers, addons or
// WASI (Node's permission model), cannot patch the built-ins the harness relies on (frozen
// below, after the console is redirected; Node's --frozen-intrinsics would freeze the console
// too) and cannot eval. Its time and memory are bounded from outside
// (SIGKILL after the deadline, RLIMIT_AS, --max-old-space-size).
//
// stdin: one JSON object {nonce, code, props, client?}; `code` is a CommonJS module (esbuild) whose
// imports of anything but React and Node's built-ins resolve to permissive stubs. stdout: one line "<nonce> <json>", written with a
// function captured before the sample runs: {ok, html, error: {message, line, column, source},
// warnings}. Lines are 1-based and columns 0-based in `code` (the source map is applied by the
// caller); `source` is a position in the original file (an error React throws about an element).
"use strict";

const fs = require("fs");
const path = require("path");
const util = require("util");
const vm = require("vm");

const writeSync = fs.writeSync;
// the harness's own clock and timers: in checks mode the sample's are a fake clock (checks.js)
const realTimers = Object.freeze({
  setTimeout: setTimeout.bind(globalThis),
  clearTimeout: clearTimeout.bind(globalThis),
  now: performance.now.bind(performance),
});
const checks = require("./checks.js");
const stringify = JSON.stringify;
const format = util.format;
const exit = process.exit.bind(process);
const modulesDir = process.env.BOTGRPO_JSX_NODE_MODULES;
const FILENAME = "component.js";
// Node's globals a browser has not, shadowed in the sample's scope (the sample starts on line 2);
// __dirname and __filename are not in a vm script's scope at all.
const NODE_ONLY = ["process", "Buffer", "global", "setImmediate", "clearImmediate"];
const WRAP = "(function (exports, require, module, React, " + NODE_ONLY.join(", ") + ") {\n";
// What a bundler leaves of `process` in a browser build: process.env.NODE_ENV.
const BROWSER_PROCESS = Object.freeze({ env: Object.freeze({ NODE_ENV: "development" }) });
const NODE_BUILTINS = new Set(require("module").builtinModules);
const isNodeBuiltin = (name) =>
  name.startsWith("node:") || NODE_BUILTINS.has(name) || NODE_BUILTINS.has(name.split("/")[0]);

const React = require(path.join(modulesDir, "react"));
const jsxRuntime = require(path.join(modulesDir, "react", "jsx-runtime"));
const jsxDevRuntime = require(path.join(modulesDir, "react", "jsx-dev-runtime"));
const ReactDOM = require(path.join(modulesDir, "react-dom"));
// The server renderer has no portals: a portal's children render in place.
const reactDomForServer = Object.freeze({ ...ReactDOM, createPortal: (children) => children });
const renderToString = require(path.join(modulesDir, "react-dom", "server.node")).renderToString;
const ReactDOMClient = require(path.join(modulesDir, "react-dom", "client"));
const createRoot = ReactDOMClient.createRoot;
// The sample's react-dom/client: the real one, counting the roots the sample makes (an entry file).
// What such a root throws while rendering is the sample's error (React would only report it).
let sampleRoots = 0;
const rootErrors = [];
function reporting(options) {
  const own = options && typeof options.onUncaughtError === "function" ? options.onUncaughtError : null;
  return {
    ...options,
    onUncaughtError(error, info) {
      rootErrors.push(error);
      if (own) own(error, info);
    },
  };
}
const sampleClient = Object.freeze({
  ...ReactDOMClient,
  createRoot(container, options) {
    sampleRoots++;
    return ReactDOMClient.createRoot(container, reporting(options));
  },
  hydrateRoot(container, children, options) {
    sampleRoots++;
    return ReactDOMClient.hydrateRoot(container, children, reporting(options));
  },
});
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

// Math.random, switchable to a seeded generator in checks mode (Math is frozen below).
const randomSource = { next: null };
const nativeRandom = Math.random;
Math.random = function random() {
  return randomSource.next !== null ? randomSource.next() : nativeRandom();
};

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

// A value from an import we do not have (a CSS module, a design system, a router, a data helper):
// callable (returns its `children` when React calls it as a component, else another stub),
// indexable, assignable, iterable (empty), constructible and extendable, thenable (settles to a
// stub that is not), cloneable, and empty as a string or number.
class StubComponent extends React.Component {
  render() {
    return this.props.children === undefined ? null : this.props.children;
  }
}
// What React reads of a class instance: the rest of a constructed stub's properties are stubs
// (`new CalendarDate(...).add(...)`), these stay the instance's own.
const REACT_INSTANCE_KEYS = new Set([
  "props", "context", "refs", "updater", "state", "render", "setState", "forceUpdate", "isReactComponent",
  "componentDidMount", "componentDidUpdate", "componentWillUnmount", "shouldComponentUpdate",
  "getSnapshotBeforeUpdate", "componentDidCatch", "componentWillMount", "componentWillReceiveProps",
  "componentWillUpdate", "UNSAFE_componentWillMount", "UNSAFE_componentWillReceiveProps",
  "UNSAFE_componentWillUpdate", "getChildContext", "getInitialState", "getDefaultProps", "propTypes",
  "contextTypes", "childContextTypes", "defaultProps", "contextType", "getDerivedStateFromProps",
  "getDerivedStateFromError", "constructor",
]);
// and what React's development checks look for (misspelt lifecycles, internals)
const REACT_LIKE = /^(_|component|UNSAFE_|should|getInitial|getDefault|getDerived|getSnapshot|getChild)/;
function stubInstance(instance) {
  return new Proxy(instance, {
    get(t, key, receiver) {
      if (typeof key === "symbol" || key in t || REACT_INSTANCE_KEYS.has(key) || REACT_LIKE.test(key)) {
        return Reflect.get(t, key, receiver);
      }
      return stub();
    },
  });
}
const REACT_STATICS = new Set([
  "getDerivedStateFromProps", "getDerivedStateFromError", "getSnapshotBeforeUpdate", "contextType",
  "getDefaultProps",
]);
const stubs = new WeakSet();

// Whether a stub became a string or a property key since the last element was made: a lookup such
// as `table[stubValue]` then finds nothing where the real import's value would find an entry.
let stubCoerced = false;
const coerceStub = () => {
  stubCoerced = true;
  return "";
};

function stub(thenable = true) {
  const target = function Stub() {};
  const assigned = new Map(); // what the code (or React's use()) stored on the stub
  const handler = {
    get(t, key) {
      if (assigned.has(key)) return assigned.get(key);
      if (key === Symbol.toPrimitive) return coerceStub;
      if (key === Symbol.iterator) return function* empty() {};
      if (typeof key === "symbol") return undefined;
      // React renders a stub element as this class; a class that extends a stub extends it too
      if (key === "prototype") return StubComponent.prototype;
      // React reads these off a component class: a stub has none of them
      if (key === "$$typeof" || REACT_STATICS.has(key)) return undefined;
      // a promise from a helper we do not have settles to a stub that is no promise
      if (key === "then") return thenable ? (ok, fail) => Promise.resolve(stub(false)).then(ok, fail) : undefined;
      if (key === "length") return 0;
      if (key === "toString" || key === "valueOf" || key === "toJSON") return () => "";
      return proxy;
    },
    set(t, key, value) {
      assigned.set(key, value);
      return true;
    },
    apply(t, self, args) {
      const props = args[0];
      return props && typeof props === "object" && "children" in props ? props.children : proxy;
    },
    construct(t, args, newTarget) {
      if (newTarget !== proxy) return Reflect.construct(StubComponent, args, newTarget); // a subclass
      return stubInstance(Reflect.construct(StubComponent, args, StubComponent));
    },
  };
  const proxy = new Proxy(target, handler);
  stubs.add(proxy);
  return proxy;
}
// A stub (the real import's value would be plain data) clones to a stub.
const cloneStructured = globalThis.structuredClone;
globalThis.structuredClone = function structuredClone(value, options) {
  return stubs.has(value) ? stub() : cloneStructured(value, options);
};
// React's development build reports a re-render with changed props to the Performance timeline:
// performance.measure with a `detail` the runtime structured-clones, holding the component's name
// and its props as read off their values. A value from a stubbed import puts a stub there (a
// react-native navigator's `<Stack.Screen>` re-rendered after a state update), which cannot be
// cloned, and the render failed with "function Stub() {} could not be cloned". The real import's
// value would be a string, so such an entry is kept without its detail; a detail of the sample's
// own that cannot be cloned still throws, as in a browser.
function holdsStub(value, depth = 0, seen = new Set()) {
  if (stubs.has(value)) return true;
  if (value === null || typeof value !== "object" || depth > 8 || seen.has(value) || seen.size > 1000) return false;
  seen.add(value);
  return Object.values(value).some((v) => holdsStub(v, depth + 1, seen));
}
const measure = performance.measure.bind(performance);
performance.measure = function measureWithStubs(name, options) {
  try {
    return measure(name, options);
  } catch (error) {
    if (options === null || typeof options !== "object" || !holdsStub(options.detail)) throw error;
    return measure(name, { ...options, detail: undefined });
  }
};

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

let clientMode = true;
// The sample's React: use() of a stubbed promise gives what it settles to (a stub), as the real
// helper's promise would give its value; the other promises it is given are watched (one that never
// settles leaves a browser's page empty).
const usedPromises = [];
const sampleReact = Object.freeze({
  ...React,
  use(usable) {
    if (stubs.has(usable)) return React.use({ status: "fulfilled", value: stub(false), then() {} });
    if (usable !== null && typeof usable === "object" && typeof usable.then === "function") {
      if (usedPromises.length < 100 && !usedPromises.some((u) => u.promise === usable)) {
        usedPromises.push({ promise: usable, stack: new Error().stack });
      }
    }
    return React.use(usable);
  },
});
const pendingUse = () => usedPromises.find((u) => u.promise.status === "pending");
// A portal into a container from a stubbed import (a `getTarget()` helper) renders in place.
const sampleReactDom = Object.freeze({
  ...ReactDOM,
  createPortal: (children, container, key) =>
    stubs.has(container) ? children : ReactDOM.createPortal(children, container, key),
});
function sampleRequire(name) {
  name = String(name);
  if (name === "react") return sampleReact;
  if (name === "react/jsx-runtime") return jsxRuntime;
  if (name === "react/jsx-dev-runtime") return jsxDevChecked;
  if (name === "react-dom") return clientMode ? sampleReactDom : reactDomForServer;
  if (name === "react-dom/client") return sampleClient;
  if (isNodeBuiltin(name)) {
    // what a bundler says when browser code imports one
    throw new Error(`Could not resolve "${name}": a Node.js built-in module, not available in the browser`);
  }
  return stubModule();
}

// Props from the caller: {"$botgrpo": "stub" | "function" | "element" | "spy" | "throws"} markers become
// values ("throws": an element whose component throws `text` when it renders); a
// spy ({"$botgrpo": "spy", "name": "onSave"}) is a function that records its calls' arguments (as JSON)
// in spyCalls under its name, for jsx.checks' `called` expectation.
const spyCalls = new Map();
function spy(name) {
  return (...args) => {
    const calls = spyCalls.get(name) || [];
    if (calls.length < 100) {
      let text;
      try {
        text = stringify(args, (k, v) => (v !== null && typeof v === "object" && v.nodeType ? "[element]" : typeof v === "function" ? "[function]" : v));
      } catch {
        text = "[unserialisable]";
      }
      calls.push(String(text).slice(0, 2000));
    }
    spyCalls.set(name, calls);
  };
}
// A child that throws while rendering (for an error boundary's checks).
function Throws({ message }) {
  throw new Error(message);
}
function revive(value) {
  if (Array.isArray(value)) return value.map(revive);
  if (value === null || typeof value !== "object") return value;
  if (value.$botgrpo === "stub") return stub();
  if (value.$botgrpo === "function") return () => undefined;
  if (value.$botgrpo === "element") return React.createElement("span", null, typeof value.text === "string" ? value.text : "text");
  if (value.$botgrpo === "spy") return spy(String(value.name || "spy"));
  if (value.$botgrpo === "throws") return React.createElement(Throws, { message: String(value.text || "a child failed") });
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

// A DOM (linkedom), installed before the module runs, as a browser page has one.
function installDom() {
  const { window, document } = parseHTML("<!doctype html><html><head></head><body><div id='root'></div></body></html>");
  const inert = () => ({ observe() {}, unobserve() {}, disconnect() {} });
  const memory = () => {
    const data = new Map();
    return { getItem: (k) => (data.has(k) ? data.get(k) : null), setItem: (k, v) => data.set(k, String(v)), removeItem: (k) => data.delete(k), clear: () => data.clear() };
  };
  const extra = {
    navigator: { userAgent: "botgrpo", language: "en", onLine: true },
    innerWidth: 1024,
    innerHeight: 768,
    outerWidth: 1024,
    outerHeight: 768,
    devicePixelRatio: 1,
    scrollX: 0,
    scrollY: 0,
    pageXOffset: 0,
    pageYOffset: 0,
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
  // linkedom's window.navigator is a new object on every read, without onLine: the page's global
  // navigator is one object that has it
  const linked = window.navigator || {};
  globalThis.navigator = { userAgent: linked.userAgent || "botgrpo", language: "en", languages: ["en"], onLine: true, cookieEnabled: true, platform: "Linux x86_64" };

  // an <input> without a type is a text field (linkedom's `type` is then null, and React would not
  // treat it as one: no onChange)
  const inputProto = window.HTMLInputElement && window.HTMLInputElement.prototype;
  if (inputProto) {
    Object.defineProperty(inputProto, "type", {
      configurable: true,
      get() {
        const t = this.getAttribute("type");
        return t ? String(t).toLowerCase() : "text";
      },
      set(value) {
        this.setAttribute("type", value);
      },
    });
  }
  globalThis.IS_REACT_ACT_ENVIRONMENT = true;
  return document.getElementById("root");
}

// A pause for a promise the render waits on: real time, or in checks mode the fake clock's.
let pause = (ms) => new Promise((resolve) => realTimers.setTimeout(resolve, ms));
let lastRoot = null;

// Mount with react-dom/client: effects run, and a second render checks the hooks keep their order.
async function clientRender(element, container) {
  const errors = [];
  const root = createRoot(container, { onUncaughtError: (e) => errors.push(e), onCaughtError: (e) => errors.push(e) });
  lastRoot = root;
  try {
    for (let pass = 0; pass < 2 && errors.length === 0; pass++) {
      await React.act(async () => root.render(element()));
    }
    // a promise the render waits on gets a moment to settle (timers run), then it is a hang
    for (let wait = 0; wait < 10 && errors.length === 0 && pendingUse(); wait++) {
      await React.act(() => pause(20));
    }
  } catch (error) {
    throw located(error, element); // act rethrows what the render threw
  }
  if (errors.length) throw located(errors[0], element);
  const pending = pendingUse();
  if (pending) {
    const hang = new Error("the component waits on a promise that never settles (use()): the page stays empty");
    hang.stack = hang.message + "\n" + pending.stack;
    throw hang;
  }
  return container.innerHTML;
}

// An error React throws from its own code (too many re-renders) has no frame of the sample's in the
// client render; the server render throws it from the component's frame, which places it.
function located(error, element) {
  if (!(error instanceof Error) || location(error.stack) !== null || suspect !== null) return error;
  try {
    renderToString(element());
  } catch (again) {
    if (again instanceof Error && again.message === error.message && location(again.stack) !== null) {
      error.stack = again.stack;
    }
  }
  return error;
}

async function run(request) {
  clientMode = request.client !== false;
  const container = clientMode ? installDom() : null;
  const checking = clientMode && Array.isArray(request.checks);
  if (checking) {
    // before the sample runs: its timers on a fake clock, the server's answer if the suite gives one,
    // and what the checks read the page with captured
    const clock = checks.installClock(randomSource);
    request.clock = clock;
    pause = (ms) => checks.advance(clock, ms, (fire) => fire()); // inside act already
    checks.installFetch(request.fetch);
    checks.prepareDom(window);
    // what react-dom reports of an event handler's throw (it has no reportError here: it emits it)
    request.pageErrors = [];
    process.on("uncaughtException", (error) => request.pageErrors.push(error));
  }
  const module = { exports: {} };
  const fn = vm.runInThisContext(WRAP + request.code + "\n})", { filename: FILENAME });
  const args = [module.exports, sampleRequire, module, sampleReact, BROWSER_PROCESS];
  if (clientMode) {
    await React.act(async () => fn(...args)); // an entry file mounts here
    if (rootErrors.length) throw rootErrors[0];
  } else {
    fn(...args);
  }
  const Component = pickComponent(module.exports);
  if (Component === null) {
    if (clientMode && sampleRoots > 0) {
      // an entry file: what it mounted is the page (checks then run on it in turn, with no fresh mount)
      if (checking) await runChecks(request, container, null);
      return { ok: true, html: String(document.body.innerHTML).slice(0, request.max_html || 100000) };
    }
    return { ok: false, error: { message: "the code exports no component", line: null, column: null } };
  }
  const props = revive(request.props || {});
  const element = () => React.createElement(Component, props);
  const html = clientMode ? await clientRender(element, container) : renderToString(element());
  const withProps = (given) => () => React.createElement(Component, revive(given));
  if (checking) await runChecks(request, container, element, withProps);
  return { ok: true, html: String(html).slice(0, request.max_html || 100000) };
}

// The suite's checks, each on a fresh mount of `element` (null: the page the entry file mounted), each
// result written at once as "<nonce> {check, ok, why?, ms}". After a check past its deadline the rest
// are not run: what it left running could act on their page.
async function runChecks(request, container, element, withProps) {
  const clock = request.clock;
  const env = { React, window: globalThis.window, document: globalThis.document, realTimers, clock, container, errors: request.pageErrors, spyCalls };
  // a check's own props (`props` of the check) replace the suite's for its mounts
  env.mount = async (props) => {
    if (element === null) return;
    const make = props !== undefined && props !== null ? withProps(props) : element;
    await React.act(async () => {
      if (lastRoot !== null) lastRoot.unmount();
      lastRoot = null;
    });
    container.innerHTML = "";
    // an error a boundary of the page caught is the page's business, not a failure
    const fresh = createRoot(container, { onUncaughtError: (e) => env.errors.push(e), onCaughtError: () => {} });
    lastRoot = fresh;
    await React.act(async () => fresh.render(make()));
  };
  const runCheck = checks.makeRunner(env);
  const timeoutMs = Math.max(1, Number(request.check_timeout_ms) || 2000);
  let hung = false;
  for (let i = 0; i < request.checks.length; i++) {
    const result = hung ? { ok: false, why: "not run: an earlier check ran past its deadline", ms: 0 } : await runCheck(request.checks[i], timeoutMs);
    if (result.timeout) hung = true;
    writeSync(1, request.nonce + " " + stringify({ check: i, ...result }) + "\n");
  }
}

async function main() {
  const input = fs.readFileSync(0, "utf8");
  const request = JSON.parse(input);
  const nonce = String(request.nonce);
  request.nonce = nonce;
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
main().then(() => exit(0));
