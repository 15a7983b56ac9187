//! HAProxy (Debian's package) in front of server nodes, for the cluster test: started on a free
//! loopback port with `docker/haproxy.cfg` itself ([`CONFIG`], pointed at the nodes by its
//! environment variables: every socket and lookup of a room to one node by a consistent hash of
//! its code, plain `/ws` refused, everything else round-robin, health checks on `/readyz`), and
//! stopped when dropped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::PATIENCE;

/// A running HAProxy.
pub struct Haproxy {
    /// The process, in the foreground (`-db`).
    child: Child,
    /// Where clients connect.
    pub addr: SocketAddr,
    /// The folder of its configuration file.
    _dir: tempfile::TempDir,
}

/// The `haproxy` program on the `PATH`, if there is one.
pub fn program() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("haproxy"))
            .find(|path| path.is_file())
    })
}

/// `docker/haproxy.cfg` itself: the test runs the file the cluster ships, with its environment
/// variables pointing it at loopback addresses.
pub const CONFIG: &str = include_str!("../../docker/haproxy.cfg");

/// The environment that points [`CONFIG`] at `nodes` (three), listening on `front`, with health
/// checks every 200 ms so that a node that stops is out within half a second.
pub fn environment(front: SocketAddr, nodes: &[SocketAddr]) -> Vec<(String, String)> {
    let mut env = vec![
        ("DHUMBAL_BIND".to_owned(), front.to_string()),
        ("DHUMBAL_CHECK_INTER".to_owned(), "200ms".to_owned()),
        ("DHUMBAL_CONNECT".to_owned(), "500ms".to_owned()),
    ];
    for (n, addr) in nodes.iter().enumerate() {
        env.push((format!("DHUMBAL_NODE{}", n + 1), addr.to_string()));
    }
    env
}

impl Haproxy {
    /// [`Haproxy::start`], or `None` after saying that `test` is skipped and why when the program
    /// is missing; with `CI=true` a missing `haproxy` fails the test instead.
    pub fn start_or_skip(nodes: &[SocketAddr], test: &str) -> Option<Haproxy> {
        let started = Haproxy::start(nodes);
        if started.is_none() {
            let reason = "haproxy is not installed (apt-get install haproxy)";
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{reason}: with CI=true {test} must run"
            );
            eprintln!("skipped {test}: {reason}");
        }
        started
    }

    /// Starts `haproxy` in front of `nodes` on a free loopback port and waits until it accepts
    /// connections. `None` when the program is missing.
    pub fn start(nodes: &[SocketAddr]) -> Option<Haproxy> {
        let program = program()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let dir = tempfile::tempdir().expect("a temporary folder");
        let file = dir.path().join("haproxy.cfg");
        std::fs::write(&file, CONFIG).expect("the configuration is written");
        let child = Command::new(program)
            .envs(environment(addr, nodes))
            .arg("-db")
            .arg("-f")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("haproxy starts");
        let give_up = Instant::now() + PATIENCE;
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < give_up, "haproxy did not listen on {addr}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Haproxy {
            child,
            addr,
            _dir: dir,
        })
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
