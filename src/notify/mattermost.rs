//! Mattermost incoming webhooks: the Slack-compatible payload (`slack::payload`) plus the
//! `username` the post appears under.

use crate::notify::message::Message;
use crate::notify::{HttpRequest, Notifier, NotifyError, Outgoing, Settings};

pub(crate) struct Mattermost {
    url: String,
}

impl Mattermost {
    pub(crate) fn new(s: &Settings<'_>) -> Result<Mattermost, NotifyError> {
        let url = s.required("mattermost", "url")?;
        crate::notify::check_http_url("mattermost", &url)?;
        Ok(Mattermost { url })
    }
}

impl Notifier for Mattermost {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        let mut body = crate::notify::slack::payload(msg);
        body["username"] = serde_json::Value::String(msg.site_name.clone());
        Ok(Outgoing::Http(HttpRequest::json(self.url.clone(), &body)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::Event;
    use crate::notify::message::tests::sample;

    #[test]
    fn slack_shape_with_a_username() {
        let settings = vec![(
            "url".to_string(),
            "https://mm.example/hooks/xyz".to_string(),
        )];
        let m = Mattermost::new(&Settings(&settings)).expect("valid");
        let Outgoing::Http(req) = m.prepare(&sample(Event::Down)).expect("req") else {
            panic!("http")
        };
        let body: serde_json::Value =
            serde_json::from_slice(req.body.as_deref().expect("body")).expect("json");
        assert_eq!(body["username"], "overdue");
        assert_eq!(body["attachments"][0]["color"], "danger");
    }
}
