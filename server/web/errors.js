// The server's refusals in plain words, in one place. Every refusal carries a stable code (HTTP:
// `{code, message}`; WebSocket: an `error` message), and the page says the message `error.CODE`
// of the tables in `messages-en.js` and `messages-ne.js`; that includes the settings' codes (`bad_players`, …), which the
// server's check of a settings form gives too.

import { hasMessage, language, t } from "./i18n.js";

/**
 * A refusal in the page's language. A code this page does not know yet is shown with the server's
 * own sentence, which is English, so in another language with a general one.
 * @param {{code: string, message?: string}|null} err the refusal
 * @param {object|null} [settings] the settings it judged, for the words that name one of them
 *   (the penalty a doubled penalty must beat)
 * @returns {string}
 */
export function errorText(err, settings = null) {
  if (err && hasMessage(`error.${err.code}`)) {
    return t(`error.${err.code}`, settings ? { penalty: settings.penalty } : {});
  }
  if (language() === "en" && err && err.message) return err.message;
  return t("error.unknown");
}

/**
 * An error whose words are drawn when shown (`say()`), so that it follows a switch of language.
 * @param {string} key
 * @param {object} [params]
 * @returns {Error & {say: () => string}}
 */
export function failure(key, params = {}) {
  const e = new Error(key);
  e.say = () => t(key, params);
  return e;
}

/**
 * What an error says: its own words (`say()`) where it has them, else its message.
 * @param {Error & {say?: () => string}} e
 * @returns {string}
 */
export function failureText(e) {
  return e.say ? e.say() : e.message;
}
