//! The `overdue` binary as a user (or a script) runs it: the admin subcommands against a
//! stopped service and through the control socket of a running one, and `serve` itself
//! (start, refusing a busy data directory or port, SIGTERM).

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::process;

use process::{STARTUP_DEADLINE, Serve, base_command, free_port, wait_until};

/// Result of one finished command.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn from_output(out: &Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts success and returns stdout.
    fn ok(self) -> String {
        assert_eq!(
            self.code,
            Some(0),
            "expected success\nstdout: {}\nstderr: {}",
            self.stdout,
            self.stderr
        );
        self.stdout
    }

    /// Asserts success and parses stdout as JSON.
    fn json(self) -> Value {
        let out = self.ok();
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    /// Asserts exit code 1 with an `overdue: ...` message on stderr and nothing on stdout;
    /// returns stderr.
    fn fails(self) -> String {
        assert_eq!(
            self.code,
            Some(1),
            "expected exit code 1\nstdout: {}\nstderr: {}",
            self.stdout,
            self.stderr
        );
        assert!(self.stdout.is_empty(), "stdout on failure: {}", self.stdout);
        assert!(
            self.stderr.starts_with("overdue: ") && self.stderr.ends_with('\n'),
            "stderr should be one `overdue: ...` message: {:?}",
            self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        self.stderr
    }
}

/// `overdue --data DIR ARGS...`
fn overdue(data: &Path, args: &[&str]) -> Run {
    let out = base_command()
        .arg("--data")
        .arg(data)
        .args(args)
        .output()
        .expect("run overdue");
    Run::from_output(&out)
}

fn is_url_safe(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Stopping the service the ways a user does.
impl Serve {
    /// `kill -TERM`.
    fn terminate(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits for the process to exit, up to `limit`.
    fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "serve still running after {limit:?}\nstderr: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn socket_path(data: &Path) -> PathBuf {
    data.join("overdue.sock")
}

// ---------------------------------------------------------------------------------------------
// The service stopped: admin commands open the data file themselves.
// ---------------------------------------------------------------------------------------------

#[test]
fn project_add_ls_rm_with_the_service_stopped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    // Only serve and import create a data file; admin commands then use it.
    process::init_data(&data);

    let doc = overdue(&data, &["project", "add", "ops", "--json"]).json();
    let obj = doc.as_object().expect("an object");
    let mut fields: Vec<&str> = obj.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(fields, ["badge_key", "name", "ping_key", "uuid"]);
    let project_uuid = doc["uuid"].as_str().expect("uuid string").to_string();
    assert!(
        uuid::Uuid::parse_str(&project_uuid).is_ok(),
        "{project_uuid}"
    );
    assert_eq!(doc["name"], "ops");
    let ping_key = doc["ping_key"]
        .as_str()
        .expect("ping_key string")
        .to_string();
    assert_eq!(ping_key.len(), 22, "{ping_key}");
    assert!(is_url_safe(&ping_key), "{ping_key}");
    let badge_key = doc["badge_key"].as_str().expect("badge_key string");
    assert!(!badge_key.is_empty());

    // The data directory was created private (by the import).
    let mode = std::fs::metadata(&data)
        .expect("data dir")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700);

    // Plain text output names the keys too.
    let text = overdue(&data, &["project", "add", "dev"]).ok();
    assert!(text.contains("dev"), "{text}");
    assert!(text.contains("ping key"), "{text}");

    let err = overdue(&data, &["project", "add", "ops"]).fails();
    assert!(
        err.contains("ops") && err.contains("already exists"),
        "{err}"
    );
    let err = overdue(&data, &["project", "add", "   "]).fails();
    assert!(err.contains("name"), "{err}");

    let text = overdue(&data, &["project", "ls"]).ok();
    let mut lines = text.lines();
    let header = lines.next().expect("header line");
    assert!(header.starts_with("NAME"), "{text}");
    let ops_line = text
        .lines()
        .find(|l| l.starts_with("ops "))
        .unwrap_or_else(|| panic!("no ops line:\n{text}"));
    assert!(ops_line.contains(&ping_key), "{ops_line}");
    assert!(ops_line.trim_end().ends_with('0'), "0 checks: {ops_line}");
    assert!(text.lines().any(|l| l.starts_with("dev ")), "{text}");
    assert_eq!(text.lines().count(), 3, "{text}");

    let list = overdue(&data, &["project", "ls", "--json"]).json();
    let list = list.as_array().expect("array");
    assert_eq!(list.len(), 2);
    let ops = list
        .iter()
        .find(|p| p["name"] == "ops")
        .expect("ops listed");
    assert_eq!(
        ops,
        &json!({"name": "ops", "uuid": project_uuid, "ping_key": ping_key, "badge_key": badge_key, "checks": 0})
    );

    let out = overdue(&data, &["project", "rm", "ops", "--yes"]).ok();
    assert!(out.contains("removed project ops"), "{out}");
    let list = overdue(&data, &["project", "ls", "--json"]).json();
    assert_eq!(
        list.as_array()
            .expect("array")
            .iter()
            .map(|p| p["name"].clone())
            .collect::<Vec<_>>(),
        vec![json!("dev")]
    );
    let err = overdue(&data, &["project", "rm", "ops"]).fails();
    assert!(err.contains("no project named \"ops\""), "{err}");
    // The name is free again.
    overdue(&data, &["project", "add", "ops", "--json"]).json();
}

#[test]
fn key_add_ls_rm_with_the_service_stopped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    process::init_data(data);
    overdue(data, &["project", "add", "ops"]).ok();

    let rw = overdue(data, &["key", "add", "ops", "--json"]).json();
    let rw_key = rw["key"].as_str().expect("key").to_string();
    assert!(rw_key.starts_with("hcw_"), "{rw_key}");
    assert_eq!(rw_key.len(), 32);
    assert!(rw_key[4..].bytes().all(|b| b.is_ascii_alphanumeric()));
    assert_eq!(rw["project"], "ops");
    assert_eq!(rw["read_only"], false);
    assert_eq!(rw["prefix"], rw_key[..12]);
    assert_eq!(rw["label"], "");

    let ro = overdue(
        data,
        &[
            "key",
            "add",
            "ops",
            "--read-only",
            "--label",
            "grafana",
            "--json",
        ],
    )
    .json();
    let ro_key = ro["key"].as_str().expect("key").to_string();
    assert!(ro_key.starts_with("hcr_"), "{ro_key}");
    assert_eq!(ro_key.len(), 32);
    assert_eq!(ro["read_only"], true);
    assert_eq!(ro["label"], "grafana");
    assert_ne!(rw_key, ro_key);

    // Text output shows the key once, too.
    let text = overdue(data, &["key", "add", "ops", "--label", "cron"]).ok();
    let third = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("hcw_"))
        .unwrap_or_else(|| panic!("no key in:\n{text}"))
        .to_string();
    assert_eq!(third.len(), 32);

    let listing = overdue(data, &["key", "ls", "ops"]).ok();
    for key in [&rw_key, &ro_key, &third] {
        assert!(!listing.contains(key.as_str()), "key leaked:\n{listing}");
        assert!(listing.contains(&key[..12]), "prefix missing:\n{listing}");
        assert!(
            !listing.contains(&key[..13]),
            "more than the 12-char prefix shown:\n{listing}"
        );
    }
    assert!(listing.contains("grafana") && listing.contains("cron"));
    let ro_line = listing
        .lines()
        .find(|l| l.starts_with(&ro_key[..12]))
        .expect("ro line");
    assert!(ro_line.contains("read-only"), "{ro_line}");

    let listing = overdue(data, &["key", "ls", "ops", "--json"]).json();
    let raw = listing.to_string();
    for key in [&rw_key, &ro_key, &third] {
        assert!(!raw.contains(&key[..13]), "key leaked: {raw}");
    }
    let entries = listing.as_array().expect("array");
    assert_eq!(entries.len(), 3);
    for e in entries {
        assert!(e.get("key").is_none(), "{e}");
        assert_eq!(e["prefix"].as_str().expect("prefix").len(), 12, "{e}");
    }
    let ro_entry = entries
        .iter()
        .find(|e| e["prefix"] == ro_key[..12])
        .expect("ro entry");
    assert_eq!(ro_entry["read_only"], true);
    assert_eq!(ro_entry["label"], "grafana");

    let out = overdue(data, &["key", "rm", "ops", &rw_key[..12]]).ok();
    assert!(out.contains(&rw_key[..12]), "{out}");
    let listing = overdue(data, &["key", "ls", "ops"]).ok();
    assert!(!listing.contains(&rw_key[..12]), "{listing}");
    assert!(listing.contains(&ro_key[..12]), "{listing}");

    let err = overdue(data, &["key", "rm", "ops", &rw_key[..12]]).fails();
    assert!(err.contains(&rw_key[..12]), "{err}");
    // A key of another project cannot be removed through this one.
    overdue(data, &["project", "add", "dev"]).ok();
    let err = overdue(data, &["key", "rm", "dev", &ro_key[..12]]).fails();
    assert!(err.contains("dev"), "{err}");
    assert!(
        overdue(data, &["key", "ls", "ops"])
            .ok()
            .contains(&ro_key[..12])
    );

    for args in [
        &["key", "add", "nope"][..],
        &["key", "ls", "nope"][..],
        &["key", "rm", "nope", "hcw_12345678"][..],
    ] {
        let err = overdue(data, args).fails();
        assert!(err.contains("no project named \"nope\""), "{args:?}: {err}");
    }
}

