//! The expert bot: hard's play, with a call decided by its expected value against the table's
//! real penalty, under a calibrated model of each opponent's hidden cards, and aware of the
//! match standing.
//!
//! - Belief: a [`Belief`] over every opponent's hand (its known cards, and unknown cards that
//!   lean low the longer it has thrown and the fewer it holds, fitted offline on recorded
//!   rounds).
//! - Calling: the call is worth `p × G − caught` where `p` is the chance every opponent is
//!   heavier, `G` what they hold when they are (what a right call collects at a settlement table;
//!   at a cumulative table, where a right call spares the caller and charges everyone else their
//!   hand, [`ExpertParams::relative`] times their mean hand, since the match is won on the
//!   difference), and `caught` the
//!   expected charge of a caught call — the table's penalty, the double penalty when an opponent
//!   may be far lighter, the hand on top where the penalty is added to it. Not calling is worth
//!   `hold`, which [`ExpertParams`] sets (fitted in the arena); it calls when the call is worth
//!   more, at any total the table allows, so it also calls at limits of 0 and 1. At a table with
//!   no limit it weighs only totals up to [`ExpertParams::open_call_at`], and at a cumulative
//!   one it also wants [`ExpertParams::min_lightest`].
//! - Standing: at a cumulative table, a caught call that would put it out of the match costs
//!   [`ExpertParams::elimination_cost`] more; a right call that would put an opponent out is worth
//!   [`ExpertParams::eliminate_bonus`] more. On the last round of a settlement match it plays for
//!   place: leading, it wants more before it risks the penalty; trailing, less.
//! - Draws and throws: hard's one-turn look-ahead ([`crate::hard`]), which counts a hand as
//!   callable up to the total where the call would usually be worth it; and where that judgement
//!   finds more than one move close to its best, a search ([`crate::search`], on by default at
//!   draw-then-throw tables: [`ExpertParams::search`]) plays each out from samples of the hidden
//!   cards, drawn from the same calibrated belief, and keeps the one that does best by enough.
//!
//! The call is a fixed amount of arithmetic on the view; the search's budget is a fixed number of
//! samples ([`SearchParams::samples`]) with a wall-clock cap on top
//! ([`SearchParams::time_cap`], 50 ms), and its random numbers come from the bot's seed, the
//! round and the throw count, so the bot is deterministic for a seed and a match replays. See the
//! arena's decision times and `cargo bench -p dhumbal-bots --bench decide`.

use dhumbal_engine::{
    Action, Difficulty, Event, PublicHistory, Rounds, Scoring, SeatView, Settings, Source,
    TurnOrder, caught_charge,
};

use crate::Bot;
use crate::belief::{Belief, Pass, lean};
use crate::hard::{CallRule, Judge, JudgeParams, play};
use crate::memory::Memory;
use crate::search::{Candidate, Reuse, SearchParams, call_or_hold, search};
use crate::turn::{Step, draw, me, step, stock_drawable};

