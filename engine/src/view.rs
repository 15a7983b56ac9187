//! What one seat may see.
//!
//! A [`SeatView`] is the game projected for one seat (or a spectator): its own hand, every seat's
//! card count, the pile's visible cards, the stock's size, whose turn and what phase, what this
//! seat may do now, the barred card, the throw count, the scores and the standings. Nothing else:
//! never another seat's cards before the show, never the stock's order, never a seed. A view is
//! exactly what goes on the wire, field for field.
//!
//! The history is apart, in [`PublicHistory`]: the round's log and the match's finished results
//! (after a show, a result holds every hand face up). It only grows, every part of it is public
//! and the same for every seat, and it is told once as it happens, so a client keeps it from
//! those messages and the view stays small. [`Game::public_history`] lends the game's own.

use serde::{Deserialize, Serialize};

use crate::card::{Card, hand_total};
use crate::game::{Event, Game, Phase};
use crate::score::{RoundResult, Standing};
use crate::settings::{Settings, THROW_CAP};

/// The game as one seat may see it. Build it with [`Game::view`] or [`Game::spectator_view`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SeatView {
    // This seat's own fields come first, and `settings` is the first of the fields every seat
    // shares: a server can then serialise the shared part once for every seat (see
    // `dhumbal_protocol::StateFrames`).
    /// The seat this view is for; `None` for a spectator.
    pub seat: Option<usize>,
    /// This seat's hand (empty for a spectator).
    pub hand: Vec<Card>,
    /// This seat's hand total.
    pub hand_total: u32,
    /// What each card of `hand` is worth at this table, in the hand's order: a client adds up
    /// any of its cards without a copy of the court rule.
    pub hand_values: Vec<u32>,
    /// Pile cards this seat may take right now.
    pub takeable: Vec<Card>,
    /// Whether this seat may call now.
    pub can_call: bool,
    /// Whether this seat may draw now: it is its turn to draw (at the start of the turn at
    /// draw-then-throw, after its throw at throw-then-draw) and some draw is legal. It may draw
    /// from the stock, or take one of the `takeable` cards.
    pub can_draw: bool,
    /// Whether this seat may throw now: it is its turn to throw (after its draw at
    /// draw-then-throw, at the start of the turn at throw-then-draw).
    pub can_throw: bool,
    /// The table's settings.
    pub settings: Settings,
    /// The current round's number, from 1.
    pub round: u32,
    /// The current round's dealer.
    pub dealer: usize,
    /// The seat to play.
    pub turn: usize,
    /// Where the round stands.
    pub phase: Phase,
    /// How many cards each seat holds.
    pub card_counts: Vec<usize>,
    /// Which seats are out of the match.
    pub eliminated: Vec<bool>,
    /// The pile's top card.
    pub pile_top: Option<Card>,
    /// The group on top of the pile, as it was thrown (its last card is the top).
    pub top_throw: Vec<Card>,
    /// Throw-then-draw: the previous player's throw, from which the seat to play may pick up
    /// after throwing.
    pub previous_throw: Vec<Card>,
    /// Throw-then-draw, at the start of a turn: the cards of `top_throw` the seat to play may
    /// take once it has thrown, under the table's pick-up rule (the one card of a single throw,
    /// every card, or the two ends of a group, a run's lowest and highest). Empty otherwise.
    pub next_takeable: Vec<Card>,
    /// How many cards are in the pile.
    pub pile_size: usize,
    /// How many cards are in the stock.
    pub stock_size: usize,
    /// The card taken from the pile this turn, which cannot be thrown this turn.
    pub barred: Option<Card>,
    /// Throws made this deal, across the table.
    pub throws: u32,
    /// The throw cap.
    pub throw_cap: u32,
    /// Every seat's running Total.
    pub totals: Vec<i64>,
    /// The standings by the current Totals, best first; equal Totals share a place (final once
    /// the match is over).
    pub standings: Vec<Standing>,
    /// Every seat, in the order play goes round the table from seat 0 (the table's
    /// `direction`): `[0, 1, 2, 3]` clockwise, `[0, 3, 2, 1]` counter-clockwise. A client draws
    /// the seats round the table in this order (starting after its own) without a rule of its
    /// own.
    #[serde(default)]
    pub play_order: Vec<usize>,
}

