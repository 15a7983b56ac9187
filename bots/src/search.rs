//! Search over what the seat cannot see: determinized play-outs of the rest of the round, with
//! common random numbers across the candidate moves.
//!
//! A decision is searched only when hard's one-turn judgement ([`crate::hard`]) finds more than
//! one move close to its best (within [`SearchParams::window`] points, at most
//! [`SearchParams::candidates`] of them). Then:
//!
//! 1. **Sampling** ([`World`]): every opponent's hidden cards are drawn from the cards the seat
//!    has not seen, leaning low as the fitted [`crate::belief`] says (by its throws this round
//!    and its unknown-card count); known pick-ups stay in its hand; the rest, shuffled, is the
//!    stock.
//! 2. **Play-out**: from each sample, every candidate is played, the rest of the seat's turn by
//!    hard's judgement, and then the rest of the round by a fast rollout policy (call at or under
//!    a seat's calling total; take the pile when it pairs or is low; throw the heaviest group).
//!    Every candidate meets the same sample and the same reshuffles (common random numbers), so
//!    the comparison is paired and the luck of the deal that the candidates share cancels.
//! 3. **Choice**: the candidate with the best mean score replaces hard's choice only when it
//!    beats it by [`SearchParams::switch_margin`] points and by [`SearchParams::switch_z`]
//!    standard errors of the paired difference (noise must not move it off hard's choice).
//!
//! It pays at draw-then-throw tables (the standard one at every call limit, most of all at limit
//! 0, where hard's one-turn judgement cannot see a hand emptying itself); at throw-then-draw
//! tables (household, yaniv) it measured no gain, so it is off there unless
//! [`SearchParams::throw_first`] is set. [`SearchParams::open_calls`] (off) decides the call at
//! cumulative tables with no limit by play-outs too; it measured no gain either. Three more
//! options for those tables, all off, none measured a gain (household, tuning seed 11): play-out
//! opponents that call as hard does, when their chance of being the lightest judged from the
//! play-out's public state reaches hard's confidence ([`SearchParams::hard_calls`]); a score
//! against the opponents' mean points ([`SearchParams::relative`]); and the seat's own later
//! turns played by hard's judgement ([`SearchParams::own_judge`]).
//!
//! The budget is [`SearchParams::samples`] samples per candidate, so a decision is the same for
//! the same seed on any machine; [`SearchParams::time_cap`] is a wall-clock cap on top (a decision
//! that hits it stops sampling early, and only then depends on the machine's speed). The random
//! numbers come from the bot's seed, the round and the throw count, so a match replays.
//!
//! The samples drawn for a turn's first decision are kept for its second (the draw and the throw
//! of a draw-then-throw turn, the throw and the draw of a throw-then-draw one), with the card
//! drawn from the stock moved into the seat's hand in each.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use dhumbal_engine::{
    Card, Scoring, SeatView, Settings, THROW_CAP, TurnOrder, charges, full_deck, pickup_choices,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::belief::{LEAN_CARDS, LEAN_THROWS, lean};
use crate::groups::{legal_groups, total, value};
use crate::hard::{CallRule, Judge};
use crate::memory::Memory;
use crate::turn::{me, opponents};

/// How much the expert bot searches. See the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchParams {
    /// Samples per candidate: the work budget, which fixes the decision for a seed.
    pub samples: u32,
    /// A wall-clock cap on one decision's search, on top of the samples (`None`: none).
    pub time_cap: Option<Duration>,
    /// Moves hard judges within this many points of its best are candidates.
    pub window: f64,
    /// The most candidates searched (hard's best included).
    pub candidates: usize,
    /// How much better, in points of the round's score, a candidate's mean must be than hard's
    /// choice to replace it.
    pub switch_margin: f64,
    /// How many standard errors of the paired difference a candidate's mean must also beat
    /// hard's choice by (0: the margin alone).
    pub switch_z: f64,
    /// Whether draws are searched (at draw-then-throw tables: the stock or the pile's top).
    pub draws: bool,
    /// Whether throws are searched.
    pub throws: bool,
    /// Whether it searches at throw-then-draw tables too (the household and yaniv presets),
    /// where it measured no gain over hard's judgement.
    pub throw_first: bool,
    /// At a table with no limit, the total every seat calls at in a play-out.
    pub open_call_at: u32,
    /// Whether, at a cumulative table with no limit, the call is also decided by play-outs
    /// (calling against holding on, on the same samples) instead of the expected-value formula.
    pub open_calls: bool,
    /// Whether a play-out's opponents call as hard does: at most its calling total *and* when
    /// their chance of being the lightest, judged from the play-out's public state (card
    /// counts, throws, known pick-ups), reaches hard's confidence. Off: at the total alone.
    pub hard_calls: bool,
    /// At a cumulative table, how much the opponents' mean points for the round count in a
    /// play-out's score (0: the seat's own points alone; 1: its points against theirs).
    pub relative: f64,
    /// Whether the searching seat plays its own later throw-then-draw turns in a play-out by
    /// hard's judgement (slower) instead of the rollout policy.
    pub own_judge: bool,
}

impl Default for SearchParams {
    /// The budget and thresholds measured best in the arena: 128 samples per candidate within a
    /// 50 ms cap, up to 3 candidates within 1.5 points, switching for half a point and one
    /// standard error; draws and throws searched, at draw-then-throw tables only.
    fn default() -> SearchParams {
        SearchParams {
            samples: 128,
            time_cap: Some(Duration::from_millis(50)),
            window: 1.5,
            candidates: 3,
            switch_margin: 0.5,
            switch_z: 1.0,
            draws: true,
            throws: true,
            throw_first: false,
            open_call_at: 7,
            open_calls: false,
            hard_calls: false,
            relative: 0.0,
            own_judge: false,
        }
    }
}

