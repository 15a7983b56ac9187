//! The view as a patch: after a change, each client gets only what changed in its view.
//!
//! A client arriving in a started match gets its whole view once, in a `state` carrying the
//! view's version `v`. After every change of the game it gets a `patch`: the public events, and a
//! [`ViewPatch`] holding each field of its view that changed, with its whole new value (a field
//! left out did not change; `null` is a value, as in the view). Applying the patch to the view of
//! version `v - 1` gives the view of version `v`, exactly the engine's
//! [`Game::view_of`](dhumbal_engine::Game::view_of) for that seat. A client whose view is not of
//! version `v - 1` (it missed a message, or never had a view) ignores the patch and sends
//! `resync`, which the server answers with `history` and a whole `state`.
//!
//! [`PatchFrames`] builds one change's `patch` for every client at once, as it brings what the
//! clients were last told ([`Told`]) up to the game in place: each field is compared with the
//! game once and written where it changed, the events and the fields every seat shares once,
//! and each seat's own fields ([`OwnView`]) once a seat.

use dhumbal_engine::card::{CARD_KINDS, CARD_NAMES};
use dhumbal_engine::view::{field, set_iter, set_slice};
use dhumbal_engine::{Action, Card, Event, Game, Phase, SeatView, Source, ViewChanges};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::server::TurnClock;

/// Reads a field that is present as `Some`, whatever its value (`null` included): a patch's
/// `"barred": null` means the barred card is now none, not that it did not change.
fn present<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Declares [`ViewPatch`] over the fields of [`SeatView`], with the comparison that builds one
/// and the application that uses one. The struct pattern in `between` names every field of
/// `SeatView` without `..`, so a field added to the view and not here fails to compile.
macro_rules! view_patch {
    ($($field:ident : $ty:ty),* $(,)?) => {
        /// The fields of a seat's view that changed, each with its whole new value; a field that
        /// did not change is left out. See the [module documentation](self).
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        pub struct ViewPatch {
            $(
                #[doc = concat!("The view's new `", stringify!($field), "`, when it changed.")]
                #[serde(
                    default,
                    skip_serializing_if = "Option::is_none",
                    deserialize_with = "present"
                )]
                pub $field: Option<$ty>,
            )*
        }

        impl ViewPatch {
            /// What changed from `old` to `new`: every field whose value differs.
            pub fn between(old: &SeatView, new: &SeatView) -> ViewPatch {
                let SeatView { $($field: _),* } = new;
                ViewPatch {
                    $($field: (old.$field != new.$field).then(|| new.$field.clone()),)*
                }
            }

            /// Writes the fields of `view` that `changed` names, of those `fields` allows (bits
            /// of [`field`]), straight into `out`, as the members of the JSON object
            /// [`ViewPatch::between`] serialises to, without its braces (`"a":1,"b":2`, or
            /// nothing): no patch is built, nothing is cloned, and the keys, known to need no
            /// escaping, are written as they are.
            pub fn write_changed(view: &SeatView, changed: ViewChanges, fields: u32, out: &mut String) {
                let start = out.len();
                let changed = changed.0 & fields;
                $(
                    if changed & field::$field != 0 {
                        member(out, start, concat!("\"", stringify!($field), "\":"), &view.$field);
                    }
                )*
            }

            /// Applies this patch to `view`: each field it holds replaces the view's.
            pub fn apply(self, view: &mut SeatView) {
                $(
                    if let Some(value) = self.$field {
                        view.$field = value;
                    }
                )*
            }

            /// Whether nothing changed.
            pub fn is_empty(&self) -> bool {
                true $(&& self.$field.is_none())*
            }
        }
    };
}

view_patch! {
    seat: Option<usize>,
    hand: Vec<Card>,
    hand_total: u32,
    hand_values: Vec<u32>,
    takeable: Vec<Card>,
    can_call: bool,
    can_draw: bool,
    can_throw: bool,
    settings: dhumbal_engine::Settings,
    round: u32,
    dealer: usize,
    turn: usize,
    phase: Phase,
    card_counts: Vec<usize>,
    eliminated: Vec<bool>,
    pile_top: Option<Card>,
    top_throw: Vec<Card>,
    previous_throw: Vec<Card>,
    next_takeable: Vec<Card>,
    pile_size: usize,
    stock_size: usize,
    barred: Option<Card>,
    throws: u32,
    throw_cap: u32,
    totals: Vec<i64>,
    standings: Vec<dhumbal_engine::Standing>,
    play_order: Vec<usize>,
}

