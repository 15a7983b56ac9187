//! The coach: the expert's judgement of one decision, and a review of a seat's whole match,
//! each computed only from what that seat knew at the time.
//!
//! - [`advise`] weighs every sensible move of the decision a [`SeatView`] faces (the call, each
//!   draw, the throws hard's judgement ranks best, and any move the caller names) by playing the
//!   rest of the round out from the same samples of the hidden cards ([`crate::search`]'s
//!   play-outs, drawn from the calibrated [`Belief`]), and says which is best, by how much, and
//!   why ([`Why`]) in terms a person can check. A hint at the table is one [`Advice`].
//! - [`review`] replays a finished match ([`dhumbal_engine::replay`]) and asks [`advise`] about
//!   every decision one seat made, from that seat's own view and the public history at that
//!   moment — never the hidden hands, which the hand history holds but no [`SeatView`] does. A
//!   decision is flagged when the move it made is behind the best by at least
//!   [`CoachParams::flag_at`] points and by [`CoachParams::z`] standard errors of the paired
//!   difference, so the luck of the samples does not flag a good move; the two moves are then
//!   weighed again on fresh samples ([`reweigh`], [`CoachParams::recheck`]), and that second,
//!   independent estimate is the cost reported (a flag it puts under `flag_at` is dropped),
//!   because the first overstates what a flagged decision cost (the winner's curse).
//!   [`judge_match`] is the rule, decision by decision.
//!
//! Values are the seat's score for the round, higher better: its Paid at a settlement table,
//! minus the points it takes at a cumulative one. The work is a fixed number of samples
//! ([`CoachParams::samples`]) from a seed made of the decision's place in the match, so the same
//! match gets the same review on any machine, and no clock is read.

use dhumbal_engine::{
    Action, Card, HandHistory, PublicHistory, RoundResult, Scoring, SeatView, Source, TurnOrder,
    classify, replay,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::belief::Belief;
use crate::groups::total;
use crate::hard::Judge;
use crate::memory::Memory;
use crate::search::{Candidate, SearchParams, play_outs};
use crate::turn::{Step, step, stock_drawable};

/// How much the coach weighs, and when it flags a decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoachParams {
    /// Samples of the hidden cards each move is played out from (every move meets the same).
    pub samples: u32,
    /// How many of the throws hard's judgement ranks best are weighed (besides the one made).
    pub throws: usize,
    /// A decision is flagged only when its move is behind the best by at least this many points.
    pub flag_at: f64,
    /// … and by this many standard errors of the paired difference.
    pub z: f64,
    /// Whether a decision flagged so is weighed again, on fresh samples, against the best
    /// ([`reweigh`]): the review then reports that second estimate and drops the flag if it is
    /// under [`CoachParams::flag_at`]. The first estimate of a flagged decision overstates its
    /// cost (it is flagged *because* its samples favoured the best); the second is free of that
    /// bias, though not of the play-outs' own (`docs/bots.md`, "How far to trust "points
    /// lost"").
    pub recheck: bool,
}

impl CoachParams {
    /// The review's budget: 96 samples, four throws, flags re-checked.
    pub const REVIEW: CoachParams = CoachParams {
        samples: 96,
        throws: 4,
        flag_at: 0.5,
        z: 2.0,
        recheck: true,
    };
    /// A hint's budget at the table: fewer samples, to answer within a tenth of a second.
    pub const HINT: CoachParams = CoachParams {
        samples: 64,
        throws: 4,
        flag_at: 0.5,
        z: 2.0,
        recheck: false,
    };
}

impl Default for CoachParams {
    fn default() -> CoachParams {
        CoachParams::REVIEW
    }
}

/// A move the coach weighs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Move {
    /// Call.
    Call,
    /// Draw: this card of the pile, or from the stock when `card` is `null`.
    Draw {
        /// The pile card taken; `null`: the stock.
        card: Option<Card>,
    },
    /// Throw these cards, in this order.
    Throw {
        /// The cards thrown.
        cards: Vec<Card>,
    },
}