/// One determinization: every hand and the stock's order.
#[derive(Clone, Debug, PartialEq)]
pub struct World {
    /// Every seat's hand (the searching seat's is its real one).
    pub hands: Vec<Vec<Card>>,
    /// The stock, top last.
    pub stock: Vec<Card>,
    /// The seed of the play-out's own randomness (reshuffles).
    pub seed: u64,
}

impl World {
    /// A sample of what `view`'s seat cannot see, consistent with its `memory` and leaning low
    /// as the fitted belief says.
    pub fn sample(view: &SeatView, memory: &Memory, rng: &mut ChaCha8Rng) -> World {
        let settings = &view.settings;
        let mut pool = memory.unseen(view);
        let mut hands = vec![Vec::new(); view.card_counts.len()];
        hands[me(view)] = view.hand.clone();
        for seat in opponents(view) {
            let known = memory.held(seat);
            let unknown = view.card_counts[seat].saturating_sub(known.len());
            let lean = lean(memory.throws_by(seat), unknown);
            let weight: Vec<f64> = (0..=13).map(|v| (-lean * f64::from(v)).exp()).collect();
            let hand = &mut hands[seat];
            hand.extend_from_slice(known);
            for _ in 0..unknown.min(pool.len()) {
                let sum: f64 = pool
                    .iter()
                    .map(|&c| weight[value(c, settings).min(13) as usize])
                    .sum();
                let mut at = rng.random::<f64>() * sum;
                let mut pick = pool.len() - 1;
                for (i, &c) in pool.iter().enumerate() {
                    at -= weight[value(c, settings).min(13) as usize];
                    if at < 0.0 {
                        pick = i;
                        break;
                    }
                }
                hand.push(pool.swap_remove(pick));
            }
        }
        pool.shuffle(rng);
        World {
            hands,
            stock: pool,
            seed: rng.random(),
        }
    }

    /// The same sample after the seat drew `card` from the stock: the card leaves wherever the
    /// sample had put it (an opponent's hand takes the stock's top in its place).
    fn after_stock_draw(&mut self, seat: usize, hand: &[Card], card: Card) {
        if let Some(at) = self.stock.iter().position(|&c| c == card) {
            self.stock.remove(at);
        } else {
            for (s, h) in self.hands.iter_mut().enumerate() {
                if s == seat {
                    continue;
                }
                if let Some(at) = h.iter().position(|&c| c == card) {
                    match self.stock.pop() {
                        Some(other) => h[at] = other,
                        None => {
                            h.remove(at);
                        }
                    }
                    break;
                }
            }
        }
        self.hands[seat] = hand.to_vec();
    }
}

/// The samples kept for the second decision of a turn.
#[derive(Clone, Debug, Default)]
pub struct Reuse {
    /// The round and throw count they were drawn at, and the hand then.
    key: Option<(u32, u32, Vec<Card>)>,
    /// The samples.
    worlds: Vec<World>,
}

/// One candidate at the root: what the seat does now.
#[derive(Clone, Debug, PartialEq)]
pub enum Candidate {
    /// Throw this group (in this order).
    Throw(Vec<Card>),
    /// Draw this pile card, or from the stock for `None`.
    Draw(Option<Card>),
}

/// A searched decision's figures (for tests and tuning).
#[derive(Clone, Debug, PartialEq)]
pub struct Searched {
    /// The candidates, hard's choice first, with their mean scores.
    pub means: Vec<(Candidate, f64)>,
    /// Samples played per candidate.
    pub samples: u32,
    /// The index of the chosen candidate.
    pub chosen: usize,
}

/// Searches `candidates` (hard's choice first) for the seat of `view` and returns the chosen one.
pub(crate) fn search(
    view: &SeatView,
    memory: &Memory,
    judge: &Judge<'_>,
    candidates: Vec<Candidate>,
    params: &SearchParams,
    seed: u64,
    reuse: &mut Reuse,
) -> Searched {
    let started = Instant::now();
    let seat = me(view);
    let mut rng = ChaCha8Rng::seed_from_u64(
        seed ^ (u64::from(view.round) << 40)
            ^ (u64::from(view.throws) << 20)
            ^ view.hand.len() as u64,
    );
    // Samples kept from this turn's first decision, brought up to date: after a draw from the
    // stock (draw-then-throw) the card drawn moves into the hand; after a throw (throw-then-draw)
    // nothing hidden changed.
    let mut worlds = Vec::new();
    if let Some((round, throws, before)) = &reuse.key {
        let drew = *throws == view.throws && view.hand.len() == before.len() + 1;
        let threw = *throws + 1 == view.throws && view.hand.iter().all(|c| before.contains(c));
        if *round == view.round && (drew || threw) {
            let drawn = view.hand.iter().find(|c| !before.contains(c)).copied();
            worlds = std::mem::take(&mut reuse.worlds);
            for w in &mut worlds {
                match drawn {
                    Some(card) if drew && view.barred.is_none() => {
                        w.after_stock_draw(seat, &view.hand, card)
                    }
                    _ => w.hands[seat] = view.hand.clone(),
                }
            }
        }
    }
    let rollout = Rollout::new(view, params);
    let mut scores: Vec<Vec<f64>> = vec![Vec::new(); candidates.len()];
    let mut played = 0u32;
    let mut kept = Vec::new();
    for i in 0..params.samples as usize {
        if params
            .time_cap
            .is_some_and(|cap| played > 0 && started.elapsed() >= cap)
        {
            break;
        }
        let world = match worlds.get(i) {
            Some(w) => w.clone(),
            None => World::sample(view, memory, &mut rng),
        };
        for (k, candidate) in candidates.iter().enumerate() {
            let mut sim = Sim::new(view, memory, &world, &rollout);
            scores[k].push(sim.play_candidate(seat, candidate, judge));
        }
        kept.push(world);
        played += 1;
    }
    reuse.key = Some((view.round, view.throws, view.hand.clone()));
    reuse.worlds = kept;
    let n = f64::from(played.max(1));
    let means: Vec<(Candidate, f64)> = candidates
        .into_iter()
        .zip(&scores)
        .map(|(c, s)| (c, s.iter().sum::<f64>() / n))
        .collect();
    let mut chosen = 0;
    for k in 1..means.len() {
        if means[k].1 > means[chosen].1 {
            chosen = k;
        }
    }
    if chosen != 0 {
        // The paired difference from hard's choice, sample by sample.
        let gain = means[chosen].1 - means[0].1;
        let spread = scores[chosen]
            .iter()
            .zip(&scores[0])
            .map(|(a, b)| (a - b - gain).powi(2))
            .sum::<f64>()
            / (n - 1.0).max(1.0);
        let error = (spread / n).sqrt();
        if gain < params.switch_margin || gain < params.switch_z * error {
            chosen = 0;
        }
    }
    Searched {
        means,
        samples: played,
        chosen,
    }
}

