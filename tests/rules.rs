//! The alerting rules of issue 17, through the HTTP API with a real webhook receiver:
//! `fail_threshold` (down after N failures in a row), `max_duration` (a started run that does
//! not finish in time goes down, also across a restart and a `kill -9`) and `min_duration` (a
//! run that ends too soon is a failure); their validation and their place in the check JSON.

use std::time::Duration;

use overdue::model::ChannelConfig;
use overdue::model::channel::{HookSpec, WebhookConfig};
use overdue::notify::NotifyConfig;
use reqwest::Method;
use serde_json::{Value, json};

use crate::common::TestServer;
use crate::process::{self, Serve};
use crate::receivers::{HttpReceiver, Request, start};

/// A webhook that calls `/down/<name>` and `/up/<name>`.
pub(crate) fn hook(base: &str) -> ChannelConfig {
    ChannelConfig::Webhook(WebhookConfig {
        down: Some(HookSpec::new(&format!("{base}/down/$NAME"), "")),
        up: Some(HookSpec::new(&format!("{base}/up/$NAME"), "")),
    })
}

/// A server that delivers alerts, with the hook as the project's channel.
pub(crate) async fn serve_with_hook(http: &HttpReceiver) -> TestServer {
    let t = start(NotifyConfig::default(), None).await;
    t.service
        .add_channel("default", "hook", hook(&http.base))
        .await
        .expect("hook");
    t
}

async fn create(t: &TestServer, body: Value) -> String {
    let mut body = body;
    body["channels"] = json!("*");
    let c = t.create(body).await;
    c["uuid"].as_str().expect("uuid").to_string()
}

pub(crate) async fn ping(t: &TestServer, uuid: &str, tail: &str) {
    let r = t
        .anon(Method::GET, &format!("/ping/{uuid}{tail}"))
        .send()
        .await
        .expect("ping");
    assert_eq!(r.status(), 200);
}

/// The next alert's path, or None when none comes within `secs`.
pub(crate) async fn alert(http: &HttpReceiver, secs: u64) -> Option<String> {
    http.next(Duration::from_secs(secs))
        .await
        .map(|r: Request| r.path)
}

