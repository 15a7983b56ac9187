//! A throwaway `redis-server` (Debian's package) on a free loopback port, for the tests of the
//! Redis store and of the cluster.
//!
//! [`RedisServer::start_or_skip`] starts one in a folder of its own, with every write in its
//! append-only file (`appendfsync always`), so that [`RedisServer::restart`] brings back what
//! was written. Without `redis-server` it answers `None` after printing that the test is
//! skipped and why, unless `CI=true`, where a missing `redis-server` fails the test. The server
//! is killed, and its folder removed, when the value is dropped.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many servers this process has started: each gets a folder of its own.
static STARTED: AtomicU64 = AtomicU64::new(0);

/// How long a started `redis-server` has to answer `PING`.
const READY_PATIENCE: Duration = Duration::from_secs(20);

/// A `redis-server` on `127.0.0.1`, killed when dropped.
pub struct RedisServer {
    /// The process, `None` while stopped.
    child: Option<Child>,
    /// Its port.
    pub port: u16,
    /// Its working folder (the append-only file).
    dir: PathBuf,
}

impl RedisServer {
    /// Starts a `redis-server` on a free loopback port and waits until it answers. `None` when
    /// `redis-server` is not installed (the test, named `test`, is skipped: it says so on
    /// standard error), but with `CI=true`, where that fails the test.
    pub fn start_or_skip(test: &str) -> Option<RedisServer> {
        if !installed() {
            let reason = "redis-server is not installed (apt-get install redis-server)";
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{reason}: with CI=true the Redis tests must run"
            );
            eprintln!("skipped {test}: {reason}");
            return None;
        }
        // A port the system has just handed out is free, unless another process takes it in
        // the meantime: then try another.
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port();
            let dir = std::env::temp_dir().join(format!(
                "dhumbal-redis-{}-{port}-{}",
                std::process::id(),
                STARTED.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).expect("a folder for redis-server");
            let mut server = RedisServer {
                child: None,
                port,
                dir,
            };
            match server.launch() {
                Ok(()) => return Some(server),
                Err(why) => last = why,
            }
        }
        panic!("redis-server did not start: {last}");
    }

    /// `redis://127.0.0.1:<port>`, for `--store`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// Kills the server (SIGKILL: what it had acknowledged is in its append-only file).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server and starts it again on the same port and folder, with what it had.
    pub fn restart(&mut self) {
        self.stop();
        let deadline = Instant::now() + READY_PATIENCE;
        loop {
            match self.launch() {
                Ok(()) => return,
                // The old socket may hold the port for a moment.
                Err(why) if Instant::now() < deadline => {
                    eprintln!("redis-server did not restart yet: {why}");
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(why) => panic!("redis-server did not restart: {why}"),
            }
        }
    }

    /// Sends one command (inline, as `redis-cli` would) and answers the reply's first line.
    pub fn command(&self, command: &str) -> String {
        let mut stream = TcpStream::connect(self.addr()).expect("redis-server answers");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("a read timeout");
        stream
            .write_all(format!("{command}\r\n").as_bytes())
            .expect("the command is sent");
        let mut reply = Vec::new();
        let mut byte = [0u8; 1];
        while !reply.ends_with(b"\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => reply.push(byte[0]),
                _ => break,
            }
        }
        String::from_utf8_lossy(&reply).trim_end().to_owned()
    }

    /// Starts the process and waits for `PONG`.
    fn launch(&mut self) -> Result<(), String> {
        let mut child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "yes"])
            .args(["--appendfsync", "always"])
            .args(["--dir", &self.dir.display().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("redis-server: {e}"))?;
        let deadline = Instant::now() + READY_PATIENCE;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("redis-server exited: {status}"));
            }
            if self.pong() {
                self.child = Some(child);
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err("redis-server did not answer PING".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the server answers `PING` with `PONG` (not `LOADING`).
    fn pong(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(self.addr()) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        if stream.write_all(b"PING\r\n").is_err() {
            return false;
        }
        let mut reply = [0u8; 7];
        stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `redis-server` is on the `PATH`.
fn installed() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// A loopback port the system says is free.
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}
