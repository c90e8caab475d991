//! Data operations on the real binary: `backup` while serving under ping load and while
//! stopped (then restoring it), `export`/`import` compared through the Management API of two
//! servers, the migration from a stand-in Healthchecks, `doctor`, and JSON logs.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

mod process;

use process::{Serve, base_command, http, wait_until};

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn overdue(data: &Path, args: &[&str]) -> Run {
    let out = base_command()
        .arg("--data")
        .arg(data)
        .args(args)
        .output()
        .expect("run overdue");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(run: Run) -> String {
    assert_eq!(
        run.code,
        Some(0),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    run.stdout
}

/// A data directory holding `file` as its data file, as a restore makes it.
fn restore_into(file: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::copy(file, dir.join("overdue.redb")).expect("copy the backup in");
}

fn checks(serve: &Serve, key: &str) -> Vec<Value> {
    let doc = serve.http_ok("GET", "/api/v3/checks/", Some(key), None);
    doc["checks"].as_array().expect("checks").clone()
}

#[test]
fn backup_while_serving_under_ping_load_restores_every_acknowledged_ping() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let serve = Serve::start(&data);
    let key = serve.first_start_key("read-write API key:");
    let mut uuids = Vec::new();
    for i in 0..4 {
        let c = serve.http_ok(
            "POST",
            "/api/v3/checks/",
            Some(&key),
            Some(&json!({"name": format!("job {i}"), "timeout": 3600})),
        );
        uuids.push(c["uuid"].as_str().expect("uuid").to_string());
    }
    // Pingers run all along; `acked` counts pings answered 200.
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    let mut pingers = Vec::new();
    for uuid in uuids.clone() {
        let (stop, acked, port) = (stop.clone(), acked.clone(), serve.port);
        pingers.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Ok((200, _)) =
                    process::try_http(port, "GET", &format!("/ping/{uuid}"), None, None)
                {
                    acked.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    assert!(wait_until(Duration::from_secs(10), || acked
        .load(Ordering::Relaxed)
        >= 40));
    let before = acked.load(Ordering::Relaxed);
    let backup = tmp.path().join("live.redb");
    let out = ok(overdue(&data, &["backup", backup.to_str().expect("utf8")]));
    let after = acked.load(Ordering::Relaxed);
    assert!(out.starts_with("backup written to "), "{out}");
    assert!(out.contains("4 checks"), "{out}");
    assert!(!tmp.path().join("live.redb.tmp").exists());
    stop.store(true, Ordering::Relaxed);
    for p in pingers {
        p.join().expect("pinger");
    }
    let mode = std::fs::metadata(&backup)
        .expect("backup")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    drop(serve);

    let restored_dir = tmp.path().join("restored");
    restore_into(&backup, &restored_dir);
    let restored = Serve::start(&restored_dir);
    let list = checks(&restored, &key);
    assert_eq!(list.len(), 4, "the key and the checks came back");
    let total: u64 = list
        .iter()
        .map(|c| c["n_pings"].as_u64().expect("n_pings"))
        .sum();
    assert!(
        (before..=after).contains(&total),
        "the backup holds {total} pings; {before} were acknowledged before it began, {after} when it ended"
    );
    for c in &list {
        let uuid = c["uuid"].as_str().expect("uuid");
        assert!(uuids.contains(&uuid.to_string()));
        let pings = restored.http_ok(
            "GET",
            &format!("/api/v3/checks/{uuid}/pings/"),
            Some(&key),
            None,
        );
        let n = pings["pings"].as_array().expect("pings").len() as u64;
        assert_eq!(
            n,
            c["n_pings"].as_u64().expect("n"),
            "every counted ping is listed"
        );
    }
    drop(restored);

    // Stopped: the command opens the file itself, and the copy is the same data.
    let cold = tmp.path().join("cold.redb");
    let out = ok(overdue(&data, &["backup", cold.to_str().expect("utf8")]));
    assert!(out.contains("4 checks"), "{out}");
    let cold_dir = tmp.path().join("cold");
    restore_into(&cold, &cold_dir);
    let again = Serve::start(&cold_dir);
    assert_eq!(checks(&again, &key).len(), 4);
}

/// Everything the Management API shows about a project, as raw JSON text.
fn api_view(serve: &Serve, rw: &str, ro: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut get = |path: &str, key: &str| {
        let (status, body) = http(serve.port, "GET", path, Some(key), None);
        out.push((format!("{path} ({status})"), body.to_string()));
        body
    };
    let list = get("/api/v3/checks/", rw);
    get("/api/v3/checks/", ro);
    get("/api/v3/channels/", rw);
    get("/api/v3/badges/", rw);
    get("/api/v1/checks/", rw);
    for c in list["checks"].as_array().expect("checks") {
        let uuid = c["uuid"].as_str().expect("uuid").to_string();
        get(&format!("/api/v3/checks/{uuid}"), rw);
        let badge = c["badge_url"].as_str().expect("badge_url");
        let path = &badge[badge.find("/b/").expect("badge path")..];
        get(path, rw);
        get(&path.replace(".svg", ".json"), rw);
    }
    out
}

#[test]
fn export_and_import_give_byte_identical_api_output() {
    let tmp = tempfile::tempdir().expect("tmp");
    let a_dir = tmp.path().join("a");
    let a = Serve::start(&a_dir);
    let rw = a.first_start_key("read-write API key:");
    let ro = a.first_start_key("read-only API key:");
    let site_root = format!("http://127.0.0.1:{}", a.port);
    ok(overdue(
        &a_dir,
        &[
            "channel",
            "add",
            "default",
            "--kind",
            "email",
            "--name",
            "ops",
            "--value",
            "ops@example.org",
        ],
    ));
    ok(overdue(
        &a_dir,
        &[
            "channel",
            "add",
            "default",
            "--kind",
            "webhook",
            "--name",
            "hook",
            "--url",
            "http://127.0.0.1:9/x",
        ],
    ));
    let bodies = [
        json!({"name": "simple", "slug": "simple", "tags": "prod db", "timeout": 600, "grace": 120,
               "channels": "ops", "desc": "d", "methods": "POST"}),
        json!({"name": "cron", "tags": "prod", "schedule": "30 2 * * 1-5", "tz": "Europe/Riga",
               "channels": "*", "manual_resume": true, "grace": 300}),
        json!({"name": "oncal", "schedule": "Mon *-*-* 03:00", "tz": "America/New_York",
               "success_kw": "OK", "failure_kw": "FAIL", "filter_http_body": true,
               "filter_default_fail": true, "start_kw": "go"}),
        json!({"name": "paused one", "slug": "p", "timeout": 60, "grace": 60}),
        json!({"name": "never pinged"}),
    ];
    let mut uuids = Vec::new();
    for b in &bodies {
        let c = a.http_ok("POST", "/api/v3/checks/", Some(&rw), Some(b));
        uuids.push(c["uuid"].as_str().expect("uuid").to_string());
    }
    for (i, u) in uuids.iter().enumerate().take(3) {
        process::http_ok(a.port, "GET", &format!("/ping/{u}/start"), None, None);
        process::http_ok(
            a.port,
            "POST",
            &format!("/ping/{u}"),
            None,
            Some(&json!({"i": i})),
        );
    }
    a.http_ok(
        "POST",
        &format!("/api/v3/checks/{}/pause", uuids[3]),
        Some(&rw),
        None,
    );
    let dump = ok(overdue(&a_dir, &["export"]));
    let parsed: Value = serde_json::from_str(&dump).expect("dump is JSON");
    assert_eq!(
        (parsed["format"].as_str(), parsed["version"].as_u64()),
        (Some("overdue-export"), Some(1))
    );
    let dump_file = tmp.path().join("dump.json");
    std::fs::write(&dump_file, &dump).expect("write dump");
    let expected = api_view(&a, &rw, &ro);

    // A fresh data directory, stopped: the import takes the badge secret too.
    let b_dir = tmp.path().join("b");
    let out = ok(overdue(
        &b_dir,
        &["import", dump_file.to_str().expect("utf8")],
    ));
    assert!(
        out.contains("imported 1 projects, 2 API keys, 2 channels, 5 checks"),
        "{out}"
    );
    assert!(out.contains("project badge URLs are unchanged"), "{out}");
    let b = Serve::start_with(&b_dir, &["--site-root", &site_root]);
    assert!(
        !b.stdout().contains("First start"),
        "no default project is created over an import"
    );
    let got = api_view(&b, &rw, &ro);
    assert_eq!(got.len(), expected.len());
    for ((path, want), (_, have)) in expected.iter().zip(&got) {
        assert_eq!(
            have, want,
            "{path} differs between the exporting and the importing server"
        );
    }
    // Re-importing through the running service adds nothing.
    let out = ok(overdue(
        &b_dir,
        &["import", dump_file.to_str().expect("utf8")],
    ));
    assert!(
        out.contains("imported 0 projects, 0 API keys, 0 channels, 0 checks"),
        "{out}"
    );
    assert!(
        out.contains(
            "already present, left as they are: 1 projects, 2 API keys, 2 channels, 5 checks"
        ),
        "{out}"
    );
    assert_eq!(checks(&b, &rw).len(), 5);
    // The imported keys are the same keys: a new check made on B with A's key shows up.
    b.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "on b"})),
    );
    assert_eq!(checks(&b, &rw).len(), 6);

    // A different "default" project (a served, fresh directory) clashes: nothing is stored.
    let c_dir = tmp.path().join("c");
    let c = Serve::start(&c_dir);
    let c_rw = c.first_start_key("read-write API key:");
    let run = overdue(&c_dir, &["import", dump_file.to_str().expect("utf8")]);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stderr.contains("import refused, nothing was stored"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("overdue project rm default"),
        "{}",
        run.stderr
    );
    assert_eq!(checks(&c, &c_rw).len(), 0);
    let run = overdue(
        &c_dir,
        &[
            "import",
            Path::new("/nonexistent/dump.json").to_str().expect("utf8"),
        ],
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("cannot read /nonexistent/dump.json"),
        "{}",
        run.stderr
    );
    let dump_path = dump_file.to_str().expect("utf8");
    let run = overdue(&c_dir, &["import", dump_path, "--project", "nope"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("holds no project named \"nope\""),
        "{}",
        run.stderr
    );
    let only = ok(overdue(&a_dir, &["export", "--project", "default"]));
    let only: Value = serde_json::from_str(&only).expect("JSON");
    assert_eq!(only["projects"].as_array().map(Vec::len), Some(1));
    let run = overdue(&a_dir, &["export", "--project", "nope"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("no project named \"nope\""),
        "{}",
        run.stderr
    );
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
    assert!(checks(&serve, &key).is_empty());

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
    assert_eq!(checks(&serve, &key).len(), 2);

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

    let list = checks(&serve, &key);
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

#[test]
fn doctor_reports_each_problem_with_its_fix() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let serve = Serve::start(&data);
    let listen = format!("127.0.0.1:{}", serve.port);
    // A fake SMTP server that greets.
    let smtp = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let smtp_port = smtp.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        use std::io::Write;
        while let Ok((mut s, _)) = smtp.accept() {
            let _ = s.write_all(b"220 mail.test ESMTP\r\n");
        }
    });
    let smtp_url = format!("smtp://127.0.0.1:{smtp_port}");
    let out = ok(overdue(
        &data,
        &["doctor", "--listen", &listen, "--smtp-url", &smtp_url],
    ));
    assert!(out.contains("no problems found"), "{out}");
    assert!(out.contains("a service answers"), "{out}");
    assert!(out.contains("greets: 220 mail.test"), "{out}");

    // Problems: an open directory, an SMTP port nobody listens on, a port taken by a stranger.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let dead_port = dead.local_addr().expect("addr").port();
    drop(dead);
    let stranger = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let stranger_addr = stranger.local_addr().expect("addr").to_string();
    let run = overdue(
        &data,
        &[
            "doctor",
            "--listen",
            &stranger_addr,
            "--smtp-url",
            &format!("smtp://127.0.0.1:{dead_port}"),
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let problems: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("PROBLEM"))
        .collect();
    assert_eq!(problems.len(), 3, "{}", run.stdout);
    assert!(problems[0].contains("chmod 700"), "{}", problems[0]);
    assert!(problems[1].contains("cannot be reached"), "{}", problems[1]);
    assert!(
        problems[2].contains("taken by another program"),
        "{}",
        problems[2]
    );
    assert!(run.stdout.ends_with("3 problem(s) found\n"));
}

