//! The hard bot: counts every card, estimates every opponent's total, looks a turn ahead, and
//! calls 2 under the limit only when it is very likely the lightest.
//!
//! - Card counting: its [`Memory`] holds every public fact of the round — every card thrown, every
//!   pile card taken and by whom, every reshuffle — so it knows which cards are out of play in
//!   the pile, which cards each opponent is known to hold, and which are still unseen (in the
//!   stock or in the unknown part of other hands).
//! - Looking ahead: a hand is judged by what it is expected to hold after the bot's next turn —
//!   draw-then-throw: every possible blind card weighed by its chance, then the best throw;
//!   throw-then-draw: the best throw, then an average draw — or, if it is low enough to call on,
//!   by its total less a bonus. Every draw and every throw is chosen to make that judgement best.
//! - Calling: only at least [`CALL_MARGIN`] under the limit (less at a limit under 4, so that it
//!   still calls at limits of 0 to 3), and only when it is very likely strictly lighter than
//!   every opponent. That chance comes from the fitted [`Belief`] ([`crate::belief`]): each
//!   opponent's hand is its known cards plus unknown cards from the unseen ones, leaning towards
//!   low cards the longer it has thrown and the fewer it holds. A short-handed opponent therefore
//!   holds it back. At a table with no limit it decides for itself from the same estimate: it
//!   considers totals up to [`OPEN_TABLE_CALL_AT`] and calls at [`OPEN_TABLE_CALL_CONFIDENCE`].
//!   [`CallRule`] gathers these numbers; [`CallRule::ORIGINAL`] is the rule before issue #19
//!   (its own lean capped at 0.2, and no call at limits under 2).
//! - Throwing: the card that lands where the next player may take it is the one least useful to
//!   that player (not a rank it is known to collect, not a low card or a joker).
//! - Taking from the pile tells the table a card it holds, so a pile card must beat the blind
//!   draw by [`REVEAL_COST`] (more for a low card, which says a call is near).

use dhumbal_engine::{
    Action, Card, Difficulty, Event, PickUp, PublicHistory, SeatView, Settings, TurnOrder,
    full_deck, pickup_choices,
};

use crate::Bot;
use crate::belief::Belief;
use crate::groups::{best_shed, legal_groups, total, value};
use crate::memory::Memory;
use crate::turn::{Step, draw, me, next_player, opponents, pickable_after_throw, step};

/// How far under the limit the hard bot must be before it calls.
pub const CALL_MARGIN: u32 = 2;
/// How sure the hard bot must be that it is strictly the lightest before it calls.
pub const CALL_CONFIDENCE: f64 = 0.65;
/// How sure it must be at a throw-then-draw table (measured in the arena: there, waiting for
/// [`CALL_CONFIDENCE`] lets the others get light first and costs more than it saves).
pub const THROW_FIRST_CALL_CONFIDENCE: f64 = 0.6;
/// How sure it must be at a table with no limit, where it may call on up to
/// [`OPEN_TABLE_CALL_AT`] and a call that waits for certainty comes too late.
pub const OPEN_TABLE_CALL_CONFIDENCE: f64 = 0.55;
/// The highest total the hard bot considers calling on at a table with no limit.
pub const OPEN_TABLE_CALL_AT: u32 = 9;
/// What taking a card from the pile costs, in points, for what it tells the table.
pub const REVEAL_COST: f64 = 0.25;
/// The extra reveal cost of taking a low card (3 or less), which tells the table a call is near.
const LOW_REVEAL_COST: f64 = 0.25;
/// How much better, in points, a hand it can call on is than its total.
const CALL_BONUS: f64 = 6.0;
/// How much of the current total counts besides the expected total after the next turn: an
/// opponent may call before then, and the hand is charged as it stands.
const STANDING_WEIGHT: f64 = 0.02;
/// How strongly an opponent's unknown cards lean low per throw it has made.
const LOW_LEAN_PER_THROW: f64 = 0.04;
/// The most an opponent's unknown cards lean low.
const LOW_LEAN_CAP: f64 = 0.2;

