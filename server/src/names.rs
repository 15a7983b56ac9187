//! The names people give themselves: normalised, visible, and not posing as anyone else.
//!
//! A name is put in Unicode normal form C, its runs of white space become one space, and its
//! ends are trimmed. It is refused when it has no visible character, holds a control character,
//! a bidirectional control (which can make a name read backwards, or make the text after it
//! do so), or a character that renders as nothing (U+200B, U+FEFF, U+3164, U+2800, tag
//! characters, …: the rules of [`dhumbal_protocol::text`], which chat follows too), or is longer than [`MAX_NAME_GRAPHEMES`] user-perceived characters
//! (graphemes, so that an emoji made of several code points counts as one). The names the
//! server gives its bots ("Bot 2") are reserved, whatever their case and spacing, and so is
//! anything that looks like one. Joiners and variation selectors are kept inside emoji, where
//! they belong.
//!
//! Two names are the same name when they fold alike (case, compatibility forms, spaces) or
//! look alike: when their confusable skeletons (Unicode TR39, from the `unicode-security`
//! crate) agree, so "Аsha" with a Cyrillic А is "Asha" ([`same_name`]).

use dhumbal_protocol::text;
use unicode_normalization::UnicodeNormalization;
use unicode_security::skeleton;
use unicode_segmentation::UnicodeSegmentation;

/// The longest name, in graphemes.
pub const MAX_NAME_GRAPHEMES: usize = 24;

/// Why a name was refused; every reason answers `bad_name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Nothing visible is left.
    #[error("a name needs at least one visible character")]
    Blank,
    /// Longer than [`MAX_NAME_GRAPHEMES`].
    #[error("a name may be at most {MAX_NAME_GRAPHEMES} characters")]
    TooLong,
    /// A control, bidirectional control or invisible character.
    #[error("a name may not hold invisible or direction-changing characters")]
    Invisible,
    /// The form of a name the server gives its bots.
    #[error("names such as \"Bot 2\" are the bots'; choose another")]
    Reserved,
}

/// The name a person is shown by, or why it is refused.
pub fn clean_name(raw: &str) -> Result<String, NameError> {
    let normal: String = raw.nfc().collect();
    let mut name = String::with_capacity(normal.len());
    let mut previous: Option<char> = None;
    for c in normal.chars() {
        if c.is_whitespace() && !text::is_blank_letter(c) {
            if !name.is_empty() && !name.ends_with(' ') {
                name.push(' ');
            }
            previous = Some(' ');
            continue;
        }
        if text::hides(c, previous) {
            return Err(NameError::Invisible);
        }
        name.push(c);
        previous = Some(c);
    }
    let name = name.trim_end().to_owned();
    if !text::shows_something(&name) {
        return Err(NameError::Blank);
    }
    if name.graphemes(true).count() > MAX_NAME_GRAPHEMES {
        return Err(NameError::TooLong);
    }
    if is_reserved(&name) {
        return Err(NameError::Reserved);
    }
    Ok(name)
}

