//! The alerting rules across `kill -9` of a real `overdue serve` process, with a real webhook
//! receiver: the failures a `fail_threshold` has counted, and a child's down alert that a down
//! parent holds, are in the data file when the process dies, so the next start neither misses
//! nor repeats an alert. (Snooze, `max_duration` and quiet windows have theirs beside their
//! other tests.)

use serde_json::json;

use crate::process::Serve;
use crate::receivers::HttpReceiver;
use crate::rules::{alert, serve_process};

/// A check of the process's project with the hook as its channel; its UUID.
fn create(serve: &Serve, key: &str, body: serde_json::Value) -> String {
    let mut body = body;
    body["channels"] = json!("*");
    let made = serve.http_ok("POST", "/api/v3/checks/", Some(key), Some(&body));
    made["uuid"].as_str().expect("uuid").to_string()
}

fn ping(serve: &Serve, uuid: &str, tail: &str) {
    serve.http_ok("GET", &format!("/ping/{uuid}{tail}"), None, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_counted_before_a_kill_9_count_after_it() {
    let http = HttpReceiver::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (serve, key) = serve_process(&data, &http, true);
    let key = key.expect("first start key");
    let uuid = create(&serve, &key, json!({"name": "flaky", "fail_threshold": 3}));
    ping(&serve, &uuid, "");
    ping(&serve, &uuid, "/fail");
    ping(&serve, &uuid, "/fail");
    assert_eq!(alert(&http, 1).await, None, "two of three");
    serve.sigkill();
    let (serve, _) = serve_process(&data, &http, false);
    assert_eq!(alert(&http, 1).await, None, "nothing at start");
    ping(&serve, &uuid, "/fail");
    assert_eq!(
        alert(&http, 3).await.as_deref(),
        Some("/down/flaky"),
        "the third"
    );
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    serve.sigkill();
    let (serve, _) = serve_process(&data, &http, false);
    assert_eq!(alert(&http, 2).await, None, "never twice");
    let got = serve.http_ok("GET", &format!("/api/v3/checks/{uuid}"), Some(&key), None);
    assert_eq!(got["status"], "down");
    drop(serve);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_held_alert_survives_a_kill_9_and_goes_out_once_when_the_parent_recovers() {
    let http = HttpReceiver::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (serve, key) = serve_process(&data, &http, true);
    let key = key.expect("first start key");
    let router = create(&serve, &key, json!({"name": "router"}));
    let nas = create(&serve, &key, json!({"name": "nas", "parents": router}));
    ping(&serve, &router, "");
    ping(&serve, &nas, "");
    ping(&serve, &router, "/fail");
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/router"));
    ping(&serve, &nas, "/fail");
    assert_eq!(alert(&http, 1).await, None, "held while the parent is down");
    serve.sigkill();
    let (serve, _) = serve_process(&data, &http, false);
    assert_eq!(alert(&http, 2).await, None, "still held after the restart");
    ping(&serve, &router, "");
    let mut got = vec![
        alert(&http, 3).await.expect("an alert"),
        alert(&http, 3).await.expect("an alert"),
    ];
    got.sort();
    assert_eq!(got, ["/down/nas", "/up/router"]);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    serve.sigkill();
    let (serve, _) = serve_process(&data, &http, false);
    assert_eq!(alert(&http, 2).await, None, "never twice");
    drop(serve);
}