/// When the hard bot calls: the constants above, gathered so that the arena can measure
/// variants ([`HardBot::with_rule`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallRule {
    /// How far under the limit it must be ([`CALL_MARGIN`]); never more than half the limit,
    /// so that it still calls at a limit of 0 to 3.
    pub margin: u32,
    /// How sure it must be at a draw-then-throw table ([`CALL_CONFIDENCE`]).
    pub confidence: f64,
    /// How sure it must be at a throw-then-draw table ([`THROW_FIRST_CALL_CONFIDENCE`]).
    pub throw_first_confidence: f64,
    /// How sure it must be at a table with no limit ([`OPEN_TABLE_CALL_CONFIDENCE`]).
    pub open_confidence: f64,
    /// The highest total it calls on at a table with no limit ([`OPEN_TABLE_CALL_AT`]).
    pub open_at: u32,
    /// Whether it judges its chance of being the lightest with the fitted [`Belief`] (true) or
    /// with its own older estimate (false, [`CallRule::ORIGINAL`]).
    pub fitted_belief: bool,
    /// Whether, at a limit under twice the margin, it calls with a smaller margin (true) or
    /// never calls (false, the rule before it was tuned, [`CallRule::ORIGINAL`]).
    pub low_limits: bool,
}

impl Default for CallRule {
    fn default() -> CallRule {
        CallRule {
            margin: CALL_MARGIN,
            confidence: CALL_CONFIDENCE,
            throw_first_confidence: THROW_FIRST_CALL_CONFIDENCE,
            open_confidence: OPEN_TABLE_CALL_CONFIDENCE,
            open_at: OPEN_TABLE_CALL_AT,
            low_limits: true,
            fitted_belief: true,
        }
    }
}

impl CallRule {
    /// The rule before the arena tuning of issue #19 (for measuring against it).
    pub const ORIGINAL: CallRule = CallRule {
        margin: 2,
        confidence: 0.85,
        throw_first_confidence: 0.6,
        open_confidence: 0.55,
        open_at: 9,
        low_limits: false,
        fitted_belief: false,
    };

    /// The highest total it calls on at this table, if it calls at all.
    pub fn call_at(&self, settings: &Settings) -> Option<u32> {
        match settings.call_limit {
            Some(limit) if self.low_limits => Some(limit - self.margin.min(limit / 2)),
            Some(limit) => limit.checked_sub(self.margin),
            None => Some(self.open_at),
        }
    }

    /// How sure it must be that it is the lightest before it calls at this table.
    pub fn confidence(&self, settings: &Settings) -> f64 {
        match (settings.call_limit, settings.turn_order) {
            (None, _) => self.open_confidence,
            (Some(_), TurnOrder::DrawThenThrow) => self.confidence,
            (Some(_), TurnOrder::ThrowThenDraw) => self.throw_first_confidence,
        }
    }
}

/// The hard bot. See the [module documentation](self).
#[derive(Clone, Debug, Default)]
pub struct HardBot {
    /// Every public fact of the round.
    memory: Memory,
    /// When it calls.
    rule: CallRule,
}

/// The weights of hard's one-turn judgement ([`JudgeParams::default`]: hard's own constants);
/// the expert bot may judge with others.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JudgeParams {
    /// How much of the total the hand ends the turn with counts besides the expected total after
    /// the next turn (hard's `STANDING_WEIGHT`).
    pub standing: f64,
    /// How much better than its total a hand it can call on is (hard's `CALL_BONUS`).
    pub bonus: f64,
    /// What taking a card from the pile costs for what it tells the table (hard's `REVEAL_COST`).
    pub reveal: f64,
    /// How much a throw's usefulness to the next player counts (1: hard's own weight).
    pub gift: f64,
    /// At a table whose scores reset on landing on a multiple of 50, how much better, in points,
    /// it is to end the turn holding a hand that would land its match total on one if an
    /// opponent's call charged it the hand (0: hard's own judgement, which ignores the resets).
    pub reset: f64,
}

