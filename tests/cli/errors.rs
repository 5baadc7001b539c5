//! What a person sees when something is wrong: one line saying what and what to do, with no
//! escape bytes, source locations or backtraces when stderr is not a terminal, and no panics.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn warroom(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warroom"));
    c.arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .args(args)
        .stdin(Stdio::null())
        .env_remove("WARROOM_LOG_LEVEL")
        .env("RUST_BACKTRACE", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn plain_one_line(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{err}");
    assert!(!err.contains('\u{1b}'), "an escape byte on a pipe: {err:?}");
    assert!(
        !err.contains("Location:") && !err.contains("backtrace"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("warroom: "), "{err}");
    err
}

#[test]
fn errors_are_one_plain_line_even_with_a_backtrace_asked_for() {
    let data = tempfile::tempdir().unwrap();
    let err = plain_one_line(&warroom(data.path(), &["incident", "show", "nope"], &[]));
    assert!(err.contains("nope"), "{err}");
    let cfg = data.path().join("bad.toml");
    std::fs::write(&cfg, "refresh = 5\n").unwrap();
    let err = plain_one_line(&warroom(
        data.path(),
        &["--config", cfg.to_str().unwrap(), "export", "x"],
        &[],
    ));
    assert!(err.contains("bad.toml:1"), "{err}");
}

#[test]
fn the_developer_report_is_there_when_asked_for() {
    let data = tempfile::tempdir().unwrap();
    let out = warroom(
        data.path(),
        &["incident", "show", "nope"],
        &[("WARROOM_LOG_LEVEL", "debug")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Location:"), "{err}");
    assert!(!err.contains('\u{1b}'), "no colour on a pipe: {err:?}");
}

#[test]
fn the_console_without_a_terminal_says_so_and_creates_no_incident() {
    let data = tempfile::tempdir().unwrap();
    let err = plain_one_line(&warroom(
        data.path(),
        &["open", "--prometheus", "http://127.0.0.1:9"],
        &[],
    ));
    assert!(err.contains("needs a terminal"), "{err}");
    let incidents = data.path().join("incidents");
    let n = std::fs::read_dir(&incidents).map_or(0, std::iter::Iterator::count);
    assert_eq!(n, 0, "no incident was created");
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} completions bash | true",
            env!("CARGO_BIN_EXE_warroom")
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
    assert!(err.trim().is_empty(), "nothing on stderr: {err}");
}

/// `import grafana` is pointed at files nobody checked (a download, a colleague's paste): a
/// gigabyte file is refused from its size before any of it is read, and a stream that never
/// ends (`/dev/zero`) at the cap, so neither can fill memory.
#[test]
fn an_import_of_a_huge_file_or_an_endless_stream_is_refused_at_the_cap() {
    let data = tempfile::tempdir().unwrap();
    let big = data.path().join("dashboard.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let err = plain_one_line(&warroom(
        data.path(),
        &["import", "grafana", big.to_str().unwrap()],
        &[],
    ));
    assert!(err.contains("1073741824 bytes, over the"), "{err}");
    let err = plain_one_line(&warroom(
        data.path(),
        &["import", "grafana", "/dev/zero"],
        &[],
    ));
    assert!(err.contains("more than"), "{err}");
}
