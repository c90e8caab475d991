//! The sections of the manual pages that clap does not write: ENVIRONMENT (generated from the
//! options' `env` names, so it cannot drift), FILES and EXAMPLES. Pages are named as `clap_mangen`
//! names them: `overdue`, `overdue-serve`, `overdue-check-add`, ...

use std::collections::BTreeMap;

use clap_mangen::roff::{Roff, bold, roman};

/// Variables that no option names but a page's command reads: (page, variable, what it does).
const OTHER_VARIABLES: &[(&str, &str, &str)] = &[
    (
        "overdue-serve",
        "OVERDUE_LOG",
        "The log level: error, warn, info (the default), debug or trace; also a filter such as \
         overdue=debug.",
    ),
    (
        "overdue-serve",
        "NOTIFY_SOCKET",
        "Set by systemd for Type=notify: serve sends READY=1 there once it answers, and \
         STOPPING=1 when it stops.",
    ),
    (
        "overdue-channel-test",
        "OVERDUE_SMTP_URL, OVERDUE_SMTP_FROM, OVERDUE_ALLOW_SHELL_CHANNELS",
        "Read as serve reads them when the service is stopped and the test runs in this \
         process; a running service uses its own settings.",
    ),
    (
        "overdue",
        "NO_COLOR",
        "When set, statuses are never coloured; they are coloured only on a terminal anyway.",
    ),
];

/// Pages whose commands never touch the data directory: no FILES section.
const NO_FILES: &[&str] = &[
    "overdue-schedule",
    "overdue-completions",
    "overdue-man",
    "overdue-health",
];

/// Examples per page: what it does, then the command lines.
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "overdue",
        &[
            (
                "Start the service for the LAN, with the URL clients use in ping URLs and links:",
                "overdue serve --listen 0.0.0.0:8000 --site-root http://monitor.lan:8000",
            ),
            (
                "Add a check that expects a ping every hour, alerting the project's default \
                 channels, and ping it from a job:",
                "overdue check add --name backups --timeout 1h --grace 5m\n\
                 curl -fsS -m 10 --retry 5 http://monitor.lan:8000/ping/UUID",
            ),
            (
                "Check an installation made with the Debian package or the systemd unit:",
                "sudo overdue --data /var/lib/overdue doctor",
            ),
        ],
    ),
    (
        "overdue-serve",
        &[
            (
                "Listen on localhost behind a reverse proxy that terminates TLS:",
                "overdue serve --trust-proxy --site-root https://overdue.example.org",
            ),
            (
                "Serve the LAN, send alert emails, log JSON:",
                "OVERDUE_SMTP_URL='smtp://alerts:secret@mail.example.org:587?tls=required' \\\n\
                 overdue serve --listen 0.0.0.0:8000 --site-root http://monitor.lan:8000 \\\n\
                 \x20   --smtp-from overdue@example.org --log-format json",
            ),
        ],
    ),
    (
        "overdue-doctor",
        &[(
            "Check the service running on /var/lib/overdue (its own settings, asked through \
             the control socket); exit status 1 when a problem is found:",
            "sudo overdue --data /var/lib/overdue doctor",
        )],
    ),
    (
        "overdue-health",
        &[(
            "A container health check, or a monitor's probe; exit status 0 when the service \
             answers:",
            "overdue health --listen 127.0.0.1:8000 || echo unhealthy",
        )],
    ),
    (
        "overdue-check-add",
        &[(
            "A nightly job on a cron schedule in a time zone, with ten minutes of grace:",
            "overdue check add --name nightly --schedule '30 2 * * *' --tz Europe/Riga --grace 10m",
        )],
    ),
    (
        "overdue-channel-add",
        &[(
            "Alerts to an ntfy topic, for every check of the project and new ones:",
            "overdue channel add --kind ntfy --name phone --topic my-alerts",
        )],
    ),
    (
        "overdue-key-add",
        &[(
            "A read-only key for a dashboard:",
            "overdue key add --read-only --label grafana",
        )],
    ),
    (
        "overdue-backup",
        &[(
            "A consistent copy while the service runs (in a directory the service may write):",
            "sudo overdue --data /var/lib/overdue backup /var/lib/overdue/backup.redb",
        )],
    ),
    (
        "overdue-import",
        &[(
            "Copy the checks of a Healthchecks project, keeping their UUIDs:",
            "overdue import --from-healthchecks https://healthchecks.io --api-key KEY",
        )],
    ),
    (
        "overdue-schedule",
        &[(
            "The next five runs of a cron expression in a time zone:",
            "overdue schedule '0 9 * * 1-5' --tz Europe/Berlin -n 5",
        )],
    ),
];