/// A seat's own fields of its view (the ones that differ from seat to seat), as the seat was last
/// told them: its seat, hand, hand total, card values, the pile cards it may take, and whether it
/// may call, draw or throw. Every other field of a view is the same for every seat.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnView {
    /// The seat (`None` for a spectator).
    pub seat: Option<usize>,
    /// The hand.
    pub hand: Vec<Card>,
    /// The hand's total.
    pub hand_total: u32,
    /// Each card's value at this table.
    pub hand_values: Vec<u32>,
    /// The pile cards the seat may take now.
    pub takeable: Vec<Card>,
    /// Whether it may call now.
    pub can_call: bool,
    /// Whether it may draw now.
    pub can_draw: bool,
    /// Whether it may throw now.
    pub can_throw: bool,
}

impl OwnView {
    /// `seat`'s own fields of its view of `game` (a spectator's for `None`), as
    /// [`Game::view_of`] gives them, without building the rest of the view.
    pub fn of(game: &Game, seat: Option<usize>) -> OwnView {
        let mut own = OwnView::default();
        if let Some(s) = seat {
            own.refresh(game, s);
        }
        own
    }

    /// Makes this `seat`'s own fields of its view of `game` now, in place, as
    /// [`SeatView::refresh`] does a whole view, and says which changed: a field is written only
    /// if it differs, so the lists keep their memory and most seats' hands, the same after most
    /// moves, are only read.
    fn refresh(&mut self, game: &Game, seat: usize) -> ViewChanges {
        let mut changed = 0;
        /// Sets a field to a value, noting the field if it changed.
        macro_rules! set {
            ($field:ident, $value:expr) => {{
                let value = $value;
                if self.$field != value {
                    self.$field = value;
                    changed |= field::$field;
                }
            }};
        }
        let court = game.settings().court;
        let playing = !matches!(game.phase(), Phase::RoundOver | Phase::MatchOver);
        let hand = game.hand(seat);
        set!(seat, Some(seat));
        if set_slice(&mut self.hand, hand) {
            changed |= field::hand;
        }
        // A hand's values are a table's ([`Card::value`]): compared as they are made.
        if set_iter(&mut self.hand_values, hand.iter().map(|c| c.value(court))) {
            changed |= field::hand_values;
        }
        set!(hand_total, self.hand_values.iter().sum());
        if !playing || seat != game.turn() {
            // Not this seat's turn, or no turn at all: the rules let it do nothing and take
            // nothing (every one of them checks the turn first), as most seats after most moves.
            if set_slice(&mut self.takeable, &[]) {
                changed |= field::takeable;
            }
            set!(can_call, false);
            set!(can_draw, false);
            set!(can_throw, false);
            return ViewChanges(changed);
        }
        if set_slice(
            &mut self.takeable,
            game.takeable_cards(seat, &mut [Card::RED_JOKER; 2]),
        ) {
            changed |= field::takeable;
        }
        set!(can_call, game.can_call(seat));
        set!(can_draw, game.can_draw(seat));
        set!(can_throw, game.can_throw(seat));
        ViewChanges(changed)
    }

    /// Writes the own fields `changed` names into `out`, as JSON object members without braces
    /// (see [`ViewPatch::write_changed`]).
    fn write_changed(&self, changed: ViewChanges, out: &mut String) {
        let start = out.len();
        // Every field, named once: a field added to `OwnView` and not here fails to compile.
        macro_rules! changed {
            ($($field:ident),*) => {
                let OwnView { $($field: _),* } = self;
                $(
                    if changed.has(field::$field) {
                        member(out, start, concat!("\"", stringify!($field), "\":"), &self.$field);
                    }
                )*
            };
        }
        changed!(
            seat,
            hand,
            hand_total,
            hand_values,
            takeable,
            can_call,
            can_draw,
            can_throw
        );
    }
}

/// What every client of a game was last told of its view: the view's version, the fields every
/// seat shares (a spectator's view of the game then), and each seat's own fields. A room keeps
/// one, and [`PatchFrames::tell`] brings it up to the game after each change, in place, as it
/// makes the patches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Told {
    /// The version of the views told.
    pub version: u64,
    /// The spectator's view: the shared fields (and a spectator's own, which never change).
    /// Boxed, so that a `Told` moves as a few words.
    pub shared: Box<SeatView>,
    /// Each seat's own fields.
    pub own: Vec<OwnView>,
}

