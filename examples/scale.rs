//! Scale harness for the deadline engine (docs/benchmarks.md, "Deadlines at scale").
//!
//! `cargo run --release --example scale -- deadlines N` (`RULES=1`: each with a quiet window
//! that stays closed and a parent that stays up) creates N up checks whose down times
//! fall within the next minute, starts the monitor, keeps pinging 1,000 other checks as fast
//! as 64 concurrent clients can, and reports the delay from each deadline until its down flip
//! is committed (observed by scanning the state every 20 ms, so delays are upper bounds).
//!
//! `cargo run --release --example scale -- writer [N] [SECS]` measures the ping write path
//! alone (no HTTP): 64 concurrent clients record pings round-robin over N checks (1,000) for
//! SECS seconds (10) and it reports pings/s and latency percentiles.
//!
//! `cargo run --release --example scale -- populate DIR N` writes N checks into DIR's data
//! file, for measuring `overdue serve`'s start-up time and memory on a large file.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use jiff::{SignedDuration, Timestamp};
use overdue::model::signal::{Signal, Target};
use overdue::model::{Check, StoredStatus};
use overdue::service::pings::PingRequest;
use overdue::service::{Clock, Service, ServiceConfig};
use uuid::Uuid;

const CHUNK: usize = 5_000;

/// Creates `n` checks in `project`; `shape` sets each one's fields.
async fn populate(
    service: &Service,
    project: Uuid,
    n: usize,
    shape: impl Fn(usize, &mut Check) + Clone + Send + 'static,
) -> Vec<Uuid> {
    let mut all = Vec::with_capacity(n);
    for start in (0..n).step_by(CHUNK) {
        let end = (start + CHUNK).min(n);
        let shape = shape.clone();
        let made = service
            .write(move |ctx| {
                let mut made = Vec::with_capacity(end - start);
                for i in start..end {
                    let seq = ctx.state.next_seq();
                    let mut c = Check::new(Uuid::new_v4(), project, seq, ctx.now, Uuid::new_v4());
                    c.name = format!("check-{i}");
                    c.slug = format!("check-{i}");
                    c.tags = "scale bench".into();
                    shape(i, &mut c);
                    ctx.txn.put_check(&c, None)?;
                    made.push(c.uuid);
                    ctx.state.put_check(c);
                }
                Ok(made)
            })
            .await
            .expect("populate");
        all.extend(made);
    }
    all
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Concurrent clients of the ping path, without HTTP.
const CLIENTS: usize = 64;

/// Starts [`CLIENTS`] tasks that record pings round-robin over `checks` until `stop`, counting
/// them in `pings` and, when given, each ping's latency in µs.
fn spawn_pingers(
    service: &Arc<Service>,
    checks: &[Uuid],
    stop: &Arc<AtomicBool>,
    pings: &Arc<AtomicU64>,
    latencies: Option<&Arc<std::sync::Mutex<Vec<u32>>>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let checks: Arc<[Uuid]> = checks.into();
    (0..CLIENTS)
        .map(|k| {
            let (service, stop, pings, checks) =
                (service.clone(), stop.clone(), pings.clone(), checks.clone());
            let latencies = latencies.cloned();
            tokio::spawn(async move {
                let mut i = k;
                let mut mine = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let req = PingRequest {
                        target: Target::Uuid(checks[i % checks.len()]),
                        create: false,
                        signal: Signal::Success,
                        method: "GET".into(),
                        scheme: "http".into(),
                        remote_addr: Some("127.0.0.1".into()),
                        ua: "bench".into(),
                        rid: None,
                        body: Bytes::new(),
                    };
                    let t = Instant::now();
                    if service.record_ping(req).await.is_ok() {
                        pings.fetch_add(1, Ordering::Relaxed);
                        mine.push(t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
                    }
                    i += CLIENTS;
                }
                if let Some(all) = latencies {
                    all.lock().expect("latencies").extend(mine);
                }
            })
        })
        .collect()
}

/// The write path alone: [`CLIENTS`] clients pinging `n` checks for `secs` seconds.
async fn writer(n: usize, secs: u64) {
    let dir = tempfile::tempdir().expect("dir");
    let service =
        Arc::new(Service::open(dir.path(), ServiceConfig::default(), Clock::System).expect("open"));
    let project = service.add_project("scale").await.expect("project").uuid;
    let checks = populate(&service, project, n, |_, c| c.timeout = 3600).await;
    let stop = Arc::new(AtomicBool::new(false));
    let pings = Arc::new(AtomicU64::new(0));
    let latencies = Arc::new(std::sync::Mutex::new(Vec::new()));
    let started = Instant::now();
    let clients = spawn_pingers(&service, &checks, &stop, &pings, Some(&latencies));
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        let _ = c.await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut lat: Vec<f64> = latencies
        .lock()
        .expect("latencies")
        .iter()
        .map(|&us| f64::from(us) / 1000.0)
        .collect();
    lat.sort_by(f64::total_cmp);
    println!(
        "{} pings to {n} checks from {CLIENTS} clients in {elapsed:.1} s: {:.0}/s; latency p50 {:.2} ms, p99 {:.2} ms; {} unfolded, {} journal entries in the file",
        pings.load(Ordering::Relaxed),
        pings.load(Ordering::Relaxed) as f64 / elapsed,
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        service.read(overdue::service::State::journal_len),
        service.journal_len().unwrap_or(0),
    );
}

async fn deadlines(n: usize) {
    let dir = tempfile::tempdir().expect("dir");
    let service =
        Arc::new(Service::open(dir.path(), ServiceConfig::default(), Clock::System).expect("open"));
    let project = service.add_project("scale").await.expect("project").uuid;
    let t0 = Instant::now();
    // Up checks with timeout 60 s and grace 60 s, last pinged so that they go down between
    // 10 and 70 seconds from now.
    let now = Timestamp::now();
    // `RULES=1`: every check carries a quiet window, closed during the run (New Year's Day),
    // and a parent that stays up, to measure what asking costs each flip.
    let rules = std::env::var("RULES").is_ok_and(|v| v == "1");
    let parent = populate(&service, project, 1, |_, c| c.timeout = 86_400).await[0];
    let window = rules.then(|| overdue::model::check::QuietWindow {
        schedule: "0 3 1 1 *".into(),
        tz: "UTC".into(),
        duration: 3600,
        compiled: overdue::schedule::Schedule::parse("0 3 1 1 *", "UTC")
            .ok()
            .map(Arc::new),
    });
    let checks = populate(&service, project, n, move |i, c| {
        c.timeout = 60;
        c.grace = 60;
        c.status = StoredStatus::Up;
        let offset_ms = 10_000 + (i as i64 * 60_000) / n as i64;
        c.last_ping =
            Some(now + SignedDuration::from_millis(offset_ms) - SignedDuration::from_secs(120));
        if let Some(window) = &window {
            c.quiet = Some(Box::new(window.clone()));
            c.parents = vec![parent];
        }
    })
    .await;
    let pinged = populate(&service, project, 1000, |_, c| c.timeout = 3600).await;
    println!(
        "created {} checks in {:.1} s, RSS {:.0} MiB",
        n + 1000,
        t0.elapsed().as_secs_f64(),
        rss_mib()
    );
    let monitor = overdue::monitor::start(service.clone());

    let stop = Arc::new(AtomicBool::new(false));
    let pings = Arc::new(AtomicU64::new(0));
    let clients = spawn_pingers(&service, &pinged, &stop, &pings, None);

    let started = Instant::now();
    let mut pending: Vec<(Uuid, Timestamp)> = service.read(|s| {
        checks
            .iter()
            .filter_map(|u| {
                s.check(u)
                    .and_then(overdue::model::Check::alert_after)
                    .map(|a| (*u, a))
            })
            .collect()
    });
    let mut delays = Vec::with_capacity(n);
    while !pending.is_empty() && started.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let seen = Timestamp::now();
        service.read(|s| {
            pending.retain(|(u, deadline)| match s.check(u) {
                Some(c) if c.status == StoredStatus::Down => {
                    delays.push(seen.duration_since(*deadline).as_secs_f64());
                    false
                }
                _ => true,
            });
        });
    }
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        let _ = c.await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    monitor.abort();
    delays.sort_by(f64::total_cmp);
    println!(
        "{} of {n} checks went down; delay from deadline to committed flip: p50 {:.3} s, p99 {:.3} s, max {:.3} s",
        delays.len(),
        percentile(&delays, 0.5),
        percentile(&delays, 0.99),
        delays.last().copied().unwrap_or(f64::NAN)
    );
    println!(
        "meanwhile {} pings were recorded ({:.0}/s); RSS {:.0} MiB",
        pings.load(Ordering::Relaxed),
        pings.load(Ordering::Relaxed) as f64 / elapsed,
        rss_mib()
    );
}