/// The expert bot's tunable numbers. [`ExpertParams::default`] holds the values measured best in
/// the arena.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpertParams {
    /// What holding on is worth at a settlement table, in points: it calls when the call's
    /// expected value exceeds this.
    pub hold: f64,
    /// At a cumulative table, what not calling costs per point of its hand: it calls when the
    /// expected charge of a caught call is below this times its total, plus [`Self::hold_flat`].
    pub hold_per_point: f64,
    /// At a cumulative table, a flat part of what not calling costs.
    pub hold_flat: f64,
    /// How far under the limit a hand must be for the draw and throw look-ahead to count it as
    /// callable.
    pub plan_margin: u32,
    /// At a table with no limit, the highest total the look-ahead counts as callable.
    pub open_plan_at: u32,
    /// At a table with no limit, the highest total it weighs a call on at all (at a cumulative
    /// table, holding a heavy hand costs far less than the hand: there is time to shed it).
    pub open_call_at: u32,
    /// The extra cost, in points, of a caught call that would put it out of the match.
    pub elimination_cost: f64,
    /// The extra worth, in points, of each opponent a right call would put out of the match,
    /// times the chance it does.
    pub eliminate_bonus: f64,
    /// At a cumulative table with no limit, the least chance of being the lightest it calls on,
    /// whatever the expected values say (its estimate of holding on is rough there).
    pub min_lightest: f64,
    /// How much the chance that an opponent calls before its next turn lowers what holding on is
    /// worth (0: not at all; 1: at a settlement table holding is then worth minus its hand, at
    /// a cumulative one it costs the hand more).
    pub threat: f64,
    /// An opponent is taken to call when its hand is at most this far under the limit (at a
    /// table with no limit, at most [`Self::open_plan_at`]).
    pub threat_margin: u32,
    /// On the last round of a settlement match, how much of its lead over the next seat (or its
    /// deficit to the leader, negative) is added to [`Self::hold`].
    pub place_weight: f64,
    /// At a cumulative table, how much a right call is worth for the points it makes the
    /// opponents take (their mean hand, given they are all heavier, times the chance they are):
    /// 0 weighs only the points it takes itself; 1 weighs its points against theirs, as the
    /// match standing (and the arena's margin) does.
    pub relative: f64,
    /// At a throw-then-draw table, the chance it takes an opponent to call when its hand is at
    /// most hard's calling total ([`CallRule::call_at`], moved by [`Self::pass_shift`]): an
    /// opponent that did not call on its last turn is then believed to have held more
    /// ([`Belief::with_passes`]). 0: a passed call says nothing.
    pub pass_weight: f64,
    /// How far the total an opponent is taken to call on is from hard's own.
    pub pass_shift: i32,
    /// At a throw-then-draw table, how much of the fitted lean ([`crate::belief::LEAN`], fitted
    /// at the standard table) its belief gives the opponents' unknown cards for the call (1: all
    /// of it).
    pub throw_first_lean: f64,
    /// At a table whose scores reset on landing on a multiple of 50, how much those resets count
    /// in the call (0: not at all; 1: each reset worth its 50 points): a caught call that would
    /// land it on one, each opponent a right call would land on one (weighed as
    /// [`Self::relative`] weighs their points), and, while holding on, its own hand landing it
    /// on one if an opponent calls first (times the chance one can).
    pub reset_weight: f64,
    /// At a throw-then-draw table, how sure its belief is that an opponent whose last throw was
    /// a single card kept no heavier card through it ([`Belief::with_inference`]'s `cap`; 0: a
    /// throw says nothing).
    pub throw_cap: f64,
    /// At a table whose scores reset (yaniv), what replaces [`Self::throw_first_lean`]: the
    /// value measured best there before the household retuning.
    pub reset_lean: f64,
    /// At a table whose scores reset, what replaces [`Self::hold_flat`].
    pub reset_hold_flat: f64,
    /// At a table whose scores reset, what replaces [`Self::throw_cap`].
    pub reset_cap: f64,
    /// The weights of its draw and throw judgement at a throw-then-draw table (elsewhere it
    /// judges with hard's own, [`JudgeParams::default`]): hard's, except that it does not steer
    /// towards a callable total nor away from throws the next player may want
    /// ([`JudgeParams::bonus`] and [`JudgeParams::gift`] 0, measured better at household and
    /// yaniv), and that at a table whose scores reset it aims its hand at a total that lands its
    /// match total on a multiple of 50 ([`JudgeParams::reset`] 20).
    pub throw_first_judge: JudgeParams,
    /// At a throw-then-draw table, how much the chance that an opponent calls before its next
    /// turn (`threat_chance` at the table's limit less [`Self::threat_margin`], or
    /// [`Self::open_plan_at`]) makes its draws and throws judge the hand it ends the turn with as
    /// it stands rather than as it will be after that turn (`Judge::with_call_chance`; 0: hard's
    /// judgement).
    pub standing_threat: f64,
    /// Whether and how much it searches its draws and throws ([`crate::search`]); `None`: hard's
    /// one-turn judgement alone.
    pub search: Option<SearchParams>,
}