/// Waits until the outbox is empty: every alert sent is stored as delivered.
async fn delivered(t: &TestServer) {
    for _ in 0..500 {
        if t.service.outbox_pending().expect("outbox").is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("an alert stayed in the outbox");
}

#[tokio::test]
async fn the_rule_fields_are_part_of_the_check_and_validated_like_the_others() {
    let s = TestServer::start().await;
    let made = s.create(json!({"name": "plain"})).await;
    assert_eq!(
        (
            &made["fail_threshold"],
            &made["max_duration"],
            &made["min_duration"]
        ),
        (&json!(1), &json!(0), &json!(0)),
        "a check that sets none has the defaults"
    );
    let uuid = made["uuid"].as_str().expect("uuid");
    let (code, doc) = s
        .call(
            Method::POST,
            &format!("/api/v3/checks/{uuid}"),
            Some(&json!({"fail_threshold": 3, "max_duration": 7200, "min_duration": 60})),
        )
        .await;
    assert_eq!(code, 200, "{doc}");
    for version in ["v1", "v2", "v3"] {
        let (_, got) = s
            .call(Method::GET, &format!("/api/{version}/checks/{uuid}"), None)
            .await;
        assert_eq!(
            (
                &got["fail_threshold"],
                &got["max_duration"],
                &got["min_duration"]
            ),
            (&json!(3), &json!(7200), &json!(60)),
            "{version}"
        );
    }
    let (_, listed) = s.call(Method::GET, "/api/v3/checks/", None).await;
    assert_eq!(listed["checks"][0]["fail_threshold"], 3);
    for (body, message) in [
        (json!({"fail_threshold": 0}), "fail_threshold is too small"),
        (
            json!({"fail_threshold": 101}),
            "fail_threshold is too large",
        ),
        (
            json!({"max_duration": "1h"}),
            "max_duration is not a number",
        ),
        (json!({"min_duration": -5}), "min_duration is too small"),
        (
            json!({"max_duration": 60}),
            "min_duration must be less than max_duration",
        ),
    ] {
        let (code, doc) = s
            .call(Method::POST, &format!("/api/v3/checks/{uuid}"), Some(&body))
            .await;
        assert_eq!(code, 400, "{body}");
        assert_eq!(
            doc["error"],
            format!("json validation error: {message}"),
            "{body}"
        );
    }
    let after = s.get_check(uuid).await;
    assert_eq!(
        (&after["fail_threshold"], &after["max_duration"]),
        (&json!(3), &json!(7200)),
        "a refused update changes nothing"
    );
    // They survive a restart (the check record carries them).
    let dir = s.shutdown().await;
    let s = TestServer::start_with(crate::common::Options {
        dir: Some(dir),
        ..Default::default()
    })
    .await;
    let after = s.get_check(uuid).await;
    assert_eq!(after["min_duration"], 60);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_threshold_of_three_alerts_on_the_third_failure_in_a_row_only() {
    let http = HttpReceiver::start().await;
    let t = serve_with_hook(&http).await;
    let uuid = create(&t, json!({"name": "flaky", "fail_threshold": 3})).await;
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 1).await, None, "new -> up sends nothing");
    ping(&t, &uuid, "/fail").await;
    ping(&t, &uuid, "/1").await;
    assert_eq!(
        t.get_check(&uuid).await["status"],
        "up",
        "two failures held"
    );
    // A success starts the count again.
    ping(&t, &uuid, "").await;
    ping(&t, &uuid, "/fail").await;
    ping(&t, &uuid, "/fail").await;
    assert_eq!(alert(&http, 1).await, None);
    ping(&t, &uuid, "/fail").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/flaky"));
    assert_eq!(t.get_check(&uuid).await["status"], "down");
    ping(&t, &uuid, "/fail").await;
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/up/flaky"));
    assert_eq!(alert(&http, 1).await, None, "one alert each way");
    // Every failure is in the ping log as the failure it was.
    let (_, pings) = t
        .call(Method::GET, &format!("/api/v3/checks/{uuid}/pings/"), None)
        .await;
    let fails = pings["pings"]
        .as_array()
        .expect("pings")
        .iter()
        .filter(|p| p["type"] == "fail")
        .count();
    assert_eq!(fails, 6);
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_past_max_duration_goes_down_at_its_bound_and_one_within_it_does_not() {
    let http = HttpReceiver::start().await;
    let t = serve_with_hook(&http).await;
    let uuid = create(
        &t,
        json!({"name": "backup", "timeout": 3600, "grace": 3600, "max_duration": 2}),
    )
    .await;
    ping(&t, &uuid, "").await;
    // Finished within the bound: nothing.
    ping(&t, &uuid, "/start").await;
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 3).await, None);
    // Started and never finished: down two seconds later, not an hour (the grace).
    let started = std::time::Instant::now();
    ping(&t, &uuid, "/start").await;
    assert_eq!(alert(&http, 5).await.as_deref(), Some("/down/backup"));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(2),
        "not before the bound: {took:?}"
    );
    assert_eq!(t.get_check(&uuid).await["status"], "down");
    let (_, flips) = t
        .call(Method::GET, &format!("/api/v3/checks/{uuid}/flips/"), None)
        .await;
    let flips = flips.as_array().expect("flips");
    assert_eq!(
        flips.iter().filter(|f| f["up"] == 0).count(),
        1,
        "{flips:?}"
    );
    // The late finish brings it back.
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/up/backup"));
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_shorter_than_min_duration_alerts_as_a_failure() {
    let http = HttpReceiver::start().await;
    let t = serve_with_hook(&http).await;
    let uuid = create(&t, json!({"name": "dump", "min_duration": 60})).await;
    ping(&t, &uuid, "/start").await;
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/dump"));
    let (_, pings) = t
        .call(Method::GET, &format!("/api/v3/checks/{uuid}/pings/"), None)
        .await;
    assert_eq!(pings["pings"][0]["type"], "fail", "{pings}");
    // A success that ends no measured run is a success.
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/up/dump"));
    t.shutdown().await;
}

