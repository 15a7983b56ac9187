// The WebSocket connection to the server, as `docs/protocol.md` describes it: the room's socket is
// `/ws/{code}` (so that a load balancer can route it by the code) and its first message is
// `hello`; after a drop the client comes back with its seat token, trying again with a growing
// pause (at once when the room moved to another server), and tells the page so it can show
// "reconnecting…" (or, after several failed attempts or offline, that it cannot reach the server).
// A quiet socket is asked with `ping` (the server answers `pong`), and one that does not answer
// within a few seconds has stalled: it is dropped and opened again. Coming back to the foreground,
// the page asks at once.
//
// Where the browser can inflate a raw DEFLATE stream (`DecompressionStream`), the socket asks for
// `?compress=deflate-raw`: the server's messages then come as binary frames of one compressed
// stream, each frame one or more messages ending in newlines, about a seventh of their size.

/** The protocol version this client speaks. */
export const PROTOCOL = 6;

/** After this long without a message the page asks the server whether it is there (`ping`). */
const QUIET_MS = 2500;

/** A `ping` unanswered this long (nothing at all heard since) means the connection has stalled:
 * the socket is dropped and opened again. */
const STALL_MS = 3000;

/** When the page comes back to the foreground it asks at once, and waits this long for any
 * answer before it opens a new socket. */
const WAKE_MS = 2500;

/** After this many failed attempts in a row the page says plainly that it cannot reach the
 * server (instead of only "Reconnecting…"). */
const UNREACHABLE_AFTER = 3;

/** The close code the server uses when another connection takes this seat. */
export const CLOSE_REPLACED = 4001;

/** The close code of a room that closed because its match never started. */
export const CLOSE_ROOM_EXPIRED = 4004;

/** The close code sent to a person the host removed from the room. */
export const CLOSE_REMOVED = 4005;

/** The close code sent to a watcher when the host turns watching off. */
export const CLOSE_WATCHING_OFF = 4007;

/** The close code of a room that moved to another server of a cluster: come back at once. */
export const CLOSE_ROOM_MOVED = 4006;

/** A moved room is rejoined at once unless it moved this recently before (a room that keeps
 * moving is retried with the usual growing pause instead, not in a tight loop). */
const MOVED_AGAIN_MS = 5000;

/** Whether this browser can inflate a raw DEFLATE stream, so the socket may be compressed. */
const CAN_INFLATE = (() => {
  try {
    new DecompressionStream("deflate-raw");
    return true;
  } catch {
    return false;
  }
})();

/** The four bytes every frame's sync flush ends with, which the server leaves off each frame. */
const FLUSH_TAIL = new Uint8Array([0x00, 0x00, 0xff, 0xff]);

/** An empty last block: written when the socket closes, it ends the stream cleanly, so that
 * everything before it is read out. */
const LAST_BLOCK = new Uint8Array([0x01, 0x00, 0x00, 0xff, 0xff]);

/**
 * One socket's compressed stream, read in order: each frame's bytes go in, and each whole line
 * that comes out is one server message.
 */
class Inflater {
  /**
   * @param {(text: string) => void} line called with each message's text, in order
   * @param {() => void} failed called if the stream cannot be inflated (it never should be)
   */
  constructor(line, failed) {
    /** Whether the socket has closed (a failure after that is the close's own). */
    this.ended = false;
    const stream = new DecompressionStream("deflate-raw");
    this.writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    const decoder = new TextDecoder();
    /** Resolves once everything written has been read out (or the stream has failed). */
    this.done = (async () => {
      let rest = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        rest += decoder.decode(value, { stream: true });
        let end = rest.indexOf("\n");
        while (end >= 0) {
          line(rest.slice(0, end));
          rest = rest.slice(end + 1);
          end = rest.indexOf("\n");
        }
      }
    })().catch(() => {
      if (!this.ended) failed();
    });
  }

  /** @param {ArrayBuffer} frame the next binary frame */
  push(frame) {
    this.writer.write(new Uint8Array(frame)).catch(() => {});
    this.writer.write(FLUSH_TAIL).catch(() => {});
  }

  /** Ends the stream; resolves once every message in it has been handed on. */
  end() {
    this.ended = true;
    this.writer.write(LAST_BLOCK).catch(() => {});
    this.writer.close().catch(() => {});
    return this.done;
  }
}

