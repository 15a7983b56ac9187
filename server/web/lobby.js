// The lobby: the room's code and invite link (with its QR code, Copy and Share), its seats (the
// host adds and removes bots, removes or mutes people, lets removed people back; the others sit
// or move), the room's ledger of its finished matches, the table's settings (the host's form,
// the others' summary), and Start.

import { $, button, codeSpan, el, seatName } from "./dom.js";
import { t, tNodes } from "./i18n.js";
import { ledgerBox } from "./score.js";
import { settingsForm, summary } from "./settings.js";
import { paintWatchers, wireWatchers } from "./watchers.js";

/**
 * The base of the invite links, as the server names it (`GET /api/invite-base`: its public URL,
 * or the host's address on the Wi-Fi for a page opened on `127.0.0.1`), or null: this page's own
 * origin, which friends reach already.
 */
let inviteBase = null;
/** The room whose invite the lobby shows, or null before the first paint. */
let inviteCode = null;
/** Puts Copy's own label back after it said "Copied", and clears the line under the link. */
let copiedTimer = 0;

/** Says what Copy did on the line under the invite link, for a few seconds. */
function copyStatus(text) {
  const status = $("invite-status");
  status.textContent = text;
  clearTimeout(copiedTimer);
  copiedTimer = setTimeout(() => {
    status.textContent = "";
    $("copy").textContent = t("lobby.copy");
  }, 4500);
}

/** The room's invite link: the server's base for invites, else this page's origin. */
function inviteUrl(code) {
  return `${inviteBase || location.origin}/r/${code}`;
}

/**
 * The invite field and its QR code (drawn by the server for the same link: the image's request
 * goes to the same host as the page's).
 */
function paintInvite(code) {
  inviteCode = code;
  const url = inviteUrl(code);
  $("invite").value = url;
  const qr = $("invite-qr");
  const src = `/r/${encodeURIComponent(code)}/qr.svg`;
  if (qr.getAttribute("src") !== src) qr.src = src;
  qr.alt = t("lobby.qrAlt", { url });
}

/** The bots' levels, in the order of the host's choice. */
const LEVELS = ["easy", "medium", "hard", "expert"];

/** How the lobby's watcher controls send (the latest `send` it was painted with). */
let watchersSend = null;

/** The host's settings form, while this page is the host. */
let form = null;
/** The room's settings as last put in the form (JSON), so that only a change resets it. */
let formHolds = null;
/**
 * The settings this form last sent (JSON): the room's coming back as them is the echo of this
 * form's own change, which must not undo a change made since.
 */
let sent = null;

/** The host's controls on a seat: a bot's level, add or remove a bot, remove or mute a person. */
function hostControls(controls, seat, room, send) {
  if (seat.kind === "empty" || seat.kind === "bot") {
    const pick = el("select");
    pick.setAttribute("aria-label", t("lobby.botDifficulty", { n: seat.seat + 1 }));
    for (const d of LEVELS) pick.append(el("option", "", t(`difficulty.${d}`), { value: d }));
    pick.value = seat.difficulty || room.settings.difficulty;
    const addBot = () => send({ type: "add_bot", seat: seat.seat, difficulty: pick.value });
    if (seat.kind === "bot") {
      pick.addEventListener("change", addBot);
      controls.append(pick, button(t("lobby.removeBot"), "small", () => send({ type: "clear_seat", seat: seat.seat })));
    } else {
      controls.append(pick, button(t("lobby.addBot"), "small", addBot));
    }
  } else if (seat.seat !== room.your_seat) {
    controls.append(button(t("lobby.remove"), "small", () => send({ type: "clear_seat", seat: seat.seat })));
    const mute = button(t(seat.muted ? "chat.unmute" : "chat.mute"), "small mute", () => send({ type: "mute", seat: seat.seat, muted: !seat.muted }));
    mute.setAttribute("aria-label", t(seat.muted ? "lobby.unmuteLabel" : "lobby.muteLabel", { name: seatName(seat) }));
    mute.setAttribute("aria-pressed", String(Boolean(seat.muted)));
    controls.append(mute);
  }
}

/** One seat of the list: its number, who sits there, and the controls this page has on it. */
function seatItem(seat, room, host, send) {
  const me = room.your_seat;
  const li = el("li", `lobby-seat ${seat.kind}`);
  li.dataset.seat = String(seat.seat);
  const who = el("span", "who");
  if (seat.kind === "empty") {
    who.append(el("span", "empty", t("lobby.empty")));
  } else {
    const dot = el("span", `conn ${seat.connected ? "on" : "off"}`);
    dot.title = t(seat.connected ? "lobby.connected" : "lobby.notConnected");
    who.append(dot, el("b", "", seatName(seat)));
    const bits = [];
    if (seat.kind === "bot") bits.push(t("seat.botLevel", { level: t(`difficulty.${seat.difficulty || room.settings.difficulty}`) }));
    else bits.push(t(seat.connected ? "lobby.player" : "lobby.playerAway"));
    if (room.host === seat.seat) bits.push(t("lobby.host"));
    if (seat.muted) bits.push(t("lobby.muted"));
    if (seat.seat === me) bits.push(t("lobby.you"));
    who.append(el("span", "note", ` ${bits.join(" \u00b7 ")}`));
  }
  li.append(el("span", "seat-no", String(seat.seat + 1)), who);
  const controls = el("span", "seat-controls");
  if (host) hostControls(controls, seat, room, send);
  if (seat.kind === "empty" && !host) {
    controls.append(button(t(me === null ? "lobby.sitHere" : "lobby.moveHere"), "small", () => send({ type: "take_seat", seat: seat.seat })));
  }
  li.append(controls);
  return li;
}

