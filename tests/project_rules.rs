//! Quiet time for many checks at once (issue 17, rule 1), through the HTTP API with a real
//! webhook receiver: snoozing a tag's checks or the whole project with one call
//! (`POST /api/v3/checks/snooze`), and the project's own quiet window
//! (`GET`/`POST /api/v3/project/`), which holds every check's alerts, also across restarts.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::TestServer;
use crate::receivers::HttpReceiver;
use crate::rules::{alert, hook, ping, serve_at_with, serve_with_hook};

/// Names of the checks in a `{"checks": [...]}` answer, sorted.
fn names(doc: &Value) -> Vec<String> {
    let mut names: Vec<String> = doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_string())
        .collect();
    names.sort();
    names
}

/// Names of the project's checks that are snoozed now.
async fn snoozed(t: &TestServer) -> Vec<String> {
    let (_, doc) = t.call(Method::GET, "/api/v3/checks/", None).await;
    let mut names: Vec<String> = doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| !c["snoozed_until"].is_null())
        .map(|c| c["name"].as_str().expect("name").to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_snoozes_a_tags_checks_or_the_whole_project() {
    let http = HttpReceiver::start().await;
    let t = serve_with_hook(&http).await;
    let mut uuids = Vec::new();
    for (name, tags) in [("db", "prod nas"), ("web", "prod"), ("dev", "")] {
        let made = t
            .create(json!({"name": name, "tags": tags, "channels": "*"}))
            .await;
        let uuid = made["uuid"].as_str().expect("uuid").to_string();
        ping(&t, &uuid, "").await;
        uuids.push(uuid);
    }
    // Every tag named must be among a check's tags, as the list filters.
    let (code, doc) = t
        .call(
            Method::POST,
            "/api/v3/checks/snooze?tag=prod&tag=nas",
            Some(&json!({"seconds": 60})),
        )
        .await;
    assert_eq!((code, names(&doc)), (200, vec!["db".to_string()]), "{doc}");
    let (code, doc) = t
        .call(
            Method::POST,
            "/api/v3/checks/snooze?tag=prod",
            Some(&json!({"seconds": 3})),
        )
        .await;
    assert_eq!(code, 200, "{doc}");
    assert_eq!(names(&doc), ["db", "web"]);
    assert!(
        doc["checks"][0]["snoozed_until"].is_string(),
        "each check as GET shows it: {doc}"
    );
    let ends = std::time::Instant::now() + Duration::from_secs(2);
    assert_eq!(snoozed(&t).await, ["db", "web"]);
    // The snoozed checks hold their alerts; the other alerts at once.
    for uuid in &uuids {
        ping(&t, uuid, "/fail").await;
    }
    assert_eq!(alert(&http, 2).await.as_deref(), Some("/down/dev"));
    assert_eq!(alert(&http, 1).await, None, "prod is snoozed");
    let mut after: Vec<String> = Vec::new();
    for _ in 0..2 {
        after.push(
            alert(&http, 5)
                .await
                .expect("an alert when the snooze ends"),
        );
    }
    assert!(std::time::Instant::now() >= ends, "not before the end");
    after.sort();
    assert_eq!(after, ["/down/db", "/down/web"]);
    assert_eq!(alert(&http, 1).await, None, "once each");

    // The whole project; then bad requests change nothing; then the end for all at once.
    let (code, doc) = t
        .call(
            Method::POST,
            "/api/v3/checks/snooze/",
            Some(&json!({"seconds": 600})),
        )
        .await;
    assert_eq!(
        (code, names(&doc)),
        (200, vec!["db".into(), "dev".into(), "web".into()])
    );
    for uuid in &uuids {
        ping(&t, uuid, "").await;
    }
    for (body, message) in [
        (json!({}), "seconds or until is required"),
        (json!({"seconds": "1h"}), "seconds is not a number"),
    ] {
        let (code, doc) = t
            .call(Method::POST, "/api/v3/checks/snooze", Some(&body))
            .await;
        assert_eq!(code, 400, "{body}");
        assert_eq!(doc["error"], format!("json validation error: {message}"));
    }
    let r = t
        .ro(Method::POST, "/api/v3/checks/snooze")
        .json(&json!({"seconds": 0}))
        .send()
        .await
        .expect("snooze");
    assert_eq!(r.status(), 401, "a read-only key snoozes nothing");
    let r = t
        .rw(Method::GET, "/api/v3/checks/snooze")
        .send()
        .await
        .expect("snooze");
    assert_eq!(r.status(), 405);
    assert_eq!(snoozed(&t).await, ["db", "dev", "web"]);
    let (code, doc) = t
        .call(
            Method::POST,
            "/api/v3/checks/snooze",
            Some(&json!({"seconds": 0})),
        )
        .await;
    assert_eq!(
        (code, doc["checks"].as_array().map(Vec::len)),
        (200, Some(3))
    );
    assert!(snoozed(&t).await.is_empty());
    let mut ups: Vec<String> = Vec::new();
    for _ in 0..3 {
        ups.push(
            alert(&http, 3)
                .await
                .expect("the recoveries the snooze held"),
        );
    }
    ups.sort();
    assert_eq!(ups, ["/up/db", "/up/dev", "/up/web"]);
    let (code, doc) = t
        .call(
            Method::POST,
            "/api/v3/checks/snooze?tag=nothing",
            Some(&json!({"seconds": 60})),
        )
        .await;
    assert_eq!(
        (code, doc),
        (200, json!({"checks": []})),
        "no check matched"
    );
    t.shutdown().await;
}

#[tokio::test]
async fn the_projects_settings_are_shown_to_any_key_and_changed_by_read_write_ones() {
    let s = TestServer::start().await;
    let (code, doc) = s.call(Method::GET, "/api/v3/project/", None).await;
    assert_eq!(code, 200);
    assert_eq!(
        doc,
        json!({"name": "default", "quiet_schedule": "", "quiet_tz": "UTC", "quiet_duration": 0})
    );
    let (code, doc) = s
        .call(
            Method::POST,
            "/api/v3/project/",
            Some(
                &json!({"quiet_schedule": "Sun 02:00", "quiet_tz": "Europe/Riga",
                         "quiet_duration": 7200}),
            ),
        )
        .await;
    assert_eq!(
        (code, &doc["quiet_schedule"]),
        (200, &json!("Sun 02:00")),
        "{doc}"
    );
    for (body, message) in [
        (
            json!({"quiet_schedule": "Sundays"}),
            "quiet_schedule is not a valid cron or OnCalendar expression",
        ),
        (
            json!({"quiet_tz": "Mars/Base"}),
            "quiet_tz is not a valid timezone",
        ),
        (json!({"quiet_duration": 0}), "quiet_duration is too small"),
    ] {
        let (code, doc) = s.call(Method::POST, "/api/v3/project/", Some(&body)).await;
        assert_eq!(code, 400, "{body}");
        assert_eq!(doc["error"], format!("json validation error: {message}"));
    }
    let r = s
        .ro(Method::POST, "/api/v3/project/")
        .json(&json!({"quiet_schedule": ""}))
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 401);
    let r = s
        .ro(Method::GET, "/api/v3/project")
        .send()
        .await
        .expect("get");
    assert_eq!(r.status(), 200);
    let doc: Value = r.json().await.expect("json");
    assert_eq!(
        (
            &doc["quiet_schedule"],
            &doc["quiet_tz"],
            &doc["quiet_duration"]
        ),
        (&json!("Sun 02:00"), &json!("Europe/Riga"), &json!(7200)),
        "unchanged by the refused requests"
    );
    // A field left out keeps its value; "" removes the window.
    let (_, doc) = s
        .call(
            Method::POST,
            "/api/v3/project/",
            Some(&json!({"quiet_duration": 600})),
        )
        .await;
    assert_eq!(
        (&doc["quiet_schedule"], &doc["quiet_duration"]),
        (&json!("Sun 02:00"), &json!(600))
    );
    let (_, doc) = s
        .call(
            Method::POST,
            "/api/v3/project/",
            Some(&json!({"quiet_schedule": ""})),
        )
        .await;
    assert_eq!(doc["quiet_duration"], 0);
    s.stop().await;
}

