//! The scan of every frame sent to a seat for cards that seat may not see.
//!
//! Before the show, a seat may be told only its own hand and what the whole table has seen: the
//! card turned up at the deal, cards taken from the pile, and cards thrown. A [`LeakCheck`]
//! follows the public events of the round as its client receives them (a `state`'s events are
//! learned, in order, before its view is checked), and for every frame collects every card the
//! frame names — skipping only the results of shows (every hand face up, which is the point of a
//! show: `match_result`, the `round_ended` and `match_ended` events, and the `results` of
//! finished rounds in `history`). Any other card that is neither in the seat's own hand nor
//! public is a leak. A frame never spans two rounds: a deal is a change of its own.
//!
//! The coach's `review` of a match is a show too (it names the hands a seat held, every one of
//! which the table saw face up by the end), so it is allowed only once this client has seen the
//! match end (a `match_ended` event, live or in `history`) and before the next deal; a review at
//! any other moment is a leak whatever it names.

use std::collections::HashSet;

use dhumbal_engine::Card;
use serde_json::Value;

/// Message and event types that carry a show's face-up hands.
const SHOWS: [&str; 3] = ["match_result", "round_ended", "match_ended"];

/// Follows one client's frames (the `history` a client gets on arriving, then the events of every
/// `state` and `patch`); see the module documentation.
#[derive(Debug, Default)]
pub struct LeakCheck {
    /// Cards the whole table has seen this round.
    public: HashSet<Card>,
    /// The seat's hand as last shown to it.
    hand: HashSet<Card>,
    /// The seat, as the last whole view said (`None` for a spectator).
    seat: Option<u64>,
    /// How many frames were scanned.
    pub frames: usize,
    /// Whether the match has ended (and no new one has been dealt) as far as this client knows.
    over: bool,
}

impl LeakCheck {
    /// Scans one frame (a server message as JSON), panicking with the frame if it leaks.
    pub fn scan(&mut self, frame: &Value) {
        self.frames += 1;
        let kind = frame["type"].as_str().unwrap_or_default();
        for event in frame["events"].as_array().into_iter().flatten() {
            self.learn_event(event);
        }
        if kind == "history" {
            // The round so far, for a client arriving now: it starts with the round's deal.
            for event in frame["log"].as_array().into_iter().flatten() {
                self.learn_event(event);
            }
        }
        if kind == "state" || kind == "patch" {
            // A `state` holds the whole view; a `patch` the fields that changed (the seat's own
            // never changes in one).
            let view = &frame["view"];
            if kind == "state" {
                self.seat = view["seat"].as_u64();
            }
            if kind == "state" || view.get("hand").is_some() {
                self.hand = cards_of(&view["hand"]);
            }
            if let (Some(seat), Some(counts)) = (self.seat, view["card_counts"].as_array()) {
                assert_eq!(
                    counts[seat as usize].as_u64(),
                    Some(self.hand.len() as u64),
                    "the hand shown differs from the seat's card count: {frame}"
                );
            }
        }
        if kind == "review" {
            assert!(self.over, "a review before the match's end: {frame}");
            return;
        }
        let mut named = Vec::new();
        collect_cards(frame, &mut named);
        for card in named {
            assert!(
                self.public.contains(&card) || self.hand.contains(&card),
                "frame names {card}, which this seat has not been shown: {frame}"
            );
        }
    }

    /// Learns the cards a public event shows; a deal starts a new round's knowledge.
    fn learn_event(&mut self, event: &Value) {
        match event["type"].as_str().unwrap_or_default() {
            "match_ended" => self.over = true,
            "dealt" => {
                self.over = false;
                self.public.clear();
                self.public.extend(cards_of(&event["pile_top"]));
            }
            "took_from_pile" => self.public.extend(cards_of(&event["card"])),
            "threw" => self.public.extend(cards_of(&event["cards"])),
            _ => {}
        }
    }
}

/// The cards in a JSON value that is a card or a list of cards.
fn cards_of(value: &Value) -> HashSet<Card> {
    let mut cards = Vec::new();
    collect_cards(value, &mut cards);
    cards.into_iter().collect()
}

