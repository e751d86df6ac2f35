//! What a person sees of a sweep: progress on a terminal, and the report:
//! `--output DIR` writes heatmap.png and a self-contained report.html. The page is rendered by headless
//! Chromium and the screenshot is looked at: the verdict box's colour, and
//! the slow node's row and column in the heatmap's darkest colour. Needs
//! `chromium` (scripts/install-deps.sh installs it); without it the test
//! fails, so CI cannot pass by skipping it.

use crate::common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The heatmap's darkest colour (the bottom of the viridis scale): pairs
/// at or below half the best.
const DARK: [u8; 3] = [68, 1, 84];
/// The verdict box's backgrounds (report.html's style).
const BAD_BOX: [u8; 3] = [0xfb, 0xe3, 0xe3];
const OK_BOX: [u8; 3] = [0xe3, 0xf4, 0xe3];

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG");
    let mut buf = vec![0; r.output_buffer_size().expect("size")];
    let info = r.next_frame(&mut buf).expect("a frame");
    buf.truncate(info.buffer_size());
    let step = info.color_type.samples();
    let rgb = buf.chunks(step).flat_map(|p| p[..3].to_vec()).collect();
    (info.width, info.height, rgb)
}

/// Pixels within a small distance of `c` (Chromium may colour-manage).
fn count(rgb: &[u8], c: [u8; 3]) -> usize {
    rgb.chunks(3)
        .filter(|p| p.iter().zip(c).all(|(x, y)| (*x as i32 - y as i32).abs() <= 6))
        .count()
}

fn chromium() -> &'static str {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return c;
        }
    }
    panic!("headless Chromium is needed to check the HTML report: run scripts/install-deps.sh");
}

/// Renders `html` to a PNG screenshot and returns its pixels.
fn screenshot(html: &Path, out: &Path) -> (u32, u32, Vec<u8>) {
    let profile = out.with_extension("profile");
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        // the test runs as root, where Chromium's sandbox cannot start
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1200,1400",
        &format!("--user-data-dir={}", profile.display()),
        &format!("--screenshot={}", out.display()),
        &format!("file://{}", html.display()),
    ]);
    let p = Proc::spawn(&mut cmd).wait(Duration::from_secs(120));
    assert!(out.exists(), "no screenshot ({:?}): {}", p.code, p.stderr);
    decode(out)
}

fn simulated(dir: &str, extra: &[&str]) -> Output {
    let mut args = vec!["sweep", "--simulate", "12", "--output", dir];
    args.extend_from_slice(extra);
    run(&args, LIMIT)
}

