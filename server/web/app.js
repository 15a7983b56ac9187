// The Dhumbal web client's start: the page's language, the wiring that lasts the page's life, and
// the route: the home page at `/` (home.js), a room at `/r/{code}` (session.js, which shows its
// join form, lobby, table and score dialog). The room's modules are imported only when a room is
// opened: the home page loads only what it needs. It speaks only the protocol of `docs/protocol.md`:
// HTTP to create and look up rooms, then JSON messages over one WebSocket.
//
// The modules, one concern each (no build step; each file says what it does at its top):
// - screens: home.js (create, join by code), join.js (a room's link; a room gone), lobby.js,
//   table.js (with table-state.js, table-input.js, table-paint.js, table-seats.js,
//   table-clock.js), score.js (the score dialog), rules.js (How to play), dock.js (stand-ins);
// - the room: session.js (its state and the server's messages), net.js (the WebSocket),
//   deals.js and fair.js (checking the deals), chat.js;
// - shared: dom.js (the one `el`), page.js (screens, notices, banner), errors.js (refusals in
//   words), storage.js, settings.js (the form, the server's presets and check), cards.js,
//   log.js (events in words), announce.js (the table's news for a screen reader), fly.js,
//   alert.js, i18n.js and messages-en.js, messages-ne.js (every word, one table a language).
//
// The rules are the server's: the view says what this seat may do now, the server's presets and
// its check of a settings form say what a table may be. The page only asks; `classify`
// (cards.js) alone judges, to enable Throw.

import { openHome, relabelHome } from "./home.js";
import { relabelRules, setupRules } from "./rules.js";
import { $ } from "./dom.js";
import { notice, relabelBanner } from "./page.js";
import { onLanguageChange, startPage, t } from "./i18n.js";
import "./install.js";

/** The room's modules (session.js, and score.js for its dialog's keys), once loaded. */
let room = null;
/** Their loading, once asked for. */
let loadingRoom = null;

/**
 * The room's modules: loaded only when a room is opened (the home page needs none of them; a
 * room's link asks for them at once, and the server preloads them on `/r/{code}`), and wired once.
 * @returns {Promise<typeof import("./session.js")>}
 */
function roomModules() {
  if (!loadingRoom) {
    loadingRoom = Promise.all([import("./session.js"), import("./score.js")]).then(([session, score]) => {
      score.setupScore();
      session.setupRoom();
      room = session;
      return session;
    });
    // A failed load (the network gone) is tried again at the next room opened.
    loadingRoom.catch(() => { loadingRoom = null; });
  }
  return loadingRoom;
}

/** Goes into a room (from its link, or from the home page). */
function enterRoom(code) {
  roomModules().then(
    (session) => session.enterRoom(code),
    () => notice(t("conn.unreachable"), "error"),
  );
}

/** Draws the page again in the language just chosen, keeping where it is and what it holds. */
function relabel() {
  document.title = room ? room.pageTitle() : t("title.home");
  relabelHome();
  relabelBanner();
  if (room) room.relabelRoom();
  relabelRules();
}

function setup() {
  startPage();
  onLanguageChange(relabel);
  setupRules();
  window.addEventListener("popstate", () => location.reload());
  const match = location.pathname.match(/^\/r\/([^/]+)\/?$/);
  if (match) enterRoom(decodeURIComponent(match[1]).toUpperCase());
  else {
    openHome(enterRoom);
    // Whoever starts filling a form is about to open a room: its modules start loading now.
    for (const id of ["home-form", "code-form"]) {
      $(id).addEventListener("focusin", () => roomModules().catch(() => {}), { once: true });
    }
  }
}

setup();
