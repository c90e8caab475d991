//! The dashboard's integrations and project pages: channels added, tested against a real
//! HTTP receiver and removed; API keys created (shown once) and removed; read-only sessions
//! refused every change and shown no secrets.

use std::time::Duration;

use crate::common::TestServer;
use crate::receivers::HttpReceiver;

fn project_of(s: &TestServer) -> uuid::Uuid {
    s.service
        .read(|st| st.project_by_name("default").expect("default").uuid)
}

#[tokio::test]
async fn a_webhook_is_added_listed_by_host_tested_and_removed() {
    let s = TestServer::start().await;
    let hook = HttpReceiver::start().await;
    let p = project_of(&s);
    let web = s.sign_in(&s.rw).await;
    let url = format!("{}/hook/secret-token?k=qsecret999", hook.base);
    let r = web
        .post(
            &format!("/projects/{p}/add_channel/"),
            &[("kind", "webhook"), ("name", "ops hook"), ("url", &url)],
        )
        .await;
    assert_eq!(r.status(), 303);
    let (code, page) = web.get(&format!("/projects/{p}/integrations/")).await;
    assert_eq!(code, 200);
    assert!(page.contains("ops hook"));
    let host = hook.base.trim_start_matches("http://");
    assert!(page.contains(host), "the host is shown");
    assert!(
        !page.contains("secret-token") && !page.contains("qsecret999"),
        "{page}"
    );
    let channel = s.service.read(|st| st.channels_of(&p)[0].uuid.to_string());
    let r = web
        .post(
            &format!("/projects/{p}/test_channel/"),
            &[("channel", &channel)],
        )
        .await;
    assert_eq!(r.status(), 200);
    let body = r.text().await.unwrap();
    assert!(body.contains("delivered"), "{body}");
    let got = hook
        .next(Duration::from_secs(5))
        .await
        .expect("a test request");
    assert_eq!(got.path, "/hook/secret-token");
    let (_, page) = web.get(&format!("/projects/{p}/integrations/")).await;
    assert!(
        page.contains("delivered, code 200"),
        "the delivery is listed"
    );
    let r = web
        .post(
            &format!("/projects/{p}/remove_channel/"),
            &[("channel", &channel)],
        )
        .await;
    assert_eq!(r.status(), 303);
    assert!(s.service.read(|st| st.channels_of(&p).is_empty()));
    s.stop().await;
}

#[tokio::test]
async fn bad_channels_are_refused_with_the_notifiers_message() {
    let s = TestServer::start().await;
    let p = project_of(&s);
    let web = s.sign_in(&s.rw).await;
    for fields in [
        vec![("kind", "webhook")],
        vec![("kind", "email"), ("value", "not an address")],
        vec![("kind", "shell")],
    ] {
        let r = web
            .post(&format!("/projects/{p}/add_channel/"), &fields)
            .await;
        assert_eq!(r.status(), 400, "{fields:?}");
        assert!(r.text().await.unwrap().contains("flash error"));
    }
    assert!(s.service.read(|st| st.channels_of(&p).is_empty()));
    s.stop().await;
}

#[tokio::test]
async fn a_key_is_shown_once_and_can_be_removed() {
    let s = TestServer::start().await;
    let p = project_of(&s);
    let web = s.sign_in(&s.rw).await;
    let r = web
        .post(
            &format!("/projects/{p}/add_key/"),
            &[("label", "backup script"), ("read_only", "1")],
        )
        .await;
    assert_eq!(r.status(), 200);
    let page = r.text().await.unwrap();
    let at = page.find("hcr_").expect("the new key on the page");
    let key = &page[at..at + 32];
    let (_, again) = web.get(&format!("/projects/{p}/settings/")).await;
    assert!(!again.contains(key), "shown once");
    assert!(again.contains("backup script"));
    let id = &key[..12];
    // The new key works, until it is removed.
    let api = |k: String| {
        let url = s.url("/api/v3/checks/");
        let http = s.http.clone();
        async move {
            http.get(url)
                .header("X-Api-Key", k)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(api(key.to_string()).await, 200);
    let r = web
        .post(&format!("/projects/{p}/remove_key/"), &[("key", id)])
        .await;
    assert_eq!(r.status(), 303);
    assert_eq!(api(key.to_string()).await, 401);
    s.stop().await;
}

#[tokio::test]
async fn read_only_sessions_change_nothing_and_see_no_secrets() {
    let s = TestServer::start().await;
    let p = project_of(&s);
    let ping_key = s.ping_key.clone();
    s.create(serde_json::json!({"name": "x", "tags": "prod"}))
        .await;
    let web = s.sign_in(&s.ro).await;
    let (code, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert_eq!(code, 200);
    assert!(page.contains("/badge/"), "badges are public");
    assert!(!page.contains(&ping_key), "no ping key");
    assert!(!page.contains(&s.rw[..12]), "no key identifiers");
    for (path, fields) in [
        (
            "add_channel",
            vec![("kind", "email"), ("value", "a@b.example")],
        ),
        ("add_key", vec![("label", "x")]),
        ("remove_key", vec![("key", &s.rw[..12])]),
    ] {
        let r = web.post(&format!("/projects/{p}/{path}/"), &fields).await;
        assert_eq!(r.status(), 403, "{path}");
    }
    assert!(s.service.read(|st| st.channels_of(&p).is_empty()));
    s.stop().await;
}
