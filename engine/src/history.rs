//! Hand histories: the whole record of a finished match, and its verifier.
//!
//! A [`Game`] records its own [`HandHistory`] as it is played: for every round the client seeds
//! in force, the deck seed, the deck, the dealt hands and every action with the card it drew and
//! the events it caused. The game gives it out only once the match is over
//! ([`Game::hand_history`]), with the match seed revealed, so that anyone can check it:
//! [`verify`] replays the match through the engine itself and says, round by round, whether
//! everything recorded follows from the seed, the client seeds and the actions.

use serde::{Deserialize, Serialize};

use crate::card::Card;
use crate::fair::{ClientSeed, FairDeal, Hex32, commitment};
use crate::game::{Action, Event, Game};
use crate::score::{RoundResult, Standing};
use crate::settings::Settings;

/// The format tag of a hand history.
pub const HISTORY_FORMAT: &str = "dhumbal-hand-history/1";

/// A finished match, every card face up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct HandHistory {
    /// [`HISTORY_FORMAT`].
    pub format: String,
    /// The table's settings.
    pub settings: Settings,
    /// The room's code, bound into every deck seed.
    pub room: String,
    /// The match's number in its room, from 1, bound into every deck seed.
    pub match_number: u32,
    /// The commitment published before the first deal (`None` for fixed test decks).
    pub commitment: Option<Hex32>,
    /// The match seed, revealed (`None` for fixed test decks).
    pub seed: Option<Hex32>,
    /// The seats' names, in seat order, as the table showed them at the end.
    #[serde(default)]
    pub players: Vec<String>,
    /// Every round, in order.
    pub rounds: Vec<RoundHistory>,
    /// The final standings.
    pub standings: Vec<Standing>,
}

/// One round of a hand history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct RoundHistory {
    /// The round's number, from 1.
    pub round: u32,
    /// The dealer.
    pub dealer: usize,
    /// The client seeds in force at the deal, in seat order.
    pub client_seeds: Vec<Option<ClientSeed>>,
    /// The round's deck seed (`None` for fixed test decks).
    pub deck_seed: Option<Hex32>,
    /// The deck as shuffled, top card first.
    pub deck: Vec<Card>,
    /// Every seat's hand as dealt (empty for a seat out of the match).
    pub hands: Vec<Vec<Card>>,
    /// The card turned up as the pile.
    pub pile_top: Card,
    /// Every action, in order.
    pub steps: Vec<Step>,
    /// The show's result (`None` only while the round is being played).
    pub result: Option<RoundResult>,
}

/// One accepted action of a hand history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Step {
    /// Who acted.
    pub seat: usize,
    /// The action.
    pub action: Action,
    /// The card drawn from the stock, which only the drawer saw at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<Card>,
    /// When the draw emptied the stock first: the pile's cards that were shuffled into a new
    /// stock, in canonical order (the shuffle's input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reshuffled: Option<Vec<Card>>,
    /// The public events it caused.
    pub events: Vec<Event>,
}

/// What [`verify`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verification {
    /// Whether the revealed seed matches the commitment, or why the record cannot be checked at
    /// all (no seed, bad settings).
    pub seed: Result<(), String>,
    /// Each recorded round's verdict, in order.
    pub rounds: Vec<Result<(), String>>,
    /// Whether the match's end (the number of rounds, the standings) follows.
    pub end: Result<(), String>,
}

impl Verification {
    /// Whether everything checks out.
    pub fn is_ok(&self) -> bool {
        self.seed.is_ok() && self.end.is_ok() && self.rounds.iter().all(Result::is_ok)
    }
}

/// Checks a hand history with the engine: the seed against the commitment, then every round by
/// replaying it (its deck seed, deck, deal, every action's card and events, and its result).
pub fn verify(record: &HandHistory) -> Verification {
    let mut verification = Verification {
        seed: Ok(()),
        rounds: Vec::new(),
        end: Err("not checked: the seed does not check out".into()),
    };
    let game = match start(record) {
        Ok(game) => game,
        Err(why) => {
            verification.seed = Err(why);
            return verification;
        }
    };
    let mut game = Some(game);
    for (i, round) in record.rounds.iter().enumerate() {
        let verdict = match game.as_mut() {
            None => Err("not checked: an earlier round could not be replayed".to_owned()),
            Some(game) => replay_round(game, i, round, &mut |_, _| {}),
        };
        if verdict
            .as_ref()
            .is_err_and(|why| why.starts_with("replay stopped"))
        {
            game = None;
        }
        verification.rounds.push(verdict);
    }
    verification.end = match game {
        None => Err("not checked: the match could not be replayed to its end".into()),
        Some(game) if !game.is_over() => Err(format!(
            "the record stops after round {} but the match was not over",
            record.rounds.len()
        )),
        Some(game) if game.standings() != record.standings => {
            Err("the standings do not follow from the rounds".into())
        }
        Some(_) => Ok(()),
    };
    verification
}

