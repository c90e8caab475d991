//! Issue 17, rule 5: what each assignment of a channel sends. `late` when a check enters its
//! grace time (once per grace period, also across a restart), `failure` for a failure that
//! `fail_threshold` let pass, `down` and `up` as before, chosen per check through the API's
//! `channel_events` (a choice equal to the channel's own is not kept), with a real webhook
//! receiver that records `/<$STATUS>/<$NAME>`.

use overdue::model::ChannelConfig;
use overdue::model::channel::{HookSpec, WebhookConfig};
use reqwest::Method;
use serde_json::{Value, json};

use crate::common::TestServer;
use crate::receivers::HttpReceiver;
use crate::rules::{alert, ping, serve_at_with};

/// A webhook whose path names the event: `/down/x`, `/late/x`, `/failure/x`, `/up/x`.
fn hook(base: &str) -> ChannelConfig {
    ChannelConfig::Webhook(WebhookConfig {
        down: Some(HookSpec::new(&format!("{base}/$STATUS/$NAME"), "")),
        up: Some(HookSpec::new(&format!("{base}/up/$NAME"), "")),
    })
}

fn uuid_of(doc: &Value) -> String {
    doc["uuid"].as_str().expect("uuid").to_string()
}

/// A delivering server whose clock reads `at` at its start, on `dir` when given; the first
/// one gets the hook channel.
async fn serve_at(at: &str, dir: Option<tempfile::TempDir>, http: &HttpReceiver) -> TestServer {
    let hook = dir.is_none().then(|| hook(&http.base));
    serve_at_with(at, dir, hook).await
}

