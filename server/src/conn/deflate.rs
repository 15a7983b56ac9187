//! A connection's compressed stream (`/ws/{code}?compress=deflate-raw`): one raw DEFLATE stream
//! (RFC 1951) for the life of the socket, of which each binary frame carries the next piece.
//!
//! Each frame is one fixed-Huffman block holding the frame's messages, each a JSON text followed
//! by a newline, then a sync flush: an empty stored block, which brings the stream to a byte
//! boundary. As in WebSocket's own `permessage-deflate` (RFC 7692, section 7.2.1), the flush's
//! last four bytes, always `00 00 ff ff`, are left off the frame and the reader puts them back
//! before inflating it. Matches reach back over what the connection was sent before (the last
//! 8 to 16 KiB), which is where the saving is: every `patch` repeats the keys and most of the
//! shape of the one before.
//!
//! Written here rather than taken from a compression crate for its memory and its cost: a
//! compressor of the usual kind holds a 32 KiB window, its hash chains and a symbol buffer, some
//! 300 KiB a connection in `miniz_oxide`, where this one holds its history and a 1,024-slot table
//! of where each hash of four bytes last began (about 20 KiB), and only once the connection has
//! been sent something; it looks at one earlier place per position, no chains, no lazy matching.
//! Fixed codes cost a few bytes a frame over the dynamic ones a general compressor would choose,
//! and need no tables sent. On whole matches' patches (`cargo bench -p dhumbal-server --bench
//! instructions`, case `compress`), 4,096 slots made frames 4% smaller than 1,024 for the same
//! instructions, but under `loadgen play --compress` (400 sockets) compressed sockets cost 27–43%
//! more server CPU per action than plain ones with 4,096 slots and 9–15% with 1,024, likely
//! because each connection's table leaves the caches between its frames (one noisy hour's runs);
//! two or four places a slot made frames 8% or 14% smaller for 1.5× or 2.2× the instructions.

/// How much of what was sent before matches may reach back to, at least. The history is cut back
/// to this once it holds twice as much, so it is 8 to 16 KiB.
const WINDOW: usize = 8 * 1024;
/// The bits of the hash of four bytes that index the table of where they last began (see the
/// module's documentation for why 1,024 slots).
const HASH_BITS: u32 = 10;
/// The shortest match looked for (DEFLATE allows 3; four bytes make one hash).
const MIN_MATCH: usize = 4;
/// The longest match DEFLATE can say.
const MAX_MATCH: usize = 258;
/// The furthest back a match may reach in DEFLATE.
const MAX_DISTANCE: usize = 32 * 1024;

/// The four bytes every sync flush ends with, left off each frame: a reader appends them to a
/// frame before inflating it.
pub const FLUSH_TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// One connection's DEFLATE stream: what it has compressed so far, which later frames' matches
/// may point at.
#[derive(Debug, Default)]
pub struct Deflater {
    /// The bytes sent before that matches may still reach (the history), then the frame being
    /// compressed.
    buf: Vec<u8>,
    /// For each hash of four bytes, one more than where in `buf` they last began, or 0: empty
    /// until the first frame.
    head: Vec<u32>,
}

impl Deflater {
    /// A stream that has sent nothing yet, and holds no memory until it does.
    pub fn new() -> Deflater {
        Deflater::default()
    }

    /// Lets go of the history and the table, and their memory: the frames after point back only
    /// at each other (the reader's inflater keeps what it had, unused), so the stream goes on
    /// as before, a little larger until its history has grown again.
    pub fn forget(&mut self) {
        *self = Deflater::new();
    }