/// `overdue serve` as a process with the hook added through the CLI; its read-write key.
pub(crate) fn serve_process(
    data: &std::path::Path,
    http: &HttpReceiver,
    first: bool,
) -> (Serve, Option<String>) {
    let serve = Serve::start(data);
    let key = first.then(|| serve.first_start_key("read-write API key:"));
    if first {
        process::overdue_in(
            data,
            &[
                "channel",
                "add",
                "default",
                "--kind",
                "webhook",
                "--name",
                "hook",
                "--url-down",
                &format!("{}/down/$NAME", http.base),
                "--url-up",
                &format!("{}/up/$NAME", http.base),
            ],
        )
        .ok();
    }
    (serve, key)
}

/// A run that started before a `kill -9` and whose bound passes while the service is dead
/// alerts once at the next start, and never again after another restart; a run whose bound
/// is still ahead at the restart alerts at its bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_duration_survives_kill_9_and_restarts_without_a_missed_or_repeated_alert() {
    let http = HttpReceiver::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (serve, key) = serve_process(&data, &http, true);
    let key = key.expect("first start key");
    let made = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": "expired", "channels": "*", "max_duration": 2})),
    );
    let expired = made["uuid"].as_str().expect("uuid").to_string();
    let made = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": "ahead", "channels": "*", "max_duration": 8})),
    );
    let ahead = made["uuid"].as_str().expect("uuid").to_string();
    // Before the start pings: each bound is at least its length after this instant.
    let started = std::time::Instant::now();
    for uuid in [&expired, &ahead] {
        serve.http_ok("GET", &format!("/ping/{uuid}/start"), None, None);
    }
    serve.sigkill();
    tokio::time::sleep(Duration::from_secs(3)).await;

    let (serve, _) = serve_process(&data, &http, false);
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/expired"));
    assert_eq!(alert(&http, 2).await, None, "'ahead' still has time");
    assert_eq!(alert(&http, 6).await.as_deref(), Some("/down/ahead"));
    assert!(started.elapsed() >= Duration::from_secs(8), "at its bound");
    let checks = serve.checks(&key);
    assert!(checks.iter().all(|c| c["status"] == "down"), "{checks:?}");
    // Give the outbox a moment to record both deliveries, then crash again: nothing repeats.
    tokio::time::sleep(Duration::from_millis(500)).await;
    serve.sigkill();
    let (serve, _) = serve_process(&data, &http, false);
    assert_eq!(alert(&http, 3).await, None, "no alert twice");
    drop(serve);
}

async fn snooze(t: &TestServer, uuid: &str, body: Value) -> (u16, Value) {
    t.call(
        Method::POST,
        &format!("/api/v3/checks/{uuid}/snooze"),
        Some(&body),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snoozed_check_records_everything_and_alerts_once_when_the_snooze_ends_still_down() {
    let http = HttpReceiver::start().await;
    let t = serve_with_hook(&http).await;
    let uuid = create(&t, json!({"name": "db"})).await;
    ping(&t, &uuid, "").await;
    // Taken before the request: the snooze's end is at least 3 s after this instant.
    let ends = std::time::Instant::now() + Duration::from_secs(3);
    let (code, doc) = snooze(&t, &uuid, json!({"seconds": 3})).await;
    assert_eq!(code, 200, "{doc}");
    let until: jiff::Timestamp = doc["snoozed_until"]
        .as_str()
        .expect("snoozed_until")
        .parse()
        .expect("a timestamp");
    assert!(until > jiff::Timestamp::now());
    ping(&t, &uuid, "/fail").await;
    assert_eq!(t.get_check(&uuid).await["status"], "down", "status is kept");
    let (_, flips) = t
        .call(Method::GET, &format!("/api/v3/checks/{uuid}/flips/"), None)
        .await;
    assert!(
        flips
            .as_array()
            .expect("flips")
            .iter()
            .any(|f| f["up"] == 0),
        "and the flip: {flips}"
    );
    assert_eq!(alert(&http, 1).await, None, "held while snoozed");
    assert_eq!(alert(&http, 5).await.as_deref(), Some("/down/db"));
    assert!(std::time::Instant::now() >= ends, "not before the end");
    assert_eq!(alert(&http, 2).await, None, "once");
    assert_eq!(t.get_check(&uuid).await["snoozed_until"], Value::Null);
    // Down when snoozed, then up: the end tells the recovery.
    snooze(&t, &uuid, json!({"seconds": 2})).await;
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 1).await, None, "held");
    assert_eq!(alert(&http, 4).await.as_deref(), Some("/up/db"));
    // Down and back up within a snooze: nothing to say at its end.
    snooze(&t, &uuid, json!({"seconds": 2})).await;
    ping(&t, &uuid, "/fail").await;
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 4).await, None, "told up, is up");
    let (code, _) = snooze(&t, &uuid, json!({"until": "2999-01-01T00:00:00Z"})).await;
    assert_eq!(code, 400, "a year at most");
    assert_eq!(t.get_check(&uuid).await["snoozed_until"], Value::Null);
    // Ending a snooze early sends what it held at once.
    snooze(&t, &uuid, json!({"seconds": 600})).await;
    ping(&t, &uuid, "/fail").await;
    assert_eq!(alert(&http, 1).await, None);
    let (code, doc) = snooze(&t, &uuid, json!({"seconds": 0})).await;
    assert_eq!((code, &doc["snoozed_until"]), (200, &Value::Null));
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/db"));
    t.shutdown().await;
}

