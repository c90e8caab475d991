//! Authentication of the Management API (reference-behavior §1.1-1.2), over HTTP.

use crate::common;

use common::{Options, TestServer, status_json};
use overdue::api::ApiConfig;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn missing_short_and_wrong_keys_are_401_with_their_messages() {
    let s = TestServer::start().await;
    let (code, doc) =
        status_json(s.anon(Method::GET, "/api/v3/checks/").send().await.unwrap()).await;
    assert_eq!((code, doc), (401, json!({"error": "missing api key"})));
    let r = s
        .anon(Method::GET, "/api/v3/checks/")
        .header("X-Api-Key", "short")
        .send()
        .await
        .unwrap();
    assert_eq!(
        status_json(r).await,
        (401, json!({"error": "missing api key"}))
    );
    let r = s
        .anon(Method::GET, "/api/v3/checks/")
        .header("X-Api-Key", format!("hcw_{}", "x".repeat(28)))
        .send()
        .await
        .unwrap();
    assert_eq!(
        status_json(r).await,
        (401, json!({"error": "wrong api key"}))
    );
    // A key of the right length but foreign format is wrong, not missing.
    let r = s
        .anon(Method::GET, "/api/v3/checks/")
        .header("X-Api-Key", "Y".repeat(32))
        .send()
        .await
        .unwrap();
    assert_eq!(
        status_json(r).await,
        (401, json!({"error": "wrong api key"}))
    );
    s.stop().await;
}

#[tokio::test]
async fn body_errors_come_before_authentication() {
    let s = TestServer::start().await;
    let r = s
        .anon(Method::POST, "/api/v3/checks/")
        .body("this is not json")
        .send()
        .await
        .unwrap();
    assert_eq!(
        status_json(r).await,
        (400, json!({"error": "could not parse request body"}))
    );
    let r = s
        .anon(Method::POST, "/api/v3/checks/")
        .body("[1,2,3]")
        .send()
        .await
        .unwrap();
    assert_eq!(
        status_json(r).await,
        (
            400,
            json!({"error": "json validation error: value is not an object"})
        )
    );
    let r = s
        .anon(Method::POST, "/api/v3/checks/")
        .send()
        .await
        .unwrap();
    assert_eq!(
        status_json(r).await,
        (401, json!({"error": "missing api key"}))
    );
    s.stop().await;
}

