//! The server under test as a child process (or one at `--connect`), and what `/proc` and `/metrics` say of it.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dhumbal_tests::http;

use crate::Common;

/// The server as a child process, killed when dropped (and its data folder removed); or, with
/// `--connect`, a server already running elsewhere.
pub(crate) struct Server {
    /// The process; `None` for a server this program did not start.
    child: Option<Child>,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    /// Its SQLite log's folder, if it keeps one.
    data_dir: Option<PathBuf>,
    /// With `--callgrind`, the folder of callgrind's counts.
    counts_dir: Option<PathBuf>,
    /// With `--callgrind-keep`, where each count read is copied.
    keep_dir: Option<PathBuf>,
}

/// The function whose run callgrind counts with `--callgrind`: the start of every thread the
/// server spawns (`std`'s `thread_start`), so the whole of each tokio worker (its tasks, and its
/// polling of the sockets and the timers) and of any other thread (the SQLite store's writer
/// and checkpointer); not the main thread, which only waits for the runtime. It must be a
/// function of its own in the release binary: with one codegen unit the optimiser inlined
/// `worker::Context::run`, and with fat LTO (`Cargo.toml`) `worker::run`, each counted before,
/// and callgrind then counted nothing (`nm -C target/release/dhumbal-server | grep thread_start`).
const COUNTED: &str = "*Thread*::new::thread_start";

/// Moves every thread of this program to the CPUs after the first (`--pin`), leaving CPU 0 to
/// the server; once (after that this program sees only its own CPUs).
pub(crate) fn pin_self() -> Result<(), String> {
    static PINNED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    PINNED.get_or_init(pin_once).clone()
}

/// [`pin_self`]'s work.
pub(crate) fn pin_once() -> Result<(), String> {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if cpus < 2 {
        return Err(
            "--pin needs two CPUs or more: one for the server, the rest for the load".into(),
        );
    }
    let status = Command::new("taskset")
        .args(["-a", "-p", "-c", &format!("1-{}", cpus - 1)])
        .arg(std::process::id().to_string())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("--pin runs `taskset` (util-linux), which would not start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`taskset` could not pin the load generator: {status}"
        ))
    }
}