/// Replays a hand history through the engine, showing `each` the game as it stood just before
/// every recorded step (which the game then applies): every seat's view at every decision, for
/// a review of the match. Checks what [`verify`] checks and stops at the first thing that does
/// not follow, with the same words; returns the game at the match's end.
pub fn replay(record: &HandHistory, mut each: impl FnMut(&Game, &Step)) -> Result<Game, String> {
    let mut game = start(record)?;
    for (i, round) in record.rounds.iter().enumerate() {
        replay_round(&mut game, i, round, &mut each)?;
    }
    Ok(game)
}

/// The game the record starts from, once its seed checks out against its commitment.
fn start(record: &HandHistory) -> Result<Game, String> {
    if record.format != HISTORY_FORMAT {
        return Err(format!(
            "the record is in format {:?}, not {HISTORY_FORMAT:?}",
            record.format
        ));
    }
    let (Some(seed), Some(committed)) = (record.seed, record.commitment) else {
        return Err("the record has no seed or no commitment (fixed test decks?)".into());
    };
    if commitment(&seed.0) != committed {
        return Err(format!(
            "the seed does not match the commitment: SHA-256 gives {}, the record says {committed}",
            commitment(&seed.0)
        ));
    }
    let first = record.rounds.first().ok_or("the record has no rounds")?;
    let deal = FairDeal {
        seed: seed.0,
        room: record.room.clone(),
        match_number: record.match_number,
    };
    Game::fair(record.settings.clone(), deal, first.client_seeds.clone())
        .map_err(|e| format!("the settings are not a valid table: {e}"))
}

/// Replays round `index` of a record on `game` and compares what it recorded with what was;
/// shows `each` the game before every step.
fn replay_round(
    game: &mut Game,
    index: usize,
    round: &RoundHistory,
    each: &mut dyn FnMut(&Game, &Step),
) -> Result<(), String> {
    if index > 0 {
        game.set_client_seeds(round.client_seeds.clone());
        game.next_round()
            .map_err(|e| format!("replay stopped: the next round cannot be dealt ({e})"))?;
    }
    let ours = game
        .rounds_so_far()
        .last()
        .expect("a round has been dealt")
        .clone();
    // The deal: everything of the round but its play.
    let deal = |r: &RoundHistory| RoundHistory {
        steps: Vec::new(),
        result: None,
        ..r.clone()
    };
    if deal(&ours) != deal(round) {
        return Err(describe_deal(&ours, round));
    }
    for (k, step) in round.steps.iter().enumerate() {
        each(game, step);
        game.apply(step.seat, step.action.clone()).map_err(|e| {
            format!(
                "replay stopped: step {} (seat {}) is refused by the rules: {e}",
                k + 1,
                step.seat
            )
        })?;
        let done = game
            .rounds_so_far()
            .last()
            .and_then(|r| r.steps.last())
            .expect("an applied action is recorded");
        if done != step {
            return Err(format!(
                "replay stopped: step {} (seat {}) does not follow: recorded {}, replayed {}",
                k + 1,
                step.seat,
                brief(step),
                brief(done)
            ));
        }
    }
    let result = game.rounds_so_far().last().and_then(|r| r.result.as_ref());
    if result != round.result.as_ref() {
        return Err("replay stopped: the round's result does not follow from its play".into());
    }
    Ok(())
}

/// Which part of a deal differs, in words.
fn describe_deal(ours: &RoundHistory, recorded: &RoundHistory) -> String {
    let what = if ours.round != recorded.round || ours.dealer != recorded.dealer {
        "its number or dealer"
    } else if ours.client_seeds != recorded.client_seeds {
        "its client seeds"
    } else if ours.deck_seed != recorded.deck_seed {
        "its deck seed"
    } else if ours.deck != recorded.deck {
        "its deck"
    } else if ours.hands != recorded.hands {
        "a dealt hand"
    } else {
        "the card turned up"
    };
    format!(
        "replay stopped: round {}'s deal does not follow from the seed and the client seeds ({what} differs)",
        recorded.round
    )
}

/// A step in a few words, for a verdict.
fn brief(step: &Step) -> String {
    let card = step
        .card
        .map(|c| format!(" drawing {c}"))
        .unwrap_or_default();
    format!("{:?}{card}", step.action)
}
