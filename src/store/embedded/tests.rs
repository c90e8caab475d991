//! Unit tests of the store: file creation, locking, the schema version, round trips of every
//! record, the derived tables (slug index, links) and the ping and flip logs.

use std::os::unix::fs::PermissionsExt;

use jiff::{SignedDuration, Timestamp};
use uuid::Uuid;

use super::records::{self, CheckRecord, ProjectRecord, RECORD_V1};
use super::*;
use crate::model::{
    ApiKey, Channel, ChannelConfig, Delivery, Kind, PingKind, Project, StoredStatus, Tries,
};

fn ts(us: i64) -> Timestamp {
    Timestamp::from_microsecond(us).expect("timestamp in range")
}

/// 2024-01-01T00:00:00Z plus `us` microseconds.
pub(super) fn at(us: i64) -> Timestamp {
    ts(1_704_067_200_000_000 + us)
}

pub(super) fn project(n: u128, name: &str) -> Project {
    Project {
        uuid: Uuid::from_u128(n),
        seq: n as u64,
        name: name.to_string(),
        ping_key: format!("pingkey-{n:0>14}"),
        badge_key: Uuid::from_u128(n + 1000).to_string(),
        created: at(123_456),
        quiet: None,
    }
}

fn check(n: u128, project: Uuid, slug: &str) -> Check {
    let mut c = Check::new(
        Uuid::from_u128(n),
        project,
        n as u64,
        at(7),
        Uuid::from_u128(n + 5000),
    );
    c.slug = slug.to_string();
    c.name = format!("check {slug}");
    c
}

pub(super) fn ping(check: Uuid, n: u64, created: Timestamp, body_len: u32) -> Ping {
    Ping {
        check,
        n,
        created,
        kind: PingKind::Success,
        scheme: "http".into(),
        remote_addr: Some("192.0.2.1".into()),
        method: "POST".into(),
        ua: "curl/8".into(),
        rid: None,
        exit_status: None,
        body_len,
    }
}

