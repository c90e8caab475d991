//! The control socket's protocol as other releases meet it (issue 15.5): a client of another
//! protocol version, and a client of the unversioned protocol of earlier releases, connect to
//! the running service's socket and are told, in a shape they read, that they disagree; nothing
//! they asked for runs.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use overdue::cli::protocol::PROTOCOL_VERSION;
use serde_json::{Value, json};

use crate::process::{self, IO_TIMEOUT, Serve};

/// Sends one request line to the service's control socket and reads the answer line.
fn ask_raw(data: &Path, request: &str) -> Value {
    let mut stream = UnixStream::connect(data.join("overdue.sock")).expect("control socket");
    stream.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
    stream
        .write_all(format!("{request}\n").as_bytes())
        .expect("request");
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).expect("answer");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
}

fn project_names(data: &Path) -> String {
    process::overdue_in(data, &["project", "ls"]).ok()
}

#[test]
fn a_request_of_another_version_gets_the_service_versions_and_runs_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let _serve = Serve::start(data);
    let newer = PROTOCOL_VERSION + 1;
    // A later release's command this one may not know, and one it knows.
    for command in [
        json!({"Teleport": {"where": "mars"}}),
        json!({"ProjectAdd": {"name": "from-the-future", "json": false}}),
    ] {
        let request = json!({"version": newer, "command": command});
        let answer = ask_raw(data, &request.to_string());
        assert_eq!(
            answer,
            json!({"VersionMismatch": {
                "service": PROTOCOL_VERSION,
                "client": newer,
                "service_version": env!("CARGO_PKG_VERSION"),
            }})
        );
    }
    let names = project_names(data);
    assert!(!names.contains("from-the-future"), "{names}");

    // The same command at this version runs.
    let request = json!({"version": PROTOCOL_VERSION,
                         "command": {"ProjectAdd": {"name": "current", "json": false}}});
    let answer = ask_raw(data, &request.to_string());
    assert_eq!(answer["Output"]["code"], 0, "{answer}");
    assert!(project_names(data).contains("current"));
}

#[test]
fn an_earlier_releases_unversioned_request_gets_an_answer_it_can_print() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let _serve = Serve::start(data);
    // What releases of protocol 1 sent: the clap structs as JSON, no version.
    for old in [
        r#"{"Project":{"Add":{"name":"from-the-past","json":false}}}"#,
        r#""ImportParts""#,
    ] {
        let answer = ask_raw(data, old);
        // The `AdminOutput` such a client parses and prints.
        assert_eq!(answer["code"], 1, "{answer}");
        assert_eq!(answer["stdout"], "", "{answer}");
        let stderr = answer["stderr"].as_str().expect("stderr");
        assert!(
            stderr.starts_with("overdue: the running service (overdue ")
                && stderr.contains(&format!("protocol {PROTOCOL_VERSION}"))
                && stderr.contains("earlier overdue")
                && stderr.contains("sudo systemctl restart overdue"),
            "{stderr}"
        );
    }
    let names = project_names(data);
    assert!(!names.contains("from-the-past"), "{names}");
}

/// A service of another release on `data`'s control socket: answers one request with `answer`.
fn foreign_service(data: &Path, answer: String) -> std::thread::JoinHandle<String> {
    let listener = std::os::unix::net::UnixListener::bind(data.join("overdue.sock")).expect("bind");
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut request = String::new();
        BufReader::new(&stream)
            .read_line(&mut request)
            .expect("request");
        (&stream)
            .write_all(format!("{answer}\n").as_bytes())
            .expect("answer");
        request
    })
}

#[test]
fn this_overdue_says_which_service_it_cannot_talk_to_and_what_to_do() {
    let later = json!({"VersionMismatch": {
        "service": PROTOCOL_VERSION + 1, "client": PROTOCOL_VERSION, "service_version": "9.0.0",
    }});
    // How a service of protocol 1 refuses a request it cannot read.
    let earlier = json!({"stdout": "", "code": 1,
        "stderr": "overdue: bad control request: unknown variant `version`\n"});
    for (answer, service) in [
        (later, format!("(9.0.0, protocol {})", PROTOCOL_VERSION + 1)),
        (earlier, "(an earlier release, protocol 1)".to_string()),
    ] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let data = tmp.path();
        process::init_data(data);
        let service_side = foreign_service(data, answer.to_string());
        let ran = process::overdue_in(data, &["project", "ls"]);
        let request: Value =
            serde_json::from_str(&service_side.join().expect("service")).expect("JSON request");
        assert_eq!(request["version"], PROTOCOL_VERSION, "{request}");
        assert_eq!(ran.code, Some(1), "{}", ran.stderr);
        assert!(ran.stdout.is_empty(), "{}", ran.stdout);
        assert_eq!(
            ran.stderr,
            format!(
                "overdue: this overdue ({}, protocol {PROTOCOL_VERSION}) cannot talk to the \
                 running service {service}: restart the service after an upgrade \
                 (sudo systemctl restart overdue), or use the matching binary\n",
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}