/// A window that opens every minute for 30 seconds ("* * * * *", 30) on a clock set a few
/// seconds before a window's end, as the check-level test does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projects_quiet_window_holds_every_check_until_it_closes_also_across_a_restart() {
    let http = HttpReceiver::start().await;
    let closes = std::time::Instant::now() + Duration::from_secs(6);
    let t = serve_at_with("2026-06-01T12:00:24Z", None, Some(hook(&http.base))).await;
    let (code, doc) = t
        .call(
            Method::POST,
            "/api/v3/project/",
            Some(&json!({"quiet_schedule": "* * * * *", "quiet_duration": 30})),
        )
        .await;
    assert_eq!(code, 200, "{doc}");
    let made = t.create(json!({"name": "q", "channels": "*"})).await;
    assert_eq!(
        made["quiet_schedule"], "",
        "the check has no window of its own"
    );
    let uuid = made["uuid"].as_str().expect("uuid").to_string();
    ping(&t, &uuid, "").await;
    ping(&t, &uuid, "/fail").await;
    assert_eq!(t.get_check(&uuid).await["status"], "down");
    let open_for = closes.saturating_duration_since(std::time::Instant::now());
    let early = http
        .next(open_for.saturating_sub(Duration::from_millis(300)))
        .await;
    assert_eq!(early.map(|r| r.path), None, "held in the project's window");
    assert_eq!(alert(&http, 8).await.as_deref(), Some("/down/q"));
    assert!(std::time::Instant::now() >= closes, "at the window's end");
    ping(&t, &uuid, "").await;
    assert_eq!(
        alert(&http, 3).await.as_deref(),
        Some("/up/q"),
        "outside: at once"
    );
    // Its delivery is recorded before the stop (else the next start sends it again).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let dir = t.shutdown().await;

    // Held in the next day's window, the service stopped over its end: once, at start.
    let t = serve_at_with("2026-06-02T08:00:10Z", Some(dir), None).await;
    ping(&t, &uuid, "/fail").await;
    assert_eq!(alert(&http, 1).await, None, "held");
    let dir = t.shutdown().await;
    let t = serve_at_with("2026-06-02T08:00:45Z", Some(dir), None).await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/q"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let dir = t.shutdown().await;
    let t = serve_at_with("2026-06-02T08:00:50Z", Some(dir), None).await;
    assert_eq!(alert(&http, 2).await, None, "never twice");
    let (_, doc) = t.call(Method::GET, "/api/v3/project/", None).await;
    assert_eq!(
        doc["quiet_schedule"], "* * * * *",
        "the window survives restarts"
    );

    // Removing the window while it holds an alert sends that alert at once. An hour-long
    // window that opens every minute is always open, however slow the machine is.
    let dir = t.shutdown().await;
    let t = serve_at_with("2026-06-02T09:00:05Z", Some(dir), None).await;
    let (code, _) = t
        .call(
            Method::POST,
            "/api/v3/project/",
            Some(&json!({"quiet_duration": 3600})),
        )
        .await;
    assert_eq!(code, 200);
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 1).await, None, "the recovery is held");
    let (code, _) = t
        .call(
            Method::POST,
            "/api/v3/project/",
            Some(&json!({"quiet_schedule": ""})),
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/up/q"));
    t.shutdown().await;
}

