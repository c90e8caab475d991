//! Crash test (issue 3): while clients send pings as fast as they can and remember which got
//! `200`, `kill -9` the real binary at several moments; after each restart on the same data
//! directory every acknowledged ping is listed, the pings are numbered 1..=N without gaps or
//! repeats, and the check's `n_pings` is N. Using one data directory for every kill point
//! also checks that numbering continues without gaps across restarts after kills.
//!
//! A second test arms the crash points of the write-ahead log (`OVERDUE_CRASH_AT`): the service
//! kills itself halfway through a log record, just before a checkpoint, between a
//! checkpoint's commit and the log cut, and in the middle of the cut; the same checks follow.
//!
//! What it can catch: an answer sent before the batch's writes reach the file (checked by
//! hand: a writer that answers, then waits 3 ms, then commits fails the first round). What it
//! cannot: `kill -9` keeps the page cache, so a missing fsync is invisible here, and answering
//! just before an immediate commit leaves a window narrower than the answer's own trip.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use uuid::Uuid;

use crate::process;

use process::{IO_TIMEOUT, Serve};

/// Pings kept and listed per check: far above what the test sends, so every ping is listed.
const PING_LOG: usize = 100_000;
const CLIENTS: usize = 8;

/// Starts a service on a free port that keeps (and lists) `PING_LOG` pings per check.
fn start(data: &Path) -> Serve {
    Serve::start_with(data, &["--ping-log", &PING_LOG.to_string()])
}

/// The crash itself.
impl Serve {
    /// Waits (up to `limit`) for the process to die of SIGKILL by its own hand (a crash
    /// point) and reaps it.
    fn killed_itself(mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                assert_eq!(
                    std::os::unix::process::ExitStatusExt::signal(&status),
                    Some(9),
                    "serve ended otherwise than by its crash point: {status}\nstderr: {}",
                    self.stderr()
                );
                return;
            }
            assert!(
                Instant::now() < deadline,
                "serve never reached its crash point in {limit:?}\nstderr: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// `kill -9`, then reaps the process.
    pub(crate) fn sigkill(mut self) {
        let status = Command::new("kill")
            .args(["-9", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -9 failed");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                assert_eq!(
                    std::os::unix::process::ExitStatusExt::signal(&status),
                    Some(9),
                    "serve ended otherwise than by SIGKILL: {status}\nstderr: {}",
                    self.stderr()
                );
                return;
            }
            assert!(Instant::now() < deadline, "serve survived kill -9");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// A keep-alive HTTP/1.1 connection that sends pings one after another.
struct PingConn {
    reader: BufReader<TcpStream>,
}

impl PingConn {
    fn connect(port: u16) -> std::io::Result<PingConn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(IO_TIMEOUT))?;
        stream.set_write_timeout(Some(IO_TIMEOUT))?;
        stream.set_nodelay(true)?;
        Ok(PingConn {
            reader: BufReader::new(stream),
        })
    }

    /// Sends `GET path`, or a POST of `body` when it is not empty; answers the status once
    /// the whole response is read.
    fn send(&mut self, path: &str, body: &[u8]) -> std::io::Result<u16> {
        let request = if body.is_empty() {
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        } else {
            format!(
                "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
        };
        let stream = self.reader.get_mut();
        stream.write_all(request.as_bytes())?;
        stream.write_all(body)?;
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
        let mut length = 0usize;
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value
                    .trim()
                    .parse()
                    .map_err(|_| std::io::Error::other(format!("bad length {header:?}")))?;
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        Ok(status)
    }
}

/// What the clients saw during one round.
#[derive(Default)]
struct Tally {
    /// Every rid sent (acknowledged or not).
    sent: HashSet<Uuid>,
    /// rids answered `200`: these must survive the kill.
    acked: HashSet<Uuid>,
    busy: usize,
    /// Answers other than 200 and 503 (there should be none).
    unexpected: Vec<u16>,
}

/// One client: pings `check` (with a body of `body` bytes when not 0) over keep-alive
/// connections until `stop`, reconnecting when a connection breaks (it does when the server
/// is killed).
fn client(port: u16, check: Uuid, body: usize, stop: &AtomicBool) -> Tally {
    let body = vec![b'x'; body];
    let mut tally = Tally::default();
    let mut conn: Option<PingConn> = None;
    while !stop.load(Ordering::Relaxed) {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => {
                if let Ok(c) = PingConn::connect(port) {
                    conn.insert(c)
                } else {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
            }
        };
        let rid = Uuid::new_v4();
        tally.sent.insert(rid);
        match c.send(&format!("/ping/{check}?rid={rid}"), &body) {
            Ok(200) => {
                tally.acked.insert(rid);
            }
            Ok(503) => tally.busy += 1,
            Ok(other) => tally.unexpected.push(other),
            Err(_) => conn = None,
        }
    }
    tally
}

/// Runs `CLIENTS` clients pinging `check` (bodies of `body` bytes) until `kill` returns
/// (the service is dead then), adds what they sent and what was acknowledged to `seen`, and
/// answers how many were acknowledged and how many were answered 503 this round.
fn pings_until_killed(
    port: u16,
    check: Uuid,
    body: usize,
    seen: (&mut HashSet<Uuid>, &mut HashSet<Uuid>),
    kill: impl FnOnce(),
) -> (usize, usize) {
    let (acked, sent) = seen;
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || client(port, check, body, &stop))
        })
        .collect();
    kill();
    stop.store(true, Ordering::Relaxed);
    let mut round_acked = 0;
    let mut busy = 0;
    let mut statuses: HashMap<u16, usize> = HashMap::new();
    for c in clients {
        let tally = c.join().expect("client thread");
        round_acked += tally.acked.len();
        busy += tally.busy;
        for s in tally.unexpected {
            *statuses.entry(s).or_default() += 1;
        }
        acked.extend(tally.acked);
        sent.extend(tally.sent);
    }
    assert!(statuses.is_empty(), "unexpected ping answers {statuses:?}");
    (round_acked, busy)
}

