//! Discord: a POST of `{"content", "embeds": [{"title", "description", "url", "color"}]}` to
//! the channel's webhook URL (`https://discord.com/api/webhooks/<id>/<token>`).

use serde_json::json;

use crate::notify::message::{Event, Message, Notice};
use crate::notify::{HttpRequest, Notifier, NotifyError, Outgoing, Settings};

pub(crate) struct Discord {
    url: String,
}

impl Discord {
    pub(crate) fn new(s: &Settings<'_>) -> Result<Discord, NotifyError> {
        let url = s.required("discord", "url")?;
        crate::notify::check_http_url("discord", &url)?;
        Ok(Discord { url })
    }
}

/// Embed colours: red, green, amber for late and failure notices, grey.
pub(crate) fn color(notice: Notice) -> u32 {
    match notice {
        Notice::Alert(Event::Down) => 0xd9_3025,
        Notice::Alert(Event::Up) => 0x1e_a446,
        Notice::Alert(Event::Late | Event::Failure) => 0xe0_8e0b,
        Notice::Test => 0x80_8080,
    }
}

impl Notifier for Discord {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        Ok(Outgoing::Http(HttpRequest::json(
            self.url.clone(),
            &json!({
                "content": msg.subject(),
                "embeds": [{
                    "title": msg.headline(),
                    "description": msg.short_text(),
                    "url": msg.link,
                    "color": color(msg.notice),
                }],
            }),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::tests::sample;

    #[test]
    #[allow(
        clippy::unreadable_literal,
        reason = "a colour reads as its six hex digits"
    )]
    fn posts_content_and_an_embed() {
        let settings = vec![(
            "url".to_string(),
            "https://discord.com/api/webhooks/1/abc".to_string(),
        )];
        let d = Discord::new(&Settings(&settings)).expect("valid");
        let Outgoing::Http(req) = d.prepare(&sample(Event::Down)).expect("req") else {
            panic!("http")
        };
        assert_eq!(req.url, "https://discord.com/api/webhooks/1/abc");
        let body: serde_json::Value =
            serde_json::from_slice(req.body.as_deref().expect("body")).expect("json");
        assert_eq!(body["content"], "DOWN | Backups");
        assert_eq!(body["embeds"][0]["color"], 0xd93025);
        assert!(Discord::new(&Settings(&[])).is_err());
    }
}
