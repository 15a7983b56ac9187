//! The game: a deterministic state machine over a match of rounds.
//!
//! A [`Game`] is built from validated [`Settings`] and a seed ([`Game::new`], or
//! [`Game::fair`] with the room, the match and the players' client seeds) or explicit deck
//! orders ([`Game::with_decks`]). It records its own hand history as it goes
//! ([`Game::hand_history`], once the match is over). It changes only through [`Game::apply`] (a seat's action) and
//! [`Game::next_round`] (deal the next round once the score dialog has been read). Both check
//! everything before they change anything, so a refused action leaves the game exactly as it was.

use serde::{Deserialize, Serialize};

use crate::card::{Card, full_deck, hand_total};
use crate::error::RuleError;
use crate::fair::{ClientSeed, FairDeal, Hex32, commitment, deck_seed};
use crate::group::{classify, group_ends};
use crate::history::{HISTORY_FORMAT, HandHistory, RoundHistory, Step};
use crate::score::{RoundResult, Show, Standing, score_round, standings};
use crate::settings::{PickUp, Rounds, SettingsError, THROW_CAP, TurnOrder};
use crate::shuffle::{Seed, shuffle};
use crate::view::PublicHistory;
use crate::{SeatView, Settings};

/// Where a drawn card comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The top of the face-down stock.
    Stock,
    /// The pile: its top card at draw-then-throw tables; at throw-then-draw tables, the one card
    /// of the previous throw that may be taken (when there is exactly one).
    Pile,
    /// This face-up card of the pile: the pile's top at draw-then-throw tables; at throw-then-draw
    /// tables, a card of the previous throw that the pick-up rule allows.
    PileCard(Card),
}

/// Something a seat may do on its turn.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// Claim that no other hand is as light; ends the round with a show.
    Call,
    /// Take one card.
    Draw {
        /// Where from.
        from: Source,
    },
    /// Put one legal group on the pile, in this order; the last card lands on top.
    Throw {
        /// The cards, in the order they land.
        cards: Vec<Card>,
    },
}

/// Where a round stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The start of a turn: the seat may call, or draw (draw-then-throw) or throw
    /// (throw-then-draw).
    Start,
    /// Draw-then-throw: the seat has drawn and must throw.
    Throw,
    /// Throw-then-draw: the seat has thrown and must draw.
    Draw,
    /// The round has ended with a show; the next deal waits for [`Game::next_round`].
    RoundOver,
    /// The match has ended.
    MatchOver,
}

/// A public event: something the whole table sees happen. Every seat may be told every event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A round was dealt.
    Dealt {
        /// The round's number, from 1.
        round: u32,
        /// The dealer.
        dealer: usize,
        /// The card turned up as the pile.
        pile_top: Card,
        /// The client seeds in force at the deal, in seat order (`null` where a seat sent none):
        /// with the match seed revealed after the match, they give this round's deck.
        #[serde(default)]
        client_seeds: Vec<Option<ClientSeed>>,
    },
    /// A seat called.
    Called {
        /// The caller.
        seat: usize,
    },
    /// A seat drew from the stock (the card is seen by that seat alone).
    DrewFromStock {
        /// Who drew.
        seat: usize,
    },
    /// A seat took a card from the pile, in view of everyone.
    TookFromPile {
        /// Who took it.
        seat: usize,
        /// The card.
        card: Card,
    },
    /// A seat threw a group, in this order (the last card is on top).
    Threw {
        /// Who threw.
        seat: usize,
        /// The cards, in landing order.
        cards: Vec<Card>,
    },
    /// The stock ran out and the pile (all but what stays on top) was shuffled into a new stock.
    Reshuffled {
        /// The new stock's size.
        stock: usize,
    },
    /// The round ended with a show; every hand is face up in the result.
    RoundEnded {
        /// The round's scores.
        result: Box<RoundResult>,
    },
    /// The match ended.
    MatchEnded {
        /// The final standings.
        standings: Vec<Standing>,
    },
}

/// The pile cards a seat may take, borrowed from the game: a run of cards (the pile's top, or
/// the previous throw or none of it), or the two ends of the previous throw.
#[derive(Clone, Copy)]
enum Pickable<'a> {
    Cards(&'a [Card]),
    Ends(Card, Card),
}

impl<'a> Pickable<'a> {
    fn contains(self, card: Card) -> bool {
        match self {
            Pickable::Cards(cards) => cards.contains(&card),
            Pickable::Ends(first, last) => card == first || card == last,
        }
    }

    fn is_empty(self) -> bool {
        matches!(self, Pickable::Cards([]))
    }