impl Default for JudgeParams {
    fn default() -> JudgeParams {
        JudgeParams {
            standing: STANDING_WEIGHT,
            bonus: CALL_BONUS,
            reveal: REVEAL_COST,
            gift: 1.0,
            reset: 0.0,
        }
    }
}

/// What the hard bot knows when it judges hands during one decision (the expert bot judges its
/// draws and throws with it too).
pub(crate) struct Judge<'a> {
    settings: &'a Settings,
    /// The next blind card, by class (a representative card and its chance).
    draws: Vec<(Card, f64)>,
    /// The expected value of a blind card.
    mean_draw: f64,
    /// The highest total it would call on next turn, if any.
    call_at: Option<u32>,
    /// Cards the next player is known to hold.
    next_known: Vec<Card>,
    /// Its weights.
    params: JudgeParams,
    /// Its seat's match total, at a table whose scores reset (for [`JudgeParams::reset`]).
    reset_total: Option<i64>,
    /// How much the hand it ends the turn with counts instead of the one after its next turn:
    /// the chance an opponent calls before then (0 for hard; see [`Judge::with_call_chance`]).
    call_chance: f64,
}

impl Judge<'_> {
    /// A judge that counts a hand of at most `call_at` as one it can call on.
    pub(crate) fn with_call_at<'a>(
        view: &'a SeatView,
        memory: &Memory,
        call_at: Option<u32>,
    ) -> Judge<'a> {
        let settings = &view.settings;
        let unseen = memory.unseen(view);
        let unseen = if unseen.is_empty() {
            full_deck(settings.jokers)
        } else {
            unseen
        };
        let share = 1.0 / unseen.len() as f64;
        let mut draws: Vec<(Card, f64)> = Vec::new();
        for card in unseen {
            // Without runs a card matters only through its rank, so one card stands for all.
            let same = |c: &Card| {
                if settings.runs {
                    *c == card
                } else {
                    c.rank() == card.rank()
                }
            };
            match draws.iter_mut().find(|(c, _)| same(c)) {
                Some((_, p)) => *p += share,
                None => draws.push((card, share)),
            }
        }
        let mean_draw = draws
            .iter()
            .map(|&(c, p)| p * f64::from(value(c, settings)))
            .sum();
        Judge {
            settings,
            draws,
            mean_draw,
            call_at,
            next_known: memory.held(next_player(view)).to_vec(),
            params: JudgeParams::default(),
            reset_total: settings
                .score_reset
                .then(|| view.totals.get(me(view)).copied().unwrap_or(0)),
            call_chance: 0.0,
        }
    }

    /// The same judge with other weights.
    pub(crate) fn with_params(self, params: JudgeParams) -> Self {
        Judge { params, ..self }
    }

    /// The same judge, taking `chance` (0 to 1) for the chance that an opponent calls before its
    /// next turn: a hand is then judged as that chance of being charged as it stands, and
    /// otherwise as it is expected to be after that turn.
    pub(crate) fn with_call_chance(self, chance: f64) -> Self {
        Judge {
            call_chance: chance.clamp(0.0, 1.0),
            ..self
        }
    }

    /// Its weights.
    #[cfg(test)]
    pub(crate) fn params(&self) -> JudgeParams {
        self.params
    }

    /// How good it is to end this turn holding `hand` (lower is better), in points.
    fn hand(&self, hand: &[Card]) -> f64 {
        let now = total(hand, self.settings);
        let future = match self.settings.turn_order {
            TurnOrder::DrawThenThrow => {
                let mut with = hand.to_vec();
                with.push(hand.first().copied().unwrap_or(Card::RED_JOKER));
                let last = with.len() - 1;
                let mut expected = 0.0;
                for &(card, p) in &self.draws {
                    with[last] = card;
                    let shed = best_shed(&with, self.settings);
                    expected += p * f64::from(now + value(card, self.settings) - shed);
                }
                expected
            }
            TurnOrder::ThrowThenDraw => {
                f64::from(now - best_shed(hand, self.settings)) + self.mean_draw
            }
        };
        let future = future + self.params.standing * f64::from(now);
        let future = future + self.call_chance * (f64::from(now) - future);
        let judged = match self.call_at {
            Some(at) if now <= at => future.min(f64::from(now) - self.params.bonus),
            _ => future,
        };
        match self.reset_total {
            Some(mine)
                if self.params.reset != 0.0 && now > 0 && (mine + i64::from(now)) % 50 == 0 =>
            {
                judged - self.params.reset
            }
            _ => judged,
        }
    }

    /// How useful `card` would be to the next player if it could take it.
    fn usefulness(&self, card: Card) -> f64 {
        let pairs =
            card.rank().is_some() && self.next_known.iter().any(|k| k.rank() == card.rank());
        let low = 3.0 - f64::from(value(card, self.settings).min(3));
        let joker = if card.is_joker() { 2.0 } else { 0.0 };
        f64::from(u8::from(pairs)) * 3.0 + low * 0.5 + joker
    }

    /// `group` in the order that leaves the next player the least useful card to take, and what
    /// that card is worth to it.
    fn order(&self, group: &[Card]) -> (Vec<Card>, f64) {
        let mut sorted = group.to_vec();
        // Least useful first; among equals the heavier first.
        sorted.sort_by(|&a, &b| {
            self.usefulness(a)
                .total_cmp(&self.usefulness(b))
                .then(value(b, self.settings).cmp(&value(a, self.settings)))
        });
        let gift = |c: &Card| self.params.gift * self.usefulness(*c);
        match self.settings.turn_order {
            TurnOrder::DrawThenThrow => {
                // The last card lands on top.
                let top = sorted.remove(0);
                sorted.push(top);
                (sorted, gift(&top))
            }
            TurnOrder::ThrowThenDraw => match self.settings.pickup {
                PickUp::SingleOnly if group.len() == 1 => (sorted.clone(), gift(&sorted[0])),
                PickUp::SingleOnly => (sorted, 0.0),
                PickUp::AnyCard => {
                    let worst = sorted.iter().map(gift).fold(0.0, f64::max);
                    (sorted, worst)
                }
                PickUp::Ends => {
                    // The two least useful at the ends, the rest in between; a run offers its
                    // lowest and highest places whatever the order, so ask the engine.
                    let first = sorted.remove(0);
                    if !sorted.is_empty() {
                        let last = sorted.remove(0);
                        sorted.push(last);
                    }
                    sorted.insert(0, first);
                    let worst = pickup_choices(self.settings, &sorted)
                        .iter()
                        .map(gift)
                        .fold(0.0, f64::max);
                    (sorted, worst)
                }
            },
        }
    }

    /// Every throw from `hand` (never containing `barred`), ordered, with its judgement, best
    /// first (ties in hand order, so the first is [`Judge::best_throw`]'s).
    pub(crate) fn ranked_throws(
        &self,
        hand: &[Card],
        barred: Option<Card>,
    ) -> Vec<(Vec<Card>, f64)> {
        let mut all: Vec<(Vec<Card>, f64)> = legal_groups(hand, barred, self.settings)
            .into_iter()
            .map(|group| self.judged_throw(hand, &group))
            .collect();
        all.sort_by(|a, b| a.1.total_cmp(&b.1));
        all
    }

    /// At a throw-then-draw table, before throwing: every throw from `view`'s hand with the
    /// judgement of the best draw after it, best first (the first is what [`play`] throws).
    pub(crate) fn ranked_throws_first(&self, view: &SeatView) -> Vec<(Vec<Card>, f64)> {
        let mut all: Vec<(Vec<Card>, f64)> = self.throws_first(view).collect();
        // Stable: among equals, the first in `legal_groups`' order stays first.
        all.sort_by(|a, b| a.1.total_cmp(&b.1));
        all
    }

    /// At a throw-then-draw table, before throwing: every throw from `view`'s hand, in
    /// `legal_groups`' order and in the order to throw its cards, with the judgement of the
    /// best draw after it (what the throw gives away included).
    fn throws_first<'v>(
        &'v self,
        view: &'v SeatView,
    ) -> impl Iterator<Item = (Vec<Card>, f64)> + 'v {
        let pickable = pickable_after_throw(&view.settings, &view.top_throw);
        legal_groups(&view.hand, None, &view.settings)
            .into_iter()
            .map(move |group| {
                let rest = without(&view.hand, &group);
                let (ordered, gift) = self.order(&group);
                (ordered, self.draw_choice(&rest, &pickable, true).1 + gift)
            })
    }

    /// Every draw into `hand` (the stock as `None`, if `stock`, and each card of `pile`) with its
    /// judgement, best first (ties: the stock, then pile order, as [`Judge::draw_choice`]).
    pub(crate) fn ranked_draws(
        &self,
        hand: &[Card],
        pile: &[Card],
        stock: bool,
    ) -> Vec<(Option<Card>, f64)> {
        let mut all = Vec::with_capacity(pile.len() + 1);
        if stock {
            all.push((None, self.stock_draw(hand)));
        }
        for &card in pile {
            all.push((Some(card), self.pile_draw(hand, card)));
        }
        all.sort_by(|a, b| a.1.total_cmp(&b.1));
        all
    }

    /// The best throw from `hand` (never containing `barred`), ordered, with its judgement.
    pub(crate) fn best_throw(&self, hand: &[Card], barred: Option<Card>) -> (Vec<Card>, f64) {
        let mut best: Option<(Vec<Card>, f64)> = None;
        for group in legal_groups(hand, barred, self.settings) {
            let (ordered, score) = self.judged_throw(hand, &group);
            if best.as_ref().is_none_or(|(_, s)| score < *s) {
                best = Some((ordered, score));
            }
        }
        best.expect("a hand can always throw")
    }

    /// Throwing `group` from `hand`: its cards in the order to throw them, and its judgement
    /// (the hand left, and what the throw gives away).
    fn judged_throw(&self, hand: &[Card], group: &[Card]) -> (Vec<Card>, f64) {
        let (ordered, gift) = self.order(group);
        (ordered, self.after_throw(&without(hand, group)) + gift)
    }

    /// Judges the hand left after a throw: at draw-then-throw tables the turn ends there; at
    /// throw-then-draw tables the draw that follows is weighed too (see [`Judge::draw_choice`]).
    fn after_throw(&self, rest: &[Card]) -> f64 {
        match self.settings.turn_order {
            TurnOrder::DrawThenThrow => self.hand(rest),
            TurnOrder::ThrowThenDraw => self.stock_draw(rest),
        }
    }

    /// The judgement of drawing blind into `hand` and ending the turn there (throw-then-draw), or
    /// of drawing blind and then throwing the best group (draw-then-throw).
    fn stock_draw(&self, hand: &[Card]) -> f64 {
        let mut with = hand.to_vec();
        with.push(Card::RED_JOKER);
        let last = with.len() - 1;
        let mut expected = 0.0;
        for &(card, p) in &self.draws {
            with[last] = card;
            let score = match self.settings.turn_order {
                TurnOrder::ThrowThenDraw => self.hand(&with),
                TurnOrder::DrawThenThrow => self.best_throw(&with, None).1,
            };
            expected += p * score;
        }
        expected
    }

    /// The judgement of taking `card` from the pile into `hand`, what it tells the table
    /// included.
    fn pile_draw(&self, hand: &[Card], card: Card) -> f64 {
        let mut with = hand.to_vec();
        with.push(card);
        let score = match self.settings.turn_order {
            TurnOrder::ThrowThenDraw => self.hand(&with),
            TurnOrder::DrawThenThrow => self.best_throw(&with, Some(card)).1,
        };
        let low = if value(card, self.settings) <= 3 {
            LOW_REVEAL_COST
        } else {
            0.0
        };
        score + self.params.reveal + low
    }

    /// The best draw into `hand` from the stock or one of `pile`, with its judgement.
    pub(crate) fn draw_choice(
        &self,
        hand: &[Card],
        pile: &[Card],
        stock: bool,
    ) -> (Option<Card>, f64) {
        let mut best = (
            None,
            if stock {
                self.stock_draw(hand)
            } else {
                f64::INFINITY
            },
        );
        for &card in pile {
            let score = self.pile_draw(hand, card);
            if score < best.1 {
                best = (Some(card), score);
            }
        }
        best
    }
}

