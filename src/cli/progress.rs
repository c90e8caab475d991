//! Progress of long commands (import, export, backup, migration) on stderr, drawn only when
//! stderr is a terminal: piped or redirected, a command prints nothing but its results.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether progress is drawn at all.
pub(crate) fn shown() -> bool {
    std::io::stderr().is_terminal()
}

fn styled(bar: ProgressBar, template: &str) -> ProgressBar {
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

fn new(len: Option<u64>) -> ProgressBar {
    if !shown() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A bar counting `len` checks, with `message` before it.
pub(crate) fn checks(len: u64, message: &str) -> ProgressBar {
    let bar = styled(
        new(Some(len)),
        "{msg} [{bar:30}] {human_pos}/{human_len} checks ({elapsed}, {eta} left)",
    );
    bar.set_message(message.to_string());
    bar
}

/// A bar counting `len` bytes read, with `message` before it.
pub(crate) fn bytes(len: u64, message: &str) -> ProgressBar {
    let bar = styled(
        new(Some(len)),
        "{msg} [{bar:30}] {bytes}/{total_bytes} ({elapsed})",
    );
    bar.set_message(message.to_string());
    bar
}

/// A spinner with a count of bytes written so far, for work of unknown length.
pub(crate) fn spinner_bytes(message: &str) -> ProgressBar {
    let bar = styled(new(None), "{spinner} {msg} {bytes} ({elapsed})");
    bar.set_message(message.to_string());
    bar
}