impl Move {
    /// The move an action of the seat of `view` makes (a draw from `pile` names the one card it
    /// takes).
    pub fn of(action: &Action, view: &SeatView) -> Move {
        match action {
            Action::Call => Move::Call,
            Action::Draw {
                from: Source::Stock,
            } => Move::Draw { card: None },
            Action::Draw {
                from: Source::PileCard(card),
            } => Move::Draw { card: Some(*card) },
            Action::Draw { from: Source::Pile } => Move::Draw {
                card: view.takeable.first().copied(),
            },
            Action::Throw { cards } => Move::Throw {
                cards: cards.clone(),
            },
        }
    }

    /// The action that makes this move.
    pub fn action(&self) -> Action {
        match self {
            Move::Call => Action::Call,
            Move::Draw { card: None } => Action::Draw {
                from: Source::Stock,
            },
            Move::Draw { card: Some(card) } => Action::Draw {
                from: Source::PileCard(*card),
            },
            Move::Throw { cards } => Action::Throw {
                cards: cards.clone(),
            },
        }
    }

    /// Whether two moves are the same (a throw of the same cards in another order is).
    pub fn same(&self, other: &Move) -> bool {
        match (self, other) {
            (Move::Throw { cards: a }, Move::Throw { cards: b }) => {
                a.len() == b.len() && a.iter().all(|c| b.contains(c))
            }
            _ => self == other,
        }
    }

    /// The search's candidate for this move (`None`: the call).
    fn candidate(&self) -> Option<Candidate> {
        match self {
            Move::Call => None,
            Move::Draw { card } => Some(Candidate::Draw(*card)),
            Move::Throw { cards } => Some(Candidate::Throw(cards.clone())),
        }
    }
}

/// Why the best move beats the other one, in terms a person can check at the table. The page
/// turns it into a sentence in its language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Why {
    /// Calling: the hand of `total` was the lightest about `lightest` per cent of the time.
    Call {
        /// The hand's total.
        total: u32,
        /// The chance, in whole per cent, that every other hand was heavier.
        lightest: u32,
    },
    /// Holding on rather than calling on `total`: every other hand was heavier only about
    /// `lightest` per cent of the time.
    Hold {
        /// The hand's total.
        total: u32,
        /// The chance, in whole per cent, that every other hand was heavier.
        lightest: u32,
    },
    /// Taking `card` from the pile: it goes with `with` (a set or a run to throw together).
    Goes {
        /// The pile card.
        card: Card,
        /// The cards in hand it goes with.
        with: Vec<Card>,
    },
    /// Taking `card` from the pile: it is low.
    Low {
        /// The pile card.
        card: Card,
    },
    /// The stock rather than `card` from the pile, which does not help the hand.
    Stock {
        /// The pile card left.
        card: Card,
    },
    /// This throw sheds `points`, more than the other.
    Sheds {
        /// The points thrown.
        points: u32,
    },
    /// This throw keeps `cards` together, which the other broke up.
    Keeps {
        /// The set or run kept.
        cards: Vec<Card>,
    },
    /// Nothing simpler to say: it did best when the rest of the round was played out.
    PlaysOut,
    /// It was the only move.
    Only,
}

/// One move, weighed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Weighed {
    /// The move.
    #[serde(rename = "move")]
    pub play: Move,
    /// Its expected score for the round (Paid, or minus the points taken).
    pub value: Tenths,
    /// How far behind the best it is (0 for the best).
    pub behind: Tenths,
    /// The standard error of that difference (paired, over the samples).
    pub error: Tenths,
}

/// The coach's judgement of one decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Advice {
    /// The moves weighed, best first.
    pub moves: Vec<Weighed>,
    /// Why the best beats the next best.
    pub why: Why,
    /// Samples each move was played out from.
    pub samples: u32,
}

