//! Matrix (client-server API v3): `PUT <homeserver>/_matrix/client/v3/rooms/<room>/send/
//! m.room.message/<txn>` with `Authorization: Bearer <access token>` and an `m.text` event.
//! The transaction id is the alert's id, so the homeserver drops a retry of a send that
//! did arrive.

use serde_json::json;

use crate::model::url::quote;
use crate::notify::message::Message;
use crate::notify::{HttpRequest, Notifier, NotifyError, Outgoing, Settings};

pub(crate) const DEFAULT_URL: &str = "https://matrix.org";

pub(crate) struct Matrix {
    base: String,
    room: String,
    token: String,
}

impl Matrix {
    pub(crate) fn new(s: &Settings<'_>) -> Result<Matrix, NotifyError> {
        let room = s.required("matrix", "room")?;
        if !room.starts_with('!') && !room.starts_with('#') {
            return Err(NotifyError::config(
                "matrix",
                "--room is a room id (!abc:server) or alias (#name:server)",
            ));
        }
        Ok(Matrix {
            base: s.base_url("matrix", DEFAULT_URL)?,
            room,
            token: s.required("matrix", "token")?,
        })
    }
}

impl Notifier for Matrix {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        let text = format!("{}\n{}", msg.subject(), msg.short_text());
        let mut req = HttpRequest::json(
            format!(
                "{}/_matrix/client/v3/rooms/{}/send/m.room.message/overdue-{}",
                self.base,
                quote(&self.room, b""),
                quote(&msg.id, b"")
            ),
            &json!({"msgtype": "m.text", "body": text}),
        );
        req.method = "PUT".into();
        req.headers
            .push(("Authorization".into(), format!("Bearer {}", self.token)));
        Ok(Outgoing::Http(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::Event;
    use crate::notify::message::tests::sample;

    #[test]
    fn puts_an_m_text_event() {
        let settings = vec![
            ("url".to_string(), "https://hs.example".to_string()),
            ("room".to_string(), "!room:hs.example".to_string()),
            ("token".to_string(), "syt_abc".to_string()),
        ];
        let m = Matrix::new(&Settings(&settings)).expect("valid");
        let Outgoing::Http(req) = m.prepare(&sample(Event::Down)).expect("req") else {
            panic!("http")
        };
        assert_eq!(req.method, "PUT");
        assert_eq!(
            req.url,
            "https://hs.example/_matrix/client/v3/rooms/%21room%3Ahs.example/send/m.room.message/overdue-42"
        );
        assert!(
            req.headers
                .contains(&("Authorization".into(), "Bearer syt_abc".into()))
        );
        let body: serde_json::Value =
            serde_json::from_slice(req.body.as_deref().expect("body")).expect("json");
        assert_eq!(body["msgtype"], "m.text");
        let bad = vec![("room".to_string(), "room".to_string())];
        assert!(Matrix::new(&Settings(&bad)).is_err());
    }
}
