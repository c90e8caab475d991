//! Alerts that reach someone by default: `channel add` assigns the new channel to the project's
//! checks and makes it a default for checks created later (`check add`), while the Management
//! API keeps its contract; a check without channels going down is logged, and counted at
//! start. Also what `channel add` refuses: a name the project already uses, flags of another
//! kind.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::process;

use process::{Ran, Serve, overdue_in, wait_until};

fn ok(data: &Path, args: &[&str]) -> String {
    overdue_in(data, args).ok()
}

fn json_of(data: &Path, args: &[&str]) -> Value {
    let out = ok(data, args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn fails(run: Ran) -> String {
    assert_eq!(
        run.code,
        Some(1),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    assert!(run.stdout.is_empty(), "stdout on failure: {}", run.stdout);
    run.stderr
}

/// The `channels` of a check as the API shows them.
fn channels_of(serve: &Serve, key: &str, uuid: &str) -> String {
    let doc = serve.http_ok("GET", &format!("/api/v3/checks/{uuid}"), Some(key), None);
    doc["channels"].as_str().expect("channels").to_string()
}

fn sorted(ids: &[&str]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.join(",")
}

#[test]
fn a_new_channel_covers_existing_checks_and_is_a_default_for_new_ones() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("a");
    let data = data.as_path();
    let serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    let mut existing = Vec::new();
    for name in ["backup", "db"] {
        let c = serve.http_ok(
            "POST",
            "/api/v3/checks/",
            Some(&rw),
            Some(&json!({"name": name})),
        );
        assert_eq!(c["channels"], "");
        existing.push(c["uuid"].as_str().expect("uuid").to_string());
    }

    let out = ok(
        data,
        &[
            "channel", "add", "default", "--kind", "email", "--name", "mail", "--value", "a@b.c",
        ],
    );
    assert!(
        out.contains("assigned to 2 checks of the project; a default for new checks"),
        "{out}"
    );
    let mail = json_of(data, &["channel", "ls", "default", "--json"])[0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    for uuid in &existing {
        assert_eq!(channels_of(&serve, &rw, uuid), mail);
    }
    let hook = json_of(
        data,
        &[
            "channel",
            "add",
            "--kind",
            "webhook",
            "--name",
            "hook",
            "--url",
            "http://127.0.0.1:9/x",
            "--no-assign",
            "--no-default",
            "--json",
        ],
    );
    assert_eq!(
        (&hook["assigned"], &hook["default_for_new"]),
        (&json!(0), &json!(false))
    );
    let hook = hook["id"].as_str().expect("id").to_string();
    for uuid in &existing {
        assert_eq!(channels_of(&serve, &rw, uuid), mail, "--no-assign");
    }

    // `check add` gets the default channels unless it names its own.
    let add = |extra: &[&str]| -> String {
        let mut args = vec!["check", "add", "--name", "new", "--json"];
        args.extend_from_slice(extra);
        json_of(data, &args)["channels"]
            .as_str()
            .expect("channels")
            .to_string()
    };
    assert_eq!(add(&[]), mail);
    assert_eq!(add(&["--channels", ""]), "");
    assert_eq!(add(&["--channels", "*"]), sorted(&[&mail, &hook]));
    assert_eq!(add(&["--channels", "hook"]), hook);
    // The Management API keeps the Healthchecks contract: no `channels`, no channels.
    let c = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "api"})),
    );
    assert_eq!(c["channels"], "");

    // `channel ls` shows which channels are defaults; `channel default` changes it.
    let text = ok(data, &["channel", "ls"]);
    let line = |name: &str| -> String {
        text.lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
            .to_string()
    };
    assert!(
        text.lines().next().expect("header").contains("DEFAULT"),
        "{text}"
    );
    assert!(line("mail").contains(" yes "), "{text}");
    assert!(line("hook").contains(" no "), "{text}");
    let out = ok(data, &["channel", "default", "hook"]);
    assert!(out.contains("is now a default for new checks"), "{out}");
    let out = ok(data, &["channel", "default", "default", "mail", "--off"]);
    assert!(out.contains("is no longer a default"), "{out}");
    assert_eq!(add(&[]), hook);
    let listed = json_of(data, &["channel", "ls", "--json"]);
    let flags: Vec<(Value, Value)> = listed
        .as_array()
        .expect("array")
        .iter()
        .map(|c| (c["name"].clone(), c["default_for_new"].clone()))
        .collect();
    assert_eq!(
        flags,
        vec![(json!("mail"), json!(false)), (json!("hook"), json!(true))]
    );
    // Existing checks keep what they had.
    assert_eq!(channels_of(&serve, &rw, &existing[0]), mail);

    // Export and import carry the flag.
    let dump = ok(data, &["export"]);
    let doc: Value = serde_json::from_str(&dump).expect("export is JSON");
    let exported: Vec<Value> = doc["projects"][0]["channels"]
        .as_array()
        .expect("channels")
        .iter()
        .map(|c| c["default_for_new"].clone())
        .collect();
    assert_eq!(exported, vec![json!(false), json!(true)]);
    let file = tmp.path().join("dump.json");
    std::fs::write(&file, dump).expect("write dump");
    let b = tmp.path().join("b");
    ok(&b, &["import", file.to_str().expect("utf-8")]);
    assert_eq!(json_of(&b, &["channel", "ls", "--json"]), listed);
}

