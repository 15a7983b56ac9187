// The turn's clock at a table with a turn timer: on the seat whose turn it is (this page's own at
// the top of the hand's area), a bar that empties and the seconds left, urgent in the last 5. Its
// room is kept at every seat of a timed table, so nothing moves when it comes or goes.

import { el } from "./dom.js";
import { t } from "./i18n.js";
import { roundOver } from "./table-state.js";

/** The milliseconds left on a clock (`{at, left_ms}`: what the server said, and when it came). */
const remaining = (c) => Math.max(0, c.at + c.left_ms - performance.now());

/**
 * The table's clock.
 * @param {object} parts the table's elements (`root`, `mine`, `seats`)
 * @returns {{paint: (view: object) => void, stop: () => void}}
 */
export function createClock(parts) {
  const { root, mine, seats } = parts;
  let ticker = null;
  let view = null;

  function stop() {
    if (ticker) clearInterval(ticker);
    ticker = null;
  }

  function tick() {
    const c = view && view.clock;
    const clocks = root.querySelectorAll(".turn-clock");
    if (!c || clocks.length === 0) {
      stop();
      return;
    }
    const left = remaining(c);
    const secs = Math.ceil(left / 1000);
    for (const clock of clocks) {
      // Whole seconds, for a bar that must not glide (prefers-reduced-motion).
      clock.style.setProperty("--left", String(Math.min(1, (secs * 1000) / c.total_ms)));
      if (clock.dataset.seconds !== String(secs)) {
        clock.dataset.seconds = String(secs);
        clock.querySelector(".turn-clock-secs").textContent = t("timer.seconds", { count: secs });
        clock.setAttribute("aria-label", t("clock.aria", { count: secs }));
      }
      const urgent = left <= 5000;
      clock.classList.toggle("urgent", urgent);
      clock.parentElement.classList.toggle("clock-urgent", urgent);
    }
    if (left <= 0) stop();
  }

  /** Puts the clock on the seats just drawn (or on this page's own). */
  function paint(newView) {
    view = newView;
    root.classList.toggle("timed", Boolean(view.settings.turn_timer));
    for (const old of mine.querySelectorAll(":scope > .turn-clock")) old.remove();
    mine.classList.remove("clock-urgent");
    const c = view.clock;
    const place = !c || roundOver(view) ? null
      : c.seat === view.seat ? mine : seats.querySelector(`.seat[data-seat="${c.seat}"]`);
    if (!place) {
      stop();
      return;
    }
    const clock = el("div", "turn-clock");
    clock.setAttribute("role", "timer");
    clock.dataset.seat = String(c.seat);
    const bar = el("span", "turn-clock-bar");
    const fill = el("i");
    // The bar goes on from where the clock stands now, however often the seat is drawn again.
    fill.style.animationDuration = `${c.total_ms}ms`;
    fill.style.animationDelay = `-${Math.max(0, c.total_ms - remaining(c))}ms`;
    bar.append(fill);
    clock.append(bar, el("span", "turn-clock-secs"));
    place.append(clock);
    tick();
    if (!ticker && remaining(c) > 0) ticker = setInterval(tick, 200);
  }

  return { paint, stop };
}
