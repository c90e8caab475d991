//! The deadline engine on a paused tokio clock (reference-behavior §5.2): checks go down at
//! the computed moment, flips and alerts are recorded once, also across restarts.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use overdue::model::signal::Signal;
use overdue::model::spec::parse_spec;
use overdue::model::{ApiVersion, ChannelConfig, Flip, StoredStatus};
use overdue::service::{Clock, Service, ServiceConfig};
use serde_json::{Value, json};
use uuid::Uuid;

const BASE: &str = "2026-01-01T00:00:00Z";

fn base() -> Timestamp {
    BASE.parse().expect("base")
}

fn at(secs: i64) -> Timestamp {
    base() + SignedDuration::from_secs(secs)
}

struct Env {
    service: Arc<Service>,
    monitor: tokio::task::JoinHandle<()>,
    dir: tempfile::TempDir,
    project: Uuid,
}

async fn open(dir: tempfile::TempDir, now: Timestamp) -> Env {
    let service = Arc::new(
        Service::open(
            dir.path(),
            common::engine(dir.path(), ServiceConfig::default()),
            Clock::tokio_at(now),
        )
        .expect("open"),
    );
    let project = if let Some(p) = service.read(|s| s.project_by_name("p").map(|p| p.uuid)) {
        p
    } else {
        let p = service.add_project("p").await.expect("project").uuid;
        service
            .add_channel(
                "p",
                "mail",
                ChannelConfig::Email {
                    address: "a@example.org".into(),
                },
            )
            .await
            .expect("channel");
        service
            .add_channel("p", "hook", ChannelConfig::webhook("http://127.0.0.1:9/"))
            .await
            .expect("channel");
        p
    };
    let monitor = overdue::monitor::start(service.clone());
    Env {
        service,
        monitor,
        dir,
        project,
    }
}

async fn env() -> Env {
    open(tempfile::tempdir().expect("dir"), base()).await
}

impl Env {
    async fn create(&self, body: Value) -> Uuid {
        let Value::Object(map) = body else {
            panic!("object")
        };
        let mut spec = parse_spec(&map).expect("valid spec");
        spec.channels = Some("*".into());
        self.service
            .create_check(self.project, spec, ApiVersion::V3)
            .await
            .expect("create")
            .0
            .uuid
    }

    async fn ping(&self, check: Uuid, signal: Signal) {
        let req = common::ping_request(check, signal, b"");
        self.service.record_ping(req).await.expect("ping");
    }

    fn flips(&self, check: Uuid) -> Vec<Flip> {
        self.service.flips(check).expect("flips")
    }

    fn down_flips(&self, check: Uuid) -> Vec<Flip> {
        self.flips(check)
            .into_iter()
            .filter(|f| f.new_status == StoredStatus::Down)
            .collect()
    }

    fn outbox_for(&self, check: Uuid) -> usize {
        self.service
            .outbox()
            .expect("outbox")
            .iter()
            .filter(|e| e.check == check)
            .count()
    }

    fn stored(&self, check: Uuid) -> StoredStatus {
        self.service
            .read(|s| s.check(&check).expect("check").status)
    }

    async fn close(self) -> tempfile::TempDir {
        self.monitor.abort();
        let _ = self.monitor.await;
        let Ok(s) = Arc::try_unwrap(self.service) else {
            panic!("service still shared")
        };
        s.close().await;
        self.dir
    }
}

/// Moves the paused clock to `t` (since BASE) and lets the monitor and the writer finish.
async fn advance_to(env: &Env, t: i64) {
    let now = env.service.now();
    let target = at(t);
    if target > now {
        tokio::time::advance(Duration::try_from(target.duration_since(now)).expect("forward"))
            .await;
    }
    settle().await;
}

/// Gives the monitor and writer time to act without moving the clock noticeably.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_micros(1)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn simple_check_goes_down_at_last_ping_plus_timeout_plus_grace() {
    let env = env().await;
    let c = env.create(json!({"timeout": 60, "grace": 60})).await;
    env.ping(c, Signal::Success).await;
    let pinged = env
        .service
        .read(|s| s.check(&c).and_then(|c| c.last_ping))
        .expect("pinged");
    advance_to(&env, 119).await;
    assert_eq!(env.stored(c), StoredStatus::Up);
    assert!(env.down_flips(c).is_empty(), "not before the deadline");
    advance_to(&env, 121).await;
    assert_eq!(env.stored(c), StoredStatus::Down);
    let flips = env.down_flips(c);
    assert_eq!(flips.len(), 1);
    assert_eq!(
        flips[0].created,
        pinged + SignedDuration::from_secs(120),
        "stamped with the computed moment"
    );
    assert_eq!(flips[0].reason, "timeout");
    assert_eq!(flips[0].old_status, StoredStatus::Up);
    assert_eq!(env.outbox_for(c), 2, "one alert per assigned channel");
    advance_to(&env, 1000).await;
    assert_eq!(env.down_flips(c).len(), 1, "down once");
    env.close().await;
}

