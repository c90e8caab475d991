//! Telegram Bot API: `POST <base>/bot<token>/sendMessage` with JSON `{"chat_id", "text",
//! "disable_web_page_preview"}`; the base is `https://api.telegram.org` unless set.

use serde_json::json;

use crate::notify::message::Message;
use crate::notify::{HttpRequest, Notifier, NotifyError, Outgoing, Settings};

pub(crate) const DEFAULT_URL: &str = "https://api.telegram.org";

pub(crate) struct Telegram {
    base: String,
    token: String,
    chat: String,
}

impl Telegram {
    pub(crate) fn new(s: &Settings<'_>) -> Result<Telegram, NotifyError> {
        let token = s.required("telegram", "token")?;
        // Bot tokens are `<digits>:<letters, digits, _ and ->` and go into the path as is.
        if !token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'_' | b'-'))
        {
            return Err(NotifyError::config(
                "telegram",
                "--token is not a bot token",
            ));
        }
        Ok(Telegram {
            base: s.base_url("telegram", DEFAULT_URL)?,
            token,
            chat: s.required("telegram", "chat")?,
        })
    }
}

impl Notifier for Telegram {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        // A numeric chat id is sent as a number, a @channel name as a string.
        let chat = self
            .chat
            .parse::<i64>()
            .map_or_else(|_| json!(self.chat), |id| json!(id));
        Ok(Outgoing::Http(HttpRequest::json(
            format!("{}/bot{}/sendMessage", self.base, self.token),
            &json!({
                "chat_id": chat,
                "text": format!("{}\n{}", msg.subject(), msg.short_text()),
                "disable_web_page_preview": true,
            }),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::Event;
    use crate::notify::message::tests::sample;

    #[test]
    fn send_message_with_the_bot_token_in_the_path() {
        let settings = vec![
            ("token".to_string(), "123:ABC".to_string()),
            ("chat".to_string(), "-100200".to_string()),
        ];
        let t = Telegram::new(&Settings(&settings)).expect("valid");
        let Outgoing::Http(req) = t.prepare(&sample(Event::Down)).expect("req") else {
            panic!("http")
        };
        assert_eq!(req.url, "https://api.telegram.org/bot123:ABC/sendMessage");
        let body: serde_json::Value =
            serde_json::from_slice(req.body.as_deref().expect("body")).expect("json");
        assert_eq!(body["chat_id"], -100_200);
        assert!(
            body["text"]
                .as_str()
                .expect("text")
                .starts_with("DOWN | Backups\n")
        );
    }
}
