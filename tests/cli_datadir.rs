//! Which data directory the binary uses, and what it does without one: admin commands in a
//! directory without data exit 2 and create nothing, only `serve` and `import` create a data
//! file, admin commands find the packaged service's data, and a directory the user may not
//! enter is refused once, with whose it is and what to do.
//!
//! The packaged directory is moved with `OVERDUE_PACKAGED_DATA` so nothing touches /var/lib.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::process;

use process::{Ran, STARTUP_DEADLINE, Serve, base_command, free_port, init_data, wait_until};

/// `overdue ARGS...` in `cwd`, with the packaged directory at `packaged`.
fn overdue_at(cwd: &Path, packaged: &Path, args: &[&str]) -> Ran {
    base_command()
        .current_dir(cwd)
        .env("OVERDUE_PACKAGED_DATA", packaged)
        .args(args)
        .output()
        .expect("run overdue")
        .into()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    names.sort();
    names
}

/// A temp directory with an empty working directory and a packaged directory path (absent).
fn scene() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let cwd = tmp.path().join("cwd");
    std::fs::create_dir(&cwd).expect("mkdir cwd");
    let packaged = tmp.path().join("packaged");
    (tmp, cwd, packaged)
}

#[test]
fn admin_commands_without_data_exit_2_create_nothing_and_say_where_they_looked() {
    let (tmp, cwd, packaged) = scene();
    let run = overdue_at(&cwd, &packaged, &["project", "ls"]);
    assert_eq!(
        run.code,
        Some(2),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let looked_in = cwd.join("overdue-data");
    assert!(
        run.stderr
            .starts_with(&format!("overdue: no data in {}: ", looked_in.display())),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&packaged.display().to_string()) && run.stderr.contains("--data"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(entries(&cwd).is_empty(), "created {:?}", entries(&cwd));

    // Every command but serve and import, with the directory named or not.
    let named = tmp.path().join("named");
    let named_arg = named.to_str().expect("utf-8");
    let backup = tmp.path().join("b.redb");
    let commands: [&[&str]; 9] = [
        &["project", "add", "ops"],
        &["project", "rm", "ops", "--yes"],
        &["project", "rm", "ops"],
        &["key", "add", "ops"],
        &["channel", "ls", "ops"],
        &["check", "ls", "ops"],
        &["export"],
        &["export", "--output", "dump.json"],
        &["backup", backup.to_str().expect("utf-8")],
    ];
    for args in commands {
        let run = overdue_at(&cwd, &packaged, args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("no data in"),
            "{args:?}: {}",
            run.stderr
        );
        let mut with_data = vec!["--data", named_arg];
        with_data.extend_from_slice(args);
        let run = overdue_at(&cwd, &packaged, &with_data);
        assert_eq!(run.code, Some(2), "{with_data:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("no data in {}: ", named.display())),
            "{with_data:?}: {}",
            run.stderr
        );
    }
    assert!(entries(&cwd).is_empty(), "created {:?}", entries(&cwd));
    assert!(!named.exists(), "the named directory was created");
    assert!(!backup.exists() && !packaged.exists());

    // An existing but empty directory is no different.
    std::fs::create_dir(&named).expect("mkdir");
    let run = overdue_at(&cwd, &packaged, &["--data", named_arg, "key", "ls"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(entries(&named).is_empty(), "created {:?}", entries(&named));
}

#[test]
fn import_creates_a_data_directory_and_admin_commands_then_use_it() {
    let (tmp, cwd, packaged) = scene();
    let fresh = tmp.path().join("fresh");
    init_data(&fresh);
    assert!(fresh.join("overdue.redb").is_file());
    let data = fresh.to_str().expect("utf-8");
    overdue_at(&cwd, &packaged, &["--data", data, "project", "add", "ops"]).ok();
    let listed = overdue_at(&cwd, &packaged, &["--data", data, "project", "ls"]).ok();
    assert!(listed.lines().any(|l| l.starts_with("ops ")), "{listed}");

    // Without --data, in the working directory.
    let mut child = base_command()
        .current_dir(&cwd)
        .env("OVERDUE_PACKAGED_DATA", &packaged)
        .args(["import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn");
    std::io::Write::write_all(
        &mut child.stdin.take().expect("stdin"),
        process::EMPTY_DUMP.as_bytes(),
    )
    .expect("write");
    assert!(child.wait().expect("wait").success());
    assert!(cwd.join("overdue-data").join("overdue.redb").is_file());
    overdue_at(&cwd, &packaged, &["project", "ls"]).ok();
}

/// Kills the child when dropped.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_creates_its_data_in_the_working_directory_never_in_the_packaged_one() {
    let (_tmp, cwd, packaged) = scene();
    // The packaged directory holds data, as on a machine with the package installed.
    init_data(&packaged);
    let before = entries(&packaged);
    let child = base_command()
        .current_dir(&cwd)
        .env("OVERDUE_PACKAGED_DATA", &packaged)
        .args(["serve", "--listen"])
        .arg(format!("127.0.0.1:{}", free_port()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut serve = Killed(child);
    let socket = cwd.join("overdue-data").join("overdue.sock");
    assert!(
        wait_until(STARTUP_DEADLINE, || socket.exists()),
        "serve made no control socket in ./overdue-data (exit: {:?})",
        serve.0.try_wait()
    );
    assert!(cwd.join("overdue-data").join("overdue.redb").is_file());
    assert_eq!(
        entries(&packaged),
        before,
        "serve touched the packaged directory"
    );
    // The working directory's data comes first for admin commands too: the first start's
    // `default` project is there, not in the packaged file.
    let listed = overdue_at(&cwd, &packaged, &["project", "ls"]).ok();
    assert!(
        listed.lines().any(|l| l.starts_with("default ")),
        "{listed}"
    );
}

#[test]
fn admin_commands_find_the_packaged_service_data() {
    let (_tmp, cwd, packaged) = scene();
    init_data(&packaged);
    let data = packaged.to_str().expect("utf-8");
    overdue_at(&cwd, &packaged, &["--data", data, "project", "add", "pkg"]).ok();

    let listed = overdue_at(&cwd, &packaged, &["project", "ls"]).ok();
    assert!(listed.lines().any(|l| l.starts_with("pkg ")), "{listed}");
    assert!(entries(&cwd).is_empty(), "created {:?}", entries(&cwd));

    // Through the running service's socket alike.
    let serve = Serve::start(&packaged);
    let listed = overdue_at(&cwd, &packaged, &["project", "ls"]).ok();
    assert!(listed.lines().any(|l| l.starts_with("pkg ")), "{listed}");
    drop(serve);

    // A ./overdue-data of its own comes first.
    init_data(&cwd.join("overdue-data"));
    let listed = overdue_at(&cwd, &packaged, &["project", "ls"]).ok();
    assert!(!listed.contains("pkg"), "{listed}");
}

// ---------------------------------------------------------------------------------------------
// Permission refusals, as an unprivileged user (setpriv from util-linux, run as root).
// ---------------------------------------------------------------------------------------------

/// `setpriv` to run as nobody, or `None` (with a note) when this is impossible: not root, or
/// no setpriv. Under `CI` that is a failure instead.
fn as_nobody(test: &str) -> Option<Command> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let setpriv = Command::new("setpriv")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if root && setpriv {
        let mut cmd = Command::new("setpriv");
        cmd.args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            process::BIN,
        ]);
        for var in process::OVERDUE_VARS {
            cmd.env_remove(var);
        }
        cmd.stdin(Stdio::null());
        return Some(cmd);
    }
    let why = format!("root: {root}, setpriv: {setpriv}");
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run as root with setpriv to test permission refusals ({why})"
    );
    eprintln!("SKIPPED {test}: needs root and setpriv ({why})");
    None
}

fn run_as_nobody(mut cmd: Command, args: &[&str]) -> Ran {
    cmd.args(args).output().expect("run setpriv").into()
}

/// A refusal: exit 1, one line, the OS's reason once, the path, its owner and mode, sudo.
fn assert_refused(run: &Ran, path: &Path, mode: &str) {
    assert_eq!(
        run.code,
        Some(1),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    let err = &run.stderr;
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("overdue: cannot access "), "{err}");
    let reasons = err.matches("Permission denied").count() + err.matches("not permitted").count();
    assert_eq!(reasons, 1, "the reason once: {err}");
    assert!(
        err.contains(&format!("{} belongs to root (mode {mode})", path.display())),
        "{err}"
    );
    assert!(err.contains("runs as nobody"), "{err}");
    assert!(err.contains("`sudo overdue ...`"), "{err}");
}

#[test]
fn a_directory_of_another_user_is_refused_once_with_the_fix() {
    let Some(_) = as_nobody("a_directory_of_another_user_is_refused_once_with_the_fix") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    // nobody may pass through the temp directory, not into the data directory.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let data = tmp.path().join("data");
    init_data(&data);
    assert_eq!(
        std::fs::metadata(&data).expect("data").permissions().mode() & 0o777,
        0o700
    );
    let arg = data.to_str().expect("utf-8");
    let nobody = || as_nobody("").expect("checked above");

    for args in [
        &["project", "ls"][..],
        &["key", "add", "ops"][..],
        &["export"][..],
    ] {
        let mut full = vec!["--data", arg];
        full.extend_from_slice(args);
        let run = run_as_nobody(nobody(), &full);
        assert_refused(&run, &data, "0700");
    }
    // serve prints its error with its causes: still once.
    let listen = format!("127.0.0.1:{}", free_port());
    let run = run_as_nobody(nobody(), &["--data", arg, "serve", "--listen", &listen]);
    assert_refused(&run, &data, "0700");

    // A directory nobody may enter but the file and the running service's socket are root's.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let run = run_as_nobody(nobody(), &["--data", arg, "project", "ls"]);
    assert_refused(&run, &data.join("overdue.redb"), "0600");
    let serve = Serve::start(&data);
    let run = run_as_nobody(nobody(), &["--data", arg, "project", "ls"]);
    assert_refused(&run, &data.join("overdue.sock"), "0600");
    drop(serve);
}
