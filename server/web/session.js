// This page in a room: its seat (kept on this device), the WebSocket (net.js) and what the server
// says over it. The state of the room lives here (the room, the last view, the round's log and
// the match's results followed from each `state`'s events, the table's notices, the clock, the
// stand-in's doings); each message updates it and paints the screen it belongs to: the lobby
// (lobby.js), the table (table.js) with its dock (dock.js), the score dialog (score.js).

import { CLOSE_REMOVED, CLOSE_WATCHING_OFF, Connection, PROTOCOL } from "./net.js";
import { Memory } from "./fair.js";
import { loadCatalogue } from "./settings.js";
import { openRules } from "./rules.js";
import { closeScore, showScore } from "./score.js";
import { createChat } from "./chat.js";
import { createTable } from "./table.js";
import { myTurnOf } from "./table-state.js";
import { noticeText } from "./log.js";
import { paintLobby, relabelLobby, settingsRefused, setupLobby } from "./lobby.js";
import { paintDock } from "./dock.js";
import { downloadHistory, verifyDeals } from "./deals.js";
import { gone, joinForm, relabelJoin } from "./join.js";
import { $ } from "./dom.js";
import { errorText } from "./errors.js";
import { banner, notice, say, screen, show } from "./page.js";
import { forgetRoom, lastName, rememberName, storeRoom, storedRoom } from "./storage.js";
import { t } from "./i18n.js";
import { announceState } from "./announce.js";
import { hintWords } from "./coach.js";

/** The room's state, as this page knows it. */
const session = {
  code: null,
  /** What this device keeps for the room: `{name, token, host_secret}`. */
  stored: {},
  conn: null,
  welcome: null,
  room: null,
  view: null,
  /** The view as the server last told it, with its version `v` (the base of the next patch). */
  wire: null,
  /** Whether a `resync` is out (a patch did not build on the view held). */
  resyncing: false,
  /** The coach's `review` of this page's seat for the last match, once it came. */
  review: null,
  /** Whether a `review` is out. */
  reviewing: false,
  /** The server's presets and turn timers (for the host's settings form), once fetched. */
  offer: null,
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
  /** Whether the lobby, when it comes, opens at its settings (the host's Change settings). */
  openSettings: false,
};

function send(message) {
  if (!session.conn || session.conn.send(message) === null) {
    notice(t("conn.down"), "error");
  }
}

/** Whether this page is the room's host. */
function hostHere() {
  return session.welcome ? Boolean(session.welcome.host) : false;
}

/** The page's title: the product's name, and the room's code in a room. */
export function pageTitle() {
  return session.code ? t("title.room", { code: session.code }) : t("title.home");
}

/** Keeps what this device knows of the room. */
function keep(stored) {
  session.stored = stored;
  storeRoom(session.code, stored);
}

// ----- Arriving: the seat this device has, or the join form -----

/**
 * Enters a room: with a seat (or the host's secret) on this device, straight in; else its join
 * form, or the page that says it is gone.
 * @param {string} code
 */
export async function enterRoom(code) {
  session.code = code;
  session.stored = storedRoom(code);
  session.fair = new Memory(code);
  document.title = pageTitle();
  if (!session.chat) session.chat = createChat({ send });
  // The host's settings form offers the server's presets: asked for before the lobby can show.
  if (!session.offer) session.offer = await loadCatalogue().catch(() => null);
  if (session.stored.token || session.stored.host_secret) {
    connect(false);
    return;
  }
  const summary = await roomSummary(code);
  if (summary !== undefined) showJoin(summary);
}

/** The room's summary for the join form: null when unknown (unreachable), undefined when gone. */
async function roomSummary(code) {
  try {
    const res = await fetch(`/api/rooms/${encodeURIComponent(code)}`);
    if (res.status === 404) {
      roomGone();
      return undefined;
    }
    return await res.json();
  } catch {
    notice(t("conn.unreachable"), "error");
    return null;
  }
}

function showJoin(room) {
  joinForm(session.code, room, session.stored.name || lastName(), (who, spectator) => {
    rememberName(who);
    keep({ ...session.stored, name: who, token: null });
    connect(spectator);
  });
}

/** The room is gone for this page (see join.js's `gone`). */
function roomGone(why) {
  gone(session.code, why);
  paintDock(session, send);
}

