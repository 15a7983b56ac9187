//! Table settings, their validation, and the named presets.
//!
//! [`Settings`] is a plain value anyone can build (from JSON, a form, a preset); a table only
//! plays it after [`Settings::validate`] accepts it, which [`crate::Game::new`] does. Every
//! option of the standard table text is here, and every difference of the household guide is an
//! option of its own, so a table can mix them.
//!
//! The presets ([`Preset`]) are fully spelled-out values with stable names:
//!
//! - `standard` — the standard table (`seeds/000_…`): four players, five cards, three rounds,
//!   draw then throw, call at or below 5, a caught caller is charged 25 instead of the hand,
//!   court cards 10 each, no runs, no jokers, zero-sum settlement.
//! - `household` — the household guide's common Nepali rules (`seeds/003_…`): "Jack = 0,
//!   Queen = 10, King = 10", "Discard one or more cards … then draw one card", drawing "the card
//!   just discarded by the previous player (if it was a single card; sets cannot be picked up)",
//!   runs of "three or more consecutive same-suit cards", no call limit ("if you believe your hand
//!   has the lowest total"), a 25-point penalty, cumulative scoring where low is good, and
//!   elimination when "total reaches or exceeds 100"; a reshuffle that keeps only the pile's top
//!   card ("reshuffle the discard pile (except the top card)"); clockwise play ("Play proceeds
//!   clockwise in Nepalese tradition", with [`Direction::CounterClockwise`] the setting for
//!   "counter-clockwise is also common"); five players, five rounds.
//! - `yaniv` — the guide's "Yaniv (Israeli cousin)": throw then draw, pick-up of the first or last
//!   card of the previous throw, J/Q/K worth 10, "a call threshold of 7", "an undercut penalty of
//!   30" charged on top of the hand, runs, jokers that are wild in runs too, cumulative scoring
//!   with the score reset on multiples of 50, elimination at 200, and a reshuffle that keeps the
//!   whole top throw (the guide is silent; Yaniv's own tables keep the last throw on the pile).
//!
//! The guide's tables are "for 2 to 5 players". A table that plays a rule only the guide has
//! (throw then draw, or cumulative scores: [`Settings::plays_the_guide`]) therefore seats at most
//! [`MAX_GUIDE_PLAYERS`] — but the check is [`Settings::validate_new_table`], asked of every new
//! table and lobby change, not [`Settings::validate`], so that a room stored with six such seats
//! before the rule still plays and replays exactly. The standard table (draw then throw, settled
//! to the taker) keeps its 2 to 6.

use serde::{Deserialize, Serialize};

use crate::card::Rank;

/// What the jack, queen and king are worth. The ace is always 1 and a joker 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CourtValues {
    /// Jack, queen and king are 10 each (standard).
    #[default]
    Tens,
    /// Jack 11, queen 12, king 13 ("sharp face cards").
    Sequential,
    /// Jack 0, queen 10, king 10 (the household guide's common Nepali values).
    JackZero,
}

impl CourtValues {
    /// What a card of this rank is worth.
    pub fn value(self, rank: Rank) -> u32 {
        let n = u32::from(rank.number());
        match (self, n) {
            (_, 1..=10) => n,
            (CourtValues::Tens, _) => 10,
            (CourtValues::Sequential, _) => n,
            (CourtValues::JackZero, 11) => 0,
            (CourtValues::JackZero, _) => 10,
        }
    }
}

/// The order of the two halves of a turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TurnOrder {
    /// Draw one card (stock or pile top), then throw one legal group (standard).
    #[default]
    DrawThenThrow,
    /// Throw one legal group, then draw one card from the stock or from the previous player's
    /// throw (the household guide, Yaniv).
    ThrowThenDraw,
}

/// Which card of the previous player's throw may be picked up (throw-then-draw tables only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PickUp {
    /// Only a throw of a single card can be picked up; a set cannot.
    #[default]
    SingleOnly,
    /// Any one card of the previous throw.
    AnyCard,
    /// The first or the last card of the previous throw (Yaniv tables).
    Ends,
}

/// How a caught caller's penalty is charged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PenaltyMode {
    /// The penalty is charged instead of the caller's hand (Dhumbal).
    #[default]
    Instead,
    /// The penalty is charged on top of the caller's hand (most Yaniv tables: hand + 30).
    OnTop,
}

