//! Every validation rule of reference-behavior §2.1: the exact message, on create and on
//! update, and proof that nothing was stored.

use crate::common;

use common::{TestServer, status_json};
use reqwest::Method;
use serde_json::{Value, json};

fn cases() -> Vec<(Value, &'static str)> {
    vec![
        (json!({"timeout": 59}), "timeout is too small"),
        (json!({"timeout": 31_536_001}), "timeout is too large"),
        (json!({"grace": 59}), "grace is too small"),
        (json!({"grace": 31_536_001}), "grace is too large"),
        (json!({"timeout": "3600"}), "timeout is not a number"),
        (json!({"timeout": 3600.5}), "timeout is not a number"),
        (json!({"timeout": 3600.0}), "timeout is not a number"),
        (json!({"timeout": true}), "timeout is too small"),
        (json!({"grace": [60]}), "grace is not a number"),
        (json!({"name": 123}), "name is not a string"),
        (json!({"name": "x".repeat(101)}), "name is too long"),
        (json!({"tags": ["a", "b"]}), "tags is not a string"),
        (json!({"desc": 5}), "desc is not a string"),
        (json!({"slug": "Bad!"}), "slug does not match pattern"),
        (
            json!({"slug": "look spaces"}),
            "slug does not match pattern",
        ),
        (json!({"slug": "a".repeat(101)}), "slug is too long"),
        (
            json!({"manual_resume": "yes"}),
            "manual_resume is not a boolean",
        ),
        (
            json!({"manual_resume": 1}),
            "manual_resume is not a boolean",
        ),
        (
            json!({"filter_subject": "surprise"}),
            "filter_subject is not a boolean",
        ),
        (json!({"filter_body": 0}), "filter_body is not a boolean"),
        (
            json!({"filter_http_body": "true"}),
            "filter_http_body is not a boolean",
        ),
        (
            json!({"filter_default_fail": []}),
            "filter_default_fail is not a boolean",
        ),
        (json!({"methods": "GET"}), "methods has unexpected value"),
        (json!({"methods": "post"}), "methods has unexpected value"),
        (json!({"schedule": 5}), "schedule is not a string"),
        (
            json!({"schedule": "bogus"}),
            "schedule is not a valid cron or OnCalendar expression",
        ),
        // Issue 14.12: near-cron says what is wrong, not "invalid weekday".
        (
            json!({"schedule": "0 3 * *"}),
            "schedule is not a valid cron or OnCalendar expression: expected 5 fields \
             (minute hour day-of-month month day-of-week), got 4",
        ),
        (
            json!({"schedule": "0 3 * * 8"}),
            "schedule is not a valid cron or OnCalendar expression: day-of-week (field 5) \
             out of range: \"8\"",
        ),
        (
            json!({"schedule": "1,".repeat(100) + "1 * * * *"}),
            "schedule is too long",
        ),
        (json!({"tz": 3}), "tz is not a string"),
        (json!({"tz": "Nowhere/City"}), "tz is not a valid timezone"),
        (json!({"tz": ""}), "tz is not a valid timezone"),
        (json!({"channels": 1}), "channels is not a string"),
        (json!({"start_kw": "k".repeat(201)}), "start_kw is too long"),
        (
            json!({"success_kw": "k".repeat(201)}),
            "success_kw is too long",
        ),
        (
            json!({"failure_kw": "k".repeat(201)}),
            "failure_kw is too long",
        ),
        (json!({"subject": "k".repeat(201)}), "subject is too long"),
        (
            json!({"subject_fail": false}),
            "subject_fail is not a string",
        ),
        (json!({"unique": "name"}), "unique is not an array"),
        (
            json!({"unique": ["status"]}),
            "an item in 'unique' has unexpected value",
        ),
        (json!({"name": null}), "name is not a string"),
        (json!({"timeout": null}), "timeout is not a number"),
        (
            json!({"manual_resume": null}),
            "manual_resume is not a boolean",
        ),
        (json!({"methods": null}), "methods has unexpected value"),
        (json!({"unique": null}), "unique is not an array"),
        (json!({"channels": null}), "channels is not a string"),
        (json!({"timeout": 1, "desc": 5}), "desc is not a string"),
        // Issue 13.3: one create must not make every badge list or check list huge.
        (json!({"tags": "t ".repeat(250) + "x"}), "tags is too long"),
        (json!({"desc": "d".repeat(10_001)}), "desc is too long"),
    ]
}

