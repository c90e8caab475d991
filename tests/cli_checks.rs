//! `overdue check add|ls|show|pause|resume|rm` as a user runs them: the API's validation and
//! messages, checks named by slug, name or UUID, the project argument left out when there is
//! only one project, and status colours only on a terminal.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::process;

use process::{OVERDUE_VARS, Ran, Serve, overdue_in};

fn ok(data: &Path, args: &[&str]) -> String {
    overdue_in(data, args).ok()
}

fn json_of(data: &Path, args: &[&str]) -> Value {
    let out = ok(data, args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// Asserts the exit code and a message on stderr only; the message.
fn fails(run: Ran, code: i32) -> String {
    assert_eq!(
        run.code,
        Some(code),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    assert!(run.stdout.is_empty(), "stdout on failure: {}", run.stdout);
    assert!(run.stderr.starts_with("overdue: "), "{}", run.stderr);
    run.stderr
}

#[test]
fn check_add_show_pause_resume_rm_through_the_running_service() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");

    // The API's validation, with the API's words, and nothing created.
    let cases: [(&[&str], Value); 6] = [
        (&["--grace", "5"], json!({"grace": 5})),
        (&["--timeout", "3y"], json!({"timeout": "3y"})),
        (
            &["--schedule", "every day"],
            json!({"schedule": "every day"}),
        ),
        (&["--slug", "Not A Slug"], json!({"slug": "Not A Slug"})),
        (&["--tz", "Mars/Olympus"], json!({"tz": "Mars/Olympus"})),
        (&["--channels", "nope"], json!({"channels": "nope"})),
    ];
    for (flags, body) in cases {
        let mut args = vec!["check", "add", "--name", "x"];
        args.extend_from_slice(flags);
        let err = fails(overdue_in(data, &args), 1);
        let mut body = body;
        body["name"] = json!("x");
        let (code, doc) = serve.http("POST", "/api/v3/checks/", Some(&rw), Some(&body));
        assert_eq!(code, 400, "{doc}");
        let api = doc["error"].as_str().expect("error");
        assert_eq!(err, format!("overdue: {api}\n"), "{flags:?}");
    }
    assert!(serve.checks(&rw).is_empty());

    // The project is left out: `default` is the only one.
    let created = json_of(
        data,
        &[
            "check",
            "add",
            "--name",
            "Nightly backup",
            "--slug",
            "nightly",
            "--tags",
            "prod db",
            "--timeout",
            "1h",
            "--grace",
            "5m",
            "--methods",
            "POST",
            "--json",
        ],
    );
    let uuid = created["uuid"].as_str().expect("uuid").to_string();
    let from_api = serve.http_ok("GET", &format!("/api/v3/checks/{uuid}"), Some(&rw), None);
    assert_eq!(created, from_api);
    assert_eq!(
        (&from_api["timeout"], &from_api["grace"], &from_api["tags"]),
        (&json!(3600), &json!(300), &json!("prod db"))
    );

    // A ping, then `show` by slug, by name and by UUID.
    process::http_ok(serve.port, "POST", &format!("/ping/{uuid}"), None, None);
    let from_api = serve.http_ok("GET", &format!("/api/v3/checks/{uuid}"), Some(&rw), None);
    for ident in ["nightly", "Nightly backup", uuid.as_str()] {
        let shown = json_of(data, &["check", "show", ident, "--json"]);
        assert_eq!(shown["uuid"], json!(uuid), "{ident}");
        assert_eq!(shown["status"], "up");
        assert_eq!(shown["next_ping"], from_api["next_ping"]);
        assert_eq!(shown["ping_url"], from_api["ping_url"]);
        assert_eq!(shown["last_pings"][0]["n"], 1, "{shown}");
    }
    let next = from_api["next_ping"]
        .as_str()
        .expect("next ping")
        .to_string();
    let ping_url = from_api["ping_url"].as_str().expect("ping url").to_string();
    let text = ok(data, &["check", "show", "default", "nightly"]);
    for expected in [
        "name:          Nightly backup".to_string(),
        "status:        up".into(),
        format!("next expected: {next}"),
        format!("ping url:      {ping_url}"),
        "schedule:      every 1h, grace 5m".into(),
        "methods:       POST only".into(),
        "channels:      none: nobody is alerted when it goes down".into(),
        "last pings:\n  #1 ".into(),
    ] {
        assert!(text.contains(&expected), "{expected:?} in:\n{text}");
    }
    let listing = ok(data, &["check", "ls"]);
    let header = listing.lines().next().expect("header");
    assert!(header.contains("NEXT EXPECTED"), "{listing}");
    let row = listing
        .lines()
        .find(|l| l.starts_with(&uuid))
        .expect("the check's row");
    assert!(row.contains(" up ") && row.contains(&next), "{row}");
    assert!(
        !listing.contains('\u{1b}'),
        "no colours when piped: {listing:?}"
    );

    // Pause, resume, and the API's refusal to resume what is not paused.
    let out = ok(data, &["check", "pause", "nightly"]);
    assert!(out.contains("paused check Nightly backup"), "{out}");
    let doc = serve.http_ok("GET", &format!("/api/v3/checks/{uuid}"), Some(&rw), None);
    assert_eq!(doc["status"], "paused");
    ok(data, &["check", "resume", "nightly"]);
    let doc = serve.http_ok("GET", &format!("/api/v3/checks/{uuid}"), Some(&rw), None);
    assert_eq!(doc["status"], "new");
    let err = fails(overdue_in(data, &["check", "resume", "nightly"]), 1);
    assert_eq!(err, "overdue: check is not paused\n");

    // A name two checks share is refused; their UUIDs are offered.
    let twin = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "Nightly backup"})),
    );
    let err = fails(overdue_in(data, &["check", "show", "Nightly backup"]), 1);
    assert!(
        err.contains(&uuid) && err.contains(twin["uuid"].as_str().expect("uuid")),
        "{err}"
    );

    // Removal of one check, without a question.
    let out = ok(data, &["check", "rm", &uuid]);
    assert!(out.contains(&uuid), "{out}");
    let (code, _) = serve.http("GET", &format!("/api/v3/checks/{uuid}"), Some(&rw), None);
    assert_eq!(code, 404);
    let err = fails(overdue_in(data, &["check", "rm", "nightly"]), 1);
    assert_eq!(
        err,
        "overdue: project \"default\" has no check \"nightly\"\n"
    );
}

