//! Confirmation before a command that deletes more than one object (`project rm`). It happens
//! in the command-line process, before the command is sent: a read-only query says what would
//! go, the user is asked on the terminal, and only a "yes" sends the command. `--yes` skips
//! the question; without a terminal to ask on and without `--yes` the command is refused, so a
//! script never deletes by accident nor hangs waiting for an answer.

use std::io::{BufRead, IsTerminal, Write};

use crate::cli::admin::{AdminCommand, AdminOutput, ProjectCmd};
use crate::cli::control;
use crate::cli::datadir::Place;
use crate::cli::protocol::Reply;

/// What to do about a destructive command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Run it (`--yes`).
    Proceed,
    /// Ask on the terminal.
    Ask,
    /// Refuse: nobody can be asked.
    Refuse,
}

/// `--yes` proceeds; else ask if there is a terminal to ask on, refuse if not.
pub(crate) fn decide(yes: bool, interactive: bool) -> Decision {
    match (yes, interactive) {
        (true, _) => Decision::Proceed,
        (false, true) => Decision::Ask,
        (false, false) => Decision::Refuse,
    }
}

/// Whether an answer to the question is a yes (`y` or `yes`, any case); anything else,
/// including no answer, is a no.
pub(crate) fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Asks `question` on `output` and reads one line from `input`: whether the answer is yes.
pub(crate) fn ask(question: &str, input: &mut impl BufRead, output: &mut impl Write) -> bool {
    let _ = write!(output, "{question} [y/N] ");
    let _ = output.flush();
    let mut answer = String::new();
    match input.read_line(&mut answer) {
        Ok(_) => is_yes(&answer),
        Err(_) => false,
    }
}

/// The object a command would delete, with what goes along with it, if it deletes more than
/// one: the read-only query that describes it, and the `--yes` flag.
fn destructive(cmd: &AdminCommand) -> Option<(AdminCommand, bool)> {
    match cmd {
        AdminCommand::Project(ProjectCmd::Rm { name, yes }) => {
            Some((AdminCommand::ProjectContents { name: name.clone() }, *yes))
        }
        _ => None,
    }
}

/// Lets `cmd` run (Ok) or says why not (the output to print). Commands that delete at most
/// one object pass at once.
pub(crate) async fn confirm(data: &Place, cmd: &AdminCommand) -> Result<(), AdminOutput> {
    let Some((query, yes)) = destructive(cmd) else {
        return Ok(());
    };
    let interactive = std::io::stdin().is_terminal();
    let decision = decide(yes, interactive);
    if decision == Decision::Proceed {
        return Ok(());
    }
    // The same query whether the service runs or not; a project that does not exist fails
    // here with the message `rm` would give.
    let what = match control::request(data, query).await {
        Reply::ProjectContents(contents) => contents.describe(),
        other => return Err(other.failure()),
    };
    if decision == Decision::Refuse {
        return Err(AdminOutput::error(format!(
            "this would delete {what}, with their pings and history; \
             run it on a terminal to confirm, or add --yes"
        )));
    }
    let question = format!("This deletes {what}, with their pings and history.\nDelete?");
    if ask(
        &question,
        &mut std::io::stdin().lock(),
        &mut std::io::stderr(),
    ) {
        Ok(())
    } else {
        Err(AdminOutput::error("nothing was deleted"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yes_proceeds_a_terminal_asks_and_a_script_is_refused() {
        assert_eq!(decide(true, false), Decision::Proceed);
        assert_eq!(decide(true, true), Decision::Proceed);
        assert_eq!(decide(false, true), Decision::Ask);
        assert_eq!(decide(false, false), Decision::Refuse);
    }

    #[test]
    fn only_an_explicit_yes_confirms() {
        for answer in ["y\n", "Y\n", "yes\n", " YES \n"] {
            assert!(is_yes(answer), "{answer:?}");
        }
        for answer in ["", "\n", "n\n", "no\n", "yep\n", "ye s\n"] {
            assert!(!is_yes(answer), "{answer:?}");
        }
    }

    #[test]
    fn the_question_is_asked_and_one_line_read() {
        let mut out = Vec::new();
        assert!(ask("Delete?", &mut &b"y\nrest\n"[..], &mut out));
        assert_eq!(String::from_utf8(out).expect("utf-8"), "Delete? [y/N] ");
        assert!(
            !ask("Delete?", &mut &b""[..], &mut Vec::new()),
            "end of input"
        );
    }

    #[test]
    fn only_project_rm_asks() {
        let rm = |yes| {
            AdminCommand::Project(ProjectCmd::Rm {
                name: "ops".into(),
                yes,
            })
        };
        assert!(matches!(
            destructive(&rm(false)),
            Some((AdminCommand::ProjectContents { .. }, false))
        ));
        assert!(matches!(destructive(&rm(true)), Some((_, true))));
        let ls = AdminCommand::Project(ProjectCmd::Ls { json: false });
        assert!(destructive(&ls).is_none());
    }
}
