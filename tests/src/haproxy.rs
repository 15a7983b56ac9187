//! HAProxy (Debian's package) in front of server nodes, for the cluster test: started on a free
//! loopback port with a configuration that routes as `docker/haproxy.cfg` does (every socket of
//! a room to one node by a consistent hash of the code in `/ws/{code}`, everything else
//! round-robin, health checks on `/readyz`), and stopped when dropped.

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

/// The configuration: clients on `front`, the nodes behind. Health checks run every 200 ms and
/// take a node out after two failures, and a connection a node refuses is sent to another node
/// at once (`option redispatch 1`), so that a killed node's rooms move within a second.
pub fn config(front: SocketAddr, nodes: &[SocketAddr]) -> String {
    let servers: String = nodes
        .iter()
        .enumerate()
        .map(|(n, addr)| format!("    server node{} {addr}\n", n + 1))
        .collect();
    format!(
        "global
    maxconn 4000

defaults
    mode http
    timeout connect 500ms
    retries 2
    option redispatch 1
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h
    timeout http-request 10s
    option forwardfor
    default-server check inter 200ms fall 2 rise 2

frontend front
    bind {front}
    use_backend rooms if {{ path_beg /ws/ }}
    default_backend rest

backend rooms
    balance hash path,field(3,/),upper
    hash-type consistent
    option httpchk GET /readyz
    http-check expect status 200
{servers}
backend rest
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
{servers}"
    )
}

impl Haproxy {
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
        std::fs::write(&file, config(addr, nodes)).expect("the configuration is written");
        let child = Command::new(program)
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
