// The offline page (offline.html), which the service worker shows for a page it could not fetch:
// it says that the server is out of reach, tries again every few seconds (and at once when the
// browser says it is online again, or on Try again), and opens the page that was asked for as
// soon as the server answers.

import { onLanguageChange, startPage, t } from "./i18n.js";

/** How long between two tries, in milliseconds. */
const RETRY_EVERY = 5000;

let timer = 0;
let trying = false;
let lastKey = "offline.waiting";

function say(key) {
  lastKey = key;
  document.getElementById("offline-status").textContent = t(key, { seconds: RETRY_EVERY / 1000 });
}

/** Whether the server answers now. */
async function reachable() {
  try {
    const answer = await fetch("/healthz", { cache: "no-store" });
    return answer.ok;
  } catch {
    return false;
  }
}

/** Tries the server once: opens the page asked for if it answers, else waits for the next try. */
async function retry() {
  if (trying) return;
  trying = true;
  clearTimeout(timer);
  say("offline.trying");
  if (await reachable()) {
    // The offline page itself, opened directly, opens the home page instead.
    if (location.pathname === "/offline") location.replace("/");
    else location.reload();
    return;
  }
  trying = false;
  say("offline.waiting");
  timer = setTimeout(retry, RETRY_EVERY);
}

startPage();
onLanguageChange(() => say(lastKey));
document.title = t("app.name");
document.getElementById("offline-retry").addEventListener("click", retry);
window.addEventListener("online", retry);
say("offline.waiting");
timer = setTimeout(retry, RETRY_EVERY);
