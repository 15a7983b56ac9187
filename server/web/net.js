// The WebSocket connection to the server, as `docs/protocol.md` describes it: the room's socket is
// `/ws/{code}` (so that a load balancer can route it by the code) and its first message is
// `hello`; after a drop the client comes back with its seat token, trying again with a growing
// pause (at once when the room moved to another server), and tells the page so it can show
// "reconnecting…".

/** The protocol version this client speaks. */
export const PROTOCOL = 4;

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

/** A connection to one room that reconnects by itself until closed. */
export class Connection {
  /**
   * @param {string} code the room's code (the socket is `/ws/{code}`)
   * @param {object} handlers
   * @param {() => object} handlers.hello builds the `hello` to send on every (re)connect
   * @param {(msg: object) => void} handlers.message a server message
   * @param {(away: boolean) => void} handlers.status whether the connection is down
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
  }

  /** Opens the socket (again). */
  open() {
    this.closed = false;
    clearTimeout(this.timer);
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${location.host}${this.path}`);
    this.socket = socket;
    socket.addEventListener("open", () => {
      socket.send(JSON.stringify(this.handlers.hello()));
    });
    socket.addEventListener("message", (event) => {
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      // Back in the room: the pause before the next reconnection starts short again. (Not at
      // the socket's opening: a hello refused for a while, `store_unavailable`, keeps growing it.)
      if (msg.type === "welcome") this.retries = 0;
      this.handlers.message(msg);
    });
    socket.addEventListener("close", (event) => {
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
      this.handlers.status(true);
      // A growing pause with jitter: after a restart, every page comes back, not all at once.
      const base = Math.min(5000, 400 * 2 ** this.retries);
      let delay = base / 2 + Math.random() * (base / 2);
      // The room moved to another server, which is up: back at once (within 0.1 s, so that a
      // moved server's pages do not all arrive in the same instant).
      const now = Date.now();
      if (event.code === CLOSE_ROOM_MOVED && now - this.movedAt > MOVED_AGAIN_MS) {
        this.movedAt = now;
        delay = Math.random() * 100;
      }
      this.retries += 1;
      this.timer = setTimeout(() => this.open(), delay);
    });
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
    if (this.socket) this.socket.close();
    this.socket = null;
  }
}
