// After a match: checking its deals against the revealed seed (fair.js) and downloading its hand
// history, for the score dialog's Verify the deals and Download hand history.

import { el } from "./dom.js";
import { failure, failureText } from "./errors.js";
import { canVerify, noWebCrypto, verifyHistory } from "./fair.js";
import { t } from "./i18n.js";
import { notice } from "./page.js";

/**
 * The finished match's hand history as text, downloaded once with the seat's token (or, for a
 * spectator or a token the server no longer knows, the revealed seed).
 * @param {object} session the room's state (session.js)
 * @returns {Promise<string>}
 */
async function historyText(session) {
  const result = session.matchResult;
  const n = result.match_number;
  if (session.histories.has(n)) return session.histories.get(n);
  const url = `/api/rooms/${encodeURIComponent(session.code)}/matches/${n}/history`;
  const credentials = [];
  if (session.room && session.room.your_seat !== null && session.stored.token) credentials.push(session.stored.token);
  if (result.seed) credentials.push(result.seed);
  let status = 401;
  for (const credential of credentials) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${credential}` } });
    status = res.status;
    if (res.ok) {
      const text = await res.text();
      session.histories.set(n, text);
      return text;
    }
    // A credential that does not fit is answered as a match not kept (404): try the next.
    if (res.status !== 401 && res.status !== 404) break;
  }
  throw status === 401 || status === 404 ? failure(`history.${status}`) : failure("history.status", { status });
}

/**
 * Verify the deals: checks every deal of the finished match, and says so step by step.
 * @param {object} session the room's state (session.js)
 * @param {(kind: string, text: () => string) => void} say shows a verdict (`checking`, `ok`,
 *   `bad`); `text` gives its words in the page's language
 */
export async function verifyDeals(session, say) {
  if (!session.matchResult) return;
  if (!canVerify()) {
    say("bad", noWebCrypto);
    return;
  }
  say("checking", () => t("verify.checking"));
  try {
    const history = JSON.parse(await historyText(session));
    const seen = session.fair.seen(history.match_number, session.room ? session.room.your_seat : null);
    const verdict = await verifyHistory(history, seen);
    say(verdict.ok ? "ok" : "bad", () => verdict.summary);
  } catch (e) {
    say("bad", () => (e instanceof SyntaxError ? t("verify.badJson") : failureText(e)));
  }
}

/**
 * Download hand history: the finished match's history as a file.
 * @param {object} session the room's state (session.js)
 */
export async function downloadHistory(session) {
  if (!session.matchResult) return;
  const n = session.matchResult.match_number;
  try {
    const text = await historyText(session);
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const a = el("a", "", undefined, { href: url, download: `dhumbal-${session.code}-${n}.json` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (e) {
    notice(failureText(e), "error");
  }
}