impl Default for ExpertParams {
    fn default() -> ExpertParams {
        ExpertParams {
            hold: 4.0,
            hold_per_point: 0.0,
            hold_flat: 3.0,
            plan_margin: 1,
            open_plan_at: 9,
            open_call_at: 18,
            elimination_cost: 60.0,
            eliminate_bonus: 10.0,
            place_weight: 0.2,
            min_lightest: 0.3,
            threat: 0.0,
            threat_margin: 2,
            relative: 0.7,
            pass_weight: 0.0,
            pass_shift: 0,
            throw_first_lean: 0.5,
            reset_weight: 2.0,
            throw_cap: 0.9,
            reset_lean: 1.0,
            reset_hold_flat: 5.0,
            reset_cap: 0.0,
            throw_first_judge: JudgeParams {
                bonus: 0.0,
                gift: 0.0,
                reset: 20.0,
                ..JudgeParams::default()
            },
            standing_threat: 0.0,
            search: Some(SearchParams::default()),
        }
    }
}

/// The expert bot. See the [module documentation](self).
#[derive(Clone, Debug, Default)]
pub struct ExpertBot {
    /// Every public fact of the round.
    memory: Memory,
    /// Its numbers.
    params: ExpertParams,
    /// The seed of its search's random numbers.
    seed: u64,
    /// The search's samples kept for the turn's second decision.
    reuse: Reuse,
}

/// What a call is worth and what holding on is worth, in points of this seat's score (higher is
/// better), as the expert bot weighs them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallValue {
    /// The chance every opponent is strictly heavier.
    pub lightest: f64,
    /// The expected worth of calling now.
    pub call: f64,
    /// The expected worth of not calling.
    pub hold: f64,
}

impl ExpertBot {
    /// An expert bot whose search draws its random numbers from `seed` (the same seed, the same
    /// play).
    pub fn new(seed: u64) -> ExpertBot {
        ExpertBot {
            seed,
            ..ExpertBot::default()
        }
    }

    /// An expert bot with other numbers (for measuring variants in the arena), seeded by `seed`
    /// (which only its search uses).
    pub fn with_params(params: ExpertParams, seed: u64) -> ExpertBot {
        ExpertBot {
            params,
            seed,
            ..ExpertBot::default()
        }
    }

    /// The searched choice at `step`, when the search is on and more than one move is close
    /// enough to hard's best to be worth it.
    fn searched(&mut self, view: &SeatView, step: Step, judge: &Judge<'_>) -> Option<Action> {
        let params = self.params.search?;
        if view.settings.turn_order == TurnOrder::ThrowThenDraw && !params.throw_first {
            return None;
        }
        let within = |best: f64, score: f64| score <= best + params.window;
        let candidates: Vec<Candidate> = match step {
            Step::Throw | Step::CallOrThrow if params.throws => {
                let ranked = if step == Step::Throw {
                    judge.ranked_throws(&view.hand, view.barred)
                } else {
                    judge.ranked_throws_first(view)
                };
                let best = ranked.first()?.1;
                ranked
                    .into_iter()
                    .filter(|(_, s)| within(best, *s))
                    .take(params.candidates)
                    .map(|(cards, _)| Candidate::Throw(cards))
                    .collect()
            }
            Step::CallOrDraw | Step::Draw if params.draws => {
                let stock = stock_drawable(view) || view.takeable.is_empty();
                let pile = if view.hand.is_empty() && step == Step::CallOrDraw {
                    &[][..]
                } else {
                    &view.takeable[..]
                };
                let ranked = judge.ranked_draws(&view.hand, pile, stock);
                let best = ranked.first()?.1;
                ranked
                    .into_iter()
                    .filter(|(_, s)| within(best, *s))
                    .take(params.candidates)
                    .map(|(card, _)| Candidate::Draw(card))
                    .collect()
            }
            _ => return None,
        };
        if candidates.len() < 2 {
            return None;
        }
        let result = search(
            view,
            &self.memory,
            judge,
            candidates,
            &params,
            self.seed,
            &mut self.reuse,
        );
        Some(match &result.means[result.chosen].0 {
            Candidate::Throw(cards) => Action::Throw {
                cards: cards.clone(),
            },
            Candidate::Draw(card) => draw(view, *card),
        })
    }

    /// What calling now and holding on are worth in `view` (whose hand may call), with the
    /// table's public `history`.
    pub fn call_value(&mut self, view: &SeatView, history: &PublicHistory) -> CallValue {
        self.memory.sync(view, history);
        let belief = self.belief(view);
        call_value(view, &belief, &self.params)
    }