impl Advice {
    /// The best move.
    pub fn best(&self) -> &Move {
        &self.moves[0].play
    }

    /// How `chose` was weighed, if it was.
    pub fn weighed(&self, chose: &Move) -> Option<&Weighed> {
        self.moves.iter().find(|w| w.play.same(chose))
    }
}

/// Weighs the decision `view`'s seat faces (it must be its turn), with the table's public
/// `history`; `also` is a move to weigh whatever its rank (the one a person made). `seed` makes
/// the samples: the same view, history and seed give the same advice.
pub fn advise(
    view: &SeatView,
    history: &PublicHistory,
    also: Option<&Move>,
    params: &CoachParams,
    seed: u64,
) -> Advice {
    let memory = synced(view, history);
    let judge = judge_of(view, &memory);
    let mut moves = candidates(view, &judge, params);
    if let Some(also) = also
        && !moves.iter().any(|m| m.same(also))
    {
        moves.push(also.clone());
    }
    if moves.len() < 2 {
        let only = moves
            .pop()
            .unwrap_or_else(|| Move::of(&crate::hard::play(view, step(view), &judge), view));
        return Advice {
            moves: vec![Weighed {
                play: only,
                value: Tenths(0),
                behind: Tenths(0),
                error: Tenths(0),
            }],
            why: Why::Only,
            samples: 0,
        };
    }
    let candidates: Vec<Option<Candidate>> = moves.iter().map(Move::candidate).collect();
    let open = SearchParams::default().open_call_at;
    let scores = play_outs(
        view,
        &memory,
        &judge,
        &candidates,
        params.samples,
        open,
        seed,
    );
    let n = f64::from(params.samples.max(1));
    let means: Vec<f64> = scores.iter().map(|s| s.iter().sum::<f64>() / n).collect();
    let best = (0..means.len())
        .max_by(|&a, &b| means[a].total_cmp(&means[b]).then(b.cmp(&a)))
        .unwrap_or(0);
    let mut weighed: Vec<Weighed> = moves
        .into_iter()
        .enumerate()
        .map(|(k, play)| {
            let behind = means[best] - means[k];
            let spread = scores[best]
                .iter()
                .zip(&scores[k])
                .map(|(a, b)| (a - b - behind).powi(2))
                .sum::<f64>()
                / (n - 1.0).max(1.0);
            Weighed {
                play,
                value: Tenths::of(means[k]),
                behind: Tenths::of(behind),
                error: Tenths::of((spread / n).sqrt()),
            }
        })
        .collect();
    // Best first; among equals, the order they were proposed in (the judge's).
    weighed.sort_by_key(|w| w.behind);
    let why = why(view, &memory, &weighed[0].play, &weighed[1].play);
    Advice {
        moves: weighed,
        why,
        samples: params.samples,
    }
}

/// What the public `history` tells `view`'s seat.
fn synced(view: &SeatView, history: &PublicHistory) -> Memory {
    let mut memory = Memory::new();
    memory.sync(view, history);
    memory
}

/// The coach's judge at `view`: the expert's judgement of draws and throws (hard's, with the
/// expert's own weights at a throw-then-draw table: [`ExpertParams::throw_first_judge`]),
/// planning to call at the expert's total.
///
/// [`ExpertParams::throw_first_judge`]: crate::expert::ExpertParams::throw_first_judge
fn judge_of<'a>(view: &'a SeatView, memory: &Memory) -> Judge<'a> {
    let expert = crate::expert::ExpertParams::default();
    let plan_at = match view.settings.call_limit {
        Some(limit) => Some(limit - 1.min(limit / 2)),
        None => Some(expert.open_plan_at),
    };
    let judge = Judge::with_call_at(view, memory, plan_at);
    match view.settings.turn_order {
        TurnOrder::ThrowThenDraw => judge.with_params(expert.throw_first_judge),
        TurnOrder::DrawThenThrow => judge,
    }
}