#[tokio::test]
async fn snooze_requests_are_validated_and_need_a_read_write_key() {
    let s = TestServer::start().await;
    let uuid = s.create(json!({"name": "x"})).await["uuid"]
        .as_str()
        .expect("uuid")
        .to_string();
    for (body, message) in [
        (json!({}), "seconds or until is required"),
        (json!({"seconds": -1}), "seconds is too small"),
        (json!({"seconds": "1h"}), "seconds is not a number"),
        (
            json!({"until": "soon"}),
            "until is not a timestamp (2026-01-02T03:04:05Z)",
        ),
        (
            json!({"seconds": 1, "until": "2030-01-01T00:00:00Z"}),
            "give seconds or until, not both",
        ),
    ] {
        let (code, doc) = snooze(&s, &uuid, body.clone()).await;
        assert_eq!(code, 400, "{body}");
        assert_eq!(doc["error"], format!("json validation error: {message}"));
    }
    let r = s
        .ro(Method::POST, &format!("/api/v3/checks/{uuid}/snooze"))
        .json(&json!({"seconds": 60}))
        .send()
        .await
        .expect("snooze");
    assert_eq!(r.status(), 401, "a read-only key snoozes nothing");
    let r = s
        .rw(Method::GET, &format!("/api/v3/checks/{uuid}/snooze"))
        .send()
        .await
        .expect("snooze");
    assert_eq!(r.status(), 405);
    let (code, _) = snooze(
        &s,
        &uuid::Uuid::new_v4().to_string(),
        json!({"seconds": 60}),
    )
    .await;
    assert_eq!(code, 404);
    assert_eq!(s.get_check(&uuid).await["snoozed_until"], Value::Null);
    s.stop().await;
}

/// A snooze whose end passes while the service is dead (`kill -9`) releases its held alert
/// once at the next start, never again after another restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snooze_that_ends_while_the_service_is_dead_alerts_once_at_start() {
    let http = HttpReceiver::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (serve, key) = serve_process(&data, &http, true);
    let key = key.expect("first start key");
    let made = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": "nas", "channels": "*"})),
    );
    let uuid = made["uuid"].as_str().expect("uuid").to_string();
    serve.http_ok("GET", &format!("/ping/{uuid}"), None, None);
    serve.http_ok(
        "POST",
        &format!("/api/v3/checks/{uuid}/snooze"),
        Some(&key),
        Some(&json!({"seconds": 2})),
    );
    serve.http_ok("GET", &format!("/ping/{uuid}/fail"), None, None);
    assert_eq!(alert(&http, 1).await, None, "held");
    serve.sigkill();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (serve, _) = serve_process(&data, &http, false);
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/nas"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    serve.sigkill();
    let (serve, _) = serve_process(&data, &http, false);
    assert_eq!(alert(&http, 3).await, None, "no alert twice");
    drop(serve);
}

