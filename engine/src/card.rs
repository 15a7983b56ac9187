//! Cards, ranks, suits and the deck.
//!
//! A [`Card`] is one byte: the 52 cards of the pack are `suit * 13 + rank - 1`, and the two
//! printed jokers follow. On the wire a card is written as its rank (`A 2 … 10 J Q K`) followed by
//! its suit (`S H D C`), so `10H`, `QS`, `AD`; the jokers are `RJ` (red) and `BJ` (black).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::settings::CourtValues;

/// One of the four suits, in the order spades, hearts, diamonds, clubs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Suit {
    /// ♠, written `S`.
    Spades,
    /// ♥, written `H`.
    Hearts,
    /// ♦, written `D`.
    Diamonds,
    /// ♣, written `C`.
    Clubs,
}

impl Suit {
    /// All four suits in deck order.
    pub const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Diamonds, Suit::Clubs];

    /// The suit's letter on the wire.
    pub fn letter(self) -> char {
        match self {
            Suit::Spades => 'S',
            Suit::Hearts => 'H',
            Suit::Diamonds => 'D',
            Suit::Clubs => 'C',
        }
    }

    /// Whether the suit is printed red.
    pub fn is_red(self) -> bool {
        matches!(self, Suit::Hearts | Suit::Diamonds)
    }
}

/// A rank in pack order: ace is 1 (always low), jack 11, queen 12, king 13.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rank(u8);

impl Rank {
    /// The ace, rank 1.
    pub const ACE: Rank = Rank(1);
    /// The jack, rank 11.
    pub const JACK: Rank = Rank(11);
    /// The queen, rank 12.
    pub const QUEEN: Rank = Rank(12);
    /// The king, rank 13.
    pub const KING: Rank = Rank(13);

    /// The rank numbered `n` in pack order (1 = ace … 13 = king), if there is one.
    pub fn new(n: u8) -> Option<Rank> {
        (1..=13).contains(&n).then_some(Rank(n))
    }

    /// The rank's number in pack order, 1 (ace) to 13 (king).
    pub fn number(self) -> u8 {
        self.0
    }

    /// The rank as written on the wire: `A`, `2` … `10`, `J`, `Q`, `K`.
    pub fn symbol(self) -> &'static str {
        const SYMBOLS: [&str; 13] = [
            "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K",
        ];
        SYMBOLS[usize::from(self.0 - 1)]
    }
}

/// A playing card: one of the 52 of the pack, or one of the two printed jokers.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card(u8);

/// The number of distinct cards, jokers included.
pub const CARD_KINDS: usize = 54;

impl Card {
    /// The red printed joker, `RJ`.
    pub const RED_JOKER: Card = Card(52);
    /// The black printed joker, `BJ`.
    pub const BLACK_JOKER: Card = Card(53);

    /// The card of this rank and suit.
    pub fn new(rank: Rank, suit: Suit) -> Card {
        Card(suit as u8 * 13 + rank.0 - 1)
    }

    /// The card with this index (0‥52 the pack in suit order, 52 `RJ`, 53 `BJ`).
    pub fn from_index(index: usize) -> Option<Card> {
        (index < CARD_KINDS).then_some(Card(index as u8))
    }

    /// The card's index: a dense number in `0..CARD_KINDS`, handy for tables and bit sets.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// Whether this is one of the two printed jokers.
    pub fn is_joker(self) -> bool {
        self.0 >= 52
    }

    /// The card's rank, or `None` for a joker.
    pub fn rank(self) -> Option<Rank> {
        (!self.is_joker()).then_some(Rank(self.0 % 13 + 1))
    }

    /// The card's suit, or `None` for a joker.
    pub fn suit(self) -> Option<Suit> {
        (!self.is_joker()).then(|| Suit::ALL[usize::from(self.0 / 13)])
    }

    /// What the card is worth in a hand under the given court values. Jokers are worth 0.
    ///
    /// Read from a table (`VALUES`): a room makes every changed hand's values and total after
    /// every change, where the rank's arithmetic cost a dozen instructions a card.
    pub fn value(self, court: CourtValues) -> u32 {
        u32::from(VALUES[court as usize][self.index()])
    }

    /// Whether the card is printed red (hearts, diamonds and the red joker).
    pub fn is_red(self) -> bool {
        match self.suit() {
            Some(suit) => suit.is_red(),
            None => self == Card::RED_JOKER,
        }
    }
}

