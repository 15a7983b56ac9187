//! `dhumbal-server`: the game server's binary. Everything it does is
//! [`dhumbal_server::cli::main`]: flags, logging, signals, and serving.

fn main() -> std::process::ExitCode {
    dhumbal_server::cli::main()
}
