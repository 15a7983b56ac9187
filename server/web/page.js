// The frame every screen of the page shares: which screen shows (`body[data-screen]`), the short
// notice that comes and goes (`#toast`), and the banner over the page (`#banner`: reconnecting,
// the seat taken by another tab).

import { $, button, el } from "./dom.js";
import { t } from "./i18n.js";

/** The screens of the main page, each a `<section>` of `index.html`. */
const SCREENS = ["home", "join", "lobby", "table", "gone"];

let toastTimer = null;

/**
 * Shows a short notice for a few seconds.
 * @param {string} text its words
 * @param {"info"|"error"} [kind]
 */
export function notice(text, kind = "info") {
  const toast = $("toast");
  // An error is read at once (the toast is an alert); any other notice is said politely, once,
  // with the table's news (the toast then only shows it).
  if (kind === "error") toast.removeAttribute("aria-hidden");
  else {
    toast.setAttribute("aria-hidden", "true");
    say(text);
  }
  toast.textContent = text;
  toast.className = `toast show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { toast.className = "toast"; }, 4500);
}

/**
 * Shows one screen and hides the others. A new screen opens at its top (not where the last one
 * was scrolled to), and a passing notice of the last one ("Link copied") does not stay over it;
 * an error stays.
 * @param {string} screen one of the screens (`home`, `join`, `lobby`, `table`, `gone`)
 */
export function show(screen) {
  const changed = document.body.dataset.screen !== screen;
  for (const id of SCREENS) $(id).hidden = id !== screen;
  document.body.dataset.screen = screen;
  if (!changed) return;
  window.scrollTo(0, 0);
  // A screen reader (and the keyboard) starts at the new screen's heading.
  const heading = $(screen).querySelector("h1");
  if (heading) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
  const toast = $("toast");
  if (toast.classList.contains("info")) {
    clearTimeout(toastTimer);
    toast.className = "toast";
  }
}

/** How many lines the live region keeps (older ones go; a reader has said them already). */
const SAID_KEPT = 30;

/**
 * Says `text` to a screen reader through the page's polite live region (`#announcer`), once:
 * each sentence is a new line of it, so that several in a row are all said.
 * @param {string} text
 */
export function say(text) {
  const region = $("announcer");
  if (!region || !text) return;
  region.append(el("p", "", text));
  while (region.childElementCount > SAID_KEPT) region.firstElementChild.remove();
}

/** The screen showing now. */
export function screen() {
  return document.body.dataset.screen;
}

/** What the banner shows: a message's key, and its button's key and action; or null. */
let bannerShown = null;

/**
 * Shows the banner with this message (and a button), or hides it for `null`.
 * @param {string|null} key the message
 * @param {string} [action] the button's message
 * @param {() => void} [onAction] what the button does
 */
export function banner(key, action, onAction) {
  bannerShown = key === null ? null : { key, action, onAction };
  const box = $("banner");
  box.hidden = key === null;
  if (key === null) return;
  box.replaceChildren(document.createTextNode(t(key)));
  if (action) box.append(" ", button(t(action), "small", onAction));
}

/** Draws the banner again in the page's language. */
export function relabelBanner() {
  if (bannerShown) banner(bannerShown.key, bannerShown.action, bannerShown.onAction);
}

/**
 * The name typed in a form's name field, or null after saying that a name is needed (the field
 * then has the focus).
 * @param {HTMLInputElement} input
 * @returns {string|null}
 */
export function typedName(input) {
  const who = input.value.trim();
  if (who) return who;
  notice(t("form.nameFirst"), "error");
  input.focus();
  return null;
}
