// The table's chat and quick reactions: the lines (name: text, always as text, never as markup),
// a one-line input for the seated, a row of six reactions for everyone, and a bubble beside the
// seat that reacted. On a phone the panel folds to one bar (with an unread count) below the hand
// and the actions, so it never covers them; "Hide chat" (remembered on this device) hides every
// line and count, and reactions still show.
import { el, button, seatName } from "./dom.js";
import { label, t, translate } from "./i18n.js";
import { flag, setFlag } from "./storage.js";

/**
 * The reactions the server knows, in the order of the row, with what each looks like; each one's
 * name is the message `reaction.ID`.
 */
export const REACTIONS = [
  { id: "thumbs_up", emoji: "\u{1F44D}" },
  { id: "laugh", emoji: "\u{1F602}" },
  { id: "wow", emoji: "\u{1F62E}" },
  { id: "sad", emoji: "\u{1F622}" },
  { id: "fire", emoji: "\u{1F525}" },
  { id: "clap", emoji: "\u{1F44F}" },
];

/** A reaction's name in the page's language. */
const reactionName = (id) => t(`reaction.${id}`);

/** The most characters a line may hold (the server counts after trimming). */
export const CHAT_MAX = 200;

/** How long a reaction shows, in milliseconds. */
const REACTION_MS = 3000;

/** How many lines the panel keeps (the server sends at most 50 on arrival). */
const KEEP_LINES = 200;

const HIDDEN_KEY = "dhumbal.chat.hidden";
const OPEN_KEY = "dhumbal.chat.open";

/**
 * Builds the chat panel (not yet on the page: see `mount`).
 * @param {object} hooks
 * @param {(msg: object) => void} hooks.send sends a message to the server
 * @returns the panel's controls: `mount`, `update`, `welcome`, `line`, `reaction`, `decorate`,
 *   `relabel`, `refused`
 */
