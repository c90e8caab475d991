//! Check endpoints over HTTP: create, upsert, read, update, pause, resume, delete, flips,
//! channels, badges, status, CORS and methods (reference-behavior §1-§3).

use crate::common;

use common::{TestServer, status_json};
use overdue::model::ChannelConfig;
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test]
async fn create_with_defaults_has_the_reference_shape() {
    let s = TestServer::start().await;
    let (code, doc) = s.call(Method::POST, "/api/v3/checks/", None).await;
    assert_eq!(code, 201);
    let obj = doc.as_object().unwrap();
    assert_eq!(obj.len(), 38);
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(keys[0], "name");
    assert_eq!(keys[28], "timeout");
    assert_eq!(doc["timeout"], 86400);
    assert_eq!(doc["grace"], 3600);
    assert_eq!(doc["status"], "new");
    assert_eq!(doc["channels"], "");
    let uuid = doc["uuid"].as_str().unwrap();
    assert_eq!(doc["ping_url"], format!("{}/ping/{uuid}", s.base).as_str());
    assert_eq!(
        doc["update_url"],
        format!("{}/api/v3/checks/{uuid}", s.base).as_str()
    );
    #[allow(
        clippy::case_sensitive_file_extension_comparisons,
        reason = "a URL we built"
    )]
    let svg = doc["badge_url"].as_str().unwrap().ends_with(".svg");
    assert!(svg);
    s.stop().await;
}