/// Names every field of [`SeatView`], in order, once: its bit in [`ViewChanges`] ([`field`]).
/// The pattern in `_every_field` names every field without `..`, so a field added to the view
/// and not here fails to compile.
macro_rules! view_fields {
    ($($name:ident),* $(,)?) => {
        /// The bit of each field of a [`SeatView`] in a [`ViewChanges`], named as the field, in
        /// the order the fields are declared; [`field::OWN`] is the seat's own fields.
        #[allow(non_upper_case_globals)]
        pub mod field {
            /// Each field's place.
            #[allow(non_camel_case_types, dead_code)]
            enum Place {
                $($name),*
            }
            $(
                #[doc = concat!("The bit of `", stringify!($name), "`.")]
                pub const $name: u32 = 1 << Place::$name as u32;
            )*
            /// Each field's name, as serialised, and its bit.
            pub const ALL: &[(&str, u32)] = &[$((stringify!($name), $name)),*];
            /// The fields that differ from seat to seat (its seat, hand, hand total and values,
            /// what it may take and whether it may call, draw or throw); the rest are shared.
            pub const OWN: u32 = seat
                | hand
                | hand_total
                | hand_values
                | takeable
                | can_call
                | can_draw
                | can_throw;
        }

        /// Names every field of the view (see [`view_fields`]).
        fn _every_field(view: &SeatView) {
            let SeatView { $($name: _),* } = view;
        }
    };
}

view_fields!(
    seat,
    hand,
    hand_total,
    hand_values,
    takeable,
    can_call,
    can_draw,
    can_throw,
    settings,
    round,
    dealer,
    turn,
    phase,
    card_counts,
    eliminated,
    pile_top,
    top_throw,
    previous_throw,
    next_takeable,
    pile_size,
    stock_size,
    barred,
    throws,
    throw_cap,
    totals,
    standings,
    play_order,
);

/// Which fields of a [`SeatView`] a [`SeatView::refresh`] changed: a bit a field, as [`field`]
/// names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ViewChanges(pub u32);

impl ViewChanges {
    /// Whether the field of `bit` (one of [`field`]'s) changed.
    pub fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }

    /// Whether nothing changed.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// Makes `to` hold `from`'s items, and says whether it did not already: a list that is already
/// equal is only read.
pub fn set_slice<T: Clone + PartialEq>(to: &mut Vec<T>, from: &[T]) -> bool {
    if to.as_slice() == from {
        return false;
    }
    to.clear();
    to.extend_from_slice(from);
    true
}

/// Makes `to` hold what `from` yields, and says whether it did not already, in one pass: each
/// item is compared with the one in its place and written only if it differs.
pub fn set_iter<T: PartialEq>(to: &mut Vec<T>, from: impl IntoIterator<Item = T>) -> bool {
    let mut changed = false;
    let mut len = 0;
    for item in from {
        match to.get_mut(len) {
            Some(old) if *old == item => {}
            Some(old) => {
                *old = item;
                changed = true;
            }
            None => {
                to.push(item);
                changed = true;
            }
        }
        len += 1;
    }
    if to.len() > len {
        to.truncate(len);
        changed = true;
    }
    changed
}

/// The public history of the match, the same for every seat and spectator: the current round's
/// log and every finished round's result. A [`SeatView`] and this are everything a seat may know
/// (a bot decides from exactly these).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublicHistory {
    /// Every finished round's result, in order (each with every hand face up).
    pub results: Vec<RoundResult>,
    /// The public log of the current round: its `Dealt` event and every event since.
    pub log: Vec<Event>,
}

impl SeatView {
    /// Projects `game` for `seat` (a spectator for `None`).
    pub(crate) fn of(game: &Game, seat: Option<usize>) -> SeatView {
        let mut view = SeatView {
            seat,
            hand: Vec::new(),
            hand_total: 0,
            hand_values: Vec::new(),
            takeable: Vec::new(),
            can_call: false,
            can_draw: false,
            can_throw: false,
            settings: game.settings().clone(),
            round: 0,
            dealer: 0,
            turn: 0,
            phase: game.phase(),
            card_counts: Vec::new(),
            eliminated: Vec::new(),
            pile_top: None,
            top_throw: Vec::new(),
            previous_throw: Vec::new(),
            next_takeable: Vec::new(),
            pile_size: 0,
            stock_size: 0,
            barred: None,
            throws: 0,
            throw_cap: THROW_CAP,
            totals: Vec::new(),
            standings: Vec::new(),
            play_order: Vec::new(),
        };
        view.refresh(game, seat);
        view
    }