#[tokio::test]
async fn invalid_create_bodies_are_400_and_create_nothing() {
    let s = TestServer::start().await;
    for (body, message) in cases() {
        let r = s
            .rw(Method::POST, "/api/v3/checks/")
            .json(&body)
            .send()
            .await
            .unwrap();
        let expected = json!({"error": format!("json validation error: {message}")});
        assert_eq!(status_json(r).await, (400, expected), "{body}");
    }
    assert!(s.list().await.is_empty());
    s.stop().await;
}

#[tokio::test]
async fn invalid_update_bodies_are_400_and_change_nothing() {
    let s = TestServer::start().await;
    let created = s
        .create(json!({"name": "keep", "timeout": 600, "grace": 120, "slug": "keep"}))
        .await;
    let uuid = created["uuid"].as_str().unwrap();
    for (body, message) in cases() {
        let r = s
            .rw(Method::POST, &format!("/api/v3/checks/{uuid}"))
            .json(&body)
            .send()
            .await
            .unwrap();
        let expected = json!({"error": format!("json validation error: {message}")});
        assert_eq!(status_json(r).await, (400, expected), "{body}");
        assert_eq!(s.get_check(uuid).await, created, "{body} changed the check");
    }
    s.stop().await;
}

#[tokio::test]
async fn huge_integers_are_400_not_500() {
    let s = TestServer::start().await;
    let r = s
        .rw(Method::POST, "/api/v3/checks/")
        .body(r#"{"timeout": 1000000000000000000000000000000}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(
        status_json(r).await,
        (
            400,
            json!({"error": "json validation error: timeout is too large"})
        )
    );
    assert!(s.list().await.is_empty());
    s.stop().await;
}

#[tokio::test]
async fn boundaries_and_unknown_fields_are_accepted() {
    let s = TestServer::start().await;
    let doc = s
        .create(
            json!({"timeout": 60, "grace": 31_536_000, "n_pings": 5, "status": "up", "uuid": "x"}),
        )
        .await;
    assert_eq!(doc["timeout"], 60);
    assert_eq!(doc["grace"], 31_536_000);
    assert_eq!(doc["n_pings"], 0);
    assert_eq!(doc["status"], "new");
    assert_ne!(doc["uuid"], "x");
    s.stop().await;
}

#[tokio::test]
async fn bad_channels_are_400_and_store_nothing() {
    use overdue::model::ChannelConfig;
    let s = TestServer::start().await;
    s.service
        .add_channel(
            "default",
            "foo",
            ChannelConfig::Email {
                address: "a@example.org".into(),
            },
        )
        .await
        .unwrap();
    s.service
        .add_channel(
            "default",
            "foo",
            ChannelConfig::Email {
                address: "b@example.org".into(),
            },
        )
        .await
        .unwrap();
    for (value, message) in [
        ("abc", "invalid channel identifier: abc"),
        (",", "empty channel identifier"),
        ("foo", "non-unique channel identifier: foo"),
        (
            "00000000-0000-4000-8000-000000000000",
            "invalid channel identifier: 00000000-0000-4000-8000-000000000000",
        ),
    ] {
        let r = s
            .rw(Method::POST, "/api/v3/checks/")
            .json(&json!({"name": "x", "channels": value}))
            .send()
            .await
            .unwrap();
        assert_eq!(status_json(r).await, (400, json!({"error": message})));
    }
    assert!(s.list().await.is_empty());
    s.stop().await;
}

#[tokio::test]
async fn tags_and_desc_at_their_limits_are_kept_whole() {
    let s = TestServer::start().await;
    let tags = "ab ".repeat(166) + "xy";
    assert_eq!(tags.chars().count(), 500);
    let desc = "é".repeat(10_000);
    let created = s.create(json!({"tags": tags, "desc": desc})).await;
    assert_eq!(
        (&created["tags"], &created["desc"]),
        (&json!(tags), &json!(desc))
    );
    s.stop().await;
}
