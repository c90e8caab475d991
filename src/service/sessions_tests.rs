//! Dashboard sessions through the service: signing in, adding projects, expiry on the service
//! clock, restarts, sign-out and key removal. These look at the sessions table under the
//! state, which only the service may read.

use std::time::Duration;

use jiff::Timestamp;

use crate::model::session::session_id;
use crate::service::auth::Grant;
use crate::service::{Clock, Service, ServiceConfig, ServiceError};
use crate::store::StoreError;

const DAY: Duration = Duration::from_secs(86_400);

fn base() -> Timestamp {
    "2026-03-01T12:00:00Z".parse().expect("base")
}

async fn open(dir: &std::path::Path, now: Timestamp) -> Service {
    // A closed service's writer lets go of the file once its queue is done.
    for _ in 0..10_000 {
        match Service::open(dir, ServiceConfig::default(), Clock::tokio_at(now)) {
            Ok(s) => return s,
            Err(StoreError::Locked(_)) => tokio::task::yield_now().await,
            Err(e) => panic!("open: {e}"),
        }
    }
    panic!("the data file stayed locked");
}

async fn grant(service: &Service, project: &str, read_only: bool) -> Grant {
    if service.read(|s| s.project_by_name(project).is_none()) {
        service.add_project(project).await.expect("project");
    }
    let key = service
        .add_key(project, read_only, "")
        .await
        .expect("key")
        .key;
    Grant {
        project: key.project,
        read_only,
        key_id: key.id,
    }
}

fn grants(service: &Service, token: &str) -> Vec<Grant> {
    service.session(token).expect("a live session").grants
}

/// The sessions the data file holds, by id.
fn stored(service: &Service) -> Vec<[u8; 32]> {
    let mut ids: Vec<[u8; 32]> = service
        .store()
        .load()
        .expect("load")
        .sessions
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    ids.sort_unstable();
    ids
}

#[tokio::test(start_paused = true)]
async fn signing_in_grants_the_key_and_adds_projects_read_write_winning() {
    let dir = tempfile::tempdir().expect("tmp");
    let service = open(dir.path(), base()).await;
    let p_ro = grant(&service, "p", true).await;
    let p_rw = grant(&service, "p", false).await;
    let q_ro = grant(&service, "q", true).await;

    let t1 = service.sign_in(None, &p_ro).await.expect("sign in");
    let view = service.session(&t1).expect("session");
    assert_eq!(view.grants, vec![p_ro.clone()]);
    assert!(!view.needs_touch);
    assert_eq!(stored(&service), vec![session_id(&t1)]);

    let t2 = service.sign_in(Some(&t1), &q_ro).await.expect("add q");
    assert_ne!(t2, t1, "signing in again hands out a new token");
    assert_eq!(service.session(&t1), None, "the old token stops working");
    assert_eq!(grants(&service, &t2), vec![p_ro.clone(), q_ro.clone()]);

    let t3 = service.sign_in(Some(&t2), &p_rw).await.expect("p rw");
    assert_eq!(grants(&service, &t3), vec![q_ro.clone(), p_rw.clone()]);
    let t4 = service.sign_in(Some(&t3), &p_ro).await.expect("p ro");
    assert_eq!(
        grants(&service, &t4),
        vec![q_ro.clone(), p_rw.clone()],
        "a read-only key never downgrades"
    );
    assert_eq!(stored(&service), vec![session_id(&t4)]);

    // A cookie that is no live session starts a new one beside it.
    let fresh = service
        .sign_in(Some("not a token"), &q_ro)
        .await
        .expect("fresh");
    assert_eq!(grants(&service, &fresh), vec![q_ro.clone()]);
    assert_eq!(grants(&service, &t4).len(), 2);
    service.close().await;
}

#[tokio::test(start_paused = true)]
async fn malformed_tokens_are_no_session_and_change_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let service = open(dir.path(), base()).await;
    let p = grant(&service, "p", false).await;
    let token = service.sign_in(None, &p).await.expect("sign in");
    let upper = token.to_uppercase();
    let unknown = "0".repeat(64);
    for bad in [
        "",
        "abc",
        &token[..63],
        &upper,
        &format!("{token}0"),
        &unknown,
    ] {
        assert_eq!(service.session(bad), None, "{bad:?}");
        service.touch_session(bad).await.expect("touch");
        service.sign_out(bad).await.expect("sign out");
    }
    assert!(service.session(&token).is_some());
    assert_eq!(stored(&service), vec![session_id(&token)]);
    service.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_session_survives_a_restart_and_ends_after_thirty_idle_days() {
    let dir = tempfile::tempdir().expect("tmp");
    let service = open(dir.path(), base()).await;
    let p = grant(&service, "p", false).await;
    let q = grant(&service, "q", true).await;
    let token = service.sign_in(None, &p).await.expect("sign in");
    let token = service.sign_in(Some(&token), &q).await.expect("add q");
    let other = service.sign_in(None, &q).await.expect("sign in");
    service.close().await;

    let later = base() + jiff::SignedDuration::from_hours(24);
    let service = open(dir.path(), later).await;
    let view = service.session(&token).expect("back after a restart");
    assert_eq!(view.grants, vec![p.clone(), q.clone()]);
    assert!(view.needs_touch, "a day without use");
    service.touch_session(&other).await.expect("touch");
    service.close().await;

    // 30 days after the last use the first session is over, at start too.
    let much_later = base() + jiff::SignedDuration::from_hours(30 * 24 + 1);
    let service = open(dir.path(), much_later).await;
    assert_eq!(service.session(&token), None);
    assert!(service.session(&other).is_some(), "touched a day later");
    assert_eq!(
        stored(&service).len(),
        2,
        "dropped from memory, not yet from the file"
    );
    // The next sessions write deletes it from the file.
    service.touch_session(&other).await.expect("touch");
    assert_eq!(stored(&service), vec![session_id(&other)]);
    service.close().await;
}