/// Weighs only `best` against `chose` at `view`'s decision, afresh: both played out from
/// [`CoachParams::samples`] new samples made from `seed` (give it a seed other than the one the
/// decision was first weighed with). Returns how many points `chose` is behind `best` (negative
/// if ahead) and the standard error of that paired difference. An independent second look at a
/// flagged decision: the first estimate is large partly *because* it is flagged (the samples
/// that happened to favour the best made the flag), this one is not.
pub fn reweigh(
    view: &SeatView,
    history: &PublicHistory,
    best: &Move,
    chose: &Move,
    params: &CoachParams,
    seed: u64,
) -> (f64, f64) {
    if best.same(chose) {
        return (0.0, 0.0);
    }
    let memory = synced(view, history);
    let judge = judge_of(view, &memory);
    let candidates = [best.candidate(), chose.candidate()];
    let open = SearchParams::default().open_call_at;
    let scores = play_outs(
        view,
        &memory,
        &judge,
        &candidates,
        params.samples,
        open,
        seed,
    );
    let diffs: Vec<f64> = scores[0]
        .iter()
        .zip(&scores[1])
        .map(|(a, b)| a - b)
        .collect();
    let n = diffs.len().max(1) as f64;
    let mean = diffs.iter().sum::<f64>() / n;
    let spread = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, (spread / n).sqrt())
}

/// `seat`'s score in a finished round, in the coach's unit (higher better): its Paid row — at a
/// settlement table what it paid or was paid, at a cumulative one minus what its total grew by
/// (the points it took, less 50 where the total reset) — as the play-outs score a round's end.
pub fn round_value(result: &RoundResult, seat: usize, scoring: Scoring) -> f64 {
    match scoring {
        Scoring::Settlement => result.paid[seat] as f64,
        Scoring::Cumulative => -(result.paid[seat] as f64),
    }
}

/// The moves worth weighing at `view`'s decision.
fn candidates(view: &SeatView, judge: &Judge<'_>, params: &CoachParams) -> Vec<Move> {
    let step = step(view);
    let mut moves = Vec::new();
    if matches!(step, Step::CallOrDraw | Step::CallOrThrow) && view.can_call {
        moves.push(Move::Call);
    }
    match step {
        Step::CallOrDraw | Step::Draw => {
            if stock_drawable(view) || view.takeable.is_empty() {
                moves.push(Move::Draw { card: None });
            }
            let pile_ok = !(view.hand.is_empty() && step == Step::CallOrDraw);
            if pile_ok {
                moves.extend(view.takeable.iter().map(|&c| Move::Draw { card: Some(c) }));
            }
        }
        Step::Throw | Step::CallOrThrow => {
            let ranked = if step == Step::Throw {
                judge.ranked_throws(&view.hand, view.barred)
            } else {
                judge.ranked_throws_first(view)
            };
            moves.extend(
                ranked
                    .into_iter()
                    .take(params.throws)
                    .map(|(cards, _)| Move::Throw { cards }),
            );
        }
    }
    moves
}

/// Why `best` beats `other` at `view`.
fn why(view: &SeatView, memory: &Memory, best: &Move, other: &Move) -> Why {
    let settings = &view.settings;
    let lightest = || {
        let belief = Belief::new(view, memory);
        (belief.chance_lightest(view.hand_total) * 100.0).round() as u32
    };
    match (best, other) {
        (Move::Call, _) => Why::Call {
            total: view.hand_total,
            lightest: lightest(),
        },
        (_, Move::Call) => Why::Hold {
            total: view.hand_total,
            lightest: lightest(),
        },
        (Move::Draw { card: Some(card) }, _) => {
            let with = goes_with(&view.hand, *card, view);
            if !with.is_empty() {
                Why::Goes { card: *card, with }
            } else if total(&[*card], settings) <= 3 {
                Why::Low { card: *card }
            } else {
                Why::PlaysOut
            }
        }
        (Move::Draw { card: None }, Move::Draw { card: Some(card) }) => Why::Stock { card: *card },
        (Move::Throw { cards: mine }, Move::Throw { cards: theirs }) => {
            let rest: Vec<Card> = view
                .hand
                .iter()
                .copied()
                .filter(|c| !mine.contains(c))
                .collect();
            let broken = theirs.iter().filter(|c| !mine.contains(c)).find_map(|&c| {
                let mut kept = goes_with(&rest, c, view);
                kept.push(c);
                kept.sort();
                (kept.len() > 1).then_some(kept)
            });
            if let Some(cards) = broken {
                Why::Keeps { cards }
            } else if total(mine, settings) > total(theirs, settings) {
                Why::Sheds {
                    points: total(mine, settings),
                }
            } else {
                Why::PlaysOut
            }
        }
        _ => Why::PlaysOut,
    }
}

