//! `overdue import --from-healthchecks` against a stand-in Healthchecks (a warp server
//! answering like its Management API v3): an HTTP error, a check refused midway, re-runs
//! without duplicates, UUIDs kept, and the read-only key explained.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

mod process;

use process::{Ran, Serve};

fn overdue(data: &Path, args: &[&str]) -> Ran {
    process::overdue_in(data, args)
}

/// A stand-in Healthchecks: `GET /api/v3/checks/` answers what `answers` says for each call
/// in turn (the last one repeats); a key other than `hc-rw` gets the read-only shape.
struct StandIn {
    base: String,
    calls: Arc<Mutex<u32>>,
    _runtime: tokio::runtime::Runtime,
}

fn stand_in(answers: Vec<(u16, Value)>) -> StandIn {
    use warp::Filter;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let calls = Arc::new(Mutex::new(0u32));
    let counter = calls.clone();
    let answers = Arc::new(answers);
    let route = warp::get()
        .and(warp::path::full())
        .and(warp::header::optional::<String>("x-api-key"))
        .map(move |path: warp::path::FullPath, key: Option<String>| {
            if path.as_str() != "/api/v3/checks/" {
                let body = json!({"error": "not found"});
                return warp::reply::with_status(
                    warp::reply::json(&body),
                    warp::http::StatusCode::NOT_FOUND,
                );
            }
            let mut n = counter.lock().expect("lock");
            let (status, body) = answers[(*n as usize).min(answers.len() - 1)].clone();
            *n += 1;
            let body = if key.as_deref() == Some("hc-rw") {
                body
            } else {
                json!({"checks": [{"name": "x", "unique_key": "0".repeat(40)}]})
            };
            warp::reply::with_status(
                warp::reply::json(&body),
                warp::http::StatusCode::from_u16(status).expect("status"),
            )
        });
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    runtime.spawn(warp::serve(route).incoming(listener).run());
    StandIn {
        base,
        calls,
        _runtime: runtime,
    }
}

fn hc_check(uuid: &str, name: &str, extra: Value) -> Value {
    let mut c = json!({
        "name": name, "slug": name.to_lowercase().replace(' ', "-"), "tags": "prod", "desc": "",
        "grace": 3600, "n_pings": 12, "status": "up", "started": false,
        "last_ping": "2026-01-01T00:00:00+00:00", "next_ping": null, "manual_resume": false,
        "methods": "", "subject": "", "subject_fail": "", "start_kw": "", "success_kw": "",
        "failure_kw": "", "filter_subject": false, "filter_body": false,
        "filter_http_body": false, "filter_default_fail": false,
        "badge_url": "https://hc.example.org/b/2/x.svg", "uuid": uuid,
        "ping_url": format!("https://hc-ping.com/{uuid}"), "channels": "", "timeout": 86400
    });
    let fields = c.as_object_mut().expect("object");
    for (k, v) in extra.as_object().expect("object") {
        if v.is_null() {
            fields.remove(k);
        } else {
            fields.insert(k.clone(), v.clone());
        }
    }
    c
}

#[test]
fn migration_from_healthchecks_keeps_uuids_and_reruns_without_duplicates() {
    let u1 = "7f1c6a2e-1b7a-4b8e-9a1c-0c4d5e6f7a81";
    let u2 = "7f1c6a2e-1b7a-4b8e-9a1c-0c4d5e6f7a82";
    let u3 = "7f1c6a2e-1b7a-4b8e-9a1c-0c4d5e6f7a83";
    let cron = json!({"schedule": "0 3 * * *", "tz": "Europe/Riga", "timeout": null});
    let good = json!({"checks": [
        hc_check(u1, "Backups", json!({"timeout": 7200, "grace": 600, "methods": "POST"})),
        hc_check(u2, "Nightly", cron.clone()),
        hc_check(u3, "Paused", json!({"status": "paused", "manual_resume": true,
            "success_kw": "OK", "filter_http_body": true})),
    ]});
    // The second answer has a check this service cannot take (grace below 60 s).
    let mut broken = good.clone();
    broken["checks"][1]["grace"] = json!(30);
    let hc = stand_in(vec![
        (500, json!({"error": "boom"})),
        (200, broken),
        (200, good),
    ]);
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let serve = Serve::start(&data);
    let key = serve.first_start_key("read-write API key:");
    let migrate = |api_key: &str| {
        overdue(
            &data,
            &[
                "import",
                "--from-healthchecks",
                &hc.base,
                "--api-key",
                api_key,
            ],
        )
    };

    let run = migrate("hc-rw");
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("HTTP 500") && run.stderr.contains("nothing was imported"),
        "{}",
        run.stderr
    );
    assert!(serve.checks(&key).is_empty());

    let run = migrate("hc-rw");
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("[1/3] copied {u1} Backups")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("[2/3] refused {u2} Nightly: grace is too small")),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout
            .contains("copied 2 checks, 0 were already here, 1 refused"),
        "{}",
        run.stdout
    );
    assert_eq!(serve.checks(&key).len(), 2);

    let run = migrate("hc-rw");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("[1/3] skipped {u1} Backups: already here")),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout
            .contains("copied 1 checks, 2 were already here, 0 refused"),
        "{}",
        run.stdout
    );
    assert_eq!(*hc.calls.lock().expect("lock"), 3);

    let list = serve.checks(&key);
    let mut got: Vec<&str> = list
        .iter()
        .map(|c| c["uuid"].as_str().expect("uuid"))
        .collect();
    got.sort();
    assert_eq!(got, vec![u1, u2, u3], "every UUID kept, none twice");
    let one = |u: &str| serve.http_ok("GET", &format!("/api/v3/checks/{u}"), Some(&key), None);
    let c1 = one(u1);
    assert_eq!(
        (
            c1["timeout"].as_i64(),
            c1["grace"].as_i64(),
            c1["methods"].as_str()
        ),
        (Some(7200), Some(600), Some("POST"))
    );
    assert_eq!(c1["status"], "new");
    let c2 = one(u2);
    assert_eq!(
        (c2["schedule"].as_str(), c2["tz"].as_str()),
        (Some("0 3 * * *"), Some("Europe/Riga"))
    );
    let c3 = one(u3);
    assert_eq!(
        (c3["status"].as_str(), c3["manual_resume"].as_bool()),
        (Some("paused"), Some(true))
    );
    assert_eq!(
        (c3["success_kw"].as_str(), c3["filter_http_body"].as_bool()),
        (Some("OK"), Some(true))
    );
    // The old ping URL works with only its host changed (POST: the check kept `methods`).
    process::http_ok(serve.port, "GET", &format!("/ping/{u1}"), None, None);
    assert_eq!(
        one(u1)["status"],
        "new",
        "a GET ping is ignored under methods=POST"
    );
    process::http_ok(serve.port, "POST", &format!("/ping/{u1}"), None, None);
    assert_eq!(one(u1)["status"], "up");

    let run = migrate("hc-read-only");
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("read-write"), "{}", run.stderr);
}