/// The project's window on the real clock of a real process: a window that opens every 20
/// seconds for 12 (`*:*:00/20`). An alert held in it when the service is killed (`kill -9`)
/// and whose window closes while it is dead goes out once at the next start, never again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_window_survives_kill_9_without_a_missed_or_repeated_alert() {
    let http = HttpReceiver::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (serve, key) = crate::rules::serve_process(&data, &http, true);
    let key = key.expect("first start key");
    serve.http_ok(
        "POST",
        "/api/v3/project/",
        Some(&key),
        Some(&json!({"quiet_schedule": "*-*-* *:*:00/20", "quiet_duration": 12})),
    );
    let made = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": "box", "channels": "*"})),
    );
    let uuid = made["uuid"].as_str().expect("uuid").to_string();
    serve.http_ok("GET", &format!("/ping/{uuid}"), None, None);
    // Wait for the start of a window, so that at least 10 of its seconds are left.
    let in_window = || {
        let s = jiff::Timestamp::now().as_second().rem_euclid(20);
        (0..2).contains(&s)
    };
    assert!(
        crate::process::wait_until(Duration::from_secs(25), in_window),
        "a window opens every 20 seconds"
    );
    // The window closes at most 12 s from now, and the next opens no sooner than 18 s.
    let closes = std::time::Instant::now() + Duration::from_secs(12);
    serve.http_ok("GET", &format!("/ping/{uuid}/fail"), None, None);
    assert_eq!(alert(&http, 1).await, None, "held in the project's window");
    serve.sigkill();
    tokio::time::sleep(closes.saturating_duration_since(std::time::Instant::now())).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (serve, _) = crate::rules::serve_process(&data, &http, false);
    assert_eq!(alert(&http, 5).await.as_deref(), Some("/down/box"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    serve.sigkill();
    let (serve, _) = crate::rules::serve_process(&data, &http, false);
    assert_eq!(alert(&http, 3).await, None, "no alert twice");
    drop(serve);
}