fn flip(check: Uuid, created: Timestamp, old: StoredStatus, new: StoredStatus) -> Flip {
    Flip {
        check,
        created,
        old_status: old,
        new_status: new,
        reason: String::new(),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn new_data_directory_is_private() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("nested").join("data");
    let store = FileStore::open(&dir).expect("open");
    assert_eq!(mode(&dir), 0o700, "data directory mode");
    let file = dir.join(DB_FILE);
    assert_eq!(store.path(), file);
    assert_eq!(mode(&file), 0o600, "data file mode");
}

#[test]
fn existing_file_with_loose_mode_is_tightened() {
    let tmp = tempfile::tempdir().expect("tempdir");
    drop(FileStore::open(tmp.path()).expect("open"));
    let file = tmp.path().join(DB_FILE);
    std::fs::set_permissions(&file, Permissions::from_mode(0o644)).expect("chmod");
    drop(FileStore::open(tmp.path()).expect("reopen"));
    assert_eq!(mode(&file), 0o600);
}

#[test]
fn second_open_of_the_same_directory_is_locked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let first = FileStore::open(tmp.path()).expect("first open");
    let err = FileStore::open(tmp.path()).expect_err("second open must fail");
    match &err {
        StoreError::Locked(dir) => assert_eq!(dir, tmp.path()),
        other => panic!("expected Locked, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains(&tmp.path().display().to_string()),
        "message should name the directory: {message}"
    );
    assert!(message.contains("in use"), "{message}");
    drop(first);
    FileStore::open(tmp.path()).expect("open after the first store is dropped");
}

#[test]
fn schema_version_is_written_and_newer_versions_are_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    {
        let store = FileStore::open(tmp.path()).expect("open");
        assert_eq!(
            store.meta("schema_version").expect("meta"),
            Some(SCHEMA_VERSION.to_be_bytes().to_vec())
        );
    }
    // The current version reopens fine.
    {
        let store = FileStore::open(tmp.path()).expect("reopen at current version");
        let mut txn = store.begin_write().expect("begin");
        txn.put_meta("schema_version", &(SCHEMA_VERSION + 1).to_be_bytes())
            .expect("put_meta");
        txn.commit().expect("commit");
    }
    let err = FileStore::open(tmp.path()).expect_err("newer schema must be refused");
    match &err {
        StoreError::NewerSchema {
            path,
            found,
            supported,
        } => {
            assert_eq!(path, &tmp.path().join(DB_FILE));
            assert_eq!(*found, SCHEMA_VERSION + 1);
            assert_eq!(*supported, SCHEMA_VERSION);
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    assert!(err.to_string().contains("upgrade"), "{err}");
    // A refused open must not have rewritten the version (nor kept the lock).
    let err = FileStore::open(tmp.path()).expect_err("still refused");
    assert!(matches!(err, StoreError::NewerSchema { .. }), "{err:?}");
}

#[test]
fn everything_round_trips_through_a_reopen() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = project(1, "ops");
    let key = ApiKey {
        id: "hcw_abcdefgh".into(),
        project: p.uuid,
        read_only: false,
        label: "deploy bot".into(),
        hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        created: at(42),
    };
    let email = Channel {
        uuid: Uuid::from_u128(0x30),
        project: p.uuid,
        seq: 3,
        name: "mail".into(),
        config: ChannelConfig::Email {
            address: "ops@example.org".into(),
        },
        created: at(3),
        repeat: None,
        default_for_new: false,
        events: crate::model::events::Events::default(),
    };
    let hook = Channel {
        uuid: Uuid::from_u128(0x20),
        project: p.uuid,
        seq: 4,
        name: "hook".into(),
        config: ChannelConfig::webhook("https://hooks.example.org/secret/token"),
        created: at(4),
        repeat: Some(jiff::SignedDuration::from_hours(1)),
        default_for_new: true,
        events: crate::model::events::Events::default(),
    };
    let mut c = check(0x100, p.uuid, "backup");
    c.tags = "prod db".into();
    c.desc = "nightly".into();
    c.kind = Kind::Cron;
    c.schedule = "0 3 * * *".into();
    c.tz = "Europe/Riga".into();
    c.timeout = 120;
    c.grace = 300;
    c.manual_resume = true;
    c.methods = "POST".into();
    c.start_kw = "go".into();
    c.success_kw = "ok".into();
    c.failure_kw = "bad".into();
    c.filter_subject = true;
    c.filter_body = true;
    c.filter_default_fail = true;
    c.status = StoredStatus::Up;
    c.n_pings = 17;
    c.last_ping = Some(at(999_999));
    c.last_start = Some(at(888_888));
    c.last_start_rid = Some(Uuid::from_u128(77));
    c.last_duration = Some(SignedDuration::from_micros(1_500_000));
    // A check without links in front of it, so the link merge has to skip.
    let other = check(0x50, p.uuid, "other");

    let store = FileStore::open(tmp.path()).expect("open");
    let mut txn = store.begin_write().expect("begin");
    txn.put_project(&p).expect("project");
    txn.put_api_key(&key).expect("key");
    txn.put_channel(&email).expect("email");
    txn.put_channel(&hook).expect("hook");
    txn.put_check(&c, None).expect("check");
    txn.put_check(&other, None).expect("other check");
    // Given in descending order: load() must hand them back sorted.
    txn.set_links(c.uuid, &[email.uuid, hook.uuid])
        .expect("links");
    txn.commit().expect("commit");
    drop(store);

    let store = FileStore::open(tmp.path()).expect("reopen");
    let snap = store.load().expect("load");
    assert_eq!(snap.projects, vec![p.clone()]);
    assert_eq!(snap.api_keys, vec![key]);
    let mut channels = snap.channels.clone();
    channels.sort_by_key(|ch| ch.seq);
    assert_eq!(channels, vec![email.clone(), hook.clone()]);
    assert_eq!(snap.checks.len(), 2);
    let got = snap
        .checks
        .iter()
        .find(|x| x.uuid == c.uuid)
        .expect("check loaded");
    assert_eq!(got.project, c.project);
    assert_eq!(got.seq, c.seq);
    assert_eq!(got.created, c.created);
    assert_eq!(got.name, c.name);
    assert_eq!(got.slug, c.slug);
    assert_eq!(got.tags, c.tags);
    assert_eq!(got.desc, c.desc);
    assert_eq!(got.kind, c.kind);
    assert_eq!(got.timeout, c.timeout);
    assert_eq!(got.grace, c.grace);
    assert_eq!(got.schedule, c.schedule);
    assert_eq!(got.tz, c.tz);
    assert!(got.compiled.is_none());
    assert_eq!(got.manual_resume, c.manual_resume);
    assert_eq!(got.methods, c.methods);
    assert_eq!(got.start_kw, c.start_kw);
    assert_eq!(got.success_kw, c.success_kw);
    assert_eq!(got.failure_kw, c.failure_kw);
    assert_eq!(got.filter_subject, c.filter_subject);
    assert_eq!(got.filter_body, c.filter_body);
    assert_eq!(got.filter_http_body, c.filter_http_body);
    assert_eq!(got.filter_default_fail, c.filter_default_fail);
    assert_eq!(got.status, c.status);
    assert_eq!(got.n_pings, c.n_pings);
    assert_eq!(got.last_ping, c.last_ping);
    assert_eq!(got.last_start, c.last_start);
    assert_eq!(got.last_start_rid, c.last_start_rid);
    assert_eq!(got.last_duration, c.last_duration);
    assert_eq!(got.badge_key, c.badge_key);
    assert_eq!(got.channels, vec![hook.uuid, email.uuid], "sorted by uuid");
    let got_other = snap
        .checks
        .iter()
        .find(|x| x.uuid == other.uuid)
        .expect("other loaded");
    assert!(got_other.channels.is_empty());
    assert_eq!(got_other.slug, "other");
    assert_eq!(got_other.status, StoredStatus::New);
    assert_eq!(got_other.last_ping, None);
}

#[test]
#[allow(
    clippy::many_single_char_names,
    reason = "a project, a check and its channels"
)]
fn set_links_replaces_put_link_adds_and_delete_link_removes_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(tmp.path()).expect("open");
    let p = Uuid::from_u128(1);
    let c = check(10, p, "a");
    let (a, b, d) = (
        Uuid::from_u128(0xa),
        Uuid::from_u128(0xb),
        Uuid::from_u128(0xd),
    );
    let mut txn = store.begin_write().expect("begin");
    txn.put_check(&c, None).expect("put");
    txn.set_links(c.uuid, &[a, b]).expect("links");
    txn.commit().expect("commit");
    let mut txn = store.begin_write().expect("begin");
    txn.set_links(c.uuid, &[d, b]).expect("replace links");
    txn.commit().expect("commit");
    assert_eq!(store.load().expect("load").checks[0].channels, vec![b, d]);
    let mut txn = store.begin_write().expect("begin");
    txn.delete_link(c.uuid, b).expect("delete link");
    txn.commit().expect("commit");
    assert_eq!(store.load().expect("load").checks[0].channels, vec![d]);
    let mut txn = store.begin_write().expect("begin");
    txn.put_link(c.uuid, a).expect("put link");
    txn.commit().expect("commit");
    assert_eq!(store.load().expect("load").checks[0].channels, vec![a, d]);
}

