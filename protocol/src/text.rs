//! The character rules for text people write that others read: names and chat lines.
//!
//! Refused anywhere: control characters, bidirectional formatting characters (which can make
//! text read backwards, or make the text after it do so), letters that render as blank space
//! (the Hangul fillers, the blank braille pattern), and default-ignorable code points, which
//! render as nothing (U+200B, U+FEFF, tag characters, …), except the joiner and the variation
//! selectors right after a visible character, inside an emoji, where they belong. The server's
//! name rules (`clean_name`) and [`crate::clean_chat`] both follow them.

/// Bidirectional formatting characters: embeddings, overrides, isolates and marks.
pub fn is_direction_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Letters that render as blank space: the Hangul fillers and the blank braille pattern.
pub fn is_blank_letter(c: char) -> bool {
    matches!(
        c,
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}'
    )
}

/// Default-ignorable code points: characters that render as nothing.
pub fn is_ignorable(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200D}' | '\u{2060}'..='\u{2064}' | '\u{206A}'..='\u{206F}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFF0}'..='\u{FFF8}'
        | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// The ignorable characters that emoji are built with: the zero-width joiner and the text and
/// emoji presentation selectors.
pub fn is_emoji_glue(c: char) -> bool {
    matches!(c, '\u{200D}' | '\u{FE0E}' | '\u{FE0F}')
}

/// Whether `c`, coming after `previous` (`None` at the start, or after a space), hides
/// something: a control, a bidirectional control, a blank letter, or an ignorable character
/// that is not emoji glue right after a visible character.
pub fn hides(c: char, previous: Option<char>) -> bool {
    if c.is_control() || is_direction_control(c) || is_blank_letter(c) {
        return true;
    }
    if is_ignorable(c) {
        let after_visible =
            previous.is_some_and(|p| !p.is_whitespace() && !is_ignorable(p) && !is_blank_letter(p));
        return !(is_emoji_glue(c) && after_visible);
    }
    false
}

/// Whether the text shows at least one visible character.
pub fn shows_something(text: &str) -> bool {
    text.chars()
        .any(|c| !c.is_whitespace() && !is_ignorable(c) && !is_blank_letter(c))
}
