//! What goes to a client: [`Text`], a message's text, the room's own type, so that the core
//! sends without knowing the web framework; the connection's writer turns it into a WebSocket
//! frame.

use bytes::Bytes;

/// A message's text (JSON), for one client or many: always UTF-8, since it is built only from
/// a `String` or a `&str`, and cheap to clone for a broadcast (the clones share its bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct Text(Bytes);

impl Text {
    /// The text. It is checked to be UTF-8 on the way (safe code cannot skip the check), so
    /// this is for tests and logs, not for the way to a client.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("a Text is built from a str")
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Its bytes (UTF-8), shared with its clones.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl From<String> for Text {
    /// Takes the string's buffer, without copying it.
    fn from(text: String) -> Text {
        Text(Bytes::from(text))
    }
}

impl From<&str> for Text {
    /// Copies the text.
    fn from(text: &str) -> Text {
        Text(Bytes::copy_from_slice(text.as_bytes()))
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_its_string_and_its_clones_share_the_bytes() {
        let text = Text::from(String::from("{\"type\":\"pong\"}"));
        let copy = text.clone();
        assert_eq!(copy.as_str(), "{\"type\":\"pong\"}");
        assert_eq!(text.len(), 15);
        assert_eq!(
            text.clone().into_bytes().as_ptr(),
            copy.into_bytes().as_ptr()
        );
        assert_eq!(Text::from("é").to_string(), "é");
        assert_eq!(format!("{:?}", Text::from("a\"b")), "\"a\\\"b\"");
    }
}