impl Told {
    /// What a client is told of `game` now, at `version`.
    pub fn of(game: &Game, version: u64) -> Told {
        Told {
            version,
            shared: Box::new(game.spectator_view()),
            own: (0..game.seats())
                .map(|seat| OwnView::of(game, Some(seat)))
                .collect(),
        }
    }

    /// Whether this is what a client is told of `game` now (at any version).
    pub fn is_of(&self, game: &Game) -> bool {
        self.own.len() == game.seats()
            && *self.shared == game.spectator_view()
            && self
                .own
                .iter()
                .enumerate()
                .all(|(s, own)| *own == OwnView::of(game, Some(s)))
    }
}

/// One change's `patch` messages, for every client of the game at once (see the [module
/// documentation](self)): the events and the shared fields that changed are written once, and
/// each seat's own fields that changed once a seat; a client's message is the three put
/// together. Each message reads back as [`crate::ServerMessage::Patch`] whose view patch,
/// applied to the view told before, gives the game's view for that seat.
///
/// Its texts are memory to use again: a server keeps one a thread and makes every room's
/// changes in it ([`PatchFrames::tell`]), so that a change's patches are written into memory
/// some room just used.
#[derive(Clone, Debug, Default)]
pub struct PatchFrames {
    /// `{"type":"patch","v":…,"events":[…]` and the stand-in and clock, when there are, and
    /// `,"view":{`.
    head: String,
    /// The shared fields that changed, as JSON object members without braces (maybe empty).
    shared: String,
    /// Each seat's own fields that changed, as JSON object members without braces, one seat
    /// after another.
    own: String,
    /// Where each seat's members end in `own`.
    own_ends: Vec<usize>,
}

impl PatchFrames {
    /// The patches for `events` played (by a stand-in for `stand_in`), with the turn's `clock`,
    /// from what the clients were `told` to `game` now; `told` becomes what they are told now, at
    /// the next version. See [`PatchFrames::tell`].
    pub fn new(
        told: &mut Told,
        game: &Game,
        events: &[Event],
        stand_in: Option<usize>,
        clock: Option<TurnClock>,
    ) -> PatchFrames {
        let mut frames = PatchFrames::default();
        frames.tell(told, game, events, stand_in, clock);
        frames
    }