/// A server on a clock that reads `at` now (and runs on from there), delivering alerts.
async fn serve_at(
    at: &str,
    dir: Option<tempfile::TempDir>,
    http: &HttpReceiver,
    first: bool,
) -> TestServer {
    serve_at_with(at, dir, first.then(|| hook(&http.base))).await
}

/// A delivering server whose clock reads `at` at its start, on `dir` when given, with
/// `channel` added as the project's "hook".
pub(crate) async fn serve_at_with(
    at: &str,
    dir: Option<tempfile::TempDir>,
    channel: Option<ChannelConfig>,
) -> TestServer {
    let base: jiff::Timestamp = at.parse().expect("timestamp");
    let mut opts = crate::common::Options {
        deliver: true,
        dir,
        clock: Some(overdue::service::Clock::tokio_at(base)),
        ..Default::default()
    };
    opts.service.notify = crate::receivers::fast(NotifyConfig::default());
    let t = TestServer::start_with(opts).await;
    if let Some(channel) = channel {
        t.service
            .add_channel("default", "hook", channel)
            .await
            .expect("hook");
    }
    t
}

/// A window that opens every minute for 30 seconds ("* * * * *", 30): the service's clock
/// is set a few seconds before a window's end, so the test waits seconds, not minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_window_holds_alerts_until_it_closes_also_across_a_restart() {
    let http = HttpReceiver::start().await;
    // The clock starts after this instant, so the window closes no sooner than 6 s after it.
    let closes = std::time::Instant::now() + Duration::from_secs(6);
    let t = serve_at("2026-06-01T12:00:24Z", None, &http, true).await;
    let made = t
        .create(
            json!({"name": "q", "channels": "*", "quiet_schedule": "* * * * *",
                       "quiet_duration": 30}),
        )
        .await;
    assert_eq!(
        (
            &made["quiet_schedule"],
            &made["quiet_tz"],
            &made["quiet_duration"]
        ),
        (&json!("* * * * *"), &json!("UTC"), &json!(30))
    );
    let uuid = made["uuid"].as_str().expect("uuid").to_string();
    ping(&t, &uuid, "").await;
    ping(&t, &uuid, "/fail").await;
    assert_eq!(t.get_check(&uuid).await["status"], "down");
    // Held until the window closes (however long the setup took on a busy machine), then
    // sent at once.
    let open_for = closes.saturating_duration_since(std::time::Instant::now());
    let early = http
        .next(open_for.saturating_sub(Duration::from_millis(300)))
        .await;
    assert_eq!(early.map(|r| r.path), None, "held in the window");
    assert_eq!(alert(&http, 8).await.as_deref(), Some("/down/q"));
    assert!(std::time::Instant::now() >= closes, "at the window's end");
    // Outside the window alerts go at once.
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/up/q"));
    // Stopped only once the delivery is stored: stopped between the receiver's answer and
    // that commit, the service would send it again at start (the documented window).
    delivered(&t).await;
    let dir = t.shutdown().await;

    // Held in the next day's window, the service stopped over its end: once, at start.
    let t = serve_at("2026-06-02T08:00:10Z", Some(dir), &http, false).await;
    ping(&t, &uuid, "/fail").await;
    assert_eq!(alert(&http, 1).await, None, "held");
    let dir = t.shutdown().await;
    let t = serve_at("2026-06-02T08:00:45Z", Some(dir), &http, false).await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/q"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let dir = t.shutdown().await;
    let t = serve_at("2026-06-02T08:00:50Z", Some(dir), &http, false).await;
    assert_eq!(alert(&http, 2).await, None, "never twice");
    // Removing the window: `""`.
    let (code, doc) = t
        .call(
            Method::POST,
            &format!("/api/v3/checks/{uuid}"),
            Some(&json!({"quiet_schedule": ""})),
        )
        .await;
    assert_eq!((code, &doc["quiet_duration"]), (200, &json!(0)));
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_of_a_down_parent_alert_once_when_it_recovers_and_not_before() {
    let http = HttpReceiver::start().await;
    let t = serve_with_hook(&http).await;
    let router = create(&t, json!({"name": "router"})).await;
    let mut children = Vec::new();
    for name in ["nas", "printer", "camera"] {
        children.push(create(&t, json!({"name": name, "parents": router})).await);
    }
    assert_eq!(t.get_check(&children[0]).await["parents"], router.as_str());
    for uuid in std::iter::once(&router).chain(&children) {
        ping(&t, uuid, "").await;
    }
    ping(&t, &router, "/fail").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/router"));
    for uuid in &children {
        ping(&t, uuid, "/fail").await;
    }
    assert_eq!(alert(&http, 2).await, None, "one alert, not four");
    assert_eq!(
        t.get_check(&children[1]).await["status"],
        "down",
        "still recorded"
    );
    // The camera comes back by itself while the router is down: nothing to say about it.
    ping(&t, &children[2], "").await;
    ping(&t, &router, "").await;
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(alert(&http, 3).await.expect("an alert"));
    }
    got.sort();
    assert_eq!(got, ["/down/nas", "/down/printer", "/up/router"]);
    assert_eq!(alert(&http, 2).await, None, "once");
    // Validation: other projects' checks, itself, cycles, garbage.
    let nas = &children[0];
    for (parents, message) in [
        (nas.clone(), "a check cannot be its own parent".to_string()),
        ("nope".into(), "invalid parent: nope".into()),
        (
            uuid::Uuid::new_v4().to_string(),
            "invalid parent: ".to_string(),
        ),
    ] {
        let (code, doc) = t
            .call(
                Method::POST,
                &format!("/api/v3/checks/{nas}"),
                Some(&json!({"parents": parents})),
            )
            .await;
        assert_eq!(code, 400, "{parents}");
        assert!(
            doc["error"].as_str().expect("error").starts_with(&message),
            "{doc}"
        );
    }
    let (code, doc) = t
        .call(
            Method::POST,
            &format!("/api/v3/checks/{router}"),
            Some(&json!({"parents": nas})),
        )
        .await;
    assert_eq!(code, 400);
    assert_eq!(doc["error"], format!("parents would form a cycle: {nas}"));
    // Removing the parent frees its children.
    let (code, _) = t
        .call(Method::DELETE, &format!("/api/v3/checks/{router}"), None)
        .await;
    assert_eq!(code, 200);
    assert_eq!(t.get_check(nas).await["parents"], "");
    t.shutdown().await;
}