#[test]
fn channel_add_ls_rm_with_the_service_stopped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    process::init_data(data);
    overdue(data, &["project", "add", "ops"]).ok();

    let mail = overdue(
        data,
        &[
            "channel",
            "add",
            "ops",
            "--kind",
            "email",
            "--name",
            "oncall",
            "--value",
            "oncall@example.org",
            "--json",
        ],
    )
    .json();
    let mail_id = mail["id"].as_str().expect("id").to_string();
    assert_eq!(
        mail,
        json!({"id": mail_id, "name": "oncall", "kind": "email", "default_for_new": true, "assigned": 0,
               "events": "down,up"})
    );
    assert_eq!(mail_id.len(), 36, "a UUID: {mail_id}");

    let hook = overdue(
        data,
        &[
            "channel",
            "add",
            "ops",
            "--kind",
            "webhook",
            "--name",
            "hook",
            "--url",
            "https://user:s3cret@hooks.example.org/T0KEN-in-path/x?sig=abc",
            "--json",
        ],
    )
    .json();
    let hook_id = hook["id"].as_str().expect("id").to_string();
    assert_eq!(
        hook,
        json!({"id": hook_id, "name": "hook", "kind": "webhook", "default_for_new": true, "assigned": 0,
               "events": "down,up"})
    );
    assert_ne!(mail_id, hook_id);

    let list = overdue(data, &["channel", "ls", "ops", "--json"]).json();
    let list = list.as_array().expect("array").clone();
    assert_eq!(list.len(), 2);
    let m = list.iter().find(|c| c["id"] == mail_id).expect("email");
    assert_eq!(
        (&m["name"], &m["kind"], &m["target"]),
        (
            &json!("oncall"),
            &json!("email"),
            &json!("oncall@example.org")
        )
    );
    let h = list.iter().find(|c| c["id"] == hook_id).expect("webhook");
    assert_eq!(
        (&h["name"], &h["kind"], &h["target"]),
        (
            &json!("hook"),
            &json!("webhook"),
            &json!("hooks.example.org")
        )
    );

    let text = overdue(data, &["channel", "ls", "ops"]).ok();
    let json_text = overdue(data, &["channel", "ls", "ops", "--json"]).ok();
    for out in [&text, &json_text] {
        for secret in ["T0KEN-in-path", "s3cret", "sig=abc"] {
            assert!(!out.contains(secret), "{secret} leaked:\n{out}");
        }
    }
    assert!(text.contains(&mail_id) && text.contains(&hook_id), "{text}");
    assert!(text.contains("hooks.example.org"), "{text}");

    // Usage errors.
    let err = overdue(
        data,
        &[
            "channel", "add", "ops", "--kind", "pigeon", "--name", "p", "--value", "x",
        ],
    )
    .fails();
    assert!(err.contains("pigeon"), "{err}");
    let err = overdue(
        data,
        &["channel", "add", "ops", "--kind", "email", "--name", "m"],
    )
    .fails();
    assert!(err.contains("--value"), "{err}");
    let err = overdue(
        data,
        &["channel", "add", "ops", "--kind", "webhook", "--name", "w"],
    )
    .fails();
    assert!(err.contains("--url"), "{err}");
    let err = overdue(
        data,
        &[
            "channel", "add", "nope", "--kind", "email", "--name", "m", "--value", "a@b.c",
        ],
    )
    .fails();
    assert!(err.contains("no project named \"nope\""), "{err}");
    // None of the failures added anything.
    let list = overdue(data, &["channel", "ls", "ops", "--json"]).json();
    assert_eq!(list.as_array().expect("array").len(), 2);

    // Removal by name, then by id.
    let out = overdue(data, &["channel", "rm", "ops", "hook"]).ok();
    assert!(out.contains(&hook_id), "{out}");
    let list = overdue(data, &["channel", "ls", "ops", "--json"]).json();
    assert_eq!(
        list.as_array()
            .expect("array")
            .iter()
            .map(|c| c["id"].clone())
            .collect::<Vec<_>>(),
        vec![json!(mail_id)]
    );
    overdue(data, &["channel", "rm", "ops", &mail_id]).ok();
    let list = overdue(data, &["channel", "ls", "ops", "--json"]).json();
    assert_eq!(list, json!([]));
    let err = overdue(data, &["channel", "rm", "ops", &mail_id]).fails();
    assert!(err.contains(&mail_id), "{err}");
}