/// The checks made after a restart, as a function of plain data so that its own test below
/// can show it fails when a ping is lost, numbered twice, or skipped.
///
/// `listed` is the pings list as (n, rid); `n_pings` the check's counter.
fn verify(
    acked: &HashSet<Uuid>,
    sent: &HashSet<Uuid>,
    listed: &[(u64, Option<Uuid>)],
    n_pings: u64,
) -> Result<(), String> {
    let total = listed.len() as u64;
    let mut ns: Vec<u64> = listed.iter().map(|(n, _)| *n).collect();
    ns.sort_unstable();
    let expected: Vec<u64> = (1..=total).collect();
    if ns != expected {
        let mut seen = HashSet::new();
        let repeats: Vec<u64> = ns.iter().copied().filter(|n| !seen.insert(*n)).collect();
        let gaps: Vec<u64> = (1..=ns.last().copied().unwrap_or(0))
            .filter(|n| !seen.contains(n))
            .collect();
        return Err(format!(
            "ping numbers are not 1..={total}: repeats {:?}, gaps {:?}",
            &repeats[..repeats.len().min(10)],
            &gaps[..gaps.len().min(10)]
        ));
    }
    if n_pings != total {
        return Err(format!(
            "n_pings is {n_pings}, but {total} pings are listed"
        ));
    }
    let mut listed_rids = HashSet::new();
    for (n, rid) in listed {
        let Some(rid) = rid else {
            return Err(format!("ping #{n} has no rid"));
        };
        if !sent.contains(rid) {
            return Err(format!("ping #{n} has rid {rid}, which was never sent"));
        }
        if !listed_rids.insert(*rid) {
            return Err(format!("rid {rid} is listed twice (again as #{n})"));
        }
    }
    let lost: Vec<&Uuid> = acked.iter().filter(|r| !listed_rids.contains(r)).collect();
    if !lost.is_empty() {
        return Err(format!(
            "{} acknowledged pings are missing after the restart, e.g. {:?}",
            lost.len(),
            &lost[..lost.len().min(5)]
        ));
    }
    Ok(())
}

