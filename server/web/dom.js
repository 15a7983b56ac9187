// Building the page: elements whose text is always set as text (`textContent`), never parsed as
// HTML, so that names and chat lines from other people can never become markup.

/**
 * A new element with an optional class and text.
 * @param {string} tag
 * @param {string} [cls] its class name(s)
 * @param {string} [text] its text, set with `textContent`
 * @returns {HTMLElement}
 */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * A `<button type="button">` with its text and click handler.
 * @param {string} text
 * @param {string} [cls]
 * @param {(event: MouseEvent) => void} onClick
 * @returns {HTMLButtonElement}
 */
export function button(text, cls, onClick) {
  const b = /** @type {HTMLButtonElement} */ (el("button", cls, text));
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}