#[tokio::test]
async fn key_in_body_works_for_writes_but_not_reads() {
    let s = TestServer::start().await;
    let r = s
        .anon(Method::POST, "/api/v3/checks/")
        .json(&json!({"api_key": s.rw, "name": "a"}))
        .send()
        .await
        .unwrap();
    let (code, doc) = status_json(r).await;
    assert_eq!(code, 201);
    let uuid = doc["uuid"].as_str().unwrap().to_string();
    let r = s
        .anon(Method::POST, &format!("/api/v3/checks/{uuid}/pause"))
        .json(&json!({"api_key": s.rw}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // The header wins over the body.
    let r = s
        .anon(Method::POST, &format!("/api/v3/checks/{uuid}"))
        .header("X-Api-Key", "Z".repeat(32))
        .json(&json!({"api_key": s.rw, "name": "b"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(s.get_check(&uuid).await["name"], "a");
    // GET ignores bodies entirely.
    let r = s
        .anon(Method::GET, "/api/v3/checks/")
        .json(&json!({"api_key": s.rw}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    s.stop().await;
}

#[tokio::test]
async fn read_only_key_reads_reduced_checks_and_cannot_write() {
    let s = TestServer::start().await;
    let created = s.create(json!({"name": "ro"})).await;
    let uuid = created["uuid"].as_str().unwrap().to_string();
    let r = s.ro(Method::GET, "/api/v3/checks/").send().await.unwrap();
    let text = r.text().await.unwrap();
    assert!(!text.contains(&uuid), "read-only list reveals the UUID");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let key = doc["checks"][0]["unique_key"].as_str().unwrap().to_string();
    for field in [
        "uuid",
        "ping_url",
        "update_url",
        "pause_url",
        "resume_url",
        "channels",
    ] {
        assert!(doc["checks"][0].get(field).is_none(), "{field}");
    }
    let (code, by_key) = status_json(
        s.ro(Method::GET, &format!("/api/v3/checks/{key}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(by_key["unique_key"], key.as_str());
    let (_, rw_by_key) = s
        .call(Method::GET, &format!("/api/v3/checks/{key}"), None)
        .await;
    assert_eq!(rw_by_key["uuid"], uuid.as_str());
    for (method, path) in [
        (Method::POST, "/api/v3/checks/".to_string()),
        (Method::POST, format!("/api/v3/checks/{uuid}")),
        (Method::DELETE, format!("/api/v3/checks/{uuid}")),
        (Method::POST, format!("/api/v3/checks/{uuid}/pause")),
        (Method::GET, format!("/api/v3/checks/{uuid}/pings/")),
        (Method::GET, "/api/v3/channels/".to_string()),
    ] {
        let r = s
            .ro(method.clone(), &path)
            .json(&json!({"name": "changed"}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            status_json(r).await,
            (401, json!({"error": "wrong api key"})),
            "{method} {path}"
        );
    }
    assert_eq!(s.get_check(&uuid).await["name"], "ro");
    assert_eq!(
        s.ro(Method::GET, "/api/v3/badges/")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        s.ro(Method::GET, &format!("/api/v3/checks/{uuid}/flips/"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    s.stop().await;
}

#[tokio::test]
async fn a_new_key_works_at_once_and_a_removed_one_stops_at_once() {
    let s = TestServer::start().await;
    let new = s.service.add_key("default", false, "test").await.unwrap();
    let get = |key: String| {
        let req = s
            .anon(Method::GET, "/api/v3/checks/")
            .header("X-Api-Key", key);
        async move { req.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(get(new.plaintext.clone()).await, 200);
    assert_eq!(get(new.plaintext.clone()).await, 200); // now from the cache
    s.service.remove_key("default", &new.key.id).await.unwrap();
    assert_eq!(get(new.plaintext.clone()).await, 401);
    s.stop().await;
}

#[tokio::test]
async fn keys_of_one_project_do_not_reach_another() {
    let s = TestServer::start().await;
    let created = s.create(json!({"name": "mine"})).await;
    let uuid = created["uuid"].as_str().unwrap();
    s.service.add_project("other").await.unwrap();
    let other = s.service.add_key("other", false, "").await.unwrap();
    let r = s
        .anon(Method::GET, &format!("/api/v3/checks/{uuid}"))
        .header("X-Api-Key", &other.plaintext)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = s
        .anon(Method::DELETE, &format!("/api/v3/checks/{uuid}"))
        .header("X-Api-Key", &other.plaintext)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = s
        .anon(Method::GET, "/api/v3/checks/")
        .header("X-Api-Key", &other.plaintext)
        .send()
        .await
        .unwrap();
    assert_eq!(status_json(r).await.1, json!({"checks": []}));
    assert_eq!(s.list().await.len(), 1);
    s.stop().await;
}

#[tokio::test]
async fn rate_limit_answers_429_with_retry_after() {
    let s = TestServer::start_with(common::Options {
        api: overdue::api::ApiConfig {
            api_rate_limit: 3,
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    for _ in 0..3 {
        assert_eq!(
            s.rw(Method::GET, "/api/v3/checks/")
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
    }
    let r = s.rw(Method::GET, "/api/v3/checks/").send().await.unwrap();
    assert_eq!(r.status(), 429);
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry));
    assert_eq!(r.headers()["access-control-allow-origin"], "*");
    // Another key has its own budget.
    assert_eq!(
        s.ro(Method::GET, "/api/v3/checks/")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    s.stop().await;
}

/// A GET of the check list with `key`, as the client at `addr` (behind a trusted proxy).
async fn list_as(s: &TestServer, key: &str, addr: &str) -> reqwest::Response {
    s.anon(Method::GET, "/api/v3/checks/")
        .header("X-Api-Key", key)
        .header("X-Forwarded-For", addr)
        .send()
        .await
        .unwrap()
}

/// argon2 runs that failed so far.
fn failed_runs(s: &TestServer) -> u64 {
    s.service.metrics().snapshot(0, false).keys_failed
}

/// Issue 13.8: wrong keys that carry a real identifier cost an argon2 run each; past 10 failures
/// a minute per identifier, or 20 per client, they are refused with 429 before argon2, while
/// keys verified before keep working and other keys' first use is not held up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_verifications_are_throttled_per_identifier_and_per_client_before_argon2() {
    let s = TestServer::start_with(Options {
        api: ApiConfig {
            api_rate_limit: 0,
            trust_proxy: true,
            ..ApiConfig::default()
        },
        ..Options::default()
    })
    .await;
    assert_eq!(list_as(&s, &s.rw, "10.0.0.1").await.status(), 200);
    let wrong = |key: &str| format!("{}{}", &key[..12], "Z".repeat(20));

    // One client, one identifier: ten failures run argon2, the eleventh does not.
    for _ in 0..10 {
        assert_eq!(list_as(&s, &wrong(&s.rw), "10.0.1.1").await.status(), 401);
    }
    assert_eq!(failed_runs(&s), 10);
    let r = list_as(&s, &wrong(&s.rw), "10.0.1.1").await;
    assert_eq!(r.status(), 429);
    let wait: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(
        status_json(r).await.1,
        json!({"error": "rate limit exceeded"})
    );
    // The identifier is spent for every client.
    assert_eq!(list_as(&s, &wrong(&s.rw), "10.0.1.2").await.status(), 429);
    assert_eq!(failed_runs(&s), 10, "no argon2 run for throttled keys");
    // The key verified before keeps working during the attack, from anywhere.
    assert_eq!(list_as(&s, &s.rw, "10.0.1.1").await.status(), 200);
    // A new key's first use is neither throttled nor queued behind the attack.
    let fresh = s
        .service
        .add_key("default", false, "")
        .await
        .unwrap()
        .plaintext;
    assert_eq!(list_as(&s, &fresh, "10.0.2.1").await.status(), 200);

    // The client is spent after 20 failures over all identifiers (an IPv6 client by its /64).
    for _ in 0..10 {
        assert_eq!(list_as(&s, &wrong(&s.ro), "10.0.1.1").await.status(), 401);
    }
    let other = s
        .service
        .add_key("default", true, "")
        .await
        .unwrap()
        .plaintext;
    assert_eq!(list_as(&s, &wrong(&other), "10.0.1.1").await.status(), 429);
    assert_eq!(list_as(&s, &wrong(&other), "10.0.2.2").await.status(), 401);
    for i in 0..20 {
        let addr = format!("2001:db8:0:7::{i:x}");
        let spare = s
            .service
            .add_key("default", true, "")
            .await
            .unwrap()
            .plaintext;
        let code = list_as(&s, &wrong(&spare), &addr).await.status();
        assert_eq!(code, 401, "failure {i} of one /64");
    }
    let spare = s
        .service
        .add_key("default", true, "")
        .await
        .unwrap()
        .plaintext;
    let code = list_as(&s, &wrong(&spare), "2001:db8:0:7:ffff::1")
        .await
        .status();
    assert_eq!(code, 429, "the same /64, another address");

    // 32 clients at once with another leaked identifier: about ten argon2 runs in all.
    let leaked = s
        .service
        .add_key("default", true, "")
        .await
        .unwrap()
        .plaintext;
    let before = failed_runs(&s);
    let attempts = (0..32).map(|i| {
        let key = wrong(&leaked);
        let addr = format!("10.0.3.{i}");
        let s = &s;
        async move { list_as(s, &key, &addr).await.status().as_u16() }
    });
    let codes = futures_util::future::join_all(attempts).await;
    let throttled = codes.iter().filter(|c| **c == 429).count();
    let runs = failed_runs(&s) - before;
    assert!(codes.iter().all(|c| *c == 401 || *c == 429), "{codes:?}");
    assert!(
        runs <= 11,
        "{runs} argon2 runs for one identifier in a minute"
    );
    assert_eq!(throttled as u64, 32 - runs, "{codes:?}");
    s.stop().await;
}

/// A client's first burst with a new key runs argon2 once per verifier, not once per request:
/// requests that waited for a verifier find the key verified meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_one_new_key_runs_argon2_at_most_once_per_verifier() {
    let s = TestServer::start().await;
    let key = s
        .service
        .add_key("default", false, "")
        .await
        .unwrap()
        .plaintext;
    let ok_runs = |s: &TestServer| s.service.metrics().snapshot(0, false).keys_ok;
    let before = ok_runs(&s);
    let attempts = (0..16).map(|_| {
        let s = &s;
        let key = key.clone();
        async move { list_as(s, &key, "10.0.4.1").await.status().as_u16() }
    });
    let codes = futures_util::future::join_all(attempts).await;
    assert!(codes.iter().all(|c| *c == 200), "{codes:?}");
    let runs = ok_runs(&s) - before;
    assert!(
        runs <= overdue::service::auth::VERIFY_PERMITS as u64,
        "{runs} argon2 runs for one key"
    );
    s.stop().await;
}
