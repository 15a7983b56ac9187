// What this browser keeps between visits: `localStorage` (this device: the seat in each room, the
// last name typed, choices such as the turn alert) and `sessionStorage` (this tab: the hand's
// order). Every read and write goes through here, so that a browser that refuses storage
// (private browsing) only forgets, never fails.

/**
 * One storage area, read and written without ever throwing.
 * @param {() => Storage} area
 */
function keeper(area) {
  return {
    /** The text kept under `key`, or null. */
    get(key) {
      try {
        return area().getItem(key);
      } catch {
        return null;
      }
    },
    /** Keeps `value` (text) under `key`, where the browser lets the page. */
    set(key, value) {
      try {
        area().setItem(key, value);
      } catch {
        // Storage refused: the value then lasts as long as the page.
      }
    },
    /** Forgets `key`. */
    remove(key) {
      try {
        area().removeItem(key);
      } catch {
        // As above.
      }
    },
    /** The JSON value kept under `key`, or null (also for text that is not JSON). */
    getJson(key) {
      try {
        return JSON.parse(area().getItem(key));
      } catch {
        return null;
      }
    },
    /** Keeps a JSON value under `key`. */
    setJson(key, value) {
      this.set(key, JSON.stringify(value));
    },
  };
}

/** This device's storage. */
export const device = keeper(() => localStorage);

/** This tab's storage. */
export const tab = keeper(() => sessionStorage);

const roomKey = (code) => `dhumbal.room.${code}`;
const NAME_KEY = "dhumbal.name";

/**
 * What this device keeps for a room: the name used there and its seat token or host secret.
 * @param {string} code
 * @returns {{name?: string, token?: string|null, host_secret?: string}}
 */
export function storedRoom(code) {
  return device.getJson(roomKey(code)) || {};
}

/** Keeps what this device knows of a room (see {@link storedRoom}). */
export function storeRoom(code, data) {
  device.setJson(roomKey(code), data);
}

/** Forgets this device's seat in a room. */
export function forgetRoom(code) {
  device.remove(roomKey(code));
}

/** The name last typed on this device, or "". */
export function lastName() {
  return device.get(NAME_KEY) || "";
}

/** Remembers the name typed, for the next form. */
export function rememberName(name) {
  device.set(NAME_KEY, name);
}

/**
 * A yes-or-no choice kept on this device.
 * @param {string} key
 * @param {boolean} fallback what it is when nothing is kept
 */
export function flag(key, fallback) {
  const v = device.get(key);
  return v === null ? fallback : v === "true";
}

/** Keeps a yes-or-no choice on this device. */
export function setFlag(key, value) {
  device.set(key, String(value));
}
