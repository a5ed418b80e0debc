// Behaviour checks (jsx.checks) against the live DOM of a rendered component, run by render.js in the
// same sandboxed process (botgrpo_jsx/sandbox.py) once the component has rendered.
//
// A check is {name, do: [action...], expect: [expectation...]} (the typed schema and its meaning:
// botgrpo_jsx/checks_schema.py). Each check starts on a fresh mount of the component (the page as it
// first renders), runs its actions as a user would (events dispatched on the element, bubbling, under
// React.act so updates and effects flush), then tests its expectations. Time is a fake clock the
// sample's timers run on (setTimeout, setInterval, Date): `wait` advances it at once, so a
// countdown of ten seconds costs nothing, and the page sees the same date on every run.
//
// Every check is bounded: its asynchronous work races a deadline (`check_timeout_ms`), timers fire at
// most MAX_FIRES times per wait, and a check that blocks the thread is ended with the process by the
// caller's deadline; each result is written as soon as it is known, so the checks before it count.

"use strict";

const MAX_FIRES = 2000;
const RealDate = Date; // captured when the harness loads, before any sample runs
const START = Date.UTC(2026, 2, 2, 10, 30, 0); // Monday 2 March 2026, 10:30 UTC

// ---- the fake clock ------------------------------------------------------------------------------
function installClock(randomSource) {
  const clock = { now: START, seq: 0, timers: new Map(), errors: [] };
  const add = (fn, ms, args, every) => {
    const id = ++clock.seq;
    const delay = Math.max(0, Number(ms) || 0);
    if (typeof fn === "function") clock.timers.set(id, { at: clock.now + delay, fn, args, every, id });
    return id;
  };
  globalThis.setTimeout = (fn, ms, ...args) => add(fn, ms, args, null);
  globalThis.setInterval = (fn, ms, ...args) => add(fn, ms, args, Math.max(1, Number(ms) || 0));
  globalThis.clearTimeout = (id) => clock.timers.delete(id);
  globalThis.clearInterval = (id) => clock.timers.delete(id);
  function FakeDate(...args) {
    if (!new.target) return new RealDate(clock.now).toString();
    return args.length ? new RealDate(...args) : new RealDate(clock.now);
  }
  Object.setPrototypeOf(FakeDate, RealDate);
  FakeDate.prototype = RealDate.prototype;
  FakeDate.now = () => clock.now;
  globalThis.Date = FakeDate;
  // and a seeded Math.random (mulberry32), so a page's dice and shuffles are the same on every run
  let seed = 58;
  randomSource.next = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // the next timer due by `until`, in order of time, then of creation
  clock.next = (until) => {
    let best = null;
    for (const t of clock.timers.values()) {
      if (t.at <= until && (best === null || t.at < best.at || (t.at === best.at && t.id < best.id))) best = t;
    }
    return best;
  };
  return clock;
}

// Advance the fake clock by `ms`, firing the timers due in order (at most MAX_FIRES), each through
// `wrap` (React.act, so each timer's updates render before the next fires).
async function advance(clock, ms, wrap) {
  const until = clock.now + ms;
  for (let fired = 0; fired < MAX_FIRES; fired++) {
    const t = clock.next(until);
    if (t === null) break;
    clock.now = t.at;
    if (t.every === null) clock.timers.delete(t.id);
    else t.at += t.every;
    await wrap(() => {
      try {
        t.fn(...(t.args || []));
      } catch (error) {
        clock.errors.push(error);
      }
    });
  }
  clock.now = Math.max(clock.now, until);
}

