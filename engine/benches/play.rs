//! Benchmark of random legal play (written next).
fn main() {}
