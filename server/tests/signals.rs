//! The real `dhumbal-server` binary shuts down gracefully on SIGTERM: a player in a room is told
//! `bye` (`shutting_down`) and its socket closed with 1001, and the process exits with success.
//!
//! The binary is started on `127.0.0.1:0`; its address comes from its first log line
//! (`--log-format json`). Every wait is bounded by [`PATIENCE`], a guard against a hung test
//! only: nothing is asserted about how long anything takes.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use dhumbal_protocol::{
    CLOSE_GOING_AWAY, ClientEnvelope, ClientMessage, CreatedRoom, Hello, PROTOCOL_VERSION,
    ServerMessage, codes,
};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

/// How long any one step may take before the test gives up as hung.
const PATIENCE: Duration = Duration::from_secs(60);

/// The server process, killed if the test ends before it exits.
struct Server {
    /// The process.
    child: Child,
    /// Its log lines (standard output), one JSON object each, from a reader thread.
    lines: mpsc::Receiver<String>,
}

impl Server {
    /// Starts the binary on a free loopback port.
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dhumbal-server"))
            .args(["--addr", "127.0.0.1:0", "--log-format", "json"])
            // The timeouts of plain HTTP are long here, so that only the shutdown deadline can
            // end a half-sent request.
            .args([
                "--http-header-timeout",
                "10m",
                "--http-request-timeout",
                "10m",
            ])
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
        Server { child, lines }
    }

    /// Reads log lines until one whose message is `message`, returning it as JSON.
    fn log_line(&self, message: &str) -> serde_json::Value {
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

    /// Sends SIGTERM.
    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
    }

    /// The address it listens on, from its first log line.
    fn addr(&self) -> String {
        let listening = self.log_line("dhumbal server listening");
        listening["fields"]["addr"]
            .as_str()
            .expect("the listening line names the address")
            .to_owned()
    }

    /// Waits for the process to exit, returning whether it exited with success.
    fn wait(&mut self) -> bool {
        let give_up = std::time::Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("the process's status") {
                return status.success();
            }
            assert!(
                std::time::Instant::now() < give_up,
                "the server has not exited {PATIENCE:?} after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Creates a room with `POST /api/rooms` (plain HTTP/1.1).
async fn create_room(addr: &str) -> CreatedRoom {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the server");
    let request = format!(
        "POST /api/rooms HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .await
        .expect("send the request");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .await
        .expect("read the answer");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    assert!(head.starts_with("HTTP/1.1 201"), "{head}");
    serde_json::from_str(body).expect("a created room")
}

#[tokio::test]
async fn sigterm_tells_the_players_bye_closes_with_1001_and_the_process_exits_cleanly() {
    let mut server = Server::start();
    let listening = server.log_line("dhumbal server listening");
    let addr = listening["fields"]["addr"]
        .as_str()
        .expect("the listening line names the address")
        .to_owned();

    let play = async {
        let room = create_room(&addr).await;
        let (mut ws, _) = connect_async(format!("ws://{addr}/ws"))
            .await
            .expect("the WebSocket opens");
        let hello = ClientEnvelope::from(ClientMessage::Hello(Hello {
            protocol: PROTOCOL_VERSION,
            room: room.code,
            name: "Asha".into(),
            token: None,
            spectator: false,
            host_secret: Some(room.host_secret),
        }));
        let hello = serde_json::to_string(&hello).expect("a hello");
        ws.send(Message::text(hello)).await.expect("send hello");
        let mut welcomed = false;
        let mut bye = None;
        while let Some(frame) = ws.next().await {
            match frame.expect("a frame") {
                Message::Text(text) => {
                    match serde_json::from_str(text.as_str()).expect("a server message") {
                        ServerMessage::Welcome(_) => {
                            welcomed = true;
                            let status = Command::new("kill")
                                .args(["-TERM", &server.child.id().to_string()])
                                .status()
                                .expect("run kill");
                            assert!(status.success(), "kill -TERM failed");
                        }
                        ServerMessage::Bye(b) => bye = Some(b),
                        _ => {}
                    }
                }
                Message::Close(frame) => {
                    let frame = frame.expect("a close frame with a code");
                    return (welcomed, bye, u16::from(frame.code));
                }
                _ => {}
            }
        }
        panic!("the socket ended without a close frame");
    };
    let (welcomed, bye, code) = tokio::time::timeout(PATIENCE, play)
        .await
        .expect("the game socket to close after SIGTERM");
    assert!(welcomed);
    assert_eq!(
        bye.expect("a bye before the close").reason,
        codes::SHUTTING_DOWN
    );
    assert_eq!(code, CLOSE_GOING_AWAY);

    assert!(server.wait(), "the server exited with a failure");
    server.log_line("dhumbal server stopped");
}

/// Regression: the server waited for ever on one client that had sent half a request's headers
/// (or half its body), long after SIGTERM. An HTTP connection now gets the same shutdown deadline
/// as everything else: the process exits, with success, however the client behaves.
#[tokio::test]
async fn sigterm_is_not_held_up_by_a_half_sent_request() {
    let mut server = Server::start();
    let addr = server.addr();
    // Half the headers of one request, and half the body of another.
    let mut headers = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    headers
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .expect("send");
    let mut body = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    body.write_all(
        b"POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
          Content-Length: 100\r\n\r\n{\"preset\":",
    )
    .await
    .expect("send");
    // Both are being served (the body's request is in its handler, reading).
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.terminate();
    assert!(server.wait(), "the server exited with a failure");
    server.log_line("dhumbal server stopped");
    drop((headers, body));
}