/** A connection to one room that reconnects by itself until closed. */
export class Connection {
  /**
   * @param {string} code the room's code (the socket is `/ws/{code}`)
   * @param {object} handlers
   * @param {() => object} handlers.hello builds the `hello` to send on every (re)connect
   * @param {(msg: object) => void} handlers.message a server message
   * @param {(away: boolean, unreachable: boolean) => void} handlers.status whether the
   *   connection is down, and whether the server has been out of reach for several attempts
   * @param {() => void} handlers.replaced the seat was taken by another connection (another tab)
   * @param {(code: number) => void} handlers.ended the room is gone for this client (it expired,
   *   or the host removed this person): coming back would not help
   */
  constructor(code, handlers) {
    this.path = `/ws/${encodeURIComponent(code)}`;
    this.handlers = handlers;
    this.socket = null;
    this.closed = false;
    this.retries = 0;
    this.nextId = 1;
    this.timer = null;
    this.movedAt = -Infinity;
    /** When anything was last heard on the socket (`performance.now()`). */
    this.heard = 0;
    /** When the unanswered `ping` was sent, if one is out; and how long it may wait. */
    this.pinged = null;
    this.patience = STALL_MS;
    this.watch = null;
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.check(WAKE_MS);
    });
    // Back on a network: try again now rather than at the end of the pause.
    window.addEventListener("online", () => {
      if (!this.closed && this.socket === null) this.open();
    });
  }

  /**
   * Asks the server whether it is there (a `ping`, answered with `pong`), expecting an answer
   * within `patience` ms; a socket that is down is opened again at once.
   */
  check(patience) {
    if (this.closed) return;
    if (this.socket === null) {
      this.open();
      return;
    }
    if (!this.up) return;
    if (this.pinged === null) {
      this.pinged = performance.now();
      this.patience = patience;
      this.send({ type: "ping" });
    } else {
      this.patience = Math.min(this.patience, patience);
    }
  }

  /** Once a second: a quiet socket is asked, and one that does not answer is dropped. */
  tick() {
    if (!this.up) return;
    const now = performance.now();
    if (this.pinged !== null && now - this.pinged > this.patience) {
      this.drop();
    } else if (this.pinged === null && now - this.heard > QUIET_MS) {
      this.check(STALL_MS);
    }
  }

  /**
   * Gives up on a socket that has stalled (nothing heard, not even a `pong`): it may never
   * close by itself, so it is left behind and a new one is opened, as after a close.
   */
  drop() {
    const socket = this.socket;
    if (socket === null) return;
    this.socket = null;
    try {
      socket.close();
    } catch {
      // Closing a socket that never opened throws in some browsers; it is gone all the same.
    }
    this.lost(0);
  }
  /** Opens the socket (again). */
  open() {
    this.closed = false;
    clearTimeout(this.timer);
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const query = CAN_INFLATE ? "?compress=deflate-raw" : "";
    const socket = new WebSocket(`${scheme}//${location.host}${this.path}${query}`);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    this.pinged = null;
    clearInterval(this.watch);
    this.watch = setInterval(() => this.tick(), 1000);
    // A stream that cannot be inflated would leave the page hearing frames and reading nothing:
    // it is given up like a stalled socket, and a new one opened.
    const inflater = CAN_INFLATE
      ? new Inflater(
          (text) => this.received(socket, text),
          () => {
            if (this.socket === socket) this.drop();
          },
        )
      : null;
    socket.addEventListener("open", () => {
      this.heard = performance.now();
      socket.send(JSON.stringify(this.handlers.hello()));
    });
    socket.addEventListener("message", (event) => {
      if (this.socket !== socket) return;
      // Anything heard answers the ping: the connection is alive.
      this.heard = performance.now();
      this.pinged = null;
      if (typeof event.data === "string") this.received(socket, event.data);
      else if (inflater !== null) inflater.push(event.data);
    });
    socket.addEventListener("close", async (event) => {
      // What came before the close is handled first (a compressed stream is read out).
      if (inflater !== null) await inflater.end();
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.closed) return;
      if (event.code === CLOSE_REPLACED) {
        // Another window took this seat with the same token: coming back would take it again,
        // and the two would take turns forever. Wait for the player to choose.
        this.closed = true;
        this.handlers.replaced();
        return;
      }
      if (event.code === CLOSE_ROOM_EXPIRED || event.code === CLOSE_REMOVED || event.code === CLOSE_WATCHING_OFF) {
        this.closed = true;
        this.handlers.ended(event.code);
        return;
      }
      this.lost(event.code);
    });
  }

  /** One server message's text, heard on `socket`. */
  received(socket, text) {
    if (this.socket !== socket) return;
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    // Back in the room: the pause before the next reconnection starts short again. (Not at
    // the socket's opening: a hello refused for a while, `store_unavailable`, keeps growing it.)
    if (msg.type === "welcome") this.retries = 0;
    if (msg.type === "pong") return;
    this.handlers.message(msg);
  }

  /** The socket is gone (closed with `code`, or dropped as stalled): says so and comes back. */
  lost(code) {
    clearInterval(this.watch);
    this.pinged = null;
    // Offline, or several attempts in a row have failed: say plainly that the server cannot be
    // reached; otherwise "Reconnecting…".
    const unreachable = !navigator.onLine || this.retries >= UNREACHABLE_AFTER;
    this.handlers.status(true, unreachable);
    // A growing pause with jitter: after a restart, every page comes back, not all at once.
    const base = Math.min(5000, 400 * 2 ** this.retries);
    let delay = base / 2 + Math.random() * (base / 2);
    // The room moved to another server, which is up: back at once (within 0.1 s, so that a
    // moved server's pages do not all arrive in the same instant).
    const now = Date.now();
    if (code === CLOSE_ROOM_MOVED && now - this.movedAt > MOVED_AGAIN_MS) {
      this.movedAt = now;
      delay = Math.random() * 100;
    }
    this.retries += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
  }

  /** Whether the socket is open. */
  get up() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  /**
   * Sends a message with a fresh `id`, so an `error` answering it can be matched.
   * @returns {number|null} the id, or null when the connection is down
   */
  send(message) {
    if (!this.up) return null;
    const id = this.nextId;
    this.nextId += 1;
    this.socket.send(JSON.stringify({ ...message, id }));
    return id;
  }

  /** Closes the socket for good. */
  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.watch);
    if (this.socket) this.socket.close();
    this.socket = null;
  }
}
