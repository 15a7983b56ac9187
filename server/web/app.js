// The Dhumbal web client: create a room, join from its link, the lobby, the table, the score
// dialog, How to play. It speaks only the protocol of `docs/protocol.md`: HTTP to create and look
// up rooms, then JSON messages over one WebSocket.

import { CLOSE_REMOVED, Connection, PROTOCOL } from "./net.js";
import { Memory, NO_WEBCRYPTO, canVerify, verifyHistory } from "./fair.js";
import { PRESETS, copySettings, settingsForm, summary, validate } from "./settings.js";
import { renderRules } from "./rules.js";
import { renderScore } from "./score.js";
import { createChat } from "./chat.js";
import { createTable } from "./table.js";
import { el, button } from "./dom.js";

const $ = (id) => document.getElementById(id);

// ----- Plain words for the server's error codes -----

const ERROR_TEXT = {
  not_your_turn: "It's not your turn yet.",
  round_over: "The round is over; wait for the next deal.",
  match_over: "The match is over.",
  call_too_late: "You can only call at the start of your turn, before you take or throw a card.",
  must_draw_first: "Take a card first (from the stock or the pile), then throw.",
  must_throw_first: "Throw first, then take a card.",
  already_drew: "You've taken your card; now throw.",
  already_threw: "You've thrown; now take a card.",
  empty_throw: "Mark at least one card to throw.",
  barred_card: "The card you just took from the pile can't go back this turn.",
  illegal_group: "Those cards don't go together: throw one card, cards of one rank, or a run where runs are on.",
  not_takeable: "That card can't be taken from the pile.",
  choose_pile_card: "Tap the card of the previous throw you want.",
  pile_not_takeable: "Nothing on the pile can be taken now; draw from the stock.",
  stock_empty: "The stock is empty.",
  stand_in_playing: "Welcome back! The bot that played for you is finishing this turn.",
  over_limit: "Your hand is over the call limit, so you can't call yet.",
  not_in_hand: "That card isn't in your hand any more.",
  duplicate_card: "The same card is marked twice.",
  no_such_seat: "There is no such seat at this table.",
  seats_occupied: "Someone sits in a seat that would go; ask them to move first.",
  own_seat: "You can't empty your own seat.",
  not_between_rounds: "The next round has already started.",
  match_not_over: "The match isn't over yet.",
  unsupported_protocol: "This page is out of date with the server; reload it.",
  unknown_room: "There is no room with that code. It may have closed, or the server restarted.",
  rate_limited: "Slow down a little: that was too many messages at once.",
  too_many_attempts: "Too many room codes that don't exist were tried from here; wait a minute and try again.",
  room_full: "Every seat is taken; you can still watch.",
  bad_token: "Your seat in this room has expired.",
  name_taken: "Someone at this table already goes by that name; choose another.",
  removed: "The host removed you from this room. You can come back only if they let you.",
  room_expired: "This room's match never started, and the room has closed.",
  hello_timeout: "The connection took too long to say hello; reconnecting.",
  too_many_open_rooms: "You already have many open rooms; play in one of them, or wait for them to close.",
  unsupported_media_type: "This page is out of date with the server; reload it.",
  not_host: "Only the host can do that.",
  bad_chat: "A chat message is one line of 1 to 200 characters, without control characters.",
  muted: "The host has muted you: you can read the chat and react, but not write.",
  not_a_person: "Only a person can be muted; that seat holds a bot or nobody.",
  not_seated: "Only seated players can do that.",
  seat_taken: "That seat is taken.",
  already_started: "The match has already started.",
  not_started: "The match hasn't started yet.",
  too_many_rooms: "The server is full right now; try again later.",
  too_big: "That message was too large.",
  internal: "Something went wrong on the server.",
};