/**
 * The settings: the host's form (a change the server finds playable is sent at once), or the
 * others' summary.
 */
function paintSettings(box, room, host, offer, send) {
  if (host && offer) {
    const holds = JSON.stringify(room.settings);
    if (!form) {
      form = settingsForm(box, room.settings, offer, (s, refusal) => {
        if (refusal !== null) return;
        sent = JSON.stringify(s);
        send({ type: "set_settings", settings: s });
      });
    } else if (holds !== formHolds && holds !== sent) {
      form.set(room.settings);
    }
    formHolds = holds;
    return;
  }
  form = null;
  box.replaceChildren();
  const ul = el("ul", "summary");
  for (const item of summary(room.settings)) ul.append(el("li", "", item));
  box.append(ul);
}

/**
 * Paints the lobby.
 * @param {object} room the `room` message
 * @param {object} how
 * @param {boolean} how.host whether this page is the host
 * @param {import("./settings.js").Catalogue|null} how.offer the server's presets (for the form)
 * @param {(msg: object) => void} how.send sends a message to the server
 * @param {boolean} how.openSettings open at the settings, the first one focused (the host's
 *   Change settings after a match)
 */
export function paintLobby(room, { host, offer, send, openSettings }) {
  $("lobby-title").replaceChildren(...tNodes("lobby.title", { code: codeSpan(room.code, "lobby-code") }));
  paintInvite(room.code);
  $("lobby-seats").replaceChildren(...room.seats.map((seat) => seatItem(seat, room, host, send)));
  // The people the host removed: only the host may let them back.
  const removedBox = $("lobby-removed");
  removedBox.replaceChildren();
  (room.removed || []).forEach((name, i) => {
    const li = el("li", "lobby-seat removed");
    li.append(el("span", "who", t("lobby.removed", { name })));
    if (host) li.append(button(t("lobby.letBack"), "small", () => send({ type: "readmit", removed: i })));
    removedBox.append(li);
  });
  removedBox.hidden = removedBox.childElementCount === 0;
  // Who watches, whether watching is on, and the host's controls over it.
  const watchersBox = $("lobby-watchers");
  if (!watchersSend) wireWatchers(watchersBox, () => watchersSend);
  watchersSend = send;
  paintWatchers(watchersBox, room, host);
  // The room's ledger: its finished matches, seat by seat.
  const ledgerSlot = $("lobby-ledger");
  const ledger = ledgerBox(room);
  ledgerSlot.replaceChildren(...(ledger ? [ledger] : []));
  ledgerSlot.hidden = !ledger;
  const settingsBox = $("lobby-settings");
  paintSettings(settingsBox, room, host, offer, send);
  const empty = room.seats.filter((s) => s.kind === "empty").length;
  const start = $("start");
  start.hidden = !host;
  start.textContent = empty > 0 ? t("lobby.startWithBots", { count: empty }) : t("lobby.start");
  $("lobby-wait").hidden = host;
  $("lobby-watching").hidden = room.your_seat !== null;
  const first = openSettings && host ? settingsBox.querySelector("select, input") : null;
  if (first) {
    settingsBox.closest(".panel").scrollIntoView({ block: "start" });
    first.focus({ preventScroll: true });
  }
}

/** Draws the host's form again in the page's language. */
export function relabelLobby() {
  if (form) form.relabel();
  if (inviteCode) paintInvite(inviteCode);
}

/** A settings change was refused: the form shows the settings the table really has. */
export function settingsRefused(room) {
  if (!form || !room) return;
  form.set(room.settings);
  formHolds = JSON.stringify(room.settings);
}

/**
 * Wires the lobby's lasting buttons, once, at the page's start: Start, How to play, Copy (the
 * invite link to the clipboard, or selected where the browser does not allow that) and Share (the
 * phone's share sheet, shown only where the browser has one); and asks the server where invite
 * links point.
 * @param {() => void} onStart
 * @param {() => void} onRules
 */
export function setupLobby(onStart, onRules) {
  // A change of the settings just made goes to the server before Start does.
  $("start").addEventListener("click", async () => {
    if (form) await form.settle();
    onStart();
  });
  $("lobby-rules").addEventListener("click", onRules);
  const copy = async () => {
    const input = $("invite");
    const button = $("copy");
    try {
      await navigator.clipboard.writeText(input.value);
      button.textContent = t("lobby.copiedButton");
      copyStatus(t("lobby.copied"));
    } catch {
      input.select();
      copyStatus(t("lobby.copySelect"));
    }
  };
  $("copy").addEventListener("click", copy);
  // Web Share is only on some browsers (phones), and only on https or localhost pages.
  const share = $("share");
  share.hidden = typeof navigator.share !== "function";
  share.addEventListener("click", async () => {
    try {
      await navigator.share({ title: t("lobby.shareTitle"), text: t("lobby.shareText"), url: $("invite").value });
    } catch (e) {
      // Closing the share sheet is no failure; any other falls back to the clipboard.
      if (!(e instanceof DOMException && e.name === "AbortError")) await copy();
    }
  });
  fetch("/api/invite-base")
    .then((r) => (r.ok ? r.json() : null))
    .then((answer) => {
      inviteBase = (answer && typeof answer.base === "string" && answer.base) || null;
      if (inviteCode) paintInvite(inviteCode);
    })
    .catch(() => {});
}