// ---- the page ------------------------------------------------------------------------------------
const HIDDEN_STYLE = /(^|;)\s*(display\s*:\s*none|visibility\s*:\s*hidden)/i;
function visible(el, container) {
  for (let e = el; e && e !== container; e = e.parentNode) {
    if (e.nodeType !== 1) continue;
    if (hasAttr(e, "hidden") || HIDDEN_STYLE.test(attr(e, "style") || "")) return false;
    if (e.tagName === "DETAILS" && e !== el && !hasAttr(e, "open") && !isSummaryOf(el, e)) return false;
  }
  return true;
}
function isSummaryOf(el, details) {
  for (let e = el; e && e !== details; e = e.parentNode) if (e.tagName === "SUMMARY") return true;
  return false;
}
const TEXT_TYPES = new Set(["text", "email", "password", "search", "tel", "url", ""]);
const BUTTON_TYPES = new Set(["button", "submit", "reset", "image"]);
const lower = (v) => String(v || "").toLowerCase();
const inputType = (el) => lower(attr(el, "type"));
const roleAttr = (el) => lower(attr(el, "role"));
const isInput = (el) => el.tagName === "INPUT";
const ROLES = {
  button: (el) => el.tagName === "BUTTON" || (isInput(el) && BUTTON_TYPES.has(inputType(el))) || roleAttr(el) === "button",
  textbox: (el) =>
    (isInput(el) && TEXT_TYPES.has(inputType(el))) || el.tagName === "TEXTAREA" ||
    lower(attr(el, "contenteditable")) === "true" || roleAttr(el) === "textbox",
  spinbutton: (el) => (isInput(el) && inputType(el) === "number") || roleAttr(el) === "spinbutton",
  field: (el) =>
    (isInput(el) && !BUTTON_TYPES.has(inputType(el)) && inputType(el) !== "hidden") ||
    el.tagName === "TEXTAREA" || el.tagName === "SELECT",
  checkbox: (el) => (isInput(el) && inputType(el) === "checkbox") || ["checkbox", "switch"].includes(roleAttr(el)),
  radio: (el) => (isInput(el) && inputType(el) === "radio") || roleAttr(el) === "radio",
  slider: (el) => (isInput(el) && inputType(el) === "range") || roleAttr(el) === "slider",
  combobox: (el) => el.tagName === "SELECT" || ["combobox", "listbox"].includes(roleAttr(el)),
  option: (el) => el.tagName === "OPTION" || roleAttr(el) === "option",
  link: (el) => el.tagName === "A" || roleAttr(el) === "link",
  heading: (el) => /^H[1-6]$/.test(el.tagName) || roleAttr(el) === "heading",
  list: (el) => el.tagName === "UL" || el.tagName === "OL" || roleAttr(el) === "list",
  listitem: (el) => el.tagName === "LI" || roleAttr(el) === "listitem",
  img: (el) => el.tagName === "IMG" || el.tagName === "SVG" || roleAttr(el) === "img",
  table: (el) => el.tagName === "TABLE" || roleAttr(el) === "table",
  row: (el) => el.tagName === "TR" || roleAttr(el) === "row",
  cell: (el) => el.tagName === "TD" || el.tagName === "TH" || ["cell", "gridcell", "columnheader"].includes(roleAttr(el)),
  columnheader: (el) => el.tagName === "TH" || roleAttr(el) === "columnheader",
  form: (el) => el.tagName === "FORM" || roleAttr(el) === "form",
  dialog: (el) => el.tagName === "DIALOG" || ["dialog", "alertdialog"].includes(roleAttr(el)),
  progressbar: (el) => el.tagName === "PROGRESS" || el.tagName === "METER" || roleAttr(el) === "progressbar",
  media: (el) => el.tagName === "VIDEO" || el.tagName === "AUDIO",
  canvas: (el) => el.tagName === "CANVAS",
};

// The text a user sees in an element: its text, a field's value, a select's chosen option; a space at
// every element's edge (block or inline), whitespace runs as one space.
function textOf(el, container, fields = true) {
  const parts = [];
  const walk = (node) => {
    if (node.nodeType === 3) {
      parts.push(node.data);
      return;
    }
    if (node.nodeType !== 1 || !visible(node, container)) return;
    const tag = node.tagName;
    if (tag === "SCRIPT" || tag === "STYLE") return;
    if (tag === "INPUT" && !["checkbox", "radio", "hidden"].includes(inputType(node))) {
      if (fields) parts.push(" ", String(node.value ?? ""), " ");
      return;
    }
    if (tag === "TEXTAREA") {
      if (fields) parts.push(" ", String(node.value ?? ""), " ");
      return;
    }
    if (tag === "SELECT") {
      const chosen = selectedOption(node);
      parts.push(" ", chosen ? chosen.textContent : "", " ");
      return;
    }
    if (tag === "IMG") parts.push(" ", attr(node, "alt") || "", " ");
    parts.push(" ");
    for (const child of node.childNodes) walk(child);
    parts.push(" ");
  };
  walk(el);
  return parts.join("").replace(/\s+/g, " ").trim();
}
function selectedOption(select) {
  const options = all(select, "option");
  return options.find((o) => o.selected || hasAttr(o, "selected")) || options[0] || null;
}

