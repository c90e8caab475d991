//! Slack incoming webhooks: a POST of `{"text", "attachments": [{"color", "title",
//! "title_link", "text"}]}` to the webhook URL. Mattermost accepts the same shape.

use serde_json::{Value, json};

use crate::notify::message::{Event, Message, Notice};
use crate::notify::{HttpRequest, Notifier, NotifyError, Outgoing, Settings};

pub(crate) struct Slack {
    url: String,
}

impl Slack {
    pub(crate) fn new(s: &Settings<'_>) -> Result<Slack, NotifyError> {
        let url = s.required("slack", "url")?;
        crate::notify::check_http_url("slack", &url)?;
        Ok(Slack { url })
    }
}

/// The Slack-compatible payload (shared with Mattermost).
pub(crate) fn payload(msg: &Message) -> Value {
    let color = match msg.notice {
        Notice::Alert(Event::Down) => "danger",
        Notice::Alert(Event::Up) => "good",
        Notice::Alert(Event::Late | Event::Failure) => "warning",
        Notice::Test => "#808080",
    };
    json!({
        "text": msg.subject(),
        "attachments": [{
            "color": color,
            "title": msg.display_name(),
            "title_link": msg.link,
            "text": msg.short_text(),
            "fallback": msg.subject(),
        }],
    })
}

impl Notifier for Slack {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        Ok(Outgoing::Http(HttpRequest::json(
            self.url.clone(),
            &payload(msg),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::tests::sample;

    #[test]
    fn posts_text_and_an_attachment() {
        let settings = vec![(
            "url".to_string(),
            "https://hooks.slack.com/services/T/B/X".to_string(),
        )];
        let s = Slack::new(&Settings(&settings)).expect("valid");
        let Outgoing::Http(req) = s.prepare(&sample(Event::Up)).expect("req") else {
            panic!("http")
        };
        let body: serde_json::Value =
            serde_json::from_slice(req.body.as_deref().expect("body")).expect("json");
        assert_eq!(body["text"], "UP | Backups");
        assert_eq!(body["attachments"][0]["color"], "good");
        assert_eq!(req.method, "POST");
    }
}