#[tokio::test(start_paused = true)]
async fn grace_bounds_are_inclusive() {
    use overdue::model::Status;
    let env = env().await;
    let c = env.create(json!({"timeout": 60, "grace": 60})).await;
    env.ping(c, Signal::Success).await;
    let check = env.service.read(|s| s.check(&c).cloned()).expect("check");
    let last = check.last_ping.expect("pinged");
    assert_eq!(
        check.status_at(
            last + SignedDuration::from_secs(60) - SignedDuration::from_micros(1),
            false
        ),
        Status::Up
    );
    assert_eq!(
        check.status_at(last + SignedDuration::from_secs(60), false),
        Status::Grace
    );
    assert_eq!(
        check.status_at(
            last + SignedDuration::from_secs(120) - SignedDuration::from_micros(1),
            false
        ),
        Status::Grace
    );
    assert_eq!(
        check.status_at(last + SignedDuration::from_secs(120), false),
        Status::Down
    );
    env.close().await;
}

#[tokio::test(start_paused = true)]
async fn cron_and_oncalendar_checks_go_down_after_their_next_fire_plus_grace() {
    let env = env().await;
    let cron = env
        .create(json!({"schedule": "*/10 * * * *", "grace": 60}))
        .await;
    let cal = env
        .create(json!({"schedule": "*:0/15", "tz": "Europe/Riga", "grace": 120}))
        .await;
    env.ping(cron, Signal::Success).await;
    env.ping(cal, Signal::Success).await;
    advance_to(&env, 10 * 60 + 59).await;
    assert_eq!(env.stored(cron), StoredStatus::Up);
    advance_to(&env, 11 * 60 + 1).await;
    assert_eq!(
        env.down_flips(cron).first().map(|f| f.created),
        Some(at(11 * 60))
    );
    assert_eq!(env.stored(cal), StoredStatus::Up);
    advance_to(&env, 17 * 60 + 1).await;
    assert_eq!(
        env.down_flips(cal).first().map(|f| f.created),
        Some(at(17 * 60))
    );
    env.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_schedule_with_no_future_fire_never_goes_down() {
    let env = env().await;
    let c = env
        .create(json!({"schedule": "2026-01-01 00:00:30", "grace": 60}))
        .await;
    advance_to(&env, 60).await;
    env.ping(c, Signal::Success).await;
    advance_to(&env, 86_400 * 400).await;
    assert_eq!(env.stored(c), StoredStatus::Up);
    assert!(env.down_flips(c).is_empty());
    env.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_started_run_goes_down_after_grace_even_on_new_and_paused_checks() {
    let env = env().await;
    let fresh = env.create(json!({"grace": 60})).await;
    let paused = env.create(json!({"grace": 60})).await;
    env.service
        .pause_check(env.project, paused)
        .await
        .expect("pause");
    env.ping(fresh, Signal::Start).await;
    env.ping(paused, Signal::Start).await;
    advance_to(&env, 59).await;
    assert_eq!(env.stored(fresh), StoredStatus::New);
    advance_to(&env, 61).await;
    let f = env.down_flips(fresh);
    assert_eq!(
        (f.len(), f[0].old_status, f[0].created),
        (1, StoredStatus::New, at(60))
    );
    let p = env.down_flips(paused);
    assert_eq!((p.len(), p[0].old_status), (1, StoredStatus::Paused));
    assert_eq!(env.outbox_for(fresh), 2);
    env.close().await;
}

#[tokio::test(start_paused = true)]
async fn fail_goes_down_at_once_and_recovery_alerts_too() {
    let env = env().await;
    let c = env.create(json!({})).await;
    env.ping(c, Signal::Success).await;
    assert_eq!(env.outbox_for(c), 0, "new -> up alerts nobody");
    advance_to(&env, 5).await;
    let failed_at = env.service.now();
    env.ping(c, Signal::Fail).await;
    assert_eq!(env.stored(c), StoredStatus::Down);
    let f = env.down_flips(c);
    assert_eq!(
        (f.len(), f[0].reason.as_str(), f[0].created),
        (1, "fail", failed_at)
    );
    assert_eq!(env.outbox_for(c), 2);
    env.ping(c, Signal::Fail).await;
    assert_eq!(env.outbox_for(c), 2, "down -> down alerts nobody");
    env.ping(c, Signal::Success).await;
    assert_eq!(env.stored(c), StoredStatus::Up);
    assert_eq!(env.outbox_for(c), 4, "recovery alerts every channel");
    env.close().await;
}

#[tokio::test(start_paused = true)]
async fn paused_resumed_and_deleted_checks_do_not_go_down() {
    let env = env().await;
    let paused = env.create(json!({"timeout": 60, "grace": 60})).await;
    let resumed = env.create(json!({"timeout": 60, "grace": 60})).await;
    let deleted = env.create(json!({"timeout": 60, "grace": 60})).await;
    for c in [paused, resumed, deleted] {
        env.ping(c, Signal::Success).await;
    }
    env.service
        .pause_check(env.project, paused)
        .await
        .expect("pause");
    env.service
        .pause_check(env.project, resumed)
        .await
        .expect("pause");
    env.service
        .resume_check(env.project, resumed)
        .await
        .expect("resume");
    env.service
        .delete_check(env.project, deleted)
        .await
        .expect("delete");
    advance_to(&env, 3600).await;
    assert_eq!(env.stored(paused), StoredStatus::Paused);
    assert_eq!(env.stored(resumed), StoredStatus::New);
    assert!(env.down_flips(paused).is_empty() && env.down_flips(resumed).is_empty());
    assert!(env.service.read(|s| s.check(&deleted).is_none()));
    assert!(env.service.flips(deleted).expect("flips").is_empty());
    env.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_ping_in_grace_moves_the_deadline() {
    let env = env().await;
    let c = env.create(json!({"timeout": 60, "grace": 60})).await;
    env.ping(c, Signal::Success).await;
    advance_to(&env, 90).await;
    let second = env.service.now();
    env.ping(c, Signal::Success).await;
    advance_to(&env, 200).await;
    assert_eq!(env.stored(c), StoredStatus::Up);
    advance_to(&env, 211).await;
    assert_eq!(
        env.down_flips(c).first().map(|f| f.created),
        Some(second + SignedDuration::from_secs(120))
    );
    env.close().await;
}

#[tokio::test(start_paused = true)]
async fn deadlines_passed_while_stopped_are_handled_once_at_start() {
    let env = env().await;
    let c = env.create(json!({"timeout": 60, "grace": 60})).await;
    env.ping(c, Signal::Success).await;
    let dir = env.close().await;
    // The service was stopped for an hour.
    let env = open(dir, at(3600)).await;
    settle().await;
    let flips = env.down_flips(c);
    assert_eq!(flips.len(), 1);
    assert_eq!(
        flips[0].created,
        at(120),
        "stamped when it went down, not at start"
    );
    assert_eq!(env.outbox_for(c), 2);
    let dir = env.close().await;
    let env = open(dir, at(7200)).await;
    settle().await;
    assert_eq!(
        env.down_flips(c).len(),
        1,
        "a second restart creates nothing twice"
    );
    assert_eq!(env.outbox_for(c), 2);
    env.close().await;
}

#[tokio::test(start_paused = true)]
async fn flips_older_than_two_full_months_are_pruned() {
    let env = env().await;
    let old = env.create(json!({})).await;
    env.service
        .pause_check(env.project, old)
        .await
        .expect("pause");
    // 2026-03-15: January's flip is still within "this month and the two before" ...
    advance_to(&env, 73 * 86_400).await;
    overdue::monitor::retention::sweep(&env.service).await;
    assert_eq!(env.flips(old).len(), 1);
    env.service
        .resume_check(env.project, old)
        .await
        .expect("resume");
    // ... on 2026-04-02 it is not, while the March flip is.
    advance_to(&env, 91 * 86_400).await;
    overdue::monitor::retention::sweep(&env.service).await;
    let left = env.flips(old);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].new_status, StoredStatus::New);
    env.close().await;
}