    /// Compresses `texts`, each followed by a newline, into the next frame of the stream.
    pub fn frame<'a>(&mut self, texts: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
        if self.head.is_empty() {
            self.head = vec![0; 1 << HASH_BITS];
        }
        self.forget_the_oldest();
        let start = self.buf.len();
        for text in texts {
            self.buf.extend_from_slice(text);
            self.buf.push(b'\n');
        }
        let mut bits = Bits::with_capacity((self.buf.len() - start) / 3 + 16);
        // A block that is not the last (BFINAL 0), of fixed codes (BTYPE 01).
        bits.put(0b010, 3);
        self.compress(start, &mut bits);
        put_symbol(&mut bits, END_OF_BLOCK);
        // The sync flush: an empty stored block (BFINAL 0, BTYPE 00), then the byte boundary;
        // its LEN and NLEN are the tail left off.
        bits.put(0, 3);
        bits.finish()
    }

    /// Cuts the history back to [`WINDOW`] bytes once it holds twice as much, moving the table's
    /// positions with it (a position cut off becomes empty).
    fn forget_the_oldest(&mut self) {
        if self.buf.len() <= 2 * WINDOW {
            return;
        }
        let cut = self.buf.len() - WINDOW;
        self.buf.drain(..cut);
        let cut = u32::try_from(cut).unwrap_or(u32::MAX);
        for slot in &mut self.head {
            *slot = slot.saturating_sub(cut);
        }
    }

    /// Writes the symbols of `buf[start..]`: a match wherever the four bytes at a position began
    /// before (the last time the table noted, within reach), else a literal.
    fn compress(&mut self, start: usize, bits: &mut Bits) {
        let buf = &self.buf;
        let end = buf.len();
        let mut i = start;
        while i < end {
            if i + MIN_MATCH <= end {
                let h = hash(&buf[i..]);
                let before = self.head[h] as usize;
                self.head[h] = position(i);
                if let Some(from) = before.checked_sub(1)
                    && i - from <= MAX_DISTANCE
                    && buf[from..from + MIN_MATCH] == buf[i..i + MIN_MATCH]
                {
                    let longest = MAX_MATCH.min(end - i);
                    let mut len = MIN_MATCH;
                    while len < longest && buf[from + len] == buf[i + len] {
                        len += 1;
                    }
                    // The positions inside the match are not put in the table: measured on
                    // whole matches' patches, leaving the older places there makes frames 15%
                    // smaller, and takes a third fewer instructions.
                    put_match(bits, len, i - from);
                    i += len;
                    continue;
                }
            }
            put_symbol(bits, u16::from(buf[i]));
            i += 1;
        }
    }
}

/// The table's entry for position `i` of the buffer: one more than it.
fn position(i: usize) -> u32 {
    u32::try_from(i + 1).unwrap_or(0)
}

/// The table slot of the four bytes `bytes` begins with.
fn hash(bytes: &[u8]) -> usize {
    let word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    (word.wrapping_mul(0x9e37_79b1) >> (32 - HASH_BITS)) as usize
}

/// The literal/length symbol that ends a block.
const END_OF_BLOCK: u16 = 256;

/// Writes the fixed code of literal/length symbol `symbol` (RFC 1951, 3.2.6).
fn put_symbol(bits: &mut Bits, symbol: u16) {
    let (code, len) = match symbol {
        0..=143 => (0x30 + symbol, 8),
        144..=255 => (0x190 + symbol - 144, 9),
        256..=279 => (symbol - 256, 7),
        _ => (0xc0 + symbol - 280, 8),
    };
    // Huffman codes are packed from their most significant bit.
    bits.put(u32::from(code.reverse_bits() >> (16 - len)), len);
}