/// The cards of `hand` that `card` makes a legal group of two or more with (its rank's other
/// cards, or, failing that, the cards of a run through it), sorted; empty if none.
fn goes_with(hand: &[Card], card: Card, view: &SeatView) -> Vec<Card> {
    let settings = &view.settings;
    let others: Vec<Card> = hand.iter().copied().filter(|&c| c != card).collect();
    let same: Vec<Card> = others
        .iter()
        .copied()
        .filter(|c| c.rank().is_some() && c.rank() == card.rank())
        .collect();
    let mut with = same;
    if with.is_empty() && settings.runs {
        // The longest run through `card` out of the hand's cards of its suit.
        let suited: Vec<Card> = others
            .iter()
            .copied()
            .filter(|c| c.suit().is_some() && c.suit() == card.suit())
            .collect();
        for a in 0..suited.len() {
            for b in a + 1..suited.len() {
                let group = [suited[a], suited[b], card];
                if classify(&group, settings).is_some() && with.len() < 2 {
                    with = vec![suited[a], suited[b]];
                }
            }
        }
    }
    with.sort();
    with
}

/// An amount of points to a tenth: on the wire, a number with at most one decimal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tenths(pub i32);

impl Tenths {
    /// `points`, to the nearest tenth.
    pub fn of(points: f64) -> Tenths {
        Tenths((points * 10.0).round() as i32)
    }

    /// The amount in points.
    pub fn points(self) -> f64 {
        f64::from(self.0) / 10.0
    }
}

impl Serialize for Tenths {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.points())
    }
}

impl<'de> Deserialize<'de> for Tenths {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tenths, D::Error> {
        f64::deserialize(deserializer).map(Tenths::of)
    }
}

#[cfg(feature = "schemars")]
impl schemars::JsonSchema for Tenths {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Tenths".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        f64::json_schema(generator)
    }
}

/// One decision a seat made, as the review judges it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Decision {
    /// The round, from 1.
    pub round: u32,
    /// The seat's turn in that round, from 1.
    pub turn: u32,
    /// The seat's hand when it decided.
    pub hand: Vec<Card>,
    /// Its total.
    pub total: u32,
    /// What it did.
    pub chose: Move,
    /// What the coach found best.
    pub best: Move,
    /// How many points of the round's expected score the difference cost: with
    /// [`CoachParams::recheck`] (the review's), the re-check's estimate, on samples other than
    /// those that flagged it; else the first.
    pub cost: Tenths,
    /// Why the best was better.
    pub why: Why,
}

/// A review of one seat's decisions over a whole match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Review {
    /// The seat reviewed.
    pub seat: usize,
    /// How the table scores: a cost is Paid at a settlement table, points at a cumulative one.
    pub scoring: Scoring,
    /// How many decisions were weighed (a move with no alternative is not).
    pub weighed: u32,
    /// The decisions flagged, in the order they were made.
    pub flagged: Vec<Decision>,
    /// What the flagged decisions cost together.
    pub cost: Tenths,
}

