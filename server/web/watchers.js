// Who is watching the room: everyone sees whether watching is on and who watches; the host gets
// an "Allow watchers" switch, Remove beside each watcher, and Let back beside each removed one.
// The server decides; this only paints the room's `watching`, `watchers` and `removed_watchers`
// and sends the host's `set_watching`, `remove_watcher` and `readmit_watcher`.

import { el } from "./dom.js";
import { t } from "./i18n.js";

/**
 * Paints the watchers' part of a page into `box` (its contents replaced).
 * @param {HTMLElement} box
 * @param {object} room the `room` message
 * @param {boolean} host whether this page is the host
 */
export function paintWatchers(box, room, host) {
  const watching = room.watching !== false;
  const watchers = room.watchers || [];
  const removed = host ? room.removed_watchers || [] : [];
  const key = JSON.stringify([watching, watchers, removed, host, t("watchers.allow")]);
  if (box.dataset.shown === key) return;
  box.dataset.shown = key;
  box.replaceChildren();
  box.append(el("h2", "", t("watchers.heading", { count: watchers.length })));
  if (host) {
    const toggle = el("label", "watchers-allow");
    const box2 = el("input", "", undefined, { type: "checkbox", checked: watching });
    box2.dataset.watching = "toggle";
    toggle.append(box2, document.createTextNode(` ${t("watchers.allow")}`));
    box.append(toggle);
  }
  box.append(el("p", "note watchers-state", t(watching ? "watchers.on" : "watchers.off")));
  const list = el("ul", "lobby-seats watchers-list");
  list.setAttribute("aria-label", t("watchers.list"));
  for (const w of watchers) {
    const li = el("li", "lobby-seat watcher");
    li.dataset.watcherName = w.name;
    li.append(el("span", "who", w.name));
    if (host) {
      const remove = el("button", "small", t("watchers.remove"), { type: "button" });
      remove.dataset.removeWatcher = String(w.id);
      remove.setAttribute("aria-label", t("watchers.removeLabel", { name: w.name }));
      li.append(remove);
    }
    list.append(li);
  }
  list.hidden = watchers.length === 0;
  box.append(list);
  if (removed.length > 0) {
    const gone = el("ul", "lobby-seats watchers-removed");
    gone.setAttribute("aria-label", t("watchers.removedList"));
    removed.forEach((name, i) => {
      const li = el("li", "lobby-seat removed");
      li.append(el("span", "who", t("watchers.removed", { name })));
      const back = el("button", "small", t("lobby.letBack"), { type: "button" });
      back.dataset.readmitWatcher = String(i);
      back.setAttribute("aria-label", `${t("lobby.letBack")}: ${name}`);
      li.append(back);
      gone.append(li);
    });
    box.append(gone);
  }
}

/**
 * Wires the host's controls in `box` (once): they send through `send()`.
 * @param {HTMLElement} box
 * @param {() => ((msg: object) => void)} sender gives the function that sends a message now
 */
export function wireWatchers(box, sender) {
  box.addEventListener("click", (event) => {
    const remove = event.target.closest("button[data-remove-watcher]");
    if (remove) sender()({ type: "remove_watcher", watcher: Number(remove.dataset.removeWatcher) });
    const back = event.target.closest("button[data-readmit-watcher]");
    if (back) sender()({ type: "readmit_watcher", removed: Number(back.dataset.readmitWatcher) });
  });
  box.addEventListener("change", (event) => {
    const toggle = event.target.closest("input[data-watching]");
    if (toggle) sender()({ type: "set_watching", allowed: toggle.checked });
  });
}