/// A second, larger penalty for a caller undercut by a wide margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct DoublePenalty {
    /// The amount charged instead of the ordinary penalty (50 in the guide).
    pub amount: u32,
    /// Charged when the caller's total exceeds the lightest other hand by more than this (5).
    pub margin: u32,
}

/// How rounds are scored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// The standard table: charges are settled to the round's taker; the Paid row and the Total
    /// sum to zero, and higher is better.
    #[default]
    Settlement,
    /// The household guide: each seat adds points to a running total, and lower is better.
    Cumulative,
}

/// How many rounds a match lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Rounds {
    /// This many rounds (elimination may end the match sooner).
    Fixed(u32),
    /// Until one player remains (needs elimination).
    UntilOneRemains,
}

/// The bots' difficulty, chosen with the table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Difficulty {
    /// Remembers nothing and calls on the limit itself.
    Easy,
    /// Keeps pairs, remembers pile pick-ups for a while, calls 1 under the limit (standard).
    #[default]
    Medium,
    /// Remembers every public fact and calls 2 under the limit when it is very likely lightest.
    Hard,
    /// Hard's play, plus a model of each opponent's hidden cards and a call weighed by its
    /// expected value against the table's real penalty.
    Expert,
}

impl Difficulty {
    /// The stable lowercase name: `easy`, `medium`, `hard`, `expert`.
    pub fn name(self) -> &'static str {
        match self {
            Difficulty::Easy => "easy",
            Difficulty::Medium => "medium",
            Difficulty::Hard => "hard",
            Difficulty::Expert => "expert",
        }
    }
}

/// Which way play goes round the table: the turns, the deal and the dealer's move each round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Seat i's next is seat i + 1 (mod n), its left (standard; the guide's Nepali tradition).
    #[default]
    Clockwise,
    /// Seat i's next is seat i − 1 (mod n), its right ("counter-clockwise is also common").
    CounterClockwise,
}

impl Direction {
    /// The seat after `seat` at a table of `seats` going this way.
    ///
    /// # Panics
    ///
    /// If `seats` is 0.
    pub fn next(self, seat: usize, seats: usize) -> usize {
        match self {
            Direction::Clockwise => (seat + 1) % seats,
            Direction::CounterClockwise => (seat + seats - 1) % seats,
        }
    }

    /// The seat before `seat` at a table of `seats` going this way (whose turn came just before
    /// `seat`'s).
    ///
    /// # Panics
    ///
    /// If `seats` is 0.
    pub fn previous(self, seat: usize, seats: usize) -> usize {
        match self {
            Direction::Clockwise => (seat + seats - 1) % seats,
            Direction::CounterClockwise => (seat + 1) % seats,
        }
    }

    /// Every seat of a table of `seats` once, going this way from the seat after `seat`, ending
    /// with `seat` itself.
    pub fn seats_after(self, seat: usize, seats: usize) -> impl Iterator<Item = usize> {
        std::iter::successors(Some(seat), move |&s| Some(self.next(s, seats)))
            .skip(1)
            .take(seats)
    }

    /// The stable snake_case name: `clockwise`, `counter_clockwise`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Clockwise => "clockwise",
            Direction::CounterClockwise => "counter_clockwise",
        }
    }
}

/// What stays on the pile when the stock runs out and the pile is shuffled into a new stock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReshuffleKeeps {
    /// The pile's top card alone (the standard table; the household guide: "reshuffle the
    /// discard pile (except the top card)"). At a throw-then-draw table that card is then the
    /// whole top throw, a single card the next player may pick up.
    #[default]
    TopCard,
    /// The whole top throw, so that the next player still picks up from it as thrown (Yaniv).
    TopThrow,
}

impl ReshuffleKeeps {
    /// What a table kept before this was a setting, for settings stored without it: the top
    /// card at draw-then-throw tables, the whole top throw at throw-then-draw tables.
    pub fn before_the_setting(turn_order: TurnOrder) -> ReshuffleKeeps {
        match turn_order {
            TurnOrder::DrawThenThrow => ReshuffleKeeps::TopCard,
            TurnOrder::ThrowThenDraw => ReshuffleKeeps::TopThrow,
        }
    }

    /// How many cards stay on the pile at a reshuffle when the top throw holds `top_throw`
    /// cards: the top card, or the whole top throw (at least one card either way). The rest of
    /// the pile, under them, becomes the new stock.
    pub fn kept(self, top_throw: usize) -> usize {
        match self {
            ReshuffleKeeps::TopCard => 1,
            ReshuffleKeeps::TopThrow => top_throw.max(1),
        }
    }
}