    /// Makes these the patches for `events` played (by a stand-in for `stand_in`), with the
    /// turn's `clock`, from what the clients were `told` to `game` now, in the memory of the
    /// patches these were: `told` is brought up to `game` in place, field by field, at version
    /// `told.version + 1`, and each field that differs is written as it is set. Nothing is built
    /// twice and nothing is compared twice.
    pub fn tell(
        &mut self,
        told: &mut Told,
        game: &Game,
        events: &[Event],
        stand_in: Option<usize>,
        clock: Option<TurnClock>,
    ) {
        told.version += 1;
        let head = &mut self.head;
        head.clear();
        head.reserve(96 + 96 * events.len());
        head.push_str(r#"{"type":"patch","v":"#);
        told.version.write_json(head);
        if !events.is_empty() {
            head.push_str(r#","events":"#);
            events.write_json(head);
        }
        if let Some(seat) = stand_in {
            head.push_str(r#","stand_in":"#);
            seat.write_json(head);
        }
        if let Some(clock) = clock {
            head.push_str(r#","clock":"#);
            clock.write_json(head);
        }
        head.push_str(r#","view":{"#);
        let changed = told.shared.refresh(game, None);
        self.shared.clear();
        ViewPatch::write_changed(&told.shared, changed, !field::OWN, &mut self.shared);
        told.own.truncate(game.seats());
        told.own.resize_with(game.seats(), OwnView::default);
        self.own.clear();
        self.own_ends.clear();
        for (seat, own) in told.own.iter_mut().enumerate() {
            let changed = own.refresh(game, seat);
            own.write_changed(changed, &mut self.own);
            self.own_ends.push(self.own.len());
        }
    }

    /// The `patch` for a client in `seat` (a spectator for `None`).
    pub fn for_seat(&self, seat: Option<usize>) -> String {
        let mut out = String::with_capacity(self.frame_len_hint());
        self.write_for_seat(seat, &mut out);
        out
    }

    /// [`PatchFrames::for_seat`] written at the end of `out`: a room writes every seat's patch
    /// into one buffer, and sends each its part of it.
    pub fn write_for_seat(&self, seat: Option<usize>, out: &mut String) {
        out.push_str(&self.head);
        let own = match seat {
            Some(s) if s < self.own_ends.len() => {
                let from = if s == 0 { 0 } else { self.own_ends[s - 1] };
                &self.own[from..self.own_ends[s]]
            }
            _ => "",
        };
        out.push_str(own);
        if !own.is_empty() && !self.shared.is_empty() {
            out.push(',');
        }
        out.push_str(&self.shared);
        out.push_str("}}");
    }

    /// About how long one seat's patch is: the part every seat's shares, and room for the seat's
    /// own fields after most moves (a hand of five and its values), to size a buffer by.
    pub fn frame_len_hint(&self) -> usize {
        self.head.len() + self.shared.len() + 160
    }
}

/// A client's view as it follows the server's messages: a whole `state` sets it, a `patch` of the
/// next version changes it (the rule a Rust client follows; the web client does the same in
/// `server/web/session.js`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeldView {
    /// The version of the view held.
    pub v: u64,
    /// The view, once a `state` gave one.
    pub view: Option<SeatView>,
}

/// A `patch` that does not build on the view held: the client missed a message, or holds no
/// view. It should send `resync` and wait for the whole view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stale {
    /// The version the client holds.
    pub held: u64,
    /// The version the patch makes.
    pub patch: u64,
}

impl HeldView {
    /// Follows one message: `state` replaces the view, a `patch` of version `v + 1` is applied;
    /// other messages change nothing. Returns whether the view changed, or [`Stale`] for a
    /// patch of another version (which changes nothing).
    pub fn follow(&mut self, message: &crate::ServerMessage) -> Result<bool, Stale> {
        match message {
            crate::ServerMessage::State { v, view, .. } => {
                self.v = *v;
                self.view = Some((**view).clone());
                Ok(true)
            }
            crate::ServerMessage::Patch(patch) => match &mut self.view {
                Some(view) if patch.v == self.v + 1 => {
                    (*patch.view).clone().apply(view);
                    self.v = patch.v;
                    Ok(true)
                }
                _ => Err(Stale {
                    held: self.v,
                    patch: patch.v,
                }),
            },
            _ => Ok(false),
        }
    }
}

/// Writes one member of a JSON object into `out`: a comma first unless it is the first since
/// `start`, then `key` (the quoted name and its colon), then the value.
fn member(out: &mut String, start: usize, key: &str, value: &impl Json) {
    if out.len() > start {
        out.push(',');
    }
    out.push_str(key);
    value.write_json(out);
}

/// A value of a view written as JSON straight into a string: the same text `serde_json` makes
/// of it (a test holds them equal), without a serializer's machinery for the small values a
/// patch is made of (numbers, flags, cards and lists of them); the rest goes through
/// `serde_json`.
trait Json {
    /// Appends this value's JSON to `out`.
    fn write_json(&self, out: &mut String);
}

impl Json for bool {
    fn write_json(&self, out: &mut String) {
        out.push_str(if *self { "true" } else { "false" });
    }
}

/// Integers, through `itoa`.
macro_rules! json_integers {
    ($($ty:ty),*) => {$(
        impl Json for $ty {
            fn write_json(&self, out: &mut String) {
                out.push_str(itoa::Buffer::new().format(*self));
            }
        }
    )*};
}

json_integers!(u32, u64, usize, i64);

/// Every card's JSON, its name in quotes, as bytes: [`CARD_NAMES`] quoted at compile time, each
/// name's bytes and its length (no name is longer than 3 bytes).
///
/// [`CARD_NAMES`]: dhumbal_engine::card::CARD_NAMES
static QUOTED_NAMES: [([u8; 5], usize); CARD_KINDS] = {
    let mut quoted = [([b'"'; 5], 0); CARD_KINDS];
    let mut i = 0;
    while i < CARD_KINDS {
        let name = CARD_NAMES[i].as_bytes();
        let mut j = 0;
        while j < name.len() {
            quoted[i].0[j + 1] = name[j];
            j += 1;
        }
        // The closing quote, after the name (the array was filled with quotes).
        quoted[i].1 = name.len() + 2;
        i += 1;
    }
    quoted
};

/// Every card's JSON (its name in quotes), by [`Card::index`]: a card is written with one copy,
/// where writing the quotes and the name apart took three (a patch holds a score of cards). A
/// card's name is letters and digits: nothing to escape. A test holds each equal to what
/// `serde_json` writes.
const CARD_JSON: [&str; CARD_KINDS] = {
    let mut json = [""; CARD_KINDS];
    let mut i = 0;
    while i < CARD_KINDS {
        let (bytes, len) = &QUOTED_NAMES[i];
        json[i] = match std::str::from_utf8(bytes.split_at(*len).0) {
            Ok(text) => text,
            Err(_) => panic!("a card's name is ASCII"),
        };
        i += 1;
    }
    json
};

impl Json for Card {
    fn write_json(&self, out: &mut String) {
        out.push_str(CARD_JSON[self.index()]);
    }
}

impl<T: Json> Json for Option<T> {
    fn write_json(&self, out: &mut String) {
        match self {
            Some(value) => value.write_json(out),
            None => out.push_str("null"),
        }
    }
}

impl<T: Json> Json for [T] {
    fn write_json(&self, out: &mut String) {
        out.push('[');
        for (i, value) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            value.write_json(out);
        }
        out.push(']');
    }
}

impl<T: Json> Json for Vec<T> {
    fn write_json(&self, out: &mut String) {
        self.as_slice().write_json(out);
    }
}

/// The events of a turn (a call, a draw, a take, a throw, a reshuffle), written by hand: their
/// keys, their tags and card names hold nothing to escape, which `serde_json` would look for
/// byte by byte (a tenth of a room's action went there). A deal and a round's or a match's
/// end, once a round, go through `serde_json`.
impl Json for Event {
    fn write_json(&self, out: &mut String) {
        match self {
            Event::Called { seat } => {
                out.push_str(r#"{"type":"called","seat":"#);
                seat.write_json(out);
            }
            Event::DrewFromStock { seat } => {
                out.push_str(r#"{"type":"drew_from_stock","seat":"#);
                seat.write_json(out);
            }
            Event::TookFromPile { seat, card } => {
                out.push_str(r#"{"type":"took_from_pile","seat":"#);
                seat.write_json(out);
                out.push_str(r#","card":"#);
                card.write_json(out);
            }
            Event::Threw { seat, cards } => {
                out.push_str(r#"{"type":"threw","seat":"#);
                seat.write_json(out);
                out.push_str(r#","cards":"#);
                cards.write_json(out);
            }
            Event::Reshuffled { stock } => {
                out.push_str(r#"{"type":"reshuffled","stock":"#);
                stock.write_json(out);
            }
            Event::Dealt { .. } | Event::RoundEnded { .. } | Event::MatchEnded { .. } => {
                out.push_str(&json(self));
                return;
            }
        }
        out.push('}');
    }
}

/// An action, written by hand for the room's log, which keeps one with every move: its tag, its
/// keys and its card names hold nothing to escape.
impl Json for Action {
    fn write_json(&self, out: &mut String) {
        match self {
            Action::Call => out.push_str(r#"{"type":"call"}"#),
            Action::Draw { from } => {
                out.push_str(r#"{"type":"draw","from":"#);
                match from {
                    Source::Stock => out.push_str(r#""stock""#),
                    Source::Pile => out.push_str(r#""pile""#),
                    Source::PileCard(card) => {
                        out.push_str(r#"{"pile_card":"#);
                        card.write_json(out);
                        out.push('}');
                    }
                }
                out.push('}');
            }
            Action::Throw { cards } => {
                out.push_str(r#"{"type":"throw","cards":"#);
                cards.write_json(out);
                out.push('}');
            }
        }
    }
}

/// Appends `action`'s JSON to `out`: the text `serde_json` makes of it (a test holds them equal
/// for every kind of action), written without a serializer's machinery.
pub fn write_action_json(action: &Action, out: &mut String) {
    action.write_json(out);
}

/// Appends `event`'s JSON to `out`, as [`write_action_json`] does an action's (a deal and a
/// round's or a match's end through `serde_json`).
pub fn write_event_json(event: &Event, out: &mut String) {
    event.write_json(out);
}

/// Appends the JSON list of `cards` to `out`, as [`write_action_json`] does an action's.
pub fn write_cards_json(cards: &[Card], out: &mut String) {
    cards.write_json(out);
}

/// A turn's clock, three numbers.
impl Json for TurnClock {
    fn write_json(&self, out: &mut String) {
        out.push_str(r#"{"seat":"#);
        self.seat.write_json(out);
        out.push_str(r#","left_ms":"#);
        self.left_ms.write_json(out);
        out.push_str(r#","total_ms":"#);
        self.total_ms.write_json(out);
        out.push('}');
    }
}

/// A phase, which changes with almost every move: its snake-case name.
impl Json for Phase {
    fn write_json(&self, out: &mut String) {
        out.push_str(match self {
            Phase::Start => r#""start""#,
            Phase::Throw => r#""throw""#,
            Phase::Draw => r#""draw""#,
            Phase::RoundOver => r#""round_over""#,
            Phase::MatchOver => r#""match_over""#,
        });
    }
}

/// Values that change seldom (the settings, the standings), through `serde_json`.
macro_rules! json_through_serde {
    ($($ty:ty),*) => {$(
        impl Json for $ty {
            fn write_json(&self, out: &mut String) {
                out.push_str(&json(self));
            }
        }
    )*};
}

json_through_serde!(dhumbal_engine::Settings, dhumbal_engine::Standing);

/// A value as JSON.
fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("the parts of a patch serialise")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServerMessage;
    use dhumbal_engine::{Action, Phase, Preset, Rounds, Settings, Source};

    /// Applying `between(old, new)` to `old` gives `new`, and an unchanged view gives an empty
    /// patch that serialises to `{}`.
    #[test]
    fn a_patch_turns_the_old_view_into_the_new() {
        let mut game = Game::new(Preset::Standard.settings(), [5; 32]).unwrap();
        let old = game.view(0);
        assert!(ViewPatch::between(&old, &old).is_empty());
        assert_eq!(json(&ViewPatch::between(&old, &old)), "{}");
        let seat = game.turn();
        let action = game.legal_actions(seat)[0].clone();
        game.apply(seat, action).unwrap();
        let new = game.view(0);
        let patch = ViewPatch::between(&old, &new);
        assert!(!patch.is_empty());
        let mut view = old.clone();
        patch.apply(&mut view);
        assert_eq!(view, new);
    }

    /// Every kind of value a patch writes itself is written as `serde_json` writes it.
    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        fn same<T: Json + Serialize>(value: T) {
            let mut out = String::new();
            value.write_json(&mut out);
            assert_eq!(out, json(&value));
        }
        same(true);
        same(false);
        same(0u32);
        same(u32::MAX);
        same(u64::MAX);
        same(usize::MAX);
        same(i64::MIN);
        same(-1i64);
        same(Vec::<u32>::new());
        same(vec![Some(3usize), None]);
        let every: Vec<Card> = (0..dhumbal_engine::card::CARD_KINDS)
            .filter_map(Card::from_index)
            .collect();
        assert_eq!(every.len(), dhumbal_engine::card::CARD_KINDS);
        same(every);
        same(Some(Card::RED_JOKER));
        same(None::<Card>);
        for phase in [
            Phase::Start,
            Phase::Throw,
            Phase::Draw,
            Phase::RoundOver,
            Phase::MatchOver,
        ] {
            same(phase);
        }
        let game = Game::new(Preset::Household.settings(), [5; 32]).unwrap();
        same(game.settings().clone());
        same(game.spectator_view().standings);
        same(TurnClock {
            seat: 5,
            left_ms: u64::MAX,
            total_ms: 0,
        });
        // Every kind of event, as whole matches of every preset make them (a deal, draws from
        // the stock and the pile, throws, reshuffles, calls, a round's and a match's end), and
        // every action that was legal on the way.
        let mut kinds = std::collections::BTreeSet::new();
        let mut action_kinds = std::collections::BTreeSet::new();
        for preset in Preset::ALL {
            let settings = Settings {
                rounds: Rounds::Fixed(3),
                ..preset.settings()
            };
            let mut game = Game::new(settings, [7; 32]).unwrap();
            let mut events = Vec::new();
            for step in 0..20_000usize {
                let made = match game.phase() {
                    Phase::MatchOver => break,
                    Phase::RoundOver => game.next_round().unwrap(),
                    _ => {
                        let seat = game.turn();
                        let actions = game.legal_actions(seat);
                        for action in &actions {
                            action_kinds.insert(match action {
                                Action::Call => "call",
                                Action::Draw {
                                    from: Source::Stock,
                                } => "draw from the stock",
                                Action::Draw { from: Source::Pile } => "draw from the pile",
                                Action::Draw {
                                    from: Source::PileCard(_),
                                } => "draw a card of the pile",
                                Action::Throw { .. } => "throw",
                            });
                            same(action.clone());
                        }
                        // The first round without a call, drawing from the stock until it
                        // runs out and is reshuffled; then mostly the last action, now and
                        // then another (a call, a take from the pile).
                        let first = |wanted: fn(&Action) -> bool| actions.iter().position(wanted);
                        let pick = if game.round() == 1 {
                            first(|a| {
                                matches!(
                                    a,
                                    Action::Draw {
                                        from: Source::Stock
                                    }
                                )
                            })
                            .or_else(|| first(|a| matches!(a, Action::Throw { .. })))
                            .unwrap_or(0)
                        } else if step % 7 == 0 {
                            step % actions.len()
                        } else {
                            actions.len() - 1
                        };
                        game.apply(seat, actions[pick].clone()).unwrap()
                    }
                };
                events.extend(made);
            }
            for event in &events {
                kinds.insert(serde_json::to_value(event).unwrap()["type"].to_string());
                same(event.clone());
            }
            same(events);
        }
        assert_eq!(
            kinds.len(),
            8,
            "every kind of event was written: {kinds:#?}"
        );
        assert_eq!(
            action_kinds.len(),
            5,
            "every kind of action was written: {action_kinds:#?}"
        );
    }

    /// A field that became `null` is sent as `null` and read back as a change to none.
    #[test]
    fn a_field_that_becomes_null_is_a_change() {
        let game = Game::new(Preset::Standard.settings(), [5; 32]).unwrap();
        let mut old = game.view(0);
        old.barred = old.hand.first().copied();
        let new = game.view(0);
        let patch = ViewPatch::between(&old, &new);
        let text = json(&patch);
        assert_eq!(text, r#"{"barred":null}"#);
        let back: ViewPatch = serde_json::from_str(&text).unwrap();
        assert_eq!(back.barred, Some(None));
        let mut view = old;
        back.apply(&mut view);
        assert_eq!(view, new);
    }

    /// What was told of one table, brought up to another, counts a hand by the new table's own
    /// court rule: the same deal at a table that counts the court cards otherwise has other
    /// values, and its patch says so.
    #[test]
    fn a_hand_is_counted_again_when_the_court_cards_count_otherwise() {
        let tens = Preset::Standard.settings();
        let sequential = Settings {
            court: dhumbal_engine::CourtValues::Sequential,
            ..tens.clone()
        };
        let before = Game::new(tens, [9; 32]).unwrap();
        let game = Game::new(sequential, [9; 32]).unwrap();
        assert_eq!(before.hand(0), game.hand(0), "the same deal");
        let mut told = Told::of(&before, 1);
        let frames = PatchFrames::new(&mut told, &game, &[], None, None);
        assert_eq!(told, Told::of(&game, 2));
        assert_ne!(told.own, Told::of(&before, 2).own, "a court card was dealt");
        let patched = (0..game.seats()).any(|s| frames.for_seat(Some(s)).contains("hand_values"));
        assert!(patched, "some seat's values changed");
    }

    /// Rooms on one server thread make their changes in one `PatchFrames`, each in the memory
    /// another table's change left: three tables of other presets and sizes taking turns, every
    /// seat's view rebuilt from its patches at every step.
    #[test]
    fn tables_taking_turns_make_their_patches_in_one_memory() {
        let mut frames = PatchFrames::default();
        let mut tables: Vec<(Game, Told, Vec<SeatView>)> = [(0, 4u8), (1, 6), (2, 2)]
            .into_iter()
            .map(|(preset, players)| {
                let settings = Settings {
                    players,
                    rounds: Rounds::Fixed(2),
                    ..Preset::ALL[preset % Preset::ALL.len()].settings()
                };
                let game = Game::new(settings, [players + 1; 32]).unwrap();
                let told = Told::of(&game, 1);
                let held = (0..game.seats()).map(|s| game.view_of(Some(s))).collect();
                (game, told, held)
            })
            .collect();
        for step in 0..6_000usize {
            let turns = tables.len();
            let (game, told, held) = &mut tables[step % turns];
            let events = match game.phase() {
                Phase::MatchOver => continue,
                Phase::RoundOver => game.next_round().unwrap(),
                _ => {
                    let seat = game.turn();
                    let actions = game.legal_actions(seat);
                    let action = actions[(step * 7 + 1) % actions.len()].clone();
                    game.apply(seat, action).unwrap()
                }
            };
            frames.tell(told, game, &events, None, None);
            for (seat, view) in held.iter_mut().enumerate() {
                let frame = frames.for_seat(Some(seat));
                let Ok(ServerMessage::Patch(patch)) = serde_json::from_str(&frame) else {
                    panic!("not a patch: {frame}");
                };
                patch.view.apply(view);
                assert_eq!(*view, game.view_of(Some(seat)), "step {step}, seat {seat}");
            }
        }
        assert!(tables.iter().all(|(game, ..)| game.is_over()));
    }

    /// At every step of whole matches of every preset at 2, 4 and 6 seats, each seat's and a
    /// spectator's patch from [`PatchFrames`] reads back as a `patch` message whose view patch,
    /// applied to the view that client held, gives the engine's view for it; and a client that
    /// joins at any step (a whole view then) follows on from there.
    #[test]
    fn patch_frames_rebuild_every_seats_view_at_every_step() {
        // One memory for every game's patches, as a server thread keeps one for all its rooms:
        // each game starts in the memory another (another preset, another number of seats) left.
        let mut kept = PatchFrames::default();
        for preset in Preset::ALL {
            for players in [2u8, 4, 6] {
                let settings = Settings {
                    players,
                    rounds: Rounds::Fixed(2),
                    ..preset.settings()
                };
                let mut game = Game::new(settings, [players; 32]).unwrap();
                let mut told = Told::of(&game, 1);
                let seats: Vec<Option<usize>> = (0..game.seats()).map(Some).chain([None]).collect();
                let mut held: Vec<SeatView> = seats.iter().map(|&s| game.view_of(s)).collect();
                for step in 0..5_000usize {
                    let events = match game.phase() {
                        Phase::MatchOver => break,
                        Phase::RoundOver => game.next_round().unwrap(),
                        _ => {
                            let seat = game.turn();
                            let actions = game.legal_actions(seat);
                            let action = actions[(step * 5 + 3) % actions.len()].clone();
                            game.apply(seat, action).unwrap()
                        }
                    };
                    let stand_in = (step % 3 == 0).then_some(step % game.seats());
                    let clock = (step % 2 == 0).then(|| TurnClock {
                        seat: game.turn(),
                        left_ms: step as u64 * 7,
                        total_ms: 30_000,
                    });
                    // Mostly made in the memory of the last change's patches, as a room makes
                    // them; sometimes afresh.
                    let base = told.version;
                    let fresh;
                    let frames = if step % 4 == 0 {
                        fresh = PatchFrames::new(&mut told, &game, &events, stand_in, clock);
                        &fresh
                    } else {
                        kept.tell(&mut told, &game, &events, stand_in, clock);
                        &kept
                    };
                    for (i, &seat) in seats.iter().enumerate() {
                        let frame = frames.for_seat(seat);
                        let decoded: ServerMessage =
                            serde_json::from_str(&frame).unwrap_or_else(|e| panic!("{e}: {frame}"));
                        let ServerMessage::Patch(patch) = decoded else {
                            panic!("not a patch: {frame}");
                        };
                        assert_eq!(patch.v, base + 1);
                        assert_eq!(told.version, base + 1);
                        assert_eq!(patch.events, events);
                        assert_eq!(patch.stand_in, stand_in);
                        assert_eq!(patch.clock, clock);
                        // Nothing in a patch that did not change.
                        let exact = ViewPatch::between(&held[i], &game.view_of(seat));
                        assert_eq!(*patch.view, exact, "{preset:?} step {step} {seat:?}");
                        // Written member by member, the view's text is serde_json's, byte for
                        // byte (the own fields come first in both).
                        let view = format!(r#""view":{}}}"#, json(&exact));
                        assert!(frame.ends_with(&view), "{frame}\nnot ending {view}");
                        patch.view.apply(&mut held[i]);
                        assert_eq!(held[i], game.view_of(seat), "{preset:?} step {step}");
                    }
                    // A client joining now gets the whole view, and it is what the others hold.
                    if step % 11 == 0 {
                        assert_eq!(told, Told::of(&game, told.version));
                    }
                }
                assert!(game.is_over(), "{preset:?} did not finish");
            }
        }
    }
}
