//! Browser tests of the web client: a real server on a loopback port, and Debian's Chromium
//! driven headless through its `chromedriver` over WebDriver (our own small client, `webdriver`): its headless shell
//! (`chromium-headless-shell`, twice as quick on this suite) where it is installed, else the
//! full `/usr/bin/chromium`; the layout at every size and installability run in the full
//! browser too (`harness::Chromium`). One chromedriver serves the whole binary, and a window a
//! test is done with is emptied and kept for the next test that asks for its size
//! (`harness::Driver`).
//!
//! - One player creates a room, plays a whole round against three bots through the page (taking
//!   from the pile, a barred card, a refused group, a drag onto the pile, marked throws) to the
//!   score dialog, checks its rows and chart, and presses Next round.
//! - Two browsers join one room as two people (the host sets a bot, the guest has no host
//!   controls); each sees only its own hand and what the other did, playing by keyboard and
//!   mouse; a third browser finds the table full and watches, seeing no hand.
//! - A reload keeps the seat and the hand; a dropped connection shows "Reconnecting…" and comes
//!   back by itself; the seat opened in a second tab moves there, and the first tab says so and
//!   can take it back.
//! - SIGTERM mid-match, with rooms kept in SQLite: the real server binary stops, the page says it
//!   is reconnecting, and once the server is started again on the same address and data
//!   directory the page comes back by itself to the same seat and hand and finishes the match.
//! - A cluster, as the page sees it: a room that moves to another server brings the page back
//!   within 0.1 s; a hello refused while the store is away (`store_unavailable`) is said once
//!   and tried again with a growing pause until the page is back in its seat.
//! - A one-round match (from a fixed deck) ends with the standings, and Rematch deals again.
//! - A throw-then-draw table: throw first, then pick up the previous single throw.
//! - The settings page, How to play with the table's own settings, and the page's group rules
//!   against the engine's on thousands of groups; the settings form's problems come from the
//!   server's check (Create room is off while it refuses; the lobby sends only what it accepts).
//! - Without a browser: the page at `/` and `/r/{code}`, the replay page at `/replay`, and every
//!   file they load.
//! - Provably fair deals: the page's `fair.js` gives every known-answer vector of
//!   `docs/fairness.md`; after a whole one-round match against three bots, Verify the deals says
//!   the deal checks out, the hand history from the endpoint passes `dhumbal-server verify` (and
//!   fails it, and the page's check, with one card changed); the replay page steps through a
//!   history from a file on a phone (and from the server), every hand face up.
//!
//! - Table chat and reactions: a line with markup in it stays text on both pages (one a phone,
//!   whose folded panel counts it unread and covers neither the hand nor the actions); a reaction
//!   shows beside the seat that sent it and goes; a reload shows the chat again (from
//!   `welcome`). Hide chat hides every line and count (remembered across a reload) while
//!   reactions still show; the host mutes a person from the lobby's seat list (her input is
//!   disabled and she is told why) and unmutes her from the table's chat panel; a spectator
//!   reads and reacts (beside the chat) but has no input.
//! - Nepali (नेपाली): chosen with the control on the home page, a round against three bots on a
//!   phone and a one-round match on a desktop (then its replay page) show no English word at the
//!   home page, How to play (with the table's own words, in Devanagari and romanised), the lobby,
//!   the table mid-round and the score dialog (`nepali.rs`, the allow-list explained there); the
//!   language follows the browser's, is remembered across a reload, switches back live in the
//!   lobby and at the table keeping the hand and its marks, and on the replay page; the English
//!   and Nepali tables (`server/web/messages-en.js`, `messages-ne.js`) have the same keys and the same `{params}`. At
//!   a table with a 15 s turn timer, on a phone, the countdown, the host's seat menu, the banner
//!   when the time runs out, the notice and the log's line naming the bot, and the while-away
//!   summary show no English word either.
//! - Playing with friends (`friends.rs`), a phone and a laptop at each table: a 15 s turn timer
//!   chosen in the settings form (the lobby's summary and How to play say it) counts down on the
//!   seat whose turn it is on both pages, taking no room, urgent in its last 5 s; the turn that
//!   runs out is played by a bot (a banner for that person, a notice and a log line naming the
//!   bot for both, live and after a reload, then what the bot did); the host hands a seat to a
//!   bot from its menu by keyboard (both hear of it; that person is marked away, presses I'm back
//!   and has the seat again) and removes a person mid-match after a confirmation (their page says
//!   why, a bot plays the seat, and Let back works during the match); a spectator who joined with
//!   Watch sees the countdown on the seat whose turn it is.
//! - The polish pass (issue 15), on a phone and a laptop: marking cards moves nothing at the table
//!   and Call and Throw keep their places (a tie's warning on the limit); every screen opens at its
//!   top and every dialog's main button shows on a small phone; your turn in the tab's title, an
//!   optional sound and vibration, cards that fly (not with reduced motion); after the match
//!   Rematch (who asked), Leave, Back to the lobby and Change settings; the pile's label says what
//!   may be taken; long names cut with an ellipsis, whole on hover and focus; a reload keeps the
//!   hand's order and marks; joining first on the home page; controls of 44 px and text of 4.5:1;
//!   one way to watch a full room, no stale notice, the chart's minus sign (`polish.rs`).
//! - An invite that works across the room (`invite.rs`): a host who opened the game at
//!   `127.0.0.1` on a phone shares a link to the host's Wi-Fi address (127.0.0.2 stands for it),
//!   which a friend's laptop opens, sits and plays a turn from; `--public-url` makes the link the
//!   public one; the QR code loads at 360×640 and 1280×800 and says the link; Share only where
//!   the browser has a share sheet (sending the link), Copy says "Copied".
//! - Installable and light on the wire (`install.rs`): Chromium's installability check passes on
//!   a phone and a laptop; with the server out of reach a room's link opens to the offline page
//!   (English and Nepali), which opens the room by itself once the server is back; cold and warm
//!   loads on a phone's and a slow network print their figures (a cold load's bytes are
//!   asserted, and a warm load asks for nothing under `/assets/`).
//!
//! - The hand keeps its order (`hand_order.rs`: sorted
//!   mode across draws and reloads, jokers last, a card dragged into place stays there); the end
//!   of a match (`ledger.rs`: the heading names the winner or those who share first place, the
//!   room's ledger in the dialog and the lobby, the heading in view after Verify, the replay's
//!   controls clear of the stock and the pile), the settings' Difficulty and a hand emptied at
//!   the show.
//!
//! - Honest about its connection (`connection.rs`), on a phone in English and a laptop in
//!   Nepali: a socket stalled silently is noticed by the page's heartbeat within seconds and the
//!   page comes back by itself; the network cut with DevTools is said plainly ("can't reach the
//!   server") and the page is back in its seat when it returns; back in the foreground the page
//!   asks the server at once.
//! - The table in a player's hand (`layout.rs`): at 360×640, 375×667, 390×844,
//!   412×915, 740×360, 1280×800 and 1920×1080 every control of a turn (the hand, the stock, the
//!   pile, Call, Sort hand, Throw, the round's line, the table's menu, the seats) is inside the
//!   window and none covers another, a notice included; the table's menu explains what it holds
//!   and Next round shows on a small phone; the whole round's log scrolls; a page woken from sleep
//!   or come back after its socket dropped summarises the moves it missed and flies at most one
//!   card at a time; the seats say which one is the host, in English and Nepali.
//!
//! - A page everyone can play (issue 31): axe-core, injected by WebDriver (`a11y.rs`), finds no
//!   violation on home, the join form, the host's and a friend's lobby, the table (its menu and
//!   How to play), the score and match-over dialogs and Replay, on a phone and a laptop, in
//!   English and Nepali; a screen reader hears every move once, in words (`heard.rs`: its own
//!   turn and hand, the card it drew, each bot's moves, a turn run out, the call, the show, the
//!   match's end) and the focus comes to each screen's heading; a whole match is played by
//!   keyboard alone in three presses a turn, the focus ring showing over every state
//!   (`keyboard.rs`).
//!
//! Every test also fails on any error in the browser's console (the restart test passes over
//! only Chromium's own lines for the page's WebSocket attempts refused while the server is
//! down). Screenshots go to `<target>/screenshots/` (the path is printed). Without Chromium the
//! tests print why and pass, unless `CI=true`, where a missing browser is a failure. They bind
//! loopback only and run four at a time (`DHUMBAL_BROWSER_TESTS` sets how many).
//!
//! On a machine without Chromium (outside CI) every test that needs it is `#[ignore]`d with the
//! reason (`missing_chromium`, set by `tests/build.rs`), so the runner counts it as ignored.

mod a11y;
mod chat;
mod coach;
mod connection;
mod fairness;
mod friends;
mod hand_order;
mod harness;
mod heard;
mod install;
mod invite;
mod keyboard;
mod layout;
mod ledger;
mod nepali;
mod play;
mod polish;
mod rules;
mod watchers;
mod webdriver;
