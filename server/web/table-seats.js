// Painting the other seats at the table: each one's name, kind (a bot, a person, a stand-in), cards
// held, Total and latest turn, the seat whose turn it is, and, for the host, the menu on a
// person's seat (hand to a bot, remove). Pure painting: what the seats and the menu do when used
// is table-input.js's.

import { el, totalText } from "./dom.js";
import { label, t } from "./i18n.js";
import { lastTurns } from "./log.js";
import { roundOver } from "./table-state.js";
import { hostTag } from "./table-paint.js";

/**
 * Marks a person's seat as opening the host's menu (by click, Enter, Space or Down).
 * @param {HTMLElement} box the seat
 * @param {string} name its name
 * @param {boolean} open whether its menu is open
 * @param {HTMLElement} nameRow where the menu's mark goes
 */
function menuTrigger(box, name, open, nameRow) {
  box.classList.add("has-menu");
  box.tabIndex = 0;
  box.setAttribute("role", "button");
  box.setAttribute("aria-haspopup", "dialog");
  box.setAttribute("aria-expanded", String(open));
  // Its name is what it shows, after what it opens (an `aria-label` would leave out the words
  // on it).
  box.prepend(el("span", "sr-only seat-menu-name", `${t("host.menu", { name })}:`));
  const mark = el("span", "seat-menu-mark", "\u22ee");
  mark.setAttribute("aria-hidden", "true");
  nameRow.append(mark);
}

/** What kind of seat it is, under its name: a bot, a stand-in for a person, a person. */
function seatMeta(box, info, settings) {
  const meta = el("div", "seat-meta");
  const level = (d) => t(`difficulty.${d}`);
  if (info && info.kind === "bot") {
    meta.append(el("span", "", t("seat.botLevel", { level: level(info.difficulty || settings.difficulty) })));
  } else if (info && info.kind === "human" && info.stand_in) {
    // A stand-in plays this person's turns: away (or gone), or this one turn ran out.
    box.classList.add("stand-in");
    const badge = el("span", "bot-badge", "\u{1F916}");
    badge.setAttribute("role", "img");
    label(badge, "seat.botBadge", "aria-label");
    label(badge, "seat.botBadge", "title");
    const away = info.away || !info.connected;
    meta.append(badge, el("span", "", away ? t("seat.standIn", { level: level(info.stand_in) }) : t("seat.timedOutBot")));
  } else if (info && info.kind === "human" && !info.connected) {
    meta.append(el("span", "", t("seat.away")));
  } else {
    meta.append(el("span", "", t("lobby.player")));
  }
  if (info && info.muted) meta.append(el("span", "muted-tag", ` \u00b7 ${t("lobby.muted")}`));
  return meta;
}

/** One seat's box. */
function seatBox(state, s, lastTurn) {
  const { view, room } = state;
  const info = room && room.seats[s];
  const box = el("div", "seat");
  box.dataset.seat = String(s);
  const playing = view.turn === s && !roundOver(view);
  if (playing) box.classList.add("turn");
  if (view.eliminated[s]) box.classList.add("out");
  const name = el("div", "seat-name");
  const dot = el("span", `conn ${info && !info.connected ? "off" : "on"}`);
  dot.title = t(info && !info.connected ? "seat.away" : "seat.here");
  name.append(dot, el("span", "", state.seatName(s)));
  if (room && room.host === s) name.append(hostTag());
  if (s === view.dealer) name.append(el("span", "dealer", t("seat.dealerMark"), { title: t("seat.dealer") }));
  // Its cards and its Total on one line; then the latest turn (or "playing…", over which the
  // turn's clock shows), only when there is one: the box is as tall as what it says.
  const count = el("div", "seat-count");
  const backs = el("span", "backs");
  backs.setAttribute("aria-hidden", "true");
  for (let i = 0; i < Math.min(view.card_counts[s], 7); i += 1) backs.append(el("i"));
  const score = el("span", "seat-total", t("seat.total", { total: totalText(view.totals[s], view.settings) }));
  count.append(backs, el("span", "count", t("seat.cards", { count: view.card_counts[s] })), score);
  box.append(name, seatMeta(box, info, view.settings), count);
  const last = view.eliminated[s] ? el("div", "seat-turn", t("seat.out"))
    : playing ? el("div", "seat-turn", t("seat.playing"))
      : lastTurn ? el("div", "seat-last", lastTurn, { title: lastTurn }) : null;
  if (last) box.append(last);
  if (state.hostMay(info)) menuTrigger(box, state.seatName(s), Boolean(state.menu && state.menu.seat === s), name);
  return box;
}