    /// The cards of `throw` the next player may pick up at a throw-then-draw table under the
    /// table's [`PickUp`] rule: the one card of a single throw, any card, or the two ends
    /// ([`group_ends`]). The one place this rule is written.
    fn of_throw<'t>(settings: &Settings, throw: &'t [Card]) -> Pickable<'t> {
        match (settings.pickup, throw) {
            (PickUp::SingleOnly, [_]) | (PickUp::AnyCard, _) => Pickable::Cards(throw),
            (PickUp::SingleOnly, _) => Pickable::Cards(&[]),
            (PickUp::Ends, [_, _, ..]) => match group_ends(throw, settings) {
                Some((first, last)) => Pickable::Ends(first, last),
                None => Pickable::Cards(&[]),
            },
            (PickUp::Ends, _) => Pickable::Cards(throw),
        }
    }

    /// The cards, each once, as a slice: of the game's own lists, or of `ends` (which then holds
    /// a group's two ends).
    fn as_slice<'b>(self, ends: &'b mut [Card; 2]) -> &'b [Card]
    where
        'a: 'b,
    {
        match self {
            Pickable::Cards(cards) => cards,
            Pickable::Ends(first, last) => {
                *ends = [first, last];
                &ends[..if first == last { 1 } else { 2 }]
            }
        }
    }

    /// The cards, each once.
    fn to_vec(self) -> Vec<Card> {
        let mut cards = Vec::new();
        self.write_into(&mut cards);
        cards
    }

    /// The cards, each once, in `out` (cleared first).
    fn write_into(self, out: &mut Vec<Card>) {
        out.clear();
        match self {
            Pickable::Cards(cards) => out.extend_from_slice(cards),
            Pickable::Ends(first, last) if first == last => out.push(first),
            Pickable::Ends(first, last) => out.extend([first, last]),
        }
    }
}

/// The cards of `throw` that the next player may pick up at a throw-then-draw table under the
/// table's [`PickUp`] rule: the one card of a single throw, any card, or the two ends
/// ([`group_ends`]). Bots and clients use it to see what a throw will offer.
pub fn pickup_choices(settings: &Settings, throw: &[Card]) -> Vec<Card> {
    Pickable::of_throw(settings, throw).to_vec()
}

/// A match of Dhumbal. Fields are private: the game changes only through [`Game::apply`] and
/// [`Game::next_round`], and is read through queries and [`Game::view`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    settings: Settings,
    /// The secret match seed and what deck seeds bind (seeded games).
    fair: Option<FairDeal>,
    /// The commitment to `fair`'s seed, hashed once: a room shows it with every `room` message.
    commitment: Option<Hex32>,
    /// The client seeds for the next deal, one per seat.
    client_seeds: Vec<Option<ClientSeed>>,
    /// Explicit deck orders, top card first, used round after round (tests and replays).
    fixed_decks: Option<Vec<Vec<Card>>>,
    /// The deck seeds of the rounds dealt so far; revealed only once the match is over.
    round_seeds: Vec<Seed>,
    /// Every round's hand history so far; revealed only once the match is over.
    history: Vec<RoundHistory>,
    /// The current round's number, from 1.
    round: u32,
    dealer: usize,
    turn: usize,
    phase: Phase,
    hands: Vec<Vec<Card>>,
    /// The face-down stock; its top is the last element.
    stock: Vec<Card>,
    /// The face-up pile; its top is the last element.
    pile: Vec<Card>,
    /// The group on top of the pile as it was thrown (at the deal, the turned-up card).
    top_throw: Vec<Card>,
    /// Throw-then-draw: the previous player's throw, under the current player's, from which the
    /// current player may pick up while in [`Phase::Draw`].
    previous_throw: Vec<Card>,
    /// The card taken from the pile this turn, which cannot be thrown this turn.
    barred: Option<Card>,
    /// Throws made this deal, across the table.
    throws: u32,
    /// Reshuffles made this deal.
    reshuffles: u64,
    /// The running Total of each seat.
    totals: Vec<i64>,
    /// Seats eliminated from the match.
    out: Vec<bool>,
    /// The public log of the current round and every finished round's result.
    public: PublicHistory,
}

impl Game {
    /// A new match with decks shuffled from `seed`, its first round dealt: [`Game::fair`] in no
    /// room (an empty code), as match 1, with no client seeds.
    pub fn new(settings: Settings, seed: Seed) -> Result<Game, SettingsError> {
        let deal = FairDeal {
            seed,
            room: String::new(),
            match_number: 1,
        };
        Game::fair(settings, deal, Vec::new())
    }

    /// A new match dealt by the fair scheme ([`crate::fair`]): every round's deck seed binds the
    /// match seed, the room, the match number, the round and the client seeds in force at its
    /// deal (these first ones for round 1; see [`Game::set_client_seeds`]).
    pub fn fair(
        settings: Settings,
        deal: FairDeal,
        client_seeds: Vec<Option<ClientSeed>>,
    ) -> Result<Game, SettingsError> {
        Game::build(settings, Some(deal), client_seeds, None)
    }

    /// A new match whose rounds are dealt from these deck orders (top card first), one per round
    /// in turn, starting again from the first when they run out. Each must hold the table's pack
    /// exactly once. Reshuffles still come from a fixed seed, so the game stays deterministic.
    pub fn with_decks(settings: Settings, decks: Vec<Vec<Card>>) -> Result<Game, SettingsError> {
        settings.validate()?;
        let mut pack = full_deck(settings.jokers);
        pack.sort();
        for deck in &decks {
            let mut sorted = deck.clone();
            sorted.sort();
            if sorted != pack {
                return Err(SettingsError::Deck);
            }
        }
        if decks.is_empty() {
            return Err(SettingsError::Deck);
        }
        Game::build(settings, None, Vec::new(), Some(decks))
    }

