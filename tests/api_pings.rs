//! The Pinging API over HTTP (reference-behavior §4.1-4.5, §9.1 items 11-16) and the pings
//! endpoints of the Management API (§2.12-2.13).

use crate::common;

use common::{Options, TestServer};
use overdue::model::ChannelConfig;
use reqwest::Method;
use serde_json::{Value, json};

fn types(list: &[Value]) -> Vec<String> {
    list.iter()
        .map(|p| p["type"].as_str().unwrap().to_string())
        .collect()
}

async fn ping(s: &TestServer, method: Method, path: &str) -> reqwest::Response {
    s.anon(method, &format!("/ping/{path}"))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn every_signal_by_uuid_with_the_documented_answer() {
    let s = TestServer::start().await;
    let c = s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    for suffix in ["", "/", "/start", "/fail", "/log", "/0", "/007", "/255"] {
        let r = ping(&s, Method::GET, &format!("{uuid}{suffix}")).await;
        assert_eq!(r.status(), 200, "{suffix}");
        let h = r.headers().clone();
        assert_eq!(h["content-type"], "text/plain; charset=utf-8");
        assert_eq!(h["access-control-allow-origin"], "*");
        assert_eq!(h["ping-body-limit"], "10000");
        assert!(h["cache-control"].to_str().unwrap().contains("no-cache"));
        assert_eq!(r.text().await.unwrap(), "OK");
    }
    let list = s.pings(uuid).await;
    assert_eq!(
        types(&list),
        [
            "fail", "fail", "success", "log", "fail", "start", "success", "success"
        ]
    );
    assert_eq!(
        list.iter()
            .map(|p| p["n"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [8, 7, 6, 5, 4, 3, 2, 1]
    );
    assert_eq!(s.get_check(uuid).await["n_pings"], 8);
    s.stop().await;
}

#[tokio::test]
async fn url_errors() {
    let s = TestServer::start().await;
    let c = s.create(json!({"slug": "job"})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let cases = [
        (format!("{uuid}/256"), 400, "invalid url format"),
        (
            format!("{uuid}/99999999999999999999999"),
            400,
            "invalid url format",
        ),
        (format!("{uuid}/fail/"), 404, "not found"),
        (format!("{uuid}/-1"), 404, "not found"),
        (format!("{uuid}/1.5"), 404, "not found"),
        (uuid.to_uppercase(), 404, "not found"),
        (uuid.replace('-', ""), 404, "not found"),
        (
            "00000000-0000-4000-8000-000000000000".to_string(),
            404,
            "not found",
        ),
        (format!("{uuid}?rid=12345"), 400, "invalid uuid format"),
        (format!("{uuid}?rid="), 400, "invalid uuid format"),
        (format!("{}/JOB", s.ping_key), 400, "invalid url format"),
        (format!("{}/job/256", s.ping_key), 400, "invalid url format"),
        (format!("{}/job/", s.ping_key), 404, "not found"),
        (format!("{}/nothing", s.ping_key), 404, "not found"),
        ("wrongpingkey0000000000/job".to_string(), 404, "not found"),
        (
            "wrongpingkey0000000000/job?create=1".to_string(),
            404,
            "not found",
        ),
    ];
    for (path, code, text) in cases {
        let r = ping(&s, Method::GET, &path).await;
        assert_eq!(
            (r.status().as_u16(), r.text().await.unwrap().as_str()),
            (code, text),
            "{path}"
        );
    }
    assert_eq!(
        s.get_check(uuid).await["n_pings"],
        0,
        "no error path recorded a ping"
    );
    s.stop().await;
}

#[tokio::test]
async fn every_method_is_recorded_and_post_only_checks_ignore_the_rest() {
    let s = TestServer::start().await;
    let c = s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    for m in ["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS"] {
        let r = ping(&s, Method::from_bytes(m.as_bytes()).unwrap(), uuid).await;
        assert_eq!(r.status(), 200, "{m}");
    }
    let methods: Vec<String> = s
        .pings(uuid)
        .await
        .iter()
        .map(|p| p["method"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(methods, ["OPTIONS", "DELETE", "PUT", "HEAD", "POST", "GET"]);
    let post_only = s.create(json!({"methods": "POST"})).await;
    let u = post_only["uuid"].as_str().unwrap();
    assert_eq!(
        ping(&s, Method::GET, &format!("{u}/fail"))
            .await
            .text()
            .await
            .unwrap(),
        "OK"
    );
    let doc = s.get_check(u).await;
    assert_eq!(
        (
            doc["status"].clone(),
            doc["last_ping"].clone(),
            doc["n_pings"].clone()
        ),
        (json!("new"), Value::Null, json!(1))
    );
    assert_eq!(types(&s.pings(u).await), ["ign"]);
    ping(&s, Method::POST, u).await;
    assert_eq!(s.get_check(u).await["status"], "up");
    s.stop().await;
}

#[tokio::test]
async fn slugs_auto_create_and_ambiguity() {
    let s = TestServer::start().await;
    let mail = s
        .service
        .add_channel(
            "default",
            "m",
            ChannelConfig::Email {
                address: "a@example.org".into(),
            },
        )
        .await
        .unwrap();
    let key = s.ping_key.clone();
    let r = ping(&s, Method::GET, &format!("{key}/fresh?create=0")).await;
    assert_eq!(r.status(), 404);
    let r = ping(&s, Method::GET, &format!("{key}/fresh/start?create=1")).await;
    assert_eq!(
        (r.status().as_u16(), r.text().await.unwrap()),
        (201, "Created".to_string())
    );
    let list = s.list().await;
    assert_eq!(list.len(), 1);
    let c = &list[0];
    assert_eq!(
        (
            c["name"].clone(),
            c["slug"].clone(),
            c["timeout"].clone(),
            c["grace"].clone()
        ),
        (json!("fresh"), json!("fresh"), json!(86400), json!(3600))
    );
    assert_eq!(c["channels"], mail.uuid.to_string());
    let r = ping(&s, Method::GET, &format!("{key}/fresh?create=1")).await;
    assert_eq!(
        (r.status().as_u16(), r.text().await.unwrap()),
        (200, "OK".to_string())
    );
    assert_eq!(
        types(&s.pings(c["uuid"].as_str().unwrap()).await),
        ["success", "start"]
    );
    s.create(json!({"slug": "twin"})).await;
    s.create(json!({"slug": "twin"})).await;
    for suffix in ["", "/fail", "?create=1"] {
        let r = ping(&s, Method::GET, &format!("{key}/twin{suffix}")).await;
        assert_eq!(
            (r.status().as_u16(), r.text().await.unwrap()),
            (409, "ambiguous slug".to_string())
        );
    }
    assert_eq!(s.list().await.len(), 3);
    // Changing a slug moves the ping address at once.
    let uuid = c["uuid"].as_str().unwrap();
    s.rw(Method::POST, &format!("/api/v3/checks/{uuid}"))
        .json(&json!({"slug": "renamed"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        ping(&s, Method::GET, &format!("{key}/renamed"))
            .await
            .status(),
        200
    );
    assert_eq!(
        ping(&s, Method::GET, &format!("{key}/fresh"))
            .await
            .status(),
        404
    );
    s.stop().await;
}

#[tokio::test]
async fn state_effects_of_pings() {
    let s = TestServer::start().await;
    let c = s.create(json!({"grace": 60})).await;
    let uuid = c["uuid"].as_str().unwrap();
    ping(&s, Method::GET, &format!("{uuid}/start")).await;
    let doc = s.get_check(uuid).await;
    assert_eq!(
        (
            doc["status"].clone(),
            doc["started"].clone(),
            doc["last_ping"].clone()
        ),
        (json!("new"), json!(true), Value::Null)
    );
    assert!(
        doc["next_ping"].is_string(),
        "a running check expects its end"
    );
    let v1: Value = s
        .call(Method::GET, &format!("/api/v1/checks/{uuid}"), None)
        .await
        .1;
    assert_eq!(v1["status"], "started");
    ping(&s, Method::GET, uuid).await;
    let doc = s.get_check(uuid).await;
    assert_eq!(
        (doc["status"].clone(), doc["started"].clone()),
        (json!("up"), json!(false))
    );
    ping(&s, Method::GET, &format!("{uuid}/fail")).await;
    assert_eq!(s.get_check(uuid).await["next_ping"], Value::Null);
    ping(&s, Method::GET, &format!("{uuid}/log")).await;
    assert_eq!(s.get_check(uuid).await["status"], "down");
    ping(&s, Method::GET, &format!("{uuid}/0")).await;
    assert_eq!(s.get_check(uuid).await["status"], "up");
    let (_, flips) = s
        .call(Method::GET, &format!("/api/v3/checks/{uuid}/flips/"), None)
        .await;
    assert_eq!(
        flips
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["up"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [1, 0, 1]
    );
    // A paused check leaves pause on a ping (with a flip); with manual_resume it ignores pings.
    s.rw(Method::POST, &format!("/api/v3/checks/{uuid}/pause"))
        .send()
        .await
        .unwrap();
    ping(&s, Method::GET, uuid).await;
    assert_eq!(s.get_check(uuid).await["status"], "up");
    s.rw(Method::POST, &format!("/api/v3/checks/{uuid}"))
        .json(&json!({"manual_resume": true}))
        .send()
        .await
        .unwrap();
    s.rw(Method::POST, &format!("/api/v3/checks/{uuid}/pause"))
        .send()
        .await
        .unwrap();
    ping(&s, Method::GET, &format!("{uuid}/fail")).await;
    assert_eq!(s.get_check(uuid).await["status"], "paused");
    assert_eq!(types(&s.pings(uuid).await)[0], "ign");
    s.stop().await;
}

#[tokio::test]
async fn durations_and_last_duration() {
    let s = TestServer::start().await;
    let c = s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let rid = "4c2a1f0e-1b2c-4d3e-8f90-0123456789ab";
    let start = format!("{uuid}/start?rid={}", rid.to_uppercase());
    ping(&s, Method::GET, &start).await;
    ping(&s, Method::GET, &format!("{uuid}?rid={rid}")).await;
    let list = s.pings(uuid).await;
    assert_eq!(
        list[0]["rid"], rid,
        "rids are shown in canonical lowercase form"
    );
    let d = list[0]["duration"]
        .as_f64()
        .expect("a completion matched with its start has a duration");
    assert!((0.0..10.0).contains(&d), "{d}");
    assert!(
        list[1].get("duration").is_none(),
        "start pings have no duration"
    );
    // A completion without the start's rid clears the start and gets no duration.
    ping(&s, Method::GET, &start).await;
    ping(&s, Method::GET, uuid).await;
    assert!(s.pings(uuid).await[0].get("duration").is_none());
    assert_eq!(s.get_check(uuid).await["started"], false);
    s.stop().await;
}

#[tokio::test]
async fn bodies_are_limited_stored_raw_and_served() {
    let s = TestServer::start_with(Options {
        service: overdue::service::ServiceConfig {
            ping_body_limit: 5,
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let c = s
        .create(json!({"filter_http_body": true, "success_kw": "hel"}))
        .await;
    let uuid = c["uuid"].as_str().unwrap();
    let r = s
        .anon(Method::POST, &format!("/ping/{uuid}"))
        .body("hello world")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["ping-body-limit"], "5");
    let r = s
        .anon(Method::POST, &format!("/ping/{uuid}"))
        .body(b"\xff\xfe\x01\x99x".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        200,
        "non-UTF-8 body with a filter is never a 5xx"
    );
    s.anon(Method::GET, &format!("/ping/{uuid}"))
        .send()
        .await
        .unwrap();
    let list = s.pings(uuid).await;
    assert_eq!(types(&list), ["ign", "ign", "success"]);
    assert_eq!(list[0]["body_url"], Value::Null);
    assert_eq!(
        list[2]["body_url"],
        format!("{}/api/v3/checks/{uuid}/pings/1/body", s.base).as_str()
    );
    let r = s
        .rw(Method::GET, &format!("/api/v3/checks/{uuid}/pings/1/body"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "text/plain");
    assert_eq!(r.bytes().await.unwrap().as_ref(), b"hello");
    let r = s
        .rw(Method::GET, &format!("/api/v3/checks/{uuid}/pings/2/body"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.bytes().await.unwrap().as_ref(), b"\xff\xfe\x01\x99x");
    for n in [3, 99] {
        let r = s
            .rw(
                Method::GET,
                &format!("/api/v3/checks/{uuid}/pings/{n}/body"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
    let r = s
        .rw(Method::GET, &format!("/api/v1/checks/{uuid}/pings/"))
        .send()
        .await
        .unwrap();
    let doc: Value = r.json().await.unwrap();
    assert!(
        doc["pings"][2]["body_url"]
            .as_str()
            .unwrap()
            .contains("/api/v1/")
    );
    let r = s
        .ro(Method::GET, &format!("/api/v3/checks/{uuid}/pings/1/body"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    s.stop().await;
}

#[tokio::test]
async fn ping_log_size_caps_the_list_and_bodies() {
    let s = TestServer::start_with(Options {
        service: overdue::service::ServiceConfig {
            ping_log: 3,
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let c = s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    for i in 0..5 {
        s.anon(Method::POST, &format!("/ping/{uuid}"))
            .body(format!("body {i}"))
            .send()
            .await
            .unwrap();
    }
    let list = s.pings(uuid).await;
    assert_eq!(
        list.iter()
            .map(|p| p["n"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [5, 4, 3]
    );
    let r = s
        .rw(Method::GET, &format!("/api/v3/checks/{uuid}/pings/2/body"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404, "outside the log");
    s.service
        .prune_pings(uuid.parse().unwrap(), 3)
        .await
        .unwrap();
    assert_eq!(
        s.service
            .pings(uuid.parse().unwrap(), 100)
            .await
            .unwrap()
            .len(),
        3
    );
    s.stop().await;
}

#[tokio::test]
async fn user_agent_and_proxy_headers() {
    let s = TestServer::start().await;
    let c = s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    s.anon(Method::GET, &format!("/ping/{uuid}"))
        .header("User-Agent", "a".repeat(300))
        .header("X-Forwarded-For", "1.2.3.4")
        .header("X-Forwarded-Proto", "https")
        .send()
        .await
        .unwrap();
    let p = &s.pings(uuid).await[0];
    assert_eq!(p["ua"].as_str().unwrap().len(), 200);
    assert_eq!(
        (p["remote_addr"].clone(), p["scheme"].clone()),
        (json!("127.0.0.1"), json!("http")),
        "proxy headers are not trusted by default"
    );
    s.stop().await;

    let s = TestServer::start_with(Options {
        api: overdue::api::ApiConfig {
            trust_proxy: true,
            api_rate_limit: 0,
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let c = s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    for (xff, expected) in [
        ("1.1.1.1, 2.2.2.2", "1.1.1.1"),
        ("1.1.1.1:1234", "1.1.1.1"),
        ("2001::1", "2001::1"),
    ] {
        s.anon(Method::GET, &format!("/ping/{uuid}"))
            .header("X-Forwarded-For", xff)
            .header("X-Forwarded-Proto", "https")
            .send()
            .await
            .unwrap();
        let p = &s.pings(uuid).await[0];
        assert_eq!(
            (p["remote_addr"].clone(), p["scheme"].clone()),
            (json!(expected), json!("https"))
        );
    }
    s.stop().await;
}

/// A server that takes two pings a minute per check.
async fn two_pings_a_minute() -> TestServer {
    TestServer::start_with(Options {
        api: overdue::api::ApiConfig {
            ping_rate_limit: 2,
            api_rate_limit: 0,
            ..Default::default()
        },
        ..Default::default()
    })
    .await
}

#[tokio::test]
async fn ping_rate_limit_answers_ok_without_recording() {
    let s = two_pings_a_minute().await;
    let c = s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(ping(&s, Method::GET, uuid).await.text().await.unwrap());
    }
    assert_eq!(answers, ["OK", "OK", "OK (rate-limited)"]);
    assert_eq!(s.get_check(uuid).await["n_pings"], 2);
    s.stop().await;
}

/// A check pinged by slug and by UUID has one bucket: the slug is looked up to its check.
#[tokio::test]
async fn ping_rate_limit_counts_slug_and_uuid_pings_of_a_check_together() {
    let s = two_pings_a_minute().await;
    let c = s
        .create(json!({"name": "nightly", "slug": "nightly"}))
        .await;
    let uuid = c["uuid"].as_str().unwrap();
    let by_slug = format!("{}/nightly", s.ping_key);
    let mut answers = Vec::new();
    for path in [by_slug.as_str(), by_slug.as_str(), uuid] {
        answers.push(ping(&s, Method::GET, path).await.text().await.unwrap());
    }
    assert_eq!(answers, ["OK", "OK", "OK (rate-limited)"]);
    assert_eq!(s.get_check(uuid).await["n_pings"], 2);
    s.stop().await;
}

/// Issue 13.4: `?create=1` names the new check after the slug, so the API's limits for a
/// slug and a name apply: too long is 400 with the API's reason, and nothing is created.
#[tokio::test]
async fn create_by_ping_applies_the_api_limits_to_slug_and_name() {
    let s = TestServer::start().await;
    let key = s.ping_key.clone();
    let long = "a".repeat(101);
    let r = ping(&s, Method::GET, &format!("{key}/{long}?create=1")).await;
    assert_eq!(
        (r.status().as_u16(), r.text().await.unwrap()),
        (400, "slug is too long".to_string())
    );
    let r = ping(
        &s,
        Method::POST,
        &format!("{key}/{}?create=1", "b".repeat(5000)),
    )
    .await;
    assert_eq!(r.status(), 400);
    assert!(s.list().await.is_empty(), "nothing was created");
    let longest = "c".repeat(100);
    let r = ping(&s, Method::GET, &format!("{key}/{longest}?create=1")).await;
    assert_eq!(r.status(), 201);
    let list = s.list().await;
    assert_eq!(
        (&list[0]["name"], &list[0]["slug"]),
        (&json!(longest), &json!(longest))
    );
    s.stop().await;
}

/// Issue 14.9: a published client lists pings and flips with `POST .../pings` and `.../flips`
/// (no slash) and follows the established server's `301` to the slash form with a GET.
#[tokio::test]
async fn post_to_pings_and_flips_without_slash_redirects_to_the_slash_form() {
    let s = TestServer::start().await;
    let check = s.create(json!({"name": "listed", "timeout": 60})).await;
    let uuid = check["ping_url"]
        .as_str()
        .and_then(|u| u.rsplit('/').next())
        .unwrap()
        .to_string();
    assert_eq!(ping(&s, Method::GET, &uuid).await.status(), 200);
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for v in ["v1", "v2", "v3"] {
        for tail in ["pings", "flips"] {
            let path = format!("/api/{v}/checks/{uuid}/{tail}");
            let r = no_redirects
                .post(s.url(&format!("{path}?x=1")))
                .header("X-Api-Key", &s.rw)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 301, "{path}");
            assert_eq!(r.headers()["location"], format!("{path}/?x=1").as_str());
            assert_eq!(r.headers()["access-control-allow-origin"], "*");
            // A client that follows redirects (reqwest's default, like the published one) gets
            // the list with a GET.
            let (code, doc) = s.call(Method::POST, &path, None).await;
            assert_eq!(code, 200, "{path}: {doc}");
            if tail == "pings" {
                assert_eq!(doc["pings"].as_array().map(Vec::len), Some(1), "{doc}");
            } else {
                assert!(doc.is_array(), "{doc}");
            }
            // With the slash, a POST is still refused; without it, a GET is served directly.
            let r = no_redirects
                .post(s.url(&format!("{path}/")))
                .header("X-Api-Key", &s.rw)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 405, "{path}/");
            let r = s.rw(Method::GET, &path).send().await.unwrap();
            assert_eq!(r.status(), 200, "{path}");
        }
    }
    s.stop().await;
}
