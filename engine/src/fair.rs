//! Provably fair deals: how a secret match seed and the players' own client seeds become each
//! round's deck, and the commitment published before the first deal.
//!
//! The scheme, stated with its known-answer vectors in `docs/fairness.md`:
//!
//! - `commitment = SHA-256("dhumbal-fair-v1/commit" ‖ match seed)`, published at match start;
//! - `round secret(r) = HMAC-SHA256(key = match seed, "dhumbal-fair-v1/round" ‖ u32be(r))`;
//! - `deck seed(r) = HMAC-SHA256(key = round secret(r), message)`, where `message` is
//!   `"dhumbal-fair-v1/deck" ‖ u16be(len room) ‖ room ‖ u32be(match) ‖ u32be(r) ‖ u8(seats)`
//!   followed, seat by seat, by `0x00` (no client seed) or `0x01 ‖ the 32-byte client seed`;
//! - the round's deck is the canonical pack shuffled with stream 0 of the deck seed
//!   ([`crate::shuffle::shuffle`]); its k-th reshuffle shuffles the pile's cards, in canonical order,
//!   with stream k.
//!
//! The server cannot steer a deck with its seed alone (it committed to the seed before it saw
//! the client seeds), and a player cannot steer it with theirs (they do not know the round
//! secret). After the match the seed is revealed and anyone can recompute everything.

use std::fmt;
use std::str::FromStr;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::shuffle::Seed;

/// The scheme's name and version, the prefix of every domain-separation string.
pub const SCHEME: &str = "dhumbal-fair-v1";
const COMMIT_DOMAIN: &[u8] = b"dhumbal-fair-v1/commit";
const ROUND_DOMAIN: &[u8] = b"dhumbal-fair-v1/round";
const DECK_DOMAIN: &[u8] = b"dhumbal-fair-v1/deck";

/// 32 bytes written as 64 lowercase hex digits: seeds, commitments and client seeds on the wire.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hex32(pub [u8; 32]);

/// The randomness a person adds to every deal of their seat's table.
pub type ClientSeed = Hex32;

impl fmt::Display for Hex32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 64];
        for (pair, byte) in text.chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 0xf)];
        }
        // Hex digits are ASCII.
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Hex32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hex32({self})")
    }
}

/// Why a text is not 32 bytes of hex.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not 64 hex digits")]
pub struct HexError;

impl FromStr for Hex32 {
    type Err = HexError;

    fn from_str(s: &str) -> Result<Hex32, HexError> {
        let digits = s.as_bytes();
        if digits.len() != 64 {
            return Err(HexError);
        }
        let nibble = |d: u8| char::from(d).to_digit(16).ok_or(HexError);
        let mut out = [0u8; 32];
        for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
            *byte = u8::try_from(nibble(pair[0])? * 16 + nibble(pair[1])?).map_err(|_| HexError)?;
        }
        Ok(Hex32(out))
    }
}

impl Serialize for Hex32 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Hex32 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Hex32, D::Error> {
        crate::card::deserialize_parsed(deserializer)
    }
}

#[cfg(feature = "schemars")]
impl schemars::JsonSchema for Hex32 {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Hex32".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "32 bytes as 64 hex digits (see docs/fairness.md).",
            "pattern": "^[0-9a-fA-F]{64}$"
        })
    }
}

/// What a seeded match deals from: the secret match seed, and the room and match number every
/// deck seed is bound to (so one seed can never deal the same decks in two places).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FairDeal {
    /// The secret match seed, drawn from the OS, revealed after the match.
    pub seed: Seed,
    /// The room's code.
    pub room: String,
    /// The match's number in its room, from 1.
    pub match_number: u32,
}