#[test]
fn slug_index_follows_renames_and_deletes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(tmp.path()).expect("open");
    let p = Uuid::from_u128(1);
    let other_project = Uuid::from_u128(2);
    let mut c = check(10, p, "backup");
    let twin = check(11, p, "backup");

    let mut txn = store.begin_write().expect("begin");
    txn.put_check(&c, None).expect("put");
    txn.put_check(&twin, None).expect("put twin");
    txn.commit().expect("commit");
    let mut both = store.checks_by_slug(p, "backup").expect("lookup");
    both.sort();
    assert_eq!(both, vec![c.uuid, twin.uuid]);
    assert!(
        store
            .checks_by_slug(other_project, "backup")
            .expect("lookup")
            .is_empty(),
        "the index is per project"
    );

    // Rename: the old entry goes, the new one appears, the twin stays.
    c.slug = "backups".into();
    let mut txn = store.begin_write().expect("begin");
    txn.put_check(&c, Some("backup")).expect("rename");
    txn.commit().expect("commit");
    assert_eq!(
        store.checks_by_slug(p, "backup").expect("lookup"),
        vec![twin.uuid]
    );
    assert_eq!(
        store.checks_by_slug(p, "backups").expect("lookup"),
        vec![c.uuid]
    );

    // An update that keeps the slug leaves exactly one entry.
    c.name = "renamed only".into();
    let mut txn = store.begin_write().expect("begin");
    txn.put_check(&c, Some("backups")).expect("update");
    txn.commit().expect("commit");
    assert_eq!(
        store.checks_by_slug(p, "backups").expect("lookup"),
        vec![c.uuid]
    );

    let mut txn = store.begin_write().expect("begin");
    txn.delete_check(&c).expect("delete");
    txn.commit().expect("commit");
    assert!(
        store
            .checks_by_slug(p, "backups")
            .expect("lookup")
            .is_empty()
    );
    assert_eq!(
        store.checks_by_slug(p, "backup").expect("lookup"),
        vec![twin.uuid]
    );
}

