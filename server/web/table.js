// The table: the other seats, the stock and the pile, this seat's hand drawn as cards, and the
// actions. Split along three lines: its state (table-state.js: the view, the hand's order, the
// marks), the player's input (table-input.js: clicks, keys and drags into messages or state) and
// its painting (table-paint.js and table-seats.js: the state into the page). This module puts
// them together and paints on each new view; what a seat may do comes from the view.

import { alertOn, turnAlert } from "./alert.js";
import { flightsFrom, flyEvents, motionAllowed } from "./fly.js";
import { TableState, myTurnOf } from "./table-state.js";
import { bindTableInput } from "./table-input.js";
import { buildTable, paintAlert, paintCommitment, paintTable } from "./table-paint.js";
import { paintSeats } from "./table-seats.js";
import { createClock } from "./table-clock.js";

/**
 * Builds the table into `root`.
 * @param {HTMLElement} root the table section
 * @param {object} hooks
 * @param {(msg: object) => void} hooks.send sends a play message
 * @param {(text: string) => void} hooks.notice shows a short message to the player
 * @param {() => void} hooks.rules opens How to play
 */
export function createTable(root, hooks) {
  const parts = buildTable(root);
  const state = new TableState();
  const clock = createClock(parts);

  const seats = () => paintSeats(parts, state, clock);
  const paint = () => {
    if (!state.view) return;
    seats();
    paintTable(parts, state);
    state.keep();
  };
  const destroy = bindTableInput(parts, state, hooks, { all: paint, seats });

  return {
    /** Shows a new view (and the room's seats and names). */
    render(view, room) {
      const before = state.view;
      // What moved since the last view, to fly it (the boxes are read before the redraw).
      const flights = before && before.round === view.round && view.log.length > before.log.length && motionAllowed()
        ? flightsFrom(parts, view.log.slice(before.log.length)) : null;
      const { wasMine } = state.update(view, room);
      paintCommitment(parts, room);
      paintAlert(parts);
      paint();
      if (flights) flyEvents(parts, view, flights);
      if (wasMine === false && myTurnOf(view) && alertOn()) turnAlert();
    },
    /** Forgets the hand order and the marks (a new match). */
    reset() {
      state.reset();
      clock.stop();
    },
    /** The hand as the player keeps it. */
    handOrder: () => [...state.order],
    /** Tears down the keyboard handler. */
    destroy() {
      destroy();
      clock.stop();
    },
  };
}