impl HardBot {
    /// A hard bot. It makes no random choices, so the seed does not change its play; it is taken
    /// for symmetry with the other difficulties.
    pub fn new(_seed: u64) -> HardBot {
        HardBot::default()
    }

    /// A hard bot that calls by `rule` instead of the default one.
    pub fn with_rule(rule: CallRule) -> HardBot {
        HardBot {
            rule,
            ..HardBot::default()
        }
    }

    /// The chance that every opponent's hand is strictly heavier than `mine`.
    pub fn chance_lightest(&self, view: &SeatView, mine: u32) -> f64 {
        if self.rule.fitted_belief {
            return Belief::new(view, &self.memory).chance_lightest(mine);
        }
        let settings = &view.settings;
        let unseen = self.memory.unseen(view);
        let mut chance = 1.0;
        for seat in opponents(view) {
            let known = self.memory.held(seat);
            let known_total = total(known, settings);
            let unknown = view.card_counts[seat].saturating_sub(known.len());
            if known_total > mine {
                continue;
            }
            let lean =
                (LOW_LEAN_PER_THROW * f64::from(self.memory.throws_by(seat))).min(LOW_LEAN_CAP);
            let at_most = mine - known_total;
            chance *= 1.0 - chance_sum_at_most(&unseen, settings, unknown, at_most, lean);
        }
        chance
    }