/// Every setting of a table. Build one from a [`Preset`] or field by field; a [`crate::Game`]
/// only accepts it once [`Settings::validate`] does.
///
/// Settings read from JSON may leave out the options added since tables were first stored:
/// `turn_timer` (none), `direction` (clockwise), `hints` (off) and `reshuffle_keeps` (what the table kept
/// before it was a setting, [`ReshuffleKeeps::before_the_setting`]), so a stored room replays
/// exactly as it was played.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Seats at the table, 2 to 6 (a new table with the guide's own rules: 2 to
    /// [`MAX_GUIDE_PLAYERS`], see [`Settings::validate_new_table`]).
    pub players: u8,
    /// Cards dealt to each seat, 5 or 7.
    pub cards: u8,
    /// How long the match lasts.
    pub rounds: Rounds,
    /// A call is legal only with a hand at or under this total; `None` lets anyone call.
    pub call_limit: Option<u32>,
    /// What a caught caller is charged (25 standard, 30 in some houses).
    pub penalty: u32,
    /// Whether the penalty replaces the caller's hand or is added to it.
    pub penalty_mode: PenaltyMode,
    /// An optional larger penalty for a caller undercut by more than a margin.
    pub double_penalty: Option<DoublePenalty>,
    /// What the court cards are worth.
    pub court: CourtValues,
    /// Whether 3+ consecutive cards of one suit may be thrown together.
    pub runs: bool,
    /// Whether the two printed jokers are in the pack.
    pub jokers: bool,
    /// Whether a joker may also fill a gap in or extend a run (needs runs and jokers).
    pub jokers_in_runs: bool,
    /// Draw then throw, or throw then draw.
    pub turn_order: TurnOrder,
    /// Which card of the previous throw may be picked up (throw-then-draw only).
    pub pickup: PickUp,
    /// Settlement (zero-sum) or cumulative points.
    pub scoring: Scoring,
    /// With cumulative scoring: a seat whose total reaches this is out of the match.
    pub elimination: Option<u32>,
    /// With cumulative scoring: a total landing exactly on a multiple of 50 drops by 50.
    pub score_reset: bool,
    /// The bots' difficulty for seats no human takes.
    pub difficulty: Difficulty,
    /// Seconds a person has for each turn before a stand-in bot plays it for them: one of
    /// [`TURN_TIMERS`], or `None` for no limit (the standard table). The engine keeps no clock;
    /// the server runs the timer.
    #[serde(default)]
    pub turn_timer: Option<u32>,
    /// Which way play, the deal and the dealer's move go round the table (clockwise when left
    /// out).
    #[serde(default)]
    pub direction: Direction,
    /// What stays on the pile at a reshuffle. Left out, it is what the table kept before this
    /// was a setting: the top card at draw-then-throw tables, the whole top throw at
    /// throw-then-draw tables.
    #[serde(default)]
    pub reshuffle_keeps: ReshuffleKeeps,
    /// Whether a person may ask the coach for a hint on their turn (off when left out, and left
    /// out of the JSON when off). Everyone at the table sees the setting; the engine ignores it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub hints: bool,
}

/// Whether `b` is `false` (a setting that is off is left out of the JSON).
fn is_false(b: &bool) -> bool {
    !*b
}

/// The fields of [`Settings`] as JSON gives them, with the options added later optional; only
/// [`Settings`]'s `Deserialize` uses it, to fill them in as tables stored before them played.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsFields {
    players: u8,
    cards: u8,
    rounds: Rounds,
    call_limit: Option<u32>,
    penalty: u32,
    penalty_mode: PenaltyMode,
    double_penalty: Option<DoublePenalty>,
    court: CourtValues,
    runs: bool,
    jokers: bool,
    jokers_in_runs: bool,
    turn_order: TurnOrder,
    pickup: PickUp,
    scoring: Scoring,
    elimination: Option<u32>,
    score_reset: bool,
    difficulty: Difficulty,
    #[serde(default)]
    turn_timer: Option<u32>,
    #[serde(default)]
    direction: Direction,
    #[serde(default)]
    reshuffle_keeps: Option<ReshuffleKeeps>,
    #[serde(default)]
    hints: bool,
}