#[test]
fn delete_check_takes_its_pings_bodies_flips_and_links_only() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(tmp.path()).expect("open");
    let p = Uuid::from_u128(1);
    // Adjacent UUIDs, so a range that is one off would touch the neighbour.
    let doomed = check(0x100, p, "doomed");
    let kept = check(0x101, p, "kept");
    let before = check(0xff, p, "before");
    let chan = Uuid::from_u128(0xc);

    let mut txn = store.begin_write().expect("begin");
    for c in [&doomed, &kept, &before] {
        txn.put_check(c, None).expect("put");
        txn.set_links(c.uuid, &[chan]).expect("links");
        for n in 1..=3 {
            txn.put_ping(&ping(c.uuid, n, at(n as i64), 4), b"body")
                .expect("ping");
        }
        txn.put_flip(&flip(c.uuid, at(1), StoredStatus::New, StoredStatus::Up))
            .expect("flip");
    }
    txn.commit().expect("commit");

    let mut txn = store.begin_write().expect("begin");
    txn.delete_check(&doomed).expect("delete");
    // Inside the same transaction, before commit, nothing is visible yet.
    assert_eq!(store.pings(doomed.uuid, 10).expect("pings").len(), 3);
    txn.commit().expect("commit");

    assert!(store.pings(doomed.uuid, 10).expect("pings").is_empty());
    for n in 1..=3 {
        assert_eq!(store.ping_body(doomed.uuid, n).expect("body"), None);
    }
    assert!(store.flips(doomed.uuid).expect("flips").is_empty());
    let snap = store.load().expect("load");
    assert!(snap.checks.iter().all(|c| c.uuid != doomed.uuid));
    for c in [&kept, &before] {
        assert_eq!(store.pings(c.uuid, 10).expect("pings").len(), 3);
        assert_eq!(
            store.ping_body(c.uuid, 2).expect("body"),
            Some(b"body".to_vec())
        );
        assert_eq!(store.flips(c.uuid).expect("flips").len(), 1);
        let loaded = snap.checks.iter().find(|x| x.uuid == c.uuid).expect("kept");
        assert_eq!(loaded.channels, vec![chan]);
    }
    // No orphaned link comes back if the UUID is reused.
    let mut txn = store.begin_write().expect("begin");
    txn.put_check(&doomed, None).expect("recreate");
    txn.commit().expect("commit");
    let snap = store.load().expect("load");
    let again = snap
        .checks
        .iter()
        .find(|x| x.uuid == doomed.uuid)
        .expect("recreated");
    assert!(again.channels.is_empty());
}

#[test]
fn pings_are_newest_first_limited_and_bodies_optional() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(tmp.path()).expect("open");
    let c = Uuid::from_u128(0x100);
    let neighbour = Uuid::from_u128(0x101);
    let mut txn = store.begin_write().expect("begin");
    for n in 1..=5u64 {
        let body: &[u8] = if n % 2 == 1 { b"hello" } else { b"" };
        let mut p = ping(c, n, at(n as i64 * 1000), body.len() as u32);
        p.kind = if n == 3 {
            PingKind::Fail
        } else {
            PingKind::Success
        };
        p.rid = (n == 4).then(|| Uuid::from_u128(9));
        p.exit_status = (n == 3).then_some(2);
        p.remote_addr = (n != 5).then(|| "192.0.2.1".to_string());
        txn.put_ping(&p, body).expect("ping");
    }
    txn.put_ping(&ping(neighbour, 1, at(1), 0), b"")
        .expect("neighbour ping");
    txn.commit().expect("commit");

    let all = store.pings(c, 100).expect("pings");
    assert_eq!(
        all.iter().map(|p| p.n).collect::<Vec<_>>(),
        vec![5, 4, 3, 2, 1]
    );
    assert!(all.iter().all(|p| p.check == c));
    assert_eq!(all[2].kind, PingKind::Fail);
    assert_eq!(all[2].exit_status, Some(2));
    assert_eq!(all[1].rid, Some(Uuid::from_u128(9)));
    assert_eq!(all[0].remote_addr, None);
    assert_eq!(all[0].created, at(5000));
    assert_eq!(all[0], {
        let mut p = ping(c, 5, at(5000), 5);
        p.remote_addr = None;
        p
    });
    let two = store.pings(c, 2).expect("pings");
    assert_eq!(two.iter().map(|p| p.n).collect::<Vec<_>>(), vec![5, 4]);
    assert!(store.pings(c, 0).expect("pings").is_empty());
    assert!(
        store
            .pings(Uuid::from_u128(0x999), 10)
            .expect("pings")
            .is_empty()
    );

    assert_eq!(
        store.ping_body(c, 1).expect("body"),
        Some(b"hello".to_vec())
    );
    assert_eq!(store.ping_body(c, 2).expect("body"), None, "empty body");
    assert_eq!(store.ping_body(c, 99).expect("body"), None, "no such ping");

    let mut txn = store.begin_write().expect("begin");
    txn.prune_pings(c, 3).expect("prune");
    txn.commit().expect("commit");
    assert_eq!(
        store
            .pings(c, 100)
            .expect("pings")
            .iter()
            .map(|p| p.n)
            .collect::<Vec<_>>(),
        vec![5, 4, 3]
    );
    assert_eq!(store.ping_body(c, 1).expect("body"), None, "pruned body");
    assert_eq!(
        store.ping_body(c, 3).expect("body"),
        Some(b"hello".to_vec())
    );
    assert_eq!(
        store.pings(neighbour, 10).expect("pings").len(),
        1,
        "prune stays in its check"
    );
}

