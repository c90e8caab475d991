//! Running it: `overdue doctor` against a healthy and a broken setup, with and without a
//! running service, `overdue health`, the site root `serve` accepts, and `--log-format json`
//! with one line per state change and none per ping and plain numbers in its fields.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::process;

use process::{Ran, Serve, wait_until};

fn overdue(data: &Path, args: &[&str]) -> Ran {
    process::overdue_in(data, args)
}

fn ok(run: Ran) -> String {
    run.ok()
}

/// A fake SMTP server on 127.0.0.1 that greets every connection; its port.
fn greeting_smtp_server() -> u16 {
    let smtp = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = smtp.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        use std::io::Write;
        while let Ok((mut s, _)) = smtp.accept() {
            let _ = s.write_all(b"220 mail.test ESMTP\r\n");
        }
    });
    port
}

fn problems(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.starts_with("PROBLEM"))
        .collect()
}

#[test]
fn doctor_reports_each_problem_with_its_fix() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let smtp_url = format!("smtp://127.0.0.1:{}", greeting_smtp_server());
    let serve = Serve::start_with(&data, &["--smtp-url", &smtp_url]);
    // No flags: the running service says where it listens and which SMTP server it uses.
    let out = ok(overdue(&data, &["doctor"]));
    assert!(out.contains("no problems found"), "{out}");
    assert!(out.contains("a service runs on"), "{out}");
    assert!(
        out.contains(&format!(
            "a service answers http://127.0.0.1:{}/",
            serve.port
        )),
        "{out}"
    );
    assert!(out.contains("greets: 220 mail.test"), "{out}");
    drop(serve);

    // Without a service, the flags: an open directory, an SMTP port nobody listens on, a port
    // taken by a stranger.
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
    assert!(!run.stdout.contains("a service runs"), "{}", run.stdout);
    let problems = problems(&run.stdout);
    assert_eq!(problems.len(), 3, "{}", run.stdout);
    assert!(problems[0].contains("chmod 700"), "{}", problems[0]);
    assert!(problems[1].contains("cannot be reached"), "{}", problems[1]);
    assert!(
        problems[2].contains("taken by another program"),
        "{}",
        problems[2]
    );
    assert!(run.stdout.ends_with("3 problems found\n"), "{}", run.stdout);
}