// What a field or control is called: aria-label, title, placeholder, alt, name, id, a <label>'s text
// (by `for` or around it), and for anything but a field its own text.
function nameOf(el, container, document) {
  const names = [];
  for (const name of ["aria-label", "title", "placeholder", "alt", "name", "id", "value"]) {
    const v = attr(el, name);
    if (v) names.push(v);
  }
  const id = attr(el, "id");
  if (id) {
    for (const label of all(document.documentElement, "label")) {
      if (attr(label, "for") === id || attr(label, "htmlFor") === id) names.push(textOf(label, container));
    }
  }
  for (let e = el.parentNode; e && e !== container; e = e.parentNode) {
    if (e.tagName === "LABEL") {
      names.push(textOf(e, container));
      break;
    }
  }
  if (!ROLES.field(el)) names.push(textOf(el, container));
  return names.join(" | ");
}

const regex = (source) => new RegExp(source, "i");
function describe(sel) {
  const bits = [];
  if (sel.role) bits.push(sel.role);
  if (sel.tag) bits.push("<" + sel.tag + ">");
  if (!bits.length) bits.push("element");
  if (sel.label) bits.push("named /" + sel.label + "/");
  if (sel.text) bits.push("with text /" + sel.text + "/");
  if (sel.style) bits.push("styled /" + sel.style + "/");
  for (const [k, v] of Object.entries(sel.attrs || {})) bits.push(`[${k}=/${v}/]`);
  return bits.join(" ");
}
function find(sel, container, document, root = null) {
  // `root`, the React root's own <div>, is the page's frame, not one of its elements
  let els = all(container, sel.tag ? sel.tag : "*").filter((el) => el !== root);
  if (sel.role) {
    const test = ROLES[sel.role];
    els = test ? els.filter(test) : [];
  }
  els = els.filter((el) => visible(el, container));
  if (sel.label) {
    const re = regex(sel.label);
    els = els.filter((el) => re.test(nameOf(el, container, document)));
  }
  if (sel.text) {
    const re = regex(sel.text);
    els = els.filter((el) => re.test(textOf(el, container)));
  }
  if (sel.style) {
    const re = regex(sel.style);
    els = els.filter((el) => re.test(attr(el, "style") || ""));
  }
  for (const [name, source] of Object.entries(sel.attrs || {})) {
    const re = regex(source);
    els = els.filter((el) => hasAttr(el, name) && re.test(attr(el, name) || ""));
  }
  if (sel.text || sel.label || sel.style) {
    // the innermost matches: a <div> around the button named "Add" is not the button
    els = els.filter((el) => !els.some((other) => other !== el && DOM.contains.call(el, other)));
  }
  return els;
}
// What a selector could have meant: the elements of its role or tag on the page, by name.
function around(sel, container, document, root = null) {
  const similar = find({ role: sel.role, tag: sel.tag }, container, document, root);
  const names = similar.slice(0, 6).map((el) => JSON.stringify(nameOf(el, container, document).slice(0, 40)));
  const kind = sel.role || (sel.tag ? "<" + sel.tag + ">" : "element");
  return similar.length ? ` (${similar.length} ${kind} on the page: ${names.join(", ")})` : ` (no ${kind} on the page)`;
}

function numbers(text) {
  return (text.match(/-?\d[\d,]*(?:\.\d+)?/g) || []).map((s) => Number(s.replace(/,/g, "")));
}

// What a drag carries: one file, photo.png (1234 bytes).
function dataTransfer() {
  const file = { name: "photo.png", size: 1234, type: "image/png", lastModified: 0 };
  const files = [file];
  files.item = (i) => files[i] || null;
  return {
    files,
    items: [{ kind: "file", type: "image/png", getAsFile: () => file }],
    types: ["Files"],
    dropEffect: "copy",
    effectAllowed: "all",
    getData: () => "",
    setData: () => {},
    clearData: () => {},
  };
}

// What a form's submit button is called, for a form written without a <form>.
const SUBMIT_LABEL = "submit|send|save|sign|register|post|book|order|subscribe|apply|join|continue|log ?in|done|finish|confirm|create|add";

// ---- the runner ----------------------------------------------------------------------------------
class CheckFailed extends Error {}
class NotFound extends CheckFailed {}