    /// Its belief about the opponents' hands, for the call.
    fn belief(&self, view: &SeatView) -> Belief {
        let at = CallRule::default()
            .call_at(&view.settings)
            .map(|at| (i64::from(at) + i64::from(self.params.pass_shift)).max(0) as u32);
        let pass = at.map(|at| Pass {
            at,
            weight: self.params.pass_weight,
        });
        let scale = match view.settings.turn_order {
            TurnOrder::ThrowThenDraw if view.settings.score_reset => self.params.reset_lean,
            TurnOrder::ThrowThenDraw => self.params.throw_first_lean,
            TurnOrder::DrawThenThrow => 1.0,
        };
        Belief::with_inference(
            view,
            &self.memory,
            |t, u| scale * lean(t, u),
            pass,
            if view.settings.score_reset {
                self.params.reset_cap
            } else {
                self.params.throw_cap
            },
        )
    }

    /// Its draw and throw judgement for `view`.
    fn judge<'v>(&self, view: &'v SeatView) -> Judge<'v> {
        let judge = Judge::with_call_at(view, &self.memory, self.plan_at(&view.settings));
        match view.settings.turn_order {
            TurnOrder::ThrowThenDraw if self.params.standing_threat != 0.0 => {
                let chance = threat_chance(&view.settings, &self.belief(view), &self.params);
                judge
                    .with_params(self.params.throw_first_judge)
                    .with_call_chance(self.params.standing_threat * chance)
            }
            TurnOrder::ThrowThenDraw => judge.with_params(self.params.throw_first_judge),
            TurnOrder::DrawThenThrow => judge,
        }
    }

    /// The highest total the draw and throw look-ahead counts as callable.
    fn plan_at(&self, settings: &Settings) -> Option<u32> {
        Some(match settings.call_limit {
            Some(limit) => limit - self.params.plan_margin.min(limit / 2),
            None => self.params.open_plan_at,
        })
    }
}

/// The expected charge of a caught call with `mine`, under `belief`: the chance of being caught
/// times the penalty, the chance of being undercut by more than the double-penalty margin times
/// what doubling adds, and, when the penalty is on top, the chance of being caught times the
/// hand — every amount the engine's own [`caught_charge`].
fn expected_caught_charge(settings: &Settings, belief: &Belief, mine: u32, lightest: f64) -> f64 {
    let caught = 1.0 - lightest;
    let penalty = caught_charge(settings, 0, 0);
    let mut charge = caught * f64::from(penalty);
    if let Some(double) = settings.double_penalty {
        let far = belief.chance_undercut_by_more_than(mine, double.margin);
        let doubled = caught_charge(settings, 0, double.margin.saturating_add(1));
        charge += far * (f64::from(doubled) - f64::from(penalty));
    }
    // The hand on top (nothing when the penalty is instead of the hand).
    let on_top = caught_charge(settings, mine, 0) - penalty;
    charge + caught * f64::from(on_top)
}

/// The chance that some opponent holds a hand it would call on: at most
/// [`ExpertParams::threat_margin`] under the limit, or [`ExpertParams::open_plan_at`] at a table
/// with no limit.
fn threat_chance(settings: &Settings, belief: &Belief, params: &ExpertParams) -> f64 {
    let at = match settings.call_limit {
        Some(limit) => limit.saturating_sub(params.threat_margin),
        None => params.open_plan_at,
    };
    let quiet: f64 = belief
        .opponents
        .iter()
        .map(|o| 1.0 - o.at_most(at))
        .product();
    1.0 - quiet
}

/// What the score resets (a total landing on a multiple of 50 goes down by 50) add to a call's
/// worth and to holding on's, in points, at full weight (see [`ExpertParams::reset_weight`]).
fn reset_values(
    view: &SeatView,
    belief: &Belief,
    params: &ExpertParams,
    my_total: i64,
    mine: u32,
    lightest: f64,
) -> (f64, f64) {
    let settings = &view.settings;
    let lands = |total: i64, took: u32| took > 0 && (total + i64::from(took)) % 50 == 0;
    let mut call = 0.0;
    // Caught, it takes the charge, undoubled.
    if lands(my_total, caught_charge(settings, mine, 0)) {
        call += (1.0 - lightest) * 50.0;
    }
    // Right, each opponent takes its hand: a reset spares it 50 of what the call makes it take.
    if params.relative != 0.0 && !belief.opponents.is_empty() {
        let mut spared = 0.0;
        for o in &belief.opponents {
            let theirs = view.totals.get(o.seat).copied().unwrap_or(0);
            let above = o.above(mine);
            if above <= 0.0 {
                continue;
            }
            let reset: f64 = o
                .total
                .iter()
                .enumerate()
                .skip(mine as usize + 1)
                .filter(|&(t, _)| lands(theirs, t as u32))
                .map(|(_, p)| p)
                .sum();
            spared += 50.0 * reset / above;
        }
        call -= params.relative * lightest * spared / belief.opponents.len() as f64;
    }
    // Holding, an opponent's right call charges it its hand.
    let hold = if lands(my_total, mine) {
        50.0 * threat_chance(settings, belief, params)
    } else {
        0.0
    };
    (call, hold)
}

