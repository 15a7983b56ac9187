//! The game server's own program, built in this package so that the tests that attack the real
//! binary (`tests/hostile.rs`) find it as `CARGO_BIN_EXE_server-under-test`, always built from
//! the current sources: it is `dhumbal-server`'s `main`, nothing else.

fn main() -> std::process::ExitCode {
    dhumbal_server::cli::main()
}
