//! ntfy (ntfy.sh or self-hosted): a JSON publish to the server's root URL
//! (`{"topic", "title", "message", "priority", "tags", "click"}`), with an optional access
//! token as `Authorization: Bearer`.

use serde_json::json;

use crate::notify::message::{Event, Message, Notice};
use crate::notify::{HttpRequest, Notifier, NotifyError, Outgoing, Settings};

pub(crate) const DEFAULT_URL: &str = crate::model::channel::NTFY_SERVER;

pub(crate) struct Ntfy {
    base: String,
    topic: String,
    token: String,
    priority: u8,
}

impl Ntfy {
    pub(crate) fn new(s: &Settings<'_>) -> Result<Ntfy, NotifyError> {
        let priority = match s.get("priority") {
            "" => 4,
            p => p
                .parse::<u8>()
                .ok()
                .filter(|p| (1..=5).contains(p))
                .ok_or_else(|| NotifyError::config("ntfy", "--priority is 1 to 5"))?,
        };
        Ok(Ntfy {
            base: s.base_url("ntfy", DEFAULT_URL)?,
            topic: s.required("ntfy", "topic")?,
            token: s.get("token").to_string(),
            priority,
        })
    }
}

impl Notifier for Ntfy {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        let (tag, priority) = match msg.notice {
            Notice::Alert(Event::Down) => ("red_circle", self.priority),
            Notice::Alert(Event::Up) => ("green_circle", 3),
            Notice::Alert(Event::Late | Event::Failure) => ("yellow_circle", self.priority.min(4)),
            Notice::Test => ("white_circle", 3),
        };
        let mut req = HttpRequest::json(
            format!("{}/", self.base),
            &json!({
                "topic": self.topic,
                "title": msg.subject(),
                "message": msg.short_text(),
                "priority": priority,
                "tags": [tag],
                "click": msg.link,
            }),
        );
        if !self.token.is_empty() {
            req.headers
                .push(("Authorization".into(), format!("Bearer {}", self.token)));
        }
        Ok(Outgoing::Http(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::tests::sample;

    #[test]
    fn publishes_json_to_the_root() {
        let settings = vec![
            ("url".to_string(), "https://ntfy.example/".to_string()),
            ("topic".to_string(), "alerts".to_string()),
            ("token".to_string(), "tk_1".to_string()),
        ];
        let n = Ntfy::new(&Settings(&settings)).expect("valid");
        let Outgoing::Http(req) = n.prepare(&sample(Event::Down)).expect("req") else {
            panic!("http")
        };
        assert_eq!(req.url, "https://ntfy.example/");
        assert!(
            req.headers
                .contains(&("Authorization".into(), "Bearer tk_1".into()))
        );
        let body: serde_json::Value =
            serde_json::from_slice(req.body.as_deref().expect("body")).expect("json");
        assert_eq!(body["topic"], "alerts");
        assert_eq!(body["title"], "DOWN | Backups");
        assert_eq!(body["priority"], 4);
        assert!(Ntfy::new(&Settings(&[])).is_err(), "topic is required");
    }
}