/// Whether `view` is the match's last round (as far as can be known: a fixed number of rounds).
fn last_round(view: &SeatView) -> bool {
    match view.settings.rounds {
        Rounds::Fixed(n) => view.round >= n,
        Rounds::UntilOneRemains => false,
    }
}

/// What calling now and holding on are worth to the seat of `view`, under `belief`.
fn call_value(view: &SeatView, belief: &Belief, params: &ExpertParams) -> CallValue {
    let settings = &view.settings;
    let mine = view.hand_total;
    let lightest = belief.chance_lightest(mine);
    let caught = expected_caught_charge(settings, belief, mine, lightest);
    let seat = me(view);
    let my_total = view.totals.get(seat).copied().unwrap_or(0);
    match settings.scoring {
        Scoring::Settlement => {
            let collect = lightest * belief.mean_heavier_sum(mine);
            let mut hold = params.hold;
            if params.threat > 0.0 {
                let threat = params.threat * threat_chance(settings, belief, params);
                hold = (1.0 - threat) * hold - threat * f64::from(mine);
            }
            if last_round(view) && params.place_weight != 0.0 {
                let best_other = (0..view.totals.len())
                    .filter(|&s| s != seat && !view.eliminated.get(s).copied().unwrap_or(false))
                    .map(|s| view.totals[s])
                    .max()
                    .unwrap_or(my_total);
                let lead = (my_total - best_other) as f64;
                hold += params.place_weight * lead.clamp(-50.0, 50.0);
            }
            CallValue {
                lightest,
                call: collect - caught,
                hold,
            }
        }
        Scoring::Cumulative => {
            // Lower totals are better: the worth is minus the points it adds, plus (as far as
            // `relative` says) the opponents' mean hand that a right call makes them take.
            let mut call = -caught;
            if params.relative != 0.0 && !belief.opponents.is_empty() {
                let theirs = belief.mean_heavier_sum(mine) / belief.opponents.len() as f64;
                call += params.relative * lightest * theirs;
            }
            if let Some(threshold) = settings.elimination {
                let threshold = i64::from(threshold);
                // A caught call's charge, undoubled.
                let charged = i64::from(caught_charge(settings, mine, 0));
                if my_total + charged >= threshold {
                    call -= (1.0 - lightest) * params.elimination_cost;
                }
                for o in &belief.opponents {
                    let theirs = view.totals.get(o.seat).copied().unwrap_or(0);
                    let need = threshold - theirs;
                    if need <= 0 {
                        continue;
                    }
                    // The chance a right call puts it out: heavier than me and at least `need`.
                    let out: f64 = o
                        .total
                        .iter()
                        .enumerate()
                        .skip((mine as usize + 1).max(need as usize))
                        .map(|(_, p)| p)
                        .sum();
                    let above = o.above(mine);
                    if above > 0.0 {
                        call += lightest * (out / above) * params.eliminate_bonus;
                    }
                }
            }
            let flat = if settings.score_reset {
                params.reset_hold_flat
            } else {
                params.hold_flat
            };
            let mut hold = -(params.hold_per_point * f64::from(mine) + flat);
            if params.threat > 0.0 {
                // An opponent that may call before its next turn charges it the hand it holds.
                hold -= params.threat * threat_chance(settings, belief, params) * f64::from(mine);
            }
            if settings.score_reset && params.reset_weight != 0.0 {
                let (c, h) = reset_values(view, belief, params, my_total, mine, lightest);
                call += params.reset_weight * c;
                hold += params.reset_weight * h;
            }
            CallValue {
                lightest,
                call,
                hold,
            }
        }
    }
}

