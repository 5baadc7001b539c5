//! `warroom export` then `warroom publish` as a person runs them: a dry run prints the plan and
//! sends nothing, a real run against the mock (token from GITHUB_TOKEN, wall-clock pacing)
//! files the exported postmortem and its action items, and a missing export says to run
//! `warroom export` first.

use crate::support::github_mock;

use github_mock::{GithubMock, incident_fixture};
use std::process::Command;

fn warroom(
    data: &std::path::Path,
    config: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(config)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .args(args)
        .env("GITHUB_TOKEN", "cli-t0ken")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (store, id) = incident_fixture(&data);
    let mock = GithubMock::start(None).await;
    let config = dir.path().join("warroom.toml");
    std::fs::write(
        &config,
        format!(
            "[github]\napi_url = \"{}\"\npostmortems = \"acme/pm\"\ntimeout = \"5s\"\n",
            mock.url
        ),
    )
    .unwrap();
    let id_dir = store.exports_dir(&id);
    let id = id.to_string();

    // The real export writes what publishing reads.
    let (d, c, i) = (data.clone(), config.clone(), id.clone());
    let export = tokio::task::spawn_blocking(move || warroom(&d, &c, &["export", &i]))
        .await
        .unwrap();
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let exported = std::fs::read_to_string(id_dir.join("postmortem.md")).unwrap();
    assert!(exported.contains("Journey planner outage"), "{exported}");
    let (d, c, i) = (data.clone(), config.clone(), id.clone());
    let dry = tokio::task::spawn_blocking(move || warroom(&d, &c, &["publish", &i, "--dry-run"]))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(
        dry.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(text.contains("nothing was sent"), "{text}");
    assert!(text.contains("POST  /repos/acme/pm/pulls"), "{text}");
    assert!(text.contains("AI-3: Batch restarts"), "{text}");
    assert!(mock.log().is_empty(), "a dry run sends nothing");
    // The author's work left in the draft is named before anything goes out.
    let warned = String::from_utf8_lossy(&dry.stderr);
    let asks = exported.matches("[Author").count();
    assert!(asks > 0, "the fixture's draft has placeholders");
    assert!(
        warned.contains(&format!("warning: {asks} [Author…] placeholder(s)")),
        "{asks} placeholders: {warned}"
    );
    let suggested = exported.matches("[Suggested]").count();
    assert_eq!(
        warned.contains("marked [Suggested]"),
        suggested > 0,
        "{suggested} suggested rows: {warned}"
    );

    // Without the chart, the real run needs fewer writes, each a second apart.
    let _ = std::fs::remove_file(id_dir.join("charts/pool.svg"));
    let (d, c, i) = (data.clone(), config.clone(), id.clone());
    let run =
        tokio::task::spawn_blocking(move || warroom(&d, &c, &["publish", &i, "--as", "issue"]))
            .await
            .unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(out.contains("published to acme/pm"), "{out}");
    {
        let st = mock.state.lock().unwrap();
        assert_eq!(
            st.plain_issues().len(),
            4,
            "the postmortem and 3 action items"
        );
        let first_line = exported.lines().find(|l| !l.trim().is_empty()).unwrap();
        assert!(
            st.plain_issues()
                .iter()
                .any(|i| i.body.contains(first_line)),
            "the exported draft is the postmortem issue's body"
        );
        assert!(
            st.log
                .iter()
                .all(|l| l.auth.as_deref() == Some("Bearer cli-t0ken"))
        );
    }

    std::fs::remove_file(id_dir.join("postmortem.md")).unwrap();
    let (d, c, i) = (data.clone(), config.clone(), id.clone());
    let missing = tokio::task::spawn_blocking(move || warroom(&d, &c, &["publish", &i]))
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success());
    assert!(
        err.contains(&format!("run `warroom export {id}` first")),
        "{err}"
    );
}

/// Issue 28, point 4: `publish` waiting out a rate limit (GitHub asked for 180 s) stops at once
/// on Ctrl-C (SIGINT) and on a dropped ssh session (SIGHUP), sends nothing more, and says the
/// work is kept. It once ignored Ctrl-C and posted three minutes later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_stops_on_a_signal_during_a_rate_limit_wait_and_sends_nothing_more() {
    use github_mock::{Fault, LimitKind};
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    use std::time::{Duration, Instant};
    for (signal, code) in [(Signal::SIGINT, 130), (Signal::SIGHUP, 129)] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let (_store, id) = incident_fixture(&data);
        let mock = GithubMock::start(None).await;
        mock.push_fault(Fault::Limit {
            method: "POST",
            path_suffix: "/issues",
            status: 429,
            kind: LimitKind::RetryAfter(180),
        });
        let config = dir.path().join("warroom.toml");
        std::fs::write(
            &config,
            format!(
                "[github]\napi_url = \"{}\"\npostmortems = \"acme/pm\"\ntimeout = \"5s\"\n",
                mock.url
            ),
        )
        .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_warroom"))
            .arg("--data-dir")
            .arg(&data)
            .arg("--config")
            .arg(&config)
            .arg("--log-file")
            .arg(data.join("warroom.log"))
            .args(["publish", &id.to_string(), "--as", "issue"])
            .env("GITHUB_TOKEN", "cli-t0ken")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait (bounded) for the refusal, then a little: the client is in its wait.
        let until = Instant::now() + Duration::from_secs(20);
        while !mock.log().iter().any(|l| l.status == 429) && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            mock.log().iter().any(|l| l.status == 429),
            "no refusal seen"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        let sent = mock.log().len();
        let t = Instant::now();
        kill(Pid::from_raw(child.id() as i32), signal).unwrap();
        let out = tokio::task::spawn_blocking(move || child.wait_with_output())
            .await
            .unwrap()
            .unwrap();
        let stopped_in = t.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{signal}: {err}");
        assert!(
            stopped_in < Duration::from_secs(3),
            "{signal}: {stopped_in:?}"
        );
        assert!(err.contains(&format!("stopped by {signal}")), "{err}");
        assert!(err.contains("run `warroom publish"), "{err}");
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            mock.log().len(),
            sent,
            "{signal}: a request was sent after the signal"
        );
    }
}
