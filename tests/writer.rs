//! The single writer: it keeps committing while jobs keep coming, and a job that panics costs
//! only its own batch, never the writer itself.

use crate::common;

use overdue::model::signal::Signal;
use overdue::model::spec::CheckSpec;
use overdue::model::{ApiVersion, PingKind};
use overdue::service::pings::PingRequest;
use overdue::service::{Clock, Service, ServiceConfig, ServiceError};

fn ping(check: uuid::Uuid) -> PingRequest {
    common::ping_request(check, Signal::Success, b"")
}

async fn service_with_check(dir: &std::path::Path) -> (Service, uuid::Uuid) {
    let service = Service::open(
        dir,
        common::engine(dir, ServiceConfig::default()),
        Clock::System,
    )
    .unwrap();
    let project = service.add_project("p").await.unwrap().uuid;
    let (check, _) = service
        .create_check(project, CheckSpec::default(), ApiVersion::V3)
        .await
        .unwrap();
    (service, check.uuid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_job_loses_its_batch_and_the_writer_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (service, check) = service_with_check(dir.path()).await;
    service.record_ping(ping(check)).await.unwrap();

    let outcome = service
        .write(|ctx| -> Result<(), ServiceError> {
            // Changes memory, then panics before the batch can commit.
            ctx.state.next_seq();
            panic!("a bug in a write job");
        })
        .await;
    assert!(
        matches!(outcome, Err(ServiceError::ShuttingDown)),
        "the panicking job's caller is told: {outcome:?}"
    );

    // The writer still takes jobs, and memory was rebuilt from the file: the check and its
    // first ping are there, and numbering goes on without a gap.
    let next = service.record_ping(ping(check)).await.unwrap();
    assert_eq!(next.n, 2);
    assert!(service.read(|s| s.check(&check).is_some()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pings_sent_while_batches_commit_are_all_acknowledged_without_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let (service, check) = service_with_check(dir.path()).await;
    let service = std::sync::Arc::new(service);

    // Many waves of concurrent pings: later ones queue while earlier batches commit, so the
    // writer goes from batch to batch without handing the queue back.
    let mut numbers = Vec::new();
    for _ in 0..10 {
        let wave: Vec<_> = (0..64)
            .map(|_| {
                let service = service.clone();
                tokio::spawn(async move { service.record_ping(ping(check)).await })
            })
            .collect();
        for task in wave {
            numbers.push(task.await.unwrap().unwrap().n);
        }
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=640).collect::<Vec<u64>>());
    let n_pings = service.read(|s| s.check(&check).map(|c| c.n_pings));
    assert_eq!(n_pings, Some(640));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_and_flipping_pings_of_one_check_share_one_numbering_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (service, check) = service_with_check(dir.path()).await;
    let service = std::sync::Arc::new(service);
    // new -> up.
    assert_eq!(service.record_ping(ping(check)).await.unwrap().n, 1);

    // Every fifth ping a failure (up -> down), the success after it a flip back up, the
    // others plain successes that reach only the journal, all at once.
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let service = service.clone();
            let signal = if i % 5 == 0 {
                Signal::Fail
            } else {
                Signal::Success
            };
            tokio::spawn(async move {
                service
                    .record_ping(common::ping_request(check, signal, b""))
                    .await
            })
        })
        .collect();
    let mut numbers = Vec::new();
    for task in tasks {
        numbers.push(task.await.unwrap().unwrap().n);
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (2..=201).collect::<Vec<u64>>());
    let flips = service.flips(check).unwrap().len();
    assert!(flips >= 2, "new -> up, and a failure took it down: {flips}");

    let service = std::sync::Arc::into_inner(service).expect("the only handle");
    service.close().await;
    let config = common::engine(dir.path(), ServiceConfig::default());
    let service = Service::open(dir.path(), config, Clock::System).unwrap();
    assert_eq!(
        service.read(|s| s.check(&check).map(|c| c.n_pings)),
        Some(201)
    );
    let mut listed = service.pings(check, 1000).await.unwrap();
    listed.sort_unstable_by_key(|p| p.n);
    assert_eq!(
        listed.iter().map(|p| p.n).collect::<Vec<_>>(),
        (1..=201).collect::<Vec<u64>>()
    );
    // Numbered in the order they were applied: walking them in that order gives the flips.
    let mut up = None;
    let mut walked = 0;
    for p in &listed {
        let now_up = p.kind == PingKind::Success;
        if up != Some(now_up) {
            walked += 1;
            up = Some(now_up);
        }
    }
    assert_eq!(walked, flips);
    assert_eq!(service.flips(check).unwrap().len(), flips);
    service.close().await;
}
