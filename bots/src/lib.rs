//! Bot players for Dhumbal (Jhyap), and the arena that measures them.
//!
//! A bot sees exactly what a human in its seat sees: the engine's [`SeatView`] and the public
//! [`Event`]s of the table (those of the round so far in the [`PublicHistory`]). It never
//! receives the [`Game`](dhumbal_engine::Game), so it cannot read another seat's cards or the
//! stock's order: the types enforce that. Every bot is deterministic given its seed.
//!
//! # Layout
//!
//! - [`Bot`] and [`new_bot`] (this file) — the one interface the server and the arena use.
//! - [`easy`] — [`EasyBot`]: remembers nothing, throws its heaviest card or an obvious set, calls
//!   on the limit itself.
//! - [`medium`] — [`MediumBot`]: keeps pairs, throws the heaviest group, takes the pile when it
//!   helps, remembers recent pile pick-ups, calls 1 under the limit.
//! - [`hard`] — [`HardBot`]: counts every card, estimates each opponent's total, looks a turn
//!   ahead, calls 2 under the limit only when it is very likely the lightest.
//! - [`expert`] — [`ExpertBot`]: hard's draws and throws, searched by play-outs over samples of
//!   the hidden cards where hard finds several close; calls when the call's expected value, under
//!   a calibrated belief about every opponent's hand and the table's real penalty, beats holding
//!   on; weighs elimination and the last round's standing.
//! - [`coach`] — [`coach::advise`] and [`coach::review`]: the expert's judgement of a decision
//!   (a hint) and of every decision a seat made in a match, from that seat's view alone.
//! - [`belief`] — [`Belief`]: the distribution of each opponent's hand from public facts (known
//!   cards, unknown cards that lean low the longer it has thrown), fitted on recorded rounds.
//! - [`search`] — the expert's optional search: determinized play-outs of the rest of the round
//!   from samples of the hidden cards, comparing the moves hard judges close, paired.
//! - [`memory`] — [`Memory`]: what the public events tell a seat (cards gone, cards each opponent
//!   is known to hold, pick-ups), rebuilt from the public log whenever the events missed some.
//! - [`groups`] — which groups a hand can throw, and how much a hand can shed in one throw.
//! - [`turn`] — reading a [`SeatView`]: which half of the turn it is, what may be drawn.
//! - [`arena`] — playing bots against each other and the statistics the `arena` binary prints.
//!
//! # Example
//!
//! ```
//! use dhumbal_bots::new_bot;
//! use dhumbal_engine::{Difficulty, Game, Preset};
//!
//! let mut game = Game::new(Preset::Standard.settings(), [3; 32]).unwrap();
//! let mut bots: Vec<_> = (0..4).map(|s| new_bot(Difficulty::Hard, s)).collect();
//! while !game.is_over() {
//!     if !game.view(game.turn()).my_turn() {
//!         game.next_round().unwrap();
//!         continue;
//!     }
//!     let seat = game.turn();
//!     let action = bots[seat].choose(&game.view(seat), game.public_history());
//!     for event in game.apply(seat, action).unwrap() {
//!         for bot in &mut bots {
//!             bot.observe(&event);
//!         }
//!     }
//! }
//! ```

pub mod arena;
pub mod belief;
pub mod coach;
pub mod easy;
pub mod expert;
pub mod groups;
pub mod hard;
pub mod medium;
pub mod memory;
pub mod search;
pub mod turn;

use dhumbal_engine::{Action, Difficulty, Event, PublicHistory, SeatView};

pub use belief::Belief;
pub use easy::EasyBot;
pub use expert::ExpertBot;
pub use hard::HardBot;
pub use medium::MediumBot;
pub use memory::Memory;

/// A player that sees only what a human in its seat sees.
pub trait Bot: Send {
    /// How strong this bot is.
    fn difficulty(&self) -> Difficulty;

    /// A copy of this bot as it stands, to think on elsewhere (a server runs a slow decision on
    /// another thread and keeps the copy only if the table has not moved meanwhile).
    fn fork(&self) -> Box<dyn Bot>;

    /// Every public event of the table, in order (including its own actions and `Dealt`).
    fn observe(&mut self, event: &Event);

    /// Called only when `view.my_turn()`; returns one legal action. The caller applies it and
    /// calls again for the rest of the turn (a turn is two actions: draw+throw or throw+draw, or
    /// a call). `history` is the table's public history, from which a bot that missed some
    /// events (one that takes over a seat mid-round) catches up.
    fn choose(&mut self, view: &SeatView, history: &PublicHistory) -> Action;
}

/// A bot of this difficulty, deterministic given its seed.
pub fn new_bot(difficulty: Difficulty, seed: u64) -> Box<dyn Bot> {
    match difficulty {
        Difficulty::Easy => Box::new(EasyBot::new(seed)),
        Difficulty::Medium => Box::new(MediumBot::new(seed)),
        Difficulty::Hard => Box::new(HardBot::new(seed)),
        Difficulty::Expert => Box::new(ExpertBot::new(seed)),
    }
}