#[test]
fn json_logs_have_one_line_per_state_change_and_none_per_ping() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let serve = Serve::start_with(&data, &["--log-format", "json"]);
    let key = serve.first_start_key("read-write API key:");
    let c = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": "logged"})),
    );
    let uuid = c["uuid"].as_str().expect("uuid").to_string();
    for _ in 0..5 {
        process::http_ok(serve.port, "GET", &format!("/ping/{uuid}"), None, None);
    }
    process::http_ok(serve.port, "GET", &format!("/ping/{uuid}/fail"), None, None);
    serve.http_ok(
        "POST",
        &format!("/api/v3/checks/{uuid}/pause"),
        Some(&key),
        None,
    );
    let flips = serve.http_ok(
        "GET",
        &format!("/api/v3/checks/{uuid}/flips/"),
        Some(&key),
        None,
    );
    let n_flips = flips.as_array().expect("flips").len();
    assert_eq!(n_flips, 3, "new→up, up→down, down→paused");
    assert!(wait_until(Duration::from_secs(5), || serve
        .stderr()
        .matches("check is ")
        .count()
        >= n_flips));
    let stderr = serve.stderr();
    let lines: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let changes: Vec<&Value> = lines
        .iter()
        .filter(|l| l["fields"]["check"] == uuid.as_str())
        .collect();
    assert_eq!(changes.len(), n_flips, "{stderr}");
    let tos: Vec<&str> = changes
        .iter()
        .map(|l| l["fields"]["to"].as_str().expect("to"))
        .collect();
    assert_eq!(tos, vec!["up", "down", "paused"]);
    assert!(changes.iter().all(|l| l["level"] == "INFO"));
    assert!(!stderr.contains("/ping/"), "no line per ping: {stderr}");
}
