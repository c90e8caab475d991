//! `overdue import --from-healthchecks` against a stand-in Healthchecks (a warp server
//! answering like its Management API v3): an HTTP error, a check refused midway, re-runs
//! without duplicates, UUIDs kept, and the read-only key explained.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::process;

use process::{Ran, Serve};

fn overdue(data: &Path, args: &[&str]) -> Ran {
    process::overdue_in(data, args)
}

/// A stand-in Healthchecks: `GET /api/v3/checks/` answers what `answers` says for each call
/// in turn (the last one repeats); `GET /api/v3/channels/` lists `channels`;
/// `GET /api/v3/checks/<uuid>/pings/` lists `pings[uuid]` (else none). A key other than
/// `hc-rw` gets the read-only shape of the check list and 401 elsewhere, as Healthchecks
/// answers. Any request to `/hook` is counted in `hooks` (a webhook receiver).
struct StandIn {
    base: String,
    calls: Arc<Mutex<u32>>,
    hooks: Arc<Mutex<u32>>,
    _runtime: tokio::runtime::Runtime,
}

fn stand_in(answers: Vec<(u16, Value)>) -> StandIn {
    stand_in_with(answers, json!([]), json!({}))
}

fn stand_in_with(answers: Vec<(u16, Value)>, channels: Value, pings: Value) -> StandIn {
    use warp::Filter;
    use warp::http::StatusCode;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let calls = Arc::new(Mutex::new(0u32));
    let hooks = Arc::new(Mutex::new(0u32));
    let (counter, hook_counter) = (calls.clone(), hooks.clone());
    let answers = Arc::new(answers);
    let route = warp::any()
        .and(warp::path::full())
        .and(warp::header::optional::<String>("x-api-key"))
        .map(move |path: warp::path::FullPath, key: Option<String>| {
            let path = path.as_str();
            let reply = |status: u16, body: &Value| {
                warp::reply::with_status(
                    warp::reply::json(body),
                    StatusCode::from_u16(status).expect("status"),
                )
            };
            if path == "/hook" {
                *hook_counter.lock().expect("lock") += 1;
                return reply(200, &json!({}));
            }
            let rw = key.as_deref() == Some("hc-rw");
            if path == "/api/v3/checks/" {
                let mut n = counter.lock().expect("lock");
                let (status, body) = answers[(*n as usize).min(answers.len() - 1)].clone();
                *n += 1;
                let body = if rw {
                    body
                } else {
                    json!({"checks": [{"name": "x", "unique_key": "0".repeat(40)}]})
                };
                return reply(status, &body);
            }
            if !rw {
                return reply(401, &json!({"error": "wrong api key"}));
            }
            if path == "/api/v3/channels/" {
                return reply(200, &json!({"channels": channels}));
            }
            let check = path
                .strip_prefix("/api/v3/checks/")
                .and_then(|rest| rest.strip_suffix("/pings/"));
            match check {
                Some(uuid) => reply(
                    200,
                    &json!({"pings": pings.get(uuid).cloned().unwrap_or(json!([]))}),
                ),
                None => reply(404, &json!({"error": "not found"})),
            }
        });
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    runtime.spawn(warp::serve(route).incoming(listener).run());
    StandIn {
        base,
        calls,
        hooks,
        _runtime: runtime,
    }
}

/// The badge key the stand-in gives a check: its UUID with the first digit changed.
fn badge_key(uuid: &str) -> String {
    format!("b{}", &uuid[1..])
}