/// A parent and its child whose deadlines both passed while the service was stopped go down
/// in the same batch at start: the child's alert waits for the parent whichever is first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_and_child_going_down_in_one_batch_send_one_alert() {
    let http = HttpReceiver::start().await;
    let t = serve_at("2026-06-01T12:00:00Z", None, &http, true).await;
    let router = t
        .create(json!({"name": "router", "channels": "*", "timeout": 60, "grace": 60}))
        .await["uuid"]
        .as_str()
        .expect("uuid")
        .to_string();
    let child = t
        .create(
            json!({"name": "nas", "channels": "*", "timeout": 60, "grace": 60,
                       "parents": router}),
        )
        .await["uuid"]
        .as_str()
        .expect("uuid")
        .to_string();
    ping(&t, &child, "").await;
    ping(&t, &router, "").await;
    let dir = t.shutdown().await;
    let t = serve_at("2026-06-01T12:05:00Z", Some(dir), &http, false).await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/router"));
    assert_eq!(alert(&http, 2).await, None, "the child's waits");
    assert_eq!(t.get_check(&child).await["status"], "down");
    ping(&t, &router, "").await;
    let mut got = vec![
        alert(&http, 3).await.expect("alert"),
        alert(&http, 3).await.expect("alert"),
    ];
    got.sort();
    assert_eq!(got, ["/down/nas", "/up/router"]);
    t.shutdown().await;
}
