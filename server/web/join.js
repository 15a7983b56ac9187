// Joining a room from its link (who sits there, its settings in a line, Sit down or Watch; a full
// table has one way in, to watch), and the page of a room that is gone (it does not exist, it
// expired, or the host removed this person).

import { $, codeSpan, el } from "./dom.js";
import { errorText } from "./errors.js";
import { t, tNodes } from "./i18n.js";
import { show, typedName } from "./page.js";
import { summary } from "./settings.js";

/** What the join form or the gone page shows: `{ code, room }` or `{ code, why }`. */
let shown = null;

function paintJoinInfo() {
  const { code, room } = shown;
  $("join-title").replaceChildren(...tNodes("join.title", { code: codeSpan(code, "join-code") }));
  const info = $("join-info");
  info.replaceChildren();
  if (!room) return;
  const people = room.seats.filter((s) => s.kind === "human").map((s) => s.name);
  info.append(el("p", "", people.length ? t("join.atTable", { names: people.join(", ") }) : t("join.nobody")));
  if (room.settings) info.append(el("p", "note", summary(room.settings).join(" \u00b7 ")));
  if (room.started) info.append(el("p", "note", t("join.started")));
  if (room.watching === false) info.append(el("p", "note", t("watchers.off")));
}

function paintGone() {
  const { code, why } = shown;
  const titles = { removed: "gone.removedTitle", watching_off: "gone.watchingTitle", watchers_full: "gone.watchingTitle" };
  const title = titles[why.code] || "gone.title";
  $("gone-title").replaceChildren(...tNodes(title, { code: codeSpan(code, "gone-code") }));
  $("gone-why").textContent = errorText(why);
}

/**
 * The join form of a room.
 * @param {string} code the room's code
 * @param {object|null} room its summary from the server (`GET /api/rooms/{code}`), or null
 * @param {string} name the name to offer
 * @param {(name: string, spectator: boolean) => void} onJoin joins as `name`, to sit or watch
 */
export function joinForm(code, room, name, onJoin) {
  show("join");
  shown = { code, room };
  paintJoinInfo();
  const input = $("join-name");
  input.value = name;
  const full = Boolean(room && room.free_seats === 0);
  $("join-sit").hidden = full;
  $("join-full").hidden = !full;
  // A full table has one way in, to watch ("The table is full: watch"), not two; none to watch
  // while the host has turned watching off.
  const watching = !room || room.watching !== false;
  $("join-full").hidden = !full || !watching;
  $("join-watch").hidden = full || !watching;
  const go = (spectator) => {
    const who = typedName(input);
    if (who) onJoin(who, spectator);
  };
  $("join-form").onsubmit = (event) => {
    event.preventDefault();
    go(full);
  };
  $("join-watch").onclick = () => go(true);
}

/**
 * The room is gone for this page.
 * @param {string} code the room's code
 * @param {{code: string, message?: string}} [why] the error that says so
 */
export function gone(code, why) {
  show("gone");
  shown = { code, why: why || { code: "unknown_room" } };
  paintGone();
}

/** Draws the join form's words or the gone page again in the page's language. */
export function relabelJoin() {
  const screen = document.body.dataset.screen;
  if (screen === "join" && shown) paintJoinInfo();
  if (screen === "gone" && shown) paintGone();
}
