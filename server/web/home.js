// The home page: join a room by its code, or create one (your name, then the table's settings,
// folded, from the server's presets), landing in its lobby.

import { $ } from "./dom.js";
import { errorText } from "./errors.js";
import { t } from "./i18n.js";
import { notice, screen, show, typedName } from "./page.js";
import { openRules } from "./rules.js";
import { loadCatalogue, settingsForm } from "./settings.js";
import { lastName, rememberName, storeRoom } from "./storage.js";

/** The settings form, once the server's presets came. */
let form = null;

/**
 * Shows the home page.
 * @param {(code: string) => void} enterRoom goes into a room (just created, or by its code)
 */
export async function openHome(enterRoom) {
  let offer = null;
  try {
    offer = await loadCatalogue();
  } catch {
    notice(t("conn.unreachable"), "error");
  }
  show("home");
  document.title = t("title.home");
  const name = $("home-name");
  name.value = lastName();
  const creates = [$("create"), $("create-bottom")];
  // Create room is off exactly while the server says the settings are not playable.
  const enable = (on) => { for (const b of creates) b.disabled = !on; };
  if (offer) form = settingsForm($("home-settings"), offer.presets.standard, offer, (_, refusal) => enable(refusal === null));
  $("home-rules").addEventListener("click", () => {
    if (form) openRules(form.get());
  });
  $("home-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const who = typedName(name);
    if (!who) return;
    enable(false);
    try {
      // What the server makes of the last change first: settings it refuses are not sent.
      if (form) await form.settle();
      if (form && !form.playable()) return;
      // Without the server's presets there is no form: the server's standard table.
      const res = await fetch("/api/rooms", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ settings: form ? form.get() : undefined }),
      });
      const body = await res.json();
      if (!res.ok) {
        notice(errorText(body, form && form.get()), "error");
        return;
      }
      rememberName(who);
      storeRoom(body.code, { name: who, host_secret: body.host_secret, token: null });
      history.pushState(null, "", `/r/${body.code}`);
      enterRoom(body.code);
    } catch {
      notice(t("conn.unreachable"), "error");
    } finally {
      enable(!form || form.playable());
    }
  });
  $("code-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = $("code-input").value.trim().replace(/^.*\/r\//, "").toUpperCase();
    if (code) {
      history.pushState(null, "", `/r/${encodeURIComponent(code)}`);
      enterRoom(code);
    }
  });
}

/** Draws the settings form again in the page's language, while the home page shows. */
export function relabelHome() {
  if (form && screen() === "home") form.relabel();
}