/// The cards a table plays with, in canonical order: the 52 in suit order, then `RJ` and `BJ`
/// when jokers are on.
pub fn full_deck(jokers: bool) -> Vec<Card> {
    let n = if jokers { 54 } else { 52 };
    (0..n).map(Card).collect()
}

/// Every card's value (by [`Card::index`]) under each court rule (by its place in
/// [`CourtValues`]): what [`CourtValues::value`] gives a card's rank, and 0 for a joker. A test
/// holds the two equal.
const VALUES: [[u8; CARD_KINDS]; 3] = {
    let courts = [
        CourtValues::Tens,
        CourtValues::Sequential,
        CourtValues::JackZero,
    ];
    let mut table = [[0; CARD_KINDS]; 3];
    let mut c = 0;
    while c < courts.len() {
        let mut card = 0;
        // The jokers, after the 52 cards of the pack, stay 0.
        while card < 52 {
            let number = (card % 13 + 1) as u8;
            table[courts[c] as usize][card] = match (courts[c], number) {
                (_, 1..=10) | (CourtValues::Sequential, _) => number,
                (CourtValues::JackZero, 11) => 0,
                _ => 10,
            };
            card += 1;
        }
        c += 1;
    }
    table
};

/// The total of a hand under the given court values.
pub fn hand_total(cards: &[Card], court: CourtValues) -> u32 {
    cards.iter().map(|c| c.value(court)).sum()
}

/// Every card's text, by [`Card::index`]: the pack in suit order, then the jokers (what
/// [`Card::name`] gives, as a table for those who build their own from it).
pub const CARD_NAMES: [&str; CARD_KINDS] = [
    "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "QS", "KS", "AH", "2H",
    "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH", "AD", "2D", "3D", "4D",
    "5D", "6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD", "AC", "2C", "3C", "4C", "5C", "6C",
    "7C", "8C", "9C", "10C", "JC", "QC", "KC", "RJ", "BJ",
];

impl Card {
    /// The card as written on the wire: rank then suit (`10H`, `AS`), or `RJ`/`BJ`.
    pub fn name(self) -> &'static str {
        CARD_NAMES[self.index()]
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a piece of text is not a card.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a card: write the rank (A, 2-10, J, Q, K) then the suit (S, H, D, C), or RJ/BJ"
)]
pub struct ParseCardError(pub String);

impl FromStr for Card {
    type Err = ParseCardError;

    fn from_str(s: &str) -> Result<Card, ParseCardError> {
        let err = || ParseCardError(s.to_owned());
        match s {
            "RJ" => return Ok(Card::RED_JOKER),
            "BJ" => return Ok(Card::BLACK_JOKER),
            _ => {}
        }
        if !s.is_ascii() || s.len() < 2 {
            return Err(err());
        }
        let (rank, suit) = s.split_at(s.len() - 1);
        let suit = match suit {
            "S" => Suit::Spades,
            "H" => Suit::Hearts,
            "D" => Suit::Diamonds,
            "C" => Suit::Clubs,
            _ => return Err(err()),
        };
        let rank: u8 = match rank {
            "A" => 1,
            "J" => 11,
            "Q" => 12,
            "K" => 13,
            "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "10" => {
                rank.parse().map_err(|_| err())?
            }
            _ => return Err(err()),
        };
        Rank::new(rank).map(|r| Card::new(r, suit)).ok_or_else(err)
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Card, D::Error> {
        deserialize_parsed(deserializer)
    }
}

/// Reads a string and parses it, as reading a `String` and calling `parse` would (the same
/// errors, word for word), without copying the string first: a card or a seed in a message is
/// read where it lies.
pub(crate) fn deserialize_parsed<'de, T, D>(deserializer: D) -> Result<T, D::Error>
where
    T: FromStr,
    T::Err: fmt::Display,
    D: Deserializer<'de>,
{
    /// Parses the string it is given.
    struct Parsed<T>(std::marker::PhantomData<T>);

    impl<T> serde::de::Visitor<'_> for Parsed<T>
    where
        T: FromStr,
        T::Err: fmt::Display,
    {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }

        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<T, E> {
            s.parse().map_err(E::custom)
        }
    }

    deserializer.deserialize_str(Parsed(std::marker::PhantomData))
}