#[test]
fn the_project_argument_may_be_left_out_when_there_is_only_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    process::init_data(data);
    let err = fails(overdue_in(data, &["check", "ls"]), 1);
    assert!(err.contains("overdue project add"), "{err}");

    ok(data, &["project", "add", "ops"]);
    let key = json_of(data, &["key", "add", "--json"]);
    assert_eq!(key["project"], "ops");
    let prefix = key["prefix"].as_str().expect("prefix").to_string();
    assert!(ok(data, &["key", "ls"]).contains(&prefix));
    ok(
        data,
        &[
            "channel", "add", "--kind", "email", "--name", "m", "--value", "a@b.c",
        ],
    );
    assert!(ok(data, &["channel", "ls"]).contains("a@b.c"));
    let check = json_of(data, &["check", "add", "--name", "db", "--json"]);
    let uuid = check["uuid"].as_str().expect("uuid").to_string();
    assert!(ok(data, &["check", "ls"]).contains(&uuid));
    assert!(ok(data, &["check", "show", "db"]).contains(&uuid));

    // Two projects: the commands that need one name it, and say which there are.
    ok(data, &["project", "add", "dev"]);
    for args in [
        &["check", "ls"][..],
        &["check", "show", "db"][..],
        &["check", "add", "--name", "x"][..],
        &["key", "ls"][..],
        &["key", "rm", &prefix][..],
        &["channel", "ls"][..],
        &["channel", "rm", "m"][..],
    ] {
        let err = fails(overdue_in(data, args), 2);
        assert_eq!(
            err, "overdue: there are 2 projects, name one of them: ops, dev\n",
            "{args:?}"
        );
    }
    // Named, they work; a UUID needs no project.
    assert!(ok(data, &["check", "ls", "ops"]).contains(&uuid));
    assert!(ok(data, &["check", "show", &uuid]).contains("project:       ops"));
    assert!(!ok(data, &["check", "ls", "dev"]).contains(&uuid));
    let err = fails(overdue_in(data, &["check", "show", "dev", &uuid]), 1);
    assert!(err.contains("project \"dev\" has no check"), "{err}");
    ok(data, &["key", "rm", "ops", &prefix]);
}