/// Every string in `value` that is a card, skipping shows and finished rounds' results.
pub fn collect_cards(value: &Value, out: &mut Vec<Card>) {
    match value {
        Value::String(s) => {
            if let Ok(card) = s.parse() {
                out.push(card);
            }
        }
        Value::Array(items) => {
            for item in items {
                collect_cards(item, out);
            }
        }
        Value::Object(fields) => {
            if let Some(kind) = fields.get("type").and_then(Value::as_str) {
                if SHOWS.contains(&kind) {
                    return;
                }
            }
            for (key, field) in fields {
                if key != "results" {
                    collect_cards(field, out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_card_from_nowhere_is_a_leak_and_public_cards_are_not() {
        let mut check = LeakCheck::default();
        check.scan(&json!({"type":"state",
            "events":[{"type":"dealt","round":1,"dealer":3,"pile_top":"5H"}],
            "view":{"seat":0,"hand":["AS","2S"],"card_counts":[2,5]}}));
        check.scan(&json!({"type":"state",
            "events":[{"type":"threw","seat":1,"cards":["KD"]}],
            "view":{"seat":0,"hand":["AS","2S"],"card_counts":[2,4],"top_throw":["KD"]}}));
        check.scan(&json!({"type":"state",
            "events":[{"type":"round_ended","result":{"hands":[["AS"],["QC"]]}}],
            "view":{"seat":0,"hand":["AS","2S"],"card_counts":[2,4]}}));
        let leak = std::panic::catch_unwind(move || {
            check.scan(&json!({"type":"state","events":[],"view":{"seat":0,"hand":["AS","2S"],"card_counts":[2,5],"top_throw":["QC"]}}));
        });
        assert!(leak.is_err(), "QC was never shown to seat 0");
    }

    #[test]
    fn a_review_is_a_leak_until_the_match_has_ended_and_again_after_the_next_deal() {
        let review = json!({"type":"review","match_number":1,"review":{"seat":1,
            "flagged":[{"hand":["QC","9H"],"chose":{"type":"call"},"best":{"type":"draw","card":null}}]}});
        let dealt = json!({"type":"state",
            "events":[{"type":"dealt","round":1,"dealer":3,"pile_top":"5H"}],
            "view":{"seat":0,"hand":["AS","2S"],"card_counts":[2,5]}});
        let early = std::panic::catch_unwind(|| {
            let mut check = LeakCheck::default();
            check.scan(&dealt);
            check.scan(&review);
        });
        assert!(early.is_err(), "a review before the end");
        let mut check = LeakCheck::default();
        check.scan(&dealt);
        check.scan(&json!({"type":"patch","v":2,"events":[{"type":"match_ended","standings":[]}],"view":{}}));
        check.scan(&review);
        let next = std::panic::catch_unwind(move || {
            check.scan(&dealt);
            check.scan(&review);
        });
        assert!(
            next.is_err(),
            "a review of the last match once the next is dealt"
        );
    }

    #[test]
    fn a_patch_keeps_the_hand_it_does_not_name_and_may_leak_like_a_state() {
        let mut check = LeakCheck::default();
        check.scan(&json!({"type":"state",
            "events":[{"type":"dealt","round":1,"dealer":3,"pile_top":"5H"}],
            "view":{"seat":0,"hand":["AS","2S"],"card_counts":[2,5]}}));
        // Another seat drew: the hand is not in the patch and stays as it was.
        check.scan(&json!({"type":"patch","v":2,
            "events":[{"type":"drew_from_stock","seat":1}],"view":{"card_counts":[2,6]}}));
        check.scan(&json!({"type":"patch","v":3,"view":{"top_throw":["AS"]}}));
        let miscount = std::panic::catch_unwind(|| {
            let mut check = LeakCheck::default();
            check
                .scan(&json!({"type":"state","view":{"seat":0,"hand":["AS"],"card_counts":[1,5]}}));
            check.scan(&json!({"type":"patch","v":2,"view":{"card_counts":[2,5]}}));
        });
        assert!(
            miscount.is_err(),
            "a patch's card count must match the hand held"
        );
        let leak = std::panic::catch_unwind(move || {
            check.scan(&json!({"type":"patch","v":4,"view":{"top_throw":["QC"]}}));
        });
        assert!(leak.is_err(), "QC was never shown to seat 0");
    }

    #[test]
    fn an_event_that_names_a_hidden_card_is_a_leak() {
        let mut check = LeakCheck::default();
        check.scan(&json!({"type":"state",
            "events":[{"type":"dealt","round":1,"dealer":3,"pile_top":"5H"}],
            "view":{"seat":0,"hand":["AS"],"card_counts":[1,1]}}));
        let leak = std::panic::catch_unwind(move || {
            check.scan(&json!({"type":"state",
                "events":[{"type":"drew_from_stock","seat":1,"card":"9C"}],
                "view":{"seat":0,"hand":["AS"],"card_counts":[1,2]}}));
        });
        assert!(leak.is_err(), "seat 1's drawn card is not seat 0's to see");
    }

    #[test]
    fn a_client_arriving_mid_round_learns_the_public_cards_from_its_history() {
        let mut check = LeakCheck::default();
        check.scan(&json!({"type":"history","log":[
            {"type":"dealt","round":2,"dealer":0,"pile_top":"5H"},
            {"type":"threw","seat":1,"cards":["KD","KS"]}
        ],"results":[{"hands":[["QC"],["2C"]]}]}));
        check.scan(&json!({"type":"state","view":{"seat":0,"hand":["AS"],"card_counts":[1,4],"top_throw":["KD","KS"],"previous_throw":["5H"]}}));
        let leak = std::panic::catch_unwind(move || {
            check.scan(&json!({"type":"state","view":{"seat":0,"hand":["AS"],"card_counts":[1,4],"top_throw":["QC"]}}));
        });
        assert!(
            leak.is_err(),
            "QC was shown only in a finished round, not in this one"
        );
    }
}
