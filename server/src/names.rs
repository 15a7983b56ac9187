//! The names people give themselves: normalised, visible, and not posing as anyone else.
//!
//! A name is put in Unicode normal form C, its runs of white space become one space, and its
//! ends are trimmed. It is refused when it has no visible character, holds a control character,
//! a bidirectional control (which can make a name read backwards, or make the text after it
//! do so), or a character that renders as nothing (U+200B, U+FEFF, U+3164, U+2800, tag
//! characters, …), or is longer than [`MAX_NAME_GRAPHEMES`] user-perceived characters
//! (graphemes, so that an emoji made of several code points counts as one). The names the
//! server gives its bots ("Bot 2") are reserved, whatever their case and spacing. Joiners and
//! variation selectors are kept inside emoji, where they belong.

use unicode_normalization::UnicodeNormalization;
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
        if c.is_whitespace() && !is_blank_letter(c) {
            if !name.is_empty() && !name.ends_with(' ') {
                name.push(' ');
            }
            previous = Some(' ');
            continue;
        }
        if c.is_control() || is_direction_control(c) || is_blank_letter(c) {
            return Err(NameError::Invisible);
        }
        if is_ignorable(c) {
            // A joiner or a variation selector belongs after a visible character (inside an
            // emoji); anywhere else it only hides something.
            let after_visible =
                previous.is_some_and(|p| p != ' ' && !is_ignorable(p) && !is_blank_letter(p));
            if !(is_emoji_glue(c) && after_visible) {
                return Err(NameError::Invisible);
            }
        }
        name.push(c);
        previous = Some(c);
    }
    let name = name.trim_end().to_owned();
    if !name.chars().any(|c| !c.is_whitespace() && !is_ignorable(c)) {
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

/// Whether the name is one the server gives its bots: "bot" alone or followed by a number.
fn is_reserved(name: &str) -> bool {
    let folded = folded(name);
    folded
        .strip_prefix("bot")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
}

/// Bidirectional formatting characters: embeddings, overrides, isolates and marks.
fn is_direction_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Letters that render as blank space: the Hangul fillers and the blank braille pattern.
fn is_blank_letter(c: char) -> bool {
    matches!(
        c,
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}'
    )
}

/// Default-ignorable code points: characters that render as nothing.
fn is_ignorable(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200D}' | '\u{2060}'..='\u{2064}' | '\u{206A}'..='\u{206F}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFF0}'..='\u{FFF8}'
        | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// The ignorable characters that emoji are built with: the zero-width joiner and the text and
/// emoji presentation selectors.
fn is_emoji_glue(c: char) -> bool {
    matches!(c, '\u{200D}' | '\u{FE0E}' | '\u{FE0F}')
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
    fn folding_sees_the_same_name() {
        assert_eq!(folded("Asha"), folded("ＡＳＨＡ"));
        assert_eq!(folded("Ram Bahadur"), folded("rambahadur"));
        assert_ne!(folded("Asha"), folded("Asa"));
    }
}
