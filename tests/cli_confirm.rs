//! `project rm` deletes a project with everything in it, so it asks first: on a terminal it
//! shows what would go and waits for a yes; without a terminal it refuses unless `--yes` is
//! given; the same whether the service runs or not.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::process;

use process::{OVERDUE_VARS, Serve, overdue_in};

fn project_names(data: &Path) -> Vec<String> {
    let out = overdue_in(data, &["project", "ls", "--json"]).ok();
    let list: Value = serde_json::from_str(&out).expect("JSON");
    list.as_array()
        .expect("array")
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect()
}

/// A project `ops` with a channel and a key.
fn populate(data: &Path) {
    process::init_data(data);
    overdue_in(data, &["project", "add", "ops"]).ok();
    overdue_in(
        data,
        &[
            "channel", "add", "ops", "--kind", "email", "--name", "m", "--value", "a@b.c",
        ],
    )
    .ok();
    overdue_in(data, &["key", "add", "ops"]).ok();
}

/// `project rm NAME` is refused, saying what it would delete (`contents`), then `--yes` does it.
fn refused_then_forced(data: &Path, name: &str, contents: &str) {
    let run = overdue_in(data, &["project", "rm", name]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert_eq!(
        run.stderr,
        format!(
            "overdue: this would delete project {name} with {contents}, with their pings and \
             history; run it on a terminal to confirm, or add --yes\n"
        )
    );
    assert!(project_names(data).contains(&name.to_string()));
    // A project that does not exist gets the usual message, with or without --yes.
    for args in [
        &["project", "rm", "nope"][..],
        &["project", "rm", "nope", "-y"],
    ] {
        let run = overdue_in(data, args);
        assert_eq!(run.code, Some(1));
        assert_eq!(run.stderr, "overdue: no project named \"nope\"\n");
    }
    let out = overdue_in(data, &["project", "rm", name, "--yes"]).ok();
    assert_eq!(out, format!("removed project {name} with {contents}\n"));
    assert!(!project_names(data).contains(&name.to_string()));
}

#[test]
fn without_a_terminal_project_rm_needs_yes_with_the_service_stopped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    populate(tmp.path());
    refused_then_forced(tmp.path(), "ops", "0 checks, 1 channel and 1 API key");
}

#[test]
fn without_a_terminal_project_rm_needs_yes_through_the_running_service() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let serve = Serve::start(tmp.path());
    let rw = serve.first_start_key("read-write API key:");
    for name in ["a", "b"] {
        serve.http_ok(
            "POST",
            "/api/v3/checks/",
            Some(&rw),
            Some(&serde_json::json!({ "name": name })),
        );
    }
    refused_then_forced(tmp.path(), "default", "2 checks, 0 channels and 2 API keys");
}

/// `overdue --data DATA project rm ops` on a pseudo-terminal (util-linux `script`), typing
/// `answer`; the exit code and what the terminal showed.
fn rm_on_a_terminal(data: &Path, answer: &str) -> (Option<i32>, String) {
    let mut cmd = Command::new("script");
    for var in OVERDUE_VARS {
        cmd.env_remove(var);
    }
    let line = format!(
        "'{}' --data '{}' project rm ops",
        process::BIN,
        data.display()
    );
    let mut child = cmd
        .env("TERM", "dumb")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run script (util-linux)");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(answer.as_bytes()).expect("type the answer");
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).replace('\r', ""),
    )
}

#[test]
fn on_a_terminal_project_rm_shows_what_goes_and_asks() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    populate(data);
    let question = "This deletes project ops with 0 checks, 1 channel and 1 API key, with their \
                    pings and history.\nDelete? [y/N] ";

    for answer in ["n\n", "\n", "whatever\n"] {
        let (code, screen) = rm_on_a_terminal(data, answer);
        assert_eq!(code, Some(1), "{answer:?}: {screen}");
        assert!(screen.contains(question), "{screen}");
        assert!(screen.contains("overdue: nothing was deleted"), "{screen}");
        assert!(project_names(data).contains(&"ops".to_string()));
    }
    let (code, screen) = rm_on_a_terminal(data, "y\n");
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains("removed project ops with 0 checks, 1 channel and 1 API key"),
        "{screen}"
    );
    assert!(!project_names(data).contains(&"ops".to_string()));
}
