//! Both Prometheus endpoints over HTTP, their output read with the Prometheus project's own
//! text-format parser (`prometheus_client.parser`, Debian's python3-prometheus-client, which
//! .ci/run installs): a project's checks in Healthchecks' format, and the service's own
//! figures behind `--metrics-token`. Skipped with a message only where that parser is not
//! installed; under CI (`CI` set) its absence fails.

// The figures compared are counts and 0/1 flags, exact in an f64.
#![allow(clippy::float_cmp)]

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{Options, TestServer};
use overdue::api::ApiConfig;
use overdue::model::ChannelConfig;
use reqwest::Method;
use serde_json::{Value, json};

const PARSER: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = {"families": {}, "samples": []}
for f in text_string_to_metric_families(sys.stdin.read()):
    out["families"][f.name] = {"type": f.type, "help": f.documentation}
    for s in f.samples:
        out["samples"].append({"name": s.name, "labels": s.labels, "value": s.value})
print(json.dumps(out))
"#;

/// Debian's interpreter first: the parser package installs for it.
fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "python3"].into_iter().find(|py| {
        Command::new(py)
            .args(["-c", "import prometheus_client.parser"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The parsed exposition, or None (after saying so) where the parser is not installed.
fn parse(text: &str) -> Option<Value> {
    let Some(py) = python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have python3-prometheus-client installed (see .ci/run)"
        );
        eprintln!("SKIPPED: python3 with prometheus_client is not installed");
        return None;
    };
    let mut child = Command::new(py)
        .args(["-c", PARSER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the parser");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("parser output");
    assert!(
        out.status.success(),
        "the exposition does not parse: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("parser json"))
}

/// The value of the sample named `name` whose labels include every pair of `labels`.
fn sample(parsed: &Value, name: &str, labels: &[(&str, &str)]) -> f64 {
    parsed["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .find(|s| s["name"] == name && labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .unwrap_or_else(|| panic!("no {name} {labels:?} in {parsed:#}"))["value"]
        .as_f64()
        .expect("number")
}

fn all_batches(parsed: &Value) -> f64 {
    sample(parsed, "overdue_write_batch_size_count", &[])
}

fn project_uuid(s: &TestServer) -> String {
    s.service.read(|st| st.projects()[0].uuid.to_string())
}

async fn get(s: &TestServer, path: &str, bearer: Option<&str>) -> (u16, String) {
    let mut req = s.anon(Method::GET, path);
    if let Some(token) = bearer {
        req = req.bearer_auth(token);
    }
    let r = req.send().await.expect("send");
    let status = r.status().as_u16();
    (status, r.text().await.expect("body"))
}

#[tokio::test]
async fn project_metrics_in_healthchecks_format() {
    let s = TestServer::start().await;
    let up = s
        .create(json!({"name": "Alice \"Was\" Here", "tags": "foo bar"}))
        .await;
    let down = s.create(json!({"name": "down", "tags": "bar"})).await;
    let paused = s.create(json!({"name": "paused"})).await;
    for (check, suffix) in [(&up, ""), (&down, "/fail"), (&up, "/start")] {
        let uuid = check["uuid"].as_str().unwrap();
        let r = s
            .anon(Method::POST, &format!("/ping/{uuid}{suffix}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let r = s
        .rw(
            Method::POST,
            &format!("/api/v3/checks/{}/pause", paused["uuid"].as_str().unwrap()),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let project = project_uuid(&s);
    let (status, text) = get(&s, &format!("/projects/{project}/metrics/{}", s.ro), None).await;
    assert_eq!(status, 200, "{text}");
    let Some(scrape) = parse(&text) else {
        return s.stop().await;
    };
    let key = |c: &serde_json::Value| {
        // unique_key is what read-only keys see instead of the UUID.
        overdue::model::check::unique_key(&c["uuid"].as_str().unwrap().parse().unwrap())
    };
    let up_labels = [
        ("name", "Alice \"Was\" Here"),
        ("tags", "foo bar"),
        ("unique_key", &key(&up)),
    ];
    assert_eq!(sample(&scrape, "hc_check_up", &up_labels), 1.0);
    assert_eq!(sample(&scrape, "hc_check_started", &up_labels), 1.0);
    assert_eq!(sample(&scrape, "hc_check_grace", &up_labels), 0.0);
    assert_eq!(sample(&scrape, "hc_check_paused", &up_labels), 0.0);
    let down_labels = [("name", "down"), ("unique_key", &key(&down) as &str)];
    assert_eq!(sample(&scrape, "hc_check_up", &down_labels), 0.0);
    let paused_labels = [("name", "paused"), ("tags", "")];
    assert_eq!(sample(&scrape, "hc_check_paused", &paused_labels), 1.0);
    assert_eq!(sample(&scrape, "hc_check_up", &paused_labels), 1.0);
    assert_eq!(sample(&scrape, "hc_tag_up", &[("tag", "foo")]), 1.0);
    assert_eq!(sample(&scrape, "hc_tag_up", &[("tag", "bar")]), 0.0);
    assert_eq!(sample(&scrape, "hc_checks_total", &[]), 3.0);
    assert_eq!(sample(&scrape, "hc_checks_down_total", &[]), 1.0);
    let families = &scrape["families"];
    assert_eq!(
        families["hc_check_up"]["help"],
        "Whether the check is currently up (1 for yes, 0 for no)."
    );
    for name in [
        "hc_check_up",
        "hc_check_started",
        "hc_check_grace",
        "hc_check_paused",
        "hc_tag_up",
        "hc_checks_total",
        "hc_checks_down_total",
    ] {
        assert_eq!(families[name]["type"], "gauge", "{name}");
    }

    // The header form takes either key of the project; the URL form only the read-only key.
    for key in [&s.ro, &s.rw] {
        let (status, text) = get(&s, &format!("/projects/{project}/metrics/"), Some(key)).await;
        assert_eq!(status, 200);
        assert_eq!(
            sample(
                &parse(&text).expect("parsed before"),
                "hc_checks_total",
                &[]
            ),
            3.0
        );
    }
    let (status, _) = get(&s, &format!("/projects/{project}/metrics"), Some(&s.ro)).await;
    assert_eq!(status, 200);
    s.stop().await;
}

#[tokio::test]
async fn project_metrics_refuse_other_keys() {
    let s = TestServer::start().await;
    let project = project_uuid(&s);
    let other = uuid::Uuid::new_v4();
    let cases = [
        (format!("/projects/{project}/metrics/{}", s.rw), None, 403),
        (format!("/projects/{other}/metrics/{}", s.ro), None, 403),
        (format!("/projects/{project}/metrics/short"), None, 400),
        (
            format!("/projects/{project}/metrics/{}", "R".repeat(32)),
            None,
            403,
        ),
        (format!("/projects/{project}/metrics/"), None, 401),
        (
            format!("/projects/{other}/metrics/"),
            Some(s.rw.clone()),
            403,
        ),
        (
            format!("/projects/{project}/metrics/"),
            Some("x".repeat(32)),
            403,
        ),
        (format!("/projects/{project}/other/"), None, 404),
    ];
    for (path, bearer, want) in cases {
        let (status, body) = get(&s, &path, bearer.as_deref()).await;
        assert_eq!(status, want, "{path}: {body}");
    }
    let r = s
        .anon(
            Method::POST,
            &format!("/projects/{project}/metrics/{}", s.ro),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    s.stop().await;
}

#[tokio::test]
async fn service_metrics_need_the_flag_and_the_token() {
    let s = TestServer::start().await;
    assert_eq!(get(&s, "/metrics", Some("anything")).await.0, 404);
    s.stop().await;

    let s = TestServer::start_with(Options {
        api: ApiConfig {
            api_rate_limit: 0,
            metrics_token: Some("s3cret-token".into()),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    assert_eq!(get(&s, "/metrics", None).await.0, 401);
    assert_eq!(get(&s, "/metrics", Some("s3cret-tokenx")).await.0, 401);
    let r = s
        .anon(Method::GET, "/metrics")
        .header("Authorization", "Basic s3cret-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // Two channels: a check going down queues one alert per channel.
    for name in ["a", "b"] {
        s.service
            .add_channel(
                "default",
                name,
                ChannelConfig::Email {
                    address: "ops@example.org".into(),
                },
            )
            .await
            .unwrap();
    }
    let check = s.create(json!({"channels": "*"})).await;
    let uuid = check["uuid"].as_str().unwrap();
    for suffix in ["", "", "/fail"] {
        let r = s
            .anon(Method::GET, &format!("/ping/{uuid}{suffix}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    s.service.metrics().record_delivery(true);
    s.service.metrics().record_delivery(false);
    s.service.metrics().record_delivery(false);

    let (status, text) = get(&s, "/metrics", Some("s3cret-token")).await;
    assert_eq!(status, 200, "{text}");
    let Some(scrape) = parse(&text) else {
        return s.stop().await;
    };
    assert_eq!(
        sample(&scrape, "overdue_pings_total", &[("source", "http")]),
        3.0
    );
    assert_eq!(
        sample(&scrape, "overdue_pings_total", &[("source", "email")]),
        0.0
    );
    assert_eq!(sample(&scrape, "overdue_outbox_depth", &[]), 2.0);
    assert_eq!(
        sample(&scrape, "overdue_deliveries_total", &[("result", "ok")]),
        1.0
    );
    assert_eq!(
        sample(&scrape, "overdue_deliveries_total", &[("result", "failed")]),
        2.0
    );
    let families = &scrape["families"];
    // The parser names counter families without their `_total`.
    assert_eq!(families["overdue_pings"]["type"], "counter");
    assert_eq!(families["overdue_deliveries"]["type"], "counter");
    assert_eq!(families["overdue_outbox_depth"]["type"], "gauge");
    for histogram in [
        "overdue_write_batch_size",
        "overdue_commit_duration_seconds",
    ] {
        assert_eq!(families[histogram]["type"], "histogram");
        let all = sample(&scrape, &format!("{histogram}_bucket"), &[("le", "+Inf")]);
        // The project, the channels, the check and three pings: several commits.
        assert!(all >= 6.0, "{histogram}: {all}");
        assert_eq!(sample(&scrape, &format!("{histogram}_count"), &[]), all);
    }
    // Every batch of a single job falls in the first bucket; the sum of sizes counts jobs.
    let jobs = sample(&scrape, "overdue_write_batch_size_sum", &[]);
    assert!(jobs >= all_batches(&scrape), "{jobs}");
    s.stop().await;
}