async fn populate_dir(dir: &str, n: usize) {
    let t0 = Instant::now();
    let service = Service::open(
        std::path::Path::new(dir),
        ServiceConfig::default(),
        Clock::System,
    )
    .expect("open");
    let project = match service.read(|s| s.project_by_name("scale").map(|p| p.uuid)) {
        Some(p) => p,
        None => service.add_project("scale").await.expect("project").uuid,
    };
    let now = Timestamp::now();
    populate(&service, project, n, move |i, c| {
        // A mix of shapes: simple checks, some up, a cron check in every ten.
        if i % 10 == 0 {
            c.kind = overdue::model::Kind::Cron;
            c.schedule = "*/5 * * * *".into();
            c.tz = "Europe/Riga".into();
        }
        if i % 2 == 0 {
            c.status = StoredStatus::Up;
            c.last_ping = Some(now);
            c.n_pings = 1;
        }
        c.timeout = 86_400;
    })
    .await;
    println!("wrote {n} checks in {:.1} s", t0.elapsed().as_secs_f64());
    service.close().await;
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("deadlines") => {
            deadlines(args.get(2).and_then(|n| n.parse().ok()).unwrap_or(100_000)).await;
        }
        Some("populate") => {
            let dir = args.get(2).expect("populate DIR N");
            populate_dir(
                dir,
                args.get(3)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1_000_000),
            )
            .await;
        }
        Some("writer") => {
            let n = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(1000);
            writer(n, args.get(3).and_then(|n| n.parse().ok()).unwrap_or(10)).await;
        }
        _ => eprintln!(
            "usage: scale deadlines [N] | scale populate DIR [N] | scale writer [N] [SECS]"
        ),
    }
}
