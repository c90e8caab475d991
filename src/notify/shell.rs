//! Shell: runs a command with `sh -c`, one per direction, with the alert's values in
//! environment variables (`CODE`, `STATUS`, `NOW`, `NAME`, `SLUG`, `TAGS`, `REASON`,
//! `EXITSTATUS`, `URL`), so values are never pasted into the command line. It runs code on
//! the server, so the transport refuses it unless `serve --allow-shell-channels` is set.

use crate::notify::message::{Event, Message, Notice};
use crate::notify::{Command, Notifier, NotifyError, Outgoing, Settings};

pub(crate) struct Shell {
    down: String,
    up: String,
}

impl Shell {
    pub(crate) fn new(s: &Settings<'_>) -> Result<Shell, NotifyError> {
        let (down, up) = (s.get("cmd_down").to_string(), s.get("cmd_up").to_string());
        if down.is_empty() && up.is_empty() {
            return Err(NotifyError::config("shell", "needs --cmd-down or --cmd-up"));
        }
        Ok(Shell { down, up })
    }
}

/// The environment of a command.
pub(crate) fn env(msg: &Message) -> Vec<(String, String)> {
    let exit = msg
        .last_ping
        .as_ref()
        .and_then(|p| p.exit_status)
        .map_or(-1, i32::from);
    vec![
        ("CODE".into(), msg.check.to_string()),
        ("STATUS".into(), msg.status().into()),
        ("NOW".into(), crate::model::time::iso_seconds(msg.at)),
        ("NAME".into(), msg.name.clone()),
        ("SLUG".into(), msg.slug.clone()),
        ("TAGS".into(), msg.tags.clone()),
        ("REASON".into(), msg.reason.clone()),
        ("EXITSTATUS".into(), exit.to_string()),
        ("URL".into(), msg.link.clone()),
    ]
}

impl Notifier for Shell {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        let command = match msg.notice {
            Notice::Alert(Event::Down | Event::Late | Event::Failure) => &self.down,
            Notice::Alert(Event::Up) => &self.up,
            Notice::Test if self.down.is_empty() => &self.up,
            Notice::Test => &self.down,
        };
        if command.is_empty() {
            return Err(NotifyError::Skip);
        }
        Ok(Outgoing::Command(Command {
            command: command.clone(),
            env: env(msg),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::tests::sample;

    #[test]
    fn values_travel_in_the_environment() {
        let settings = vec![("cmd_down".to_string(), "notify-send \"$NAME\"".to_string())];
        let s = Shell::new(&Settings(&settings)).expect("valid");
        let Outgoing::Command(c) = s.prepare(&sample(Event::Down)).expect("cmd") else {
            panic!("command")
        };
        assert_eq!(c.command, "notify-send \"$NAME\"");
        assert!(c.env.contains(&("NAME".into(), "Backups".into())));
        assert!(c.env.contains(&("EXITSTATUS".into(), "3".into())));
        assert_eq!(s.prepare(&sample(Event::Up)), Err(NotifyError::Skip));
        assert!(Shell::new(&Settings(&[])).is_err());
    }
}