#[test]
fn check_ls_on_an_empty_project_and_project_rm() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    process::init_data(data);
    overdue(data, &["project", "add", "ops"]).ok();
    assert_eq!(
        overdue(data, &["check", "ls", "ops", "--json"]).json(),
        json!([])
    );
    let text = overdue(data, &["check", "ls", "ops"]).ok();
    assert_eq!(text.lines().count(), 1, "only a header: {text}");
    assert!(text.starts_with("UUID"), "{text}");
    let err = overdue(data, &["check", "ls", "nope"]).fails();
    assert!(err.contains("no project named \"nope\""), "{err}");

    overdue(data, &["key", "add", "ops"]).ok();
    overdue(
        data,
        &[
            "channel", "add", "ops", "--kind", "email", "--name", "m", "--value", "a@b.c",
        ],
    )
    .ok();
    let out = overdue(data, &["project", "rm", "ops", "--yes"]).ok();
    assert_eq!(
        out, "removed project ops with 0 checks, 1 channel and 1 API key\n",
        "{out}"
    );
    let err = overdue(data, &["check", "ls", "ops"]).fails();
    assert!(err.contains("no project named"), "{err}");
    assert_eq!(
        overdue(data, &["project", "ls", "--json"]).json(),
        json!([])
    );
}

#[test]
fn data_directory_from_the_environment_or_after_the_subcommand() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let from_env = tmp.path().join("env");
    let from_flag = tmp.path().join("flag");
    process::init_data(&from_env);
    process::init_data(&from_flag);

    let out = base_command()
        .env("OVERDUE_DATA", &from_env)
        .args(["project", "add", "via-env", "--json"])
        .output()
        .expect("run");
    assert_eq!(Run::from_output(&out).json()["name"], "via-env");
    assert!(from_env.join("overdue.redb").exists());

    // `--data` after the subcommand reads the same directory.
    let out = base_command()
        .args(["project", "ls", "--json", "--data"])
        .arg(&from_env)
        .output()
        .expect("run");
    let list = Run::from_output(&out).json();
    assert_eq!(list[0]["name"], "via-env");

    // An explicit --data wins over the environment.
    let out = base_command()
        .env("OVERDUE_DATA", &from_env)
        .args(["project", "add", "via-flag", "--data"])
        .arg(&from_flag)
        .output()
        .expect("run");
    Run::from_output(&out).ok();
    let names = |dir: &Path| -> Vec<Value> {
        overdue(dir, &["project", "ls", "--json"])
            .json()
            .as_array()
            .expect("array")
            .iter()
            .map(|p| p["name"].clone())
            .collect()
    };
    assert_eq!(names(&from_env), vec![json!("via-env")]);
    assert_eq!(names(&from_flag), vec![json!("via-flag")]);
}

