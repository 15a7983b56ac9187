// The Dhumbal web client's start: the page's language, the wiring that lasts the page's life, and
// the route: the home page at `/` (home.js), a room at `/r/{code}` (session.js, which shows its
// join form, lobby, table and score dialog). It speaks only the protocol of `docs/protocol.md`:
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
//   alert.js, i18n.js and messages.js (every word).
//
// The rules are the server's: the view says what this seat may do now, the server's presets and
// its check of a settings form say what a table may be. The page only asks; `classify`
// (cards.js) alone judges, to enable Throw.

import { openHome, relabelHome } from "./home.js";
import { enterRoom, pageTitle, relabelRoom, setupRoom } from "./session.js";
import { relabelRules, setupRules } from "./rules.js";
import { setupScore } from "./score.js";
import { relabelBanner } from "./page.js";
import { onLanguageChange, startPage } from "./i18n.js";
import "./install.js";

/** Draws the page again in the language just chosen, keeping where it is and what it holds. */
function relabel() {
  document.title = pageTitle();
  relabelHome();
  relabelBanner();
  relabelRoom();
  relabelRules();
}

function setup() {
  startPage();
  onLanguageChange(relabel);
  setupRules();
  setupScore();
  setupRoom();
  window.addEventListener("popstate", () => location.reload());
  const match = location.pathname.match(/^\/r\/([^/]+)\/?$/);
  if (match) enterRoom(decodeURIComponent(match[1]).toUpperCase());
  else openHome(enterRoom);
}

setup();
