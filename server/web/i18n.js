// The page's languages: English and Nepali (नेपाली). Every word the page shows comes from the
// tables in `messages-en.js` and `messages-ne.js` through `t`, so that switching language redraws
// the page in the other. A page loads only its own language's table (this module waits for it
// before any module that imports it runs; the server preloads the one the page will pick, from
// the `dhumbal.lang` cookie this module keeps beside localStorage, else the browser's languages),
// and the other only at a switch.
//
// - `t(key, params)`: the message in the page's language, with `{name}` filled from `params`.
//   A message may be an object of plural forms (`{ one, other }`, chosen by `params.count` with
//   `Intl.PluralRules`); numbers are written with Western digits in both languages.
// - `tNodes(key, params)`: the same as nodes, for a message with an element in it (a room code,
//   a key of the keyboard): a param that is a DOM node goes in as that node.
// - Static HTML says which message it shows with `data-i18n="key"` (its text),
//   `data-i18n-aria-label`, `data-i18n-title` and `data-i18n-placeholder`; `translate(root)`
//   fills them, at start and at every switch. An element the page builds with a fixed message
//   can carry the same attributes (`label(el, key)`) and is then kept up to date too.
// - The language comes from what this browser was told before (localStorage `dhumbal.lang`),
//   else from the browser's languages (`ne…` is Nepali, anything else English). The control in
//   the page's header (`languageSwitch`) changes it: `<html lang>` follows, the static text is
//   filled again, and every `onLanguageChange` listener draws its part again, keeping the page's
//   state (nothing reloads).
//
// Text that is not in the page's language on purpose carries its own `lang` (the control's
// "English", the romanised Nepali words of How to play) or `translate="no"` (room codes, seeds),
// and keys of the keyboard are `<kbd>`.

import { device } from "./storage.js";

/**
 * The languages, each with its own name for itself, how to load its table, and its table once
 * loaded.
 */
export const LANGUAGES = [
  { code: "en", name: "English", load: () => import("./messages-en.js").then((m) => m.EN), table: null },
  { code: "ne", name: "\u0928\u0947\u092a\u093e\u0932\u0940", load: () => import("./messages-ne.js").then((m) => m.NE), table: null },
];

const STORE_KEY = "dhumbal.lang";

/**
 * A language's table, loaded once.
 * @param {string} code a code of {@link LANGUAGES}
 * @returns {Promise<Object<string, string|object>>}
 */
export async function messagesOf(code) {
  const l = LANGUAGES.find((x) => x.code === code);
  if (!l.table) l.table = await l.load();
  return l.table;
}

/**
 * Tells the server the language chosen on this browser (a cookie for the pages only), so that
 * the page it serves next preloads that language's table.
 * @param {string} code
 */
function tellServer(code) {
  try {
    document.cookie = `${STORE_KEY}=${code}; path=/; max-age=31536000; samesite=lax`;
  } catch {
    // No cookies: the server guesses from the browser's languages; the page still picks right.
  }
}

/**
 * The language to show: the one chosen before on this browser, else the first of the browser's
 * languages this page speaks (`ne`, `ne-NP`, … are Nepali), else English.
 * @param {string|null} stored what localStorage remembers
 * @param {readonly string[]} preferred the browser's languages, most wanted first
 * @returns {string} a code of {@link LANGUAGES}
 */
export function pickLanguage(stored, preferred) {
  if (LANGUAGES.some((l) => l.code === stored)) return stored;
  for (const tag of preferred || []) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (base === "ne") return "ne";
    if (base === "en") return "en";
  }
  return "en";
}

const stored = device.get(STORE_KEY);
let current = pickLanguage(stored, navigator.languages || [navigator.language]);
if (stored === current) tellServer(current);
let table = await messagesOf(current);
let plurals = new Intl.PluralRules(current);
const listeners = [];

/** Whether the tables have a message `key` (they have the same keys). */
export function hasMessage(key) {
  return Object.prototype.hasOwnProperty.call(table, key);
}

/** The page's language now (`en` or `ne`). */
export function language() {
  return current;
}

/** The message `key` in the page's language, before its params are filled. */
function raw(key, params) {
  let msg = table[key];
  if (msg === undefined) {
    // A key missing from a table is a bug: say so (the browser tests fail on console errors).
    console.error(`i18n: no message "${key}" in ${current}`);
    msg = key;
  }
  if (typeof msg === "object") {
    const form = plurals.select(Number(params && params.count));
    msg = msg[form] === undefined ? msg.other : msg[form];
  }
  return msg;
}

/**
 * A message in the page's language.
 * @param {string} key a key of the tables in `messages-en.js` and `messages-ne.js`
 * @param {Object<string, string|number>} [params] the values of its `{name}`s
 * @returns {string}
 */
export function t(key, params = {}) {
  return raw(key, params).replace(/\{(\w+)\}/g, (whole, name) => {
    if (!(name in params)) {
      console.error(`i18n: "${key}" needs {${name}}`);
      return whole;
    }
    return String(params[name]);
  });
}