// ---------------------------------------------------------------------------------------------
// The service running: admin commands go through the control socket.
// ---------------------------------------------------------------------------------------------

#[test]
fn admin_commands_work_through_the_running_service() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    assert!(rw.starts_with("hcw_") && rw.len() == 32, "{rw}");
    let ro = serve.first_start_key("read-only API key:");
    assert!(ro.starts_with("hcr_") && ro.len() == 32, "{ro}");
    assert_eq!(serve.http("GET", "/api/v3/checks/", Some(&rw), None).0, 200);

    let socket = socket_path(data);
    let meta = std::fs::symlink_metadata(&socket).expect("control socket exists");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "socket mode");

    // A new key works at once, and stops working at once when removed.
    let added = overdue(data, &["key", "add", "default", "--json"]).json();
    let key = added["key"].as_str().expect("key").to_string();
    let (code, doc) = serve.http("GET", "/api/v3/checks/", Some(&key), None);
    assert_eq!(code, 200, "{doc}");
    assert_eq!(doc, json!({"checks": []}));
    let listing = overdue(data, &["key", "ls", "default"]).ok();
    assert!(
        listing.contains(&key[..12]) && !listing.contains(&key),
        "{listing}"
    );
    overdue(data, &["key", "rm", "default", &key[..12]]).ok();
    let (code, doc) = serve.http("GET", "/api/v3/checks/", Some(&key), None);
    assert_eq!(code, 401, "{doc}");
    // The first-start key is untouched.
    assert_eq!(serve.http("GET", "/api/v3/checks/", Some(&rw), None).0, 200);

    // Projects and channels while running.
    let p = overdue(data, &["project", "add", "ops", "--json"]).json();
    assert_eq!(p["name"], "ops");
    let names: Vec<Value> = overdue(data, &["project", "ls", "--json"])
        .json()
        .as_array()
        .expect("array")
        .iter()
        .map(|p| p["name"].clone())
        .collect();
    assert!(names.contains(&json!("default")) && names.contains(&json!("ops")));
    let err = overdue(data, &["project", "add", "ops"]).fails();
    assert!(err.contains("already exists"), "{err}");
    let chan = overdue(
        data,
        &[
            "channel",
            "add",
            "default",
            "--kind",
            "email",
            "--name",
            "mail",
            "--value",
            "oncall@example.org",
            "--json",
        ],
    )
    .json();
    let chan_id = chan["id"].as_str().expect("id").to_string();
    // The API sees the channel the CLI added.
    let (code, doc) = serve.http("GET", "/api/v3/channels/", Some(&rw), None);
    assert_eq!(code, 200, "{doc}");
    assert!(doc.to_string().contains(&chan_id), "{doc}");

    // A check created over HTTP shows up in `check ls`, as the API shows it.
    let (code, created) = serve.http(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({
            "name": "Nightly backup",
            "slug": "nightly-backup",
            "tags": "prod db",
            "timeout": 3600,
            "grace": 120,
            "channels": "mail",
        })),
    );
    assert_eq!(code, 201, "{created}");
    let uuid = created["uuid"].as_str().expect("uuid").to_string();
    let (code, mut from_api) =
        serve.http("GET", &format!("/api/v3/checks/{uuid}"), Some(&rw), None);
    assert_eq!(code, 200, "{from_api}");
    assert_eq!(from_api["channels"], json!(chan_id));

    let listed = overdue(data, &["check", "ls", "default", "--json"]).json();
    let listed = listed.as_array().expect("array");
    assert_eq!(listed.len(), 1, "{listed:?}");
    let mut from_cli = listed[0].clone();
    for doc in [&mut from_api, &mut from_cli] {
        assert_eq!(doc["status"], "new", "{doc}");
        let obj = doc.as_object_mut().expect("object");
        obj.remove("status");
        obj.remove("next_ping");
    }
    assert_eq!(from_cli, from_api);
    assert_eq!(
        overdue(data, &["check", "ls", "ops", "--json"]).json(),
        json!([])
    );
    let text = overdue(data, &["check", "ls", "default"]).ok();
    assert!(
        text.contains(&uuid) && text.contains("nightly-backup") && text.contains("Nightly backup"),
        "{text}"
    );

    // Removing the channel through the CLI unassigns it from the check in the API.
    overdue(data, &["channel", "rm", "default", "mail"]).ok();
    let (_, after) = serve.http("GET", &format!("/api/v3/checks/{uuid}"), Some(&rw), None);
    assert_eq!(after["channels"], "", "{after}");

    // `project ls` counts the check.
    let projects = overdue(data, &["project", "ls", "--json"]).json();
    let default = projects
        .as_array()
        .expect("array")
        .iter()
        .find(|p| p["name"] == "default")
        .expect("default listed")
        .clone();
    assert_eq!(default["checks"], 1);
}

