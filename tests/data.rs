//! Data operations on the real binary: `backup` while serving under ping load and while
//! stopped (then restoring it), and `export`/`import` compared through the Management API of
//! two servers.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::process;

use process::{Ran, Serve, http, wait_until};

fn overdue(data: &Path, args: &[&str]) -> Ran {
    process::overdue_in(data, args)
}

fn ok(run: Ran) -> String {
    run.ok()
}

/// A data directory holding `file` as its data file, as a restore makes it.
fn restore_into(file: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::copy(file, dir.join("overdue.redb")).expect("copy the backup in");
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
    let list = restored.checks(&key);
    assert_eq!(list.len(), 4, "the key and the checks came back");
    let total: u64 = list
        .iter()
        .map(|c| c["n_pings"].as_u64().expect("n_pings"))
        .sum();
    // A pinger may have a ping stored before the copy was taken whose answer it has not
    // counted yet when the backup returns: at most one per pinger.
    let in_flight = uuids.len() as u64;
    assert!(
        (before..=after + in_flight).contains(&total),
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
    assert_eq!(again.checks(&key).len(), 4);
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
    get("/api/v3/project/", rw);
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
    // The project's quiet window travels with it (set by the CLI, which says what it set).
    let out = ok(overdue(
        &a_dir,
        &[
            "project",
            "quiet",
            "--schedule",
            "Sun 02:00",
            "--tz",
            "Europe/Riga",
            "--duration",
            "2h",
        ],
    ));
    assert_eq!(
        out,
        "project default: quiet for 2h from Sun 02:00 (Europe/Riga)\n"
    );
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
        out.contains("imported 1 project, 2 API keys, 2 channels, 5 checks"),
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
            "already present, left as they are: 1 project, 2 API keys, 2 channels, 5 checks"
        ),
        "{out}"
    );
    assert_eq!(b.checks(&rw).len(), 5);
    // The imported keys are the same keys: a new check made on B with A's key shows up.
    b.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "on b"})),
    );
    assert_eq!(b.checks(&rw).len(), 6);

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
    assert_eq!(c.checks(&c_rw).len(), 0);
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

/// A dump of one project with `n` checks, as `overdue export` writes it.
fn bulk_dump(n: usize) -> String {
    let channel = "3c3c3c3c-0000-4000-8000-000000000001";
    let checks: Vec<Value> = (0..n)
        .map(|i| {
            // No up checks: a serving service would take them down meanwhile.
            let status = ["paused", "new", "down"][i % 3];
            let up = status != "new";
            json!({
                "uuid": format!("5b5b5b5b-0000-4000-8000-{i:012}"),
                "created": "2026-01-01T00:00:00Z",
                "name": format!("job {i}"), "slug": format!("job-{i}"), "tags": "bulk",
                "desc": "", "kind": "simple", "timeout": 86400, "grace": 3600,
                "schedule": "* * * * *", "tz": "UTC", "manual_resume": false, "methods": "",
                "start_kw": "", "success_kw": "", "failure_kw": "", "filter_subject": false,
                "filter_body": false, "filter_http_body": false, "filter_default_fail": false,
                "badge_key": format!("7d7d7d7d-0000-4000-8000-{i:012}"),
                "channels": if i % 2 == 0 { json!([channel]) } else { json!([]) },
                "status": status,
                "n_pings": if up { 5 } else { 0 },
                "last_ping": if up { json!("2026-01-02T03:04:05.123456Z") } else { Value::Null },
                "last_start": null, "last_start_rid": null,
                "last_duration_us": if up { json!(1_500_000) } else { Value::Null },
                "fail_threshold": 1 + i % 3, "fails_in_row": 0,
                "max_duration": (i % 2) * 600, "min_duration": 0, "snoozed_until": null,
                "quiet_schedule": if i % 5 == 0 { "Sun 02:00" } else { "" },
                "quiet_tz": "UTC", "quiet_duration": if i % 5 == 0 { 7200 } else { 0 },
                "parents": [], "held": null, "channel_events": {}, "late_seen": null,
            })
        })
        .collect();
    let dump = json!({
        "format": "overdue-export", "version": 1, "exported_at": "2026-01-03T00:00:00Z",
        "badge_secret": "00112233445566778899aabbccddeeff",
        "projects": [{
            "uuid": "1a1a1a1a-0000-4000-8000-000000000001", "name": "bulk",
            "ping_key": "bulkbulkbulkbulkbulk01", "badge_key": "2b2b2b2b-0000-4000-8000-000000000001",
            "created": "2026-01-01T00:00:00Z", "api_keys": [],
            "channels": [{"uuid": channel, "name": "ops", "kind": "email",
                "settings": [["address", "ops@example.org"]],
                "created": "2026-01-01T00:00:00Z", "default_for_new": false}],
            "checks": checks,
        }],
    });
    format!("{}\n", serde_json::to_string_pretty(&dump).expect("json"))
}

/// `text` without its `exported_at` line.
fn without_export_time(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("  \"exported_at\""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `overdue` with stderr on a pseudo-terminal; exit code and what the terminal showed.
fn on_terminal(data: &Path, args: &[&str]) -> (Option<i32>, String) {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 24,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors that this test then owns.
    let rc = unsafe {
        libc::openpty(
            &raw mut master,
            &raw mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &raw const size,
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both descriptors are fresh and owned by nothing else.
    let (mut master, slave) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            OwnedFd::from_raw_fd(slave),
        )
    };
    let child = {
        let mut cmd = process::base_command();
        cmd.arg("--data").arg(data).args(args);
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::from(slave));
        cmd.spawn().expect("spawn")
    };
    let reader = std::thread::spawn(move || {
        let mut shown = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once the child, the last holder of the terminal, has exited.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            shown.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&shown).into_owned()
    });
    let status = child.wait_with_output().expect("wait").status;
    (status.code(), reader.join().expect("reader"))
}