    fn build(
        settings: Settings,
        fair: Option<FairDeal>,
        client_seeds: Vec<Option<ClientSeed>>,
        fixed_decks: Option<Vec<Vec<Card>>>,
    ) -> Result<Game, SettingsError> {
        settings.validate()?;
        let n = usize::from(settings.players);
        let mut game = Game {
            dealer: settings.first_dealer(),
            settings,
            commitment: fair.as_ref().map(|fair| commitment(&fair.seed)),
            fair,
            client_seeds: Vec::new(),
            fixed_decks,
            round_seeds: Vec::new(),
            history: Vec::new(),
            round: 0,
            turn: 0,
            phase: Phase::RoundOver,
            hands: vec![Vec::new(); n],
            stock: Vec::new(),
            pile: Vec::new(),
            top_throw: Vec::new(),
            previous_throw: Vec::new(),
            barred: None,
            throws: 0,
            reshuffles: 0,
            totals: vec![0; n],
            out: vec![false; n],
            public: PublicHistory::default(),
        };
        game.set_client_seeds(client_seeds);
        game.deal();
        Ok(game)
    }

    /// Sets the client seeds in force for the next deal, in seat order (`None` where a seat has
    /// none). Seeds past the table's seats are ignored; missing ones are `None`.
    pub fn set_client_seeds(&mut self, mut seeds: Vec<Option<ClientSeed>>) {
        seeds.resize(self.hands.len(), None);
        self.client_seeds = seeds;
    }

    /// The hand history of the rounds dealt so far: every deal, every action, every hand, as the
    /// match's [`HandHistory`] will hold them.
    pub fn rounds_so_far(&self) -> &[RoundHistory] {
        &self.history
    }

    /// The client seeds in force for the next deal.
    pub fn client_seeds(&self) -> &[Option<ClientSeed>] {
        &self.client_seeds
    }

    /// The commitment to the match seed, public from the start (`None` for fixed decks).
    pub fn commitment(&self) -> Option<Hex32> {
        self.commitment
    }

    /// The match seed, but only once the match is over.
    pub fn revealed_match_seed(&self) -> Option<Seed> {
        self.fair
            .as_ref()
            .filter(|_| self.is_over())
            .map(|fair| fair.seed)
    }

    /// The match's hand history (every deal, every action, every hand), but only once the match
    /// is over. `players` is left empty for the caller to name the seats.
    pub fn hand_history(&self) -> Option<HandHistory> {
        let mut history = self.hand_history_head()?;
        history.rounds = self.history.clone();
        Some(history)
    }

    /// [`Game::hand_history`] without its rounds (`rounds` is empty), for a caller that reads
    /// them where they lie ([`Game::rounds_so_far`]) rather than copying every step of the
    /// match.
    pub fn hand_history_head(&self) -> Option<HandHistory> {
        if !self.is_over() {
            return None;
        }
        Some(HandHistory {
            format: HISTORY_FORMAT.to_owned(),
            settings: self.settings.clone(),
            room: self
                .fair
                .as_ref()
                .map(|f| f.room.clone())
                .unwrap_or_default(),
            match_number: self.fair.as_ref().map_or(0, |f| f.match_number),
            commitment: self.commitment(),
            seed: self.revealed_match_seed().map(Hex32),
            players: Vec::new(),
            rounds: Vec::new(),
            standings: self.standings(),
        })
    }

    /// The table's settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The number of seats.
    pub fn seats(&self) -> usize {
        self.hands.len()
    }

    /// The current round's number, from 1.
    pub fn round(&self) -> u32 {
        self.round
    }

    /// The current round's dealer.
    pub fn dealer(&self) -> usize {
        self.dealer
    }

    /// The seat to play (meaningful while a round is being played).
    pub fn turn(&self) -> usize {
        self.turn
    }

    /// Where the round stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether the match is over.
    pub fn is_over(&self) -> bool {
        self.phase == Phase::MatchOver
    }

    /// A seat's hand. This is private information: show it to that seat only.
    ///
    /// # Panics
    ///
    /// If `seat` is not at the table (`seat >= self.seats()`).
    pub fn hand(&self, seat: usize) -> &[Card] {
        &self.hands[seat]
    }

    /// Every seat's running Total.
    pub fn totals(&self) -> &[i64] {
        &self.totals
    }

    /// Which seats are out of the match (eliminated).
    pub fn eliminated(&self) -> &[bool] {
        &self.out
    }

    /// The results of every finished round.
    pub fn results(&self) -> &[RoundResult] {
        &self.public.results
    }

    /// The public log of the current round.
    pub fn log(&self) -> &[Event] {
        &self.public.log
    }

