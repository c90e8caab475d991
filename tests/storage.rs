//! The real binary on a real small filesystem (an ext4 image on a loop device) whose disk
//! fills up or whose data file is made immutable: pings and API writes answer 503 "storage
//! unavailable" (pings once the write-ahead log cannot take them or a checkpoint fails),
//! `/api/v3/status/` answers 503 with the cause, `doctor` names it, admin commands keep working, and once the cause is gone the service takes writes again by itself. Past its
//! bound it exits non-zero for its supervisor. In-process on a paused clock: a check whose
//! deadline passes while writes fail goes down, with its alerts, once they work again. Pings
//! the write-ahead log took while the disk was full survive a kill -9.

use crate::common;
use crate::process;
use crate::smallfs;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use overdue::model::signal::Signal;
use overdue::model::spec::parse_spec;
use overdue::model::{ApiVersion, ChannelConfig, StoredStatus};
use overdue::service::health::StoragePolicy;
use overdue::service::{Clock, Service, ServiceConfig, ServiceError};
use serde_json::{Value, json};

use process::{Response, Serve, http, overdue_in, wait_until};
use smallfs::SmallFs;

/// How long the service may take to notice a freed disk (its backoff is at most 10 s).
const RECOVERY: Duration = Duration::from_secs(30);

/// A check on a fresh service, pinged once; the service, the read-write key and the UUID.
fn service_with_check(data: &Path, extra: &[&str]) -> (Serve, String, String) {
    let serve = Serve::start_with(data, extra);
    let rw = serve.first_start_key("read-write API key:");
    let check = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "nightly", "timeout": 3600, "grace": 60})),
    );
    let uuid = check["ping_url"]
        .as_str()
        .and_then(|u| u.rsplit('/').next())
        .expect("uuid")
        .to_string();
    assert_eq!(ping(&serve, &uuid, None).0, 200);
    (serve, rw, uuid)
}

/// A ping with a body of `body` bytes (so a batch needs new pages of the file).
fn ping(serve: &Serve, uuid: &str, body: Option<usize>) -> Response {
    let body = body.map(|n| Value::String("x".repeat(n)));
    http(
        serve.port,
        "POST",
        &format!("/ping/{uuid}"),
        None,
        body.as_ref(),
    )
}

/// Pings with bodies until one is refused (a full disk may still take a write or two into
/// pages the file already has); the refusal.
fn ping_until_refused(serve: &Serve, uuid: &str) -> Response {
    for _ in 0..200 {
        let answer = ping(serve, uuid, Some(9000));
        if answer.0 != 200 {
            return answer;
        }
    }
    panic!("200 pings with 9 kB bodies were all stored on a full disk");
}

fn status(serve: &Serve) -> Response {
    http(serve.port, "GET", "/api/v3/status/", None, None)
}

fn n_pings(serve: &Serve, rw: &str, uuid: &str) -> u64 {
    let check = serve.http_ok("GET", &format!("/api/v3/checks/{uuid}"), Some(rw), None);
    check["n_pings"].as_u64().expect("n_pings")
}

