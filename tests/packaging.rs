//! What the release archives, the Debian package and the systemd unit rely on, checked on the
//! real binary: readiness notification for `Type=notify`, the completions and manual pages
//! that `overdue completions` and `overdue man` print, and the settings file that lists every
//! option of `serve`.

use std::collections::BTreeSet;
use std::os::unix::net::UnixDatagram;
use std::process::Command;
use std::time::Duration;

use clap::CommandFactory;

use crate::process;

use process::{Serve, base_command, free_port, try_http, wait_until};

/// Receives one datagram (as text) within `limit`.
fn receive(socket: &UnixDatagram, limit: Duration) -> String {
    socket.set_read_timeout(Some(limit)).expect("timeout");
    let mut buf = [0u8; 256];
    let n = socket.recv(&mut buf).expect("a notification in time");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// A `serve` whose `$NOTIFY_SOCKET` is a socket this test reads, in a temp dir.
struct Notified {
    serve: Serve,
    socket: UnixDatagram,
    _tmp: tempfile::TempDir,
}

fn serve_with_notify_socket() -> Notified {
    let tmp = tempfile::tempdir().expect("tempdir");
    let socket_path = tmp.path().join("notify");
    let socket = UnixDatagram::bind(&socket_path).expect("bind the notify socket");
    let serve = Serve::spawn_with_env(
        &tmp.path().join("data"),
        free_port(),
        &[],
        &[("NOTIFY_SOCKET", socket_path.to_str().expect("UTF-8 path"))],
    );
    Notified {
        serve,
        socket,
        _tmp: tmp,
    }
}

#[test]
fn serve_answers_the_api_when_it_tells_systemd_it_is_ready() {
    let n = serve_with_notify_socket();
    let ready = receive(&n.socket, Duration::from_secs(20));
    assert_eq!(ready, "READY=1", "stderr: {}", n.serve.stderr());
    let (code, _) = try_http(n.serve.port, "GET", "/api/v3/status/", None, None).expect("API up");
    assert_eq!(code, 200);
}

#[test]
fn a_sigterm_right_after_ready_is_a_clean_stop_announced_to_systemd() {
    let mut n = serve_with_notify_socket();
    assert_eq!(receive(&n.socket, Duration::from_secs(20)), "READY=1");
    // At once: the signal handlers must already be in place when systemd hears READY=1.
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(n.serve.child.id().to_string())
        .status()
        .expect("run kill");
    assert!(status.success());
    assert_eq!(
        receive(&n.socket, Duration::from_secs(10)),
        "STOPPING=1",
        "stderr: {}",
        n.serve.stderr()
    );
    let serve = &mut n.serve;
    assert!(
        wait_until(Duration::from_secs(10), || matches!(
            serve.child.try_wait(),
            Ok(Some(_))
        )),
        "serve did not exit"
    );
    let exit = serve.child.wait().expect("wait");
    assert_eq!(exit.code(), Some(0), "stderr: {}", serve.stderr());
}

#[test]
fn serve_without_notify_socket_runs_as_before_and_one_that_vanished_is_only_a_warning() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let gone = tmp.path().join("no-such-socket");
    let mut serve = Serve::spawn_with_env(
        &tmp.path().join("data"),
        free_port(),
        &[],
        &[("NOTIFY_SOCKET", gone.to_str().expect("UTF-8 path"))],
    );
    assert!(serve.wait_ready(), "stderr: {}", serve.stderr());
    assert!(
        wait_until(Duration::from_secs(5), || serve
            .stderr()
            .contains("cannot notify systemd (READY=1)")),
        "stderr: {}",
        serve.stderr()
    );
}

