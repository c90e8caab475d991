//! Running it: `overdue doctor` against a healthy and a broken setup, and `--log-format json`
//! with one line per state change and none per ping.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

mod process;

use process::{Ran, Serve, wait_until};

fn overdue(data: &Path, args: &[&str]) -> Ran {
    process::overdue_in(data, args)
}

fn ok(run: Ran) -> String {
    run.ok()
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