impl Review {
    /// The `n` costliest flagged decisions, costliest first (the earlier first among equals).
    pub fn costliest(&self, n: usize) -> Vec<&Decision> {
        let mut all: Vec<&Decision> = self.flagged.iter().collect();
        all.sort_by_key(|d| std::cmp::Reverse(d.cost));
        all.truncate(n);
        all
    }
}

/// One decision a seat made and was weighed on, as the review judged it: what [`judge_match`]
/// returns for every decision with an alternative, flagged or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// Where it was: the index of its step among every recorded step of the match, all seats'
    /// and all rounds' together, in the order [`dhumbal_engine::replay`] shows them (the game
    /// `replay` shows with that step is the real game state of the decision).
    pub step: usize,
    /// The round, from 1.
    pub round: u32,
    /// The seat's turn in that round, from 1.
    pub turn: u32,
    /// The seat's hand when it decided.
    pub hand: Vec<Card>,
    /// Its total.
    pub total: u32,
    /// What it did.
    pub chose: Move,
    /// What the coach found best.
    pub best: Move,
    /// How far behind the best the move made was, in points of the round's expected score (0
    /// when it was the best): the first estimate, the one the flag is decided by.
    pub cost: Tenths,
    /// The standard error of that difference (paired over the samples).
    pub error: Tenths,
    /// The first estimate's expected score for the round after the move made.
    pub value_chose: Tenths,
    /// … and after the best.
    pub value_best: Tenths,
    /// Whether the first estimate flags it: behind by [`CoachParams::flag_at`] points and
    /// [`CoachParams::z`] standard errors.
    pub flagged_first: bool,
    /// For a decision flagged first, with [`CoachParams::recheck`]: how far behind the best it
    /// is when the two moves are weighed again on fresh samples ([`reweigh`]).
    pub recheck: Option<Tenths>,
    /// Whether the review flags it: flagged first, and not cleared by the re-check (a
    /// re-estimate under [`CoachParams::flag_at`]).
    pub flagged: bool,
    /// Why the best was better (for a flagged decision; [`Why::PlaysOut`] otherwise).
    pub why: Why,
}

impl Judged {
    /// The cost the review reports: the re-check's when there was one, else the first estimate.
    pub fn reported(&self) -> Tenths {
        self.recheck.unwrap_or(self.cost)
    }
}

/// What a re-check's seed differs from the decision's first seed by.
const RECHECK_SEED: u64 = 0x5ec0_4d10_0c00_0000;

/// The seed of the review's samples for the decision of `view` (its place in the match).
fn decision_seed(view: &SeatView) -> u64 {
    (u64::from(view.round) << 32) ^ u64::from(view.throws) ^ 0xc0ac4
}

/// Judges every decision `seat` made in the finished match `record` that had an alternative,
/// in the order made: the rule [`review`] flags by. Fails, with the verifier's words, if the
/// record does not replay, or if the seat is not at the table.
pub fn judge_match(
    record: &HandHistory,
    seat: usize,
    params: &CoachParams,
) -> Result<Vec<Judged>, String> {
    if seat >= usize::from(record.settings.players) {
        return Err(format!(
            "seat {seat} is not at this table of {}",
            record.settings.players
        ));
    }
    let mut judged = Vec::new();
    let mut turn = (0u32, 0u32);
    let mut index = 0usize;
    replay(record, |game, step| {
        let at = index;
        index += 1;
        if step.seat != seat {
            return;
        }
        let view = game.view(seat);
        if turn.0 != view.round {
            turn = (view.round, 0);
        }
        if matches!(self::step(&view), Step::CallOrDraw | Step::CallOrThrow) {
            turn.1 += 1;
        }
        let chose = Move::of(&step.action, &view);
        let advice = advise(
            &view,
            game.public_history(),
            Some(&chose),
            params,
            decision_seed(&view),
        );
        if advice.why == Why::Only {
            return;
        }
        let best = advice.best().clone();
        let (cost, error, value_chose) = advice
            .weighed(&chose)
            .map_or((Tenths(0), Tenths(0), advice.moves[0].value), |made| {
                (made.behind, made.error, made.value)
            });
        let value_best = advice.moves[0].value;
        let behind = cost.points();
        let flagged_first = advice.weighed(&chose).is_some()
            && behind >= params.flag_at
            && behind >= params.z * error.points();
        let recheck = (flagged_first && params.recheck).then(|| {
            let (again, _) = reweigh(
                &view,
                game.public_history(),
                &best,
                &chose,
                params,
                decision_seed(&view) ^ RECHECK_SEED,
            );
            Tenths::of(again)
        });
        let flagged = flagged_first && recheck.is_none_or(|again| again.points() >= params.flag_at);
        let why = if flagged && !best.same(&chose) {
            why(&view, &synced(&view, game.public_history()), &best, &chose)
        } else {
            Why::PlaysOut
        };
        judged.push(Judged {
            step: at,
            round: view.round,
            turn: turn.1.max(1),
            hand: view.hand.clone(),
            total: view.hand_total,
            chose,
            best,
            cost,
            error,
            value_chose,
            value_best,
            flagged_first,
            recheck,
            flagged,
            why,
        });
    })?;
    Ok(judged)
}