function connect(spectator) {
  if (session.conn) session.conn.close();
  session.spectator = spectator;
  session.conn = new Connection(session.code, {
    hello: () => {
      session.joined = false;
      // A new socket: the whole view comes again after the hello.
      session.wire = null;
      session.resyncing = false;
      // Seeds sent on the last socket and never answered: their fate is unknown.
      session.fair.newConnection();
      const hello = {
        type: "hello",
        protocol: PROTOCOL,
        room: session.code,
        name: session.stored.name || lastName() || t("seat.defaultName"),
        token: session.stored.token || null,
      };
      // Randomness of this page's own in every deal while it holds a seat, answering the
      // commitment this page last saw (docs/fairness.md); none before it has seen one.
      const seed = session.stored.token ? session.fair.helloSeed() : null;
      if (seed) hello.client_seed = seed;
      if (session.spectator && !session.stored.token) hello.spectator = true;
      if (session.stored.host_secret) hello.host_secret = session.stored.host_secret;
      return hello;
    },
    message: onMessage,
    status: (away, unreachable) => banner(away ? (unreachable ? "conn.offline" : "conn.reconnecting") : null),
    replaced: () => banner("conn.replaced", "conn.playHere", () => {
      banner("conn.reconnecting");
      session.conn.open();
    }),
    ended: (code) => {
      banner(null);
      const why = { [CLOSE_REMOVED]: "removed", [CLOSE_WATCHING_OFF]: "watching_off" }[code];
      roomGone({ code: why || "room_expired" });
    },
  });
  session.conn.open();
}

/** Leave after a match: back to the home page, this page's seat in the room forgotten here. */
function leaveRoom() {
  forgetRoom(session.code);
  if (session.conn) session.conn.close();
  location.assign("/");
}

// ----- Messages from the server -----

function onMessage(msg) {
  switch (msg.type) {
    case "welcome":
      session.welcome = msg;
      session.joined = true;
      banner(null);
      session.stored = { ...session.stored, token: msg.token };
      if (msg.token) keep(session.stored);
      session.chat.welcome(msg.chat);
      break;
    case "room":
      onRoom(msg);
      break;
    case "history":
      session.history = { log: msg.log, results: msg.results, standIn: (msg.stand_in || []).slice() };
      // Arriving in a match: the deals this page missed came after all it had sent before.
      if (msg.log.length > 0 && msg.log[0].type === "dealt" && session.room && session.room.fairness) {
        const over = session.room.stage === "match_over";
        session.dealMatch = session.room.fairness.match_number - (over ? 1 : 0);
        session.fair.caughtUp(session.dealMatch, msg.log[0].round);
      }
      // Notices heard before a reconnection stay only if they were of this same round.
      session.notes = session.notes.filter((n) => msg.log.length > 0 && n.round === msg.log[0].round && n.at <= msg.log.length);
      break;
    case "state":
      // The whole view, of version `v`: the patches that follow build on it.
      session.wire = { v: msg.v, view: { ...msg.view } };
      session.resyncing = false;
      onState(msg);
      break;
    case "patch":
      onPatch(msg);
      break;
    case "notice":
      onNotice(msg);
      break;
    case "while_away":
      session.whileAway = msg.turns > 0 || (msg.events || []).length > 0 ? msg : null;
      paintDock(session, send);
      break;
    case "match_result":
      session.matchResult = msg;
      if (session.verdict && session.verdict.match !== msg.match_number) session.verdict = null;
      paint();
      break;
    case "chat":
      session.chat.line(msg.line);
      break;
    case "reaction":
      session.chat.reaction(msg);
      break;
    case "hint":
      // For the view this page holds now; a hint for an earlier one is stale.
      if (session.table && session.wire && msg.v === session.wire.v) {
        session.table.hint(msg.advice);
        say(hintWords(msg.advice));
      }
      break;
    case "review": {
      session.review = msg;
      session.reviewing = false;
      paint();
      const shown = $("coach-review");
      if (shown) shown.scrollIntoView({ block: "nearest" });
      break;
    }
    case "client_seed_taken":
      session.fair.taken(msg.commitment, msg.client_seed);
      break;
    case "error":
      if (msg.code === "stale_commitment") {
        // The room has moved on to another commitment: a fresh seed for the one it shows.
        sendSeed();
        break;
      }
      if (msg.code === "coach_busy" || msg.code === "hints_off" || msg.code === "not_your_turn") {
        if (session.table) session.table.hintRefused();
      }
      if (session.reviewing && (msg.code === "coach_busy" || msg.code === "no_review")) {
        session.reviewing = false;
        paint();
      }
      onError(msg);
      break;
    case "bye":
      // The socket closes next; the connection comes back by itself with the seat token.
      // (Removed by the host: the page that follows says so, and why. Moved to another server:
      // back at once, with no more than the "reconnecting…" banner.)
      if (msg.reason === "removed" || msg.reason === "room_moved" || msg.reason === "watching_off") break;
      notice(msg.reason === "shutting_down" || msg.reason === "restarting" ? t("conn.restarting") : errorText({ code: msg.reason, message: msg.message }), "error");
      break;
    default:
      break;
  }
}

