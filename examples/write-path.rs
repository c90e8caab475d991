//! The write path's cost (issue 18): bytes written to disk per acknowledged ping when pings
//! arrive one at a time (the normal case: cron jobs do not arrive in bursts), the latency of
//! each such ping, and what the service costs when nothing happens (context switches and CPU
//! time over 30 s of idle).
//!
//! It starts the real binary (`overdue serve`, a separate process, on 127.0.0.1 with a fresh
//! data directory), creates CHECKS checks through the API and pings each once, lets the
//! service settle, then sends PINGS pings one at a time over one keep-alive connection, spread
//! round-robin over the checks. `write_bytes` of `/proc/PID/io` is read before the first ping,
//! right after the last one ("at ack"), and once the background work the pings caused is done
//! (no change for 3 s: "settled"); each divided by PINGS. Idle is then measured with
//! `perf stat -e context-switches -p PID -- sleep 30` (when perf is installed) and the
//! process's CPU time from `/proc/PID/stat` over the same 30 s.
//!
//! ```sh
//! cargo build --release && cargo run --release --example write-path -- target/release/overdue 2000 1000
//! # BIN [PINGS] [CHECKS]; BENCH_DATA_DIR puts the data directory on another file system;
//! # BENCH_RATE=17 paces the pings (1,000 checks pinging every minute send 17 a second)
//! ```
//!
//! A measurement, never a test: it fails only when something does not work.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

/// A field of `/proc/PID/io`.
fn proc_io(pid: u32, field: &str) -> Result<u64, Error> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io"))?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .strip_prefix(": ")?
                .trim()
                .parse()
                .ok()
        })
        .ok_or_else(|| format!("no {field} in /proc/{pid}/io").into())
}

/// User plus system CPU time of the process, in clock ticks (`/proc/PID/stat` fields 14, 15).
fn cpu_ticks(pid: u32) -> Result<u64, Error> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name may hold spaces: the fields count from the last ')'.
    let rest = &text[text.rfind(')').ok_or("bad stat")? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Ok(fields[11].parse::<u64>()? + fields[12].parse::<u64>()?)
}

/// `write_bytes` once it has not changed for `quiet` (at most `limit`).
fn settled_writes(pid: u32, quiet: Duration, limit: Duration) -> Result<u64, Error> {
    let start = Instant::now();
    let mut last = proc_io(pid, "write_bytes")?;
    let mut since = Instant::now();
    while start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(250));
        let now = proc_io(pid, "write_bytes")?;
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= quiet {
            break;
        }
    }
    Ok(last)
}

struct Server {
    child: Child,
    base: String,
    key: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM, so it stops as in production.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// `bin serve` on a fresh `data` directory: its address and read-write key, from its log.
fn start(bin: &str, data: &Path) -> Result<Server, Error> {
    let mut child = Command::new(bin)
        .arg("--data")
        .arg(data)
        .args(["serve", "--listen", "127.0.0.1:0", "--api-rate-limit", "0"])
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
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let (mut base, mut key) = (None, None);
    let deadline = Instant::now() + Duration::from_secs(20);
    while base.is_none() || key.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .map_err(|_| "the server did not start")?;
        if let Some(k) = line.split("read-write API key:").nth(1) {
            key = Some(k.trim().to_string());
        }
        if let Some(b) = line.split("listening on ").nth(1) {
            base = b.split_whitespace().next().map(str::to_string);
        }
    }
    Ok(Server {
        child,
        base: base.ok_or("no address")?,
        key: key.ok_or("no key")?,
    })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let bin = args
        .next()
        .unwrap_or_else(|| "target/release/overdue".to_string());
    let pings: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(2000);
    let checks: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(1000);
    // Pings per second (BENCH_RATE); unset: each as soon as the one before was answered.
    let rate: Option<f64> = std::env::var("BENCH_RATE")
        .ok()
        .map(|r| r.parse())
        .transpose()?;
    let parent = std::env::var("BENCH_DATA_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    let dir = tempfile::tempdir_in(parent)?;
    let server = start(&bin, &dir.path().join("data"))?;
    let pid = server.child.id();
    overdue::tls::install_provider();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()?;

    let mut uuids = Vec::with_capacity(checks);
    for i in 0..checks {
        let made: serde_json::Value = client
            .post(format!("{}/api/v3/checks/", server.base))
            .header("X-Api-Key", &server.key)
            .json(&serde_json::json!({"name": format!("job {i}"), "timeout": 3600, "grace": 300}))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let uuid = made["uuid"].as_str().ok_or("no uuid")?.to_string();
        client
            .get(format!("{}/ping/{uuid}", server.base))
            .send()
            .await?
            .error_for_status()?;
        uuids.push(uuid);
    }
    // A second ping each: the first one of each check was a flip (new to up), written durably
    // at once; from the second on they take the ping path being measured, and the ping log's
    // segment (made when the first ping needs it, 4 MiB of zeros, then used for tens of
    // thousands of pings) exists before the measurement starts.
    for uuid in &uuids {
        client
            .get(format!("{}/ping/{uuid}", server.base))
            .send()
            .await?
            .error_for_status()?;
    }
    println!("{checks} checks made and pinged twice; settling");
    let before = settled_writes(pid, Duration::from_secs(7), Duration::from_secs(60))?;

    let pause = rate.map(|r| Duration::from_secs_f64(1.0 / r));
    let mut latencies = Vec::with_capacity(pings);
    let started = Instant::now();
    for i in 0..pings {
        let url = format!("{}/ping/{}", server.base, uuids[i % uuids.len()]);
        if let Some(pause) = pause {
            // Paced from the start, so a slow answer does not slow the pace down.
            let due = started + pause.mul_f64(i as f64);
            tokio::time::sleep(due.saturating_duration_since(Instant::now())).await;
        }
        let t = Instant::now();
        client.get(url).send().await?.error_for_status()?;
        latencies.push(t.elapsed());
    }
    let elapsed = started.elapsed();
    let at_ack = proc_io(pid, "write_bytes")?;
    let settled = settled_writes(pid, Duration::from_secs(3), Duration::from_secs(60))?;
    latencies.sort();
    let per = |after: u64| (after - before) as f64 / pings as f64;
    println!(
        "{pings} pings one at a time in {:.2} s: latency p50 {:.2} ms, p99 {:.2} ms",
        elapsed.as_secs_f64(),
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
    );
    println!(
        "bytes written per ping: {:.0} at ack, {:.0} settled ({:.1} KiB)",
        per(at_ack),
        per(settled),
        per(settled) / 1024.0
    );

    // Idle: 30 s with nothing to do.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let ticks = cpu_ticks(pid)?;
    let perf = Command::new("perf")
        .args([
            "stat",
            "-e",
            "context-switches",
            "-p",
            &pid.to_string(),
            "--",
            "sleep",
            "30",
        ])
        .output()
        .ok()
        .filter(|out| out.status.success());
    if perf.is_none() {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }
    let ticks = cpu_ticks(pid)? - ticks;
    // Linux reports /proc times in USER_HZ, 100 per second on every common configuration.
    println!("idle 30 s: CPU {} ms", ticks * 10);
    let switches = perf.and_then(|out| {
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        let line = text
            .lines()
            .find(|l| l.contains("context-switches"))?
            .to_string();
        line.split_whitespace()
            .next()?
            .replace(',', "")
            .parse::<u64>()
            .ok()
    });
    match switches {
        Some(n) => println!("idle 30 s: {n} context switches ({:.1}/s)", n as f64 / 30.0),
        None => println!("idle: perf is not available, context switches not counted"),
    }
    drop(server);
    Ok(())
}
