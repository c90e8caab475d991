//! `overdue completions SHELL` and `overdue man`: shell completions and manual pages generated
//! from the clap definitions, so they cannot drift from the commands they describe. The release
//! archives and the Debian package ship their output. Each page also gets ENVIRONMENT, FILES
//! and EXAMPLES sections ([`sections`]).

mod sections;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::cli::Cli;

/// The command's name in completions and manual pages, whatever the binary was renamed to.
const NAME: &str = "overdue";

#[derive(Debug, Clone, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub(crate) shell: Shell,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ManArgs {
    /// Write overdue.1 and one page per subcommand (overdue-serve.1, ...) into DIR instead of
    /// printing overdue.1.
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

/// The completion script for `shell`. Generated into memory: `clap_complete` panics when its
/// writer fails, and stdout can (a closed pipe).
pub(crate) fn completions(shell: Shell) -> Vec<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), NAME, &mut script);
    script
}

/// Prints `text`. A reader that stops early (`overdue man | head`) is not an error.
fn print(text: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Runs `overdue completions SHELL`: the script on stdout.
pub(crate) fn run_completions(args: &CompletionsArgs) -> anyhow::Result<()> {
    print(&completions(args.shell))?;
    Ok(())
}

/// The command the pages describe. `help` gets no page of its own (each page is the help), so
/// the printed page does not list it either and matches the overdue.1 of [`man_pages`].
fn man_command() -> clap::Command {
    Cli::command().name(NAME).disable_help_subcommand(true)
}

/// A page as `clap_mangen` renders it, with the sections it does not write.
fn page(cmd: clap::Command) -> std::io::Result<(String, Vec<u8>)> {
    let man = clap_mangen::Man::new(cmd.clone());
    let name = man.get_filename();
    let mut rendered = Vec::new();
    man.render(&mut rendered)?;
    let rendered = String::from_utf8_lossy(&rendered);
    let page_name = name.strip_suffix(".1").unwrap_or(&name);
    let mut built = cmd;
    built.build();
    let text = sections::insert(page_name, &rendered, &built);
    Ok((name, text.into_bytes()))
}

/// Writes the overdue(1) page, which lists the subcommands as overdue-SUBCOMMAND(1).
pub(crate) fn man(out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(&page(man_command())?.1)
}

/// Writes overdue.1 and a page for every subcommand, nested ones included, into `dir`; the
/// file names written, sorted. The pages are those `clap_mangen::generate_to` writes.
pub(crate) fn man_pages(dir: &Path) -> std::io::Result<Vec<String>> {
    fn write(cmd: clap::Command, dir: &Path, names: &mut Vec<String>) -> std::io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            write(sub, dir, names)?;
        }
        let (name, text) = page(cmd)?;
        std::fs::write(dir.join(&name), text)?;
        names.push(name);
        Ok(())
    }
    std::fs::create_dir_all(dir)?;
    let mut root = man_command();
    // Building names the subcommands as their pages are named (overdue-serve, ...).
    root.build();
    let mut names = Vec::new();
    write(root, dir, &mut names)?;
    names.sort();
    Ok(names)
}

/// Runs `overdue man`: the page on stdout, or the pages into `--dir`.
pub(crate) fn run_man(args: &ManArgs) -> anyhow::Result<()> {
    match &args.dir {
        None => {
            let mut page = Vec::new();
            man(&mut page)?;
            print(&page)?;
        }
        Some(dir) => {
            let names = man_pages(dir).map_err(|e| {
                anyhow::anyhow!("cannot write manual pages into {}: {e}", dir.display())
            })?;
            eprintln!("wrote {} manual pages into {}", names.len(), dir.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(shell: Shell) -> String {
        String::from_utf8(completions(shell)).expect("completions are UTF-8")
    }

    #[test]
    fn bash_completion_knows_subcommands_and_serve_flags() {
        let script = completion(Shell::Bash);
        assert!(script.contains("complete -F _overdue"), "{script}");
        for word in [
            "serve",
            "project",
            "schedule",
            "--trust-proxy",
            "--site-root",
        ] {
            assert!(script.contains(word), "bash completion lacks {word}");
        }
    }

    #[test]
    fn zsh_and_fish_completions_name_the_command() {
        let zsh = completion(Shell::Zsh);
        assert!(zsh.starts_with("#compdef overdue"), "{zsh}");
        assert!(zsh.contains("--ping-rate-limit"));
        let fish = completion(Shell::Fish);
        assert!(fish.contains("complete -c overdue"), "{fish}");
        assert!(fish.contains("__fish_seen_subcommand_from serve"));
    }

    #[test]
    fn the_man_page_has_the_sections_and_lists_the_subcommands() {
        let mut out = Vec::new();
        man(&mut out).expect("render");
        let page = String::from_utf8(out).expect("UTF-8");
        assert!(page.starts_with(".ie \\n(.g .ds Aq"), "{page}");
        assert!(page.contains(".TH overdue 1"), "{page}");
        for section in [
            ".SH NAME",
            ".SH SYNOPSIS",
            ".SH OPTIONS",
            ".SH SUBCOMMANDS",
            ".SH ENVIRONMENT",
            ".SH FILES",
            ".SH EXAMPLES",
        ] {
            assert!(page.contains(section), "no {section}:\n{page}");
        }
        for sub in [
            "overdue\\-serve(1)",
            "overdue\\-completions(1)",
            "overdue\\-man(1)",
        ] {
            assert!(page.contains(sub), "no {sub}:\n{page}");
        }
        assert!(
            !page.contains("overdue\\-help(1)"),
            "a page that does not exist"
        );
        assert!(page.contains(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn man_pages_writes_one_page_per_subcommand() {
        let dir = tempfile::tempdir().expect("tempdir");
        let names = man_pages(dir.path()).expect("write pages");
        for name in [
            "overdue.1",
            "overdue-serve.1",
            "overdue-project-add.1",
            "overdue-completions.1",
        ] {
            assert!(names.iter().any(|n| n == name), "no {name} in {names:?}");
        }
        let serve = std::fs::read_to_string(dir.path().join("overdue-serve.1")).expect("read");
        assert!(serve.contains("OVERDUE_TRUST_PROXY"), "{serve}");
        assert!(
            serve.contains(".SH NETWORK"),
            "options under their headings:\n{serve}"
        );
        for section in [".SH ENVIRONMENT", ".SH FILES", ".SH EXAMPLES"] {
            assert!(serve.contains(section), "no {section}:\n{serve}");
        }
        assert_eq!(
            serve.matches(".ie \\n(.g").count(),
            1,
            "one preamble:\n{serve}"
        );
    }
}