#[tokio::test]
async fn no_redirects_without_trailing_slash() {
    let s = TestServer::start().await;
    let r = s
        .rw(Method::POST, "/api/v3/checks")
        .json(&json!({"name": "noslash"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let r = s.rw(Method::GET, "/api/v3/checks").send().await.unwrap();
    assert_eq!(r.status(), 200);
    s.stop().await;
}

#[tokio::test]
async fn upsert_by_unique_fields() {
    let s = TestServer::start().await;
    let body = json!({"name": "nightly", "tags": "a", "unique": ["name"]});
    let r = s
        .rw(Method::POST, "/api/v3/checks/")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let (code, doc) = s
        .call(
            Method::POST,
            "/api/v3/checks/",
            Some(&json!({"name": "nightly", "tags": "b", "unique": ["name"]})),
        )
        .await;
    assert_eq!((code, doc["tags"].clone()), (200, json!("b")));
    assert_eq!(s.list().await.len(), 1);
    // A unique field missing from the body always creates.
    let r = s
        .rw(Method::POST, "/api/v3/checks/")
        .json(&json!({"tags": "c", "unique": ["name"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let r = s
        .rw(Method::POST, "/api/v3/checks/")
        .json(&json!({"name": "nightly", "unique": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(s.list().await.len(), 3);
    s.stop().await;
}

#[tokio::test]
async fn update_changes_only_given_fields_and_kinds() {
    let s = TestServer::start().await;
    let c = s
        .create(json!({"name": "u", "tags": "x y", "timeout": 600}))
        .await;
    let uuid = c["uuid"].as_str().unwrap();
    let path = format!("/api/v3/checks/{uuid}");
    let (code, doc) = s
        .call(Method::POST, &path, Some(&json!({"desc": "new"})))
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        (
            doc["desc"].clone(),
            doc["tags"].clone(),
            doc["timeout"].clone()
        ),
        (json!("new"), json!("x y"), json!(600))
    );
    // Empty body: a valid no-op.
    let (code, same) = s.call(Method::POST, &path, None).await;
    assert_eq!((code, same), (200, doc));
    // subject maps to keywords and turns the subject filter on.
    let (_, doc) = s
        .call(
            Method::POST,
            &path,
            Some(&json!({"subject": "OK", "subject_fail": "BAD"})),
        )
        .await;
    assert_eq!(doc["success_kw"], "OK");
    assert_eq!(doc["failure_kw"], "BAD");
    assert_eq!(doc["filter_subject"], true);
    assert_eq!(doc["subject"], "OK");
    let (_, doc) = s
        .call(
            Method::POST,
            &path,
            Some(&json!({"subject": "S", "filter_subject": false})),
        )
        .await;
    assert_eq!(
        (
            doc["filter_subject"].clone(),
            doc["success_kw"].clone(),
            doc["subject"].clone()
        ),
        (json!(false), json!("S"), json!(""))
    );
    s.stop().await;
}

#[tokio::test]
async fn v1_and_v2_derive_slugs_from_names_v3_does_not() {
    let s = TestServer::start().await;
    let (_, doc) = s
        .call(
            Method::POST,
            "/api/v1/checks/",
            Some(&json!({"name": "Hello World!"})),
        )
        .await;
    assert_eq!(doc["slug"], "hello-world");
    assert!(
        doc["update_url"]
            .as_str()
            .unwrap()
            .contains("/api/v1/checks/")
    );
    let r = s
        .rw(Method::POST, "/api/v2/checks/")
        .json(&json!({"name": "Second One", "slug": "explicit"}))
        .send()
        .await
        .unwrap();
    assert_eq!(status_json(r).await.1["slug"], "explicit");
    let doc = s.create(json!({"name": "Third One"})).await;
    assert_eq!(doc["slug"], "");
    s.stop().await;
}

#[tokio::test]
async fn list_filters_by_slug_and_all_tags() {
    let s = TestServer::start().await;
    let a = s.create(json!({"slug": "one", "tags": "prod db"})).await;
    let b = s.create(json!({"slug": "one", "tags": "prod"})).await;
    s.create(json!({"slug": "two", "tags": "prod-db"})).await;
    let uuids = |v: Value| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["uuid"].clone())
            .collect::<Vec<_>>()
    };
    let get = |q: &'static str| {
        let req = s.rw(Method::GET, &format!("/api/v3/checks/{q}"));
        async move { status_json(req.send().await.unwrap()).await.1 }
    };
    assert_eq!(
        uuids(get("?slug=one").await),
        vec![a["uuid"].clone(), b["uuid"].clone()]
    );
    assert_eq!(
        uuids(get("?tag=prod&tag=db").await),
        vec![a["uuid"].clone()]
    );
    assert_eq!(uuids(get("?tag=db").await), vec![a["uuid"].clone()]);
    assert_eq!(
        uuids(get("?slug=one&tag=db").await),
        vec![a["uuid"].clone()]
    );
    assert!(uuids(get("?tag=nothing").await).is_empty());
    assert_eq!(uuids(get("?slug=").await).len(), 3);
    s.stop().await;
}

#[tokio::test]
async fn channels_by_star_uuid_and_name() {
    let s = TestServer::start().await;
    let mail = s
        .service
        .add_channel(
            "default",
            "mail",
            ChannelConfig::Email {
                address: "a@example.org".into(),
            },
        )
        .await
        .unwrap();
    let hook = s
        .service
        .add_channel(
            "default",
            "hook",
            ChannelConfig::webhook("http://127.0.0.1:9/"),
        )
        .await
        .unwrap();
    let mut both = [mail.uuid.to_string(), hook.uuid.to_string()];
    both.sort();
    let doc = s.create(json!({"channels": "*"})).await;
    assert_eq!(doc["channels"], both.join(","));
    let doc = s.create(json!({"channels": "hook"})).await;
    assert_eq!(doc["channels"], hook.uuid.to_string());
    let doc = s
        .create(json!({"channels": format!("{},{},{}", mail.uuid, hook.uuid, mail.uuid)}))
        .await;
    assert_eq!(doc["channels"], both.join(","));
    let uuid = doc["uuid"].as_str().unwrap();
    let (_, kept) = s
        .call(
            Method::POST,
            &format!("/api/v3/checks/{uuid}"),
            Some(&json!({"name": "x"})),
        )
        .await;
    assert_eq!(kept["channels"], both.join(","));
    let (_, cleared) = s
        .call(
            Method::POST,
            &format!("/api/v3/checks/{uuid}"),
            Some(&json!({"channels": ""})),
        )
        .await;
    assert_eq!(cleared["channels"], "");
    let (code, list) = s.call(Method::GET, "/api/v3/channels/", None).await;
    assert_eq!(code, 200);
    assert_eq!(
        list["channels"][0],
        json!({"id": mail.uuid.to_string(), "name": "mail", "kind": "email"})
    );
    // Removing a channel unassigns it.
    let doc = s.create(json!({"channels": "*"})).await;
    s.service.remove_channel("default", "hook").await.unwrap();
    assert_eq!(
        s.get_check(doc["uuid"].as_str().unwrap()).await["channels"],
        mail.uuid.to_string()
    );
    s.stop().await;
}

#[tokio::test]
async fn pause_resume_and_their_flips() {
    let s = TestServer::start().await;
    let c = s.create(json!({"name": "p"})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let r = s
        .rw(Method::POST, &format!("/api/v3/checks/{uuid}/resume"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        status_json(r).await,
        (409, json!({"error": "check is not paused"}))
    );
    let (code, doc) = s
        .call(Method::POST, &format!("/api/v3/checks/{uuid}/pause"), None)
        .await;
    assert_eq!((code, doc["status"].clone()), (200, json!("paused")));
    // Pausing again changes nothing and records no flip.
    s.rw(Method::POST, &format!("/api/v3/checks/{uuid}/pause"))
        .send()
        .await
        .unwrap();
    let (_, flips) = s
        .call(Method::GET, &format!("/api/v3/checks/{uuid}/flips/"), None)
        .await;
    assert_eq!(flips.as_array().unwrap().len(), 1);
    assert_eq!(flips[0]["up"], 0);
    let (code, doc) = s
        .call(Method::POST, &format!("/api/v3/checks/{uuid}/resume"), None)
        .await;
    assert_eq!(
        (code, doc["status"].clone(), doc["last_ping"].clone()),
        (200, json!("new"), Value::Null)
    );
    let (_, flips) = s
        .call(Method::GET, &format!("/api/v3/checks/{uuid}/flips/"), None)
        .await;
    assert_eq!(flips.as_array().unwrap().len(), 2);
    let r = s
        .rw(Method::GET, &format!("/api/v3/checks/{uuid}/pause"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    let r = s
        .rw(Method::POST, &format!("/api/v3/checks/{uuid}/pause"))
        .body("123")
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
    s.stop().await;
}

#[tokio::test]
async fn flip_filters_are_validated() {
    let s = TestServer::start().await;
    let c = s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    s.rw(Method::POST, &format!("/api/v3/checks/{uuid}/pause"))
        .send()
        .await
        .unwrap();
    for bad in [
        "start=abc",
        "start=-123",
        "start=12345678901234567890",
        "seconds=-123",
        "seconds=10.5",
        "end=",
        "start=",
    ] {
        let r = s
            .rw(Method::GET, &format!("/api/v3/checks/{uuid}/flips/?{bad}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{bad}");
    }
    let count = |q: String| {
        let req = s.rw(Method::GET, &format!("/api/v3/checks/{uuid}/flips/?{q}"));
        async move {
            status_json(req.send().await.unwrap())
                .await
                .1
                .as_array()
                .unwrap()
                .len()
        }
    };
    let now = jiff::Timestamp::now().as_second();
    assert_eq!(count(format!("start={}", now - 60)).await, 1);
    assert_eq!(count(format!("start={}", now + 60)).await, 0);
    assert_eq!(count(format!("end={}", now - 60)).await, 0);
    assert_eq!(count("seconds=60".into()).await, 1);
    assert_eq!(count("seconds=0".into()).await, 1);
    s.stop().await;
}

#[tokio::test]
async fn delete_returns_the_check_then_404() {
    let s = TestServer::start().await;
    s.service
        .add_channel(
            "default",
            "mail",
            ChannelConfig::Email {
                address: "a@example.org".into(),
            },
        )
        .await
        .unwrap();
    let c = s.create(json!({"name": "gone", "channels": "*"})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let (code, doc) = s
        .call(Method::DELETE, &format!("/api/v3/checks/{uuid}"), None)
        .await;
    assert_eq!(
        (code, doc["name"].clone(), doc["channels"].clone()),
        (200, json!("gone"), json!(""))
    );
    let r = s
        .rw(Method::DELETE, &format!("/api/v3/checks/{uuid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(status_json(r).await, (404, json!({"error": "not found"})));
    let r = s
        .rw(Method::GET, &format!("/api/v3/checks/{uuid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    s.stop().await;
}

#[tokio::test]
async fn cors_preflight_and_method_errors() {
    let s = TestServer::start().await;
    let c = s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let r = s
        .anon(Method::OPTIONS, &format!("/api/v3/checks/{uuid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(r.headers()["access-control-allow-origin"], "*");
    assert_eq!(r.headers()["access-control-allow-headers"], "X-Api-Key");
    assert_eq!(r.headers()["access-control-max-age"], "600");
    assert!(
        r.headers()["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("DELETE")
    );
    let r = s.rw(Method::PUT, "/api/v3/checks/").send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.headers()["access-control-allow-origin"], "*");
    let key = overdue::model::check::unique_key(&uuid.parse().unwrap());
    let r = s
        .rw(Method::POST, &format!("/api/v3/checks/{key}"))
        .json(&json!({"name": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    for path in [
        "/api/v3/checks/not-a-uuid",
        "/api/v3/nothing/",
        "/nothing-here/",
        "/api/v9/checks/",
    ] {
        let r = s.rw(Method::GET, path).send().await.unwrap();
        assert_eq!(
            status_json(r).await,
            (404, json!({"error": "not found"})),
            "{path}"
        );
    }
    s.stop().await;
}

#[tokio::test]
async fn status_and_badges_endpoints() {
    let s = TestServer::start().await;
    let r = s.anon(Method::GET, "/api/v3/status/").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "OK");
    s.create(json!({"tags": "db@dc1 prod"})).await;
    let (code, doc) = status_json(s.ro(Method::GET, "/api/v3/badges/").send().await.unwrap()).await;
    assert_eq!(code, 200);
    let badges = doc["badges"].as_object().unwrap();
    let mut names: Vec<&str> = badges.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["*", "db@dc1", "prod"]);
    let entry = &badges["db@dc1"];
    let keys: Vec<&str> = entry
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["svg", "svg3", "json", "json3", "shields", "shields3"]
    );
    assert!(
        entry["svg"]
            .as_str()
            .unwrap()
            .ends_with("-2/db%2540dc1.svg")
    );
    #[allow(
        clippy::case_sensitive_file_extension_comparisons,
        reason = "a URL we built"
    )]
    let json = badges["*"]["json3"].as_str().unwrap().ends_with(".json");
    assert!(json);
    s.stop().await;
}

#[tokio::test]
async fn state_survives_a_restart() {
    let s = TestServer::start().await;
    let c = s
        .create(json!({"name": "durable", "slug": "d", "tags": "t"}))
        .await;
    s.rw(
        Method::POST,
        &format!("/api/v3/checks/{}/pause", c["uuid"].as_str().unwrap()),
    )
    .send()
    .await
    .unwrap();
    let dir = s.shutdown().await;
    let path = dir.path().to_path_buf();
    let reopened = overdue::service::Service::open(
        &path,
        common::engine(&path, overdue::service::ServiceConfig::default()),
        overdue::service::Clock::System,
    )
    .unwrap();
    let uuid: uuid::Uuid = c["uuid"].as_str().unwrap().parse().unwrap();
    let check = reopened
        .read(|st| st.check(&uuid).cloned())
        .expect("check survived");
    assert_eq!(check.name, "durable");
    assert_eq!(check.status, overdue::model::StoredStatus::Paused);
    assert_eq!(
        reopened.read(|st| st.checks_by_slug(&check.project, "d").len()),
        1
    );
    assert_eq!(reopened.flips(uuid).unwrap().len(), 1);
    reopened.close().await;
}

/// Issue 14.10: a legacy zone name comes back as it was sent (declarative clients would see
/// endless drift otherwise), also after a restart, and is evaluated as its canonical zone.
#[tokio::test]
async fn legacy_time_zone_names_are_kept_as_given_and_evaluated_canonically() {
    let s = TestServer::start().await;
    let mut next = Vec::new();
    for (given, canonical) in [
        ("US/Eastern", "America/New_York"),
        ("EST", "America/Panama"),
    ] {
        let mut pair = Vec::new();
        for tz in [given, canonical] {
            let c = s
                .create(json!({"name": tz, "schedule": "0 3 * * *", "tz": tz}))
                .await;
            assert_eq!(c["tz"], tz, "{c}");
            let uuid = c["uuid"].as_str().unwrap().to_string();
            let r = s
                .anon(Method::GET, &format!("/ping/{uuid}"))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            let c = s.get_check(&uuid).await;
            assert_eq!(c["tz"], tz, "{c}");
            pair.push((uuid, c["next_ping"].clone()));
        }
        assert!(pair[0].1.is_string(), "{pair:?}");
        assert_eq!(pair[0].1, pair[1].1, "{given} evaluates as {canonical}");
        next.push((given, pair[0].0.clone()));
    }
    // An update that names the zone again keeps it too.
    let (given, uuid) = &next[0];
    let (code, doc) = s
        .call(
            Method::POST,
            &format!("/api/v3/checks/{uuid}"),
            Some(&json!({"tz": given})),
        )
        .await;
    assert_eq!((code, &doc["tz"]), (200, &json!(given)), "{doc}");
    let dir = s.shutdown().await;
    let reopened = overdue::service::Service::open(
        dir.path(),
        common::engine(dir.path(), overdue::service::ServiceConfig::default()),
        overdue::service::Clock::System,
    )
    .unwrap();
    for (given, uuid) in next {
        let uuid: uuid::Uuid = uuid.parse().unwrap();
        let tz = reopened.read(|st| st.check(&uuid).map(|c| c.tz.to_string()));
        assert_eq!(tz.as_deref(), Some(given));
    }
    reopened.close().await;
}