impl Server {
    /// Starts the server binary on a free loopback port with bots that wait `--bot-delay-ms`
    /// (none by default), room for `rooms`
    /// rooms and `clients` connections, no per-connection message rate limit (the players here
    /// act as fast as the server answers, faster than the limit allows a person), and
    /// warnings-only logs, and waits until it answers its readiness check.
    pub(crate) async fn start(
        common: &Common,
        rooms: usize,
        clients: usize,
        sqlite: bool,
    ) -> Result<Server, String> {
        if let Some(addr) = common.connect {
            let server = Server {
                child: None,
                addr,
                data_dir: None,
                counts_dir: None,
                keep_dir: None,
            };
            server.until_ready().await?;
            return Ok(server);
        }
        let binary = match &common.server {
            Some(path) => path.clone(),
            None => std::env::current_exe()
                .map_err(|e| e.to_string())?
                .with_file_name("dhumbal-server"),
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let data_dir = sqlite
            .then(|| std::env::temp_dir().join(format!("loadgen-{}-{port}", std::process::id())));
        let store: Vec<String> = match &data_dir {
            Some(dir) => vec!["--data-dir".into(), dir.display().to_string()],
            None => vec!["--store".into(), "memory".into()],
        };
        let counts_dir = common.callgrind.then(|| {
            std::env::temp_dir().join(format!("loadgen-counts-{}-{port}", std::process::id()))
        });
        // The program started, and the arguments before the server's own.
        let mut program: Vec<std::ffi::OsString> = Vec::new();
        if common.pin {
            pin_self()?;
            program.extend(["taskset".into(), "-c".into(), "0".into()]);
        }
        if let Some(dir) = &counts_dir {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            program.extend([
                "valgrind".into(),
                "--tool=callgrind".into(),
                "--quiet".into(),
                format!("--callgrind-out-file={}/callgrind.%p", dir.display()).into(),
                "--collect-atstart=no".into(),
                format!("--toggle-collect={COUNTED}").into(),
            ]);
            if common.cache_sim {
                program.extend(CACHES.map(Into::into));
            }
        }
        program.push(binary.clone().into());
        let mut command = Command::new(&program[0]);
        command.args(&program[1..]);
        let child = command
            .args(&store)
            .args([
                "--addr",
                &addr.to_string(),
                "--bot-delay-ms",
                &common.bot_delay_ms.to_string(),
                "--ws-echo",
            ])
            .args(["--max-rooms", &(rooms + 16).to_string()])
            .args(["--max-connections", &(clients + 64).to_string()])
            .args([
                "--messages-per-sec",
                "1000000",
                "--message-burst",
                "1000000",
            ])
            // Every client comes from a few loopback addresses, and creates rooms at machine
            // speed: the per-address caps are for people.
            .args([
                "--max-connections-per-address",
                &(clients + 64).to_string(),
                "--room-creations-per-minute",
                &(rooms + 16).to_string(),
                "--max-rooms-per-address",
                &(rooms + 16).to_string(),
            ])
            // The idle sockets never say hello: they are held, not closed after 10 s.
            .args(["--hello-timeout", "0s"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let server = Server {
            child: Some(child),
            addr,
            data_dir,
            counts_dir,
            keep_dir: common.callgrind_keep.clone(),
        };
        server.until_ready().await?;
        Ok(server)
    }

    /// Waits until the server answers its readiness check (30 s at most; 180 s under
    /// callgrind).
    async fn until_ready(&self) -> Result<(), String> {
        let addr = self.addr;
        let limit = if self.counts_dir.is_some() { 180 } else { 30 };
        let deadline = Instant::now() + Duration::from_secs(limit);
        loop {
            let up = tokio::task::spawn_blocking(move || {
                dhumbal_server::health::check(addr, "/readyz").is_ok()
            })
            .await
            .unwrap_or(false);
            if up {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err("the server did not become ready".into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// With `--callgrind`, sets the server's count to zero: what it ran before (the set-up)
    /// is not counted.
    pub(crate) fn count_from_now(&self) -> Result<(), String> {
        if self.counts_dir.is_some() {
            self.callgrind_control("-z")?;
        }
        Ok(())
    }

    /// With `--callgrind`, what the server's threads ran since [`Server::count_from_now`]:
    /// callgrind writes its counts out, and this reads their totals.
    pub(crate) fn counted(&self) -> Result<Option<Counts>, String> {
        let Some(dir) = &self.counts_dir else {
            return Ok(None);
        };
        self.callgrind_control("-d")?;
        // Each dump is `callgrind.PID.N`: the last is the one just written.
        let prefix = format!("callgrind.{}.", self.pid());
        let last = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let n: u32 = name.strip_prefix(&prefix)?.parse().ok()?;
                Some((n, entry.path()))
            })
            .max()
            .ok_or("callgrind wrote no count")?;
        let text = std::fs::read_to_string(&last.1).map_err(|e| e.to_string())?;
        if let Some(keep) = &self.keep_dir {
            std::fs::create_dir_all(keep).map_err(|e| format!("{}: {e}", keep.display()))?;
            let file = last.1.file_name().ok_or("callgrind's count has no name")?;
            let kept = keep.join(file);
            std::fs::copy(&last.1, &kept).map_err(|e| format!("{}: {e}", kept.display()))?;
            println!("callgrind's count kept: {}", kept.display());
        }
        callgrind_counts(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", last.1.display()))
    }

    /// Runs `callgrind_control FLAG PID` (Valgrind's), which waits until callgrind has done it.
    fn callgrind_control(&self, flag: &str) -> Result<(), String> {
        let out = Command::new("callgrind_control")
            .args([flag, &self.pid().to_string()])
            .output()
            .map_err(|e| format!("`callgrind_control` (Valgrind's) would not start: {e}"))?;
        let said = String::from_utf8_lossy(&out.stdout);
        if out.status.success() && said.contains("OK") {
            Ok(())
        } else {
            Err(format!("callgrind_control {flag}: {}", said.trim()))
        }
    }

    /// The server's process id; 0 for a server this program did not start (whose CPU and memory
    /// then read as 0).
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The server's resident memory now, and its peak, in KiB (from `/proc/PID/status`).
    pub(crate) fn memory(&self) -> (u64, u64) {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
        for dir in [&self.data_dir, &self.counts_dir].into_iter().flatten() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// What callgrind counted in a run: its instructions and, with `--cache-sim`, the simulated
/// caches' misses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Instructions run (`Ir`).
    pub(crate) instructions: u64,
    /// The misses, with `--cache-sim`.
    pub(crate) misses: Option<Misses>,
}

/// Misses of callgrind's simulated caches ([`CACHES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Misses {
    /// Instruction fetches that missed the first-level instruction cache (`I1mr`).
    pub(crate) l1_instruction: u64,
    /// Data reads and writes that missed the first-level data cache (`D1mr` + `D1mw`).
    pub(crate) l1_data: u64,
    /// Instruction fetches, data reads and writes that missed the last level too (`ILmr` +
    /// `DLmr` + `DLmw`): each went to memory, or here to the third level that the two cores
    /// share with whatever else the host runs.
    pub(crate) last_level: u64,
}

/// The caches callgrind simulates with `--cache-sim`, the same whatever the machine, so that
/// counts compare across machines: this machine's first levels (32 KiB, 8-way, 64-byte lines)
/// and, as the last, its per-core second level (2 MiB, 16-way), the one a room's data must stay
/// in between its actions.
pub(crate) const CACHES: [&str; 4] = [
    "--cache-sim=yes",
    "--I1=32768,8,64",
    "--D1=32768,8,64",
    "--LL=2097152,16,64",
];

/// The counts of a callgrind output: its `summary:` line (or `totals:`), read by the names of
/// its `events:` line. An instruction count of 0 is an error: the counted function
/// ([`COUNTED`]) never ran, so it is not in the binary under that name (inlined in this build).
pub(crate) fn callgrind_counts(text: &str) -> Result<Counts, String> {
    let names: Vec<&str> = text
        .lines()
        .find_map(|l| l.strip_prefix("events:"))
        .ok_or("no events in callgrind's output")?
        .split_whitespace()
        .collect();
    let values: Vec<u64> = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .ok_or("no total in callgrind's output")?
        .split_whitespace()
        .map(|n| n.parse().map_err(|e| format!("a total of {n:?}: {e}")))
        .collect::<Result<_, _>>()?;
    let count = |name: &str| -> Result<u64, String> {
        let at = names
            .iter()
            .position(|n| *n == name)
            .ok_or_else(|| format!("callgrind's output counts no {name}"))?;
        // Callgrind leaves out the trailing events of a cost line that are 0 (a short run
        // with no last-level write miss ends its total at `DLmr`).
        Ok(values.get(at).copied().unwrap_or(0))
    };
    let instructions = count("Ir")?;
    if instructions == 0 {
        return Err(format!(
            "callgrind counted no instructions: `{COUNTED}` never ran in the server \
             (inlined in this build? `nm -C` the binary)"
        ));
    }
    let misses = if names.len() > 1 {
        Some(Misses {
            l1_instruction: count("I1mr")?,
            l1_data: count("D1mr")? + count("D1mw")?,
            last_level: count("ILmr")? + count("DLmr")? + count("DLmw")?,
        })
    } else {
        None
    };
    Ok(Counts {
        instructions,
        misses,
    })
}

/// The server's `/metrics` text.
pub(crate) async fn metrics_text(server: SocketAddr) -> Result<String, String> {
    let (status, text) = http::exchange(local(), server, "GET", "/metrics", &[], "").await?;
    if status != 200 {
        return Err(format!("GET /metrics: {status}"));
    }
    Ok(text)
}

/// The address requests to the server come from.
pub(crate) fn local() -> std::net::IpAddr {
    Ipv4Addr::LOCALHOST.into()
}

/// A quantile of a Prometheus histogram in the metrics text, in seconds: the upper bound of the
/// first bucket that holds it (so an upper estimate), and how many values it holds. `series` is
/// the histogram's name, with its labels if it has any (`name{label="value"}`).
pub(crate) fn histogram_quantile(text: &str, series: &str, quantile: f64) -> Option<(f64, u64)> {
    let prefix = match series.split_once('{') {
        Some((name, labels)) => format!("{name}_bucket{{{},le=\"", labels.trim_end_matches('}')),
        None => format!("{series}_bucket{{le=\""),
    };
    let mut buckets: Vec<(f64, u64)> = text
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(&prefix)?;
            let (le, count) = rest.split_once("\"} ")?;
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            Some((le, count.trim().parse().ok()?))
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = buckets.last()?.1;
    let wanted = (total as f64 * quantile).ceil() as u64;
    buckets
        .iter()
        .find(|(_, count)| *count >= wanted.max(1))
        .map(|(le, _)| (*le, total))
}

/// The CPU time (user and system) a process has used, in seconds, from `/proc/PID/stat`
/// (in clock ticks of 1/100 s, as on every Linux x86-64 build).
pub(crate) fn cpu_seconds(pid: u32) -> f64 {
    let (user, system) = cpu_split(pid);
    user + system
}

/// The user and the system CPU time a process has used, in seconds (see [`cpu_seconds`]).
pub(crate) fn cpu_split(pid: u32) -> (f64, f64) {
    stat_cpu_split(&std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default())
}

/// The CPU time of the SQLite store's writer thread and of its checkpointer in process `pid`,
/// in seconds, found by their names in `/proc/PID/task/*/comm` (`dhumbal-store`,
/// `dhumbal-checkpoint` cut to 15 bytes); 0 for a thread that is not there.
pub(crate) fn store_cpu_seconds(pid: u32) -> (f64, f64) {
    let mut found = (0.0, 0.0);
    if pid == 0 {
        return found;
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return found;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let seconds =
            || stat_cpu_seconds(&std::fs::read_to_string(path.join("stat")).unwrap_or_default());
        match comm.trim_end() {
            "dhumbal-store" => found.0 += seconds(),
            "dhumbal-checkpo" => found.1 += seconds(),
            _ => {}
        }
    }
    found
}

/// The user and system CPU time in a `/proc/.../stat` line, in seconds.
pub(crate) fn stat_cpu_seconds(stat: &str) -> f64 {
    let (user, system) = stat_cpu_split(stat);
    user + system
}

/// The user and the system CPU time in a `/proc/.../stat` line, each in seconds.
pub(crate) fn stat_cpu_split(stat: &str) -> (f64, f64) {
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (ticks(11) as f64 / 100.0, ticks(12) as f64 / 100.0)
}