#[test]
fn a_full_disk_answers_503_storage_unavailable_and_the_service_resumes_once_space_is_freed() {
    let Some(fs) = SmallFs::ext4_or_skip(32, "a_full_disk_answers_503") else {
        return;
    };
    let data = fs.root.join("data");
    let (serve, rw, uuid) = service_with_check(&data, &[]);
    let filler = fs.fill();

    let (code, body) = ping_until_refused(&serve, &uuid);
    assert_eq!((code, body.as_str()), (503, Some("storage unavailable")));
    let stored_before = n_pings(&serve, &rw, &uuid);
    // Every later ping and write is refused the same way, never "shutting down".
    assert_eq!(
        ping(&serve, &uuid, None),
        (503, json!("storage unavailable"))
    );
    let (code, doc) = serve.http(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "another"})),
    );
    assert_eq!((code, doc), (503, json!({"error": "storage unavailable"})));
    let (code, text) = status(&serve);
    let text = text.as_str().expect("text").to_string();
    assert_eq!(code, 503, "{text}");
    assert!(text.starts_with("storage unavailable: "), "{text}");
    assert!(text.contains("No space left on device"), "{text}");
    assert!(text.contains("is full"), "{text}");
    // Reads from memory and the admin socket keep working.
    assert_eq!(n_pings(&serve, &rw, &uuid), stored_before);
    let listed = overdue_in(&data, &["check", "ls", "default"]).ok();
    assert!(listed.contains("nightly"), "{listed}");
    // doctor says why.
    let listen = format!("127.0.0.1:{}", serve.port);
    let report = overdue_in(&data, &["doctor", "--listen", &listen]);
    assert_eq!(report.code, Some(1), "{}", report.stdout);
    assert!(
        report.stdout.contains("cannot write its data file") && report.stdout.contains("is full"),
        "{}",
        report.stdout
    );
    assert!(report.stdout.contains("MiB are free"), "{}", report.stdout);
    // The log says it once, with the cause.
    let log = serve.stderr();
    assert!(log.contains("writes to the data file fail"), "{log}");
    assert!(!log.contains("shutting down"), "{log}");

    SmallFs::free(&filler);
    assert!(
        wait_until(RECOVERY, || status(&serve).0 == 200),
        "the service did not resume: {:?}\n{}",
        status(&serve),
        serve.stderr()
    );
    assert_eq!(ping(&serve, &uuid, Some(9000)), (200, json!("OK")));
    assert_eq!(n_pings(&serve, &rw, &uuid), stored_before + 1);
    serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "another"})),
    );
    assert!(serve.stderr().contains("the data file takes writes again"));
}