#[test]
fn a_second_serve_on_the_same_data_directory_exits_with_a_message() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let first = Serve::start(data);
    let mut second = Serve::spawn(data, free_port());
    let status = second.wait_exit(STARTUP_DEADLINE);
    // The drain thread may still be collecting the last line.
    assert!(
        wait_until(Duration::from_secs(5), || second
            .stderr()
            .contains("overdue: ")),
        "no error message: {}",
        second.stderr()
    );
    let stderr = second.stderr();
    assert_eq!(status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.contains("in use"), "{stderr}");
    assert!(stderr.contains(&data.display().to_string()), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(second.stdout().is_empty(), "{}", second.stdout());
    // The first one is unaffected, its socket included.
    assert_eq!(
        first.http("GET", "/api/v3/status/", None, None).0,
        200,
        "first serve still answers"
    );
    assert!(socket_path(data).exists());
    overdue(data, &["project", "ls"]).ok();
}

#[test]
fn serve_on_a_taken_port_exits_with_a_message() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    let mut serve = Serve::spawn(tmp.path(), port);
    let status = serve.wait_exit(STARTUP_DEADLINE);
    assert!(
        wait_until(Duration::from_secs(5), || serve
            .stderr()
            .contains("overdue: ")),
        "no error message: {}",
        serve.stderr()
    );
    let stderr = serve.stderr();
    assert_eq!(status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    drop(taken);
}