#[test]
fn flips_in_the_same_microsecond_are_all_kept() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(tmp.path()).expect("open");
    let c = Uuid::from_u128(0x100);
    let t = at(500);
    let mut txn = store.begin_write().expect("begin");
    txn.put_flip(&flip(c, t, StoredStatus::New, StoredStatus::Up))
        .expect("flip 1");
    let mut down = flip(c, t, StoredStatus::Up, StoredStatus::Down);
    down.reason = "fail".into();
    txn.put_flip(&down).expect("flip 2");
    txn.commit().expect("commit");
    // A third one in a later transaction, at the same moment again.
    let mut txn = store.begin_write().expect("begin");
    txn.put_flip(&flip(c, t, StoredStatus::Down, StoredStatus::Up))
        .expect("flip 3");
    txn.commit().expect("commit");

    let flips = store.flips(c).expect("flips");
    assert_eq!(flips.len(), 3);
    assert_eq!(
        flips.iter().map(|f| f.created).collect::<Vec<_>>(),
        vec![at(502), at(501), at(500)],
        "newest first, later ones moved by 1 µs"
    );
    assert_eq!(flips[1].reason, "fail");
    assert_eq!(
        (flips[1].old_status, flips[1].new_status),
        (StoredStatus::Up, StoredStatus::Down)
    );
    assert_eq!(flips[2].new_status, StoredStatus::Up);
    assert_eq!(flips[0].old_status, StoredStatus::Down);

    // Flips of different checks never collide, and order is by time not insertion.
    let d = Uuid::from_u128(0x101);
    let mut txn = store.begin_write().expect("begin");
    txn.put_flip(&flip(d, at(10), StoredStatus::Up, StoredStatus::Down))
        .expect("later");
    txn.put_flip(&flip(d, at(-10), StoredStatus::New, StoredStatus::Up))
        .expect("earlier");
    txn.commit().expect("commit");
    let flips = store.flips(d).expect("flips");
    assert_eq!(
        flips.iter().map(|f| f.created).collect::<Vec<_>>(),
        vec![at(10), at(-10)]
    );
    assert_eq!(store.flips(c).expect("flips").len(), 3);
}

#[test]
fn aborted_and_dropped_transactions_leave_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(tmp.path()).expect("open");
    let p = project(1, "ops");
    let c = check(10, p.uuid, "x");
    for explicit_abort in [true, false] {
        let mut txn = store.begin_write().expect("begin");
        txn.put_project(&p).expect("project");
        txn.put_check(&c, None).expect("check");
        txn.set_links(c.uuid, &[Uuid::from_u128(5)]).expect("links");
        txn.put_ping(&ping(c.uuid, 1, at(1), 3), b"abc")
            .expect("ping");
        txn.put_flip(&flip(c.uuid, at(1), StoredStatus::New, StoredStatus::Up))
            .expect("flip");
        txn.put_meta("extra", b"1").expect("meta");
        if explicit_abort {
            txn.abort().expect("abort");
        } else {
            drop(txn);
        }
        let snap = store.load().expect("load");
        assert!(snap.projects.is_empty() && snap.checks.is_empty());
        assert!(store.pings(c.uuid, 10).expect("pings").is_empty());
        assert_eq!(store.ping_body(c.uuid, 1).expect("body"), None);
        assert!(store.flips(c.uuid).expect("flips").is_empty());
        assert!(store.checks_by_slug(p.uuid, "x").expect("slug").is_empty());
        assert_eq!(store.meta("extra").expect("meta"), None);
    }
    drop(store);
    let store = FileStore::open(tmp.path()).expect("reopen");
    assert!(store.load().expect("load").checks.is_empty());
    assert_eq!(store.health_check().expect("health"), 0);
}