fn hc_check(uuid: &str, name: &str, extra: Value) -> Value {
    let mut c = json!({
        "name": name, "slug": name.to_lowercase().replace(' ', "-"), "tags": "prod", "desc": "",
        "grace": 3600, "n_pings": 0, "status": "new", "started": false,
        "last_ping": null, "next_ping": null, "manual_resume": false,
        "methods": "", "subject": "", "subject_fail": "", "start_kw": "", "success_kw": "",
        "failure_kw": "", "filter_subject": false, "filter_body": false,
        "filter_http_body": false, "filter_default_fail": false,
        "badge_url": format!("https://hc.example.org/b/2/{}.svg", badge_key(uuid)), "uuid": uuid,
        "ping_url": format!("https://hc-ping.com/{uuid}"), "channels": "", "timeout": 86400
    });
    let fields = c.as_object_mut().expect("object");
    let Value::Object(extra) = extra else {
        panic!("extra fields must be an object")
    };
    for (k, v) in extra {
        if v.is_null() {
            fields.remove(&k);
        } else {
            fields.insert(k, v);
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
    got.sort_unstable();
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

/// A Healthchecks timestamp `secs` seconds before now (no fraction, `+00:00`).
fn ago(secs: i64) -> String {
    let t = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(secs);
    t.strftime("%Y-%m-%dT%H:%M:%S+00:00").to_string()
}

const PING_KEY: &str = "Ab3_Zk9-Qw2Er5Ty8Ui1Op";

#[test]
fn an_import_into_a_fresh_directory_creates_the_project_and_carries_the_state() {
    let ops = "0c0c0c0c-0000-4000-8000-000000000001";
    let [stale, fresh, running, quiet, broke] =
        [1, 2, 3, 4, 5].map(|i| format!("6d2e0f1a-3b4c-4d5e-8f60-71829304a5b{i}"));
    let rid = "9a9a9a9a-0000-4000-8000-00000000000a";
    let (stale_ping, fresh_ping, quiet_ping) = (ago(2 * 86400), ago(60), ago(86400));
    let start = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(600);
    let checks = json!({"checks": [
        hc_check(&stale, "Stale", json!({"status": "up", "last_ping": stale_ping,
            "n_pings": 40, "timeout": 3600, "grace": 60, "channels": ops})),
        hc_check(&fresh, "Fresh", json!({"status": "up", "last_ping": fresh_ping,
            "n_pings": 7, "slug": "fresh", "last_duration": 12})),
        hc_check(&running, "Running", json!({"status": "new", "started": true, "n_pings": 1})),
        hc_check(&quiet, "Quiet", json!({"status": "paused", "last_ping": quiet_ping,
            "n_pings": 3})),
        hc_check(&broke, "Broke", json!({"status": "down", "last_ping": ago(3 * 86400),
            "n_pings": 2})),
    ]});
    let pings = json!({ running.clone(): [
        {"type": "log", "date": ago(60), "n": 3, "rid": null},
        {"type": "start", "date": start.strftime("%Y-%m-%dT%H:%M:%S.%6f+00:00").to_string(),
         "n": 2, "rid": rid},
        {"type": "start", "date": ago(7200), "n": 1, "rid": null},
    ]});
    let hc = stand_in_with(
        vec![(200, checks)],
        json!([{"id": ops, "name": "ops", "kind": "email"}]),
        pings,
    );
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let args = [
        "import",
        "--from-healthchecks",
        &hc.base,
        "--api-key",
        "hc-rw",
        "--ping-key",
        PING_KEY,
    ];
    let run = overdue(&data, &args);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "First start: created project \"default\". These keys are shown only this once:"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("took over the ping key {PING_KEY}")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("copied 5 checks, 0 were already here"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("email \"ops\": Stale"),
        "the unmapped integration is listed with its check: {}",
        run.stderr
    );
    let key = run
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("read-write API key:"))
        .expect("the read-write key is printed")
        .trim()
        .to_string();

    let serve = Serve::start(&data);
    assert!(
        !serve.stdout().contains("First start"),
        "{}",
        serve.stdout()
    );
    let one = |u: &str| serve.http_ok("GET", &format!("/api/v3/checks/{u}"), Some(&key), None);
    let f = one(&fresh);
    assert_eq!(
        (
            f["status"].as_str(),
            f["n_pings"].as_u64(),
            f["last_ping"].as_str()
        ),
        (Some("up"), Some(7), Some(fresh_ping.as_str()))
    );
    assert_eq!(f["last_duration"].as_i64(), Some(12));
    let r = one(&running);
    assert_eq!(
        (r["status"].as_str(), r["started"].as_bool()),
        (Some("new"), Some(true))
    );
    assert_eq!(
        r["next_ping"].as_str(),
        Some(
            start
                .strftime("%Y-%m-%dT%H:%M:%S+00:00")
                .to_string()
                .as_str()
        ),
        "the run started when the newest start ping of the log says"
    );
    let q = one(&quiet);
    assert_eq!(
        (
            q["status"].as_str(),
            q["last_ping"].as_str(),
            q["n_pings"].as_u64()
        ),
        (Some("paused"), Some(quiet_ping.as_str()), Some(3))
    );
    assert_eq!(one(&broke)["status"], "down");
    // The deadline engine takes the stale check down: a flip is recorded.
    let flips = format!("/api/v3/checks/{stale}/flips/");
    assert!(
        process::wait_until(std::time::Duration::from_secs(10), || {
            let doc = serve.http_ok("GET", &flips, Some(&key), None);
            doc.as_array().is_some_and(|f| !f.is_empty())
        }),
        "the stale check went down after the import"
    );
    // The badge URL and the slug ping URL of the source work with the host changed.
    let badge = format!("/b/2/{}.svg", badge_key(&fresh));
    assert_eq!(serve.http("GET", &badge, None, None).0, 200);
    let url = one(&fresh)["badge_url"].clone();
    assert!(
        url.as_str().is_some_and(|u| u.ends_with(&badge)),
        "{url} ends with {badge}"
    );
    process::http_ok(
        serve.port,
        "GET",
        &format!("/ping/{PING_KEY}/fresh"),
        None,
        None,
    );
    assert_eq!(one(&fresh)["n_pings"], 8);
}

#[test]
fn integrations_map_to_channels_of_the_same_kind_and_name_and_a_stale_check_alerts() {
    let hook = "0c0c0c0c-0000-4000-8000-00000000000a";
    let pager = "0c0c0c0c-0000-4000-8000-00000000000b";
    let mail = "0c0c0c0c-0000-4000-8000-00000000000c";
    let stale = "6d2e0f1a-3b4c-4d5e-8f60-71829304a5c1";
    let other = "6d2e0f1a-3b4c-4d5e-8f60-71829304a5c2";
    let checks = json!({"checks": [
        hc_check(stale, "Stale", json!({"status": "up", "last_ping": ago(2 * 86400),
            "n_pings": 9, "timeout": 3600, "grace": 60, "channels": format!("{hook},{pager}")})),
        hc_check(other, "Other", json!({"channels": mail})),
    ]});
    let hc = stand_in_with(
        vec![(200, checks)],
        json!([
            {"id": hook, "name": "hook", "kind": "webhook"},
            {"id": pager, "name": "pager", "kind": "pagerduty"},
            {"id": mail, "name": "hook", "kind": "email"},
        ]),
        json!({}),
    );
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let serve = Serve::start(&data);
    let key = serve.first_start_key("read-write API key:");
    let url = format!("{}/hook", hc.base);
    let add = [
        "channel", "add", "default", "--kind", "webhook", "--name", "hook", "--url", &url,
    ];
    overdue(&data, &add).ok();
    let run = overdue(
        &data,
        &[
            "import",
            "--from-healthchecks",
            &hc.base,
            "--api-key",
            "hc-rw",
        ],
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("First start"), "{}", run.stdout);
    for unmapped in ["pagerduty \"pager\": Stale", "email \"hook\": Other"] {
        assert!(run.stderr.contains(unmapped), "{unmapped}: {}", run.stderr);
    }
    let channels = serve.http_ok("GET", "/api/v3/channels/", Some(&key), None);
    let here = channels["channels"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let one = |u: &str| serve.http_ok("GET", &format!("/api/v3/checks/{u}"), Some(&key), None);
    assert_eq!(one(stale)["channels"], here.as_str());
    assert_eq!(one(other)["channels"], "");
    assert!(
        process::wait_until(std::time::Duration::from_secs(15), || *hc
            .hooks
            .lock()
            .expect("lock")
            > 0),
        "the stale check's down alert reached the mapped webhook"
    );
}

/// An Overdue source shows its alerting rules in the check objects: they are copied, parents
/// included (the child listed before its parent there), and a parent that is not copied is
/// left out.
#[test]
fn an_overdue_sources_rules_and_parents_are_carried() {
    let router = "5a5a5a5a-0000-4000-8000-000000000001";
    let nas = "5a5a5a5a-0000-4000-8000-000000000002";
    let gone = "5a5a5a5a-0000-4000-8000-000000000009";
    let checks = json!({"checks": [
        hc_check(nas, "NAS", json!({"parents": format!("{router},{gone}"), "fail_threshold": 3,
            "max_duration": 7200, "min_duration": 60, "quiet_schedule": "Sun 02:00",
            "quiet_tz": "Europe/Riga", "quiet_duration": 5400})),
        hc_check(router, "Router", json!({"parents": ""})),
    ]});
    let hc = stand_in(vec![(200, checks)]);
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let serve = Serve::start(&data);
    let key = serve.first_start_key("read-write API key:");
    let run = overdue(
        &data,
        &[
            "import",
            "--from-healthchecks",
            &hc.base,
            "--api-key",
            "hc-rw",
        ],
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let got = serve.http_ok("GET", &format!("/api/v3/checks/{nas}"), Some(&key), None);
    assert_eq!(got["parents"], router, "{got}");
    assert_eq!(
        (
            &got["fail_threshold"],
            &got["max_duration"],
            &got["min_duration"],
            &got["quiet_schedule"],
            &got["quiet_tz"],
            &got["quiet_duration"]
        ),
        (
            &json!(3),
            &json!(7200),
            &json!(60),
            &json!("Sun 02:00"),
            &json!("Europe/Riga"),
            &json!(5400)
        )
    );
}

#[test]
fn a_malformed_ping_key_is_a_usage_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let run = overdue(
        &data,
        &[
            "import",
            "--from-healthchecks",
            "http://127.0.0.1:9",
            "--api-key",
            "hc-rw",
            "--ping-key",
            "too/short",
        ],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("ping key is 22 characters"),
        "{}",
        run.stderr
    );
    assert!(!data.exists(), "nothing was created");
}
