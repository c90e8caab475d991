//! An SVG badge served by the real binary renders in a real browser: headless Chromium
//! screenshots the badge URL, and the PNG is decoded and checked for the badge's colours.
//! Skipped (with a message) only where no Chromium is installed; under CI (`CI` set) a
//! missing Chromium fails the test, since .ci/run installs it.

use crate::process;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use process::Serve;
use serde_json::json;

const WIDTH: u32 = 400;
const HEIGHT: u32 = 120;

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Runs Chromium headless on `url` and returns the screenshot's path.
fn screenshot(browser: &Path, url: &str, dir: &Path) -> PathBuf {
    let png = dir.join("badge.png");
    let profile = dir.join("profile");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let stderr = process::drain(child.stderr.take().expect("stderr"));
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish\n{}", stderr.lock().expect("lock"));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.success() && png.is_file(),
        "chromium failed ({status})\n{}",
        stderr.lock().expect("lock")
    );
    png
}

#[test]
fn an_svg_badge_renders_in_chromium() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have chromium installed (see .ci/run)"
        );
        eprintln!("SKIPPED an_svg_badge_renders_in_chromium: no chromium on PATH");
        return;
    };
    let data = tempfile::tempdir().expect("data dir");
    let serve = Serve::start(data.path());
    let rw = serve.first_start_key("read-write API key:");
    let check = serve.http_ok(
        "POST",
        "/api/v3/checks/",
        Some(&rw),
        Some(&json!({"name": "backup", "tags": "db"})),
    );
    let ping_url = check["ping_url"].as_str().expect("ping_url");
    let ping_path = &ping_url[ping_url.find("/ping/").expect("path")..];
    assert_eq!(serve.http("POST", ping_path, None, None).0, 200);
    let badges = serve.http_ok("GET", "/api/v3/badges/", Some(&rw), None);
    let url = badges["badges"]["db"]["svg"].as_str().expect("svg url");
    assert!(
        url.starts_with(&format!("http://127.0.0.1:{}/", serve.port)),
        "{url}"
    );

    let out = tempfile::tempdir().expect("out dir");
    let png = screenshot(&browser, url, out.path());

    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png).expect("open png"),
    ));
    let mut reader = decoder.read_info().expect("png header");
    let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut pixels).expect("png data");
    assert_eq!((info.width, info.height), (WIDTH, HEIGHT));
    let channels = info.color_type.samples();
    assert!(
        channels >= 3,
        "unexpected colour type {:?}",
        info.color_type
    );
    let rgb: Vec<(u8, u8, u8)> = pixels[..info.buffer_size()]
        .chunks(channels)
        .map(|p| (p[0], p[1], p[2]))
        .collect();
    let mut distinct = rgb.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(
        distinct.len() > 3,
        "the screenshot is blank: {} colour(s)",
        distinct.len()
    );
    // The badge's two halves: the dark grey label (#555) and the green "up" status (#4c1),
    // both under a faint gradient, with white text antialiased over them.
    let grey = rgb
        .iter()
        .filter(|&&(r, g, b)| (60..=110).contains(&r) && r.abs_diff(g) < 8 && r.abs_diff(b) < 8)
        .count();
    let green = rgb
        .iter()
        .filter(|&&(r, g, b)| g > 150 && r < 120 && b < 80)
        .count();
    assert!(grey > 200, "too little of the label's grey: {grey} pixels");
    assert!(
        green > 200,
        "too little of the status's green: {green} pixels"
    );
    // Text: light pixels between the badge's left and right edges (rows 3-16; the badge is
    // 20 px high at the top left), where only the white label and status text can be.
    let is_grey = |&(r, g, b): &(u8, u8, u8)| {
        (60..=110).contains(&r) && r.abs_diff(g) < 8 && r.abs_diff(b) < 8
    };
    let is_green = |&(r, g, b): &(u8, u8, u8)| g > 150 && r < 120 && b < 80;
    let mut text = 0;
    for row in rgb.chunks(WIDTH as usize).skip(3).take(14) {
        let (Some(left), Some(right)) =
            (row.iter().position(is_grey), row.iter().rposition(is_green))
        else {
            continue;
        };
        text += row[left..right]
            .iter()
            .filter(|&&(r, g, b)| r > 200 && g > 200 && b > 200)
            .count();
    }
    assert!(text > 20, "no text drawn on the badge: {text} light pixels");
}