#[test]
fn unknown_record_versions_and_garbage_are_corrupt() {
    let good = records::encode(&ProjectRecord::from(&project(1, "ops"))).expect("encode");
    assert_eq!(good[0], RECORD_V1);
    let decoded: ProjectRecord = records::decode(&good, "project").expect("decode");
    assert_eq!(Project::from(decoded), project(1, "ops"));

    let mut newer = good.clone();
    newer[0] = RECORD_V1 + 1;
    match records::decode::<ProjectRecord>(&newer, "project") {
        Err(StoreError::Corrupt(msg)) => {
            assert!(msg.contains("project"), "{msg}");
            assert!(msg.contains(&format!("version {}", RECORD_V1 + 1)), "{msg}");
        }
        Err(other) => panic!("expected Corrupt, got {other:?}"),
        Ok(_) => panic!("a record of an unknown version must not decode"),
    }
    assert!(matches!(
        records::decode::<ProjectRecord>(&[], "project"),
        Err(StoreError::Corrupt(_))
    ));
    assert!(matches!(
        records::decode::<CheckRecord>(&good[..good.len() / 2], "check"),
        Err(StoreError::Corrupt(_))
    ));
}

#[test]
fn a_project_with_a_quiet_window_is_a_version_2_record_and_one_without_stays_version_1() {
    let plain = project(1, "ops");
    let v1 = records::encode_project(&plain).expect("encode");
    assert_eq!(
        v1[0], RECORD_V1,
        "readable by releases without quiet windows"
    );
    assert_eq!(records::decode_project(&v1).expect("decode"), plain);
    let mut quiet = project(2, "lab");
    quiet.quiet = Some(std::sync::Arc::new(crate::model::check::QuietWindow::new(
        "Sun 02:00",
        "Europe/Riga",
        7200,
    )));
    let v2 = records::encode_project(&quiet).expect("encode");
    assert_eq!(v2[0], records::PROJECT_RECORD_V2);
    let back = records::decode_project(&v2).expect("decode");
    assert_eq!(back, quiet);
    assert!(
        back.quiet
            .as_ref()
            .and_then(|q| q.compiled.as_ref())
            .is_some(),
        "compiled as it is read"
    );
    assert!(matches!(
        records::decode_project(&v2[..v2.len() - 3]),
        Err(StoreError::Corrupt(_))
    ));
    // Written and read back through the store.
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(tmp.path()).expect("open");
    let mut txn = store.begin_write().expect("txn");
    txn.put_project(&quiet).expect("put");
    txn.commit().expect("commit");
    assert_eq!(store.load().expect("load").projects, vec![quiet]);
}

#[test]
fn put_api_key_refuses_a_malformed_id() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(tmp.path()).expect("open");
    let key = ApiKey {
        id: "hcw_short".into(),
        project: Uuid::from_u128(1),
        read_only: true,
        label: String::new(),
        hash: String::new(),
        created: at(0),
    };
    let mut txn = store.begin_write().expect("begin");
    assert!(matches!(txn.put_api_key(&key), Err(StoreError::Corrupt(_))));
}

#[test]
fn deletes_of_projects_keys_and_channels_are_durable() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = project(1, "ops");
    let q = project(2, "dev");
    let key = ApiKey {
        id: "hcr_12345678".into(),
        project: p.uuid,
        read_only: true,
        label: String::new(),
        hash: "h".into(),
        created: at(0),
    };
    let chan = Channel {
        uuid: Uuid::from_u128(0x30),
        project: p.uuid,
        seq: 3,
        name: "x".into(),
        config: ChannelConfig::Other {
            kind: "slack".into(),
            settings: vec![("token".into(), "t".into())],
        },
        created: at(3),
        repeat: None,
        default_for_new: true,
        events: crate::model::events::Events::default(),
    };
    {
        let store = FileStore::open(tmp.path()).expect("open");
        let mut txn = store.begin_write().expect("begin");
        txn.put_project(&p).expect("p");
        txn.put_project(&q).expect("q");
        txn.put_api_key(&key).expect("key");
        txn.put_channel(&chan).expect("chan");
        txn.commit().expect("commit");
        assert_eq!(store.load().expect("load").channels, vec![chan.clone()]);
        let mut txn = store.begin_write().expect("begin");
        txn.delete_api_key(&key.id).expect("del key");
        txn.delete_api_key("not-a-key-id-at-all").expect("no-op");
        txn.delete_channel(chan.uuid).expect("del chan");
        txn.delete_project(p.uuid).expect("del project");
        txn.commit().expect("commit");
    }
    let store = FileStore::open(tmp.path()).expect("reopen");
    let snap = store.load().expect("load");
    assert_eq!(snap.projects, vec![q]);
    assert!(snap.api_keys.is_empty());
    assert!(snap.channels.is_empty());
}

fn delivery(channel: Uuid, seq: u64, us: i64, error: &str) -> Delivery {
    Delivery {
        channel,
        outbox_seq: seq,
        check: Some(Uuid::from_u128(9)),
        at: at(us),
        duration: SignedDuration::from_millis(12),
        attempt: 1,
        code: Some(500),
        error: error.to_string(),
        gave_up: false,
    }
}

