//! The ping journal: pings acknowledged from the journal alone are whole again after a
//! restart that never folded them (the crash test does the same through kill -9). These look
//! at the pings table under the journal, which only the service may read.

use crate::model::ApiVersion;
use crate::model::StoredStatus;
use crate::model::signal::{Signal, Target};
use crate::model::spec::CheckSpec;
use crate::service::pings::PingRequest;
use crate::service::{Clock, Service, ServiceConfig};
use crate::store::StoreError;

/// Journal tests send a body, so that folding is seen to carry bodies too.
fn ping(check: uuid::Uuid, signal: Signal) -> PingRequest {
    PingRequest {
        target: Target::Uuid(check),
        create: false,
        signal,
        method: "POST".into(),
        scheme: "http".into(),
        remote_addr: Some("127.0.0.1".into()),
        ua: "test".into(),
        rid: None,
        body: bytes::Bytes::from_static(b"body"),
    }
}

async fn reopen(dir: &std::path::Path) -> Service {
    // The dropped service's writer lets go of the file once its queue is done.
    for _ in 0..10_000 {
        match Service::open(dir, ServiceConfig::default(), Clock::System) {
            Ok(s) => return s,
            Err(StoreError::Locked(_)) => tokio::task::yield_now().await,
            Err(e) => panic!("reopen: {e}"),
        }
    }
    panic!("the data file stayed locked");
}

fn listed(service: &Service, check: uuid::Uuid) -> Vec<u64> {
    service
        .store()
        .pings(check, 2000)
        .unwrap()
        .iter()
        .map(|p| p.n)
        .collect()
}

#[tokio::test]
async fn unfolded_pings_are_replayed_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path(), ServiceConfig::default(), Clock::System).unwrap();
    let project = service.add_project("p").await.unwrap().uuid;
    let (check, _) = service
        .create_check(project, CheckSpec::default(), ApiVersion::V3)
        .await
        .unwrap();
    let check = check.uuid;
    service
        .record_ping(ping(check, Signal::Start))
        .await
        .unwrap();
    service
        .record_ping(ping(check, Signal::Success))
        .await
        .unwrap();
    service.record_ping(ping(check, Signal::Log)).await.unwrap();
    assert_eq!(service.read(super::state::State::journal_len), 3);
    let before = service.read(|s| s.check(&check).cloned()).unwrap();
    assert!(listed(&service, check).is_empty(), "nothing folded yet");
    // Stop without closing: nothing folds the journal.
    drop(service);

    let service = reopen(dir.path()).await;
    let after = service.read(|s| s.check(&check).cloned()).unwrap();
    assert_eq!(after.n_pings, 3);
    assert_eq!(after.status, StoredStatus::Up);
    assert_eq!(after.last_ping, before.last_ping);
    assert_eq!(after.last_start, None);
    assert_eq!(after.last_duration, before.last_duration);
    assert_eq!(service.read(super::state::State::journal_len), 3);
    service.fold_journal().await.unwrap();
    assert_eq!(listed(&service, check), [3, 2, 1]);
    assert_eq!(
        service.store().ping_body(check, 2).unwrap().as_deref(),
        Some(&b"body"[..])
    );
    // A later ping continues the numbering.
    service
        .record_ping(ping(check, Signal::Fail))
        .await
        .unwrap();
    service.close().await;
    let service = reopen(dir.path()).await;
    assert_eq!(
        listed(&service, check),
        [4, 3, 2, 1],
        "close folds the journal"
    );
    assert_eq!(
        service.read(|s| s.check(&check).map(|c| c.status)),
        Some(StoredStatus::Down)
    );
    service.close().await;
}

#[tokio::test]
async fn deleting_a_check_drops_its_journaled_pings() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path(), ServiceConfig::default(), Clock::System).unwrap();
    let project = service.add_project("p").await.unwrap().uuid;
    let (check, _) = service
        .create_check(project, CheckSpec::default(), ApiVersion::V3)
        .await
        .unwrap();
    service
        .record_ping(ping(check.uuid, Signal::Success))
        .await
        .unwrap();
    service.delete_check(project, check.uuid).await.unwrap();
    assert_eq!(service.read(super::state::State::journal_len), 0);
    assert_eq!(service.store().journal_len().unwrap(), 0);
    assert!(service.store().pings(check.uuid, 10).unwrap().is_empty());
    service.close().await;
}

#[tokio::test]
async fn folding_one_check_keeps_the_others_for_replay() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path(), ServiceConfig::default(), Clock::System).unwrap();
    let project = service.add_project("p").await.unwrap().uuid;
    let mut checks = Vec::new();
    for _ in 0..2 {
        let (check, _) = service
            .create_check(project, CheckSpec::default(), ApiVersion::V3)
            .await
            .unwrap();
        checks.push(check.uuid);
    }
    let (a, b) = (checks[0], checks[1]);
    for _ in 0..3 {
        for check in [a, b] {
            service
                .record_ping(ping(check, Signal::Success))
                .await
                .unwrap();
        }
    }
    service.fold_journal_for(&a).await.unwrap();
    assert_eq!(service.read(super::state::State::journal_len), 3);
    assert_eq!(listed(&service, a), [3, 2, 1]);
    assert!(listed(&service, b).is_empty());
    drop(service);
    let service = reopen(dir.path()).await;
    assert_eq!(service.read(|s| s.check(&b).map(|c| c.n_pings)), Some(3));
    service.fold_journal().await.unwrap();
    assert_eq!(listed(&service, a), [3, 2, 1]);
    assert_eq!(listed(&service, b), [3, 2, 1]);
    assert_eq!(service.store().journal_len().unwrap(), 0, "all folded: cut");
    service.close().await;
}

#[tokio::test]
async fn busy_checks_are_folded_by_the_writer_and_the_journal_is_cut() {
    use crate::service::journal::{FOLD_RIPE, TRIM_EVERY};
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path(), ServiceConfig::default(), Clock::System).unwrap();
    let project = service.add_project("p").await.unwrap().uuid;
    let (check, _) = service
        .create_check(project, CheckSpec::default(), ApiVersion::V3)
        .await
        .unwrap();
    let check = check.uuid;
    let total = TRIM_EVERY as usize + 100;
    let service = std::sync::Arc::new(service);
    for chunk in 0..=(total / 50) {
        let n = 50.min(total - chunk * 50);
        let pings = (0..n).map(|_| {
            let service = service.clone();
            async move { service.record_ping(ping(check, Signal::Success)).await }
        });
        for result in futures_util::future::join_all(pings).await {
            result.unwrap();
        }
    }
    // Nobody asked for a fold: the writer folded the check every time it ripened.
    let unfolded = service.read(super::state::State::journal_len);
    assert!(unfolded < FOLD_RIPE, "{unfolded} pings left unfolded");
    assert_eq!(listed(&service, check).len(), total - unfolded);
    let in_file = service.store().journal_len().unwrap() as usize;
    assert!(in_file < TRIM_EVERY as usize, "journal holds {in_file}");
    let service = std::sync::Arc::into_inner(service).unwrap();
    drop(service);
    let service = reopen(dir.path()).await;
    assert_eq!(
        service.read(|s| s.check(&check).map(|c| c.n_pings)),
        Some(total as u64)
    );
    service.fold_journal().await.unwrap();
    let all = listed(&service, check);
    assert_eq!(all.len(), total);
    assert!(
        all.windows(2).all(|w| w[0] == w[1] + 1),
        "no gaps or repeats"
    );
    service.close().await;
}