#[test]
fn a_large_dump_goes_in_and_out_in_parts_directly_and_through_the_service() {
    let tmp = tempfile::tempdir().expect("tmp");
    let text = bulk_dump(2_500);
    let dump = tmp.path().join("bulk.json");
    std::fs::write(&dump, &text).expect("write");
    let dump_arg = dump.to_str().expect("utf8");

    // Stopped: the command opens the file itself. Piped, it prints no progress.
    let a = tmp.path().join("a");
    let run = overdue(&a, &["import", dump_arg]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (Some(0), ""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("imported 1 project, 0 API keys, 1 channel, 2500 checks"),
        "{}",
        run.stdout
    );
    let run = overdue(&a, &["export"]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert!(
        without_export_time(&run.stdout) == without_export_time(&text),
        "the export is the imported dump, byte for byte"
    );

    // Serving: the same through the control socket, the dump from standard input.
    let b = tmp.path().join("b");
    let serve = Serve::start(&b);
    let out = process::base_command()
        .arg("--data")
        .arg(&b)
        .args(["import", "-"])
        .stdin(std::fs::File::open(&dump).expect("open"))
        .output()
        .expect("run");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    // Only the note that this file keeps its own badge secret; no progress.
    assert!(
        stderr.starts_with("note: this data file signs project badge URLs")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(stdout.contains("2500 checks"), "{stdout}");
    let run = overdue(&b, &["export", "--project", "bulk"]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    let exported: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let original: Value = serde_json::from_str(&text).expect("JSON");
    assert!(
        exported["projects"] == original["projects"],
        "the export through the service is the imported project"
    );
    let run = overdue(&b, &["import", dump_arg]);
    assert!(run.ok().contains(
        "already present, left as they are: 1 project, 0 API keys, 1 channel, 2500 checks"
    ));
    drop(serve);

    // A clash in the last part refuses the import before its first part is stored.
    let mut twice: Value = serde_json::from_str(&text).expect("JSON");
    let checks = twice["projects"][0]["checks"]
        .as_array_mut()
        .expect("checks");
    let first = checks[0].clone();
    checks.push(first);
    let twice_file = tmp.path().join("twice.json");
    std::fs::write(&twice_file, twice.to_string()).expect("write");
    let d = tmp.path().join("d");
    let run = overdue(&d, &["import", twice_file.to_str().expect("utf8")]);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stderr.contains("import refused, nothing was stored") && run.stderr.contains("twice"),
        "{}",
        run.stderr
    );
    let empty: Value = serde_json::from_str(&ok(overdue(&d, &["export"]))).expect("JSON");
    assert_eq!(empty["projects"], json!([]), "nothing was stored");

    // On a terminal, the same import shows its progress.
    let c = tmp.path().join("c");
    let (code, shown) = on_terminal(&c, &["import", dump_arg]);
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("importing"),
        "progress on the terminal: {shown:?}"
    );
}

#[test]
fn backup_keeps_an_existing_file_unless_forced() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    process::init_data(&data);
    ok(overdue(&data, &["project", "add", "ops"]));
    let file = tmp.path().join("b.redb");
    let file_arg = file.to_str().expect("utf8");
    std::fs::write(&file, "an older backup").expect("write");

    let refused = |run: Ran| {
        assert_eq!(run.code, Some(1), "{}", run.stdout);
        assert!(
            run.stderr.contains(&format!("{file_arg} already exists"))
                && run.stderr.contains("--force"),
            "{}",
            run.stderr
        );
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            "an older backup"
        );
        assert!(!tmp.path().join("b.redb.tmp").exists());
    };
    // Stopped, and through the running service.
    refused(overdue(&data, &["backup", file_arg]));
    let serve = Serve::start(&data);
    refused(overdue(&data, &["backup", file_arg]));
    let out = ok(overdue(&data, &["backup", file_arg, "--force"]));
    assert!(out.starts_with("backup written to "), "{out}");
    drop(serve);

    let restored = tmp.path().join("restored");
    restore_into(&file, &restored);
    let listed = ok(overdue(&restored, &["project", "ls"]));
    assert!(listed.lines().any(|l| l.starts_with("ops ")), "{listed}");
}

#[test]
fn export_output_writes_a_private_file_whatever_the_umask() {
    use std::os::unix::process::CommandExt;

    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    process::init_data(&data);
    ok(overdue(&data, &["project", "add", "ops"]));
    ok(overdue(&data, &["key", "add", "ops"]));
    let file = tmp.path().join("dump.json");
    // An older, readable export in the way is replaced, not written through.
    std::fs::write(&file, "old").expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");

    let mut cmd = process::base_command();
    cmd.arg("--data")
        .arg(&data)
        .args(["export", "--output"])
        .arg(&file);
    // SAFETY: umask is async-signal-safe and touches nothing but the child's own mask.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    let out = cmd.output().expect("run overdue export");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout,
        format!(
            "exported 1 project, 1 API key, 0 channels, 0 checks to {} (mode 0600)\n",
            file.display()
        )
    );
    let mode = std::fs::metadata(&file).expect("file").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(!tmp.path().join("dump.json.tmp").exists());

    // The same export as on standard output, which still works.
    let mut in_file: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("JSON");
    let mut printed: Value = serde_json::from_str(&ok(overdue(&data, &["export"]))).expect("JSON");
    in_file["exported_at"] = Value::Null;
    printed["exported_at"] = Value::Null;
    assert_eq!(in_file, printed);
    assert_eq!(
        printed["projects"][0]["api_keys"].as_array().map(Vec::len),
        Some(1)
    );
}
