//! The engine's integration tests, one binary (each file below was a test binary of its own;
//! one link and one copy of the engine's generic code instead of six made a fresh
//! `cargo test --workspace` build about 15 CPU-seconds cheaper):
//!
//! - [`rules`]: the standard table, one test per rule paragraph, from explicit deck orders;
//! - [`options`]: the household guide's options and the three presets through whole matches;
//! - [`direction`]: the turn-order direction and what a reshuffle keeps;
//! - [`properties`]: property tests over random settings and random play;
//! - [`fairness`]: the fair-deal scheme and hand histories;
//! - [`fuzz`]: the parser, the group rules and `Game::apply` on arbitrary input;
//! - [`common`]: the helpers they share.

mod common;
mod direction;
mod fairness;
mod fuzz;
mod options;
mod properties;
mod rules;