/// Writes a match of `len` bytes (3 to 258) from `distance` back (1 to 32,768).
fn put_match(bits: &mut Bits, len: usize, distance: usize) {
    // The length: 257 + the code, then its extra bits.
    if len == MAX_MATCH {
        put_symbol(bits, 285);
    } else {
        let l = len - 3;
        if l < 8 {
            put_symbol(bits, 257 + l as u16);
        } else {
            let top = l.ilog2();
            let extra = top - 2;
            put_symbol(bits, 257 + 4 * (top as u16 - 1) + ((l >> extra) & 3) as u16);
            bits.put((l & ((1 << extra) - 1)) as u32, extra);
        }
    }
    // The distance: a five-bit code, then its extra bits.
    let d = distance - 1;
    let (code, extra, value) = if d < 4 {
        (d as u32, 0, 0)
    } else {
        let top = d.ilog2();
        let extra = top - 1;
        (
            2 * top + ((d >> extra) & 1) as u32,
            extra,
            (d & ((1 << extra) - 1)) as u32,
        )
    };
    bits.put(u32::from((code as u8).reverse_bits() >> 3), 5);
    bits.put(value, extra);
}

/// The reading end of a compressed socket, for Rust clients (the tests, the load generator): it
/// inflates each frame in order, with the flush's tail put back, and splits it into messages.
pub struct Inflater(flate2::Decompress);

impl Default for Inflater {
    fn default() -> Inflater {
        Inflater::new()
    }
}

impl Inflater {
    /// A reader of a stream from its first frame.
    pub fn new() -> Inflater {
        Inflater(flate2::Decompress::new(false))
    }

    /// The bytes the next frame holds.
    pub fn inflate(&mut self, frame: &[u8]) -> Result<Vec<u8>, String> {
        let input = [frame, &FLUSH_TAIL].concat();
        let mut out = Vec::with_capacity(input.len() * 8 + 256);
        let mut used = 0;
        loop {
            let before = self.0.total_in();
            out.reserve(4096);
            self.0
                .decompress_vec(&input[used..], &mut out, flate2::FlushDecompress::Sync)
                .map_err(|e| format!("the frame does not inflate: {e}"))?;
            used += usize::try_from(self.0.total_in() - before).unwrap_or(usize::MAX);
            if used >= input.len() && out.len() < out.capacity() {
                return Ok(out);
            }
        }
    }

    /// The messages the next frame holds: the texts between its newlines. A frame that does not
    /// inflate, is not UTF-8 or ends inside a message is an error.
    pub fn messages(&mut self, frame: &[u8]) -> Result<Vec<String>, String> {
        let text = String::from_utf8(self.inflate(frame)?)
            .map_err(|e| format!("the frame is not UTF-8: {e}"))?;
        let Some(whole) = text.strip_suffix('\n') else {
            return Err("the frame ends inside a message".into());
        };
        Ok(whole.split('\n').map(str::to_owned).collect())
    }
}

/// Bits packed into bytes from the least significant end, as DEFLATE packs them.
struct Bits {
    /// The bytes written.
    out: Vec<u8>,
    /// Bits not yet written, from the lowest.
    acc: u64,
    /// How many bits `acc` holds.
    held: u32,
}

impl Bits {
    /// An empty stream with room for `bytes`.
    fn with_capacity(bytes: usize) -> Bits {
        Bits {
            out: Vec::with_capacity(bytes),
            acc: 0,
            held: 0,
        }
    }

