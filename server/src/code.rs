//! Room codes: unguessable, easy to read aloud and to type.

use rand::rngs::OsRng;
use rand::{Rng, TryRngCore};

/// The letters of a room code: digits and capitals without the look-alikes 0/O, 1/I/L.
pub const ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
/// The length of a room code: 10 characters of a 31-letter alphabet are about 49.5 bits.
pub const LENGTH: usize = 10;

/// A fresh room code from the operating system's CSPRNG.
pub fn new_code() -> String {
    let mut rng = OsRng.unwrap_err();
    (0..LENGTH)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}

/// A code as typed by a person, made canonical: trimmed and upper case.
pub fn normalize(code: &str) -> String {
    code.trim().to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_carry_at_least_40_bits_without_look_alikes() {
        let bits = LENGTH as f64 * (ALPHABET.len() as f64).log2();
        assert!(bits >= 40.0, "{bits}");
        for bad in b"01OIL" {
            assert!(!ALPHABET.contains(bad));
        }
        let codes: std::collections::HashSet<String> = (0..1000).map(|_| new_code()).collect();
        assert_eq!(codes.len(), 1000);
        for code in &codes {
            assert_eq!(code.len(), LENGTH);
            assert!(code.bytes().all(|b| ALPHABET.contains(&b)), "{code}");
        }
        assert_eq!(normalize(" abc2 "), "ABC2");
    }
}