#[test]
fn sigterm_stops_the_service_cleanly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let mut serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    let ro = serve.first_start_key("read-only API key:");
    overdue(data, &["project", "add", "ops"]).ok();
    let (code, created) = serve.http(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "kept", "timeout": 600})),
    );
    assert_eq!(code, 201, "{created}");
    let while_running = overdue(data, &["check", "ls", "default", "--json"]).json();
    let socket = socket_path(data);
    assert!(socket.exists());

    serve.terminate();
    let status = serve.wait_exit(Duration::from_secs(5));
    assert_eq!(status.code(), Some(0), "stderr: {}", serve.stderr());
    assert!(!socket.exists(), "the control socket is removed at exit");

    // The file is free: admin commands open it directly and see everything.
    let listing = overdue(data, &["key", "ls", "default"]).ok();
    assert!(listing.contains(&rw[..12]), "{listing}");
    assert!(listing.contains(&ro[..12]), "{listing}");
    let projects = overdue(data, &["project", "ls", "--json"]).json();
    assert_eq!(projects.as_array().expect("array").len(), 2, "{projects}");
    // The check is there with the same URLs: the site root of the last serve was kept.
    let stopped = overdue(data, &["check", "ls", "default", "--json"]).json();
    assert_eq!(stopped, while_running);
    assert_eq!(stopped[0]["uuid"], created["uuid"]);
    assert_eq!(stopped[0]["ping_url"], created["ping_url"]);
    drop(serve);

    // A restart keeps the keys and does not print new ones.
    let again = Serve::start(data);
    assert_eq!(again.http("GET", "/api/v3/checks/", Some(&rw), None).0, 200);
    assert!(
        !again.stdout().contains("API key"),
        "keys printed again: {}",
        again.stdout()
    );
}