function onRoom(msg) {
  session.room = msg;
  if (msg.fairness && msg.fairness.commitment) {
    const fresh = session.fair.sawCommitment(msg.fairness.match_number, msg.fairness.commitment);
    // A seed chosen after the server's commitment: the server cannot have picked its seed to
    // suit ours (docs/fairness.md).
    if (fresh && msg.your_seat !== null && msg.your_seat !== undefined) sendSeed();
  }
  if (session.welcome) session.welcome.seat = msg.your_seat;
  paint();
}

/** A fresh client seed answering the commitment the room shows, while this page holds a seat. */
function sendSeed() {
  const room = session.room;
  if (!room || !room.fairness || room.your_seat === null || room.your_seat === undefined) return;
  const seed = session.fair.freshSeed(room.fairness.commitment);
  if (seed) send({ type: "client_seed", client_seed: seed });
}

/**
 * One change: the events that made it (kept in the history), then the view after them. Events a
 * stand-in played are marked by their place in the log, to name it in the log.
 */
/**
 * A change as a patch: the fields of the view that changed, for the view of the version before.
 * A patch for another version (a message was missed) is ignored, and the whole view asked for
 * again (`resync`, answered with `history` and `state`).
 */
function onPatch(msg) {
  const wire = session.wire;
  if (!wire || msg.v !== wire.v + 1) {
    if (!session.resyncing) {
      session.resyncing = true;
      send({ type: "resync" });
    }
    return;
  }
  Object.assign(wire.view, msg.view);
  wire.v = msg.v;
  onState({ events: msg.events || [], stand_in: msg.stand_in ?? null, clock: msg.clock ?? null, view: wire.view });
}

function onState(msg) {
  for (const event of msg.events || []) {
    followEvent(event);
    if (msg.stand_in !== null && msg.stand_in !== undefined && event.type !== "dealt") {
      session.history.standIn.push(session.history.log.length - 1);
    }
  }
  session.clock = msg.clock ? { ...msg.clock, at: performance.now() } : null;
  session.view = { ...msg.view, log: session.history.log.slice(), results: session.history.results.slice() };
  addTableExtras(session.view);
  rememberDealtHand(session.view);
  paint();
  announceState(msg, session);
}

/**
 * Adds an event to the round's log; a deal starts a new log, and round 1's a new match; a show
 * adds its result to the match's results.
 */
function followEvent(event) {
  if (event.type === "dealt") {
    session.history.log = [];
    session.history.standIn = [];
    session.notes = [];
    if (event.round === 1) {
      session.history.results = [];
      session.matchResult = null;
    }
    session.dealMatch = dealtMatchNumber(event);
    session.fair.sawDeal(session.dealMatch, event);
  }
  if (event.type === "round_ended") session.history.results.push(event.result);
  session.history.log.push(event);
}

/**
 * The number of the match a `dealt` event belongs to: the room shows the commitment of the match
 * being played, and in the lobby and after a match the next one's, which is the one a first deal
 * begins.
 */
function dealtMatchNumber(event) {
  const room = session.room;
  const shown = room && room.fairness ? room.fairness.match_number : 0;
  return shown || session.dealMatch || event.round || 1;
}

/** Remembers this seat's hand as dealt: the first view of a round whose log is just the deal. */
function rememberDealtHand(view) {
  if (view.seat === null || view.seat === undefined || session.dealMatch === null) return;
  const log = view.log;
  if (log.length === 1 && log[0].type === "dealt" && log[0].round === view.round) {
    session.fair.sawHand(session.dealMatch, view.round, view.seat, view.hand);
  }
}

/** What the table draws besides the view: the stand-in's log places, the notices, the clock. */
function addTableExtras(view) {
  view.standIn = session.history.standIn.slice();
  view.notes = session.notes.slice();
  view.clock = session.clock;
}

/** A `notice`: a toast now, and a line in the table's log in its place. */
function onNotice(msg) {
  const me = session.room ? session.room.your_seat : null;
  const log = session.history.log;
  session.notes.push({ at: log.length, round: log.length > 0 ? log[0].round : null, notice: msg });
  if (me !== null && me !== undefined && msg.seat === me) {
    if (msg.kind === "timed_out" || msg.kind === "handed_to_bot") {
      session.standIn.timedOut = msg.kind === "timed_out";
      session.standIn.back = false;
      session.whileAway = null;
    }
    if (msg.kind === "back") session.standIn.back = true;
  }
  const text = noticeText(msg, me);
  if (text) notice(text);
  if (session.view) addTableExtras(session.view);
  paint();
}