#[cfg(feature = "schemars")]
impl schemars::JsonSchema for Card {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Card".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A card: rank (A, 2-10, J, Q, K) then suit (S, H, D, C), or a joker (RJ, BJ).",
            "pattern": "^(?:(?:A|[2-9]|10|J|Q|K)[SHDC]|RJ|BJ)$",
            "examples": ["10H", "QS", "AD", "RJ"]
        })
    }
}

/// Parses a space-separated list of cards, such as `"AS 10H RJ"`. Handy in tests and tools.
pub fn parse_cards(s: &str) -> Result<Vec<Card>, ParseCardError> {
    s.split_whitespace().map(str::parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cards_name_is_its_rank_then_its_suit() {
        for card in full_deck(true) {
            let expected = match (card.rank(), card.suit()) {
                (Some(rank), Some(suit)) => format!("{}{}", rank.symbol(), suit.letter()),
                _ if card == Card::RED_JOKER => "RJ".to_owned(),
                _ => "BJ".to_owned(),
            };
            assert_eq!(card.name(), expected);
        }
    }

    #[test]
    fn every_card_round_trips_through_its_text() {
        for card in full_deck(true) {
            let text = card.to_string();
            assert_eq!(text.parse::<Card>(), Ok(card), "{text}");
        }
        assert_eq!(full_deck(true).len(), 54);
        assert_eq!(full_deck(false).len(), 52);
    }

    #[test]
    fn notation_matches_the_design() {
        assert_eq!("10H".parse::<Card>().unwrap().to_string(), "10H");
        assert_eq!("QS".parse::<Card>().unwrap().rank(), Some(Rank::QUEEN));
        assert_eq!("AD".parse::<Card>().unwrap().suit(), Some(Suit::Diamonds));
        assert!("RJ".parse::<Card>().unwrap().is_joker());
        for bad in [
            "", "1H", "11H", "0H", "010H", "KX", "JJ", "ah", "A", "10", "♠A", "1S",
        ] {
            assert!(bad.parse::<Card>().is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn values_follow_the_court_setting() {
        let [a, k, j, q, ten, joker] =
            ["AS", "KH", "JD", "QC", "10S", "BJ"].map(|s| s.parse::<Card>().unwrap());
        assert_eq!(a.value(CourtValues::Tens), 1);
        assert_eq!(k.value(CourtValues::Tens), 10);
        assert_eq!(k.value(CourtValues::Sequential), 13);
        assert_eq!(q.value(CourtValues::Sequential), 12);
        assert_eq!(j.value(CourtValues::Sequential), 11);
        assert_eq!(j.value(CourtValues::JackZero), 0);
        assert_eq!(q.value(CourtValues::JackZero), 10);
        assert_eq!(ten.value(CourtValues::Sequential), 10);
        assert_eq!(joker.value(CourtValues::Sequential), 0);
        // "An ace, a two and a king come to 13."
        assert_eq!(
            hand_total(&parse_cards("AS 2H KD").unwrap(), CourtValues::Tens),
            13
        );
    }

    #[test]
    fn the_value_table_is_the_courts_rule_for_every_card() {
        for court in [
            CourtValues::Tens,
            CourtValues::Sequential,
            CourtValues::JackZero,
        ] {
            for card in full_deck(true) {
                let expected = card.rank().map_or(0, |rank| court.value(rank));
                assert_eq!(card.value(court), expected, "{card} at {court:?}");
            }
        }
    }

    #[test]
    fn cards_serialize_as_their_text() {
        let cards = parse_cards("10H RJ AS").unwrap();
        let json = serde_json::to_string(&cards).unwrap();
        assert_eq!(json, r#"["10H","RJ","AS"]"#);
        assert_eq!(serde_json::from_str::<Vec<Card>>(&json).unwrap(), cards);
        assert!(serde_json::from_str::<Card>(r#""ZZ""#).is_err());
        // Read where it lies, refused in the words reading a `String` and parsing it would use.
        for text in [r#""ZZ""#, r#""10\u0048x""#, "7", "null", "[]"] {
            let parsed = serde_json::from_str::<Card>(text).map_err(|e| e.to_string());
            let through_string = serde_json::from_str::<String>(text)
                .map_err(|e| e.to_string())
                .and_then(|s| {
                    s.parse::<Card>()
                        .map_err(|e| format!("{e} at line 1 column {}", text.len()))
                });
            assert_eq!(parsed, through_string, "{text}");
        }
        assert_eq!(
            serde_json::from_str::<Card>(r#""1\u0030H""#).unwrap(),
            "10H".parse().unwrap()
        );
    }
}