#[test]
fn outbox_tries_deliveries_and_repeats_round_trip_and_are_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (chan, other) = (Uuid::from_u128(77), Uuid::from_u128(78));
    let entry = OutboxEntry {
        seq: 5,
        channel: chan,
        check: Uuid::from_u128(9),
        flip_created: at(1),
        old_status: StoredStatus::Up,
        new_status: StoredStatus::Down,
        reason: "fail".into(),
        queued: at(2),
    };
    {
        let store = FileStore::open(dir.path()).expect("open");
        let mut txn = store.begin_write().expect("txn");
        txn.put_outbox(&entry).expect("outbox");
        txn.put_tries(
            5,
            &Tries {
                done: 2,
                next: at(99),
            },
        )
        .expect("tries");
        // Two in the same microsecond are both kept; the channel keeps only the newest 50.
        for i in 0..60 {
            txn.put_delivery(&delivery(chan, 5, i / 2, &format!("e{i}")))
                .expect("delivery");
        }
        txn.put_delivery(&delivery(other, 6, 0, "")).expect("other");
        txn.put_repeat(entry.check, chan, 1234).expect("repeat");
        txn.commit().expect("commit");
    }
    let store = FileStore::open(dir.path()).expect("reopen");
    let pending = store.outbox_pending().expect("pending");
    assert_eq!(
        pending,
        vec![(
            entry.clone(),
            Some(Tries {
                done: 2,
                next: at(99)
            })
        )]
    );
    let kept = store.deliveries(chan, 100).expect("deliveries");
    assert_eq!(kept.len(), DELIVERIES_KEPT);
    assert_eq!(kept[0].error, "e59", "newest first");
    assert_eq!(kept[DELIVERIES_KEPT - 1].error, "e10");
    assert_eq!(store.deliveries(other, 100).expect("other").len(), 1);
    assert_eq!(
        store.repeats().expect("repeats"),
        vec![(entry.check, chan, 1234)]
    );

    // Delivered: the entry goes with its tries; removing the channel takes its history.
    let mut txn = store.begin_write().expect("txn");
    txn.delete_outbox(5).expect("delete");
    txn.delete_channel(chan).expect("channel");
    txn.delete_repeat(entry.check, chan).expect("repeat");
    txn.commit().expect("commit");
    assert!(store.outbox_pending().expect("pending").is_empty());
    assert!(store.deliveries(chan, 100).expect("gone").is_empty());
    assert_eq!(store.deliveries(other, 100).expect("kept").len(), 1);
    assert!(store.repeats().expect("repeats").is_empty());
}

#[test]
fn a_webhook_record_from_before_per_direction_templates_reads_as_get_both_ways() {
    let old = records::ChannelRecord {
        uuid: 1,
        project: 2,
        seq: 3,
        name: "hook".into(),
        kind: "webhook".into(),
        settings: vec![("url".into(), "http://h/x".into())],
        created_us: 0,
    };
    let channel: Channel = old.into();
    assert_eq!(channel.config, ChannelConfig::webhook("http://h/x"));
    assert_eq!(channel.repeat, None);
    assert!(
        !channel.default_for_new,
        "no flag in the record: not a default"
    );
}

#[test]
fn the_default_for_new_checks_flag_is_a_setting_of_the_record_kept_out_of_the_config() {
    let chan = Channel {
        uuid: Uuid::from_u128(1),
        project: Uuid::from_u128(2),
        seq: 3,
        name: "alerts".into(),
        config: ChannelConfig::Other {
            kind: "ntfy".into(),
            settings: vec![("topic".into(), "t".into())],
        },
        created: at(3),
        repeat: None,
        default_for_new: true,
        events: crate::model::events::Events::default(),
    };
    let record = records::ChannelRecord::from(&chan);
    assert!(
        record
            .settings
            .contains(&("default_for_new".into(), "true".into()))
    );
    let bytes = records::encode(&record).expect("encode");
    assert_eq!(bytes[0], records::RECORD_V1, "the record keeps its version");
    let back: Channel = records::decode::<records::ChannelRecord>(&bytes, "channel")
        .expect("decode")
        .into();
    assert_eq!(back, chan, "the flag is not one of ntfy's settings");
    let plain = Channel {
        default_for_new: false,
        events: crate::model::events::Events::default(),
        ..chan
    };
    let record = records::ChannelRecord::from(&plain);
    assert!(record.settings.iter().all(|(k, _)| k != "default_for_new"));
}