export function createChat(hooks) {
  const root = el("section", "chat");
  root.id = "chat";
  label(root, "chat.panel", "aria-label");

  const head = el("div", "chat-head");
  const toggle = el("button", "chat-toggle");
  toggle.type = "button";
  toggle.id = "chat-toggle";
  const toggleText = el("span", "");
  const unread = el("span", "chat-unread");
  unread.id = "chat-unread";
  unread.hidden = true;
  toggle.append(toggleText, unread);
  const hiddenNote = label(el("span", "chat-hidden-note"), "chat.hiddenNote");
  const hideButton = button("", "chat-hide", () => setHidden(!hidden));
  hideButton.id = "chat-hide";
  head.append(toggle, hiddenNote, hideButton);

  const body = el("div", "chat-body");
  body.id = "chat-body";
  const lines = el("ol", "chat-lines");
  lines.id = "chat-lines";
  label(lines, "chat.title", "aria-label");
  lines.setAttribute("aria-live", "polite");
  lines.tabIndex = 0;
  const empty = label(el("p", "chat-empty"), "chat.empty");
  const mutedNote = label(el("p", "chat-muted"), "error.muted");
  mutedNote.id = "chat-muted";
  mutedNote.hidden = true;
  const form = el("form", "chat-form");
  form.id = "chat-form";
  const input = el("input");
  input.id = "chat-input";
  input.maxLength = CHAT_MAX;
  input.autocomplete = "off";
  input.enterKeyHint = "send";
  input.placeholder = t("chat.placeholder");
  label(input, "chat.input", "aria-label");
  const sendButton = label(el("button", "primary"), "chat.send");
  sendButton.type = "submit";
  sendButton.id = "chat-send";
  form.append(input, sendButton);
  // The host's Mute / Unmute for each other person at the table (the lobby's seat list has its own).
  const moderation = el("div", "chat-moderation");
  moderation.id = "chat-moderation";
  moderation.hidden = true;
  body.append(lines, empty, mutedNote, form, moderation);

  const row = el("div", "reactions");
  row.id = "reactions";
  row.setAttribute("role", "group");
  label(row, "chat.reactions", "aria-label");
  for (const r of REACTIONS) {
    const b = button(r.emoji, "reaction-button", () => hooks.send({ type: "react", reaction: r.id }));
    b.dataset.reaction = r.id;
    label(b, `reaction.${r.id}`, "title");
    label(b, `reaction.${r.id}`, "aria-label");
    row.append(b);
  }
  // Reactions of people without a seat on the table (spectators), shown here for a moment.
  const loose = el("div", "loose-reactions");
  loose.id = "loose-reactions";
  loose.setAttribute("aria-live", "polite");

  root.append(head, body, row, loose);

  let hidden = flag(HIDDEN_KEY, false);
  let open = flag(OPEN_KEY, window.matchMedia("(min-width: 800px)").matches);
  let count = 0;
  let room = null;
  let me = null;
  let isHost = false;
  let lastSent = null;
  /** The reactions showing now, by seat: `{ emoji, id, name, key, timer, since }`. */
  const showing = new Map();

  function paintChrome() {
    root.classList.toggle("open", open);
    root.classList.toggle("hidden-chat", hidden);
    toggle.setAttribute("aria-expanded", String(open && !hidden));
    toggle.setAttribute("aria-controls", "chat-body");
    toggle.hidden = hidden;
    hiddenNote.hidden = !hidden;
    toggleText.textContent = `${t("chat.title")} ${open ? "\u25be" : "\u25b8"}`;
    hideButton.textContent = t(hidden ? "chat.show" : "chat.hide");
    hideButton.setAttribute("aria-pressed", String(hidden));
    body.hidden = hidden || !open;
    if (open && !hidden) count = 0;
    unread.hidden = hidden || count === 0;
    unread.textContent = count > 99 ? "99+" : String(count);
    unread.setAttribute("aria-label", t("chat.unread", { count }));
    empty.hidden = lines.childElementCount > 0;
  }

  function setHidden(value) {
    hidden = value;
    setFlag(HIDDEN_KEY, hidden);
    if (hidden) count = 0;
    paintChrome();
  }

  toggle.addEventListener("click", () => {
    open = !open;
    setFlag(OPEN_KEY, open);
    paintChrome();
    if (open) scrollDown();
  });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || input.disabled) return;
    lastSent = text;
    hooks.send({ type: "chat", text });
    input.value = "";
  });

  function scrollDown() {
    lines.scrollTop = lines.scrollHeight;
  }

  function lineElement(line) {
    const li = el("li", "chat-line");
    if (line.seat !== null && line.seat !== undefined) li.dataset.seat = String(line.seat);
    if (line.seat !== null && line.seat === me) li.classList.add("own");
    li.append(el("b", "chat-name", line.name), el("span", "chat-sep", ": "), el("span", "chat-text", line.text));
    return li;
  }

  function append(line) {
    const atEnd = lines.scrollHeight - lines.scrollTop - lines.clientHeight < 24;
    lines.append(lineElement(line));
    while (lines.childElementCount > KEEP_LINES) lines.firstElementChild.remove();
    if (atEnd || line.seat === me) scrollDown();
  }

  function paintModeration() {
    moderation.replaceChildren();
    const people = room && isHost && room.stage !== "lobby"
      ? room.seats.filter((s) => s.kind === "human" && s.seat !== me)
      : [];
    moderation.hidden = people.length === 0;
    if (people.length === 0) return;
    moderation.append(el("span", "chat-moderation-label", t("chat.moderation")));
    for (const s of people) {
      const name = seatName(s);
      const b = button(t(s.muted ? "chat.unmuteName" : "chat.muteName", { name }), "mute", () => hooks.send({ type: "mute", seat: s.seat, muted: !s.muted }));
      b.dataset.seat = String(s.seat);
      b.setAttribute("aria-pressed", String(Boolean(s.muted)));
      moderation.append(b);
    }
  }

  /** Where seat `seat` shows on the screen now: its box at the table (or the hand's, for this
   * page's own seat), or its row in the lobby. */
  function placesFor(seat) {
    const css = `#seats .seat[data-seat="${seat}"], #table > .mine[data-seat="${seat}"], #lobby-seats .lobby-seat[data-seat="${seat}"]`;
    return [...document.querySelectorAll(css)].filter((p) => !p.closest("[hidden]"));
  }

  /** Puts the bubble of every reaction showing now beside its seat, and takes away the others. */
  function decorate() {
    for (const old of document.querySelectorAll(".reaction-bubble")) {
      const seat = Number(old.dataset.seat);
      if (!showing.has(seat) || old.dataset.key !== showing.get(seat).key) old.remove();
    }
    for (const [seat, r] of showing) {
      for (const place of placesFor(seat)) {
        if (place.querySelector(`.reaction-bubble[data-key="${r.key}"]`)) continue;
        const bubble = el("span", "reaction-bubble", r.emoji);
        bubble.dataset.seat = String(seat);
        bubble.dataset.key = r.key;
        bubble.setAttribute("role", "img");
        bubble.setAttribute("aria-label", `${r.name}: ${reactionName(r.id)}`);
        bubble.title = r.name;
        // A seat drawn again mid-reaction: the bubble goes on from where it was.
        bubble.style.animationDelay = `-${Date.now() - r.since}ms`;
        place.append(bubble);
      }
    }
  }

  let keys = 0;
  let muted = false;
  /** The input's placeholder: what to write, or why not. */
  const paintInput = () => {
    input.placeholder = t(muted ? "chat.mutedPlaceholder" : "chat.placeholder");
  };
  paintChrome();

  return {
    /** Puts the panel at the end of `parent` (the lobby or the table), if it is not there yet. */
    mount(parent) {
      if (root.parentElement !== parent) parent.append(root);
    },
    /**
     * Follows the room: who may write (a spectator may not; a muted person sees why), and the
     * host's Mute buttons at the table.
     */
    update(newRoom, host) {
      room = newRoom;
      me = room.your_seat === undefined ? null : room.your_seat;
      isHost = Boolean(host);
      const seat = me === null ? null : room.seats[me];
      muted = Boolean(seat && seat.muted);
      form.hidden = me === null;
      input.disabled = muted;
      sendButton.disabled = muted;
      paintInput();
      mutedNote.hidden = !muted || me === null;
      root.classList.toggle("muted", muted);
      root.classList.toggle("watching", me === null);
      paintModeration();
      paintChrome();
    },
    /** Shows the conversation so far (from `welcome`, on arrival and after every reconnect). */
    welcome(chatLines) {
      lines.replaceChildren();
      for (const line of chatLines || []) append(line);
      scrollDown();
      paintChrome();
    },
    /** One new line. */
    line(line) {
      append(line);
      if (line.seat !== null && line.seat === me && line.text === lastSent) lastSent = null;
      if (!hidden && (!open || root.parentElement === null) && line.seat !== me) count += 1;
      paintChrome();
    },
    /** Shows someone's reaction for a moment beside their seat (a spectator's, in the panel). */
    reaction(msg) {
      const r = REACTIONS.find((x) => x.id === msg.reaction);
      if (!r) return;
      keys += 1;
      const key = String(keys);
      const seated = msg.seat !== null && msg.seat !== undefined && placesFor(msg.seat).length > 0;
      if (seated) {
        const before = showing.get(msg.seat);
        if (before) clearTimeout(before.timer);
        const timer = setTimeout(() => {
          if (showing.get(msg.seat) && showing.get(msg.seat).key === key) showing.delete(msg.seat);
          decorate();
        }, REACTION_MS);
        showing.set(msg.seat, { emoji: r.emoji, id: r.id, name: msg.name, key, timer, since: Date.now() });
        decorate();
        return;
      }
      const item = el("span", "loose-reaction");
      item.append(el("span", "loose-name", msg.name), el("span", "loose-emoji", ` ${r.emoji}`));
      item.setAttribute("aria-label", `${msg.name}: ${reactionName(r.id)}`);
      loose.append(item);
      while (loose.childElementCount > 4) loose.firstElementChild.remove();
      setTimeout(() => item.remove(), REACTION_MS);
    },
    /** Draws the reactions showing now again (after the seats were drawn again). */
    decorate,
    /** Draws the panel's words again in the page's language. */
    relabel() {
      // The panel may be off the page (before the lobby), out of reach of i18n's own pass.
      translate(root);
      paintInput();
      paintModeration();
      paintChrome();
    },
    /**
     * A refused message: when it was this page's chat line (too long, muted, too fast), puts the
     * text back in the input so that it is not lost.
     */
    refused(code) {
      if (!["bad_chat", "muted", "rate_limited", "not_seated"].includes(code) || lastSent === null) return;
      if (!input.value) input.value = lastSent;
      lastSent = null;
    },
  };
}