/// The daemon owns its tasks and stops each of them (issue 15.4): connections left open on
/// the SMTP listener and the control socket do not keep the service from closing its data
/// file, so the stop is clean and logged as such.
#[test]
fn sigterm_with_open_smtp_and_control_connections_closes_the_service() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let smtp_port = process::free_port();
    let smtp = format!("127.0.0.1:{smtp_port}");
    let mut serve = Serve::start_with(
        data,
        &[
            "--smtp-listen",
            &smtp,
            "--ping-email-domain",
            "hc.example.org",
        ],
    );
    let mut session = std::net::TcpStream::connect(&smtp).expect("smtp");
    let mut greeting = [0u8; 3];
    std::io::Read::read_exact(&mut session, &mut greeting).expect("greeting");
    assert_eq!(&greeting, b"220");
    let control = std::os::unix::net::UnixStream::connect(socket_path(data)).expect("control");

    serve.terminate();
    let status = serve.wait_exit(Duration::from_secs(30));
    let log = serve.stderr();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("stopped"), "{log}");
    assert!(!log.contains("still hold the service"), "{log}");
    drop((session, control));
    // The data file was closed, not abandoned: it opens at once.
    overdue(data, &["project", "ls"]).ok();
}

#[test]
fn a_killed_service_leaves_a_stale_socket_that_nothing_trips_over() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let mut serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    serve.child.kill().expect("SIGKILL");
    serve.wait_exit(Duration::from_secs(5));
    let socket = socket_path(data);
    assert!(socket.exists(), "SIGKILL leaves the socket behind");

    // Admin commands notice nobody answers and use the file directly.
    let listing = overdue(data, &["key", "ls", "default"]).ok();
    assert!(listing.contains(&rw[..12]), "{listing}");
    overdue(data, &["project", "add", "ops"]).ok();

    // A new service replaces the stale socket and answers on it.
    let again = Serve::start(data);
    assert_eq!(again.http("GET", "/api/v3/checks/", Some(&rw), None).0, 200);
    let mode = std::fs::symlink_metadata(&socket)
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let added = overdue(data, &["key", "add", "ops", "--json"]).json();
    let key = added["key"].as_str().expect("key").to_string();
    // Only the running service can know the key at once: it came through the socket.
    assert_eq!(
        again.http("GET", "/api/v3/checks/", Some(&key), None).0,
        200
    );
}

/// A tiny HTTP receiver on 127.0.0.1 in a thread: keeps each request's head and body (as
/// text, headers lower-cased) and answers 200.
fn http_receiver() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let (mut head, mut line, mut len) = (String::new(), String::new(), 0usize);
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&lower);
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            head.push_str(&String::from_utf8_lossy(&body));
            keep.lock().expect("lock").push(head);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    (port, seen)
}

