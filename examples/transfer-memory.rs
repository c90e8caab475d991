//! Peak memory and time of `import`, `export` and `backup` on a large dump
//! (docs/benchmarks.md, "Import and export in parts").
//!
//! `cargo run --release --example transfer-memory -- BIN [N]` writes a dump of one project with
//! N checks (100,000; half simple, half cron, none up, so the monitor stays idle) and runs the
//! `overdue` binary BIN on it:
//!
//! 1. `import` into a fresh data directory, the service stopped;
//! 2. `export` of that directory, stopped;
//! 3. `backup` of it, stopped;
//! 4. `import` into a fresh directory that `serve` runs on (through the control socket);
//! 5. `export` through the control socket.
//!
//! Each command's peak RSS is the kernel's (`ru_maxrss` of `wait4`); the service's is its
//! `VmHWM` from /proc. Pass an older binary as BIN to compare.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use overdue::transfer::dump::{DumpCheck, DumpProject};
use overdue::transfer::dump_stream::DumpWriter;
use uuid::Uuid;

/// Writes a dump of one project with `n` checks to `path`, one check at a time: this process
/// stays small, which matters because a child's `ru_maxrss` starts from its parent's size at
/// the fork.
fn write_dump(path: &Path, n: usize) -> std::io::Result<()> {
    let out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut w = DumpWriter::begin(
        out,
        "2026-01-03T00:00:00Z",
        "00112233445566778899aabbccddeeff",
    )?;
    w.project(&DumpProject {
        uuid: Uuid::from_u128(1),
        name: "bulk".into(),
        ping_key: "bulkbulkbulkbulkbulk01".into(),
        badge_key: Uuid::from_u128(2).to_string(),
        created: "2026-01-01T00:00:00Z".into(),
        quiet: None,
        api_keys: Vec::new(),
        channels: Vec::new(),
        checks: Vec::new(),
    })?;
    for i in 0..n {
        let cron = i % 2 == 1;
        w.check(&DumpCheck {
            uuid: Uuid::from_u128(0x5b5b_0000_0000_4000_8000_0000_0000_0000 + i as u128),
            created: "2026-01-01T00:00:00Z".into(),
            name: format!("job {i}"),
            slug: format!("job-{i}"),
            tags: "bulk prod".into(),
            desc: String::new(),
            kind: if cron { "cron" } else { "simple" }.into(),
            timeout: 86400,
            grace: 3600,
            schedule: if cron { "30 2 * * *" } else { "* * * * *" }.into(),
            tz: if cron { "Europe/Riga" } else { "UTC" }.into(),
            manual_resume: false,
            methods: String::new(),
            start_kw: String::new(),
            success_kw: String::new(),
            failure_kw: String::new(),
            filter_subject: false,
            filter_body: false,
            filter_http_body: false,
            filter_default_fail: false,
            badge_key: Uuid::from_u128(0x7d7d_0000_0000_4000_8000_0000_0000_0000 + i as u128),
            channels: Vec::new(),
            // None up: the monitor stays idle.
            status: if i % 3 == 0 { "paused" } else { "new" }.into(),
            n_pings: 0,
            last_ping: None,
            last_start: None,
            last_start_rid: None,
            last_duration_us: None,
            fail_threshold: 1,
            fails_in_row: 0,
            max_duration: 0,
            min_duration: 0,
            snoozed_until: None,
            quiet_schedule: String::new(),
            quiet_tz: "UTC".into(),
            quiet_duration: 0,
            parents: Vec::new(),
            held: None,
            channel_events: std::collections::BTreeMap::default(),
            late_seen: None,
        })?;
    }
    w.finish()?;
    Ok(())
}

/// Runs BIN with `args`, stdout to `out` (or discarded); seconds and peak RSS in MiB. The
/// child is reaped with `wait4`, which reports its peak, instead of `Child::wait`.
#[allow(clippy::zombie_processes)]
fn measure(bin: &Path, args: &[&str], out: Option<&Path>) -> (f64, f64) {
    let stdout = match out {
        Some(p) => Stdio::from(std::fs::File::create(p).expect("create")),
        None => Stdio::null(),
    };
    let started = Instant::now();
    let child = Command::new(bin)
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn");
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waits for and reaps our own child, which nothing else waits for.
    let rc = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    assert_eq!(rc, pid, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?} failed"
    );
    (
        started.elapsed().as_secs_f64(),
        usage.ru_maxrss as f64 / 1024.0,
    )
}

fn hwm_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn ready(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.write_all(b"GET /api/v3/status/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let bin = PathBuf::from(args.next().expect("usage: transfer-memory BIN [N]"));
    let n: usize = args.next().map_or(100_000, |s| s.parse().expect("N"));
    let tmp = std::env::temp_dir().join(format!("overdue-transfer-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("tmp");
    let file = tmp.join("dump.json");
    write_dump(&file, n).expect("write dump");
    let size = std::fs::metadata(&file).map_or(0, |m| m.len());
    println!(
        "{} checks, dump {:.0} MB, binary {}",
        n,
        size as f64 / 1e6,
        bin.display()
    );
    let path = |p: &Path| p.to_str().expect("utf-8").to_string();
    let (a, b) = (path(&tmp.join("a")), path(&tmp.join("b")));
    let row =
        |what: &str, (secs, mib): (f64, f64)| println!("| {what} | {secs:.1} s | {mib:.0} MiB |");
    row(
        "import, stopped (fresh directory)",
        measure(&bin, &["--data", &a, "import", &path(&file)], None),
    );
    row(
        "export, stopped",
        measure(&bin, &["--data", &a, "export"], Some(&tmp.join("out.json"))),
    );
    row(
        "backup, stopped",
        measure(
            &bin,
            &["--data", &a, "backup", &path(&tmp.join("b.redb"))],
            None,
        ),
    );

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    let mut serve = Command::new(&bin)
        .args([
            "--data",
            &b,
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready(port) {
        assert!(Instant::now() < deadline, "serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = hwm_mib(serve.id());
    row(
        "import through serve (client)",
        measure(&bin, &["--data", &b, "import", &path(&file)], None),
    );
    let after_import = hwm_mib(serve.id());
    row(
        "export through serve (client)",
        measure(
            &bin,
            &["--data", &b, "export", "--project", "bulk"],
            Some(&tmp.join("out2.json")),
        ),
    );
    let after_export = hwm_mib(serve.id());
    println!(
        "| serve's peak (VmHWM): at start {before:.0} MiB, after the import \
         {after_import:.0} MiB, after the export {after_export:.0} MiB | | |"
    );
    let _ = serve.kill();
    let _ = serve.wait();
    let _ = std::fs::remove_dir_all(&tmp);
}