/// What calling now and holding on (playing `hold`, hard's move) are worth to the seat of
/// `view`, each the mean over the same samples of the round's score.
pub(crate) fn call_or_hold(
    view: &SeatView,
    memory: &Memory,
    judge: &Judge<'_>,
    hold: &Candidate,
    params: &SearchParams,
    seed: u64,
) -> (f64, f64) {
    let started = Instant::now();
    let seat = me(view);
    let mut rng = ChaCha8Rng::seed_from_u64(
        seed ^ 0x5eed ^ (u64::from(view.round) << 40) ^ (u64::from(view.throws) << 20),
    );
    let rollout = Rollout::new(view, params);
    let (mut call, mut keep, mut n) = (0.0, 0.0, 0u32);
    for _ in 0..params.samples {
        if params
            .time_cap
            .is_some_and(|cap| n > 0 && started.elapsed() >= cap)
        {
            break;
        }
        let world = World::sample(view, memory, &mut rng);
        let sim = Sim::new(view, memory, &world, &rollout);
        call += sim.score(seat, End::Call(seat));
        let mut sim = Sim::new(view, memory, &world, &rollout);
        keep += sim.play_candidate(seat, hold, judge);
        n += 1;
    }
    let n = f64::from(n.max(1));
    (call / n, keep / n)
}

/// Every candidate's score on each of `samples` samples of what `view`'s seat cannot see, all
/// the candidates meeting the same samples (a candidate `None` is a call now): for the coach
/// ([`crate::coach`]), which compares a person's move with the best one, paired. No wall-clock
/// cap: the same view and seed give the same scores on any machine.
pub(crate) fn play_outs(
    view: &SeatView,
    memory: &Memory,
    judge: &Judge<'_>,
    candidates: &[Option<Candidate>],
    samples: u32,
    open_call_at: u32,
    seed: u64,
) -> Vec<Vec<f64>> {
    let seat = me(view);
    let mut rng = ChaCha8Rng::seed_from_u64(
        seed ^ 0xc0ac ^ (u64::from(view.round) << 40) ^ (u64::from(view.throws) << 20),
    );
    let rollout = Rollout::fixed(rollout_call_at(view, open_call_at));
    let mut scores = vec![Vec::with_capacity(samples as usize); candidates.len()];
    for _ in 0..samples {
        let world = World::sample(view, memory, &mut rng);
        for (k, candidate) in candidates.iter().enumerate() {
            let mut sim = Sim::new(view, memory, &world, &rollout);
            scores[k].push(match candidate {
                Some(candidate) => sim.play_candidate(seat, candidate, judge),
                None => sim.score(seat, End::Call(seat)),
            });
        }
    }
    scores
}

/// The total each seat calls at in a play-out: hard's rule for the opponents, and for the seat
/// itself the expert's planning total (at a table with no limit, `open` for everyone).
fn rollout_call_at(view: &SeatView, open: u32) -> Vec<Option<u32>> {
    let settings = &view.settings;
    let hard = match settings.call_limit {
        Some(_) => CallRule::default().call_at(settings),
        None => Some(open),
    };
    let mine = match settings.call_limit {
        Some(limit) => Some(limit - 1.min(limit / 2)),
        None => Some(open),
    };
    (0..view.card_counts.len())
        .map(|s| if s == me(view) { mine } else { hard })
        .collect()
}

/// How a play-out's seats call, and how its end is scored.
struct Rollout {
    /// The highest total each seat calls at.
    call_at: Vec<Option<u32>>,
    /// The chance of being the lightest each seat also wants before it calls (0: none), judged
    /// from the play-out's public state.
    confidence: Vec<f64>,
    /// `above[cell][t]`: the chance that unknown cards of the belief's cell (throws, unknown
    /// count) total more than `t`, computed when first wanted.
    above: RefCell<Vec<Option<Vec<f64>>>>,
    /// One card's value distribution in a full pack (`single[v]`: the share of cards worth
    /// `v`).
    single: Vec<f64>,
    /// How much the opponents' mean points count in the score at a cumulative table.
    relative: f64,
    /// Whether the searching seat plays its later throw-then-draw turns by hard's judgement.
    own_judge: bool,
}

impl Rollout {
    /// Every seat calling at its total in `call_at`, nothing else weighed; scored by the seat's
    /// own points.
    fn fixed(call_at: Vec<Option<u32>>) -> Rollout {
        Rollout {
            confidence: vec![0.0; call_at.len()],
            call_at,
            above: RefCell::new(Vec::new()),
            single: Vec::new(),
            relative: 0.0,
            own_judge: false,
        }
    }