#[test]
fn an_immutable_data_file_answers_503_with_the_cause_until_chattr_minus_i() {
    let Some(fs) = SmallFs::ext4_or_skip(32, "an_immutable_data_file") else {
        return;
    };
    let data = fs.root.join("data");
    let (serve, rw, uuid) = service_with_check(&data, &[]);
    let stored_before = n_pings(&serve, &rw, &uuid);
    let file = data.join("overdue.redb");
    SmallFs::immutable(&file, true);
    // Pings are durable in the write-ahead log, which still takes them; the next checkpoint (at most
    // 5 s later) meets the immutable file, and from then on every write is refused.
    let mut accepted = 0;
    let refused = loop {
        let answer = ping(&serve, &uuid, Some(100));
        if answer.0 != 200 {
            break answer;
        }
        accepted += 1;
        assert!(
            accepted < 200,
            "pings were stored for 20 s into an immutable file"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let (code, text) = status(&serve);
    let listen = format!("127.0.0.1:{}", serve.port);
    let report = overdue_in(&data, &["doctor", "--listen", &listen]);
    SmallFs::immutable(&file, false);

    assert_eq!(refused, (503, json!("storage unavailable")));
    let text = text.as_str().expect("text").to_string();
    assert_eq!(code, 503, "{text}");
    assert!(
        text.contains("not writable (Operation not permitted)"),
        "{text}"
    );
    assert!(text.contains("chattr -i"), "{text}");
    assert_eq!(report.code, Some(1), "{}", report.stdout);
    assert!(report.stdout.contains("chattr -i"), "{}", report.stdout);

    assert!(
        wait_until(RECOVERY, || status(&serve).0 == 200),
        "the service did not resume: {}",
        serve.stderr()
    );
    // The pings the log took while the file was immutable are all there.
    assert_eq!(n_pings(&serve, &rw, &uuid), stored_before + accepted);
    assert_eq!(ping(&serve, &uuid, None), (200, json!("OK")));
    assert_eq!(n_pings(&serve, &rw, &uuid), stored_before + accepted + 1);
}

#[test]
fn pings_acknowledged_while_the_disk_is_full_survive_kill_9() {
    let Some(fs) = SmallFs::ext4_or_skip(32, "pings_acknowledged_while_the_disk_is_full") else {
        return;
    };
    let data = fs.root.join("data");
    let (serve, rw, uuid) = service_with_check(&data, &[]);
    // The first ping was a flip (new -> up), committed durably; this one opens a log segment.
    assert_eq!(ping(&serve, &uuid, None).0, 200);
    let stored_before = n_pings(&serve, &rw, &uuid);
    let filler = fs.fill();
    // What the disk still takes goes into the log's zero-filled segment and is acknowledged;
    // the checkpoint that would move it into the file fails.
    // A segment is 4 MiB: full after about 460 of these, if the checkpoint has not failed
    // (and refused the next writes) before.
    let mut accepted = 0;
    for _ in 0..1000 {
        match ping(&serve, &uuid, Some(9000)).0 {
            200 => accepted += 1,
            503 => break,
            other => panic!("a ping on a full disk was answered {other}"),
        }
    }
    assert!(
        (1..1000).contains(&accepted),
        "{accepted} pings with 9 kB bodies were acknowledged on a full disk"
    );
    assert!(
        wait_until(RECOVERY, || serve
            .stderr()
            .contains("writes to the data file fail")),
        "{}",
        serve.stderr()
    );
    serve.sigkill();

    SmallFs::free(&filler);
    let serve = Serve::start(&data);
    assert_eq!(n_pings(&serve, &rw, &uuid), stored_before + accepted);
    eprintln!("{accepted} pings acknowledged on the full disk, all kept");
}

#[test]
fn a_disk_that_stays_full_past_the_bound_makes_the_service_exit_non_zero() {
    let Some(fs) = SmallFs::ext4_or_skip(32, "a_disk_that_stays_full") else {
        return;
    };
    let data = fs.root.join("data");
    let (mut serve, _rw, uuid) = service_with_check(&data, &["--storage-give-up", "2"]);
    let _filler = fs.fill();
    assert_eq!(ping_until_refused(&serve, &uuid).0, 503);
    let mut exit = None;
    assert!(
        wait_until(RECOVERY, || {
            exit = serve.child.try_wait().expect("try_wait");
            exit.is_some()
        }),
        "the service kept running on a full disk past its bound\n{}",
        serve.stderr()
    );
    let exit = exit.expect("exited");
    assert_eq!(exit.code(), Some(1), "{exit}\n{}", serve.stderr());
    let _ = wait_until(Duration::from_secs(2), || {
        serve.stderr().contains("did not take writes")
    });
    let log = serve.stderr();
    assert!(log.contains("has not taken writes for 2s"), "{log}");
    assert!(log.contains("did not take writes for 2s"), "{log}");
}

static BIG_BODY: [u8; 9000] = [b'x'; 9000];

#[tokio::test(start_paused = true)]
async fn a_check_whose_deadline_passes_while_writes_fail_goes_down_with_its_alerts_once_they_work()
{
    let Some(fs) = SmallFs::ext4_or_skip(32, "a_check_whose_deadline_passes") else {
        return;
    };
    let base: Timestamp = "2026-01-01T00:00:00Z".parse().expect("base");
    let config = ServiceConfig {
        storage: StoragePolicy {
            give_up_after: None,
            ..StoragePolicy::default()
        },
        ..ServiceConfig::default()
    };
    let data = fs.root.join("data");
    let service =
        Arc::new(Service::open(&data, config, Clock::tokio_at(base)).expect("open the data"));
    let project = service.add_project("p").await.expect("project").uuid;
    service
        .add_channel("p", "hook", ChannelConfig::webhook("http://127.0.0.1:9/"))
        .await
        .expect("channel");
    let monitor = overdue::monitor::start(service.clone());
    let serde_json::Value::Object(body) = json!({"timeout": 60, "grace": 60, "channels": "*"})
    else {
        unreachable!()
    };
    let check = service
        .create_check(project, parse_spec(&body).expect("spec"), ApiVersion::V3)
        .await
        .expect("create")
        .0
        .uuid;
    let ping = |body: &'static [u8]| common::ping_request(check, Signal::Success, body);
    service.record_ping(ping(b"")).await.expect("first ping");
    let pinged = service
        .read(|s| s.check(&check).and_then(|c| c.last_ping))
        .expect("pinged");

    let filler = fs.fill();
    let mut refused = None;
    for _ in 0..200 {
        if let Err(e) = service.record_ping(ping(&BIG_BODY)).await {
            refused = Some(e);
            break;
        }
    }
    assert!(
        matches!(refused, Some(ServiceError::StorageUnavailable(_))),
        "{refused:?}"
    );
    assert!(service.storage_health().is_failing());
    // The deadline passes while nothing can be written: the check cannot go down yet.
    let down_at = service
        .read(|s| s.check(&check).and_then(overdue::model::Check::alert_after))
        .expect("deadline");
    assert!(down_at < base + SignedDuration::from_secs(130));
    tokio::time::sleep(Duration::from_secs(130)).await;
    assert!(service.storage_health().is_failing());
    assert_ne!(
        service.read(|s| s.check(&check).map(|c| c.status)),
        Some(StoredStatus::Down)
    );

    SmallFs::free(&filler);
    // The writer's backoff is at most 10 s; the monitor retries as soon as it is told.
    for _ in 0..60 {
        if !service.storage_health().is_failing()
            && service.read(|s| s.check(&check).map(|c| c.status)) == Some(StoredStatus::Down)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(!service.storage_health().is_failing());
    let flips: Vec<_> = service
        .flips(check)
        .expect("flips")
        .into_iter()
        .filter(|f| f.new_status == StoredStatus::Down)
        .collect();
    assert_eq!(flips.len(), 1, "{flips:?}");
    assert_eq!(
        flips[0].created,
        pinged + SignedDuration::from_secs(120),
        "stamped with the moment it went down, not the moment it could be stored"
    );
    let alerts = service.outbox().expect("outbox");
    assert_eq!(
        alerts.iter().filter(|e| e.check == check).count(),
        1,
        "one alert for the one channel"
    );
    monitor.abort();
    let _ = monitor.await;
    let Ok(service) = Arc::try_unwrap(service) else {
        panic!("the service is still shared")
    };
    service.close().await;
}

#[test]
fn an_empty_data_file_is_refused_with_a_message_and_left_as_it_is() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let file = data.join("overdue.redb");
    std::fs::write(&file, b"").expect("empty file");

    let mut serve = Serve::spawn(&data, process::free_port());
    let mut exit = None;
    let exited = wait_until(Duration::from_secs(10), || {
        exit = serve.child.try_wait().expect("try_wait");
        exit.is_some()
    });
    assert!(
        exited,
        "serve started on an empty data file\n{}",
        serve.stdout()
    );
    let _ = wait_until(Duration::from_secs(2), || {
        serve.stderr().contains("Restore")
    });
    let stderr = serve.stderr();
    assert_eq!(exit.and_then(|e| e.code()), Some(1), "{stderr}");
    assert!(stderr.contains("is empty (0 bytes)"), "{stderr}");
    assert!(stderr.contains("Restore a backup"), "{stderr}");
    assert!(!serve.stdout().contains("API key"), "no new keys are made");
    let ls = overdue_in(&data, &["check", "ls", "default"]);
    assert_eq!(ls.code, Some(1), "{}", ls.stdout);
    assert!(ls.stderr.contains("is empty (0 bytes)"), "{}", ls.stderr);
    assert_eq!(std::fs::metadata(&file).expect("file").len(), 0);

    // Removing it, as the message says, starts afresh.
    std::fs::remove_file(&file).expect("remove");
    let serve = Serve::start(&data);
    assert!(!serve.first_start_key("read-write API key:").is_empty());
}
