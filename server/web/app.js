// The Dhumbal web client: create a room, join from its link, the lobby, the table, the score
// dialog, How to play. It speaks only the protocol of `docs/protocol.md`: HTTP to create and look
// up rooms, then JSON messages over one WebSocket.

import { CLOSE_REMOVED, Connection, PROTOCOL } from "./net.js";
import { Memory, canVerify, noWebCrypto, verifyHistory } from "./fair.js";
import { PRESETS, copySettings, settingsForm, summary, validate } from "./settings.js";
import { renderRules } from "./rules.js";
import { renderScore } from "./score.js";
import { createChat } from "./chat.js";
import { createTable, noticeText } from "./table.js";
import { cardLabel } from "./cards.js";
import { el, button, codeSpan, seatName } from "./dom.js";
import { hasMessage, language, onLanguageChange, startPage, t, tNodes } from "./i18n.js";

const $ = (id) => document.getElementById(id);

// ----- Plain words for the server's error codes -----

/** The settings codes (`SettingsError::code`), said as the settings form says them. */
const SETTINGS_ERRORS = {
  bad_players: "invalid.players",
  bad_cards: "invalid.cards",
  bad_rounds: "invalid.rounds",
  until_one_needs_elimination: "invalid.untilOneRemains",
  bad_call_limit: "invalid.callLimit",
  bad_penalty: "invalid.penalty",
  bad_double_penalty_margin: "invalid.doubleMargin",
  jokers_in_runs_needs_runs_and_jokers: "invalid.jokersInRuns",
  pickup_needs_throw_first: "invalid.pickup",
  elimination_needs_cumulative: "invalid.elimination",
  bad_elimination: "invalid.eliminationAt",
  score_reset_needs_cumulative: "invalid.scoreReset",
};

/**
 * A server error in plain words: the message `error.CODE` of the tables in `messages.js`. A code
 * this page does not know yet is shown with the server's own sentence, which is English, so in
 * another language with a general one.
 */
function errorText(err) {
  if (err && hasMessage(`error.${err.code}`)) return t(`error.${err.code}`);
  if (err && SETTINGS_ERRORS[err.code]) return t(SETTINGS_ERRORS[err.code]);
  if (language() === "en" && err && err.message) return err.message;
  return t("error.unknown");
}

/**
 * An error whose words are drawn when shown (`say()`), so that it follows a switch of language.
 * @param {string} key
 * @param {object} [params]
 */
function failure(key, params = {}) {
  const e = new Error(key);
  e.say = () => t(key, params);
  return e;
}

// ----- Small page helpers -----