    /// Makes this the view of `game` for `seat` (a spectator for `None`), exactly what
    /// [`Game::view_of`] gives, in place, and says which fields changed: each field is compared
    /// with what the game shows now and written only if it differs, so its lists keep their
    /// memory and an unchanged field costs a comparison. A server that tells a change as a patch
    /// keeps the view last told and refreshes it this way (the one place a view is made:
    /// [`Game::view_of`] is this, into an empty view). The standings are ranked again only when
    /// the totals, the eliminations or the settings differ from the view's: they are made of
    /// those alone, and a view's standings are always those of its own totals.
    ///
    /// # Panics
    ///
    /// If `seat` is `Some` seat that is not at the table.
    pub fn refresh(&mut self, game: &Game, seat: Option<usize>) -> ViewChanges {
        let mut changed = ViewChanges::default();
        /// Sets a field to a value, noting the field if it changed.
        macro_rules! set {
            ($field:ident, $value:expr) => {{
                let value = $value;
                if self.$field != value {
                    self.$field = value;
                    changed.0 |= field::$field;
                }
            }};
        }
        /// Sets a list to a slice's cards, or to what an iterator yields, noting it if it changed.
        macro_rules! set_list {
            ($field:ident, slice $from:expr) => {
                if set_slice(&mut self.$field, $from) {
                    changed.0 |= field::$field;
                }
            };
            ($field:ident, iter $from:expr) => {
                if set_iter(&mut self.$field, $from) {
                    changed.0 |= field::$field;
                }
            };
        }
        let mut same_scores = self.totals == game.totals()
            && self.eliminated == game.eliminated()
            && self.standings.len() == game.seats();
        if self.settings != *game.settings() {
            self.settings = game.settings().clone();
            changed.0 |= field::settings;
            same_scores = false;
        }
        let court = self.settings.court;
        let playing = !matches!(game.phase(), Phase::RoundOver | Phase::MatchOver);
        set!(seat, seat);
        let hand = seat.map(|s| game.hand(s)).unwrap_or_default();
        set_list!(hand, slice hand);
        set!(hand_total, hand_total(hand, court));
        set_list!(hand_values, iter hand.iter().map(|c| c.value(court)));
        let mut ends = [Card::RED_JOKER; 2];
        match seat.filter(|_| playing) {
            Some(s) => set_list!(takeable, slice game.takeable_cards(s, &mut ends)),
            None => set_list!(takeable, slice & []),
        }
        set!(can_call, seat.is_some_and(|s| game.can_call(s)));
        set!(can_draw, seat.is_some_and(|s| game.can_draw(s)));
        set!(can_throw, seat.is_some_and(|s| game.can_throw(s)));
        set!(round, game.round());
        set!(dealer, game.dealer());
        set!(turn, game.turn());
        set!(phase, game.phase());
        set_list!(
            card_counts,
            iter(0..game.seats()).map(|s| game.hand(s).len())
        );
        set_list!(eliminated, slice game.eliminated());
        set!(pile_top, game.pile().last().copied());
        set_list!(top_throw, slice game.top_throw());
        set_list!(previous_throw, slice game.previous_throw());
        set_list!(next_takeable, slice game.next_takeable_cards(&mut ends));
        set!(pile_size, game.pile().len());
        set!(stock_size, game.stock_len());
        set!(barred, game.barred());
        set!(throws, game.throws());
        set!(throw_cap, THROW_CAP);
        if !same_scores {
            set_list!(totals, slice game.totals());
            // Ranked once a round at most: a list of its own is cheaper than a comparison
            // element by element would be to write.
            let mut standings = Vec::with_capacity(game.seats());
            game.standings_into(&mut standings);
            set!(standings, standings);
        }
        set_list!(
            play_order,
            iter std::iter::once(0)
                .chain(self.settings.seats_after(0))
                .take(game.seats())
        );
        changed
    }

    /// Whether it is this seat's turn in a round being played.
    pub fn my_turn(&self) -> bool {
        self.seat == Some(self.turn)
            && matches!(self.phase, Phase::Start | Phase::Throw | Phase::Draw)
    }

    /// Every card this view shows: the hand, the pile's visible groups, the cards this seat may
    /// take (now or after its throw), and the barred card. The barred card is held
    /// by the seat to play, but the whole table saw it taken from the pile; every other card here
    /// is this seat's own or face up. Used to check that a view reveals nothing it should not.
    pub fn visible_cards(&self) -> Vec<Card> {
        let mut cards = self.hand.clone();
        cards.extend(self.pile_top);
        cards.extend(&self.top_throw);
        cards.extend(&self.previous_throw);
        cards.extend(&self.takeable);
        cards.extend(&self.next_takeable);
        cards.extend(self.barred);
        cards
    }
}