/**
 * Draws the other seats in the order play goes, from the one after this page's, keeping the keyboard's place in the
 * host's menu or on a seat; then the open menu, then the turn's clock.
 * @param {object} parts the table's elements (`seats`)
 * @param {import("./table-state.js").TableState} state
 * @param {{paint: (view: object) => void}} clock
 */
export function paintSeats(parts, state, clock) {
  const { seats } = parts;
  const { view, menu } = state;
  const turns = lastTurns(view.log);
  const focused = seats.contains(document.activeElement) ? document.activeElement : null;
  if (menu && focused && focused.dataset.action && !menu.focus) menu.focus = focused.dataset.action;
  const focusSeat = focused && focused.classList.contains("seat") ? focused.dataset.seat : null;
  state.rebuilding = true;
  seats.replaceChildren();
  // Round the table in the order play goes (the server's `play_order`), from the seat after
  // this page's (a spectator's from seat 0).
  const n = view.card_counts.length;
  const order = view.play_order && view.play_order.length === n ? view.play_order : [...Array(n).keys()];
  const at = view.seat === null ? -1 : order.indexOf(view.seat);
  seats.style.setProperty("--others", String(Math.max(1, n - (view.seat === null ? 0 : 1))));
  for (let k = 1; k <= n; k += 1) {
    const s = order[(at + k) % n];
    if (s !== view.seat) seats.append(seatBox(state, s, turns[s]));
  }
  paintMenu(parts, state);
  clock.paint(view);
  if (focusSeat !== null && !seats.contains(document.activeElement)) {
    const again = seats.querySelector(`.seat[data-seat="${focusSeat}"]`);
    if (again && again.tabIndex === 0) again.focus({ preventScroll: true });
  }
  state.rebuilding = false;
}

/** The host's open menu under its seat, inside the row of seats (its items: `data-action`). */
function paintMenu(parts, state) {
  const { seats } = parts;
  const { menu, room } = state;
  if (!menu) return;
  const box = seats.querySelector(`.seat[data-seat="${menu.seat}"]`);
  const info = room && room.seats[menu.seat];
  if (!box || !state.hostMay(info)) {
    state.menu = null;
    return;
  }
  const name = state.seatName(menu.seat);
  const pop = el("div", "seat-menu", undefined, { id: "seat-menu" });
  pop.dataset.seat = String(menu.seat);
  pop.setAttribute("role", "dialog");
  pop.setAttribute("aria-label", t("host.menu", { name }));
  const item = (text, action, cls) => {
    const b = el("button", cls, text, { type: "button" });
    b.dataset.action = action;
    return b;
  };
  if (menu.confirm) {
    const ask = el("p", "seat-menu-text", t("host.removeConfirm", { name }), { id: "seat-menu-ask" });
    pop.setAttribute("aria-describedby", ask.id);
    pop.append(ask, item(t("host.removeYes", { name }), "remove-yes", "danger"), item(t("host.cancel"), "cancel", ""));
  } else {
    pop.append(el("p", "seat-menu-title", name));
    if (info.away) pop.append(el("p", "seat-menu-text", t("host.alreadyBot", { name })));
    else pop.append(item(t("host.handToBot"), "hand", ""));
    pop.append(item(t("host.remove"), "remove", "danger-outline"));
  }
  seats.append(pop);
  // Under its seat, and never wider than the row (a phone must not scroll sideways).
  const left = Math.max(0, Math.min(box.offsetLeft, seats.clientWidth - pop.offsetWidth));
  pop.style.left = `${left}px`;
  pop.style.top = `${box.offsetTop + box.offsetHeight + 4}px`;
  const want = menu.focus;
  menu.focus = null;
  const items = [...pop.querySelectorAll("button")];
  const target = want === "first" ? items[0] : items.find((b) => b.dataset.action === want);
  if (target) target.focus({ preventScroll: true });
}