impl Bot for ExpertBot {
    fn difficulty(&self) -> Difficulty {
        Difficulty::Expert
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
        let weighs =
            view.settings.call_limit.is_some() || view.hand_total <= self.params.open_call_at;
        if matches!(step, Step::CallOrDraw | Step::CallOrThrow) && view.can_call && weighs {
            let belief = self.belief(view);
            let value = call_value(view, &belief, &self.params);
            let sure = view.settings.scoring == Scoring::Settlement
                || view.settings.call_limit.is_some()
                || value.lightest >= self.params.min_lightest;
            let calls = match self.params.search.filter(|s| {
                s.open_calls
                    && view.settings.call_limit.is_none()
                    && view.settings.scoring == Scoring::Cumulative
            }) {
                // Holding on is worth what hard's move, played out, scores on the same samples.
                Some(search) => {
                    let judge = self.judge(view);
                    let hold = match play(view, step, &judge) {
                        Action::Throw { cards } => Candidate::Throw(cards),
                        Action::Draw {
                            from: Source::PileCard(card),
                        } => Candidate::Draw(Some(card)),
                        Action::Draw { .. } | Action::Call => Candidate::Draw(None),
                    };
                    let (call, keep) =
                        call_or_hold(view, &self.memory, &judge, &hold, &search, self.seed);
                    call > keep && sure
                }
                None => value.call > value.hold && sure,
            };
            if calls {
                return Action::Call;
            }
        }
        let judge = self.judge(view);
        if let Some(action) = self.searched(view, step, &judge) {
            return action;
        }
        play(view, step, &judge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::{Game, Preset};

    #[test]
    fn a_low_hand_early_is_worth_calling_and_a_heavy_one_is_not() {
        let game = Game::new(Preset::Standard.settings(), [5; 32]).unwrap();
        let mut view = game.view(0);
        let mut bot = ExpertBot::new(0);
        view.hand_total = 2;
        let low = bot.call_value(&view, game.public_history());
        assert!(low.lightest > 0.95, "{low:?}");
        assert!(low.call > low.hold, "{low:?}");
        view.hand_total = 5;
        view.card_counts[2] = 1;
        let risky = bot.call_value(&view, game.public_history());
        assert!(risky.lightest < low.lightest);
        assert!(risky.call < low.call);
    }

    #[test]
    fn a_call_that_could_eliminate_it_is_worth_less() {
        let settings = Preset::Household.settings();
        let game = Game::new(settings, [6; 32]).unwrap();
        let mut view = game.view(0);
        view.hand_total = 6;
        // Two opponents down to one card: a call is far from safe.
        view.card_counts[2] = 1;
        view.card_counts[3] = 1;
        let mut bot = ExpertBot::new(0);
        let safe = bot.call_value(&view, game.public_history());
        assert!(safe.lightest < 0.9, "{safe:?}");
        // 80 + a caught call's 25 reaches the elimination at 100.
        view.totals[0] = 80;
        let at_risk = bot.call_value(&view, game.public_history());
        assert!(at_risk.call < safe.call - 1.0, "{at_risk:?} {safe:?}");
        // An opponent near elimination makes a right call worth more.
        view.totals[0] = 0;
        view.totals[1] = 95;
        let eliminating = bot.call_value(&view, game.public_history());
        assert!(eliminating.call > safe.call, "{eliminating:?} {safe:?}");
    }

    #[test]
    fn at_yaniv_the_reset_fields_replace_the_household_ones() {
        let changed = ExpertParams {
            hold_flat: 40.0,
            throw_first_lean: 0.0,
            throw_cap: 1.0,
            ..ExpertParams::default()
        };
        for (preset, same) in [(Preset::Yaniv, true), (Preset::Household, false)] {
            let game = Game::new(preset.settings(), [8; 32]).unwrap();
            let mut view = game.view(0);
            view.hand_total = 5;
            let value = |params: ExpertParams| {
                let mut bot = ExpertBot::with_params(params, 1);
                bot.call_value(&view, game.public_history())
            };
            let (a, b) = (value(ExpertParams::default()), value(changed));
            assert_eq!(a == b, same, "{preset:?} {a:?} {b:?}");
        }
    }

    #[test]
    fn at_yaniv_the_score_resets_move_the_call() {
        let game = Game::new(Preset::Yaniv.settings(), [8; 32]).unwrap();
        let mut view = game.view(0);
        view.hand_total = 5;
        view.card_counts[1] = 1;
        let value = |view: &SeatView, weight: f64| {
            let mut m = Memory::new();
            m.sync(view, game.public_history());
            let params = ExpertParams {
                reset_weight: weight,
                ..ExpertParams::default()
            };
            call_value(view, &Belief::new(view, &m), &params)
        };
        // Everyone at 0 (only a 50-point hand would land on 50).
        let plain = value(&view, 1.0);
        // Caught, 15 + 5 + 30 lands on 50: a caught call costs 50 less.
        view.totals[0] = 15;
        let caught = value(&view, 1.0);
        let expected = plain.call + (1.0 - plain.lightest) * 50.0;
        assert!(
            (caught.call - expected).abs() < 1e-9,
            "{caught:?} {plain:?}"
        );
        assert_eq!(caught.hold, plain.hold);
        // Holding, 45 + 5 lands on 50 if an opponent calls first.
        view.totals[0] = 45;
        let held = value(&view, 1.0);
        assert!(held.hold > plain.hold, "{held:?} {plain:?}");
        // The one-card opponent at 40, which a right call lands on 50 if its card is a ten,
        // makes the call worth less.
        view.totals[0] = 0;
        view.totals[1] = 40;
        let spared = value(&view, 1.0);
        assert!(spared.call < plain.call - 1.0, "{spared:?} {plain:?}");
    }

    #[test]
    fn at_a_cumulative_table_a_right_call_is_worth_the_points_it_makes_the_others_take() {
        let game = Game::new(Preset::Household.settings(), [8; 32]).unwrap();
        let mut view = game.view(0);
        view.hand_total = 12;
        let memory = {
            let mut m = Memory::new();
            m.sync(&view, game.public_history());
            m
        };
        let belief = Belief::new(&view, &memory);
        let own = ExpertParams {
            relative: 0.0,
            ..ExpertParams::default()
        };
        let alone = call_value(&view, &belief, &own);
        let relative = call_value(&view, &belief, &ExpertParams::default());
        // The others' mean five-card hand, heavier than 12, times the chance they all are.
        let theirs = belief.mean_heavier_sum(12) / 4.0;
        assert!(theirs > 12.0, "{theirs}");
        let expected = alone.call + ExpertParams::default().relative * alone.lightest * theirs;
        assert!(
            (relative.call - expected).abs() < 1e-9,
            "{relative:?} {alone:?}"
        );
        assert_eq!(relative.hold, alone.hold);
    }

    #[test]
    fn its_throw_first_judgement_weights_apply_at_throw_then_draw_tables_only() {
        let params = ExpertParams {
            throw_first_judge: JudgeParams {
                gift: 0.0,
                ..JudgeParams::default()
            },
            ..ExpertParams::default()
        };
        for (preset, changed) in [(Preset::Household, true), (Preset::Standard, false)] {
            let game = Game::new(preset.settings(), [8; 32]).unwrap();
            let view = game.view(0);
            let mut bot = ExpertBot::with_params(params, 0);
            bot.memory.sync(&view, game.public_history());
            let judge = bot.judge(&view);
            assert_eq!(
                judge.params() != JudgeParams::default(),
                changed,
                "{preset:?}"
            );
        }
    }

    #[test]
    fn on_the_last_round_a_leader_holds_back_and_a_trailer_presses() {
        let game = Game::new(Preset::Standard.settings(), [7; 32]).unwrap();
        let mut view = game.view(0);
        view.hand_total = 3;
        let mut bot = ExpertBot::new(0);
        let early = bot.call_value(&view, game.public_history());
        view.round = 3;
        view.totals = vec![40, -20, -10, -10];
        let leading = bot.call_value(&view, game.public_history());
        view.totals = vec![-40, 20, 10, 10];
        let trailing = bot.call_value(&view, game.public_history());
        assert!(leading.hold > early.hold && trailing.hold < early.hold);
        assert_eq!(leading.call, trailing.call);
    }
}