    /// The rollout `params` ask for at `view`'s table.
    fn new(view: &SeatView, params: &SearchParams) -> Rollout {
        let settings = &view.settings;
        let mut call_at = rollout_call_at(view, params.open_call_at);
        let mut rollout = Rollout::fixed(Vec::new());
        if params.hard_calls {
            let rule = CallRule::default();
            let confidence = rule.confidence(settings);
            let seat = me(view);
            for (s, at) in call_at.iter_mut().enumerate() {
                if s != seat {
                    *at = rule.call_at(settings);
                }
            }
            rollout.confidence = (0..call_at.len())
                .map(|s| if s == seat { 0.0 } else { confidence })
                .collect();
            let mut single = vec![0.0; 14];
            let pack = full_deck(settings.jokers);
            for &c in &pack {
                single[value(c, settings).min(13) as usize] += 1.0 / pack.len() as f64;
            }
            rollout.single = single;
            *rollout.above.borrow_mut() = vec![None; LEAN_THROWS * LEAN_CARDS];
        } else {
            rollout.confidence = vec![0.0; call_at.len()];
        }
        rollout.call_at = call_at;
        rollout.own_judge = params.own_judge;
        if settings.scoring == Scoring::Cumulative {
            rollout.relative = params.relative;
        }
        rollout
    }

    /// The chance that `unknown` cards of a seat that has thrown `throws` times total more than
    /// `t`, leaning low as the fitted belief says (from a full pack's values: the play-out does
    /// not track what each seat has seen).
    fn above(&self, throws: u32, unknown: usize, t: u32) -> f64 {
        let row = (throws as usize).min(LEAN_THROWS - 1);
        let col = unknown.min(LEAN_CARDS - 1);
        let cell = row * LEAN_CARDS + col;
        let mut above = self.above.borrow_mut();
        let table = above[cell].get_or_insert_with(|| {
            let l = lean(throws, unknown);
            let mut single: Vec<f64> = self
                .single
                .iter()
                .enumerate()
                .map(|(v, &p)| p * (-l * v as f64).exp())
                .collect();
            let sum: f64 = single.iter().sum();
            single.iter_mut().for_each(|p| *p /= sum);
            let mut dist = vec![1.0];
            for _ in 0..unknown {
                let mut next = vec![0.0; dist.len() + single.len() - 1];
                for (s, &p) in dist.iter().enumerate() {
                    for (v, &q) in single.iter().enumerate() {
                        next[s + v] += p * q;
                    }
                }
                dist = next;
            }
            // Survival: table[t] = P(sum > t).
            let mut table = vec![0.0; dist.len()];
            let mut tail = 0.0;
            for t in (0..dist.len()).rev() {
                table[t] = tail;
                tail += dist[t];
            }
            table
        });
        table.get(t as usize).copied().unwrap_or(0.0)
    }
}

/// A round being played out from one sample.
struct Sim<'a> {
    settings: &'a Settings,
    dealer: usize,
    active: Vec<bool>,
    hands: Vec<Vec<Card>>,
    stock: Vec<Card>,
    /// The pile, bottom first.
    pile: Vec<Card>,
    top_throw: Vec<Card>,
    previous_throw: Vec<Card>,
    barred: Option<Card>,
    throws: u32,
    /// Each seat's throws this round.
    throws_by: Vec<u32>,
    /// The cards each seat is publicly known to hold (pick-ups not thrown since).
    known: Vec<Vec<Card>>,
    /// Each seat's match total before this round (a cumulative table's score resets read it).
    totals: Vec<i64>,
    rollout: &'a Rollout,
    rng: ChaCha8Rng,
}

/// How a play-out ended.
enum End {
    Call(usize),
    Cap,
}