function onError(err) {
  if (!session.joined && onRefusedHello(err)) return;
  notice(errorText(err, session.room && session.room.settings), "error");
  session.chat.refused(err.code);
  // A refused settings change: show the settings the table really has.
  settingsRefused(session.room);
}

/** A refused hello: ask again for a seat, or say the room is gone or full. Whether it was one. */
function onRefusedHello(err) {
  if (err.code === "bad_token" || err.code === "bad_host_secret") {
    keep({ name: session.stored.name });
    session.conn.close();
    notice(errorText(err), "error");
    enterRoom(session.code);
    return true;
  }
  if (err.code === "unknown_room" || err.code === "removed" || err.code === "watching_off" || err.code === "watchers_full") {
    session.conn.close();
    roomGone(err);
    return true;
  }
  // The `bye` that follows says so, and the connection comes back by itself after a pause.
  if (err.code === "store_unavailable") return true;
  if (err.code === "room_full") {
    session.conn.close();
    notice(errorText(err), "error");
    roomSummary(session.code).then((room) => {
      if (room !== undefined) showJoin({ ...(room || { seats: [], started: true }), free_seats: 0 });
    });
    return true;
  }
  return false;
}

// ----- Painting: lobby or table, and the score dialog -----

function paint() {
  if (!session.room) return;
  paintScreen();
  paintDock(session, send);
  paintTitle();
}

/** The tab's title says when it is this page's turn ("● Your turn — Dhumbal · CODE"). */
function paintTitle() {
  const view = session.view;
  const seat = view && view.seat !== null && session.room.seats[view.seat];
  const mine = Boolean(view) && screen() === "table" && myTurnOf(view) && !(seat && seat.stand_in);
  document.title = mine ? t("title.yourTurn", { title: pageTitle() }) : pageTitle();
}

function paintScreen() {
  const room = session.room;
  session.chat.update(room, hostHere());
  if (room.stage === "lobby") {
    closeScore();
    show("lobby");
    if (session.table) session.table.reset();
    paintLobby(room, { host: hostHere(), offer: session.offer, send, openSettings: session.openSettings });
    session.openSettings = false;
    session.chat.mount($("lobby-chat"));
    session.chat.decorate();
    return;
  }
  if (!session.view) return;
  if (!session.table) session.table = createTable($("table"), { send, notice, rules: () => openRules(session.view.settings) });
  show("table");
  session.table.render(session.view, room);
  session.chat.mount($("table"));
  session.chat.decorate();
  if (room.stage === "between_rounds" || room.stage === "match_over") {
    paintScore();
  } else {
    // The match's result stays until the next match deals (it may come before the room's stage).
    closeScore();
  }
}

function paintScore() {
  const { room, view, matchResult, verdict, code } = session;
  const n = matchResult ? matchResult.match_number : null;
  showScore({
    room,
    view,
    matchResult,
    host: hostHere(),
    fairness: n ? {
      verdict: verdict && verdict.match === n ? { kind: verdict.kind, text: verdict.text() } : null,
      replayUrl: `/replay#${encodeURIComponent(code)}/${n}`,
      onVerify: () => verifyDeals(session, setVerdict),
      onDownload: () => downloadHistory(session),
    } : null,
    coach: n ? {
      review: session.review && session.review.match_number === n ? session.review : null,
      reviewing: Boolean(session.reviewing),
      onReview: () => {
        session.reviewing = true;
        send({ type: "review" });
        paintScore();
      },
    } : null,
  }, {
    // A fresh seed first, on its own: should the room have moved on, the vote still counts.
    onNext: () => {
      sendSeed();
      send({ type: "ready" });
    },
    onRematch: () => {
      sendSeed();
      send({ type: "rematch" });
    },
    onLeave: leaveRoom,
    onToLobby: () => send({ type: "to_lobby" }),
    onChangeSettings: () => {
      session.openSettings = true;
      send({ type: "to_lobby" });
    },
  });
}

/** Shows the verdict of Verify the deals; `text` gives its words (in the page's language). */
function setVerdict(kind, text) {
  session.verdict = { match: session.matchResult ? session.matchResult.match_number : null, kind, text };
  if (session.room) paintScore();
  const shown = $("verify-result");
  if (shown) shown.scrollIntoView({ block: "nearest" });
}

/** Draws the room's screens again in the page's language. */
export function relabelRoom() {
  relabelJoin();
  relabelLobby();
  if (session.chat) session.chat.relabel();
  const now = screen();
  if (now === "lobby" || now === "table") paint();
  if (now === "gone") paintDock(session, send);
}

/** Wires the room's lasting controls, once, at the page's start. */
export function setupRoom() {
  setupLobby(() => send({ type: "start" }), () => {
    if (session.room) openRules(session.room.settings);
  });
}
