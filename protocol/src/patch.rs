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
//! [`PatchFrames`] builds one change's `patch` for every client at once: the events and the
//! fields every seat shares are compared and serialised once, and each seat's own fields
//! ([`OwnView`]) are compared with what that seat was last told.

use dhumbal_engine::{Card, Event, Game, Phase, SeatView};
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
        let Some(s) = seat else {
            return OwnView::default();
        };
        let court = game.settings().court;
        let hand = game.hand(s).to_vec();
        let playing = !matches!(game.phase(), Phase::RoundOver | Phase::MatchOver);
        OwnView {
            seat,
            hand_total: dhumbal_engine::hand_total(&hand, court),
            hand_values: hand.iter().map(|c| c.value(court)).collect(),
            hand,
            takeable: if playing {
                game.takeable(s)
            } else {
                Vec::new()
            },
            can_call: game.can_call(s),
            can_draw: game.can_draw(s),
            can_throw: game.can_throw(s),
        }
    }

    /// The patch of own fields from `self` (what the seat was told) to `new`.
    fn patch_to(&self, new: &OwnView) -> ViewPatch {
        let changed = |same: bool| !same;
        ViewPatch {
            seat: changed(self.seat == new.seat).then_some(new.seat),
            hand: changed(self.hand == new.hand).then(|| new.hand.clone()),
            hand_total: changed(self.hand_total == new.hand_total).then_some(new.hand_total),
            hand_values: changed(self.hand_values == new.hand_values)
                .then(|| new.hand_values.clone()),
            takeable: changed(self.takeable == new.takeable).then(|| new.takeable.clone()),
            can_call: changed(self.can_call == new.can_call).then_some(new.can_call),
            can_draw: changed(self.can_draw == new.can_draw).then_some(new.can_draw),
            can_throw: changed(self.can_throw == new.can_throw).then_some(new.can_throw),
            ..ViewPatch::default()
        }
    }
}

/// What every client of a game was last told of its view: the view's version, the fields every
/// seat shares (a spectator's view of the game then), and each seat's own fields. A room keeps
/// one, and compares the game with it after each change to build the patches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Told {
    /// The version of the views told.
    pub version: u64,
    /// The spectator's view: the shared fields (and a spectator's own, which never change).
    pub shared: SeatView,
    /// Each seat's own fields.
    pub own: Vec<OwnView>,
}

impl Told {
    /// What a client is told of `game` now, at `version`.
    pub fn of(game: &Game, version: u64) -> Told {
        Told {
            version,
            shared: game.spectator_view(),
            own: (0..game.seats())
                .map(|s| OwnView::of(game, Some(s)))
                .collect(),
        }
    }

    /// Whether this is what a client is told of `game` now (at any version).
    pub fn is_of(&self, game: &Game) -> bool {
        self.own.len() == game.seats()
            && self.shared == game.spectator_view()
            && self
                .own
                .iter()
                .enumerate()
                .all(|(s, own)| *own == OwnView::of(game, Some(s)))
    }
}

/// One change's `patch` messages, for every client of the game at once (see the [module
/// documentation](self)): the events and the shared fields that changed are serialised once, and
/// each seat's message adds the own fields that changed for it. Each message reads back as
/// [`crate::ServerMessage::Patch`] whose view patch, applied to the view told before, gives the
/// game's view for that seat.
#[derive(Clone, Debug)]
pub struct PatchFrames {
    /// `{"type":"patch","v":…,"events":[…]` and the stand-in and clock, when there are.
    head: String,
    /// The shared fields that changed, as JSON object members without braces (maybe empty).
    shared: String,
    /// What the clients are told now.
    now: Told,
}

impl PatchFrames {
    /// The patches from `before` (what every client was told) to `game` now, for `events`
    /// played (by a stand-in for `stand_in`), with the turn's `clock`, at version
    /// `before.version + 1`.
    pub fn new(
        before: &Told,
        game: &Game,
        events: &[Event],
        stand_in: Option<usize>,
        clock: Option<TurnClock>,
    ) -> PatchFrames {
        let now = Told::of(game, before.version + 1);
        let mut head = String::with_capacity(64 + 64 * events.len());
        head.push_str(r#"{"type":"patch","v":"#);
        head.push_str(&now.version.to_string());
        if !events.is_empty() {
            head.push_str(r#","events":"#);
            head.push_str(&json(events));
        }
        if let Some(seat) = stand_in {
            head.push_str(r#","stand_in":"#);
            head.push_str(&seat.to_string());
        }
        if let Some(clock) = clock {
            head.push_str(r#","clock":"#);
            head.push_str(&json(&clock));
        }
        head.push_str(r#","view":{"#);
        let shared = members(&ViewPatch::between(&before.shared, &now.shared));
        PatchFrames { head, shared, now }
    }

    /// The `patch` for a client in `seat` (a spectator for `None`) that was told `before`.
    pub fn for_seat(&self, before: &Told, seat: Option<usize>) -> String {
        let own = match seat {
            Some(s) => match (before.own.get(s), self.now.own.get(s)) {
                (Some(old), Some(new)) => members(&old.patch_to(new)),
                (None, Some(new)) => members(&OwnView::default().patch_to(new)),
                _ => String::new(),
            },
            None => String::new(),
        };
        let comma = if own.is_empty() || self.shared.is_empty() {
            ""
        } else {
            ","
        };
        let mut out = String::with_capacity(
            self.head.len() + own.len() + self.shared.len() + comma.len() + 2,
        );
        out.push_str(&self.head);
        out.push_str(&own);
        out.push_str(comma);
        out.push_str(&self.shared);
        out.push_str("}}");
        out
    }

    /// What the clients are told once these patches are sent.
    pub fn into_told(self) -> Told {
        self.now
    }

    /// What the clients are told once these patches are sent.
    pub fn told(&self) -> &Told {
        &self.now
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

/// A patch's members as JSON without the object's braces: `"a":1,"b":2`, or nothing.
fn members(patch: &ViewPatch) -> String {
    let mut text = json(patch);
    text.pop();
    text.remove(0);
    text
}

/// A value as JSON.
fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("the parts of a patch serialise")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServerMessage;
    use dhumbal_engine::{Phase, Preset, Rounds, Settings};

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

    /// At every step of whole matches of every preset at 2, 4 and 6 seats, each seat's and a
    /// spectator's patch from [`PatchFrames`] reads back as a `patch` message whose view patch,
    /// applied to the view that client held, gives the engine's view for it; and a client that
    /// joins at any step (a whole view then) follows on from there.
    #[test]
    fn patch_frames_rebuild_every_seats_view_at_every_step() {
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
                    let frames = PatchFrames::new(&told, &game, &events, stand_in, clock);
                    for (i, &seat) in seats.iter().enumerate() {
                        let frame = frames.for_seat(&told, seat);
                        let decoded: ServerMessage =
                            serde_json::from_str(&frame).unwrap_or_else(|e| panic!("{e}: {frame}"));
                        let ServerMessage::Patch(patch) = decoded else {
                            panic!("not a patch: {frame}");
                        };
                        assert_eq!(patch.v, told.version + 1);
                        assert_eq!(patch.events, events);
                        assert_eq!(patch.stand_in, stand_in);
                        assert_eq!(patch.clock, clock);
                        // Nothing in a patch that did not change.
                        let exact = ViewPatch::between(&held[i], &game.view_of(seat));
                        assert_eq!(*patch.view, exact, "{preset:?} step {step} {seat:?}");
                        patch.view.apply(&mut held[i]);
                        assert_eq!(held[i], game.view_of(seat), "{preset:?} step {step}");
                    }
                    told = frames.into_told();
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
