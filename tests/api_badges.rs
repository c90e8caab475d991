//! Badges over HTTP (reference-behavior §2.16, §7): the URLs the API lists work, aggregate the
//! right checks, and refuse wrong signatures and formats.

use crate::common;

use common::{TestServer, status_json};
use reqwest::Method;
use serde_json::{Value, json};

fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest[rest.find('/').unwrap_or(rest.len())..].to_string()
}

async fn get(s: &TestServer, url: &str) -> (u16, String, String) {
    let r = s.anon(Method::GET, &path_of(url)).send().await.unwrap();
    let status = r.status().as_u16();
    let ctype = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, ctype, r.text().await.unwrap())
}

#[tokio::test]
async fn project_badges_follow_their_checks() {
    let s = TestServer::start().await;
    let a = s
        .create(json!({"tags": "db@dc1 prod", "timeout": 60, "grace": 60}))
        .await;
    s.create(json!({"tags": "prod"})).await;
    let (_, doc) = status_json(s.ro(Method::GET, "/api/v3/badges/").send().await.unwrap()).await;
    let tag = &doc["badges"]["db@dc1"];
    let (code, ctype, body) = get(&s, tag["svg"].as_str().unwrap()).await;
    assert_eq!((code, ctype.as_str()), (200, "image/svg+xml"));
    assert!(body.starts_with("<svg") && body.contains("#4c1") && body.contains(">db@dc1<"));
    let (_, _, body) = get(&s, tag["json"].as_str().unwrap()).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "up", "total": 1, "grace": 0, "down": 0})
    );
    s.anon(
        Method::GET,
        &format!("/ping/{}/fail", a["uuid"].as_str().unwrap()),
    )
    .send()
    .await
    .unwrap();
    let (_, _, body) = get(&s, tag["shields3"].as_str().unwrap()).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"schemaVersion": 1, "label": "db@dc1", "message": "down", "color": "critical"})
    );
    let all = &doc["badges"]["*"];
    let (_, _, body) = get(&s, all["json3"].as_str().unwrap()).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "down", "total": 2, "grace": 0, "down": 1})
    );
    let (_, _, body) = get(&s, all["shields"].as_str().unwrap()).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["label"],
        "Overdue"
    );
    // Wrong signatures and formats are 404; the signature's first 8 characters decide.
    let svg = path_of(tag["svg"].as_str().unwrap());
    let mut parts: Vec<String> = svg.split('/').map(str::to_string).collect();
    assert!(
        parts[3].ends_with("-2"),
        "{svg}: /badge/<key>/<sig>-2/<tag>.svg"
    );
    let real_sig = parts[3].clone();
    parts[3] = format!("AAAAAAAA{}", &real_sig[8..]);
    assert_eq!(
        s.anon(Method::GET, &parts.join("/"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    // Anything after the first 8 characters other than "-2" means three states.
    parts[3] = format!("{}XYZ", &real_sig[..8]);
    let (code, _, _) = get(&s, &parts.join("/")).await;
    assert_eq!(code, 200);
    let json_path = path_of(tag["json"].as_str().unwrap());
    assert_eq!(
        s.anon(Method::GET, &format!("{json_path}foo"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(
        s.anon(Method::OPTIONS, &json_path)
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert_eq!(
        s.anon(Method::POST, &json_path)
            .send()
            .await
            .unwrap()
            .status(),
        405
    );
    let r = s.anon(Method::GET, &json_path).send().await.unwrap();
    assert_eq!(r.headers()["access-control-allow-origin"], "*");
    assert!(
        r.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("no-cache")
    );
    s.stop().await;
}

#[tokio::test]
async fn check_badges() {
    let s = TestServer::start().await;
    let named = s.create(json!({"name": "Backups"})).await;
    let unnamed = s.create(json!({})).await;
    let (code, ctype, body) = get(&s, named["badge_url"].as_str().unwrap()).await;
    assert_eq!((code, ctype.as_str()), (200, "image/svg+xml"));
    assert!(body.contains(">Backups<"));
    let (_, _, body) = get(&s, unnamed["badge_url"].as_str().unwrap()).await;
    assert!(
        body.contains(unnamed["uuid"].as_str().unwrap()),
        "an unnamed check is labelled by its UUID"
    );
    let json3 = path_of(named["badge_url"].as_str().unwrap())
        .replace("/b/2/", "/b/3/")
        .replace(".svg", ".json");
    let (_, _, body) = get(&s, &json3).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "up", "total": 1, "grace": 0, "down": 0})
    );
    assert_eq!(
        s.anon(Method::GET, "/b/2/00000000-0000-4000-8000-000000000000.svg")
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    let bad_format = path_of(named["badge_url"].as_str().unwrap()).replace(".svg", ".png");
    assert_eq!(
        s.anon(Method::GET, &bad_format)
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    // A deleted check's badge is gone.
    s.rw(
        Method::DELETE,
        &format!("/api/v3/checks/{}", named["uuid"].as_str().unwrap()),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(
        s.anon(Method::GET, &path_of(named["badge_url"].as_str().unwrap()))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    s.stop().await;
}