/// `overdue --data DATA ARGS...` on a pseudo-terminal (util-linux `script`), with `env`; its
/// output as the terminal showed it.
fn on_a_terminal(data: &Path, args: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new("script");
    for var in OVERDUE_VARS {
        cmd.env_remove(var);
    }
    let line = format!("'{}' --data '{}' {args}", process::BIN, data.display());
    let out = cmd
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("TERM", "xterm")
        .envs(env.iter().copied())
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn statuses_are_coloured_on_a_terminal_only_and_never_with_no_color() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    let c = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "db"})),
    );
    let uuid = c["uuid"].as_str().expect("uuid");
    serve.http_ok(
        "POST",
        &format!("/api/v3/checks/{uuid}/pause"),
        Some(&rw),
        None,
    );

    let dim_paused = "\u{1b}[2mpaused";
    let terminal = on_a_terminal(data, "check ls default", &[]);
    assert!(terminal.contains(dim_paused), "{terminal:?}");
    let shown = on_a_terminal(data, "check show db", &[]);
    assert!(shown.contains(dim_paused), "{shown:?}");

    let no_color = on_a_terminal(data, "check ls default", &[("NO_COLOR", "1")]);
    assert!(no_color.contains("paused"), "{no_color:?}");
    assert!(!no_color.contains('\u{1b}'), "{no_color:?}");
    let piped = ok(data, &["check", "ls", "default"]);
    assert!(
        piped.contains("paused") && !piped.contains('\u{1b}'),
        "{piped:?}"
    );
}

#[test]
fn check_add_takes_the_alerting_rules_and_show_describes_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    let err = fails(
        overdue_in(
            data,
            &["check", "add", "--name", "x", "--fail-threshold", "0"],
        ),
        1,
    );
    assert_eq!(
        err,
        "overdue: json validation error: fail_threshold is too small\n"
    );
    let created = json_of(
        data,
        &[
            "check",
            "add",
            "--name",
            "backup",
            "--fail-threshold",
            "2",
            "--max-duration",
            "3h",
            "--min-duration",
            "1m",
            "--quiet-schedule",
            "Sun 02:00",
            "--quiet-tz",
            "Europe/Riga",
            "--quiet-duration",
            "2h",
            "--json",
        ],
    );
    assert_eq!(
        (
            &created["fail_threshold"],
            &created["max_duration"],
            &created["min_duration"]
        ),
        (&json!(2), &json!(10_800), &json!(60))
    );
    let checks = serve.checks(&rw);
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0]["max_duration"], 10_800);
    let parent = checks[0]["uuid"].as_str().expect("uuid").to_string();
    let child = json_of(
        data,
        &[
            "check",
            "add",
            "--name",
            "nas",
            "--parents",
            &parent,
            "--json",
        ],
    );
    assert_eq!(child["parents"], parent.as_str());
    let err = fails(
        overdue_in(data, &["check", "add", "--name", "x", "--parents", "nope"]),
        1,
    );
    assert!(err.contains("invalid parent: nope"), "{err}");
    let shown = ok(data, &["check", "show", "backup"]);
    let rules = shown
        .lines()
        .find(|l| l.starts_with("alert rules:"))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(rules.contains("down after 2 failures in a row"), "{rules}");
    assert!(rules.contains("a run may take 3h"), "{rules}");
    assert!(rules.contains("a run under 1m is a failure"), "{rules}");
    assert!(
        rules.contains("quiet for 2h from Sun 02:00 (Europe/Riga)"),
        "{rules}"
    );
    assert_eq!(checks[0]["quiet_duration"], 7200);
}