/** A server error in plain words. */
function errorText(err) {
  return ERROR_TEXT[err.code] || err.message || "That didn't work.";
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

/** Shows the banner with this text (and a button), or hides it for `null`. */
function banner(text, action, onAction) {
  const box = $("banner");
  box.hidden = text === null;
  if (text === null) return;
  box.replaceChildren(document.createTextNode(text));
  if (action) {
    const b = el("button", "small", action);
    b.type = "button";
    b.addEventListener("click", onAction);
    box.append(" ", b);
  }
}

function show(section) {
  for (const id of ["home", "join", "lobby", "table", "gone"]) $(id).hidden = id !== section;
  document.body.dataset.screen = section;
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

/** Opens How to play at its top: focus on its title, not on Close at the bottom. */
function openRules(settings) {
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
  history: { log: [], results: [] },
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
  /** The latest verdict of "Verify the deals": `{ match, kind, text }`. */
  verdict: null,
  /** The table's chat and reactions (chat.js), in the lobby and at the table. */
  chat: null,
};

function send(message) {
  if (!app.conn || app.conn.send(message) === null) {
    notice("Not connected right now; trying again\u2026", "error");
  }
}

// ----- Home: the settings page and Create room -----

function home() {
  show("home");
  document.title = "Dhumbal";
  const name = $("home-name");
  name.value = lastName();
  let settings = copySettings(PRESETS.standard);
  const creates = [$("create"), $("create-bottom")];
  const enable = (on) => { for (const b of creates) b.disabled = !on; };
  const form = settingsForm($("home-settings"), settings, (s) => {
    settings = s;
    enable(validate(s) === null);
  });
  $("home-rules").addEventListener("click", () => openRules(form.get()));
  $("home-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const who = name.value.trim();
    if (!who) {
      notice("Please type your name first.", "error");
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
      notice("Couldn't reach the server. Is it running?", "error");
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
  document.title = `Dhumbal \u00b7 ${code}`;
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
    notice("Couldn't reach the server. Is it running?", "error");
  }
  joinForm(summaryBody);
}

/** The room is gone for this page: it does not exist, expired, or the host removed this person. */
function gone(why) {
  show("gone");
  $("gone-code").textContent = app.code;
  $("gone-why").textContent = why || ERROR_TEXT.unknown_room;
}

function joinForm(room) {
  show("join");
  $("join-code").textContent = app.code;
  const name = $("join-name");
  name.value = app.stored.name || lastName();
  const full = room && room.free_seats === 0;
  const info = $("join-info");
  info.replaceChildren();
  if (room) {
    const people = room.seats.filter((s) => s.kind === "human").map((s) => s.name);
    info.append(el("p", "", people.length ? `At the table: ${people.join(", ")}.` : "Nobody has sat down yet."));
    info.append(el("p", "note", summary(room.settings).join(" \u00b7 ")));
    if (room.started) info.append(el("p", "note", "The match has started."));
  }
  $("join-sit").hidden = Boolean(full);
  $("join-full").hidden = !full;
  const go = (spectator) => {
    const who = name.value.trim();
    if (!who) {
      notice("Please type your name first.", "error");
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
        name: app.stored.name || lastName() || "Player",
        token: app.stored.token || null,
        // Randomness of this page's own in every deal while it holds a seat (docs/fairness.md).
        client_seed: app.fair.freshSeed(),
      };
      if (app.spectator && !app.stored.token) hello.spectator = true;
      if (app.stored.host_secret) hello.host_secret = app.stored.host_secret;
      return hello;
    },
    message: onMessage,
    status: (away) => banner(away ? "Reconnecting\u2026" : null),
    replaced: () => banner("This seat is open in another window.", "Play here", () => {
      banner("Reconnecting\u2026");
      app.conn.open();
    }),
    ended: (code) => {
      banner(null);
      gone(code === CLOSE_REMOVED ? ERROR_TEXT.removed : ERROR_TEXT.room_expired);
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
      app.history = { log: msg.log, results: msg.results };
      break;
    case "state":
      // One change: the events that made it (kept in the history), then the view after them.
      for (const event of msg.events || []) followEvent(event);
      app.view = { ...msg.view, log: app.history.log.slice(), results: app.history.results.slice() };
      rememberDealtHand(app.view);
      paint();
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
      notice(msg.reason === "shutting_down" || msg.reason === "restarting" ? "The server is restarting; you'll be back in your seat in a moment." : errorText({ code: msg.reason, message: msg.message }), "error");
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
      gone(errorText(err));
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
  const room = app.room;
  if (!room) return;
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

function score(room) {
  const view = app.view;
  const results = app.matchResult ? app.matchResult.results : view.results;
  const result = results[results.length - 1];
  if (!result) return;
  const me = room.your_seat;
  const names = room.seats.map((s) => s.name || `Seat ${s.seat + 1}`);
  const matchOver = room.stage === "match_over";
  const waitingFor = room.seats.filter((s) => s.seat !== me && s.kind === "human" && s.connected && !s.ready).map((s) => s.name);
  const mine = me !== null && room.seats[me] ? room.seats[me].ready : false;
  let waitingText = "";
  if (!matchOver && waitingFor.length > 0) waitingText = `Waiting for ${waitingFor.join(", ")}.`;
  if (matchOver && mine) waitingText = waitingFor.length ? `Rematch asked; waiting for ${waitingFor.join(", ")}.` : "Rematch asked.";
  const box = $("score-box");
  // Keep the keyboard's place when the dialog is drawn again (a verdict, someone's Rematch).
  const focused = box.contains(document.activeElement) && document.activeElement.id ? document.activeElement.id : null;
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
    fairness: matchOver && app.matchResult && app.matchResult.match_number ? {
      verdict: app.verdict && app.verdict.match === app.matchResult.match_number ? app.verdict : null,
      replayUrl: `/replay#${encodeURIComponent(app.code)}/${app.matchResult.match_number}`,
      onVerify: verifyDeals,
      onDownload: downloadHistory,
    } : null,
  });
  if (focused && $(focused)) $(focused).focus({ preventScroll: true });
  const dialog = $("score-dialog");
  if (!dialog.open) {
    dialog.showModal();
    const first = dialog.querySelector("#next-round, #rematch");
    if (first) first.focus({ preventScroll: true });
    dialog.scrollTop = 0;
  }
}

// ----- After the match: check the deals, download the hand history -----

const HISTORY_ERRORS = {
  401: "The server did not accept this page's credential for the hand history.",
  404: "The server no longer keeps this match's hand history.",
};

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
  throw new Error(HISTORY_ERRORS[status] || `The server answered ${status} for the hand history.`);
}

function setVerdict(kind, text) {
  app.verdict = { match: app.matchResult ? app.matchResult.match_number : null, kind, text };
  if (app.room) score(app.room);
  const shown = $("verify-result");
  if (shown) shown.scrollIntoView({ block: "nearest" });
}

async function verifyDeals() {
  if (!app.matchResult) return;
  if (!canVerify()) {
    setVerdict("bad", NO_WEBCRYPTO);
    return;
  }
  setVerdict("checking", "Checking every deal\u2026");
  try {
    const history = JSON.parse(await historyText());
    const seen = app.fair.seen(history.match_number, app.room ? app.room.your_seat : null);
    const verdict = await verifyHistory(history, seen);
    setVerdict(verdict.ok ? "ok" : "bad", verdict.summary);
  } catch (e) {
    setVerdict("bad", e instanceof SyntaxError ? "The hand history is not valid JSON." : e.message);
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
    notice(e.message, "error");
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
  $("lobby-code").textContent = room.code;
  const link = `${location.origin}/r/${room.code}`;
  $("invite").value = link;
  const seatsBox = $("lobby-seats");
  seatsBox.replaceChildren();
  for (const seat of room.seats) {
    const li = el("li", `lobby-seat ${seat.kind}`);
    li.dataset.seat = String(seat.seat);
    const label = el("span", "seat-no", `${seat.seat + 1}`);
    const who = el("span", "who");
    if (seat.kind === "empty") {
      who.append(el("span", "empty", "Empty \u2014 a bot sits here at the start"));
    } else {
      const dot = el("span", `conn ${seat.connected ? "on" : "off"}`);
      dot.title = seat.connected ? "connected" : "not connected";
      who.append(dot, el("b", "", seat.name || ""));
      const bits = [];
      if (seat.kind === "bot") bits.push(`bot \u00b7 ${seat.difficulty || room.settings.difficulty}`);
      else bits.push(seat.connected ? "player" : "player \u00b7 away");
      if (room.host === seat.seat) bits.push("host");
      if (seat.muted) bits.push("muted");
      if (seat.seat === me) bits.push("you");
      who.append(el("span", "note", ` ${bits.join(" \u00b7 ")}`));
    }
    li.append(label, who);
    const controls = el("span", "seat-controls");
    if (isHost) {
      if (seat.kind === "empty" || seat.kind === "bot") {
        const pick = el("select");
        pick.setAttribute("aria-label", `Bot difficulty for seat ${seat.seat + 1}`);
        for (const d of ["easy", "medium", "hard", "expert"]) {
          const o = el("option", "", d);
          o.value = d;
          pick.append(o);
        }
        pick.value = seat.difficulty || room.settings.difficulty;
        if (seat.kind === "bot") {
          pick.addEventListener("change", () => send({ type: "add_bot", seat: seat.seat, difficulty: pick.value }));
          controls.append(pick, button("Remove bot", "small", () => send({ type: "clear_seat", seat: seat.seat })));
        } else {
          controls.append(pick, button("Add bot", "small", () => send({ type: "add_bot", seat: seat.seat, difficulty: pick.value })));
        }
      } else if (seat.seat !== me) {
        controls.append(button("Remove", "small", () => send({ type: "clear_seat", seat: seat.seat })));
        const mute = button(seat.muted ? "Unmute" : "Mute", "small mute", () => send({ type: "mute", seat: seat.seat, muted: !seat.muted }));
        mute.setAttribute("aria-label", `${seat.muted ? "Unmute" : "Mute"} ${seat.name || `seat ${seat.seat + 1}`} in the chat`);
        mute.setAttribute("aria-pressed", String(Boolean(seat.muted)));
        controls.append(mute);
      }
    }
    if (seat.kind === "empty" && !isHost) {
      controls.append(button(me === null ? "Sit here" : "Move here", "small", () => send({ type: "take_seat", seat: seat.seat })));
    }
    li.append(controls);
    seatsBox.append(li);
  }
  // The people the host removed: only the host may let them back.
  const removedBox = $("lobby-removed");
  removedBox.replaceChildren();
  (room.removed || []).forEach((name, i) => {
    const li = el("li", "lobby-seat removed");
    li.append(el("span", "who", `${name} \u00b7 removed`));
    if (isHost) li.append(button("Let back", "small", () => send({ type: "readmit", removed: i })));
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
  start.textContent = empty > 0 ? `Start (bots take ${empty} seat${empty === 1 ? "" : "s"})` : "Start";
  $("lobby-wait").hidden = isHost;
  $("lobby-watching").hidden = me !== null;
}

// ----- Wiring that lasts the page's life -----

function setup() {
  app.chat = createChat({ send });
  $("rules-close").addEventListener("click", () => $("rules-dialog").close());
  $("score-dialog").addEventListener("cancel", (event) => event.preventDefault());
  $("start").addEventListener("click", () => send({ type: "start" }));
  $("lobby-rules").addEventListener("click", () => openRules(app.room ? app.room.settings : PRESETS.standard));
  $("copy").addEventListener("click", async () => {
    const input = $("invite");
    try {
      await navigator.clipboard.writeText(input.value);
      notice("Link copied. Send it to your friends.");
    } catch {
      input.select();
      notice("Select the link and copy it.");
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