/// The commitment to a match seed, published before the first deal.
pub fn commitment(seed: &Seed) -> Hex32 {
    let mut hasher = Sha256::new();
    hasher.update(COMMIT_DOMAIN);
    hasher.update(seed);
    Hex32(hasher.finalize().into())
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// Round `round`'s secret (from 1), derived from the match seed.
pub fn round_secret(seed: &Seed, round: u32) -> [u8; 32] {
    hmac(seed, &[ROUND_DOMAIN, &round.to_be_bytes()])
}

/// Round `round`'s deck seed: the round secret bound to the room, the match, the round and the
/// client seeds in seat order.
///
/// # Panics
///
/// If the room's code is longer than 65,535 bytes or there are more than 255 seats (neither can
/// happen at a valid table).
pub fn deck_seed(deal: &FairDeal, round: u32, client_seeds: &[Option<ClientSeed>]) -> Seed {
    let mut message = Vec::with_capacity(64 + client_seeds.len() * 33);
    message.extend_from_slice(DECK_DOMAIN);
    let room = deal.room.as_bytes();
    message.extend_from_slice(
        &u16::try_from(room.len())
            .expect("a short code")
            .to_be_bytes(),
    );
    message.extend_from_slice(room);
    message.extend_from_slice(&deal.match_number.to_be_bytes());
    message.extend_from_slice(&round.to_be_bytes());
    message.push(u8::try_from(client_seeds.len()).expect("at most 255 seats"));
    for seed in client_seeds {
        match seed {
            None => message.push(0),
            Some(seed) => {
                message.push(1);
                message.extend_from_slice(&seed.0);
            }
        }
    }
    hmac(&round_secret(&deal.seed, round), &[&message])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_anything_else() {
        let mut bytes = [0u8; 32];
        bytes[0] = 0xab;
        bytes[31] = 0x01;
        let hex = Hex32(bytes).to_string();
        assert_eq!(hex.len(), 64);
        assert!(hex.starts_with("ab00") && hex.ends_with("01"));
        let every: [u8; 32] = std::array::from_fn(|i| (i * 8 + 7) as u8);
        let byte_by_byte: String = every.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(Hex32(every).to_string(), byte_by_byte);
        assert_eq!(
            serde_json::from_str::<Hex32>(&format!("\"{byte_by_byte}\"")).ok(),
            Some(Hex32(every))
        );
        assert_eq!(hex.parse(), Ok(Hex32(bytes)));
        assert_eq!(hex.to_uppercase().parse(), Ok(Hex32(bytes)));
        for bad in [
            "",
            "ab",
            &hex[1..],
            &format!("{hex}0"),
            &hex.replace('a', "g"),
        ] {
            assert_eq!(bad.parse::<Hex32>(), Err(HexError), "{bad}");
        }
        assert!("+b".repeat(32).parse::<Hex32>().is_err());
    }

    #[test]
    fn everything_a_deck_seed_binds_changes_it() {
        let deal = FairDeal {
            seed: [1; 32],
            room: "ABCDE".into(),
            match_number: 1,
        };
        let seeds = [Some(Hex32([2; 32])), None];
        let base = deck_seed(&deal, 1, &seeds);
        assert_eq!(base, deck_seed(&deal, 1, &seeds));
        let other_seed = FairDeal {
            seed: [9; 32],
            ..deal.clone()
        };
        let other_room = FairDeal {
            room: "ABCDF".into(),
            ..deal.clone()
        };
        let other_match = FairDeal {
            match_number: 2,
            ..deal.clone()
        };
        for changed in [
            deck_seed(&other_seed, 1, &seeds),
            deck_seed(&other_room, 1, &seeds),
            deck_seed(&other_match, 1, &seeds),
            deck_seed(&deal, 2, &seeds),
            deck_seed(&deal, 1, &[Some(Hex32([3; 32])), None]),
            deck_seed(&deal, 1, &[None, Some(Hex32([2; 32]))]),
            deck_seed(&deal, 1, &[Some(Hex32([2; 32]))]),
            deck_seed(&deal, 1, &[None, None]),
        ] {
            assert_ne!(changed, base);
        }
        assert_ne!(commitment(&[1; 32]), commitment(&[2; 32]));
    }
}