/**
 * A message as a list of nodes and strings, to `append` to an element: a param that is a DOM
 * node (a `<span class="code">`, a `<kbd>`) goes in as itself, so that word order can differ
 * between the languages.
 * @param {string} key
 * @param {Object<string, string|number|Node>} [params]
 * @returns {(string|Node)[]}
 */
export function tNodes(key, params = {}) {
  const parts = [];
  const msg = raw(key, params);
  let at = 0;
  for (const m of msg.matchAll(/\{(\w+)\}/g)) {
    if (m.index > at) parts.push(msg.slice(at, m.index));
    const value = params[m[1]];
    if (value === undefined) console.error(`i18n: "${key}" needs {${m[1]}}`);
    parts.push(value instanceof Node ? value : String(value === undefined ? m[0] : value));
    at = m.index + m[0].length;
  }
  if (at < msg.length) parts.push(msg.slice(at));
  return parts;
}

const ATTRIBUTES = [
  ["i18nAriaLabel", "aria-label"],
  ["i18nTitle", "title"],
  ["i18nPlaceholder", "placeholder"],
];

/**
 * Fills every `data-i18n*` element under `root` (and `root` itself) from the table.
 * @param {ParentNode} [root]
 */
export function translate(root = document) {
  const all = root.querySelectorAll("[data-i18n], [data-i18n-aria-label], [data-i18n-title], [data-i18n-placeholder]");
  const elements = root instanceof Element ? [root, ...all] : [...all];
  for (const e of elements) {
    if (e.dataset.i18n) e.textContent = t(e.dataset.i18n);
    for (const [data, attribute] of ATTRIBUTES) {
      if (e.dataset[data]) e.setAttribute(attribute, t(e.dataset[data]));
    }
  }
}

/**
 * Gives an element a fixed message (its text, or one of its attributes), kept up to date at
 * every switch of language.
 * @template {HTMLElement} E
 * @param {E} e
 * @param {string} key
 * @param {"text"|"aria-label"|"title"|"placeholder"} [what]
 * @returns {E}
 */
export function label(e, key, what = "text") {
  if (what === "text") e.dataset.i18n = key;
  else e.dataset[ATTRIBUTES.find(([, a]) => a === what)[0]] = key;
  translate(e);
  return e;
}

/**
 * Calls `listener` after every switch of language, to draw its part of the page again.
 * @param {(code: string) => void} listener
 */
export function onLanguageChange(listener) {
  listeners.push(listener);
}

function apply() {
  document.documentElement.lang = current;
  translate(document);
  for (const box of document.querySelectorAll(".lang-switch")) paintSwitch(box);
}

/** The language last asked for by {@link setLanguage}, while its table loads. */
let wanted = null;

/**
 * Switches the page to a language (once its table has loaded), remembers it on this browser,
 * and draws the page again.
 * @param {string} code `en` or `ne`
 * @returns {Promise<void>} settled once the page shows that language (or stays, if its table
 *   could not be loaded)
 */
export async function setLanguage(code) {
  if (!LANGUAGES.some((l) => l.code === code)) return;
  wanted = code;
  let loaded;
  try {
    loaded = await messagesOf(code);
  } catch {
    // Out of reach: the page stays in its language (a later click tries again).
    return;
  }
  // A later choice, made while this one loaded, wins.
  if (wanted !== code || code === current) return;
  current = code;
  table = loaded;
  tellServer(code);
  plurals = new Intl.PluralRules(code);
  device.set(STORE_KEY, code);
  apply();
  for (const listener of listeners) listener(code);
}

function paintSwitch(box) {
  for (const b of box.querySelectorAll("button")) {
    b.setAttribute("aria-pressed", String(b.dataset.lang === current));
  }
}

/**
 * The control that switches language: each language's name in that language
 * ("English | नेपाली"), the one shown pressed.
 * @returns {HTMLElement}
 */
export function languageSwitch() {
  const box = document.createElement("div");
  box.className = "lang-switch";
  box.id = "lang-switch";
  box.setAttribute("role", "group");
  label(box, "lang.switch", "aria-label");
  LANGUAGES.forEach((l, i) => {
    if (i > 0) {
      const bar = document.createElement("span");
      bar.setAttribute("aria-hidden", "true");
      bar.textContent = "|";
      box.append(bar);
    }
    const b = document.createElement("button");
    b.type = "button";
    b.className = "link";
    b.lang = l.code;
    b.dataset.lang = l.code;
    b.textContent = l.name;
    b.addEventListener("click", () => setLanguage(l.code));
    box.append(b);
  });
  paintSwitch(box);
  return box;
}

/**
 * Starts a page in its language: `<html lang>`, the static text, and the control in the header.
 */
export function startPage() {
  const header = document.querySelector("header.top");
  if (header && !header.querySelector(".lang-switch")) header.append(languageSwitch());
  apply();
}
