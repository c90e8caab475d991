//! Two nodes on one PostgreSQL database (issue 19): the second stands by, answering 503, until
//! the first is gone; then it serves. Real processes, a real throwaway cluster, a real webhook
//! receiver; the test's own client retries on whichever node answers, as a reverse proxy would.
//!
//! Each test pings a check, then cuts the active node (kill -9, or its database session ended
//! by `pg_terminate_backend`) a few seconds before the check is due, while a steady ping load
//! goes on. The standby is frozen (SIGSTOP) across the due time, so the deadline passes while
//! no node is active. Afterwards: a node serves within 10 s of the cut, the load check's pings
//! are numbered 1..=n without a gap and n covers every acknowledged ping, and the overdue check
//! alerted exactly once. A test takes a little over two minutes (a check's shortest period and
//! grace are a minute each); the two run side by side.

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::pgcluster::{Cluster, OWNER_PASSWORD};
use crate::process::{Serve, overdue_in, try_http, wait_until};
use crate::receivers::HttpReceiver;

/// How the active node is taken away.
#[derive(Clone, Copy)]
enum Cut {
    /// `kill -9` of its process.
    Kill,
    /// Its database sessions ended by the server (`pg_terminate_backend`).
    Terminate,
}

/// Sends a signal to a process.
fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} {pid}");
}

/// Pings `check` on whichever node takes it, as a retrying client behind a proxy would:
/// whether one did.
fn ping_either(ports: [u16; 2], check: &str) -> bool {
    ports.iter().any(|&port| {
        matches!(
            try_http(port, "GET", &format!("/ping/{check}"), None, None),
            Ok((200, _))
        )
    })
}

/// The `n` of every ping of `check` listed by whichever node serves, lowest first.
fn listed_pings(ports: [u16; 2], key: &str, check: &str) -> Vec<u64> {
    for port in ports {
        let path = format!("/api/v3/checks/{check}/pings/");
        if let Ok((200, doc)) = try_http(port, "GET", &path, Some(key), None) {
            let mut ns: Vec<u64> = doc["pings"]
                .as_array()
                .expect("pings")
                .iter()
                .map(|p| p["n"].as_u64().expect("n"))
                .collect();
            ns.sort_unstable();
            return ns;
        }
    }
    panic!("no node lists the pings");
}

async fn failover(cut: Cut) {
    let Some(cluster) = Cluster::start(false) else {
        return;
    };
    let url = cluster.url("overdue", OWNER_PASSWORD, "");
    let (dir_a, dir_b) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let mut a = Serve::spawn_on_database(dir_a.path(), &url);
    assert!(a.wait_ready(), "the first node serves:\n{}", a.stderr());
    let key = a.first_start_key("read-write API key:");
    let b = Serve::spawn_on_database(dir_b.path(), &url);
    assert!(
        b.wait_standby(),
        "the second node stands by:\n{}",
        b.stderr()
    );

    let receiver = HttpReceiver::start().await;
    let deadline = a.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": "deadline", "timeout": 60, "grace": 60})),
    );
    let load = a.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": "load", "timeout": 3600, "grace": 3600})),
    );
    let uuid = |c: &serde_json::Value| {
        c["ping_url"]
            .as_str()
            .and_then(|u| u.rsplit('/').next())
            .expect("ping url")
            .to_string()
    };
    let (deadline, load) = (uuid(&deadline), uuid(&load));
    let hook = format!("{}/down/$CODE", receiver.base);
    overdue_in(
        dir_a.path(),
        &[
            "--database",
            &url,
            "channel",
            "add",
            "default",
            "--kind",
            "webhook",
            "--name",
            "hook",
            "--url-down",
            &hook,
        ],
    )
    .ok();
    let ports = [a.port, b.port];
    assert!(ping_either(ports, &deadline));
    let pinged = Instant::now();

    // The load: one ping every 50 ms from 10 s before the cut until the end.
    tokio::time::sleep(Duration::from_secs(105)).await;
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    let acks: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let loader = {
        let (stop, acked, acks, load) = (stop.clone(), acked.clone(), acks.clone(), load.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                if ping_either(ports, &load) {
                    acked.fetch_add(1, Ordering::AcqRel);
                    acks.lock().expect("acks").push(Instant::now());
                }
                thread::sleep(Duration::from_millis(50));
            }
        })
    };

    // Cut 3 s before the check is due, with the standby frozen across the due time.
    tokio::time::sleep(Duration::from_secs(117).saturating_sub(pinged.elapsed())).await;
    signal(b.child.id(), "-STOP");
    let cut_at = Instant::now();
    match cut {
        Cut::Kill => signal(a.child.id(), "-KILL"),
        // Its sessions only: their application_name ends with its process id.
        Cut::Terminate => cluster.sql(
            "overdue",
            &format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = 'overdue' AND application_name LIKE 'overdue/%/{}'",
                a.child.id()
            ),
        ),
    }
    tokio::time::sleep(Duration::from_secs(122).saturating_sub(pinged.elapsed())).await;
    signal(b.child.id(), "-CONT");

    let served = wait_until(Duration::from_secs(20), || {
        acks.lock()
            .expect("acks")
            .iter()
            .any(|&t| t > cut_at + Duration::from_millis(100))
    });
    assert!(served, "no node took pings after the cut");
    let first = *acks
        .lock()
        .expect("acks")
        .iter()
        .find(|&&t| t > cut_at + Duration::from_millis(100))
        .expect("an ack after the cut");
    let failover = first - cut_at;
    eprintln!("failover: first acknowledged ping {failover:?} after the cut");
    assert!(failover < Duration::from_secs(10), "{failover:?}");

    let alert = receiver
        .next(Duration::from_secs(30))
        .await
        .expect("the overdue check alerted");
    assert_eq!(alert.path, format!("/down/{deadline}"));
    assert!(
        receiver.next(Duration::from_secs(5)).await.is_none(),
        "the overdue check alerted once only"
    );

    stop.store(true, Ordering::Release);
    loader.join().expect("the load thread");
    let acked = acked.load(Ordering::Acquire);
    let ns = listed_pings(ports, &key, &load);
    let expected: Vec<u64> = (1..=ns.len() as u64).collect();
    assert_eq!(
        ns, expected,
        "the load check's pings are numbered without a gap"
    );
    assert!(
        ns.len() as u64 >= acked,
        "every acknowledged ping is listed: {} listed, {acked} acknowledged",
        ns.len()
    );
    drop(a);
    drop(b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_active_node_hands_over_to_the_standby_without_losing_a_ping_or_an_alert() {
    failover(Cut::Kill).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_the_active_nodes_database_session_hands_over_without_losing_a_ping_or_an_alert() {
    failover(Cut::Terminate).await;
}