    fn wants_call(&self, view: &SeatView) -> bool {
        let Some(at) = self.rule.call_at(&view.settings) else {
            return false;
        };
        let confidence = self.rule.confidence(&view.settings);
        view.can_call
            && view.hand_total <= at
            && self.chance_lightest(view, view.hand_total) >= confidence
    }
}

/// The chance that `count` cards, each drawn from `pool` with weights leaning towards low cards
/// by `lean` per point, total at most `limit`.
fn chance_sum_at_most(
    pool: &[Card],
    settings: &Settings,
    count: usize,
    limit: u32,
    lean: f64,
) -> f64 {
    let limit = limit as usize;
    let mut single = vec![0.0; limit + 1];
    let mut weight_sum = 0.0;
    for &card in pool {
        let v = value(card, settings);
        let w = (-lean * f64::from(v)).exp();
        weight_sum += w;
        if (v as usize) <= limit {
            single[v as usize] += w;
        }
    }
    if weight_sum == 0.0 {
        return 1.0;
    }
    for p in &mut single {
        *p /= weight_sum;
    }
    // dist[s]: the chance that the cards so far total exactly s (s <= limit).
    let mut dist = vec![0.0; limit + 1];
    dist[0] = 1.0;
    for _ in 0..count {
        let mut next = vec![0.0; limit + 1];
        for (s, &p) in dist.iter().enumerate().filter(|(_, p)| **p > 0.0) {
            for (v, &q) in single.iter().enumerate() {
                if s + v <= limit {
                    next[s + v] += p * q;
                }
            }
        }
        dist = next;
    }
    dist.iter().sum()
}

