//! Gotify (self-hosted): `POST <base>/message` with the application token in `X-Gotify-Key`
//! and a JSON `{"title", "message", "priority"}`.

use serde_json::json;

use crate::notify::message::{Event, Message, Notice};
use crate::notify::{HttpRequest, Notifier, NotifyError, Outgoing, Settings};

pub(crate) struct Gotify {
    base: String,
    token: String,
}

impl Gotify {
    pub(crate) fn new(s: &Settings<'_>) -> Result<Gotify, NotifyError> {
        if s.get("url").is_empty() {
            return Err(NotifyError::config(
                "gotify",
                "needs --url (the server's address)",
            ));
        }
        Ok(Gotify {
            base: s.base_url("gotify", "")?,
            token: s.required("gotify", "token")?,
        })
    }
}

impl Notifier for Gotify {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        let priority = if msg.notice == Notice::Alert(Event::Down) {
            8
        } else {
            5
        };
        let mut req = HttpRequest::json(
            format!("{}/message", self.base),
            &json!({"title": msg.subject(), "message": msg.short_text(), "priority": priority}),
        );
        req.headers
            .push(("X-Gotify-Key".into(), self.token.clone()));
        Ok(Outgoing::Http(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::tests::sample;

    #[test]
    fn posts_a_message_with_the_app_token() {
        let settings = vec![
            ("url".to_string(), "https://gotify.example".to_string()),
            ("token".to_string(), "AppTok".to_string()),
        ];
        let g = Gotify::new(&Settings(&settings)).expect("valid");
        let Outgoing::Http(req) = g.prepare(&sample(Event::Up)).expect("req") else {
            panic!("http")
        };
        assert_eq!(req.url, "https://gotify.example/message");
        assert!(
            req.headers
                .contains(&("X-Gotify-Key".into(), "AppTok".into()))
        );
        let body: serde_json::Value =
            serde_json::from_slice(req.body.as_deref().expect("body")).expect("json");
        assert_eq!(body["title"], "UP | Backups");
        assert_eq!(body["priority"], 5);
        assert!(
            Gotify::new(&Settings(&settings[1..])).is_err(),
            "no server URL"
        );
    }
}