impl<'de> Deserialize<'de> for Settings {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Settings, D::Error> {
        let f = SettingsFields::deserialize(deserializer)?;
        Ok(Settings {
            players: f.players,
            cards: f.cards,
            rounds: f.rounds,
            call_limit: f.call_limit,
            penalty: f.penalty,
            penalty_mode: f.penalty_mode,
            double_penalty: f.double_penalty,
            court: f.court,
            runs: f.runs,
            jokers: f.jokers,
            jokers_in_runs: f.jokers_in_runs,
            turn_order: f.turn_order,
            pickup: f.pickup,
            scoring: f.scoring,
            elimination: f.elimination,
            score_reset: f.score_reset,
            difficulty: f.difficulty,
            turn_timer: f.turn_timer,
            direction: f.direction,
            reshuffle_keeps: f
                .reshuffle_keeps
                .unwrap_or_else(|| ReshuffleKeeps::before_the_setting(f.turn_order)),
            hints: f.hints,
        })
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Preset::Standard.settings()
    }
}

/// The throw cap: after this many throws in one deal, counted across the table, the round ends
/// with a show.
pub const THROW_CAP: u32 = 200;

/// The most rounds a fixed-length match may have.
pub const MAX_ROUNDS: u32 = 100;
/// The highest call limit a table may set.
pub const MAX_CALL_LIMIT: u32 = 50;
/// The largest penalty a table may set.
pub const MAX_PENALTY: u32 = 500;
/// The highest elimination threshold a table may set.
pub const MAX_ELIMINATION: u32 = 1000;
/// The most seats at a table that plays the household guide's own rules (throw then draw, or
/// cumulative scores): its tables are "for 2 to 5 players".
pub const MAX_GUIDE_PLAYERS: u8 = 5;
/// The turn timers a table may set, in seconds.
pub const TURN_TIMERS: [u32; 4] = [15, 30, 60, 120];

/// Why a [`Settings`] value cannot be played. Each variant has a stable code ([`Self::code`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// Players must be 2 to 6.
    #[error("players must be 2 to 6, not {0}")]
    Players(u8),
    /// Cards must be 5 or 7.
    #[error("cards dealt must be 5 or 7, not {0}")]
    Cards(u8),
    /// Rounds must be 1 to [`MAX_ROUNDS`].
    #[error("rounds must be 1 to {MAX_ROUNDS}, not {0}")]
    Rounds(u32),
    /// "Until one remains" needs elimination.
    #[error("a match can only run until one player remains when elimination is on")]
    UntilOneNeedsElimination,
    /// The call limit must be at most [`MAX_CALL_LIMIT`].
    #[error("the call limit must be 0 to {MAX_CALL_LIMIT}, not {0}")]
    CallLimit(u32),
    /// The penalty must be 1 to [`MAX_PENALTY`].
    #[error("the penalty must be 1 to {MAX_PENALTY}, not {0}")]
    Penalty(u32),
    /// The double penalty must be larger than the penalty and at most [`MAX_PENALTY`].
    #[error(
        "the double penalty must be more than the penalty ({penalty}) and at most {MAX_PENALTY}, not {amount}"
    )]
    DoublePenalty {
        /// The ordinary penalty.
        penalty: u32,
        /// The double penalty asked for.
        amount: u32,
    },
    /// The double penalty's margin must be at most [`MAX_CALL_LIMIT`].
    #[error("the double penalty's margin must be 0 to {MAX_CALL_LIMIT}, not {0}")]
    DoublePenaltyMargin(u32),
    /// Jokers in runs needs both runs and jokers.
    #[error("jokers in runs needs both runs and jokers turned on")]
    JokersInRunsNeedsRunsAndJokers,
    /// A pick-up rule other than single-card only makes sense in throw-then-draw tables.
    #[error("the pick-up rule applies only when players throw before they draw")]
    PickUpNeedsThrowFirst,
    /// Elimination needs cumulative scoring.
    #[error("elimination needs cumulative scoring")]
    EliminationNeedsCumulative,
    /// The elimination threshold must be 1 to [`MAX_ELIMINATION`].
    #[error("the elimination threshold must be 1 to {MAX_ELIMINATION}, not {0}")]
    Elimination(u32),
    /// The score reset needs cumulative scoring.
    #[error("the score reset needs cumulative scoring")]
    ScoreResetNeedsCumulative,
    /// The turn timer must be one of [`TURN_TIMERS`] or off.
    #[error("the turn timer must be off, 15, 30, 60 or 120 seconds, not {0}")]
    TurnTimer(u32),
    /// A table playing the household guide's own rules (throw then draw, or cumulative scores)
    /// seats 2 to [`MAX_GUIDE_PLAYERS`]; checked for new tables ([`Settings::validate_new_table`]).
    #[error(
        "the household guide's rules (throw then draw, cumulative scores) are for 2 to 5 players, not {0}"
    )]
    GuidePlayers(u8),
    /// An explicit deck is not the table's full pack, or there are no decks.
    #[error("a fixed deck must hold every card of the table's pack exactly once")]
    Deck,
}