/// A cron check due every minute: the service's clock starts a few seconds before a minute
/// ends, so its grace time begins within seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_that_sends_late_hears_once_when_the_grace_time_begins() {
    let http = HttpReceiver::start().await;
    let t = serve_at("2026-06-01T12:00:55Z", None, &http).await;
    let body =
        |name: &str| json!({"name": name, "schedule": "* * * * *", "grace": 60, "channels": "*"});
    let mut late = body("nightly");
    late["channel_events"] = json!({"hook": "down,up,late"});
    let made = t.create(late).await;
    let hook = made["channels"].as_str().expect("channels").to_string();
    assert_eq!(made["channel_events"], json!({ &hook: "down,up,late" }));
    let uuid = uuid_of(&made);
    // Its neighbour keeps the channel's own events: no late notice.
    let plain = uuid_of(&t.create(body("plain")).await);
    ping(&t, &uuid, "").await;
    ping(&t, &plain, "").await;
    assert_eq!(alert(&http, 12).await.as_deref(), Some("/late/nightly"));
    assert_eq!(t.get_check(&uuid).await["status"], "grace");
    assert_eq!(alert(&http, 2).await, None, "once, and not for the other");
    let dir = t.shutdown().await;

    // Still in the same grace time after a restart: not again.
    let t = serve_at("2026-06-01T12:01:50Z", Some(dir), &http).await;
    assert_eq!(alert(&http, 2).await, None, "never twice");
    // A ping starts a new period: the next lateness is news again.
    ping(&t, &uuid, "").await;
    ping(&t, &plain, "").await;
    assert_eq!(alert(&http, 15).await.as_deref(), Some("/late/nightly"));
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_below_the_threshold_reach_a_channel_that_sends_failure() {
    let http = HttpReceiver::start().await;
    let t = serve_at("2026-06-01T12:00:00Z", None, &http).await;
    let made = t
        .create(
            json!({"name": "flaky", "fail_threshold": 3, "channels": "*",
                       "channel_events": {"hook": "down,failure"}}),
        )
        .await;
    let uuid = uuid_of(&made);
    ping(&t, &uuid, "").await;
    ping(&t, &uuid, "/fail").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/failure/flaky"));
    ping(&t, &uuid, "/1").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/failure/flaky"));
    ping(&t, &uuid, "/fail").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/down/flaky"));
    // Failures while down and the recovery: this channel sends neither.
    ping(&t, &uuid, "/fail").await;
    ping(&t, &uuid, "").await;
    assert_eq!(t.get_check(&uuid).await["status"], "up");
    assert_eq!(alert(&http, 2).await, None, "no up, no failure while down");
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_left_with_up_only_is_silent_on_down_and_snoozed_notices_are_dropped() {
    let http = HttpReceiver::start().await;
    let t = serve_at("2026-06-01T12:00:00Z", None, &http).await;
    let uuid = uuid_of(
        &t.create(json!({"name": "svc", "channels": "hook",
                          "channel_events": {"hook": "up"}}))
            .await,
    );
    ping(&t, &uuid, "").await;
    ping(&t, &uuid, "/fail").await;
    assert_eq!(alert(&http, 2).await, None, "down is not sent");
    ping(&t, &uuid, "").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/up/svc"));
    // A failure notice during a snooze is dropped, not held: it reports no change.
    let (code, _) = t
        .call(
            Method::POST,
            &format!("/api/v3/checks/{uuid}"),
            Some(&json!({"fail_threshold": 2, "channel_events": {"hook": "failure"}})),
        )
        .await;
    assert_eq!(code, 200);
    let (code, _) = t
        .call(
            Method::POST,
            &format!("/api/v3/checks/{uuid}/snooze"),
            Some(&json!({"seconds": 2})),
        )
        .await;
    assert_eq!(code, 200);
    ping(&t, &uuid, "/fail").await;
    assert_eq!(
        alert(&http, 4).await,
        None,
        "dropped, also after the snooze"
    );
    ping(&t, &uuid, "").await;
    ping(&t, &uuid, "/fail").await;
    assert_eq!(alert(&http, 3).await.as_deref(), Some("/failure/svc"));
    t.stop().await;
}

#[tokio::test]
async fn channel_events_are_validated_kept_per_assignment_and_hidden_from_read_only_keys() {
    let s = TestServer::start().await;
    let ops = s
        .service
        .add_channel("default", "ops", hook("http://127.0.0.1:9"))
        .await
        .expect("ops");
    s.service
        .add_channel("default", "pager", hook("http://127.0.0.1:9"))
        .await
        .expect("pager");
    let ops = ops.uuid.to_string();
    let made = s
        .create(json!({"name": "db", "channels": "ops",
                       "channel_events": {"ops": "late,down"}}))
        .await;
    let uuid = uuid_of(&made);
    assert_eq!(made["channel_events"], json!({ &ops: "down,late" }));
    let path = format!("/api/v3/checks/{uuid}");
    // The body's shape is checked first (with the API's prefix), the channels next (in the
    // words `channels` uses).
    for (body, message) in [
        (
            json!({"channel_events": "down"}),
            "json validation error: channel_events is not an object",
        ),
        (
            json!({"channel_events": {"ops": ["down"]}}),
            "json validation error: channel_events: the events of ops are not a string",
        ),
        (
            json!({"channel_events": {"ops": "down,grace"}}),
            "json validation error: channel_events: ops: unknown event \"grace\" (use down, up, late or failure)",
        ),
        (
            json!({"channel_events": {"nope": "down"}}),
            "channel_events: invalid channel identifier: nope",
        ),
        (
            json!({"channel_events": {"pager": "down"}}),
            "channel_events: pager is not one of the check's channels",
        ),
    ] {
        let (code, doc) = s.call(Method::POST, &path, Some(&body)).await;
        assert_eq!(code, 400, "{body}");
        assert_eq!(doc["error"], message);
    }
    assert_eq!(
        s.get_check(&uuid).await["channel_events"],
        json!({ &ops: "down,late" }),
        "a refused update changes nothing"
    );
    // Kept across a restart; hidden from read-only keys like the UUIDs it names.
    let dir = s.shutdown().await;
    let s = TestServer::start_with(crate::common::Options {
        dir: Some(dir),
        ..Default::default()
    })
    .await;
    assert_eq!(
        s.get_check(&uuid).await["channel_events"],
        json!({ &ops: "down,late" })
    );
    let r = s
        .ro(Method::GET, "/api/v3/checks/")
        .send()
        .await
        .expect("list");
    let listed: Value = r.json().await.expect("json");
    assert!(listed["checks"][0].get("channel_events").is_none());
    // The channel's own events are not a choice; leaving the channel drops the choice.
    let (_, doc) = s
        .call(
            Method::POST,
            &path,
            Some(&json!({"channels": "ops,pager", "channel_events": {"ops": "down,up"}})),
        )
        .await;
    assert_eq!(doc["channel_events"], json!({}));
    let (_, doc) = s
        .call(
            Method::POST,
            &path,
            Some(&json!({"channel_events": {"ops": "failure", "pager": ""}})),
        )
        .await;
    assert_eq!(
        doc["channel_events"].as_object().map(serde_json::Map::len),
        Some(2)
    );
    let (_, doc) = s
        .call(Method::POST, &path, Some(&json!({"channels": "pager"})))
        .await;
    assert_eq!(
        doc["channel_events"].as_object().map(serde_json::Map::len),
        Some(1)
    );
    assert!(doc["channel_events"].get(&ops).is_none());
    s.stop().await;
}