    /// Writes the low `len` bits of `value` (at most 16).
    fn put(&mut self, value: u32, len: u32) {
        self.acc |= u64::from(value) << self.held;
        self.held += len;
        if self.held >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.held -= 32;
        }
    }

    /// The bytes, the last one padded with zeros.
    fn finish(mut self) -> Vec<u8> {
        while self.held > 0 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.held = self.held.saturating_sub(8);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A reader of the stream, as the tests read it.
    struct Reader(Inflater);

    impl Reader {
        fn new() -> Reader {
            Reader(Inflater::new())
        }

        fn read(&mut self, frame: &[u8]) -> Vec<u8> {
            self.0.inflate(frame).expect("the frame inflates")
        }
    }

    fn lines(texts: &[Vec<u8>]) -> Vec<u8> {
        texts
            .iter()
            .flat_map(|t| t.iter().copied().chain([b'\n']))
            .collect()
    }

    #[test]
    fn each_frame_inflates_to_its_texts_each_with_a_newline() {
        let mut deflater = Deflater::new();
        let mut reader = Reader::new();
        let first = br#"{"type":"patch","v":1,"view":{"turn":1,"phase":"draw"}}"#.to_vec();
        let second = br#"{"type":"patch","v":2,"view":{"turn":2,"phase":"draw"}}"#.to_vec();
        let one = deflater.frame([first.as_slice()]);
        assert_eq!(reader.read(&one), lines(std::slice::from_ref(&first)));
        let two = deflater.frame([second.as_slice(), first.as_slice()]);
        assert_eq!(reader.read(&two), lines(&[second, first]));
        // The second frame says most of itself by pointing back at the first.
        assert!(two.len() < one.len(), "{} then {}", one.len(), two.len());
    }

    #[test]
    fn a_frame_never_ends_with_the_tail_it_leaves_off() {
        let mut deflater = Deflater::new();
        for text in [&b"a"[..], b"{}", b"hello hello hello hello"] {
            let frame = deflater.frame([text]);
            assert!(!frame.ends_with(&FLUSH_TAIL), "{frame:?}");
        }
    }

    #[test]
    fn nothing_is_allocated_before_the_first_frame_nor_after_a_forget() {
        let mut deflater = Deflater::new();
        assert_eq!(deflater.buf.capacity() + deflater.head.capacity(), 0);
        let mut reader = Reader::new();
        let text = br#"{"type":"room","seats":[{"seat":0},{"seat":1}]}"#;
        let first = deflater.frame([&text[..]]);
        assert_eq!(reader.read(&first), lines(&[text.to_vec()]));
        deflater.forget();
        assert_eq!(deflater.buf.capacity() + deflater.head.capacity(), 0);
        // The stream goes on: the same reader inflates what comes after.
        let again = deflater.frame([&text[..], &text[..]]);
        assert_eq!(reader.read(&again), lines(&[text.to_vec(), text.to_vec()]));
    }

    #[test]
    fn every_length_and_distance_code_round_trips() {
        // Repeats of every length at distances of every code's range.
        let mut deflater = Deflater::new();
        let mut reader = Reader::new();
        let mut seed = 7u64;
        let mut noise = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (seed >> 56) as u8
                })
                .collect()
        };
        for distance in [1usize, 2, 3, 4, 5, 7, 9, 100, 1000, 4097, 8000, 12_000] {
            for len in [
                3usize, 4, 10, 11, 18, 19, 34, 35, 66, 67, 130, 131, 257, 258, 600,
            ] {
                let head = noise(distance);
                let text: Vec<u8> = head.iter().cycle().take(distance + len).copied().collect();
                let frame = deflater.frame([text.as_slice()]);
                assert_eq!(reader.read(&frame), lines(&[text]), "{distance} {len}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any frames of any texts (repetitive, random, long enough to cut the history back)
        /// inflate, one after another in one stream, to exactly their texts.
        #[test]
        fn a_stream_of_frames_inflates_to_what_was_sent(
            frames in proptest::collection::vec(
                proptest::collection::vec(
                    prop_oneof![
                        proptest::collection::vec(any::<u8>(), 0..300),
                        proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'"')], 0..3000),
                        (proptest::collection::vec(any::<u8>(), 1..40), 1usize..200)
                            .prop_map(|(unit, n)| unit.repeat(n)),
                    ],
                    1..4,
                ),
                1..12,
            )
        ) {
            let mut deflater = Deflater::new();
            let mut reader = Reader::new();
            for texts in frames {
                let frame = deflater.frame(texts.iter().map(Vec::as_slice));
                prop_assert_eq!(reader.read(&frame), lines(&texts));
                prop_assert!(deflater.buf.len() <= 2 * WINDOW + texts.iter().map(|t| t.len() + 1).sum::<usize>());
            }
        }
    }
}