impl SettingsError {
    /// The stable snake_case code of this error, for the wire.
    pub fn code(&self) -> &'static str {
        match self {
            SettingsError::Players(_) => "bad_players",
            SettingsError::Cards(_) => "bad_cards",
            SettingsError::Rounds(_) => "bad_rounds",
            SettingsError::UntilOneNeedsElimination => "until_one_needs_elimination",
            SettingsError::CallLimit(_) => "bad_call_limit",
            SettingsError::Penalty(_) => "bad_penalty",
            SettingsError::DoublePenalty { .. } => "bad_double_penalty",
            SettingsError::DoublePenaltyMargin(_) => "bad_double_penalty_margin",
            SettingsError::JokersInRunsNeedsRunsAndJokers => "jokers_in_runs_needs_runs_and_jokers",
            SettingsError::PickUpNeedsThrowFirst => "pickup_needs_throw_first",
            SettingsError::EliminationNeedsCumulative => "elimination_needs_cumulative",
            SettingsError::Elimination(_) => "bad_elimination",
            SettingsError::ScoreResetNeedsCumulative => "score_reset_needs_cumulative",
            SettingsError::TurnTimer(_) => "bad_turn_timer",
            SettingsError::GuidePlayers(_) => "guide_players",
            SettingsError::Deck => "bad_deck",
        }
    }
}

impl Settings {
    /// Checks every setting and every combination; the first problem found is returned.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if !(2..=6).contains(&self.players) {
            return Err(SettingsError::Players(self.players));
        }
        if !matches!(self.cards, 5 | 7) {
            return Err(SettingsError::Cards(self.cards));
        }
        match self.rounds {
            Rounds::Fixed(n) if !(1..=MAX_ROUNDS).contains(&n) => {
                return Err(SettingsError::Rounds(n));
            }
            Rounds::UntilOneRemains if self.elimination.is_none() => {
                return Err(SettingsError::UntilOneNeedsElimination);
            }
            _ => {}
        }
        if let Some(limit) = self.call_limit.filter(|&l| l > MAX_CALL_LIMIT) {
            return Err(SettingsError::CallLimit(limit));
        }
        if !(1..=MAX_PENALTY).contains(&self.penalty) {
            return Err(SettingsError::Penalty(self.penalty));
        }
        if let Some(double) = self.double_penalty {
            if double.amount <= self.penalty || double.amount > MAX_PENALTY {
                return Err(SettingsError::DoublePenalty {
                    penalty: self.penalty,
                    amount: double.amount,
                });
            }
            if double.margin > MAX_CALL_LIMIT {
                return Err(SettingsError::DoublePenaltyMargin(double.margin));
            }
        }
        if self.jokers_in_runs && !(self.runs && self.jokers) {
            return Err(SettingsError::JokersInRunsNeedsRunsAndJokers);
        }
        if self.turn_order == TurnOrder::DrawThenThrow && self.pickup != PickUp::SingleOnly {
            return Err(SettingsError::PickUpNeedsThrowFirst);
        }
        if let Some(threshold) = self.elimination {
            if self.scoring != Scoring::Cumulative {
                return Err(SettingsError::EliminationNeedsCumulative);
            }
            if !(1..=MAX_ELIMINATION).contains(&threshold) {
                return Err(SettingsError::Elimination(threshold));
            }
        }
        if self.score_reset && self.scoring != Scoring::Cumulative {
            return Err(SettingsError::ScoreResetNeedsCumulative);
        }
        if let Some(seconds) = self.turn_timer.filter(|s| !TURN_TIMERS.contains(s)) {
            return Err(SettingsError::TurnTimer(seconds));
        }
        Ok(())
    }

    /// Checks settings offered for a table from now on (a new room, a lobby's change): everything
    /// [`Settings::validate`] checks, and that a table playing the household guide's own rules
    /// (throw then draw, or cumulative scores) seats at most [`MAX_GUIDE_PLAYERS`], as the guide's
    /// tables are "for 2 to 5 players". [`Settings::validate`] alone, which a [`crate::Game`]
    /// and a replay ask, still plays a six-seat table stored before this rule.
    pub fn validate_new_table(&self) -> Result<(), SettingsError> {
        self.validate()?;
        if self.plays_the_guide() && self.players > MAX_GUIDE_PLAYERS {
            return Err(SettingsError::GuidePlayers(self.players));
        }
        Ok(())
    }

    /// Whether the table plays a rule only the household guide has: throw then draw, or
    /// cumulative scores (elimination, the score reset and the pick-up rules come with these).
    pub fn plays_the_guide(&self) -> bool {
        self.turn_order == TurnOrder::ThrowThenDraw || self.scoring == Scoring::Cumulative
    }

    /// The seat after `seat` in the table's [`Direction`].
    pub fn next_seat(&self, seat: usize) -> usize {
        self.direction.next(seat, usize::from(self.players))
    }

    /// The seat before `seat` in the table's [`Direction`]: the one whose turn came just before.
    pub fn previous_seat(&self, seat: usize) -> usize {
        self.direction.previous(seat, usize::from(self.players))
    }

    /// Round 1's dealer: the seat before seat 0 in the table's direction (the last seat
    /// clockwise, seat 1 counter-clockwise), so seat 0 leads the match.
    pub fn first_dealer(&self) -> usize {
        self.previous_seat(0)
    }

    /// Every seat once, in the order play goes round the table from the seat after `seat`,
    /// ending with `seat` itself.
    pub fn seats_after(&self, seat: usize) -> impl Iterator<Item = usize> + use<> {
        self.direction.seats_after(seat, usize::from(self.players))
    }

    /// The number of cards in this table's pack: 52, or 54 with jokers.
    pub fn deck_size(&self) -> usize {
        if self.jokers { 54 } else { 52 }
    }
}