function makeRunner(env) {
  const { React, window, document, realTimers, clock } = env;
  // what a user sees: the whole body (the page's root and what it portals out of it)
  const view = document.body;
  const act = React.act;

  const event = (type, extra = {}) => {
    const e = new window.Event(type, { bubbles: extra.bubbles !== false, cancelable: true });
    for (const [k, v] of Object.entries(extra)) {
      if (k === "bubbles") continue;
      try {
        Object.defineProperty(e, k, { value: v, configurable: true });
      } catch {
        // a read-only property of linkedom's Event: keep its own
      }
    }
    return e;
  };
  const dispatch = async (el, e) => {
    await act(async () => {
      DOM.dispatchEvent.call(el, e);
    });
    return e;
  };
  const valueSetter = (el) => {
    for (let p = Object.getPrototypeOf(el); p; p = Object.getPrototypeOf(p)) {
      const d = Object.getOwnPropertyDescriptor(p, "value");
      if (d && d.set) return d.set;
    }
    return null;
  };
  const setValue = (el, value) => {
    const set = valueSetter(el);
    if (set) set.call(el, value);
    else el.setAttribute("value", value);
  };
  // a pointer at (137, 59) in every frame of reference
  const pointer = { button: 0, buttons: 1, relatedTarget: null };
  const mediaChanged = window.__botgrpoMediaChanged;
  for (const k of ["clientX", "pageX", "screenX", "x", "offsetX"]) pointer[k] = 137;
  for (const k of ["clientY", "pageY", "screenY", "y", "offsetY"]) pointer[k] = 59;

  const one = (sel, what) => {
    const els = find(sel, view, document, env.container);
    const el = els[sel.nth || 0];
    if (!el) throw new NotFound(`${what}: no ${describe(sel)}${sel.nth ? ` number ${sel.nth + 1}` : ""}` + around(sel, view, document, env.container));
    return el;
  };
  const disabled = (el) => {
    for (let e = el; e && e !== view; e = e.parentNode) {
      if (e.nodeType === 1 && hasAttr(e, "disabled") && (e === el || e.tagName === "FIELDSET")) return true;
    }
    return false;
  };
  const formOf = (el) => {
    for (let e = el; e && e !== view.parentNode; e = e.parentNode) if (e.tagName === "FORM") return e;
    return null;
  };
  const isSubmitter = (el) =>
    (el.tagName === "BUTTON" && ["", "submit"].includes(inputType(el))) ||
    (isInput(el) && ["submit", "image"].includes(inputType(el)));

  async function click(el, extra = {}) {
    if (disabled(el)) return; // a browser sends a disabled control no click
    await dispatch(el, event("mousedown", { ...pointer, ...extra }));
    await dispatch(el, event("mouseup", { ...pointer, ...extra }));
    const type = inputType(el);
    if (isInput(el) && (type === "checkbox" || type === "radio")) {
      const before = el.checked;
      el.checked = type === "radio" ? true : !before;
      const e = await dispatch(el, event("click", { ...pointer, ...extra }));
      if (e.defaultPrevented) el.checked = before;
      return;
    }
    const e = await dispatch(el, event("click", { ...pointer, ...extra }));
    if (e.defaultPrevented) return;
    if (el.tagName === "LABEL") {
      const id = attr(el, "for");
      const target = id ? document.getElementById(id) : all(el, "input, textarea, select")[0];
      if (target && target !== el && !disabled(target)) await click(target);
      return;
    }
    const form = isSubmitter(el) ? formOf(el) : null;
    if (form) await dispatch(form, event("submit"));
  }

  async function focus(el) {
    await act(async () => {
      DOM.dispatchEvent.call(el, event("focus", { bubbles: false }));
      DOM.dispatchEvent.call(el, event("focusin"));
    });
  }

  async function type(el, text) {
    if (disabled(el) || hasAttr(el, "readonly")) return;
    if (!ROLES.field(el) && lower(attr(el, "contenteditable")) !== "true") {
      throw new CheckFailed(`type: <${el.tagName.toLowerCase()}> is not a field`);
    }
    await focus(el);
    // one character at a time, as a user types: handlers that read each keystroke see them all
    let value = "";
    for (const ch of String(text)) {
      value += ch;
      await dispatch(el, event("keydown", { key: ch, code: "", keyCode: ch.charCodeAt(0), which: ch.charCodeAt(0) }));
      setValue(el, value);
      await dispatch(el, event("input", { data: ch, inputType: "insertText" }));
      await dispatch(el, event("keyup", { key: ch }));
    }
    if (!String(text).length) {
      setValue(el, "");
      await dispatch(el, event("input", { inputType: "deleteContentBackward" }));
      await dispatch(el, event("keyup", { key: "Backspace" }));
    }
    await dispatch(el, event("change"));
  }

  async function change(el, value) {
    if (disabled(el)) return;
    const t = inputType(el);
    if (isInput(el) && (t === "checkbox" || t === "radio")) {
      if (Boolean(el.checked) !== (value !== false && value !== "false")) await click(el);
      return;
    }
    if (el.tagName === "SELECT") {
      const options = all(el, "option");
      if (value === "$next") {
        // the option after the chosen one (the first after the last)
        const at = options.indexOf(selectedOption(el));
        value = String(attr(options[(at + 1) % Math.max(1, options.length)], "value") ?? "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      }
      const re = regex("^(?:" + String(value) + ")$");
      const pick = options.find((o) => re.test(attr(o, "value") ?? o.textContent)) ||
        options.find((o) => re.test(textOf(o, view) || o.textContent));
      if (!pick) {
        const names = options.map((o) => JSON.stringify(attr(o, "value") ?? o.textContent)).join(", ");
        throw new CheckFailed(`change: no option /${value}/ in the select (options: ${names || "none"})`);
      }
      for (const o of options) {
        o.selected = o === pick;
        if (o === pick) o.setAttribute("selected", "");
        else o.removeAttribute("selected");
      }
      await dispatch(el, event("input"));
      await dispatch(el, event("change"));
      return;
    }
    if (!ROLES.field(el)) throw new CheckFailed(`change: <${el.tagName.toLowerCase()}> is not a field`);
    await focus(el);
    setValue(el, String(value));
    await dispatch(el, event("input"));
    // react-dom, loaded before the page had a DOM, reads a field's new value on keyup (its fallback
    // for browsers without input events); a real browser's input event reaches the same handler
    await dispatch(el, event("keyup", { key: "Unidentified" }));
    await dispatch(el, event("change"));
  }

  async function key(el, name, extra) {
    const init = { key: name, code: name.length === 1 ? "Key" + name.toUpperCase() : name, ...extra };
    const down = await dispatch(el, event("keydown", init));
    if (name.length === 1) await dispatch(el, event("keypress", init));
    await dispatch(el, event("keyup", init));
    // a browser submits a form when Enter is pressed in one of its text fields
    if (name === "Enter" && !down.defaultPrevented && isInput(el) && TEXT_TYPES.has(inputType(el))) {
      const form = formOf(el);
      if (form) await dispatch(form, event("submit"));
    }
  }

  async function wait(ms) {
    await advance(clock, ms, (fire) => act(async () => fire()));
    await act(async () => {}); // the updates of the last timer
  }

  async function perform(step) {
    if (step.click) {
      const el = one(step.click, "click");
      await click(el, { shiftKey: Boolean(step.shift), ctrlKey: Boolean(step.ctrl) });
      if (step.double) {
        await click(el);
        await dispatch(el, event("dblclick", pointer));
      }
    } else if (step.type) await type(one(step.type, "type into"), step.value ?? "");
    else if (step.change) await change(one(step.change, "change"), step.value);
    else if (step.submit !== undefined) {
      const bare = !step.submit || Object.keys(step.submit).length === 0;
      if (bare && find({ role: "form" }, view, document, env.container).length === 0) {
        // a form without a <form>: its button does the submitting
        const button = find({ role: "button", label: SUBMIT_LABEL }, view, document, env.container)[0];
        if (!button) throw new NotFound("submit: no form, and no button named /" + SUBMIT_LABEL + "/" + around({ role: "button" }, view, document, env.container));
        await click(button);
        return;
      }
      const form = one(bare ? { role: "form" } : step.submit, "submit");
      const submitter = all(form, "button, input").find(isSubmitter);
      if (submitter) await click(submitter);
      else await dispatch(form, event("submit"));
    } else if (step.key) {
      const el = step.target ? one(step.target, "key") : document.activeElement && document.activeElement !== document.body ? document.activeElement : view.firstElementChild || document.body;
      await key(el, step.key, { shiftKey: Boolean(step.shift), ctrlKey: Boolean(step.ctrl), metaKey: false });
    } else if (step.hover) {
      const el = one(step.hover, "hover");
      await dispatch(el, event("mouseover", pointer));
      await dispatch(el, event("mousemove", pointer));
    } else if (step.leave) {
      const el = one(step.leave, "leave");
      await dispatch(el, event("mouseout", pointer));
    } else if (step.event) {
      // without `on`: on the document's body, outside the page's root (a click outside a dropdown)
      const el = step.target ? one(step.target, step.event) : document.body;
      const extra = /^drag|^drop$/.test(step.event) ? { dataTransfer: dataTransfer() } : {};
      // going offline or online is what navigator.onLine then says, as in a browser
      if ((step.event === "offline" || step.event === "online") && globalThis.navigator) {
        globalThis.navigator.onLine = step.event === "online";
      }
      await dispatch(el, event(step.event, { ...pointer, ...extra }));
    } else if (step.wait !== undefined) await wait(step.wait);
    else if (step.remount) {
      // the page reloaded: a fresh mount; what the page stored (localStorage) and the clock stay
      await env.mount(env.checkProps);
      await wait(0);
    } else if (step.resize) {
      const [w, h] = step.resize.split("x").map(Number);
      await act(async () => {
        for (const [k, v] of [["innerWidth", w], ["innerHeight", h], ["outerWidth", w], ["outerHeight", h]]) {
          Object.defineProperty(window, k, { value: v, configurable: true, writable: true });
        }
        DOM.dispatchOnWindow(event("resize", { bubbles: false }));
        if (typeof mediaChanged === "function") mediaChanged();
      });
    } else if (step.scroll !== undefined) {
      // a page 3000 px tall in a 768 px window, scrolled to `scroll` px
      await act(async () => {
        const root = document.documentElement;
        for (const [k, v] of [["scrollY", step.scroll], ["pageYOffset", step.scroll]]) {
          Object.defineProperty(window, k, { value: v, configurable: true, writable: true });
        }
        for (const el of [root, document.body]) {
          for (const [k, v] of [["scrollTop", step.scroll], ["scrollHeight", 3000], ["clientHeight", 768], ["offsetHeight", 3000]]) {
            Object.defineProperty(el, k, { value: v, configurable: true, writable: true });
          }
        }
        DOM.dispatchOnWindow(event("scroll", { bubbles: false }));
        DOM.dispatchOnDocument(event("scroll", { bubbles: false }));
      });
    }
  }

  // The page's state an expectation compares with: counts and text before the actions.
  function snapshot(check) {
    const before = { text: textOf(view, view), html: String(view.innerHTML), counts: [] };
    before.contents = [];
    for (const e of check.expect || []) {
      const sel = e.count || e.appears || e.disappears;
      before.counts.push(sel ? find(sel, view, document, env.container).length : 0);
      before.contents.push(e.content_changes ? contentOf(e.content_changes) : null);
    }
    return before;
  }

  // the text of the elements a selector finds, in order
  const contentOf = (sel) => find(sel, view, document, env.container).map((el) => textOf(el, view)).join(" | ");

  function test(e, before, index) {
    const page = () => textOf(view, view);
    if (e.any) {
      const whys = e.any.map((sub) => test(sub, before, null));
      if (whys.every((w) => w !== null)) return "none of: " + whys.join("; or ");
    } else if (e.exists) {
      const n = find(e.exists, view, document, env.container).length;
      const min = e.min ?? 1;
      if (n < min || (e.max !== undefined && e.max !== null && n > e.max)) {
        const want = e.max === undefined || e.max === null ? `at least ${min}` : e.max === min ? `${min}` : `${min}-${e.max}`;
        return `expected ${want} ${describe(e.exists)}, found ${n}` + (n ? "" : around(e.exists, view, document, env.container));
      }
    } else if (e.absent) {
      const n = find(e.absent, view, document, env.container).length;
      if (n) return `expected no ${describe(e.absent)}, found ${n}`;
    } else if (e.text !== undefined) {
      if (!regex(e.text).test(page())) return `no text /${e.text}/ on the page: ${JSON.stringify(page().slice(0, 160))}`;
    } else if (e.shown !== undefined) {
      const text = textOf(view, view, false);
      if (!regex(e.shown).test(text)) return `no text /${e.shown}/ outside the fields: ${JSON.stringify(text.slice(0, 160))}`;
    } else if (e.not_shown !== undefined) {
      const m = regex(e.not_shown).exec(textOf(view, view, false));
      if (m) return `text /${e.not_shown}/ is shown outside the fields: ${JSON.stringify(m[0].slice(0, 60))}`;
    } else if (e.no_text !== undefined) {
      const m = regex(e.no_text).exec(page());
      if (m) return `text /${e.no_text}/ is on the page: ${JSON.stringify(m[0].slice(0, 60))}`;
    } else if (e.number !== undefined && e.number !== null) {
      const tol = e.tol ?? 1e-9;
      if (!numbers(page()).some((x) => Math.abs(x - e.number) <= tol)) {
        return `no number ${e.number} on the page: ${JSON.stringify(page().slice(0, 160))}`;
      }
    } else if (e.no_number !== undefined && e.no_number !== null) {
      if (numbers(page()).some((x) => Math.abs(x - e.no_number) <= (e.tol ?? 1e-9))) return `the number ${e.no_number} is on the page`;
    } else if (e.count) {
      const n = find(e.count, view, document, env.container).length;
      const was = before.counts[index];
      if (n - was !== e.change) return `${describe(e.count)}: ${was} -> ${n}, expected a change of ${e.change > 0 ? "+" : ""}${e.change}`;
    } else if (e.appears) {
      const n = find(e.appears, view, document, env.container).length;
      if (before.counts[index] > 0 || n === 0) return `${describe(e.appears)} did not appear (${before.counts[index]} -> ${n})`;
    } else if (e.disappears) {
      const n = find(e.disappears, view, document, env.container).length;
      if (before.counts[index] === 0 || n > 0) return `${describe(e.disappears)} did not disappear (${before.counts[index]} -> ${n})`;
    } else if (e.content_changes) {
      const now = contentOf(e.content_changes);
      if (now === before.contents[index]) return `the text of ${describe(e.content_changes)} did not change: ${JSON.stringify(now.slice(0, 120))}`;
    } else if (e.html_changes) {
      if (String(view.innerHTML) === before.html) return "the page did not change (its elements, attributes and text are as before)";
    } else if (e.html_same) {
      if (String(view.innerHTML) !== before.html) return "the page changed (its elements, attributes or text)";
    } else if (e.text_same) {
      if (page() !== before.text) return `the page's text changed: ${JSON.stringify(before.text.slice(0, 80))} -> ${JSON.stringify(page().slice(0, 80))}`;
    } else if (e.text_changes) {
      if (page() === before.text) return `the page's text did not change: ${JSON.stringify(page().slice(0, 120))}`;
    } else if (e.called !== undefined) {
      const calls = env.spyCalls.get(e.called) || [];
      if (!calls.length) return `the ${e.called} prop was not called`;
      if (e.args !== undefined && !calls.some((c) => regex(e.args).test(c))) {
        return `the ${e.called} prop was called with ${calls.slice(-3).join(", ").slice(0, 200)}, not /${e.args}/`;
      }
    } else if (e.not_called !== undefined) {
      const calls = env.spyCalls.get(e.not_called) || [];
      if (calls.length) return `the ${e.not_called} prop was called (${calls[0].slice(0, 100)})`;
    } else if (e.title !== undefined) {
      if (!regex(e.title).test(String(document.title || ""))) return `the document title is ${JSON.stringify(String(document.title || ""))}, not /${e.title}/`;
    }
    return null;
  }

  async function runOne(check) {
    env.errors.length = 0;
    clock.errors.length = 0;
    env.spyCalls.clear();
    // each check on a fresh page: nothing stored, no title (a reload within a check keeps them)
    for (const store of [window.localStorage, window.sessionStorage]) {
      try {
        store.clear();
      } catch {
        // a page that replaced its storage: leave it
      }
    }
    try {
      document.title = "";
    } catch {
      // no title to reset
    }
    await env.mount(check.props);
    await wait(0); // what a browser runs right after the first paint: timers of 0 ms
    env.checkProps = check.props;
    const before = snapshot(check);
    for (const step of check.do || []) {
      try {
        await perform(step);
      } catch (error) {
        // an optional step whose element is not on the page is skipped (a quiz that checks on click
        // needs no submit button)
        if (!(step.optional && error instanceof NotFound)) throw error;
      }
      const thrown = env.errors[0] || clock.errors[0];
      if (thrown) throw new CheckFailed("the page threw: " + String((thrown && thrown.message) || thrown).slice(0, 200));
    }
    const failures = (check.expect || []).map((e, i) => test(e, before, i)).filter((w) => w !== null);
    if (failures.length) throw new CheckFailed(failures.join("; "));
  }

  // One check within its deadline: {ok, why?, ms}.
  return async function runCheck(check, timeoutMs) {
    const t0 = realTimers.now();
    let timer;
    const deadline = new Promise((resolve) => {
      timer = realTimers.setTimeout(() => resolve("deadline"), timeoutMs);
    });
    let outcome;
    try {
      outcome = await Promise.race([runOne(check).then(() => "ok"), deadline]);
    } catch (error) {
      outcome = error instanceof CheckFailed ? error : new CheckFailed("the check threw: " + String((error && error.message) || error).slice(0, 200));
    } finally {
      realTimers.clearTimeout(timer);
    }
    const ms = Math.round(realTimers.now() - t0);
    if (outcome === "ok") return { ok: true, ms };
    if (outcome === "deadline") return { ok: false, why: `the check took over ${timeoutMs} ms`, ms, timeout: true };
    return { ok: false, why: outcome.message.slice(0, 600), ms };
  };
}

// What a fetch() resolves to when the suite gives the server's answer (`fetch` of the suite): every
// request gets a 200 with that JSON (a fresh copy), whatever its URL or method. Without one, every
// fetch fails at once as a browser's does offline (the sandbox has no network).
function installFetch(answer) {
  if (answer === undefined || answer === null) {
    globalThis.fetch = async () => {
      throw new TypeError("Failed to fetch");
    };
    return;
  }
  const body = JSON.stringify(answer);
  const response = () => ({
    ok: true,
    status: 200,
    statusText: "OK",
    headers: { get: (name) => (String(name).toLowerCase() === "content-type" ? "application/json" : null) },
    json: async () => JSON.parse(body),
    text: async () => body,
    clone() {
      return response();
    },
  });
  globalThis.fetch = async () => response();
}

// Before the sample runs: what the checks query the page with is captured (a sample that patches
// Element.prototype.querySelectorAll does not change what the checks find), and react-dom's hooks.
function prepareDom(window) {
  // react-dom (loaded before the page had a DOM) watches a focused text field the way old browsers
  // needed, with attachEvent: a no-op here, as the value is read on keyup
  const proto = window.HTMLElement.prototype;
  proto.attachEvent = function attachEvent() {};
  proto.detachEvent = function detachEvent() {};
  const lookup = (name) => {
    for (let p = proto; p; p = Object.getPrototypeOf(p)) {
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (d) return d.value || d.get;
    }
    return null;
  };
  for (const name of ["querySelectorAll", "getAttribute", "hasAttribute", "contains", "dispatchEvent"]) {
    DOM[name] = lookup(name);
  }
  // the window and the document dispatch with their own methods (linkedom's window is no element)
  DOM.dispatchOnWindow = window.dispatchEvent.bind(window);
  DOM.dispatchOnDocument = window.document.dispatchEvent.bind(window.document);
  // media queries on the window's width (min-width / max-width in px; a light colour scheme), whose
  // listeners hear a resize that flips them
  const queries = [];
  const evaluate = (q) => {
    const text = String(q).toLowerCase();
    const width = window.innerWidth;
    let ok = !/prefers-color-scheme\s*:\s*dark|prefers-reduced-motion\s*:\s*reduce/.test(text);
    for (const m of text.matchAll(/(min|max)-width\s*:\s*(\d+(?:\.\d+)?)px/g)) {
      ok = ok && (m[1] === "min" ? width >= Number(m[2]) : width <= Number(m[2]));
    }
    return ok;
  };
  window.matchMedia = (q) => {
    const listeners = new Set();
    const mql = {
      media: String(q),
      matches: evaluate(q),
      onchange: null,
      addListener: (f) => listeners.add(f),
      removeListener: (f) => listeners.delete(f),
      addEventListener: (type, f) => type === "change" && listeners.add(f),
      removeEventListener: (type, f) => listeners.delete(f),
      dispatchEvent: () => true,
      listeners,
    };
    if (queries.length < 200) queries.push(mql);
    return mql;
  };
  globalThis.matchMedia = window.matchMedia;
  window.__botgrpoMediaChanged = () => {
    for (const mql of queries) {
      const now = evaluate(mql.media);
      if (now === mql.matches) continue;
      mql.matches = now;
      const e = { matches: now, media: mql.media };
      for (const f of mql.listeners) f(e);
      if (typeof mql.onchange === "function") mql.onchange(e);
    }
  };
}
const DOM = {};
const all = (el, selector) => Array.from(DOM.querySelectorAll.call(el, selector));
const attr = (el, name) => DOM.getAttribute.call(el, name);
const hasAttr = (el, name) => DOM.hasAttribute.call(el, name);

module.exports = { installClock, installFetch, prepareDom, makeRunner, advance };