/// The pings list and `n_pings` of `check`, read from a running service.
fn read_back(serve: &Serve, key: &str, check: Uuid) -> (Vec<(u64, Option<Uuid>)>, u64) {
    let doc = serve.http_ok(
        "GET",
        &format!("/api/v3/checks/{check}/pings/"),
        Some(key),
        None,
    );
    let listed = doc["pings"]
        .as_array()
        .unwrap_or_else(|| panic!("no pings array: {doc}"))
        .iter()
        .map(|p| {
            let n = p["n"].as_u64().unwrap_or_else(|| panic!("no n in {p}"));
            let rid = p["rid"].as_str().map(|r| r.parse().expect("rid is a uuid"));
            (n, rid)
        })
        .collect();
    let check_doc = serve.http_ok("GET", &format!("/api/v3/checks/{check}"), Some(key), None);
    let n_pings = check_doc["n_pings"]
        .as_u64()
        .unwrap_or_else(|| panic!("no n_pings in {check_doc}"));
    (listed, n_pings)
}

/// A first start on `data` with one check named `name`: the service, its read-write key and
/// the check's UUID.
fn fresh_check(data: &Path, name: &str) -> (Serve, String, Uuid) {
    let serve = start(data);
    let key = serve.first_start_key("read-write API key:");
    let created = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": name})),
    );
    let check: Uuid = created["uuid"]
        .as_str()
        .and_then(|u| u.parse().ok())
        .unwrap_or_else(|| panic!("no uuid in {created}"));
    (serve, key, check)
}

/// A delay in `lo..hi` ms that differs from run to run.
fn random_ms(lo: u64, hi: u64) -> u64 {
    let r = Uuid::new_v4().as_u128() as u64;
    lo + r % (hi - lo)
}

#[test]
fn acknowledged_pings_survive_kill_9_at_several_moments() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let (mut serve, key, check) = fresh_check(data, "crash");

    // Kill points after the clients start: early, middle, late, and one random.
    let delays = [150, 400, 900, random_ms(50, 1200)];
    let mut acked: HashSet<Uuid> = HashSet::new();
    let mut sent: HashSet<Uuid> = HashSet::new();
    let mut report = Vec::new();
    for (round, delay) in delays.into_iter().enumerate() {
        let port = serve.port;
        let (round_acked, busy) =
            pings_until_killed(port, check, 0, (&mut acked, &mut sent), || {
                std::thread::sleep(Duration::from_millis(delay));
                serve.sigkill();
            });
        assert!(
            round_acked > 0,
            "round {round}: no ping was acknowledged in {delay} ms before the kill"
        );

        serve = start(data);
        assert!(
            !serve.stdout().contains("API key"),
            "a restart printed new keys: {}",
            serve.stdout()
        );
        let (listed, n_pings) = read_back(&serve, &key, check);
        assert!(
            listed.len() < PING_LOG,
            "{} pings reached the ping log size; raise PING_LOG",
            listed.len()
        );
        if let Err(e) = verify(&acked, &sent, &listed, n_pings) {
            panic!("round {round} (kill after {delay} ms): {e}");
        }
        report.push(format!(
            "kill after {delay} ms: {round_acked} acknowledged, {busy} busy, {} stored in all",
            listed.len()
        ));
    }
    eprintln!("{}", report.join("\n"));
}

/// Starts a service that kills itself at `crash_at` (`OVERDUE_CRASH_AT`, see
/// `src/store/crash_point.rs`).
fn start_armed(data: &Path, crash_at: &str) -> Serve {
    let mut serve = Serve::spawn_with_env(
        data,
        process::free_port(),
        &["--ping-log", &PING_LOG.to_string()],
        &[("OVERDUE_CRASH_AT", crash_at)],
    );
    assert!(
        serve.wait_ready(),
        "serve did not start\nstderr: {}",
        serve.stderr()
    );
    serve
}