impl Bot for HardBot {
    fn difficulty(&self) -> Difficulty {
        Difficulty::Hard
    }

    fn fork(&self) -> Box<dyn Bot> {
        Box::new(self.clone())
    }

    fn observe(&mut self, event: &Event) {
        self.memory.observe(event);
    }

    fn choose(&mut self, view: &SeatView, history: &PublicHistory) -> Action {
        self.memory.sync(view, history);
        let step = step(view);
        if matches!(step, Step::CallOrDraw | Step::CallOrThrow) && self.wants_call(view) {
            return Action::Call;
        }
        let call_at = self.rule.call_at(&view.settings);
        play(
            view,
            step,
            &Judge::with_call_at(view, &self.memory, call_at),
        )
    }
}

/// The draw or throw `judge` finds best for `view` at `step` (never a call).
pub(crate) fn play(view: &SeatView, step: Step, judge: &Judge<'_>) -> Action {
    match step {
        Step::CallOrDraw | Step::Draw => {
            let stock = crate::turn::stock_drawable(view) || view.takeable.is_empty();
            let pile = if view.hand.is_empty() && step == Step::CallOrDraw {
                &[][..]
            } else {
                &view.takeable[..]
            };
            let (card, _) = judge.draw_choice(&view.hand, pile, stock);
            draw(view, card)
        }
        Step::Throw => Action::Throw {
            cards: judge.best_throw(&view.hand, view.barred).0,
        },
        // The first of the best throws ([`Iterator::min_by`] keeps the first of equals), as
        // [`Judge::ranked_throws_first`] ranks them.
        Step::CallOrThrow => Action::Throw {
            cards: judge
                .throws_first(view)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("a hand can always throw")
                .0,
        },
    }
}