#[test]
fn check_snooze_names_one_check_a_tag_or_all_and_end_ends_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    for (name, tags) in [("db", "prod"), ("web", "prod"), ("scratch", "dev")] {
        ok(
            data,
            &[
                "check", "add", "--name", name, "--slug", name, "--tags", tags,
            ],
        );
    }
    let snoozed = |serve: &Serve| -> Vec<String> {
        let mut names: Vec<String> = serve
            .checks(&rw)
            .iter()
            .filter(|c| !c["snoozed_until"].is_null())
            .map(|c| c["name"].as_str().expect("name").to_string())
            .collect();
        names.sort();
        names
    };
    let out = ok(data, &["check", "snooze", "db", "--for", "2h"]);
    assert!(out.starts_with("snoozed check db"), "{out}");
    assert_eq!(snoozed(&serve), ["db"]);
    let out = ok(data, &["check", "snooze", "--tag", "prod", "--for", "1d"]);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert_eq!(snoozed(&serve), ["db", "web"]);
    // A year at most, in the API's words, and nothing changed.
    let err = fails(
        overdue_in(
            data,
            &[
                "check",
                "snooze",
                "default",
                "--all",
                "--until",
                "2099-01-01T00:00:00Z",
            ],
        ),
        1,
    );
    assert!(err.contains("until is too far ahead"), "{err}");
    assert_eq!(snoozed(&serve), ["db", "web"]);
    let out = ok(data, &["check", "snooze", "--all", "--end"]);
    assert_eq!(
        out.lines()
            .filter(|l| l.ends_with(") is not snoozed"))
            .count(),
        3,
        "{out}"
    );
    assert!(snoozed(&serve).is_empty());
    // Without saying for how long: clap's usage error; a check and --all: ours.
    let run = overdue_in(data, &["check", "snooze", "db"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("--for <DURATION>"), "{}", run.stderr);
    let err = fails(
        overdue_in(
            data,
            &["check", "snooze", "default", "db", "--all", "--end"],
        ),
        1,
    );
    assert!(err.contains("name only the project"), "{err}");
}

#[test]
fn project_quiet_shows_sets_and_removes_the_projects_window() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    let out = ok(data, &["project", "quiet"]);
    assert_eq!(out, "project default has no quiet window\n");
    let err = fails(
        overdue_in(
            data,
            &[
                "project",
                "quiet",
                "--schedule",
                "Sun 02:00",
                "--tz",
                "Mars/Base",
            ],
        ),
        1,
    );
    assert!(err.contains("quiet_tz is not a valid timezone"), "{err}");
    let out = ok(
        data,
        &[
            "project",
            "quiet",
            "default",
            "--schedule",
            "0 2 * * 0",
            "--duration",
            "90m",
        ],
    );
    assert_eq!(
        out,
        "project default: quiet for 1h 30m from 0 2 * * 0 (UTC)\n"
    );
    let (_, doc) = process::http(serve.port, "GET", "/api/v3/project/", Some(&rw), None);
    assert_eq!(doc["quiet_duration"], 5400, "{doc}");
    assert_eq!(ok(data, &["project", "quiet"]), out, "without flags: shown");
    let run = overdue_in(data, &["project", "quiet", "--off", "--duration", "1h"]);
    assert_eq!(run.code, Some(2), "--off takes no settings");
    let out = ok(data, &["project", "quiet", "--off"]);
    assert_eq!(out, "project default has no quiet window\n");
}

#[test]
fn channels_and_checks_choose_the_events_they_send() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let serve = Serve::start(data);
    let rw = serve.first_start_key("read-write API key:");
    let add = |events: &str| {
        overdue_in(
            data,
            &[
                "channel",
                "add",
                "--kind",
                "webhook",
                "--name",
                "ops",
                "--url",
                "http://127.0.0.1:9/x",
                "--events",
                events,
                "--json",
            ],
        )
    };
    let err = fails(add("down,grace"), 1);
    assert!(
        err.contains("--events: unknown event \"grace\" (use down, up, late or failure)"),
        "{err}"
    );
    let added: Value = serde_json::from_str(&add("down,late").ok()).expect("json");
    assert_eq!(added["events"], "down,late");
    let listed = json_of(data, &["channel", "ls", "--json"]);
    assert_eq!(listed[0]["events"], "down,late");
    // A check chooses its own for one channel; `show` says what each sends.
    let run = overdue_in(data, &["check", "add", "--name", "x", "--events", "ops"]);
    assert_eq!(run.code, Some(2), "a usage error");
    assert!(
        run.stderr.contains("expected CHANNEL=EVENTS"),
        "{}",
        run.stderr
    );
    let made = json_of(
        data,
        &[
            "check",
            "add",
            "--name",
            "db",
            "--events",
            "ops=down,failure",
            "--json",
        ],
    );
    let ops = added["id"].as_str().expect("id");
    assert_eq!(made["channel_events"], json!({ ops: "down,failure" }));
    let shown = ok(data, &["check", "show", "db"]);
    assert!(
        shown.contains("ops (webhook, sends down,failure)"),
        "{shown}"
    );
    assert_eq!(serve.checks(&rw)[0]["channel_events"][ops], "down,failure");
}