let toastTimer = null;
function notice(text, kind = "info") {
  const toast = $("toast");
  toast.textContent = text;
  toast.className = `toast show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { toast.className = "toast"; }, 4500);
}

/** What the banner shows: a message's key, and its button's key and action; or null. */
let bannerShown = null;

/** Shows the banner with this message (and a button), or hides it for `null`. */
function banner(key, action, onAction) {
  bannerShown = key === null ? null : { key, action, onAction };
  const box = $("banner");
  box.hidden = key === null;
  if (key === null) return;
  box.replaceChildren(document.createTextNode(t(key)));
  if (action) {
    const b = el("button", "small", t(action));
    b.type = "button";
    b.addEventListener("click", onAction);
    box.append(" ", b);
  }
}

function show(section) {
  const changed = document.body.dataset.screen !== section;
  for (const id of ["home", "join", "lobby", "table", "gone"]) $(id).hidden = id !== section;
  document.body.dataset.screen = section;
  if (changed) {
    // A new screen opens at its top (not where the last one was scrolled to), and a passing
    // notice of the last one ("Link copied") does not stay over it; an error stays.
    window.scrollTo(0, 0);
    const toast = $("toast");
    if (toast.classList.contains("info")) {
      clearTimeout(toastTimer);
      toast.className = "toast";
    }
  }
}

const storeKey = (code) => `dhumbal.room.${code}`;
function loadStored(code) {
  try {
    return JSON.parse(localStorage.getItem(storeKey(code))) || {};
  } catch {
    return {};
  }
}
function saveStored(code, data) {
  try {
    localStorage.setItem(storeKey(code), JSON.stringify(data));
  } catch {
    // Private browsing may refuse storage; the seat then lasts as long as the page.
  }
}
function lastName() {
  try {
    return localStorage.getItem("dhumbal.name") || "";
  } catch {
    return "";
  }
}
function rememberName(name) {
  try {
    localStorage.setItem("dhumbal.name", name);
  } catch {
    // As above.
  }
}

/** The settings How to play was last opened with (drawn again at a switch of language). */
let rulesSettings = null;

/** Opens How to play at its top: focus on its title, not on Close at the bottom. */
function openRules(settings) {
  rulesSettings = settings;
  renderRules($("rules-box"), settings);
  const dialog = $("rules-dialog");
  if (!dialog.open) dialog.showModal();
  const title = $("rules-title");
  title.tabIndex = -1;
  title.focus({ preventScroll: true });
  dialog.scrollTop = 0;
  $("rules-box").scrollTop = 0;
}

// ----- The state of this page -----

const app = {
  code: null,
  stored: {},
  conn: null,
  welcome: null,
  room: null,
  view: null,
  /**
   * The round's log and the match's finished results. A `state` leaves them out: they come in
   * `history` on arrival, and this page keeps them up to date from the events of each `state`.
   */
  history: { log: [], results: [], standIn: [] },
  /**
   * The table's notices this round (`notice` messages), each with the length of the log when it
   * came (`at`) and its round, so that the log shows it in its place.
   */
  notes: [],
  /** The turn's clock of the last `state` (`{seat, left_ms, total_ms}`) and when it came. */
  clock: null,
  /**
   * While a stand-in plays this page's seat: whether its turn ran out (`timedOut`) and whether
   * this page said it is back (`back`), for the banner's words.
   */
  standIn: { timedOut: false, back: false },
  /** The last `while_away` summary, until it is dismissed. */
  whileAway: null,
  matchResult: null,
  table: null,
  lobbyForm: null,
  /** Whether the current socket's hello was answered with a welcome. */
  joined: false,
  /** Whether this page asked to watch rather than sit. */
  spectator: false,
  /** What this page remembers of the room's deals, to check them after the match (fair.js). */
  fair: null,
  /** The number of the match whose deals are coming in (for remembering them). */
  dealMatch: null,
  /** Each finished match's hand history as downloaded (text), by match number. */
  histories: new Map(),
  /** The latest verdict of "Verify the deals": `{ match, kind, text }`, `text()` its words. */
  verdict: null,
  /** The table's chat and reactions (chat.js), in the lobby and at the table. */
  chat: null,
  /** The home page's settings form, while it shows. */
  homeForm: null,
  /** What the join form says about the room (its summary from the server), or null. */
  joinRoom: null,
  /** Why the room is gone for this page (an error: `{ code }`). */
  goneWhy: null,
  /** Whether the lobby, when it comes, opens at its settings (the host's Change settings). */
  openSettings: false,
};

function send(message) {
  if (!app.conn || app.conn.send(message) === null) {
    notice(t("conn.down"), "error");
  }
}

// ----- Home: the settings page and Create room -----

function home() {
  show("home");
  document.title = pageTitle();
  const name = $("home-name");
  name.value = lastName();
  let settings = copySettings(PRESETS.standard);
  const creates = [$("create"), $("create-bottom")];
  const enable = (on) => { for (const b of creates) b.disabled = !on; };
  const form = settingsForm($("home-settings"), settings, (s) => {
    settings = s;
    enable(validate(s) === null);
  });
  app.homeForm = form;
  $("home-rules").addEventListener("click", () => openRules(form.get()));
  $("home-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const who = name.value.trim();
    if (!who) {
      notice(t("form.nameFirst"), "error");
      name.focus();
      return;
    }
    enable(false);
    try {
      const res = await fetch("/api/rooms", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ settings }),
      });
      const body = await res.json();
      if (!res.ok) {
        notice(errorText(body), "error");
        return;
      }
      rememberName(who);
      saveStored(body.code, { name: who, host_secret: body.host_secret, token: null });
      history.pushState(null, "", `/r/${body.code}`);
      enterRoom(body.code);
    } catch {
      notice(t("conn.unreachable"), "error");
    } finally {
      enable(validate(settings) === null);
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

// ----- Joining from a room link -----

async function enterRoom(code) {
  app.code = code;
  app.stored = loadStored(code);
  app.fair = new Memory(code);
  document.title = pageTitle();
  if (app.stored.token || app.stored.host_secret) {
    connect(false);
    return;
  }
  let summaryBody = null;
  try {
    const res = await fetch(`/api/rooms/${encodeURIComponent(code)}`);
    if (res.status === 404) {
      gone();
      return;
    }
    summaryBody = await res.json();
  } catch {
    notice(t("conn.unreachable"), "error");
  }
  joinForm(summaryBody);
}

/** The page's title: the product's name, and the room's code in a room. */
function pageTitle() {
  return app.code ? t("title.room", { code: app.code }) : t("title.home");
}

/**
 * The room is gone for this page: it does not exist, expired, or the host removed this person.
 * @param {{code: string, message?: string}} [why] the error that says so
 */
function gone(why) {
  show("gone");
  app.goneWhy = why || { code: "unknown_room" };
  paintGone();
}

function paintGone() {
  const title = app.goneWhy && app.goneWhy.code === "removed" ? "gone.removedTitle" : "gone.title";
  $("gone-title").replaceChildren(...tNodes(title, { code: codeSpan(app.code, "gone-code") }));
  $("gone-why").textContent = errorText(app.goneWhy);
  paintDock();
}

/** The join form's title and what it says about the room. */
function paintJoinInfo() {
  const room = app.joinRoom;
  $("join-title").replaceChildren(...tNodes("join.title", { code: codeSpan(app.code, "join-code") }));
  const info = $("join-info");
  info.replaceChildren();
  if (room) {
    const people = room.seats.filter((s) => s.kind === "human").map((s) => s.name);
    info.append(el("p", "", people.length ? t("join.atTable", { names: people.join(", ") }) : t("join.nobody")));
    info.append(el("p", "note", summary(room.settings).join(" \u00b7 ")));
    if (room.started) info.append(el("p", "note", t("join.started")));
  }
}

function joinForm(room) {
  show("join");
  app.joinRoom = room;
  paintJoinInfo();
  const name = $("join-name");
  name.value = app.stored.name || lastName();
  const full = room && room.free_seats === 0;
  $("join-sit").hidden = Boolean(full);
  $("join-full").hidden = !full;
  // A full table has one way in, to watch ("The table is full: watch"), not two.
  $("join-watch").hidden = Boolean(full);
  const go = (spectator) => {
    const who = name.value.trim();
    if (!who) {
      notice(t("form.nameFirst"), "error");
      name.focus();
      return;
    }
    rememberName(who);
    app.stored = { ...app.stored, name: who, token: null };
    saveStored(app.code, app.stored);
    connect(spectator);
  };
  $("join-form").onsubmit = (event) => {
    event.preventDefault();
    go(Boolean(full));
  };
  $("join-watch").onclick = () => go(true);
}

function connect(spectator) {
  if (app.conn) app.conn.close();
  app.spectator = spectator;
  app.conn = new Connection({
    hello: () => {
      app.joined = false;
      const hello = {
        type: "hello",
        protocol: PROTOCOL,
        room: app.code,
        name: app.stored.name || lastName() || t("seat.defaultName"),
        token: app.stored.token || null,
        // Randomness of this page's own in every deal while it holds a seat (docs/fairness.md).
        client_seed: app.fair.freshSeed(),
      };
      if (app.spectator && !app.stored.token) hello.spectator = true;
      if (app.stored.host_secret) hello.host_secret = app.stored.host_secret;
      return hello;
    },
    message: onMessage,
    status: (away) => banner(away ? "conn.reconnecting" : null),
    replaced: () => banner("conn.replaced", "conn.playHere", () => {
      banner("conn.reconnecting");
      app.conn.open();
    }),
    ended: (code) => {
      banner(null);
      gone({ code: code === CLOSE_REMOVED ? "removed" : "room_expired" });
    },
  });
  app.conn.open();
}

// ----- Messages from the server -----

function onMessage(msg) {
  switch (msg.type) {
    case "welcome":
      app.welcome = msg;
      app.joined = true;
      banner(null);
      app.stored = { ...app.stored, token: msg.token };
      if (msg.token) saveStored(app.code, app.stored);
      app.chat.welcome(msg.chat);
      break;
    case "room":
      app.room = msg;
      if (msg.fairness && msg.fairness.commitment) {
        const fresh = app.fair.sawCommitment(msg.fairness.match_number, msg.fairness.commitment);
        // A seed chosen after the server's commitment: the server cannot have picked its seed
        // to suit ours (docs/fairness.md).
        if (fresh && msg.your_seat !== null && msg.your_seat !== undefined) {
          send({ type: "client_seed", client_seed: app.fair.freshSeed() });
        }
      }
      if (app.welcome) app.welcome.seat = msg.your_seat;
      paint();
      break;
    case "history":
      app.history = { log: msg.log, results: msg.results, standIn: (msg.stand_in || []).slice() };
      // Notices heard before a reconnection stay only if they were of this same round.
      app.notes = app.notes.filter((n) => msg.log.length > 0 && n.round === msg.log[0].round && n.at <= msg.log.length);
      break;
    case "state":
      // One change: the events that made it (kept in the history), then the view after them.
      // Events a stand-in played are marked by their place in the log, to name it in the log.
      for (const event of msg.events || []) {
        followEvent(event);
        if (msg.stand_in !== null && msg.stand_in !== undefined && event.type !== "dealt") {
          app.history.standIn.push(app.history.log.length - 1);
        }
      }
      app.clock = msg.clock ? { ...msg.clock, at: performance.now() } : null;
      app.view = { ...msg.view, log: app.history.log.slice(), results: app.history.results.slice() };
      addTableExtras(app.view);
      rememberDealtHand(app.view);
      paint();
      break;
    case "notice":
      onNotice(msg);
      break;
    case "while_away":
      app.whileAway = msg.turns > 0 || (msg.events || []).length > 0 ? msg : null;
      paintDock();
      break;
    case "match_result":
      app.matchResult = msg;
      if (app.verdict && app.verdict.match !== msg.match_number) app.verdict = null;
      paint();
      break;
    case "chat":
      app.chat.line(msg.line);
      break;
    case "reaction":
      app.chat.reaction(msg);
      break;
    case "error":
      onError(msg);
      break;
    case "bye":
      // The socket closes next; the connection comes back by itself with the seat token.
      // (Removed by the host: the page that follows says so, and why.)
      if (msg.reason === "removed") break;
      notice(msg.reason === "shutting_down" || msg.reason === "restarting" ? t("conn.restarting") : errorText({ code: msg.reason, message: msg.message }), "error");
      break;
    default:
      break;
  }
}

/**
 * Adds an event to the round's log; a deal starts a new log, and round 1's a new match; a show
 * adds its result to the match's results.
 */
function followEvent(event) {
  if (event.type === "dealt") {
    app.history.log = [];
    app.history.standIn = [];
    app.notes = [];
    if (event.round === 1) {
      app.history.results = [];
      app.matchResult = null;
    }
    app.dealMatch = dealtMatchNumber(event);
    app.fair.sawDeal(app.dealMatch, event);
  }
  if (event.type === "round_ended") app.history.results.push(event.result);
  app.history.log.push(event);
}

/**
 * The number of the match a `dealt` event belongs to: the room shows the commitment of the
 * match being played, and in the lobby and after a match the next one's, which is the one a
 * first deal begins.
 */
function dealtMatchNumber(event) {
  const room = app.room;
  const shown = room && room.fairness ? room.fairness.match_number : 0;
  return shown || app.dealMatch || event.round || 1;
}

/** Remembers this seat's hand as dealt: the first view of a round whose log is just the deal. */
function rememberDealtHand(view) {
  if (view.seat === null || view.seat === undefined || app.dealMatch === null) return;
  const log = view.log;
  if (log.length === 1 && log[0].type === "dealt" && log[0].round === view.round) {
    app.fair.sawHand(app.dealMatch, view.round, view.seat, view.hand);
  }
}

// ----- The turn timer, stand-ins, notices, and what a stand-in did -----

/** What the table draws besides the view: the stand-in's log places, the notices, the clock. */
function addTableExtras(view) {
  view.standIn = app.history.standIn.slice();
  view.notes = app.notes.slice();
  view.clock = app.clock;
}

/** A `notice`: a toast now, and a line in the table's log in its place. */
function onNotice(msg) {
  const me = app.room ? app.room.your_seat : null;
  const log = app.history.log;
  app.notes.push({ at: log.length, round: log.length > 0 ? log[0].round : null, notice: msg });
  if (me !== null && me !== undefined && msg.seat === me) {
    if (msg.kind === "timed_out" || msg.kind === "handed_to_bot") {
      app.standIn.timedOut = msg.kind === "timed_out";
      app.standIn.back = false;
      app.whileAway = null;
    }
    if (msg.kind === "back") app.standIn.back = true;
  }
  const text = noticeText(msg, me);
  if (text) notice(text);
  if (app.view) addTableExtras(app.view);
  paint();
}

/**
 * The dock at the bottom of the table's screen: while a stand-in plays this page's seat, a banner
 * saying why (with I'm back when the seat is marked away); once the seat is back, what the
 * stand-in did until it is dismissed. It floats over the page (the page gets room at its
 * bottom), so nothing on the table moves.
 */
function paintDock() {
  let dock = $("dock");
  if (!dock) {
    dock = el("div", "dock");
    dock.id = "dock";
    dock.hidden = true;
    document.body.append(dock);
    if (window.ResizeObserver) new ResizeObserver(fitDock).observe(dock);
  }
  const room = app.room;
  const me = room ? room.your_seat : null;
  const seat = room && me !== null && me !== undefined ? room.seats[me] : null;
  const covered = Boolean(seat && seat.kind === "human" && seat.stand_in);
  if (app.standIn.covered && !covered) {
    app.standIn.timedOut = false;
    app.standIn.back = false;
  }
  app.standIn.covered = covered;
  if (!room || room.stage === "lobby") app.whileAway = null;
  const atTable = document.body.dataset.screen === "table";

  let key = null;
  if (covered && atTable && room.stage === "playing") {
    if (app.standIn.back) key = "standIn.backSoon";
    else if (seat.away) key = "standIn.away";
    else if (app.standIn.timedOut) key = "standIn.timedOut";
    else key = "prompt.standIn";
  }
  let bar = $("stand-in-banner");
  if (key && !bar) {
    bar = el("div", "stand-in-banner");
    bar.id = "stand-in-banner";
    bar.setAttribute("role", "status");
    const icon = el("span", "stand-in-icon", "\u{1F916}");
    icon.setAttribute("aria-hidden", "true");
    const back = button("", "primary", () => {
      app.standIn.back = true;
      send({ type: "back" });
      paintDock();
    });
    back.id = "im-back";
    bar.append(icon, el("span", "stand-in-text"), back);
    dock.prepend(bar);
  }
  if (bar) {
    bar.hidden = key === null;
    if (key) {
      bar.dataset.kind = key.split(".")[1];
      setText(bar.querySelector(".stand-in-text"), t(key));
      const back = bar.querySelector("#im-back");
      setText(back, t("standIn.back"));
      back.hidden = key !== "standIn.away";
    }
  }

  const summary = app.whileAway && atTable && !covered ? whileAwayText(app.whileAway) : null;
  let box = $("while-away");
  if (summary && !box) {
    box = el("section", "while-away");
    box.id = "while-away";
    box.setAttribute("role", "status");
    box.setAttribute("aria-labelledby", "while-away-title");
    const title = el("h2", "");
    title.id = "while-away-title";
    const ok = button("", "", () => {
      app.whileAway = null;
      paintDock();
    });
    ok.id = "while-away-ok";
    box.append(title, el("p", "while-away-text"), ok);
    dock.append(box);
  }
  if (box) {
    box.hidden = summary === null;
    if (summary) {
      setText(box.querySelector("h2"), t("away.title"));
      setText(box.querySelector(".while-away-text"), summary);
      setText(box.querySelector("#while-away-ok"), t("away.dismiss"));
    }
  }
  const shown = [...dock.children].some((c) => !c.hidden);
  if (!shown && dock.contains(document.activeElement)) document.activeElement.blur();
  dock.hidden = !shown;
  fitDock();
}

/** Sets an element's text only when it changes (a live region then speaks only news). */
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Gives the page room at its bottom for the dock, so that it covers nothing for good. */
function fitDock() {
  const dock = $("dock");
  const height = dock && !dock.hidden ? dock.offsetHeight : 0;
  document.body.classList.toggle("docked", height > 0);
  document.body.style.setProperty("--dock-height", `${height}px`);
}

/** What a stand-in did for this page's seat (a `while_away`), in a sentence or three. */
function whileAwayText(away) {
  const moves = [];
  for (const e of away.events || []) {
    if (e.type === "drew_from_stock") moves.push(t("away.drew"));
    else if (e.type === "took_from_pile") moves.push(t("seat.lastTook", { card: cardLabel(e.card) }));
    else if (e.type === "threw") moves.push(t("seat.lastThrew", { cards: e.cards.map(cardLabel).join(" ") }));
    else if (e.type === "called") moves.push(t("seat.lastCalled"));
  }
  const MAX = 8;
  const listed = moves.length > MAX ? [...moves.slice(0, MAX), t("away.more", { count: moves.length - MAX })] : moves;
  const parts = [t("away.turns", { count: away.turns })];
  if (listed.length > 0) parts.push(t("away.moves", { moves: listed.join(", ") }));
  if (away.rounds_ended > 0) parts.push(t("away.rounds", { count: away.rounds_ended }));
  return parts.join(" ");
}

function onError(err) {
  if (!app.joined) {
    // The hello was refused.
    if (err.code === "bad_token" || err.code === "bad_host_secret") {
      app.stored = { name: app.stored.name };
      saveStored(app.code, app.stored);
      app.conn.close();
      notice(errorText(err), "error");
      enterRoom(app.code);
      return;
    }
    if (err.code === "unknown_room" || err.code === "removed") {
      app.conn.close();
      gone(err);
      return;
    }
    if (err.code === "room_full") {
      app.conn.close();
      notice(errorText(err), "error");
      joinForm({ free_seats: 0, seats: [], settings: PRESETS.standard, started: true });
      return;
    }
  }
  notice(errorText(err), "error");
  app.chat.refused(err.code);
  // A refused settings change: show the settings the table really has.
  if (app.lobbyForm && app.room) app.lobbyForm.set(app.room.settings);
}

// ----- Painting: lobby or table, and the score dialog -----

function paint() {
  if (!app.room) return;
  paintScreen();
  paintDock();
  paintTitle();
}

/** The tab's title says when it is this page's turn ("● Your turn — Dhumbal · CODE"). */
function paintTitle() {
  const view = app.view;
  const seat = view && view.seat !== null && app.room.seats[view.seat];
  const mine = Boolean(view) && document.body.dataset.screen === "table" && view.seat !== null &&
    view.turn === view.seat && !["round_over", "match_over"].includes(view.phase) && !(seat && seat.stand_in);
  document.title = mine ? t("title.yourTurn", { title: pageTitle() }) : pageTitle();
}

function paintScreen() {
  const room = app.room;
  app.chat.update(room, app.welcome ? app.welcome.host : false);
  if (room.stage === "lobby") {
    closeScore();
    lobby(room);
    app.chat.mount($("lobby-chat"));
    app.chat.decorate();
    return;
  }
  if (!app.view) return;
  if (!app.table) app.table = createTable($("table"), { send, notice, rules: () => openRules(app.view.settings) });
  show("table");
  app.table.render(app.view, room);
  app.chat.mount($("table"));
  app.chat.decorate();
  if (room.stage === "between_rounds" || room.stage === "match_over") {
    score(room);
  } else {
    // The match's result stays until the next match deals (it may come before the room's stage).
    closeScore();
  }
}

/** Whether this page is the room's host. */
function hostHere() {
  return app.welcome ? Boolean(app.welcome.host) : false;
}

/** Leave after a match: back to the home page, this page's seat in the room forgotten here. */
function leaveRoom() {
  try {
    localStorage.removeItem(storeKey(app.code));
  } catch {
    // Private browsing may refuse storage; the seat was only this page's anyway.
  }
  if (app.conn) app.conn.close();
  location.assign("/");
}

function score(room) {
  const view = app.view;
  const results = app.matchResult ? app.matchResult.results : view.results;
  const result = results[results.length - 1];
  if (!result) return;
  const me = room.your_seat;
  const names = room.seats.map(seatName);
  const matchOver = room.stage === "match_over";
  const waitingFor = room.seats.filter((s) => s.seat !== me && s.kind === "human" && s.connected && !s.ready).map((s) => s.name);
  const mine = me !== null && room.seats[me] ? room.seats[me].ready : false;
  let waitingText = "";
  if (!matchOver && waitingFor.length > 0) waitingText = t("score.waitingFor", { names: waitingFor.join(", ") });
  if (matchOver && mine) waitingText = waitingFor.length ? t("score.rematchWaiting", { names: waitingFor.join(", ") }) : t("score.rematchAsked");
  const box = $("score-box");
  // Keep the keyboard's place when the dialog is drawn again (a verdict, someone's Rematch).
  const focused = $("score-dialog").contains(document.activeElement) && document.activeElement.id ? document.activeElement.id : null;
  renderScore(box, {
    result,
    results,
    names,
    me,
    settings: view.settings,
    matchOver,
    standings: app.matchResult ? app.matchResult.standings : null,
    seeds: app.matchResult ? app.matchResult.seeds : null,
    waiting: mine,
    waitingText,
    onNext: () => send({ type: "ready", client_seed: app.fair.freshSeed() }),
    onRematch: () => send({ type: "rematch", client_seed: app.fair.freshSeed() }),
    // After the match: the others who asked for a rematch (`ready` then means that), Leave, and
    // the host's Back to the lobby and Change settings.
    rematchBy: matchOver ? room.seats.filter((s) => s.seat !== me && s.kind === "human" && s.ready).map(seatName) : [],
    onLeave: leaveRoom,
    onToLobby: hostHere() ? () => send({ type: "to_lobby" }) : null,
    onChangeSettings: hostHere() ? () => {
      app.openSettings = true;
      send({ type: "to_lobby" });
    } : null,
    fairness: matchOver && app.matchResult && app.matchResult.match_number ? {
      verdict: app.verdict && app.verdict.match === app.matchResult.match_number ? { kind: app.verdict.kind, text: app.verdict.text() } : null,
      replayUrl: `/replay#${encodeURIComponent(app.code)}/${app.matchResult.match_number}`,
      onVerify: verifyDeals,
      onDownload: downloadHistory,
    } : null,
  });
  // The buttons stand below the results, which scroll on their own: always in view, never over
  // the results.
  const footer = box.querySelector(":scope > .dialog-actions");
  const old = $("score-dialog").querySelector(":scope > .dialog-actions");
  if (old) old.remove();
  if (footer) $("score-dialog").append(footer);
  if (focused && $(focused)) $(focused).focus({ preventScroll: true });
  const dialog = $("score-dialog");
  if (!dialog.open) {
    dialog.showModal();
    const first = dialog.querySelector("#next-round, #rematch");
    if (first) first.focus({ preventScroll: true });
    dialog.scrollTop = 0;
    box.scrollTop = 0;
  }
}