#[test]
fn channel_test_with_a_token_file_stopped_and_through_the_control_socket() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let (port, seen) = http_receiver();
    let token_file = tmp.path().join("ntfy-token");
    std::fs::write(&token_file, "tk_from_file\n").expect("token");
    process::init_data(data);
    overdue(data, &["project", "add", "ops"]).ok();
    let url = format!("http://127.0.0.1:{port}");
    overdue(
        data,
        &[
            "channel",
            "add",
            "ops",
            "--kind",
            "ntfy",
            "--name",
            "phone",
            "--url",
            &url,
            "--topic",
            "alerts",
            "--token-file",
            token_file.to_str().expect("path"),
        ],
    )
    .ok();
    let err = overdue(
        data,
        &[
            "channel",
            "add",
            "ops",
            "--kind",
            "ntfy",
            "--name",
            "x",
            "--token-env",
            "OVERDUE_SURELY_UNSET_VAR",
            "--topic",
            "t",
        ],
    )
    .fails();
    assert!(err.contains("OVERDUE_SURELY_UNSET_VAR"), "{err}");

    // Stopped: the command sends it itself.
    let out = overdue(data, &["channel", "test", "ops", "phone"]).ok();
    assert!(
        out.contains("test notification to phone (ntfy) delivered"),
        "{out}"
    );
    let first = seen.lock().expect("lock").pop().expect("a request");
    assert!(first.starts_with("post / http/1.1"), "{first}");
    assert!(
        first.contains("authorization: bearer tk_from_file"),
        "{first}"
    );
    assert!(first.contains("\"topic\":\"alerts\""), "{first}");
    let ls = overdue(data, &["channel", "ls", "ops"]).ok();
    assert!(!ls.contains("tk_from_file"), "{ls}");
    assert!(
        ls.contains("ok "),
        "the test shows as the last delivery: {ls}"
    );

    // Serving: through the control socket, the same output.
    let serve = Serve::start(data);
    let out = overdue(data, &["channel", "test", "ops", "phone"]).ok();
    assert!(
        out.contains("test notification to phone (ntfy) delivered"),
        "{out}"
    );
    assert_eq!(seen.lock().expect("lock").len(), 1);

    // A dead receiver: exit code 1 and the reason.
    let dead = format!("http://127.0.0.1:{}/hook", free_port());
    overdue(
        data,
        &[
            "channel", "add", "ops", "--kind", "webhook", "--name", "dead", "--url", &dead,
        ],
    )
    .ok();
    let err = overdue(data, &["channel", "test", "ops", "dead"]).fails();
    assert!(
        err.contains("test notification to dead (webhook) failed"),
        "{err}"
    );
    let ls = overdue(data, &["channel", "ls", "ops", "--json"]).json();
    let dead = ls
        .as_array()
        .expect("array")
        .iter()
        .find(|c| c["name"] == "dead")
        .expect("dead")
        .clone();
    assert_eq!(dead["failing"], 1, "{dead}");
    drop(serve);
}

/// Issue 13 item 6: a service that holds the control socket but does not answer (here stopped
/// with SIGSTOP) made admin commands wait forever. They give up after the silence limit with
/// the "does not answer" message, `backup` too (its generous deadline needs keep-alives), and
/// what they gave up on is not done later; once the service continues, commands work again.
#[test]
fn admin_commands_give_up_on_a_stopped_service_and_work_once_it_continues() {
    /// Kills the commands still running when the test fails.
    struct Reap(Vec<std::process::Child>);
    impl Drop for Reap {
        fn drop(&mut self) {
            for child in &mut self.0 {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let serve = Serve::start(data);
    let pid = libc::pid_t::try_from(serve.child.id()).expect("pid");
    // SAFETY: kill(2) on our own child; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0, "SIGSTOP");
    let backup = data.join("frozen.redb");
    let backup_arg = backup.to_str().expect("utf-8 path").to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["check", "ls", "default"],
        vec!["project", "add", "frozen"],
        vec!["backup", &backup_arg],
    ];
    // All at once, so the test waits for the silence limit once.
    let mut children = Reap(
        commands
            .iter()
            .map(|args| {
                base_command()
                    .arg("--data")
                    .arg(data)
                    .args(args)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn overdue")
            })
            .collect(),
    );
    // Far beyond the silence limit (10 s) and far below backup's deadline: a command still
    // running then is waiting forever, and fails the test instead of hanging it.
    let bound = Duration::from_secs(60);
    for args in &commands {
        let exited = wait_until(bound, || {
            matches!(
                children.0.first_mut().map(std::process::Child::try_wait),
                Some(Ok(Some(_)))
            )
        });
        assert!(
            exited,
            "`overdue {}` still waiting after {bound:?}",
            args.join(" ")
        );
        let child = children.0.remove(0);
        let run = Run::from_output(&child.wait_with_output().expect("output"));
        let stderr = run.fails();
        assert!(
            stderr.contains("does not answer") && stderr.contains("overdue.sock"),
            "{args:?}: {stderr}"
        );
    }
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0, "SIGCONT");
    overdue(data, &["check", "ls", "default"]).ok();
    let projects = overdue(data, &["project", "ls"]).ok();
    assert!(
        !projects.contains("frozen"),
        "a command given up on ran later: {projects}"
    );
    assert!(!backup.exists(), "a backup given up on was written later");
    overdue(data, &["backup", &backup_arg]).ok();
    assert!(backup.exists());
    // Later still: the abandoned connections were accepted first, so they are long done.
    assert!(!overdue(data, &["project", "ls"]).ok().contains("frozen"));
}