/// A named, fully spelled-out set of settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// The standard table (the default).
    Standard,
    /// The household guide's common Nepali rules.
    Household,
    /// Yaniv, the guide's Israeli cousin.
    Yaniv,
}

impl Preset {
    /// Every preset, the default first.
    pub const ALL: [Preset; 3] = [Preset::Standard, Preset::Household, Preset::Yaniv];

    /// The preset's stable name: `standard`, `household`, `yaniv`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Standard => "standard",
            Preset::Household => "household",
            Preset::Yaniv => "yaniv",
        }
    }

    /// The preset with this stable name.
    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The preset's settings, every field spelled out.
    pub fn settings(self) -> Settings {
        match self {
            Preset::Standard => Settings {
                players: 4,
                cards: 5,
                rounds: Rounds::Fixed(3),
                call_limit: Some(5),
                penalty: 25,
                penalty_mode: PenaltyMode::Instead,
                double_penalty: None,
                court: CourtValues::Tens,
                runs: false,
                jokers: false,
                jokers_in_runs: false,
                turn_order: TurnOrder::DrawThenThrow,
                pickup: PickUp::SingleOnly,
                scoring: Scoring::Settlement,
                elimination: None,
                score_reset: false,
                difficulty: Difficulty::Medium,
                turn_timer: None,
                direction: Direction::Clockwise,
                reshuffle_keeps: ReshuffleKeeps::TopCard,
                hints: false,
            },
            Preset::Household => Settings {
                players: 5,
                cards: 5,
                rounds: Rounds::Fixed(5),
                call_limit: None,
                penalty: 25,
                penalty_mode: PenaltyMode::Instead,
                double_penalty: None,
                court: CourtValues::JackZero,
                runs: true,
                jokers: false,
                jokers_in_runs: false,
                turn_order: TurnOrder::ThrowThenDraw,
                pickup: PickUp::SingleOnly,
                scoring: Scoring::Cumulative,
                elimination: Some(100),
                score_reset: false,
                difficulty: Difficulty::Medium,
                turn_timer: None,
                direction: Direction::Clockwise,
                reshuffle_keeps: ReshuffleKeeps::TopCard,
                hints: false,
            },
            Preset::Yaniv => Settings {
                players: 4,
                cards: 5,
                rounds: Rounds::UntilOneRemains,
                call_limit: Some(7),
                penalty: 30,
                penalty_mode: PenaltyMode::OnTop,
                double_penalty: None,
                court: CourtValues::Tens,
                runs: true,
                jokers: true,
                jokers_in_runs: true,
                turn_order: TurnOrder::ThrowThenDraw,
                pickup: PickUp::Ends,
                scoring: Scoring::Cumulative,
                elimination: Some(200),
                score_reset: true,
                difficulty: Difficulty::Medium,
                turn_timer: None,
                direction: Direction::Clockwise,
                reshuffle_keeps: ReshuffleKeeps::TopThrow,
                hints: false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_valid_and_named_stably() {
        for preset in Preset::ALL {
            preset.settings().validate().unwrap();
            assert_eq!(Preset::from_name(preset.name()), Some(preset));
        }
        assert_eq!(Settings::default(), Preset::Standard.settings());
    }

    #[test]
    fn the_standard_table_matches_its_settings_table() {
        let s = Settings::default();
        assert_eq!((s.players, s.cards, s.rounds), (4, 5, Rounds::Fixed(3)));
        assert_eq!((s.call_limit, s.penalty), (Some(5), 25));
        assert_eq!(s.court, CourtValues::Tens);
        assert!(!s.runs && !s.jokers);
        assert_eq!(s.difficulty, Difficulty::Medium);
        assert_eq!(s.scoring, Scoring::Settlement);
        assert_eq!(s.turn_order, TurnOrder::DrawThenThrow);
        assert_eq!(s.turn_timer, None);
    }

    #[test]
    fn out_of_range_settings_are_refused_with_their_codes() {
        let base = Settings::default();
        let cases: Vec<(Settings, &str)> = vec![
            (
                Settings {
                    players: 1,
                    ..base.clone()
                },
                "bad_players",
            ),
            (
                Settings {
                    players: 7,
                    ..base.clone()
                },
                "bad_players",
            ),
            (
                Settings {
                    cards: 6,
                    ..base.clone()
                },
                "bad_cards",
            ),
            (
                Settings {
                    turn_timer: Some(45),
                    ..base.clone()
                },
                "bad_turn_timer",
            ),
            (
                Settings {
                    turn_timer: Some(0),
                    ..base.clone()
                },
                "bad_turn_timer",
            ),
            (
                Settings {
                    rounds: Rounds::Fixed(0),
                    ..base.clone()
                },
                "bad_rounds",
            ),
            (
                Settings {
                    rounds: Rounds::UntilOneRemains,
                    ..base.clone()
                },
                "until_one_needs_elimination",
            ),
            (
                Settings {
                    call_limit: Some(51),
                    ..base.clone()
                },
                "bad_call_limit",
            ),
            (
                Settings {
                    penalty: 0,
                    ..base.clone()
                },
                "bad_penalty",
            ),
            (
                Settings {
                    double_penalty: Some(DoublePenalty {
                        amount: 20,
                        margin: 5,
                    }),
                    ..base.clone()
                },
                "bad_double_penalty",
            ),
            (
                Settings {
                    jokers_in_runs: true,
                    jokers: true,
                    ..base.clone()
                },
                "jokers_in_runs_needs_runs_and_jokers",
            ),
            (
                Settings {
                    pickup: PickUp::AnyCard,
                    ..base.clone()
                },
                "pickup_needs_throw_first",
            ),
            (
                Settings {
                    elimination: Some(100),
                    ..base.clone()
                },
                "elimination_needs_cumulative",
            ),
            (
                Settings {
                    score_reset: true,
                    ..base.clone()
                },
                "score_reset_needs_cumulative",
            ),
        ];
        for (settings, code) in cases {
            assert_eq!(
                settings.validate().unwrap_err().code(),
                code,
                "{settings:?}"
            );
        }
    }

    #[test]
    fn court_values_cover_the_three_tables() {
        let [j, q, k] = [Rank::JACK, Rank::QUEEN, Rank::KING];
        assert_eq!([j, q, k].map(|r| CourtValues::Tens.value(r)), [10, 10, 10]);
        assert_eq!(
            [j, q, k].map(|r| CourtValues::Sequential.value(r)),
            [11, 12, 13]
        );
        assert_eq!(
            [j, q, k].map(|r| CourtValues::JackZero.value(r)),
            [0, 10, 10]
        );
        assert_eq!(CourtValues::JackZero.value(Rank::ACE), 1);
    }

    #[test]
    fn settings_round_trip_through_json() {
        for preset in Preset::ALL {
            let s = preset.settings();
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Settings>(&json).unwrap(), s);
        }
    }
}