fn stdout_of(args: &[&str]) -> String {
    let out = base_command().args(args).output().expect("run overdue");
    assert!(
        out.status.success(),
        "overdue {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn completions_for_each_packaged_shell() {
    assert!(stdout_of(&["completions", "bash"]).contains("complete -F _overdue"));
    assert!(stdout_of(&["completions", "zsh"]).starts_with("#compdef overdue"));
    assert!(stdout_of(&["completions", "fish"]).contains("complete -c overdue"));
    let out = base_command()
        .args(["completions", "tcsh"])
        .output()
        .expect("run overdue");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'tcsh'"));
}

#[test]
fn man_prints_the_page_and_writes_every_page_into_a_directory() {
    let page = stdout_of(&["man"]);
    assert!(page.contains(".TH overdue 1"), "{page}");
    assert!(page.contains("overdue\\-serve(1)"), "{page}");

    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("man1");
    stdout_of(&["man", "--dir", dir.to_str().expect("UTF-8")]);
    let written = std::fs::read_to_string(dir.join("overdue.1")).expect("overdue.1");
    assert_eq!(
        written, page,
        "the printed page and the written one are the same"
    );
    let serve = std::fs::read_to_string(dir.join("overdue-serve.1")).expect("serve page");
    assert!(serve.contains("\\-\\-trust\\-proxy"), "{serve}");
}

#[test]
fn a_reader_that_hung_up_is_not_an_error() {
    for args in [&["man"][..], &["completions", "bash"][..]] {
        // As `overdue man | head -c0`: the reading end is closed before anything is written.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = base_command()
            .args(args)
            .stdout(writer)
            .output()
            .expect("run overdue");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "overdue {args:?}: {stderr}");
        assert!(stderr.is_empty(), "overdue {args:?}: {stderr}");
    }
}

/// The `OVERDUE_*` names the options of `cmd` and its subcommands read.
fn option_variables(cmd: &clap::Command) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    for sub in cmd.get_subcommands() {
        names.extend(option_variables(sub));
    }
    names
}

#[test]
fn the_env_file_lists_the_variable_of_every_serve_option_and_nothing_else() {
    let cli = overdue::cli::Cli::command();
    let serve = cli.find_subcommand("serve").expect("serve");
    let mut wanted = option_variables(serve);
    // The unit sets the data directory; the log level is read by the logger, not an option.
    wanted.remove("OVERDUE_DATA");
    wanted.insert("OVERDUE_LOG".into());
    // The database is a flag of every command (admin commands reach it too), and serve's storage.
    wanted.insert("OVERDUE_DATABASE".into());
    let file = include_str!("../packaging/overdue.env");
    let listed: Vec<&str> = file
        .lines()
        .filter_map(|l| l.trim_start_matches('#').split_once('='))
        .map(|(name, _)| name)
        .filter(|name| name.starts_with("OVERDUE_"))
        .collect();
    let unique: BTreeSet<String> = listed
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    assert_eq!(unique.len(), listed.len(), "listed twice: {listed:?}");
    assert_eq!(
        unique, wanted,
        "packaging/overdue.env and `overdue serve` differ"
    );
    assert!(wanted.contains("OVERDUE_SMTP_URL") && wanted.contains("OVERDUE_SMTP_FROM"));

    // The test harness clears every variable the binary reads, so a shell's cannot leak in.
    let cleared: BTreeSet<String> = process::OVERDUE_VARS
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    let missing: Vec<_> = option_variables(&cli)
        .difference(&cleared)
        .cloned()
        .collect();
    assert!(
        missing.is_empty(),
        "tests/process/mod.rs does not clear {missing:?}"
    );
}

#[test]
fn serve_help_groups_its_options_and_other_commands_do_not_list_them() {
    let serve = stdout_of(&["serve", "--help"]);
    for heading in [
        "Network:",
        "Public URL:",
        "Limits:",
        "Alerts:",
        "Email:",
        "Storage:",
        "Logging and metrics:",
    ] {
        assert!(
            serve.contains(&format!("\n{heading}\n")),
            "no {heading}\n{serve}"
        );
    }
    assert!(serve.contains("--log-format"), "{serve}");
    let project = stdout_of(&["project", "ls", "--help"]);
    assert!(!project.contains("--log-format"), "{project}");
    assert!(
        project.contains("--data"),
        "--data stays global:\n{project}"
    );
    let out = base_command()
        .args(["--log-format", "json", "project", "ls"])
        .output()
        .expect("run overdue");
    assert_eq!(out.status.code(), Some(2));
}