impl<'a> Sim<'a> {
    fn new(view: &'a SeatView, memory: &Memory, world: &World, rollout: &'a Rollout) -> Sim<'a> {
        let seats = world.hands.len();
        Sim {
            settings: &view.settings,
            dealer: view.dealer,
            active: view.eliminated.iter().map(|e| !e).collect(),
            hands: world.hands.clone(),
            stock: world.stock.clone(),
            pile: memory.pile().to_vec(),
            top_throw: view.top_throw.clone(),
            previous_throw: view.previous_throw.clone(),
            barred: view.barred,
            throws: view.throws,
            throws_by: (0..seats).map(|s| memory.throws_by(s)).collect(),
            known: (0..seats).map(|s| memory.held(s).to_vec()).collect(),
            totals: view.totals.clone(),
            rollout,
            rng: ChaCha8Rng::seed_from_u64(world.seed),
        }
    }

    fn next(&self, seat: usize) -> usize {
        let n = self.hands.len();
        self.settings
            .direction
            .seats_after(seat, n)
            .find(|&s| self.active[s])
            .unwrap_or(seat)
    }

    /// How many cards stay on the pile at a reshuffle, as the engine keeps them
    /// ([`dhumbal_engine::ReshuffleKeeps::kept`]).
    fn kept(&self) -> usize {
        self.settings.reshuffle_keeps.kept(self.top_throw.len())
    }

    fn stock_drawable(&self) -> bool {
        !self.stock.is_empty() || self.pile.len() > self.kept()
    }

    fn draw_stock(&mut self, seat: usize) -> Option<Card> {
        if self.stock.is_empty() {
            let keep = self.kept();
            if self.pile.len() <= keep {
                return None;
            }
            let split = self.pile.len() - keep;
            let mut cards: Vec<Card> = self.pile.drain(..split).collect();
            cards.shuffle(&mut self.rng);
            self.stock = cards;
            self.previous_throw.clear();
            let shuffled = self.top_throw.len() - keep.min(self.top_throw.len());
            self.top_throw.drain(..shuffled);
        }
        let card = self.stock.pop()?;
        self.hands[seat].push(card);
        Some(card)
    }

    fn take(&mut self, seat: usize, card: Card) {
        if let Some(at) = self.pile.iter().rposition(|&c| c == card) {
            self.pile.remove(at);
        }
        self.top_throw.retain(|&c| c != card);
        self.previous_throw.retain(|&c| c != card);
        self.hands[seat].push(card);
        self.known[seat].push(card);
        if self.settings.turn_order == TurnOrder::DrawThenThrow {
            self.barred = Some(card);
        }
    }

    fn throw(&mut self, seat: usize, cards: &[Card]) {
        self.hands[seat].retain(|c| !cards.contains(c));
        self.known[seat].retain(|c| !cards.contains(c));
        self.pile.extend_from_slice(cards);
        self.throws += 1;
        self.throws_by[seat] += 1;
        self.barred = None;
        std::mem::swap(&mut self.previous_throw, &mut self.top_throw);
        self.top_throw.clear();
        self.top_throw.extend_from_slice(cards);
    }

    /// Plays `candidate` for `seat` (the rest of its turn by `judge`), then the round to its end;
    /// returns the seat's score for the round, higher better.
    fn play_candidate(&mut self, seat: usize, candidate: &Candidate, judge: &Judge<'_>) -> f64 {
        let order = self.settings.turn_order;
        match (order, candidate) {
            (TurnOrder::DrawThenThrow, Candidate::Throw(cards)) => self.throw(seat, cards),
            (TurnOrder::DrawThenThrow, Candidate::Draw(from)) => {
                self.root_draw(seat, *from);
                let (cards, _) = judge.best_throw(&self.hands[seat], self.barred);
                self.throw(seat, &cards);
            }
            (TurnOrder::ThrowThenDraw, Candidate::Throw(cards)) => {
                self.throw(seat, cards);
                let pickable = pickup_choices(self.settings, &self.previous_throw);
                let stock = self.stock_drawable();
                let (card, _) = judge.draw_choice(&self.hands[seat], &pickable, stock);
                self.root_draw(seat, card);
            }
            (TurnOrder::ThrowThenDraw, Candidate::Draw(from)) => self.root_draw(seat, *from),
        }
        let end = if self.throws >= THROW_CAP {
            End::Cap
        } else {
            let own = self.rollout.own_judge.then_some((seat, judge));
            self.play_from(self.next(seat), own)
        };
        self.score(seat, end)
    }

    fn root_draw(&mut self, seat: usize, from: Option<Card>) {
        match from {
            Some(card) => self.take(seat, card),
            None => {
                if self.draw_stock(seat).is_none() {
                    // Only the pile is left (the real game would have offered it).
                    let pickable = self.pickable();
                    if let Some(&card) = pickable.first() {
                        self.take(seat, card);
                    }
                }
            }
        }
    }

    /// The pile cards the seat to draw may take now.
    fn pickable(&self) -> Vec<Card> {
        match self.settings.turn_order {
            TurnOrder::DrawThenThrow => self.pile.last().copied().into_iter().collect(),
            TurnOrder::ThrowThenDraw => pickup_choices(self.settings, &self.previous_throw),
        }
    }

    /// Plays the round from the start of `seat`'s turn to its end by the rollout policy.
    /// With `own`, that seat plays its throw-then-draw turns by that judgement instead.
    fn play_from(&mut self, mut seat: usize, own: Option<(usize, &Judge<'_>)>) -> End {
        loop {
            let hand_total = total(&self.hands[seat], self.settings);
            if self.rollout.call_at[seat].is_some_and(|at| hand_total <= at)
                && self.settings.call_limit.is_none_or(|l| hand_total <= l)
                && self.sure_enough(seat, hand_total)
            {
                return End::Call(seat);
            }
            match self.settings.turn_order {
                TurnOrder::DrawThenThrow => {
                    let top = self.pile.last().copied();
                    let take =
                        top.filter(|&c| !self.hands[seat].is_empty() && self.wants(seat, c, 2));
                    match take {
                        Some(card) => self.take(seat, card),
                        None => {
                            if self.draw_stock(seat).is_none() {
                                match top {
                                    Some(card) if !self.hands[seat].is_empty() => {
                                        self.take(seat, card)
                                    }
                                    _ => return End::Cap,
                                }
                            }
                        }
                    }
                    let cards = heaviest(&self.hands[seat], self.barred, self.settings);
                    self.throw(seat, &cards);
                }
                TurnOrder::ThrowThenDraw if own.is_some_and(|(s, _)| s == seat) => {
                    let judge = own.expect("checked").1;
                    let (cards, _) = judge.best_throw(&self.hands[seat], None);
                    self.throw(seat, &cards);
                    let pickable = self.pickable();
                    let stock = self.stock_drawable();
                    if !stock && pickable.is_empty() {
                        return End::Cap;
                    }
                    let (card, _) = judge.draw_choice(&self.hands[seat], &pickable, stock);
                    self.root_draw(seat, card);
                }
                TurnOrder::ThrowThenDraw => {
                    let cards = heaviest(&self.hands[seat], None, self.settings);
                    self.throw(seat, &cards);
                    let pickable = self.pickable();
                    let wanted = pickable
                        .iter()
                        .copied()
                        .filter(|&c| self.wants(seat, c, 2))
                        .min_by_key(|&c| value(c, self.settings));
                    match wanted {
                        Some(card) => self.take(seat, card),
                        None => {
                            if self.draw_stock(seat).is_none() {
                                match pickable.first() {
                                    Some(&card) => self.take(seat, card),
                                    None => return End::Cap,
                                }
                            }
                        }
                    }
                }
            }
            self.barred = None;
            if self.throws >= THROW_CAP {
                return End::Cap;
            }
            seat = self.next(seat);
        }
    }

    /// Whether `seat`, holding `mine`, is as sure as its rollout rule wants that every other
    /// seat is heavier, judged from what the table has seen: each seat's known pick-ups, and
    /// its other cards leaning low as the fitted belief says.
    fn sure_enough(&self, seat: usize, mine: u32) -> bool {
        let want = self.rollout.confidence[seat];
        if want <= 0.0 {
            return true;
        }
        let mut chance = 1.0;
        for o in (0..self.hands.len()).filter(|&o| o != seat && self.active[o]) {
            let known = total(&self.known[o], self.settings);
            if known > mine {
                continue;
            }
            let unknown = self.hands[o].len().saturating_sub(self.known[o].len());
            chance *= self.rollout.above(self.throws_by[o], unknown, mine - known);
            if chance < want {
                return false;
            }
        }
        chance >= want
    }

    /// Whether `seat` takes `card` off the pile: it pairs with a card it holds, or it is at
    /// most `low`.
    fn wants(&self, seat: usize, card: Card, low: u32) -> bool {
        value(card, self.settings) <= low
            || card
                .rank()
                .is_some_and(|r| self.hands[seat].iter().any(|h| h.rank() == Some(r)))
    }

    /// `seat`'s score for the round that ended so, higher better (Paid, or minus what its total
    /// grows by at a cumulative table, a score reset included), charged by the engine's own
    /// [`charges`].
    fn score(&self, seat: usize, end: End) -> f64 {
        let s = self.settings;
        let hand: Vec<u32> = self.hands.iter().map(|h| total(h, s)).collect();
        let caller = match end {
            End::Call(caller) => Some(caller),
            End::Cap => None,
        };
        let charged = charges(s, &hand, self.dealer, &self.active, caller);
        // What a seat's total grows by, as the engine scores it: what it takes, less 50 when
        // that lands the total on a multiple of 50 at a table whose scores reset.
        let grows = |o: usize| {
            let took = charged.took[o];
            let total = self.totals.get(o).copied().unwrap_or(0) + i64::from(took);
            let reset = s.score_reset && took > 0 && total % 50 == 0;
            f64::from(took) - if reset { 50.0 } else { 0.0 }
        };
        match s.scoring {
            Scoring::Settlement => charged.settlement_paid(seat) as f64,
            Scoring::Cumulative if self.rollout.relative != 0.0 => {
                let others: Vec<f64> = (0..hand.len())
                    .filter(|&o| o != seat && self.active[o])
                    .map(grows)
                    .collect();
                let mean = others.iter().sum::<f64>() / others.len().max(1) as f64;
                self.rollout.relative * mean - grows(seat)
            }
            Scoring::Cumulative => -grows(seat),
        }
    }
}

