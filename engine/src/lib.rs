//! The rules engine of Dhumbal (Jhyap), the Nepali least-count card game.
//!
//! Pure and deterministic: no IO, no async, no clock, no global randomness. Everything random
//! flows from a seed the caller passes, so the same seed and the same actions give the same game.
//!
//! With the `schemars` feature every type that travels on the wire (cards, settings, views,
//! events, results) also describes itself as JSON Schema, for the protocol's schema. With the
//! `proptest` feature, the `arbitrary` module holds the `proptest` strategies that the tests of
//! this and other crates draw tables from.
//!
//! # Layout
//!
//! - [`card`] — [`Card`], [`Rank`], [`Suit`], the pack, values and the wire notation (`10H`, `RJ`).
//! - [`settings`] — [`Settings`] with validation ([`SettingsError`]) and the named [`Preset`]s.
//! - [`group`] — which cards may be thrown together ([`classify`]).
//! - [`shuffle`] — seeded ChaCha20 Fisher–Yates shuffles.
//! - [`fair`] — provably fair deals: the commitment, and deck seeds from the match seed and the
//!   players' client seeds.
//! - [`history`] — a finished match's [`HandHistory`]; [`verify`], which checks one, and
//!   [`replay`], which shows the game before each of its steps (for a review of the match).
//! - [`game`] — the [`Game`] state machine: [`Action`]s in, public [`Event`]s out.
//! - [`score`] — scoring a round at the show ([`RoundResult`]) and the match [`Standing`]s.
//! - [`view`] — [`SeatView`], what one seat may see and may do now, and the [`PublicHistory`]
//!   every seat shares.
//! - [`error`] — [`RuleError`], why an action was refused, with stable codes.
//!
//! # Example
//!
//! ```
//! use dhumbal_engine::{Action, Game, Preset, Source};
//!
//! let mut game = Game::new(Preset::Standard.settings(), [7; 32]).unwrap();
//! let seat = game.turn();
//! game.apply(seat, Action::Draw { from: Source::Stock }).unwrap();
//! let card = game.hand(seat)[0];
//! game.apply(seat, Action::Throw { cards: vec![card] }).unwrap();
//! assert_eq!(game.turn(), 1);
//! ```

#[cfg(feature = "proptest")]
pub mod arbitrary;
pub mod card;
pub mod error;
pub mod fair;
pub mod game;
pub mod group;
pub mod history;
pub mod score;
pub mod settings;
pub mod shuffle;
pub mod view;

pub use card::{Card, Rank, Suit, full_deck, hand_total, parse_cards};
pub use error::RuleError;
pub use fair::{ClientSeed, FairDeal, Hex32};
pub use game::{Action, Event, Game, Phase, Source, pickup_choices};
pub use group::{GroupKind, classify, group_ends};
pub use history::{HandHistory, RoundHistory, Step, Verification, replay, verify};
pub use score::{Charges, Ending, RoundResult, Standing, caught_charge, charges, standings};
pub use settings::{
    CourtValues, Difficulty, Direction, DoublePenalty, MAX_GUIDE_PLAYERS, PenaltyMode, PickUp,
    Preset, ReshuffleKeeps, Rounds, Scoring, Settings, SettingsError, THROW_CAP, TURN_TIMERS,
    TurnOrder,
};
pub use shuffle::Seed;
pub use view::{PublicHistory, SeatView, ViewChanges};