/// A name folded for comparison: compatibility forms, case and spaces ignored ("ＡＳＨＡ" and
/// "asha" are the same person at a table).
pub fn folded(name: &str) -> String {
    name.nfkc()
        .flat_map(char::to_lowercase)
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// A name as it looks: its confusable skeleton (Unicode TR39), folded, so that names that
/// read alike have the same key ("Аsha" with a Cyrillic А, "ΑSHA" with a Greek Α and "Asha").
/// For comparing only, never for showing.
pub fn look(name: &str) -> String {
    let skeleton: String = skeleton(&folded(name)).collect();
    folded(&skeleton)
}

/// Whether two names would pass for each other at a table: the same when folded
/// ([`folded`]: case, compatibility forms and spaces), or when they look alike ([`look`]).
pub fn same_name(a: &str, b: &str) -> bool {
    folded(a) == folded(b) || look(a) == look(b) || look_unfolded(a) == look_unfolded(b)
}

/// The skeleton taken before case is folded: a capital I reads as a small l ("LiIa", "Lila"),
/// which folding the case first would hide.
fn look_unfolded(name: &str) -> String {
    let skeleton: String = skeleton(name).collect();
    folded(&skeleton)
}

/// Whether the name is one the server gives its bots, or looks like one: "bot" alone or
/// followed by a number ("Bоt 2" with a Cyrillic о, "B0t 3", "Bot l").
fn is_reserved(name: &str) -> bool {
    let bot = look("bot");
    let digits: Vec<String> = ('0'..='9').map(|d| look(&d.to_string())).collect();
    let looks_like_a_number = |rest: &str| {
        let mut rest = rest;
        while !rest.is_empty() {
            let Some(digit) = digits
                .iter()
                .find(|d| !d.is_empty() && rest.starts_with(d.as_str()))
            else {
                return false;
            };
            rest = &rest[digit.len()..];
        }
        true
    };
    let plain = folded(name);
    plain
        .strip_prefix("bot")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
        || [look(name), look_unfolded(name)].iter().any(|key| {
            key.strip_prefix(bot.as_str())
                .is_some_and(looks_like_a_number)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_names_are_kept_tidied() {
        assert_eq!(clean_name("  Asha  ").unwrap(), "Asha");
        assert_eq!(clean_name("Ram\t  Bahadur").unwrap(), "Ram Bahadur");
        assert_eq!(clean_name("राम").unwrap(), "राम");
        // NFC: an e and a combining acute become é.
        assert_eq!(clean_name("Re\u{301}na").unwrap(), "R\u{E9}na");
        // Emoji built with joiners and selectors are fine, and count as one character.
        assert_eq!(clean_name("👨‍👩‍👧 ❤️").unwrap(), "👨‍👩‍👧 ❤️");
        assert!(clean_name(&"👨‍👩‍👧".repeat(24)).is_ok());
        assert_eq!(clean_name(&"a".repeat(25)).unwrap_err(), NameError::TooLong);
    }

    #[test]
    fn names_that_render_as_nothing_are_refused() {
        for blank in [
            "",
            "   ",
            "\u{200B}",
            "\u{FEFF}",
            "\u{3164}",
            "\u{2800}",
            "\u{115F}",
            "\u{E0041}\u{E0042}",
            "\u{200D}",
            "\u{FE0F}",
        ] {
            assert!(clean_name(blank).is_err(), "{blank:?} was accepted");
        }
        assert_eq!(clean_name("  ").unwrap_err(), NameError::Blank);
    }

    #[test]
    fn hidden_and_direction_changing_characters_are_refused() {
        for sneaky in [
            "Asha\u{202E}",
            "\u{2067}Asha",
            "As\u{200B}ha",
            "Asha\u{FEFF}",
            "A\u{E0041}",
            "Asha\u{7}",
            "\u{200F}Asha",
            "Asha \u{3164}",
        ] {
            assert_eq!(
                clean_name(sneaky).unwrap_err(),
                NameError::Invisible,
                "{sneaky:?}"
            );
        }
    }

    #[test]
    fn the_bots_names_are_reserved() {
        for bot in ["Bot 2", "bot2", "BOT", " Bot  12 ", "Ｂｏｔ ３"] {
            assert_eq!(clean_name(bot).unwrap_err(), NameError::Reserved, "{bot:?}");
        }
        assert!(clean_name("Bottle").is_ok());
        assert!(clean_name("Robot 2").is_ok());
    }

    #[test]
    fn look_alike_bot_names_are_reserved() {
        // Cyrillic о, Greek Ο, a digit zero for the o, Cyrillic В, a Latin l for the 1.
        for bot in [
            "B\u{43E}t 2",
            "B\u{39F}T",
            "B0t 3",
            "\u{412}ot 4",
            "Bot l",
            "B\u{43E}t 1",
        ] {
            assert_eq!(clean_name(bot).unwrap_err(), NameError::Reserved, "{bot:?}");
        }
        assert!(clean_name("B\u{43E}ttle").is_ok());
    }

    #[test]
    fn look_alike_names_are_the_same_name() {
        // Cyrillic А, Cyrillic а and с, Greek Α, fullwidth, a capital I for an l.
        for (a, b) in [
            ("Asha", "\u{410}sha"),
            ("Asha", "\u{430}sha"),
            ("Ascha", "As\u{441}ha"),
            ("Asha", "\u{391}SHA"),
            ("Asha", "\u{FF21}sha"),
            ("Lila", "LiIa"),
            ("Asha", "ASHA"),
            ("Ram Bahadur", "rambahadur"),
        ] {
            assert!(same_name(a, b), "{a:?} and {b:?}");
            assert!(same_name(b, a), "{b:?} and {a:?}");
        }
        for (a, b) in [("Asha", "Asa"), ("Asha", "Asha 2"), ("राम", "रामा")] {
            assert!(!same_name(a, b), "{a:?} and {b:?}");
        }
    }

    #[test]
    fn folding_sees_the_same_name() {
        assert_eq!(folded("Asha"), folded("ＡＳＨＡ"));
        assert_eq!(folded("Ram Bahadur"), folded("rambahadur"));
        assert_ne!(folded("Asha"), folded("Asa"));
    }
}