/// The rollout policy's throw: the heaviest set or run (singles included), never the barred
/// card nor, after a pick-up, the rest of its rank; jokers are kept.
fn heaviest(hand: &[Card], barred: Option<Card>, settings: &Settings) -> Vec<Card> {
    let barred_rank = barred.and_then(|b| b.rank());
    let mut rank_sum = [0u32; 14];
    let mut suit_mask = [0u16; 4];
    for &c in hand {
        if let (Some(r), Some(suit)) = (c.rank(), c.suit()) {
            if Some(c) == barred {
                continue;
            }
            suit_mask[suit as usize] |= 1 << r.number();
            if Some(r) != barred_rank {
                rank_sum[usize::from(r.number())] += value(c, settings);
            }
        }
    }
    // The heaviest rank (ties: the higher rank), or a run when runs are on.
    let mut best: Option<(u32, Vec<Card>)> = None;
    for r in (1..=13u8).rev() {
        let sum = rank_sum[usize::from(r)];
        let has = hand
            .iter()
            .any(|c| c.rank().is_some_and(|k| k.number() == r) && Some(*c) != barred);
        if has
            && Some(r) != barred_rank.map(|k| k.number())
            && best.as_ref().is_none_or(|b| sum > b.0)
        {
            let cards = hand
                .iter()
                .copied()
                .filter(|c| c.rank().is_some_and(|k| k.number() == r))
                .collect();
            best = Some((sum, cards));
        }
    }
    if settings.runs {
        for (suit, &mask) in suit_mask.iter().enumerate() {
            let mut start = 1u8;
            while start <= 13 {
                if mask & (1 << start) == 0 {
                    start += 1;
                    continue;
                }
                let mut end = start;
                while end < 13 && mask & (1 << (end + 1)) != 0 {
                    end += 1;
                }
                if end - start >= 2 {
                    let cards: Vec<Card> = hand
                        .iter()
                        .copied()
                        .filter(|c| {
                            c.suit().is_some_and(|s| s as usize == suit)
                                && c.rank()
                                    .is_some_and(|k| (start..=end).contains(&k.number()))
                                && Some(*c) != barred
                        })
                        .collect();
                    let sum = total(&cards, settings);
                    if best.as_ref().is_none_or(|b| sum > b.0) {
                        best = Some((sum, cards));
                    }
                }
                start = end + 1;
            }
        }
    }
    match best {
        Some((_, cards)) => cards,
        // Only jokers or the barred rank left: whatever is legal.
        None => legal_groups(hand, barred, settings)
            .into_iter()
            .next()
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bot;
    use crate::hard::HardBot;
    use dhumbal_engine::arbitrary::any_settings;
    use dhumbal_engine::{Action, Ending, Game, Phase, Preset, classify, full_deck, parse_cards};
    use proptest::prelude::*;

    /// Plays a match of `settings` by random legal actions (`rng`; a legal call is made one time
    /// in `call_odds`, never when it is 0) for at most `rounds` rounds, and checks at every
    /// round's end that the play-out's score of it ([`Sim::score`], the Sim built from the view
    /// of the seat that ended it, as the search builds it, with every hand as shown) equals the
    /// engine's for every seat: its Paid row, which in cumulative scoring is what its total
    /// grows by (the points it takes, less 50 at a score reset). Returns how many rounds ended
    /// by a caught call and by the throw cap.
    fn sim_scores_equal_the_engines(
        settings: &Settings,
        seed: [u8; 32],
        rng: &mut ChaCha8Rng,
        call_odds: u32,
        rounds: u32,
    ) -> Result<(u32, u32), TestCaseError> {
        let mut game = Game::new(settings.clone(), seed).unwrap();
        let (mut caught, mut capped) = (0, 0);
        for _ in 0..rounds {
            let mut last = None;
            while matches!(game.phase(), Phase::Start | Phase::Throw | Phase::Draw) {
                let seat = game.turn();
                let mut actions = game.legal_actions(seat);
                let call = actions.iter().position(|a| *a == Action::Call);
                if let Some(at) = call {
                    let action = actions.remove(at);
                    if call_odds > 0 && rng.random_range(0..call_odds) == 0 {
                        actions = vec![action];
                    }
                }
                let action = actions[rng.random_range(0..actions.len())].clone();
                last = Some((game.view(seat), game.public_history().clone()));
                game.apply(seat, action).unwrap();
            }
            let (view, history) = last.expect("a round has a turn");
            let result = game.results().last().expect("the round was scored").clone();
            let mut memory = Memory::new();
            memory.sync(&view, &history);
            let world = World {
                hands: result.hands.clone(),
                stock: Vec::new(),
                seed: 0,
            };
            let rollout = Rollout::fixed(vec![None; result.hands.len()]);
            let sim = Sim::new(&view, &memory, &world, &rollout);
            for seat in (0..result.hands.len()).filter(|&s| result.active[s]) {
                let end = match result.ending {
                    Ending::Call { caller, .. } => End::Call(caller),
                    Ending::ThrowCap => End::Cap,
                };
                let engine = match settings.scoring {
                    Scoring::Settlement => result.paid[seat] as f64,
                    Scoring::Cumulative => -(result.paid[seat] as f64),
                };
                prop_assert_eq!(
                    sim.score(seat, end),
                    engine,
                    "seat {} of {:?}",
                    seat,
                    result
                );
                // Scored against the others' mean Paid row at a cumulative table.
                if settings.scoring == Scoring::Cumulative {
                    let relative = Rollout {
                        relative: 0.5,
                        ..Rollout::fixed(vec![None; result.hands.len()])
                    };
                    let sim = Sim::new(&view, &memory, &world, &relative);
                    let end = match result.ending {
                        Ending::Call { caller, .. } => End::Call(caller),
                        Ending::ThrowCap => End::Cap,
                    };
                    let others: Vec<f64> = (0..result.hands.len())
                        .filter(|&o| o != seat && result.active[o])
                        .map(|o| result.paid[o] as f64)
                        .collect();
                    let mean = others.iter().sum::<f64>() / others.len() as f64;
                    prop_assert_eq!(sim.score(seat, end), engine + 0.5 * mean);
                }
            }
            match result.ending {
                Ending::Call { caught: true, .. } => caught += 1,
                Ending::ThrowCap => capped += 1,
                Ending::Call { .. } => {}
            }
            if game.phase() != Phase::RoundOver {
                break;
            }
            game.next_round().unwrap();
        }
        Ok((caught, capped))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The play-out simulator scores a round's end as the engine does, on random rounds of
        /// every preset: right and caught calls (random play calls one legal chance in
        /// `call_odds`) and the throw cap (when it never calls).
        #[test]
        fn the_simulators_scores_equal_the_engines_on_every_preset(
            seed in any::<[u8; 32]>(),
            rng_seed in any::<u64>(),
            call_odds in prop_oneof![Just(0u32), 1u32..6],
        ) {
            let mut rng = ChaCha8Rng::seed_from_u64(rng_seed);
            for preset in Preset::ALL {
                sim_scores_equal_the_engines(&preset.settings(), seed, &mut rng, call_odds, 3)?;
            }
        }

        /// The same at any valid table (every option in every mix).
        #[test]
        fn the_simulators_scores_equal_the_engines_at_any_table(
            settings in any_settings(),
            seed in any::<[u8; 32]>(),
            rng_seed in any::<u64>(),
            call_odds in prop_oneof![Just(0u32), 1u32..6],
        ) {
            let mut rng = ChaCha8Rng::seed_from_u64(rng_seed);
            sim_scores_equal_the_engines(&settings, seed, &mut rng, call_odds, 2)?;
        }
    }

    /// Random play reaches every way a round ends (the property above tests them all).
    #[test]
    fn random_rounds_reach_caught_calls_and_the_throw_cap() {
        let (mut caught, mut capped) = (0, 0);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for i in 0..12u8 {
            for preset in Preset::ALL {
                let call_odds = u32::from(i % 3);
                let (c, t) = sim_scores_equal_the_engines(
                    &preset.settings(),
                    [i; 32],
                    &mut rng,
                    call_odds,
                    2,
                )
                .unwrap();
                caught += c;
                capped += t;
            }
        }
        assert!(caught > 0 && capped > 0, "caught {caught}, capped {capped}");
    }

    #[test]
    fn a_sample_deals_every_unseen_card_once_and_keeps_known_pickups() {
        let settings = Preset::Standard.settings();
        let mut game = Game::new(settings.clone(), [12; 32]).unwrap();
        let mut bots: Vec<HardBot> = (0..4).map(HardBot::new).collect();
        // Play a while, so that there are pick-ups, a pile and short hands.
        for _ in 0..60 {
            if game.phase() != Phase::Start && game.phase() != Phase::Throw {
                break;
            }
            let seat = game.turn();
            let action = bots[seat].choose(&game.view(seat), game.public_history());
            if action == dhumbal_engine::Action::Call {
                break;
            }
            for event in game.apply(seat, action).unwrap() {
                for bot in &mut bots {
                    bot.observe(&event);
                }
            }
        }
        let seat = game.turn();
        let view = game.view(seat);
        let mut memory = Memory::new();
        memory.sync(&view, game.public_history());
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..20 {
            let world = World::sample(&view, &memory, &mut rng);
            let mut cards: Vec<Card> = world.hands.iter().flatten().copied().collect();
            cards.extend(&world.stock);
            cards.extend(memory.pile());
            cards.sort();
            let mut deck = full_deck(settings.jokers);
            deck.sort();
            assert_eq!(cards, deck);
            assert_eq!(world.stock.len(), view.stock_size);
            assert_eq!(world.hands[seat], view.hand);
            for s in 0..4 {
                assert_eq!(world.hands[s].len(), view.card_counts[s]);
                assert!(memory.held(s).iter().all(|c| world.hands[s].contains(c)));
            }
        }
    }

    #[test]
    fn the_rollouts_chance_of_more_than_a_total_is_a_survival_function() {
        let view = Game::new(Preset::Household.settings(), [9; 32])
            .unwrap()
            .view(0);
        let params = SearchParams {
            hard_calls: true,
            ..SearchParams::default()
        };
        let rollout = Rollout::new(&view, &params);
        // No unknown cards total nothing; one card is never more than a king.
        assert_eq!(rollout.above(0, 0, 0), 0.0);
        assert_eq!(rollout.above(0, 1, 13), 0.0);
        // Without a lean, a card of the household pack is more than 0 unless it is a jack.
        assert!((rollout.above(0, 1, 0) - 48.0 / 52.0).abs() < 1e-12);
        for unknown in 1..=5 {
            let mut last = 1.0;
            for t in 0..60 {
                let p = rollout.above(3, unknown, t);
                assert!(p <= last + 1e-12 && p >= 0.0, "{unknown} {t}");
                last = p;
            }
        }
        // A seat that has thrown often leans low: more than 20 in five cards is less likely.
        assert!(rollout.above(11, 5, 20) < rollout.above(0, 5, 20));
        // Its opponents call at hard's total only when sure enough; the seat itself at its own.
        assert_eq!(
            rollout.call_at[1],
            CallRule::default().call_at(&view.settings)
        );
        assert!(rollout.confidence[1] > 0.0 && rollout.confidence[0] == 0.0);
    }

    #[test]
    fn a_play_out_opponent_calls_only_when_it_is_likely_the_lightest() {
        let game = Game::new(Preset::Household.settings(), [9; 32]).unwrap();
        let view = game.view(0);
        let mut memory = Memory::new();
        memory.sync(&view, game.public_history());
        let params = SearchParams {
            hard_calls: true,
            ..SearchParams::default()
        };
        let rollout = Rollout::new(&view, &params);
        let world = World::sample(&view, &memory, &mut ChaCha8Rng::seed_from_u64(1));
        let mut sim = Sim::new(&view, &memory, &world, &rollout);
        // Everyone holds five unknown cards: 2 is all but surely the lightest, 9 not quite.
        assert!(sim.sure_enough(1, 2));
        // Seat 2 down to one unknown card: 9 is no longer safe.
        sim.hands[2].truncate(1);
        assert!(!sim.sure_enough(1, 9));
        // Its one card known to be a king, it no longer counts against a 9.
        let heavy = parse_cards("KH").unwrap();
        sim.hands[2] = heavy.clone();
        sim.known[2] = heavy;
        assert!(sim.sure_enough(1, 9));
        // Nor does anything count for a seat that wants no confidence (the searching seat).
        sim.hands[3].truncate(1);
        assert!(!sim.sure_enough(1, 9));
        assert!(sim.sure_enough(0, 9));
    }

    #[test]
    fn a_search_with_the_seats_own_judgement_plays_out_to_legal_ends() {
        let settings = Preset::Household.settings();
        let game = Game::new(settings, [21; 32]).unwrap();
        let seat = game.turn();
        let view = game.view(seat);
        let mut memory = Memory::new();
        memory.sync(&view, game.public_history());
        let judge = Judge::with_call_at(&view, &memory, Some(9));
        let params = SearchParams {
            throw_first: true,
            hard_calls: true,
            own_judge: true,
            relative: 1.0,
            time_cap: None,
            samples: 16,
            ..SearchParams::default()
        };
        let candidates: Vec<Candidate> = judge
            .ranked_throws_first(&view)
            .into_iter()
            .take(3)
            .map(|(cards, _)| Candidate::Throw(cards))
            .collect();
        let mut reuse = Reuse::default();
        let first = search(
            &view,
            &memory,
            &judge,
            candidates.clone(),
            &params,
            4,
            &mut reuse,
        );
        assert_eq!(first.samples, 16);
        assert!(first.chosen < candidates.len());
        // The same seed, the same figures.
        let again = search(
            &view,
            &memory,
            &judge,
            candidates,
            &params,
            4,
            &mut Reuse::default(),
        );
        assert_eq!(first, again);
    }

    #[test]
    fn the_rollout_throw_is_legal_and_heaviest() {
        let standard = Preset::Standard.settings();
        let household = Preset::Household.settings();
        for (hand, barred, settings, want) in [
            ("KH 5S 5D 2C", None, &standard, "KH"),
            ("9H 9S 5D 2C", None, &standard, "9H 9S"),
            ("9H 9S 5D 2C", Some("9S"), &standard, "5D"),
            ("5H 6H 7H KS", None, &household, "5H 6H 7H"),
        ] {
            let hand = parse_cards(hand).unwrap();
            let barred = barred.map(|b| b.parse().unwrap());
            let got = heaviest(&hand, barred, settings);
            assert!(classify(&got, settings).is_some(), "{got:?}");
            assert_eq!(got, parse_cards(want).unwrap());
        }
    }
}