/// The options (by their long flags) that read each variable, and the commands they belong
/// to, in `cmd` and its subcommands.
fn variables(cmd: &clap::Command) -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    fn walk(
        cmd: &clap::Command,
        path: &str,
        out: &mut BTreeMap<String, (Vec<String>, Vec<String>)>,
    ) {
        for arg in cmd.get_arguments() {
            let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) else {
                continue;
            };
            let (flags, commands) = out.entry(env.to_string_lossy().into_owned()).or_default();
            let flag = format!("--{long}");
            if !flags.contains(&flag) {
                flags.push(flag);
            }
            if !arg.is_global_set() && !commands.iter().any(|c| c == path) {
                commands.push(path.to_string());
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut out = BTreeMap::new();
    walk(cmd, cmd.get_name(), &mut out);
    out
}

fn paragraph(roff: &mut Roff, head: &str, text: &str) {
    roff.control("TP", []);
    roff.text([bold(head)]);
    roff.text([roman(text)]);
}

/// The ENVIRONMENT, FILES and EXAMPLES sections of `page` (its `cmd` built), in roff without
/// the preamble.
pub(super) fn render(page: &str, cmd: &clap::Command) -> String {
    let mut roff = Roff::new();
    let vars = variables(cmd);
    // The top page is the reference of every variable.
    let others: Vec<_> = OTHER_VARIABLES
        .iter()
        .filter(|(p, ..)| *p == page || page == "overdue")
        .collect();
    if !vars.is_empty() || !others.is_empty() {
        roff.control("SH", ["ENVIRONMENT"]);
        roff.text([roman(
            "An option given on the command line wins over its variable.",
        )]);
        for (var, (flags, commands)) in &vars {
            let mut text = format!("Sets {}", flags.join(", "));
            if cmd.has_subcommands() && !commands.is_empty() {
                text.push_str(&format!(" of {}", commands.join(", ")));
            }
            text.push('.');
            paragraph(&mut roff, var, &text);
        }
        for (_, var, text) in others {
            paragraph(&mut roff, var, text);
        }
    }
    if !NO_FILES.contains(&page) {
        roff.control("SH", ["FILES"]);
        roff.text([
            roman("DIR is the data directory: "),
            bold("--data"),
            roman(" or OVERDUE_DATA; the systemd unit uses /var/lib/overdue."),
        ]);
        paragraph(
            &mut roff,
            "DIR/overdue.redb",
            "The data file: projects, API key hashes, channels, checks, pings and queued \
             alerts. Mode 0600 in a directory of mode 0700.",
        );
        paragraph(
            &mut roff,
            "DIR/overdue.sock",
            "The control socket of a running service (mode 0600): admin commands run through \
             it, so the service need not stop.",
        );
        paragraph(
            &mut roff,
            "/etc/overdue/overdue.env",
            "The settings the systemd unit passes to serve, as OVERDUE_* variables (Debian \
             package and release archives).",
        );
    }
    if let Some((_, examples)) = EXAMPLES.iter().find(|(p, _)| *p == page) {
        roff.control("SH", ["EXAMPLES"]);
        for (what, lines) in *examples {
            roff.control("PP", []);
            roff.text([roman(*what)]);
            roff.control("RS", ["4"]);
            roff.control("nf", []);
            for line in lines.lines() {
                roff.text([roman(line)]);
            }
            roff.control("fi", []);
            roff.control("RE", []);
        }
    }
    let preamble = Roff::new().render();
    let rendered = roff.render();
    rendered
        .strip_prefix(&preamble)
        .unwrap_or(&rendered)
        .to_string()
}

/// `page` (as `clap_mangen` renders it) with the sections of [`render`] before VERSION.
pub(super) fn insert(page: &str, rendered: &str, cmd: &clap::Command) -> String {
    let extra = render(page, cmd);
    match rendered.find(".SH VERSION") {
        Some(at) => format!("{}{extra}{}", &rendered[..at], &rendered[at..]),
        None => format!("{rendered}{extra}"),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    fn built() -> clap::Command {
        let mut cmd = crate::cli::Cli::command().name("overdue");
        cmd.build();
        cmd
    }

    #[test]
    fn every_variable_is_listed_with_its_option_and_commands() {
        let cmd = built();
        let page = render("overdue", &cmd);
        for var in [
            "OVERDUE_LISTEN",
            "OVERDUE_SMTP_URL",
            "OVERDUE_DATA",
            "OVERDUE_LOG",
            "NO_COLOR",
        ] {
            assert!(page.contains(var), "no {var}:\n{page}");
        }
        assert!(
            page.contains("Sets \\-\\-listen of overdue serve, overdue doctor, overdue health."),
            "{page}"
        );
        let serve = cmd.find_subcommand("serve").expect("serve");
        let page = render("overdue-serve", serve);
        assert!(page.contains("Sets \\-\\-site\\-root."), "{page}");
        assert!(page.contains("NOTIFY_SOCKET"), "{page}");
        assert!(!page.contains("NO_COLOR"), "{page}");
        assert!(
            page.contains(".SH FILES") && page.contains(".SH EXAMPLES"),
            "{page}"
        );
    }

    #[test]
    fn the_sections_go_before_the_version() {
        let cmd = built();
        let health = cmd.find_subcommand("health").expect("health");
        let page = insert(
            "overdue-health",
            ".TH x\n.SH NAME\nx\n.SH VERSION\nv1\n",
            health,
        );
        let env = page.find(".SH ENVIRONMENT").expect("env");
        let examples = page.find(".SH EXAMPLES").expect("examples");
        let version = page.find(".SH VERSION").expect("version");
        assert!(env < examples && examples < version, "{page}");
        assert!(
            !page.contains(".SH FILES"),
            "health reads no files:\n{page}"
        );
        assert!(!page.contains(".ie"), "one preamble per page:\n{page}");
    }
}
