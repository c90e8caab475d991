//! Pushover: `POST <base>/1/messages.json`, form-encoded `token`, `user`, `title`, `message`,
//! `priority`, `url` and `url_title` (the base is `https://api.pushover.net` unless set).

use crate::notify::message::{Event, Message, Notice};
use crate::notify::{HttpRequest, Notifier, NotifyError, Outgoing, Settings};

pub(crate) const DEFAULT_URL: &str = crate::model::channel::PUSHOVER_SERVER;

pub(crate) struct Pushover {
    base: String,
    token: String,
    user: String,
    priority: i8,
}

impl Pushover {
    pub(crate) fn new(s: &Settings<'_>) -> Result<Pushover, NotifyError> {
        // Emergency priority (2) needs retry/expire receipts; it is not offered.
        let priority = match s.get("priority") {
            "" => 0,
            p => p
                .parse::<i8>()
                .ok()
                .filter(|p| (-2..=1).contains(p))
                .ok_or_else(|| NotifyError::config("pushover", "--priority is -2 to 1"))?,
        };
        Ok(Pushover {
            base: s.base_url("pushover", DEFAULT_URL)?,
            token: s.required("pushover", "token")?,
            user: s.required("pushover", "user")?,
            priority,
        })
    }
}

impl Notifier for Pushover {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        let priority = if msg.notice == Notice::Alert(Event::Down) {
            self.priority
        } else {
            self.priority.min(0)
        };
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", &self.token)
            .append_pair("user", &self.user)
            .append_pair("title", &msg.subject())
            .append_pair("message", &msg.short_text())
            .append_pair("priority", &priority.to_string())
            .append_pair("url", &msg.link)
            .append_pair("url_title", &format!("View on {}", msg.site_name))
            .finish();
        Ok(Outgoing::Http(HttpRequest {
            method: "POST".into(),
            url: format!("{}/1/messages.json", self.base),
            headers: vec![(
                "Content-Type".into(),
                "application/x-www-form-urlencoded".into(),
            )],
            body: Some(body.into_bytes()),
            accept: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::tests::sample;

    #[test]
    fn form_encoded_message() {
        let settings = vec![
            ("token".to_string(), "apptoken".to_string()),
            ("user".to_string(), "userkey".to_string()),
            ("priority".to_string(), "1".to_string()),
        ];
        let p = Pushover::new(&Settings(&settings)).expect("valid");
        let Outgoing::Http(req) = p.prepare(&sample(Event::Down)).expect("req") else {
            panic!("http")
        };
        assert_eq!(req.url, "https://api.pushover.net/1/messages.json");
        let body = String::from_utf8(req.body.expect("body")).expect("utf8");
        let pairs: Vec<(String, String)> = form_urlencoded::parse(body.as_bytes())
            .into_owned()
            .collect();
        assert!(pairs.contains(&("token".into(), "apptoken".into())));
        assert!(pairs.contains(&("title".into(), "DOWN | Backups".into())));
        assert!(pairs.contains(&("priority".into(), "1".into())));
        let bad = vec![("priority".to_string(), "2".to_string())];
        assert!(Pushover::new(&Settings(&bad)).is_err());
    }
}