#[tokio::test(start_paused = true)]
async fn use_keeps_a_session_alive_and_is_written_at_most_hourly() {
    let dir = tempfile::tempdir().expect("tmp");
    let service = open(dir.path(), base()).await;
    let p = grant(&service, "p", true).await;
    let token = service.sign_in(None, &p).await.expect("sign in");
    let last_used = |service: &Service| {
        service
            .store()
            .load()
            .expect("load")
            .sessions
            .into_iter()
            .find(|(id, _)| *id == session_id(&token))
            .map(|(_, s)| s.last_used)
    };
    let signed_in = last_used(&service).expect("stored");

    tokio::time::advance(Duration::from_secs(30 * 60)).await;
    assert!(!service.session(&token).expect("live").needs_touch);
    service.touch_session(&token).await.expect("touch");
    assert_eq!(
        last_used(&service),
        Some(signed_in),
        "no write within the hour"
    );

    tokio::time::advance(29 * DAY).await;
    assert!(service.session(&token).expect("live").needs_touch);
    service.touch_session(&token).await.expect("touch");
    let touched = last_used(&service).expect("stored");
    assert_eq!(touched, service.now());
    assert!(!service.session(&token).expect("live").needs_touch);

    // 58 days after signing in, 29 after the last use: still signed in.
    tokio::time::advance(29 * DAY).await;
    assert!(service.session(&token).is_some());
    tokio::time::advance(DAY).await;
    assert_eq!(service.session(&token), None, "30 days without use");
    service.touch_session(&token).await.expect("touch");
    assert_eq!(service.session(&token), None, "a touch does not revive it");
    // Signing in over an ended session starts a new one, without the old keys.
    let q = grant(&service, "q", true).await;
    let fresh = service.sign_in(Some(&token), &q).await.expect("sign in");
    assert_eq!(grants(&service, &fresh), vec![q]);
    assert_eq!(stored(&service), vec![session_id(&fresh)]);
    service.close().await;
}

#[tokio::test(start_paused = true)]
async fn sign_out_ends_the_session() {
    let dir = tempfile::tempdir().expect("tmp");
    let service = open(dir.path(), base()).await;
    let p = grant(&service, "p", false).await;
    let token = service.sign_in(None, &p).await.expect("sign in");
    let kept = service.sign_in(None, &p).await.expect("another browser");
    service.sign_out(&token).await.expect("sign out");
    assert_eq!(service.session(&token), None);
    assert_eq!(stored(&service), vec![session_id(&kept)]);
    service.sign_out(&token).await.expect("twice is no error");
    assert!(service.session(&kept).is_some());
    service.close().await;
}

#[tokio::test(start_paused = true)]
async fn removing_a_key_ends_its_grant_at_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let service = open(dir.path(), base()).await;
    let p = grant(&service, "p", true).await;
    let q = grant(&service, "q", false).await;
    let token = service.sign_in(None, &p).await.expect("sign in");
    let token = service.sign_in(Some(&token), &q).await.expect("add q");

    service.remove_key("q", &q.key_id).await.expect("key rm");
    assert_eq!(grants(&service, &token), vec![p.clone()]);
    let stored_keys = |service: &Service| {
        service
            .store()
            .load()
            .expect("load")
            .sessions
            .into_iter()
            .map(|(_, s)| s.keys)
            .collect::<Vec<_>>()
    };
    assert_eq!(stored_keys(&service), vec![vec![p.key_id.clone()]]);

    service.remove_key("p", &p.key_id).await.expect("key rm");
    assert_eq!(service.session(&token), None);
    assert!(stored_keys(&service).is_empty());

    // Signing in with a key removed since it was verified is refused.
    assert!(matches!(
        service.sign_in(None, &q).await,
        Err(ServiceError::NotFound)
    ));

    // Removing a project removes its keys, and so their sessions.
    let r = grant(&service, "r", false).await;
    let token = service.sign_in(None, &r).await.expect("sign in");
    service.remove_project("r").await.expect("project rm");
    assert_eq!(service.session(&token), None);
    assert!(stored_keys(&service).is_empty());
    service.close().await;
}