    /// The public history: the current round's log and every finished round's result, the same
    /// for every seat. With a seat's [`Game::view`], it is everything that seat may know.
    pub fn public_history(&self) -> &PublicHistory {
        &self.public
    }

    /// Throws made this deal, across the table.
    pub fn throws(&self) -> u32 {
        self.throws
    }

    /// The match standings (final once the match is over).
    pub fn standings(&self) -> Vec<Standing> {
        standings(&self.totals, &self.out, self.settings.scoring)
    }

    /// [`Game::standings`] made in `out`, in place.
    pub fn standings_into(&self, out: &mut Vec<Standing>) {
        crate::score::standings_into(&self.totals, &self.out, self.settings.scoring, out);
    }

    /// The seeds of every round dealt, but only once the match is over, when they can no longer
    /// help anyone cheat. Players can then check every deal.
    pub fn revealed_seeds(&self) -> Option<&[Seed]> {
        (self.is_over() && self.fixed_decks.is_none()).then_some(self.round_seeds.as_slice())
    }

    /// What `seat` may see: see [`SeatView`].
    ///
    /// # Panics
    ///
    /// If `seat` is not at the table (`seat >= self.seats()`).
    pub fn view(&self, seat: usize) -> SeatView {
        SeatView::of(self, Some(seat))
    }

    /// What a spectator may see: everything public, no hand.
    pub fn spectator_view(&self) -> SeatView {
        SeatView::of(self, None)
    }

    /// The view of `seat`, or a spectator's for `None`: [`Game::view`] or
    /// [`Game::spectator_view`].
    ///
    /// # Panics
    ///
    /// If `seat` is `Some` seat that is not at the table.
    pub fn view_of(&self, seat: Option<usize>) -> SeatView {
        SeatView::of(self, seat)
    }

    // ----- Queries used by views, bots and clients -----

    pub(crate) fn stock_len(&self) -> usize {
        self.stock.len()
    }

    pub(crate) fn pile(&self) -> &[Card] {
        &self.pile
    }

    pub(crate) fn top_throw(&self) -> &[Card] {
        &self.top_throw
    }

    pub(crate) fn previous_throw(&self) -> &[Card] {
        &self.previous_throw
    }

    pub(crate) fn barred(&self) -> Option<Card> {
        self.barred
    }

    /// The pile cards `seat` could take right now (empty unless it is that seat's draw).
    ///
    /// At draw-then-throw tables an empty hand cannot take the pile's top: the card taken would
    /// be barred from the throw that must follow, and there would be nothing else to throw.
    pub fn takeable(&self, seat: usize) -> Vec<Card> {
        self.pickable(seat).to_vec()
    }

    /// [`Game::takeable`], written into `out` (cleared first) in its own memory.
    pub fn takeable_into(&self, seat: usize, out: &mut Vec<Card>) {
        self.pickable(seat).write_into(out);
    }

    /// The pile cards `seat` may take right now ([`Game::takeable_into`]) as a slice, without
    /// allocating: of the game's pile, or of `ends` (a group's two ends).
    pub fn takeable_cards<'a>(&'a self, seat: usize, ends: &'a mut [Card; 2]) -> &'a [Card] {
        self.pickable(seat).as_slice(ends)
    }