// ----- After the match: check the deals, download the hand history -----


/** The finished match's hand history as text, downloaded once with the seat's token. */
async function historyText() {
  const result = app.matchResult;
  const n = result.match_number;
  if (app.histories.has(n)) return app.histories.get(n);
  const url = `/api/rooms/${encodeURIComponent(app.code)}/matches/${n}/history`;
  // A seat's token, or for a spectator (or a token the server no longer knows) the revealed seed.
  const credentials = [];
  if (app.room && app.room.your_seat !== null && app.stored.token) credentials.push(app.stored.token);
  if (result.seed) credentials.push(result.seed);
  let status = 401;
  for (const credential of credentials) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${credential}` } });
    status = res.status;
    if (res.ok) {
      const text = await res.text();
      app.histories.set(n, text);
      return text;
    }
    if (res.status !== 401) break;
  }
  throw status === 401 || status === 404 ? failure(`history.${status}`) : failure("history.status", { status });
}

/** Shows the verdict of Verify the deals; `text` gives its words (in the page's language). */
function setVerdict(kind, text) {
  app.verdict = { match: app.matchResult ? app.matchResult.match_number : null, kind, text };
  if (app.room) score(app.room);
  const shown = $("verify-result");
  if (shown) shown.scrollIntoView({ block: "nearest" });
}

async function verifyDeals() {
  if (!app.matchResult) return;
  if (!canVerify()) {
    setVerdict("bad", noWebCrypto);
    return;
  }
  setVerdict("checking", () => t("verify.checking"));
  try {
    const history = JSON.parse(await historyText());
    const seen = app.fair.seen(history.match_number, app.room ? app.room.your_seat : null);
    const verdict = await verifyHistory(history, seen);
    setVerdict(verdict.ok ? "ok" : "bad", () => verdict.summary);
  } catch (e) {
    setVerdict("bad", () => (e instanceof SyntaxError ? t("verify.badJson") : e.say ? e.say() : e.message));
  }
}

async function downloadHistory() {
  if (!app.matchResult) return;
  const n = app.matchResult.match_number;
  try {
    const text = await historyText();
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const a = el("a");
    a.href = url;
    a.download = `dhumbal-${app.code}-${n}.json`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (e) {
    notice(e.say ? e.say() : e.message, "error");
  }
}

function closeScore() {
  const dialog = $("score-dialog");
  if (dialog.open) dialog.close();
}

function lobby(room) {
  show("lobby");
  if (app.table) {
    app.table.reset();
  }
  const me = room.your_seat;
  const isHost = app.welcome ? app.welcome.host : false;
  $("lobby-title").replaceChildren(...tNodes("lobby.title", { code: codeSpan(room.code, "lobby-code") }));
  const link = `${location.origin}/r/${room.code}`;
  $("invite").value = link;
  const seatsBox = $("lobby-seats");
  seatsBox.replaceChildren();
  for (const seat of room.seats) {
    const li = el("li", `lobby-seat ${seat.kind}`);
    li.dataset.seat = String(seat.seat);
    const label = el("span", "seat-no", String(seat.seat + 1));
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
    li.append(label, who);
    const controls = el("span", "seat-controls");
    if (isHost) {
      if (seat.kind === "empty" || seat.kind === "bot") {
        const pick = el("select");
        pick.setAttribute("aria-label", t("lobby.botDifficulty", { n: seat.seat + 1 }));
        for (const d of ["easy", "medium", "hard", "expert"]) {
          const o = el("option", "", t(`difficulty.${d}`));
          o.value = d;
          pick.append(o);
        }
        pick.value = seat.difficulty || room.settings.difficulty;
        if (seat.kind === "bot") {
          pick.addEventListener("change", () => send({ type: "add_bot", seat: seat.seat, difficulty: pick.value }));
          controls.append(pick, button(t("lobby.removeBot"), "small", () => send({ type: "clear_seat", seat: seat.seat })));
        } else {
          controls.append(pick, button(t("lobby.addBot"), "small", () => send({ type: "add_bot", seat: seat.seat, difficulty: pick.value })));
        }
      } else if (seat.seat !== me) {
        controls.append(button(t("lobby.remove"), "small", () => send({ type: "clear_seat", seat: seat.seat })));
        const mute = button(t(seat.muted ? "chat.unmute" : "chat.mute"), "small mute", () => send({ type: "mute", seat: seat.seat, muted: !seat.muted }));
        mute.setAttribute("aria-label", t(seat.muted ? "lobby.unmuteLabel" : "lobby.muteLabel", { name: seatName(seat) }));
        mute.setAttribute("aria-pressed", String(Boolean(seat.muted)));
        controls.append(mute);
      }
    }
    if (seat.kind === "empty" && !isHost) {
      controls.append(button(t(me === null ? "lobby.sitHere" : "lobby.moveHere"), "small", () => send({ type: "take_seat", seat: seat.seat })));
    }
    li.append(controls);
    seatsBox.append(li);
  }
  // The people the host removed: only the host may let them back.
  const removedBox = $("lobby-removed");
  removedBox.replaceChildren();
  (room.removed || []).forEach((name, i) => {
    const li = el("li", "lobby-seat removed");
    li.append(el("span", "who", t("lobby.removed", { name })));
    if (isHost) li.append(button(t("lobby.letBack"), "small", () => send({ type: "readmit", removed: i })));
    removedBox.append(li);
  });
  removedBox.hidden = removedBox.childElementCount === 0;
  const settingsBox = $("lobby-settings");
  if (isHost) {
    if (!app.lobbyForm) {
      app.lobbyForm = settingsForm(settingsBox, room.settings, (s) => {
        if (validate(s) === null) send({ type: "set_settings", settings: s });
      });
    } else {
      app.lobbyForm.set(room.settings);
    }
  } else {
    app.lobbyForm = null;
    settingsBox.replaceChildren();
    const ul = el("ul", "summary");
    for (const item of summary(room.settings)) ul.append(el("li", "", item));
    settingsBox.append(ul);
  }
  const empty = room.seats.filter((s) => s.kind === "empty").length;
  const start = $("start");
  start.hidden = !isHost;
  start.textContent = empty > 0 ? t("lobby.startWithBots", { count: empty }) : t("lobby.start");
  $("lobby-wait").hidden = isHost;
  $("lobby-watching").hidden = me !== null;
  if (app.openSettings) {
    // Change settings after a match: the lobby opens at its settings, the first one focused.
    app.openSettings = false;
    const first = isHost ? settingsBox.querySelector("select, input") : null;
    if (first) {
      settingsBox.closest(".panel").scrollIntoView({ block: "start" });
      first.focus({ preventScroll: true });
    }
  }
}

// ----- Wiring that lasts the page's life -----

/** Draws the page again in the language just chosen, keeping where it is and what it holds. */
function relabel() {
  document.title = pageTitle();
  const screen = document.body.dataset.screen;
  if (screen === "home" && app.homeForm) app.homeForm.relabel();
  if (screen === "join") paintJoinInfo();
  if (screen === "gone") paintGone();
  if (bannerShown) banner(bannerShown.key, bannerShown.action, bannerShown.onAction);
  if (app.lobbyForm) app.lobbyForm.relabel();
  app.chat.relabel();
  if (screen === "lobby" || screen === "table") paint();
  if ($("rules-dialog").open && rulesSettings) renderRules($("rules-box"), rulesSettings);
}

function setup() {
  startPage();
  onLanguageChange(relabel);
  app.chat = createChat({ send });
  $("rules-close").addEventListener("click", () => $("rules-dialog").close());
  $("score-dialog").addEventListener("cancel", (event) => event.preventDefault());
  $("start").addEventListener("click", () => send({ type: "start" }));
  $("lobby-rules").addEventListener("click", () => openRules(app.room ? app.room.settings : PRESETS.standard));
  $("copy").addEventListener("click", async () => {
    const input = $("invite");
    try {
      await navigator.clipboard.writeText(input.value);
      notice(t("lobby.copied"));
    } catch {
      input.select();
      notice(t("lobby.copySelect"));
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key.toLowerCase() !== "n" || !$("score-dialog").open) return;
    const next = $("next-round");
    if (next && !next.disabled) {
      event.preventDefault();
      next.click();
    }
  });
  window.addEventListener("popstate", () => location.reload());
  const match = location.pathname.match(/^\/r\/([^/]+)\/?$/);
  if (match) enterRoom(decodeURIComponent(match[1]).toUpperCase());
  else home();
}

setup();
