//! The checks list at scale (issue 18; docs/benchmarks.md, "The checks list"): how long
//! `GET /api/v3/checks/` takes for a project of 1,000 checks, for a read-write and for a
//! read-only key.
//!
//! For each binary named it starts the real server (`BIN serve`, a separate process, on
//! 127.0.0.1 with a fresh data directory and `--api-rate-limit 0`), adds two integrations
//! (`BIN channel add`, through the control socket), creates CHECKS checks through the API (a
//! mix: simple checks with various timeouts, cron checks in a few time zones, two tags and
//! both integrations each, some with a description, a quiet window, a run bound, a parent or
//! their own events for an integration),
//! pings most of them (a few are left running after a start ping, some fail, some are paused,
//! some stay new), warms up, then GETs the list REQUESTS times one after another over one
//! keep-alive connection with the read-write key, and again with the read-only key. Each time
//! is the round trip from sending the request to having the whole body, so loopback and the
//! client's reading are in it. Given several binaries (an A/B), it runs them in turn ROUNDS
//! times (A, B, A, B, ...) so that whatever else the machine does falls on both alike.
//!
//! ```sh
//! cargo build --release && cargo run --release --example list-bench
//! cargo run --release --example list-bench -- /tmp/a/overdue target/release/overdue
//! # [BIN ...] (default target/release/overdue); environment: BENCH_CHECKS (1000),
//! # BENCH_REQUESTS (200), BENCH_ROUNDS (1 for one binary, 2 for several), BENCH_DATA_DIR
//! # (parent of the data directories), BENCH_HOLD=1 (print the server's pid and wait for
//! # Enter before measuring, to attach `perf record -p PID`)
//! ```
//!
//! It prints one line per binary, round and key: the binary's label (A, B, ...), the key,
//! p50, p90, p99 and max in milliseconds, and the body's size in bytes. A measurement, never
//! a test: it fails only when something does not work.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

type Error = Box<dyn std::error::Error>;

const TAGS: &[&str] = &[
    "prod", "staging", "db", "backup", "web", "batch", "eu", "us",
];
const CRONS: &[(&str, &str)] = &[
    ("30 2 * * *", "Europe/Riga"),
    ("*/15 * * * *", "UTC"),
    ("0 9-17 * * 1-5", "America/New_York"),
    ("15 3 * * 0", "Asia/Tokyo"),
];

struct Server {
    child: Child,
    base: String,
    rw: String,
    ro: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM, so that it stops as in production.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// `bin serve` on a fresh `data` directory: its address and keys, from what it prints on a
/// first start.
fn start(bin: &str, data: &Path) -> Result<Server, Error> {
    let mut child = Command::new(bin)
        .arg("--data")
        .arg(data)
        .args(["serve", "--listen", "127.0.0.1:0", "--api-rate-limit", "0"])
        .env_remove("OVERDUE_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    for stream in [
        Box::new(stdout) as Box<dyn std::io::Read + Send>,
        Box::new(stderr),
    ] {
        let tx = tx.clone();
        // Keeps reading after the start too, so that the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let (mut base, mut rw, mut ro) = (None, None, None);
    let deadline = Instant::now() + Duration::from_secs(20);
    while base.is_none() || rw.is_none() || ro.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .map_err(|_| "the server did not start")?;
        if let Some(k) = line.split("read-write API key:").nth(1) {
            rw = Some(k.trim().to_string());
        }
        if let Some(k) = line.split("read-only API key:").nth(1) {
            ro = Some(k.trim().to_string());
        }
        if let Some(b) = line.split("listening on ").nth(1) {
            base = b.split_whitespace().next().map(str::to_string);
        }
    }
    Ok(Server {
        child,
        base: base.ok_or("no address")?,
        rw: rw.ok_or("no read-write key")?,
        ro: ro.ok_or("no read-only key")?,
    })
}

/// The body of check `i`'s create request.
fn spec(i: usize, first: Option<&str>) -> Value {
    let mut body = json!({
        "channels": "*",
        "name": format!("{} job {i}", TAGS[i % TAGS.len()]),
        "tags": format!("{} {}", TAGS[i % TAGS.len()], TAGS[(i / 3 + 1) % TAGS.len()]),
        "grace": 300 + 60 * (i % 5),
    });
    if i.is_multiple_of(4) {
        let (schedule, tz) = CRONS[(i / 4) % CRONS.len()];
        body["schedule"] = schedule.into();
        body["tz"] = tz.into();
        body["grace"] = 3600.into();
    } else {
        body["timeout"] = [300, 3600, 86_400][i % 3].into();
    }
    if i.is_multiple_of(3) {
        body["desc"] = format!("Nightly export number {i}; pages ops when it stops").into();
    }
    if i % 25 == 7 {
        body["quiet_schedule"] = "0 22 * * *".into();
        body["quiet_tz"] = "Europe/Riga".into();
        body["quiet_duration"] = 28_800.into();
    }
    if i % 10 == 9 {
        body["max_duration"] = 7200.into();
    }
    if let Some(parent) = first.filter(|_| i % 50 == 11) {
        body["parents"] = parent.into();
    }
    if i % 30 == 2 {
        body["channel_events"] = json!({"ops hook": "down,up,late"});
    }
    body
}

/// Creates the checks and pings them as [`spec`] and the module doc say.
async fn populate(client: &reqwest::Client, server: &Server, checks: usize) -> Result<(), Error> {
    let mut first: Option<String> = None;
    for i in 0..checks {
        let made: Value = client
            .post(format!("{}/api/v3/checks/", server.base))
            .header("X-Api-Key", &server.rw)
            .json(&spec(i, first.as_deref()))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let uuid = made["uuid"].as_str().ok_or("no uuid")?.to_string();
        let ping = |suffix: &str| format!("{}/ping/{uuid}{suffix}", server.base);
        let pings: &[String] = match i % 20 {
            // Never pinged: new.
            0 | 5 => &[],
            // Running now.
            1 | 13 => &[ping("/start")],
            // Failed.
            2 => &[ping("/fail")],
            // A run with a duration.
            3 | 8 | 17 => &[ping("/start"), ping("")],
            _ => &[ping("")],
        };
        for url in pings {
            client.get(url).send().await?.error_for_status()?;
        }
        if i % 20 == 6 {
            client
                .post(format!("{}/api/v3/checks/{uuid}/pause", server.base))
                .header("X-Api-Key", &server.rw)
                .send()
                .await?
                .error_for_status()?;
        }
        first.get_or_insert(uuid);
    }
    Ok(())
}

/// One list request: its round trip and the body's length.
async fn list(client: &reqwest::Client, url: &str, key: &str) -> Result<(Duration, usize), Error> {
    let t = Instant::now();
    let body = client
        .get(url)
        .header("X-Api-Key", key)
        .send()
        .await?
        .error_for_status()?
        .bytes()
        .await?;
    Ok((t.elapsed(), body.len()))
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)].as_secs_f64() * 1e3
}