    /// The pile cards `seat` could take right now, without allocating.
    fn pickable(&self, seat: usize) -> Pickable<'_> {
        const NONE: Pickable<'static> = Pickable::Cards(&[]);
        if seat != self.turn {
            return NONE;
        }
        match (self.settings.turn_order, self.phase) {
            (TurnOrder::DrawThenThrow, Phase::Start) if self.hands[seat].is_empty() => NONE,
            (TurnOrder::DrawThenThrow, Phase::Start) => {
                Pickable::Cards(&self.pile[self.pile.len().saturating_sub(1)..])
            }
            (TurnOrder::ThrowThenDraw, Phase::Draw) => {
                Pickable::of_throw(&self.settings, &self.previous_throw)
            }
            _ => NONE,
        }
    }

    /// Whether `seat` may call now.
    pub fn can_call(&self, seat: usize) -> bool {
        self.check(seat, &Action::Call).is_ok()
    }

    /// Whether `seat` may draw now: from the stock, or one of the [`Game::takeable`] cards.
    pub fn can_draw(&self, seat: usize) -> bool {
        let stock = Action::Draw {
            from: Source::Stock,
        };
        self.check(seat, &stock).is_ok()
            || (self.check_turn(seat).is_ok() && !self.pickable(seat).is_empty())
    }

    /// Whether `seat` may throw now. A legal group's cards may each go alone, so this is whether
    /// some card of its hand may.
    pub fn can_throw(&self, seat: usize) -> bool {
        // Asked for every seat after every action: the seats not to play are answered without
        // trying each card of their hands.
        self.check_turn(seat).is_ok()
            && self.hands.get(seat).is_some_and(|hand| {
                hand.iter()
                    .any(|&card| self.check_throw(seat, &[card]).is_ok())
            })
    }

    /// At a throw-then-draw table at the start of a turn: the cards of the top throw that the
    /// seat to play may take once it has thrown (the pick-up rule, [`pickup_choices`]). Empty at
    /// any other time.
    pub fn next_takeable(&self) -> Vec<Card> {
        let mut cards = Vec::new();
        self.next_takeable_into(&mut cards);
        cards
    }

    /// [`Game::next_takeable`], written into `out` (cleared first) in its own memory.
    pub fn next_takeable_into(&self, out: &mut Vec<Card>) {
        out.clear();
        out.extend_from_slice(self.next_takeable_cards(&mut [Card::RED_JOKER; 2]));
    }

    /// What [`Game::next_takeable_into`] gives, as a slice, without allocating: of the top
    /// throw, or of `ends` (a group's two ends).
    pub fn next_takeable_cards<'a>(&'a self, ends: &'a mut [Card; 2]) -> &'a [Card] {
        match (self.settings.turn_order, self.phase) {
            (TurnOrder::ThrowThenDraw, Phase::Start) => {
                Pickable::of_throw(&self.settings, &self.top_throw).as_slice(ends)
            }
            _ => &[],
        }
    }

    /// Checks a throw of these cards by `seat` without making it.
    pub fn check_throw(&self, seat: usize, cards: &[Card]) -> Result<(), RuleError> {
        self.check_turn(seat)?;
        match (self.settings.turn_order, self.phase) {
            (TurnOrder::DrawThenThrow, Phase::Start) => return Err(RuleError::MustDrawFirst),
            (TurnOrder::ThrowThenDraw, Phase::Draw) => return Err(RuleError::AlreadyThrew),
            _ => {}
        }
        let Some(_) = cards.first() else {
            return Err(RuleError::EmptyThrow);
        };
        let hand = &self.hands[seat];
        for (i, card) in cards.iter().enumerate() {
            if !hand.contains(card) {
                return Err(RuleError::NotInHand(*card));
            }
            if cards[..i].contains(card) {
                return Err(RuleError::DuplicateCard(*card));
            }
            if self.barred == Some(*card) {
                return Err(RuleError::BarredCard(*card));
            }
        }
        classify(cards, &self.settings)
            .map(|_| ())
            .ok_or(RuleError::IllegalGroup)
    }

    /// Every action `seat` may take now. Throws are listed once per group, in hand order; any
    /// other order of the same cards is legal too and only changes which card lands on top.
    pub fn legal_actions(&self, seat: usize) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.check_turn(seat).is_err() {
            return actions;
        }
        if self.can_call(seat) {
            actions.push(Action::Call);
        }
        for from in [Source::Stock, Source::Pile] {
            if self.check(seat, &Action::Draw { from }).is_ok() {
                actions.push(Action::Draw { from });
            }
        }
        let (cards, ends) = match self.pickable(seat) {
            Pickable::Cards(cards) => (cards, None),
            Pickable::Ends(first, last) => (&[][..], Some([first, last])),
        };
        for &card in cards.iter().chain(ends.iter().flatten()) {
            actions.push(Action::Draw {
                from: Source::PileCard(card),
            });
        }
        let may_throw = matches!(
            (self.settings.turn_order, self.phase),
            (TurnOrder::DrawThenThrow, Phase::Throw) | (TurnOrder::ThrowThenDraw, Phase::Start)
        );
        if may_throw {
            self.for_each_legal_group(seat, |cards| {
                actions.push(Action::Throw {
                    cards: cards.to_vec(),
                })
            });
        }
        actions
    }

    /// Calls `f` with every legal group `seat` could throw now, each once, in hand order.
    ///
    /// It looks at the hand alone (and the barred card), whatever the phase, so a seat may also
    /// plan while it waits; a seat that is not at the table has no groups.
    pub fn for_each_legal_group(&self, seat: usize, mut f: impl FnMut(&[Card])) {
        let Some(hand) = self.hands.get(seat) else {
            return;
        };
        let n = hand.len().min(16);
        // Each card's rank and suit as one bit (none for a joker), so that the many subsets
        // holding two ranks that cannot be a run (runs off, or two suits) are skipped before
        // they are built; `classify` decides every other subset.
        let mut rank_bits = [0u16; 16];
        let mut suit_bits = [0u8; 16];
        let mut barred_bits = 0u32;
        for (i, card) in hand.iter().take(n).enumerate() {
            if let (Some(rank), Some(suit)) = (card.rank(), card.suit()) {
                rank_bits[i] = 1 << rank.number();
                suit_bits[i] = 1 << suit as u8;
            }
            if self.barred == Some(*card) {
                barred_bits |= 1 << i;
            }
        }
        let runs = self.settings.runs;
        let mut group = Vec::with_capacity(n);
        for mask in 1u32..(1 << n) {
            if mask & barred_bits != 0 {
                continue;
            }
            let (mut ranks, mut suits, mut rest) = (0u16, 0u8, mask);
            while rest != 0 {
                let i = rest.trailing_zeros() as usize;
                ranks |= rank_bits[i];
                suits |= suit_bits[i];
                rest &= rest - 1;
            }
            if ranks.count_ones() > 1 && (!runs || suits.count_ones() > 1) {
                continue;
            }
            group.clear();
            group.extend((0..n).filter(|i| mask & (1 << i) != 0).map(|i| hand[i]));
            if classify(&group, &self.settings).is_some() {
                f(&group);
            }
        }
    }

    fn check_turn(&self, seat: usize) -> Result<(), RuleError> {
        match self.phase {
            Phase::MatchOver => return Err(RuleError::MatchOver),
            Phase::RoundOver => return Err(RuleError::RoundOver),
            _ => {}
        }
        if seat >= self.seats() {
            return Err(RuleError::NoSuchSeat(seat));
        }
        if seat != self.turn {
            return Err(RuleError::NotYourTurn);
        }
        Ok(())
    }

    /// Checks an action without taking it.
    pub fn check(&self, seat: usize, action: &Action) -> Result<(), RuleError> {
        self.check_turn(seat)?;
        let order = self.settings.turn_order;
        match action {
            Action::Call => {
                if self.phase != Phase::Start {
                    return Err(RuleError::CallTooLate);
                }
                let total = hand_total(&self.hands[seat], self.settings.court);
                match self.settings.call_limit {
                    Some(limit) if total > limit => Err(RuleError::OverLimit { total, limit }),
                    _ => Ok(()),
                }
            }
            Action::Draw { from } => {
                match (order, self.phase) {
                    (TurnOrder::DrawThenThrow, Phase::Throw) => return Err(RuleError::AlreadyDrew),
                    (TurnOrder::ThrowThenDraw, Phase::Start) => {
                        return Err(RuleError::MustThrowFirst);
                    }
                    _ => {}
                }
                match from {
                    Source::Stock => {
                        if self.stock.is_empty() && self.pile.len() <= self.kept_on_reshuffle() {
                            return Err(RuleError::StockEmpty);
                        }
                        Ok(())
                    }
                    Source::Pile => match self.pickable(seat) {
                        Pickable::Cards([]) => Err(RuleError::PileNotTakeable),
                        Pickable::Cards([_]) => Ok(()),
                        _ => Err(RuleError::ChoosePileCard),
                    },
                    Source::PileCard(card) => {
                        let pickable = self.pickable(seat);
                        if pickable.contains(*card) {
                            Ok(())
                        } else if pickable.is_empty() {
                            Err(RuleError::PileNotTakeable)
                        } else {
                            Err(RuleError::NotTakeable(*card))
                        }
                    }
                }
            }
            Action::Throw { cards } => self.check_throw(seat, cards),
        }
    }

    /// Takes `seat`'s action, returning the public events it caused, or refuses it and changes
    /// nothing.
    pub fn apply(&mut self, seat: usize, action: Action) -> Result<Vec<Event>, RuleError> {
        let mut events = Vec::with_capacity(2);
        self.apply_into(seat, action, &mut events)?;
        Ok(events)
    }

    /// [`Game::apply`], the events added to the end of `events` (a caller's list, kept from
    /// action to action for its memory): on a refusal, nothing changes, `events` included.
    pub fn apply_into(
        &mut self,
        seat: usize,
        action: Action,
        events: &mut Vec<Event>,
    ) -> Result<(), RuleError> {
        self.check(seat, &action)?;
        let start = events.len();
        let mut step = Step {
            seat,
            action: action.clone(),
            card: None,
            reshuffled: None,
            events: Vec::new(),
        };
        match action {
            Action::Call => {
                events.push(Event::Called { seat });
                self.show(Some(seat), events);
            }
            Action::Draw { from } => {
                let card = match from {
                    Source::Stock => {
                        if self.stock.is_empty() {
                            step.reshuffled = Some(self.reshuffle(events));
                        }
                        events.push(Event::DrewFromStock { seat });
                        let card = self.stock.pop().expect("checked: the stock has a card");
                        step.card = Some(card);
                        card
                    }
                    Source::Pile | Source::PileCard(_) => {
                        let card = match (from, self.pickable(seat)) {
                            (Source::PileCard(card), _) => card,
                            (_, Pickable::Cards([card])) => *card,
                            _ => unreachable!("checked: exactly one card may be taken"),
                        };
                        self.take_from_pile(card);
                        events.push(Event::TookFromPile { seat, card });
                        card
                    }
                };
                self.hands[seat].push(card);
                match self.settings.turn_order {
                    TurnOrder::DrawThenThrow => {
                        self.phase = Phase::Throw;
                        if matches!(from, Source::Pile | Source::PileCard(_)) {
                            self.barred = Some(card);
                        }
                    }
                    TurnOrder::ThrowThenDraw => self.end_turn(events),
                }
            }
            Action::Throw { cards } => {
                self.hands[seat].retain(|c| !cards.contains(c));
                self.pile.extend_from_slice(&cards);
                self.throws += 1;
                self.barred = None;
                // The old top throw becomes the previous one; both buffers are reused.
                std::mem::swap(&mut self.previous_throw, &mut self.top_throw);
                self.top_throw.clear();
                self.top_throw.extend_from_slice(&cards);
                events.push(Event::Threw { seat, cards });
                match self.settings.turn_order {
                    TurnOrder::DrawThenThrow => self.end_turn(events),
                    TurnOrder::ThrowThenDraw => self.phase = Phase::Draw,
                }
            }
        }
        let events = &events[start..];
        self.public.log.extend_from_slice(events);
        // A list of its own, made to size.
        step.events = events.to_vec();
        if let Some(round) = self.history.last_mut() {
            round.steps.push(step);
        }
        Ok(())
    }

    /// Deals the next round once the current one is over, returning the public events.
    pub fn next_round(&mut self) -> Result<Vec<Event>, RuleError> {
        match self.phase {
            Phase::RoundOver => {}
            Phase::MatchOver => return Err(RuleError::MatchOver),
            _ => return Err(RuleError::RoundNotOver),
        }
        self.dealer = self.next_active(self.dealer);
        self.deal();
        Ok(self.public.log.clone())
    }

    /// The next seat after `seat` in the table's direction still in the match.
    fn next_active(&self, seat: usize) -> usize {
        self.settings
            .seats_after(seat)
            .find(|&s| !self.out[s])
            .unwrap_or(seat)
    }

    /// Deals a round: one card at a time from the seat after the dealer in the table's
    /// direction (the dealer's left, clockwise), then one card up as the pile.
    fn deal(&mut self) {
        self.round += 1;
        let (mut deck, seed) = match (&self.fixed_decks, &self.fair) {
            (Some(decks), _) => (decks[(self.round as usize - 1) % decks.len()].clone(), None),
            (None, fair) => {
                let fair = fair.as_ref().expect("a game has a seed or decks");
                let seed = deck_seed(fair, self.round, &self.client_seeds);
                self.round_seeds.push(seed);
                let mut deck = full_deck(self.settings.jokers);
                shuffle(&mut deck, &seed, 0);
                (deck, Some(Hex32(seed)))
            }
        };
        let mut record = RoundHistory {
            round: self.round,
            dealer: self.dealer,
            client_seeds: self.client_seeds.clone(),
            deck_seed: seed,
            deck: deck.clone(),
            hands: Vec::new(),
            pile_top: deck[0],
            steps: Vec::with_capacity(self.expected_steps()),
            result: None,
        };
        // The deck is listed top card first; keep it as a stack with the top last.
        deck.reverse();
        for hand in &mut self.hands {
            hand.clear();
        }
        let first = self.next_active(self.dealer);
        for _ in 0..self.settings.cards {
            let mut seat = first;
            loop {
                self.hands[seat].push(deck.pop().expect("the pack covers every deal"));
                seat = self.next_active(seat);
                if seat == first {
                    break;
                }
            }
        }
        let top = deck.pop().expect("the pack covers every deal");
        self.pile = vec![top];
        self.top_throw = vec![top];
        self.previous_throw.clear();
        self.stock = deck;
        self.turn = first;
        self.phase = Phase::Start;
        self.barred = None;
        self.throws = 0;
        self.reshuffles = 0;
        self.public.log.clear();
        self.public.log.push(Event::Dealt {
            round: self.round,
            dealer: self.dealer,
            pile_top: top,
            client_seeds: self.client_seeds.clone(),
        });
        record.hands.clone_from(&self.hands);
        record.pile_top = top;
        self.history.push(record);
    }

    /// How many actions the round about to be dealt is likely to take, for its hand history's
    /// list: the last round's and a quarter more (the first: eight a seat, a few turns each). A
    /// list grown from empty copied its every step, cold, at each doubling.
    fn expected_steps(&self) -> usize {
        self.history.last().map_or(self.hands.len() * 8, |last| {
            last.steps.len() + last.steps.len() / 4
        })
    }

    /// How many cards stay on the pile when it is reshuffled ([`crate::ReshuffleKeeps::kept`]): the top card,
    /// or the whole top throw.
    fn kept_on_reshuffle(&self) -> usize {
        self.settings.reshuffle_keeps.kept(self.top_throw.len())
    }

    /// Shuffles everything under the kept top of the pile into a new stock; returns the cards
    /// shuffled, in the canonical order the shuffle starts from.
    fn reshuffle(&mut self, events: &mut Vec<Event>) -> Vec<Card> {
        let keep = self.kept_on_reshuffle();
        let split = self.pile.len() - keep;
        let mut cards: Vec<Card> = self.pile.drain(..split).collect();
        cards.sort();
        let canonical = cards.clone();
        self.reshuffles += 1;
        let seed = match self.round_seeds.last() {
            Some(seed) => *seed,
            None => [0; 32],
        };
        shuffle(&mut cards, &seed, self.reshuffles);
        self.stock = cards;
        self.previous_throw.clear();
        // What is left of the top throw is what stayed on the pile.
        let shuffled = self.top_throw.len() - keep.min(self.top_throw.len());
        self.top_throw.drain(..shuffled);
        events.push(Event::Reshuffled {
            stock: self.stock.len(),
        });
        canonical
    }

    /// Removes `card` from the pile (it is takeable, so it is near the top).
    fn take_from_pile(&mut self, card: Card) {
        let at = self
            .pile
            .iter()
            .rposition(|&c| c == card)
            .expect("checked: takeable");
        self.pile.remove(at);
        for group in [&mut self.top_throw, &mut self.previous_throw] {
            group.retain(|&c| c != card);
        }
    }

    /// Passes the turn, or ends the round at the throw cap.
    fn end_turn(&mut self, events: &mut Vec<Event>) {
        self.barred = None;
        if self.throws >= THROW_CAP {
            self.show(None, events);
        } else {
            self.turn = self.next_active(self.turn);
            self.phase = Phase::Start;
        }
    }

    /// The show: every hand face up, the round scored, eliminations, maybe the match's end.
    fn show(&mut self, caller: Option<usize>, events: &mut Vec<Event>) {
        let active: Vec<bool> = self.out.iter().map(|o| !o).collect();
        let result = score_round(Show {
            settings: &self.settings,
            round: self.round,
            dealer: self.dealer,
            hands: &self.hands,
            active: &active,
            totals: &self.totals,
            caller,
        });
        self.totals.clone_from(&result.total);
        for &s in &result.eliminated {
            self.out[s] = true;
        }
        self.barred = None;
        let remaining = self.out.iter().filter(|o| !**o).count();
        let match_over = match self.settings.rounds {
            Rounds::Fixed(n) => {
                self.round >= n || (self.settings.elimination.is_some() && remaining <= 1)
            }
            Rounds::UntilOneRemains => remaining <= 1,
        };
        self.public.results.push(result.clone());
        if let Some(round) = self.history.last_mut() {
            round.result = Some(result.clone());
        }
        events.push(Event::RoundEnded {
            result: Box::new(result),
        });
        if match_over {
            self.phase = Phase::MatchOver;
            events.push(Event::MatchEnded {
                standings: self.standings(),
            });
        } else {
            self.phase = Phase::RoundOver;
        }
    }

    /// Checks the game's invariants: every card of the pack is in exactly one place, hands are
    /// sized sensibly, and the totals are consistent. Used by tests after every step (with the
    /// `testing` feature).
    #[cfg(any(test, feature = "testing"))]
    pub fn validate_invariants(&self) -> Result<(), String> {
        let mut seen = [0u8; crate::card::CARD_KINDS];
        let places = self.hands.iter().chain([&self.stock, &self.pile]);
        for card in places.flatten() {
            seen[card.index()] += 1;
        }
        for card in full_deck(true) {
            let want = u8::from(card.index() < self.settings.deck_size());
            if seen[card.index()] != want {
                return Err(format!("{card} is in {} places", seen[card.index()]));
            }
        }
        // The pile ends with the previous throw and then the top throw, as they were thrown (less
        // any card taken from them).
        let under = self.previous_throw.len() + self.top_throw.len();
        let Some(start) = self.pile.len().checked_sub(under) else {
            return Err("the top throws hold more cards than the pile".into());
        };
        let (previous, top) = self.pile[start..].split_at(self.previous_throw.len());
        if top != self.top_throw.as_slice() || previous != self.previous_throw.as_slice() {
            return Err("the top throws are not the top of the pile".into());
        }
        let playing = matches!(self.phase, Phase::Start | Phase::Throw | Phase::Draw);
        if playing {
            if self.out[self.turn] || self.out[self.dealer] {
                return Err("an eliminated seat deals or plays".into());
            }
            let order = self.settings.turn_order;
            match (order, self.phase) {
                (TurnOrder::DrawThenThrow, Phase::Draw)
                | (TurnOrder::ThrowThenDraw, Phase::Throw) => {
                    return Err(format!("phase {:?} at a {order:?} table", self.phase));
                }
                _ => {}
            }
            if self.barred.is_some() && self.phase != Phase::Throw {
                return Err("a card is barred outside the throw".into());
            }
            let cards = usize::from(self.settings.cards);
            for (s, hand) in self.hands.iter().enumerate() {
                // Hands only shrink; the seat to play holds one more between draw and throw.
                let extra = usize::from(s == self.turn && self.phase == Phase::Throw);
                if hand.len() > cards + extra {
                    return Err(format!("seat {s} holds {} cards", hand.len()));
                }
            }
        }
        if let Some(b) = self.barred {
            if !self.hands[self.turn].contains(&b) {
                return Err(format!(
                    "barred card {b} is not in the hand of the seat to play"
                ));
            }
        }
        if self.throws > THROW_CAP {
            return Err(format!("{} throws exceed the cap", self.throws));
        }
        for (s, out) in self.out.iter().enumerate() {
            if *out
                && !self.hands[s].is_empty()
                && self.phase != Phase::RoundOver
                && self.phase != Phase::MatchOver
            {
                return Err(format!("eliminated seat {s} holds cards"));
            }
        }
        if self.settings.scoring == crate::Scoring::Settlement
            && self.totals.iter().sum::<i64>() != 0
        {
            return Err("settlement totals do not sum to zero".into());
        }
        Ok(())
    }
}
