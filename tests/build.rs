//! Tells the tests which outside programs this machine lacks, so that a test that needs one is
//! `#[ignore]`d with the reason and shows as ignored in the runner's own summary, not as passed:
//!
//! - `missing_chromium`: `/usr/bin/chromium` or `/usr/bin/chromedriver` is not there (the
//!   browser tests);
//! - `missing_redis`: no `redis-server` on `PATH` (the Redis store and cluster tests);
//! - `missing_haproxy`: no `haproxy` on `PATH` (the cluster and spoofing tests);
//! - `not_root`: the build does not run as root (the tests that mount a tmpfs or a read-only
//!   bind mount).
//!
//! With `CI=true` none is set: every test runs, and one whose program is missing fails.

use std::path::{Path, PathBuf};

fn main() {
    for cfg in [
        "missing_chromium",
        "missing_redis",
        "missing_haproxy",
        "not_root",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=PATH");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    // A program installed or removed changes its folder: look again then.
    for dir in dirs.iter().chain([&PathBuf::from("/usr/bin")]) {
        if dir.is_dir() {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        return;
    }
    let on_path = |program: &str| dirs.iter().any(|dir| dir.join(program).is_file());
    let missing = [
        (
            "missing_chromium",
            !(Path::new("/usr/bin/chromium").is_file()
                && Path::new("/usr/bin/chromedriver").is_file()),
        ),
        ("missing_redis", !on_path("redis-server")),
        ("missing_haproxy", !on_path("haproxy")),
        ("not_root", !is_root()),
    ];
    for (cfg, missing) in missing {
        if missing {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}

/// Whether this process runs as root (its real user id, from `/proc/self/status`).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next())
            == Some("0")
    })
}
