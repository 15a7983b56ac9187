// Building the page, shared by every screen and both pages: elements whose text is always set as
// text (`textContent`), never parsed as HTML, so that names and chat lines from other people can
// never become markup; the names seats go by; numbers as the score rows print them.

import { t } from "./i18n.js";

/**
 * The element with this id, or null.
 * @param {string} id
 * @returns {HTMLElement|null}
 */
export const $ = (id) => document.getElementById(id);

/**
 * A new element with an optional class, text and properties. The one way this client makes an
 * element.
 * @param {string} tag
 * @param {string} [cls] its class name(s)
 * @param {string} [text] its text, set with `textContent`
 * @param {object} [props] properties to set on it (`id`, `type`, `hidden`, `tabIndex`, …)
 * @returns {HTMLElement}
 */
export function el(tag, cls, text, props) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  if (props) Object.assign(e, props);
  return e;
}

/**
 * Sets an element's text only when it changes (a live region then speaks only news).
 * @param {Node} node
 * @param {string} text
 */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/**
 * A signed number the way the score rows print it: `+38`, `−12` (a minus sign), `0`.
 * @param {number} n
 * @returns {string}
 */
export function signed(n) {
  return n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0";
}

/**
 * A seat's Total as the table writes it: points as they are, a settlement's signed.
 * @param {number} total
 * @param {{scoring: string}} settings the table's
 * @returns {string}
 */
export function totalText(total, settings) {
  return settings.scoring === "cumulative" ? String(total) : signed(total);
}

/**
 * A `<button type="button">` with its text and click handler.
 * @param {string} text
 * @param {string} [cls]
 * @param {(event: MouseEvent) => void} onClick
 * @returns {HTMLButtonElement}
 */
export function button(text, cls, onClick) {
  const b = /** @type {HTMLButtonElement} */ (el("button", cls, text, { type: "button" }));
  if (onClick) b.addEventListener("click", onClick);
  return b;
}

/**
 * A room's code, as its own element (`translate="no"`: a code is not a word of any language).
 * @param {string} code
 * @param {string} [id]
 * @returns {HTMLElement}
 */
export function codeSpan(code, id) {
  const e = el("span", "code", code);
  if (id) e.id = id;
  e.translate = false;
  return e;
}

/**
 * A key of the keyboard, as `<kbd>`.
 * @param {string} key
 * @returns {HTMLElement}
 */
export function kbd(key) {
  return el("kbd", "", key);
}

/**
 * The name a seat goes by on this page: a person's own; a bot's in the page's language (the
 * server calls the bot of seat N "Bot N", a name no person may take).
 * @param {{seat: number, kind: string, name?: string|null}} seat a room's seat
 * @returns {string}
 */
export function seatName(seat) {
  if (seat.kind === "bot") return t("seat.bot", { n: seat.seat + 1 });
  return seat.name || t("seat.n", { n: seat.seat + 1 });
}

/**
 * A name that may be long, on one line: cut with an ellipsis where it does not fit (CSS
 * `.name-cut`), never broken inside a word. The whole name is its title (on hover), and it is a
 * tab stop that shows the whole name in a tip (`#name-tip`) while focused.
 * @param {string} name
 * @returns {HTMLElement}
 */
export function nameCut(name) {
  const e = el("span", "name-cut", name);
  e.title = name;
  e.tabIndex = 0;
  return e;
}

/** Hides the tip of a focused name (when what held the name is drawn again). */
export function hideNameTip() {
  const tip = document.getElementById("name-tip");
  if (tip) tip.hidden = true;
}

function showNameTip(target) {
  let tip = document.getElementById("name-tip");
  if (!tip) {
    tip = el("span", "name-tip");
    tip.id = "name-tip";
    // The name itself is read out already; the tip is only for the eyes.
    tip.setAttribute("aria-hidden", "true");
  }
  // In the focused name's dialog (a modal dialog is drawn above the page), else on the page.
  const holder = target.closest("dialog") || document.body;
  if (tip.parentElement !== holder) holder.append(tip);
  tip.textContent = target.title;
  tip.hidden = false;
  const box = target.getBoundingClientRect();
  const left = Math.max(4, Math.min(box.left, window.innerWidth - tip.offsetWidth - 4));
  tip.style.left = `${left}px`;
  tip.style.top = `${box.bottom + 4}px`;
}

document.addEventListener("focusin", (event) => {
  if (event.target instanceof Element && event.target.classList.contains("name-cut")) showNameTip(event.target);
});
document.addEventListener("focusout", (event) => {
  if (event.target instanceof Element && event.target.classList.contains("name-cut")) hideNameTip();
});