fn env_usize(name: &str, default: usize) -> Result<usize, Error> {
    match std::env::var(name) {
        Ok(v) => Ok(v.parse()?),
        Err(_) => Ok(default),
    }
}

/// One round of `bin`: prints a line per key.
async fn round(bin: &str, label: &str, checks: usize, requests: usize) -> Result<(), Error> {
    let parent = std::env::var("BENCH_DATA_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    let dir = tempfile::tempdir_in(parent)?;
    let data = dir.path().join("data");
    let server = start(bin, &data)?;
    for channel in [
        &[
            "--kind",
            "email",
            "--name",
            "ops mail",
            "--value",
            "ops@example.org",
        ],
        &[
            "--kind",
            "webhook",
            "--name",
            "ops hook",
            "--url",
            "https://chat.example/hook",
        ],
    ] {
        let out = Command::new(bin)
            .arg("--data")
            .arg(&data)
            .args(["channel", "add"])
            .args(channel)
            .output()?;
        if !out.status.success() {
            return Err(format!("channel add: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
    }
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()?;
    populate(&client, &server, checks).await?;
    let url = format!("{}/api/v3/checks/", server.base);
    if std::env::var("BENCH_HOLD").is_ok_and(|v| v == "1") {
        println!("server pid {}; press Enter to measure", server.child.id());
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
    }
    for (name, key) in [("rw", &server.rw), ("ro", &server.ro)] {
        for _ in 0..10 {
            list(&client, &url, key).await?;
        }
        let mut times = Vec::with_capacity(requests);
        let mut size = 0;
        for _ in 0..requests {
            let (t, len) = list(&client, &url, key).await?;
            times.push(t);
            size = len;
        }
        times.sort();
        println!(
            "{label:<3} {name}  {:>8.2} {:>8.2} {:>8.2} {:>8.2} {size:>9}",
            percentile(&times, 0.5),
            percentile(&times, 0.9),
            percentile(&times, 0.99),
            percentile(&times, 1.0),
        );
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    // reqwest is built without a TLS provider of its own, as in the server.
    overdue::tls::install_provider();
    let mut bins: Vec<String> = std::env::args().skip(1).collect();
    if bins.is_empty() {
        bins.push("target/release/overdue".into());
    }
    let checks = env_usize("BENCH_CHECKS", 1000)?;
    let requests = env_usize("BENCH_REQUESTS", 200)?.max(1);
    let rounds = env_usize("BENCH_ROUNDS", if bins.len() > 1 { 2 } else { 1 })?;
    let labels: Vec<String> = (0..bins.len())
        .map(|i| char::from(b'A' + (i % 26) as u8).to_string())
        .collect();
    for (bin, label) in bins.iter().zip(&labels) {
        println!("{label} = {bin}");
    }
    println!(
        "{} cores; {checks} checks, {requests} sequential GET /api/v3/checks/ per key, \
         keep-alive; times in ms",
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    println!(
        "bin key  {:>8} {:>8} {:>8} {:>8} {:>9}",
        "p50", "p90", "p99", "max", "bytes"
    );
    for _ in 0..rounds {
        for (bin, label) in bins.iter().zip(&labels) {
            round(bin, label, checks, requests).await?;
        }
    }
    Ok(())
}