/// Reviews every decision `seat` made in the finished match `record` (see the
/// [module documentation](self)): the decisions [`judge_match`] flags. Fails, with the
/// verifier's words, if the record does not replay, or if the seat is not at the table.
pub fn review(record: &HandHistory, seat: usize, params: &CoachParams) -> Result<Review, String> {
    let judged = judge_match(record, seat, params)?;
    let weighed = judged.len() as u32;
    let flagged: Vec<Decision> = judged
        .into_iter()
        .filter(|j| j.flagged)
        .map(|j| Decision {
            round: j.round,
            turn: j.turn,
            cost: j.reported(),
            hand: j.hand,
            total: j.total,
            chose: j.chose,
            best: j.best,
            why: j.why,
        })
        .collect();
    let cost = Tenths(flagged.iter().map(|d| d.cost.0).sum());
    Ok(Review {
        seat,
        scoring: record.settings.scoring,
        weighed,
        flagged,
        cost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::{Game, Preset, Settings};

    use crate::new_bot;

    /// A finished match of `settings` between bots of the given difficulties.
    fn played(settings: Settings, seats: &[dhumbal_engine::Difficulty], seed: u8) -> HandHistory {
        let mut bots: Vec<_> = seats
            .iter()
            .enumerate()
            .map(|(s, &d)| new_bot(d, s as u64))
            .collect();
        let game = crate::arena::play_match(&settings, [seed; 32], &mut bots).unwrap();
        game.hand_history().unwrap()
    }

    #[test]
    fn a_call_on_a_low_hand_is_advised_with_its_chance() {
        let game = Game::new(Preset::Standard.settings(), [5; 32]).unwrap();
        let seat = game.turn();
        let mut view = game.view(seat);
        view.can_call = true;
        let advice = advise(&view, game.public_history(), None, &CoachParams::HINT, 1);
        assert!(advice.moves.len() >= 2, "{advice:?}");
        assert!(advice.moves.windows(2).all(|w| w[0].behind <= w[1].behind));
        assert_eq!(advice.moves[0].behind, Tenths(0));
    }

    #[test]
    fn the_same_match_gets_the_same_review_and_flags_are_behind_the_best() {
        use dhumbal_engine::Difficulty::{Easy, Expert, Hard, Medium};
        let record = played(
            Preset::Standard.settings(),
            &[Easy, Medium, Hard, Expert],
            3,
        );
        let first = review(&record, 0, &CoachParams::REVIEW).unwrap();
        let again = review(&record, 0, &CoachParams::REVIEW).unwrap();
        assert_eq!(first, again);
        assert!(first.weighed > 0);
        for d in &first.flagged {
            assert!(d.cost.points() >= CoachParams::REVIEW.flag_at, "{d:?}");
            assert!(!d.best.same(&d.chose), "{d:?}");
        }
        assert!(review(&record, 4, &CoachParams::REVIEW).is_err());
    }

    #[test]
    fn judge_match_flags_what_the_review_flags_at_the_decisions_real_place() {
        use dhumbal_engine::Difficulty::{Easy, Expert, Hard, Medium};
        let settings = Settings {
            players: 4,
            ..Preset::Household.settings()
        };
        let record = played(settings, &[Expert, Hard, Medium, Easy], 7);
        for seat in 0..4 {
            let judged = judge_match(&record, seat, &CoachParams::REVIEW).unwrap();
            let review = review(&record, seat, &CoachParams::REVIEW).unwrap();
            assert_eq!(review.weighed as usize, judged.len());
            let flagged: Vec<(u32, u32, Move, Move, Tenths)> = judged
                .iter()
                .filter(|j| j.flagged)
                .map(|j| {
                    (
                        j.round,
                        j.turn,
                        j.chose.clone(),
                        j.best.clone(),
                        j.reported(),
                    )
                })
                .collect();
            let reviewed: Vec<(u32, u32, Move, Move, Tenths)> = review
                .flagged
                .iter()
                .map(|d| (d.round, d.turn, d.chose.clone(), d.best.clone(), d.cost))
                .collect();
            assert_eq!(flagged, reviewed);
            for j in &judged {
                assert_eq!(
                    j.flagged_first,
                    j.cost.points() >= 0.5 && j.cost >= Tenths(2 * j.error.0)
                );
                // Flagged first, re-checked, and kept only if the re-check still finds it costly.
                assert_eq!(j.recheck.is_some(), j.flagged_first, "{j:?}");
                assert_eq!(
                    j.flagged,
                    j.recheck.is_some_and(|again| again.points() >= 0.5),
                    "{j:?}"
                );
            }
            // Without the re-check, the first estimate decides and is the one reported.
            let plain = CoachParams {
                recheck: false,
                ..CoachParams::REVIEW
            };
            for (j, first) in judge_match(&record, seat, &plain)
                .unwrap()
                .iter()
                .zip(&judged)
            {
                assert_eq!((j.cost, j.flagged_first), (first.cost, first.flagged_first));
                assert_eq!((j.flagged, j.reported()), (j.flagged_first, j.cost));
            }
            // Each decision's step is the seat's own, in the game where its hand was held.
            let mut at = 0;
            let mut found = 0;
            replay(&record, |game, step| {
                if let Some(j) = judged.iter().find(|j| j.step == at) {
                    assert_eq!(step.seat, seat);
                    assert_eq!(game.view(seat).hand, j.hand);
                    assert!(Move::of(&step.action, &game.view(seat)).same(&j.chose));
                    found += 1;
                }
                at += 1;
            })
            .unwrap();
            assert_eq!(found, judged.len());
        }
    }

    #[test]
    fn a_move_reweighed_against_itself_is_not_behind_and_another_is_measured() {
        let game = Game::new(Preset::Standard.settings(), [9; 32]).unwrap();
        let seat = game.turn();
        let view = game.view(seat);
        let history = game.public_history();
        let advice = advise(&view, history, None, &CoachParams::REVIEW, 5);
        let best = advice.best().clone();
        assert_eq!(
            reweigh(&view, history, &best, &best, &CoachParams::REVIEW, 6),
            (0.0, 0.0)
        );
        let worst = advice.moves.last().unwrap();
        let (behind, error) = reweigh(&view, history, &best, &worst.play, &CoachParams::REVIEW, 6);
        assert!(error > 0.0 || worst.behind == Tenths(0), "{advice:?}");
        // A fresh look agrees with the first within a few standard errors of both.
        let spread = 4.0 * (error + worst.error.points()) + 0.1;
        assert!(
            (behind - worst.behind.points()).abs() <= spread,
            "{behind} {advice:?}"
        );
    }
}