#[test]
fn the_html_report_renders_with_the_slow_node_visible() {
    let base = std::env::temp_dir().join(format!("fabdiag-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (slow_dir, calm_dir) = (base.join("slow"), base.join("calm"));
    let slow = simulated(&slow_dir.display().to_string(), &["--sim-slow", "5"]);
    assert_eq!(slow.code, Some(5), "{}", slow.stderr);
    let calm = simulated(&calm_dir.display().to_string(), &[]);
    assert_eq!(calm.code, Some(0), "{}", calm.stderr);
    for d in [&slow_dir, &calm_dir] {
        for f in ["sweep.json", "summary.txt", "heatmap.png", "report.html"] {
            assert!(d.join(f).exists(), "{} is missing", d.join(f).display());
        }
        let html = std::fs::read_to_string(d.join("report.html")).unwrap();
        // self-contained: the pictures are inside, nothing is fetched
        assert_eq!(html.matches("src=\"data:image/png;base64,").count(), 2);
        assert!(!html.contains("http://") && !html.contains("https://"));
    }

    // the heatmap itself: rank 5's 11 pairs twice (row and column)
    let (w, h, heat) = decode(&slow_dir.join("heatmap.png"));
    let (_, _, calm_heat) = decode(&calm_dir.join("heatmap.png"));
    // 12 ranks: cells of the largest size (picture.rs: 720 / side, at most 28 px)
    let cell = 28;
    assert!(w > 12 * cell as u32 && h > 12 * cell as u32);
    let extra_dark = count(&heat, DARK) - count(&calm_heat, DARK);
    let expect = 22 * cell * cell;
    assert!(
        extra_dark >= expect * 9 / 10,
        "{extra_dark} dark pixels for the slow node, expected about {expect}"
    );

    // the rendered page
    let (_, _, slow_shot) = screenshot(&slow_dir.join("report.html"), &base.join("slow.png"));
    let (_, _, calm_shot) = screenshot(&calm_dir.join("report.html"), &base.join("calm.png"));
    assert!(count(&slow_shot, BAD_BOX) > 5000, "the red verdict box");
    assert_eq!(count(&slow_shot, OK_BOX), 0);
    assert!(count(&calm_shot, OK_BOX) > 5000, "the green verdict box");
    assert_eq!(count(&calm_shot, BAD_BOX), 0);
    // the heatmap is drawn on the page at full size: the slow node's row
    // and column show as many dark pixels more as in the PNG itself
    let page_dark = count(&slow_shot, DARK) as i64 - count(&calm_shot, DARK) as i64;
    assert!(
        page_dark >= (expect * 9 / 10) as i64,
        "the slow node is not visible on the rendered page ({page_dark} dark pixels)"
    );
    // the healthy cells: the yellow top of the scale
    let yellow = |rgb: &[u8]| rgb.chunks(3).filter(|p| p[0] > 200 && p[1] > 200 && p[2] < 100).count();
    assert!(yellow(&calm_shot) > 100 * cell * cell, "the heatmap's healthy cells");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_report_directory_that_cannot_be_written_is_one_line() {
    let o = simulated("/proc/fabdiag-cannot-be-here", &[]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.one_line().contains("/proc/fabdiag-cannot-be-here"), "{}", o.stderr);
}

#[test]
fn progress_is_drawn_on_a_terminal_and_never_into_a_pipe() {
    // script(1) gives the sweep a terminal for its stderr
    let o = Command::new("script")
        .args([
            "-qec",
            &format!("{} sweep --simulate 6 --sim-pair-ms 300 >/dev/null", bin()),
            "/dev/null",
        ])
        .output()
        .expect("script(1) from bsdutils");
    let tty = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{tty}");
    assert!(tty.contains("6/6 ranks") && tty.contains("round 3/5"), "{tty}");
    // pairs done of all 15, as they arrive
    assert!(tty.contains("3/15 pairs") && tty.contains("6/15 pairs"), "{tty}");
    // not a terminal: no bar, and nothing on stderr in a sweep shorter
    // than a progress line's minute
    let piped = run(&["sweep", "--simulate", "6", "--sim-pair-ms", "50"], LIMIT);
    assert_eq!((piped.code, piped.stderr.as_str()), (Some(0), ""));
}

/// Into a log (a batch job's stderr), a sweep says how far it is in a
/// line at a round's start once FABDIAG_PROGRESS_SECS (60) have passed
/// since the last: here 0, so one line per round, the later ones with
/// the time left.
#[test]
fn progress_lines_go_into_a_log_at_round_starts() {
    let o =
        Proc::spawn(fabdiag(&["sweep", "--simulate", "6", "--sim-pair-ms", "50"]).env("FABDIAG_PROGRESS_SECS", "0"))
            .wait(LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 5, "{}", o.stderr);
    assert!(
        lines[0].starts_with("fabdiag sweep: round 1 of 5; 6/6 ranks, 0/15 pairs done, 0 failed; "),
        "{}",
        o.stderr
    );
    assert!(lines[4].starts_with("fabdiag sweep: round 5 of 5; 6/6 ranks, 12/15 pairs done, 0 failed; "));
    assert!(lines[1..].iter().all(|l| l.contains(" left")), "{}", o.stderr);
    let bad = Proc::spawn(fabdiag(&["sweep", "--simulate", "4"]).env("FABDIAG_PROGRESS_SECS", "soon")).wait(LIMIT);
    assert_eq!(bad.code, Some(0), "{}", bad.stderr);
    assert!(bad
        .stderr
        .contains("FABDIAG_PROGRESS_SECS=\"soon\" is not a whole number of seconds"));
}