#[test]
fn sessions_round_trip_are_deleted_and_a_file_without_the_table_has_none() {
    use crate::model::session::Session;
    let tmp = tempfile::tempdir().expect("tempdir");
    let kept = Session {
        keys: vec!["hcw_aaaaaaaa".into(), "hcr_bbbbbbbb".into()],
        created: at(1),
        last_used: at(2),
    };
    {
        let store = FileStore::open(tmp.path()).expect("open");
        let mut txn = store.begin_write().expect("begin");
        txn.put_session(&[1; 32], &kept).expect("put");
        txn.put_session(&[2; 32], &Session::new(at(3)))
            .expect("put");
        txn.commit().expect("commit");
        let mut txn = store.begin_write().expect("begin");
        txn.delete_session(&[2; 32]).expect("delete");
        txn.delete_session(&[9; 32])
            .expect("deleting a missing one is no error");
        txn.commit().expect("commit");
    }
    let store = FileStore::open(tmp.path()).expect("reopen");
    assert_eq!(store.load().expect("load").sessions, vec![([1; 32], kept)]);

    // A file from before sessions: redb answers "no such table", which reads as no sessions.
    let old = redb::Database::create(tmp.path().join("old.redb")).expect("create");
    let txn = old.begin_write().expect("begin");
    txn.open_table(PROJECTS).expect("projects");
    txn.commit().expect("commit");
    let read = old.begin_read().expect("read");
    assert!(matches!(
        read.open_table(SESSIONS),
        Err(redb::TableError::TableDoesNotExist(_))
    ));
    assert!(
        read_sessions(&read)
            .expect("no table, no sessions")
            .is_empty()
    );
}

#[test]
fn a_check_with_rules_is_written_as_version_2_and_one_without_as_version_1() {
    let p = project(1, "ops");
    let plain = check(0x100, p.uuid, "plain");
    let v1 = records::encode_check(&plain).expect("encode");
    assert_eq!(
        v1[0], RECORD_V1,
        "older releases read a check without rules"
    );
    let mut ruled = check(0x101, p.uuid, "ruled");
    ruled.fail_threshold = 3;
    ruled.fails_in_row = 2;
    ruled.max_duration = 7200;
    ruled.min_duration = 60;
    ruled.snoozed_until = Some(at(5_000_000));
    ruled.held = Some(Box::new(crate::model::check::HeldAlert {
        told: StoredStatus::Up,
        new: StoredStatus::Down,
        at: at(4_000_000),
        reason: "timeout".into(),
        until: Some(at(5_000_000)),
    }));
    ruled.quiet = Some(Box::new(crate::model::check::QuietWindow::new(
        "Sun 02:00",
        "Europe/Riga",
        7200,
    )));
    ruled.channel_events = vec![(
        Uuid::from_u128(7),
        crate::model::events::Events::parse("down,late").expect("events"),
    )];
    ruled.late_seen = Some(at(3_000_000));
    let v2 = records::encode_check(&ruled).expect("encode");
    assert_eq!(v2[0], records::CHECK_RECORD_V2);
    let back = records::decode_check(&v2).expect("decode");
    assert_eq!(
        (
            back.fail_threshold,
            back.fails_in_row,
            back.max_duration,
            back.min_duration
        ),
        (3, 2, 7200, 60)
    );
    assert_eq!(back.slug, "ruled");
    assert_eq!(
        (&back.channel_events, back.late_seen),
        (&ruled.channel_events, ruled.late_seen)
    );
    assert_eq!(
        (back.snoozed_until, back.held.as_ref()),
        (ruled.snoozed_until, ruled.held.as_ref())
    );
    let quiet = back.quiet.as_ref().expect("quiet window");
    assert_eq!(
        (quiet.schedule.as_str(), quiet.tz.as_str(), quiet.duration),
        ("Sun 02:00", "Europe/Riga", 7200)
    );
    assert!(quiet.compiled.is_some(), "compiled when read");
    assert!(
        records::decode_check(&v1)
            .expect("decode")
            .has_default_rules()
    );
    assert!(matches!(
        records::decode_check(&v2[..v2.len() - 1]),
        Err(StoreError::Corrupt(_))
    ));
    let mut zero = ruled.clone();
    zero.fail_threshold = 0;
    let bad = records::encode_check(&zero).expect("encode");
    assert!(matches!(
        records::decode_check(&bad),
        Err(StoreError::Corrupt(_))
    ));

    let tmp = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(tmp.path()).expect("open");
    let mut w = store.begin_write().expect("write");
    w.put_project(&p).expect("project");
    w.put_check(&ruled, None).expect("check");
    w.commit().expect("commit");
    drop(store);
    let store = FileStore::open(tmp.path()).expect("reopen");
    let loaded = store.load().expect("load");
    let got = loaded.checks.first().expect("the check");
    assert_eq!((got.fail_threshold, got.max_duration), (3, 7200));
}