#[test]
fn acknowledged_pings_survive_a_crash_at_each_point_of_the_ping_log() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let (serve, key, check) = fresh_check(data, "crash points");
    drop(serve);

    // (crash point, ping body bytes, what the restart must log). Bodies of 8 KiB fill the
    // log's 4 MiB (which makes a checkpoint due and the log roll over to a new segment) in
    // about 500 pings.
    let rounds = [
        ("log-append-torn:300", 0, Some("cut short")),
        ("checkpoint", 8192, Some("redid the pings")),
        ("checkpoint-committed", 8192, None),
        ("log-cut", 8192, None),
    ];
    let mut acked: HashSet<Uuid> = HashSet::new();
    let mut sent: HashSet<Uuid> = HashSet::new();
    for (point, body, logged) in rounds {
        let serve = start_armed(data, point);
        let port = serve.port;
        let (round_acked, _) =
            pings_until_killed(port, check, body, (&mut acked, &mut sent), || {
                serve.killed_itself(Duration::from_secs(60));
            });
        assert!(round_acked > 0, "{point}: no ping was acknowledged");

        let serve = start(data);
        let log = serve.stderr();
        // After the checkpoint committed, only pings acknowledged beside it (batches of pings
        // go on while it commits) are redone; one redone twice would show as a repeated or
        // skipped number below.
        if let Some(text) = logged {
            assert!(log.contains(text), "{point}: no {text:?} in\n{log}");
        }
        let (listed, n_pings) = read_back(&serve, &key, check);
        if let Err(e) = verify(&acked, &sent, &listed, n_pings) {
            panic!("{point}: {e}");
        }
        eprintln!(
            "{point}: {round_acked} acknowledged, {} stored in all",
            listed.len()
        );
    }
}

#[test]
fn the_crash_check_fails_on_lost_repeated_or_skipped_pings() {
    let rids: Vec<Uuid> = (0..4).map(|_| Uuid::new_v4()).collect();
    let sent: HashSet<Uuid> = rids.iter().copied().collect();
    // rids[3] was sent but never answered: it may or may not be stored.
    let acked: HashSet<Uuid> = rids[..3].iter().copied().collect();
    let good: Vec<(u64, Option<Uuid>)> = (0..3).map(|i| (i as u64 + 1, Some(rids[i]))).collect();
    assert_eq!(verify(&acked, &sent, &good, 3), Ok(()));
    let mut unacked_stored = good.clone();
    unacked_stored.push((4, Some(rids[3])));
    assert_eq!(verify(&acked, &sent, &unacked_stored, 4), Ok(()));

    // An acknowledged ping lost in the crash.
    let lost = vec![(1, Some(rids[0])), (2, Some(rids[1]))];
    let e = verify(&acked, &sent, &lost, 2).unwrap_err();
    assert!(e.contains("1 acknowledged pings are missing"), "{e}");
    // A gap in the numbering.
    let gap = vec![(1, Some(rids[0])), (2, Some(rids[1])), (4, Some(rids[2]))];
    let e = verify(&acked, &sent, &gap, 4).unwrap_err();
    assert!(e.contains("gaps [3]"), "{e}");
    // A number used twice.
    let repeat = vec![(1, Some(rids[0])), (2, Some(rids[1])), (2, Some(rids[2]))];
    let e = verify(&acked, &sent, &repeat, 2).unwrap_err();
    assert!(e.contains("repeats [2]"), "{e}");
    // n_pings behind the listed pings.
    assert!(verify(&acked, &sent, &good, 2).is_err());
    // One ping stored twice under two numbers.
    let twice = vec![(1, Some(rids[0])), (2, Some(rids[1])), (3, Some(rids[1]))];
    assert!(verify(&acked, &sent, &twice, 3).is_err());
}