#[test]
fn doctor_checks_the_settings_the_service_runs_with_not_the_shells() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    // A site root no client can open, and an email channel without an SMTP server.
    let serve = Serve::start_with(&data, &["--site-root", "http://0.0.0.0:8000"]);
    let key = serve.first_start_key("read-write API key:");
    ok(overdue(
        &data,
        &[
            "channel",
            "add",
            "--kind",
            "email",
            "--name",
            "mail",
            "--value",
            "ops@example.org",
        ],
    ));
    // Created through the API without channels: nobody hears when it goes down.
    serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": "silent"})),
    );
    // The shell's settings would be fine; doctor reports the service's.
    let smtp_url = format!("smtp://127.0.0.1:{}", greeting_smtp_server());
    let run = overdue(
        &data,
        &[
            "doctor",
            "--site-root",
            "https://overdue.example.org",
            "--smtp-url",
            &smtp_url,
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let found = problems(&run.stdout);
    assert_eq!(found.len(), 2, "{}", run.stdout);
    assert!(
        found[0].contains("the site root is http://0.0.0.0:8000"),
        "{}",
        found[0]
    );
    assert!(
        found[1].contains("1 email channel but no SMTP server"),
        "{}",
        found[1]
    );
    assert!(
        run.stdout.contains("warning  1 check without integrations"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with("2 problems found, 1 warning\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("greets"), "{}", run.stdout);
    drop(serve);

    // Stopped: the flags, and the file's facts. A site root without a scheme is a problem.
    let run = overdue(
        &data,
        &[
            "doctor",
            "--listen",
            &format!("127.0.0.1:{}", process::free_port()),
            "--site-root",
            "monitor.lan:8000",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let found = problems(&run.stdout);
    assert_eq!(found.len(), 2, "{}", run.stdout);
    assert!(
        found[0].contains("does not start with http:// or https://"),
        "{}",
        found[0]
    );
    assert!(
        found[1].contains("1 email channel but no SMTP"),
        "{}",
        found[1]
    );
}

#[test]
fn health_exits_0_while_the_service_answers_and_1_after() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let serve = Serve::start(&data);
    let listen = format!("127.0.0.1:{}", serve.port);
    let out = ok(overdue(&data, &["health", "--listen", &listen]));
    assert!(out.starts_with("healthy: "), "{out}");
    // As a container's HEALTHCHECK runs it: the address from OVERDUE_LISTEN.
    let env = process::base_command()
        .env("OVERDUE_LISTEN", &listen)
        .arg("health")
        .output()
        .expect("run overdue");
    assert!(env.status.success(), "{env:?}");
    drop(serve);
    let run = overdue(&data, &["health", "--listen", &listen]);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stderr.contains("unhealthy: http://127.0.0.1:"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_site_root_without_http_is_refused_and_one_naming_no_host_is_warned_about() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    for (flag, env) in [
        (Some("overdue.example.org"), None),
        (None, Some("ftp://overdue.example.org")),
        (Some("http://"), None),
    ] {
        let mut cmd = process::base_command();
        cmd.arg("--data").arg(&data).arg("serve");
        if let Some(root) = flag {
            cmd.args(["--site-root", root]);
        }
        if let Some(root) = env {
            cmd.env("OVERDUE_SITE_ROOT", root);
        }
        let out = cmd
            .args(["--listen", "127.0.0.1:0"])
            .output()
            .expect("run overdue");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--site-root"), "{stderr}");
        assert!(
            stderr.contains("http:// or https://") || stderr.contains("has no host"),
            "{stderr}"
        );
        assert!(!data.exists(), "a refused start creates nothing");
    }

    let serve = Serve::start_with(&data, &["--site-root", "http://0.0.0.0:8000/"]);
    assert!(
        wait_until(Duration::from_secs(5), || serve
            .stderr()
            .contains("names no host a client can open")),
        "{}",
        serve.stderr()
    );
    assert!(serve.stderr().contains("--site-root"), "{}", serve.stderr());
}

/// A webhook receiver on 127.0.0.1 that answers 200 to every request; its URL.
fn accepting_webhook() -> String {
    let hook = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = hook.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        while let Ok((mut s, _)) = hook.accept() {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = [0u8; 16 << 10];
            let _ = s.read(&mut buf);
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    format!("http://127.0.0.1:{port}/hook")
}

#[test]
fn delivery_log_lines_carry_the_status_code_as_a_number() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let serve = Serve::start_with(&data, &["--log-format", "json"]);
    let key = serve.first_start_key("read-write API key:");
    let hook = accepting_webhook();
    ok(overdue(
        &data,
        &[
            "channel", "add", "--kind", "webhook", "--name", "hook", "--url", &hook,
        ],
    ));
    let c = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&key),
        Some(&json!({"name": "hooked", "channels": "*"})),
    );
    let uuid = c["uuid"].as_str().expect("uuid").to_string();
    process::http_ok(serve.port, "GET", &format!("/ping/{uuid}/fail"), None, None);
    assert!(
        wait_until(Duration::from_secs(20), || serve
            .stderr()
            .contains("alert delivered")),
        "{}",
        serve.stderr()
    );
    let stderr = serve.stderr();
    let delivered: Value = stderr
        .lines()
        .filter(|l| l.contains("alert delivered"))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .next()
        .expect("a delivery line");
    assert_eq!(delivered["fields"]["code"], json!(200), "{delivered}");
    assert!(!stderr.contains("Some("), "{stderr}");
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
    let about_the_check = |l: &&Value| l["fields"]["check"] == uuid.as_str();
    let changes: Vec<&Value> = lines
        .iter()
        .filter(about_the_check)
        .filter(|l| l["fields"]["to"].is_string())
        .collect();
    assert_eq!(changes.len(), n_flips, "{stderr}");
    // The check has no channel: going down is also a warning that nobody is alerted.
    let warnings: Vec<&Value> = lines
        .iter()
        .filter(about_the_check)
        .filter(|l| l["level"] == "WARN")
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    let warning = warnings[0]["fields"]["message"].as_str().expect("message");
    assert!(warning.contains("has no integrations"), "{warning}");
    let tos: Vec<&str> = changes
        .iter()
        .map(|l| l["fields"]["to"].as_str().expect("to"))
        .collect();
    assert_eq!(tos, vec!["up", "down", "paused"]);
    assert!(changes.iter().all(|l| l["level"] == "INFO"));
    assert!(!stderr.contains("/ping/"), "no line per ping: {stderr}");
}
