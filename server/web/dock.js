// The dock at the bottom of the table's screen: while a stand-in plays this page's seat, a banner
// saying why (with I'm back when the seat is marked away); once the seat is back, what the
// stand-in did until it is dismissed. It floats over the page (the page gets room at its bottom),
// so nothing on the table moves.

import { $, button, el, setText } from "./dom.js";
import { t } from "./i18n.js";
import { moveText } from "./log.js";

/** What a stand-in did for this page's seat (a `while_away`), in a sentence or three. */
function whileAwayText(away) {
  const moves = [];
  for (const e of away.events || []) {
    const text = e.type === "drew_from_stock" ? t("away.drew") : moveText(e);
    if (text) moves.push(text);
  }
  const MAX = 8;
  const listed = moves.length > MAX ? [...moves.slice(0, MAX), t("away.more", { count: moves.length - MAX })] : moves;
  const parts = [t("away.turns", { count: away.turns })];
  if (listed.length > 0) parts.push(t("away.moves", { moves: listed.join(", ") }));
  if (away.rounds_ended > 0) parts.push(t("away.rounds", { count: away.rounds_ended }));
  return parts.join(" ");
}

/** Gives the page room at its bottom for the dock, so that it covers nothing for good. */
function fitDock() {
  const dock = $("dock");
  const height = dock && !dock.hidden ? dock.offsetHeight : 0;
  document.body.classList.toggle("docked", height > 0);
  document.body.style.setProperty("--dock-height", `${height}px`);
}

/** The dock, made the first time. */
function theDock() {
  let dock = $("dock");
  if (!dock) {
    dock = el("div", "dock", undefined, { id: "dock", hidden: true });
    document.body.append(dock);
    if (window.ResizeObserver) new ResizeObserver(fitDock).observe(dock);
  }
  return dock;
}

/** Which words the stand-in's banner says now (`standIn.*`, `prompt.standIn`), or null. */
function standInKey(session, seat, covered) {
  const room = session.room;
  if (!covered || document.body.dataset.screen !== "table" || room.stage !== "playing") return null;
  if (session.standIn.back) return "standIn.backSoon";
  if (seat.away) return "standIn.away";
  if (session.standIn.timedOut) return "standIn.timedOut";
  return "prompt.standIn";
}

/**
 * Paints the dock from the room's session.
 * @param {object} session the room's state (session.js): `room`, `standIn`, `whileAway`
 * @param {(msg: object) => void} send sends a message to the server
 */
export function paintDock(session, send) {
  const dock = theDock();
  const room = session.room;
  const me = room ? room.your_seat : null;
  const seat = room && me !== null && me !== undefined ? room.seats[me] : null;
  const covered = Boolean(seat && seat.kind === "human" && seat.stand_in);
  if (session.standIn.covered && !covered) {
    session.standIn.timedOut = false;
    session.standIn.back = false;
  }
  session.standIn.covered = covered;
  if (!room || room.stage === "lobby") session.whileAway = null;
  const atTable = document.body.dataset.screen === "table";

  const key = standInKey(session, seat, covered);
  let bar = $("stand-in-banner");
  if (key && !bar) {
    bar = el("div", "stand-in-banner", undefined, { id: "stand-in-banner" });
    bar.setAttribute("role", "status");
    const icon = el("span", "stand-in-icon", "\u{1F916}");
    icon.setAttribute("aria-hidden", "true");
    const back = button("", "primary", () => {
      session.standIn.back = true;
      send({ type: "back" });
      paintDock(session, send);
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

  const summary = session.whileAway && atTable && !covered ? whileAwayText(session.whileAway) : null;
  let box = $("while-away");
  if (summary && !box) {
    box = el("section", "while-away", undefined, { id: "while-away" });
    box.setAttribute("role", "status");
    box.setAttribute("aria-labelledby", "while-away-title");
    const ok = button("", "", () => {
      session.whileAway = null;
      paintDock(session, send);
    });
    ok.id = "while-away-ok";
    box.append(el("h2", "", undefined, { id: "while-away-title" }), el("p", "while-away-text"), ok);
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