/// `hand` without the cards of `group`, in hand order.
fn without(hand: &[Card], group: &[Card]) -> Vec<Card> {
    hand.iter()
        .copied()
        .filter(|c| !group.contains(c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::{Game, Preset, parse_cards};

    #[test]
    fn the_sum_distribution_is_exact_without_a_lean() {
        let settings = Preset::Standard.settings();
        let pool = parse_cards("AS 2S 3S 4S").unwrap();
        // One card from four: at most 2 is two of them.
        assert!((chance_sum_at_most(&pool, &settings, 1, 2, 0.0) - 0.5).abs() < 1e-12);
        // Two cards (with replacement): sums of at most 3 are (1,1), (1,2), (2,1): 3 of 16.
        assert!((chance_sum_at_most(&pool, &settings, 2, 3, 0.0) - 3.0 / 16.0).abs() < 1e-12);
        assert_eq!(chance_sum_at_most(&pool, &settings, 0, 0, 0.0), 1.0);
    }

    /// A judge for seat 0 of a fresh `settings` table where seat 1 (next to play) was seen
    /// taking `taken` from the pile.
    fn judge_with_next_holding(settings: Settings, taken: &str) -> (SeatView, Memory) {
        let game = Game::new(settings, [4; 32]).unwrap();
        let view = game.view(0);
        let mut memory = Memory::new();
        memory.sync(&view, game.public_history());
        memory.observe(&Event::TookFromPile {
            seat: 1,
            card: taken.parse().unwrap(),
        });
        (view, memory)
    }

    #[test]
    fn the_top_card_is_the_least_useful_to_the_next_player() {
        let run = parse_cards("5H 6H 7H").unwrap();
        // Draw-then-throw with runs: the next player holds a seven, so the seven stays under,
        // and of the other two the heavier lands on top.
        let settings = Settings {
            runs: true,
            ..Preset::Standard.settings()
        };
        let (view, memory) = judge_with_next_holding(settings, "7S");
        let (ordered, gift) = Judge::with_call_at(&view, &memory, Some(3)).order(&run);
        assert_eq!(ordered.last().unwrap().to_string(), "6H");
        assert_eq!(gift, 0.0);
        // Yaniv picks up either end: both ends avoid the seven.
        let (view, memory) = judge_with_next_holding(Preset::Yaniv.settings(), "7S");
        let (ordered, _) = Judge::with_call_at(&view, &memory, Some(3)).order(&run);
        assert_eq!(ordered[1].to_string(), "7H", "{ordered:?}");
        // A single card the next player collects is a gift with a cost.
        let (view, memory) = judge_with_next_holding(Preset::Standard.settings(), "KS");
        let judge = Judge::with_call_at(&view, &memory, Some(3));
        assert!(
            judge.order(&parse_cards("KH").unwrap()).1 > judge.order(&parse_cards("QH").unwrap()).1
        );
    }

    #[test]
    fn a_one_card_opponent_makes_a_call_less_likely_to_win() {
        let game = Game::new(Preset::Standard.settings(), [5; 32]).unwrap();
        let mut view = game.view(0);
        let mut bot = HardBot::new(0);
        bot.memory.sync(&view, game.public_history());
        let full = bot.chance_lightest(&view, 3);
        view.card_counts[2] = 1;
        let short = bot.chance_lightest(&view, 3);
        assert!(short < full, "{short} < {full}");
        assert!(full > 0.9);
    }

    #[test]
    fn aiming_at_a_reset_favours_a_hand_that_lands_the_total_on_fifty() {
        let game = Game::new(Preset::Yaniv.settings(), [4; 32]).unwrap();
        let mut view = game.view(0);
        view.totals[0] = 42;
        let mut memory = Memory::new();
        memory.sync(&view, game.public_history());
        let eight = parse_cards("8H").unwrap();
        let nine = parse_cards("9H").unwrap();
        let aim = JudgeParams {
            reset: 20.0,
            ..JudgeParams::default()
        };
        let plain = Judge::with_call_at(&view, &memory, Some(6));
        let aiming = Judge::with_call_at(&view, &memory, Some(6)).with_params(aim);
        // 42 + 8 lands on 50: worth the aim more; 42 + 9 does not move.
        assert!((aiming.hand(&eight) - (plain.hand(&eight) - 20.0)).abs() < 1e-9);
        assert_eq!(aiming.hand(&nine), plain.hand(&nine));
        // Without its weight, hard's own judgement prefers the lighter hand.
        assert!(plain.hand(&eight) > plain.hand(&parse_cards("7H").unwrap()));
        assert!(aiming.hand(&eight) < aiming.hand(&parse_cards("7H").unwrap()));
        // A table whose scores do not reset does not read it.
        let game = Game::new(Preset::Household.settings(), [4; 32]).unwrap();
        let mut view = game.view(0);
        view.totals[0] = 42;
        let mut memory = Memory::new();
        memory.sync(&view, game.public_history());
        let plain = Judge::with_call_at(&view, &memory, Some(6));
        let aiming = Judge::with_call_at(&view, &memory, Some(6)).with_params(aim);
        assert_eq!(aiming.hand(&eight), plain.hand(&eight));
    }

    #[test]
    fn a_likely_call_judges_the_hand_as_it_stands() {
        let game = Game::new(Preset::Household.settings(), [4; 32]).unwrap();
        let view = game.view(0);
        let mut memory = Memory::new();
        memory.sync(&view, game.public_history());
        let pair = parse_cards("9H 9S 2C").unwrap();
        let plain = Judge::with_call_at(&view, &memory, None);
        // After its next turn the nines are gone: far better than the 20 it holds now.
        assert!(plain.hand(&pair) < 15.0, "{}", plain.hand(&pair));
        let sure = Judge::with_call_at(&view, &memory, None).with_call_chance(1.0);
        assert!(
            (sure.hand(&pair) - 20.0).abs() < 1e-9,
            "{}",
            sure.hand(&pair)
        );
        let half = Judge::with_call_at(&view, &memory, None).with_call_chance(0.5);
        let expected = (plain.hand(&pair) + 20.0) / 2.0;
        assert!((half.hand(&pair) - expected).abs() < 1e-9);
    }
}