/// Waits for `needle` in serve's stderr; the stderr.
fn log_with(serve: &Serve, needle: &str) -> String {
    let found = wait_until(Duration::from_secs(5), || serve.stderr().contains(needle));
    let log = serve.stderr();
    assert!(found, "no {needle:?} in the log:\n{log}");
    log
}

#[test]
fn a_check_without_channels_going_down_is_a_warning_and_is_counted_at_start() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let mut serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    let first_start = log_with(&serve, "loaded the data file");
    assert!(
        !first_start.contains("have no integrations"),
        "{first_start}"
    );
    ok(
        data,
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
    );
    let create = |body: Value| -> String {
        let c = serve.http_ok("POST", "/api/v3/checks/", Some(&rw), Some(&body));
        c["uuid"].as_str().expect("uuid").to_string()
    };
    let silent = create(json!({"name": "silent"}));
    let heard = create(json!({"name": "heard", "channels": "hook"}));
    for uuid in [&heard, &silent] {
        process::http_ok(serve.port, "GET", &format!("/ping/{uuid}/fail"), None, None);
    }
    let log = log_with(&serve, "has no integrations");
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("has no integrations"))
        .collect();
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(
        warnings[0].contains("WARN") && warnings[0].contains(&silent),
        "{log}"
    );

    serve.child.kill().expect("kill");
    let _ = serve.child.wait();
    let again = Serve::start(data);
    let log = log_with(&again, "some checks have no integrations");
    let line = log
        .lines()
        .find(|l| l.contains("some checks have no integrations"))
        .expect("the line");
    assert!(line.contains("WARN") && line.contains("checks=1"), "{line}");
}

#[test]
fn channel_names_are_unique_in_a_project_and_flags_must_fit_the_kind() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    process::init_data(data);
    ok(data, &["project", "add", "ops"]);
    ok(data, &["project", "add", "dev"]);
    let email = |project: &'static str, name: &'static str| -> Vec<&'static str> {
        vec![
            "channel", "add", project, "--kind", "email", "--name", name, "--value", "a@b.c",
        ]
    };
    ok(data, &email("ops", "mail"));
    let err = fails(overdue_in(
        data,
        &[
            "channel",
            "add",
            "ops",
            "--kind",
            "webhook",
            "--name",
            "mail",
            "--url",
            "http://127.0.0.1:9/",
        ],
    ));
    assert_eq!(
        err,
        "overdue: project \"ops\" already has a channel named \"mail\"; choose another name\n"
    );
    // Another project may use the name.
    ok(data, &email("dev", "mail"));

    let err = fails(overdue_in(
        data,
        &[
            "channel",
            "add",
            "ops",
            "--kind",
            "webhook",
            "--name",
            "w",
            "--url",
            "http://127.0.0.1:9/",
            "--value",
            "a@b.c",
            "--topic",
            "t",
        ],
    ));
    assert!(
        err.starts_with("overdue: --kind webhook does not take --value, --topic (it takes --url,"),
        "{err}"
    );
    // A token file of a kind without tokens is refused before the file is read.
    let token = tmp.path().join("token");
    std::fs::write(&token, "s3cret\n").expect("token file");
    let err = fails(overdue_in(
        data,
        &[
            "channel",
            "add",
            "ops",
            "--kind",
            "slack",
            "--name",
            "s",
            "--url",
            "http://127.0.0.1:9/",
            "--token-file",
            token.to_str().expect("utf-8"),
        ],
    ));
    assert!(
        err.contains("--kind slack does not take --token-file (it takes --url)"),
        "{err}"
    );
    let listed = json_of(data, &["channel", "ls", "ops", "--json"]);
    assert_eq!(listed.as_array().expect("array").len(), 1, "{listed}");

    // Counts read as English.
    ok(data, &["key", "add", "ops"]);
    let out = ok(data, &["project", "rm", "ops", "--yes"]);
    assert_eq!(
        out,
        "removed project ops with 0 checks, 1 channel and 1 API key\n"
    );
}
