//! The real server binary as a child process: started on a free loopback port, its JSON log
//! lines read as they come, signalled, and killed when dropped.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::PATIENCE;

/// The server process, killed if the test ends before it exits.
pub struct ServerProcess {
    /// The process.
    child: Child,
    /// Its log lines (standard output), one JSON object each, from a reader thread.
    lines: mpsc::Receiver<String>,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Starts `program` (the server binary) on a free loopback port with these extra flags, and
    /// waits for it to listen. Every process is started with `--lazy-web-compression`: most are
    /// killed or stopped before anyone asks for the page, and compressing it all at start costs
    /// a test build two CPU-seconds a process.
    pub fn start(program: &str, args: &[&str]) -> ServerProcess {
        ServerProcess::spawn(Command::new(program), "127.0.0.1:0", args)
    }

    /// Starts `program` listening on `addr` (to come back where it was, after a restart).
    pub fn start_on(program: &str, addr: SocketAddr, args: &[&str]) -> ServerProcess {
        ServerProcess::spawn(Command::new(program), &addr.to_string(), args)
    }

    /// Like [`ServerProcess::start`], with the process's file-descriptor limit (soft and hard)
    /// set to `nofile` first, as a small machine or container would have it.
    pub fn start_with_nofile(program: &str, nofile: u32, args: &[&str]) -> ServerProcess {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            &format!("ulimit -n {nofile} && exec \"$0\" \"$@\""),
            program,
        ]);
        ServerProcess::spawn(command, "127.0.0.1:0", args)
    }

    fn spawn(mut command: Command, addr: &str, args: &[&str]) -> ServerProcess {
        let mut child = command
            .args([
                "--addr",
                addr,
                "--log-format",
                "json",
                "--lazy-web-compression",
            ])
            .args(args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server binary starts");
        let stdout = child.stdout.take().expect("the server's standard output");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = ServerProcess {
            child,
            lines,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        let listening = server.log_line("dhumbal server listening");
        server.addr = listening["fields"]["addr"]
            .as_str()
            .and_then(|a| a.parse().ok())
            .expect("the listening line names the address");
        server
    }

    /// Reads log lines until one whose message is `message`, returning it as JSON.
    pub fn log_line(&self, message: &str) -> serde_json::Value {
        loop {
            let line = self
                .lines
                .recv_timeout(PATIENCE)
                .unwrap_or_else(|e| panic!("no log line `{message}`: {e}"));
            let value: serde_json::Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("`{line}`: {e}"));
            if value["fields"]["message"] == message {
                return value;
            }
        }
    }

    /// Every log line written so far and not yet read.
    pub fn drain_logs(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        self.signal("TERM");
    }

    /// Sends SIGKILL and waits for the process to be gone: a crash at this very moment.
    pub fn kill(&mut self) {
        self.signal("KILL");
        let _ = self.child.wait();
    }

    /// Sends a signal by name (`TERM`, `KILL`, `STOP`, `CONT`).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits for the process to exit (at most [`PATIENCE`], a guard against a hung test),
    /// returning whether it exited with success.
    pub fn wait(&mut self) -> bool {
        let give_up = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("the process's status") {
                return status.success();
            }
            assert!(
                Instant::now() < give_up,
                "the server has not exited {PATIENCE:?} after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
