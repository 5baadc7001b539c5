//! `warroom open` in a real terminal (tmux) against a real Prometheus scraping a small exporter
//! this test serves: the dashboard draws, a hostile label cannot reach the terminal, help and
//! zoom answer, `q` quits with status 0 and the terminal is restored.

use crate::support::prometheus;
use crate::support::tmux;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

/// Serve a fixed exposition on a loopback port until the process ends; returns the port.
fn exporter(body: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(10_000) {
            let Ok(mut conn) = conn else { continue };
            let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                body.len(),
                body
            );
        }
    });
    port
}

const HOSTILE_POD: &str = "api-\u{1b}]0;pwned\u{7}x";

#[test]
fn open_draws_the_dashboard_in_a_real_terminal_and_restores_it() {
    let pod = HOSTILE_POD.replace('\\', "\\\\").replace('"', "\\\"");
    let body = format!(
        "# TYPE db_pool_connections_in_use gauge\n\
         db_pool_connections_in_use{{service=\"planner\",pod=\"api-0\"}} 39\n\
         db_pool_connections_in_use{{service=\"planner\",pod=\"{pod}\"}} 12\n\
         # TYPE db_pool_connections_max gauge\n\
         db_pool_connections_max{{service=\"planner\",pod=\"api-0\"}} 40\n\
         db_pool_connections_max{{service=\"planner\",pod=\"{pod}\"}} 40\n\
         # TYPE app_instance_up gauge\n\
         app_instance_up{{service=\"planner\",pod=\"api-0\"}} 1\n\
         app_instance_up{{service=\"planner\",pod=\"{pod}\"}} 1\n"
    );
    let port = exporter(body);
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![format!("127.0.0.1:{port}")],
        ..Default::default()
    }) else {
        return;
    };
    // Wait (bounded) for the first scrape to land.
    let mut scraped = false;
    for _ in 0..100 {
        if let Some((200, body)) = prometheus::http_get(
            prom.port,
            "/api/v1/query?query=db_pool_connections_max",
            Duration::from_secs(2),
        ) && body.contains("api-0")
        {
            scraped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(scraped, "prometheus never scraped the exporter");

    let dir = tempfile::tempdir().unwrap();
    // The simulator's whole dashboard, written out (with no [[panel]] the console would
    // discover, and show only the panels whose metrics this exposition has).
    let panels = warroom::config::panels::render_toml(&warroom::metrics::presets::sim_panels());
    std::fs::write(
        dir.path().join("warroom.toml"),
        format!("refresh = \"1s\"\n{panels}"),
    )
    .unwrap();
    let cmd = format!(
        "{} --config {} --log-file {} --data-dir {} open --prometheus {}",
        env!("CARGO_BIN_EXE_warroom"),
        dir.path().join("warroom.toml").display(),
        dir.path().join("warroom.log").display(),
        dir.path().join("data").display(),
        prom.url
    );
    let Some(term) = tmux::Tmux::start(&format!("env -u NO_COLOR {cmd}"), 120, 40) else {
        return;
    };
    // The dashboard is what discovery found on this stack.
    term.expect("Pool saturation", Duration::from_secs(10));
    term.expect("Instances up", Duration::from_secs(10));
    assert_eq!(
        term.format("#{alternate_on}"),
        "1",
        "the console uses the alternate screen"
    );
    // 39 of 40 connections: critical, in words.
    term.expect("▲ CRIT", Duration::from_secs(10));
    term.expect("● live", Duration::from_secs(10));

    // Zoom the pool panel: the legend shows the hostile pod escaped, and the terminal title
    // was never set by it.
    term.accept_copies();
    term.send(&["Enter"]);
    let screen = term.expect("\\e]0;pwned", Duration::from_secs(10));
    assert!(!screen.contains('\u{1b}'), "{screen}");
    assert_ne!(
        term.format("#{pane_title}"),
        "pwned",
        "an OSC title from a label reached the terminal"
    );
    // Issue 33 point 7: the zoomed panel shows its PromQL; `y` copies it and `o` its graph
    // URL on this Prometheus, into tmux's clipboard by OSC 52.
    let pool = (warroom::metrics::presets::sim_panels().into_iter())
        .find(|p| p.title == "Pool saturation")
        .unwrap();
    let head: String = pool.query.chars().take(40).collect();
    term.expect(&format!("PromQL {head}"), Duration::from_secs(5));
    term.send(&["y"]);
    term.expect("copied the PromQL", Duration::from_secs(5));
    let copied = poll_copied(&term, |c| c == pool.query);
    assert_eq!(copied.as_deref(), Some(pool.query.as_str()));
    term.send(&["o"]);
    term.expect("copied the graph URL", Duration::from_secs(5));
    let graph = format!("{}/graph?g0.expr=", prom.url.trim_end_matches('/'));
    let copied = poll_copied(&term, |c| c.starts_with(&graph)).unwrap_or_default();
    let url = url::Url::parse(&copied).expect("a URL");
    assert!(
        url.query_pairs()
            .any(|(k, v)| k == "g0.expr" && v == pool.query),
        "{copied}"
    );
    term.send(&["Escape"]);
    term.wait_for(Duration::from_secs(5), |s| {
        !s.contains("◐ partial") && s.contains("Instances up")
    })
    .expect("zoom closed");

    term.send(&["?"]);
    term.expect("dashboard keys", Duration::from_secs(5));
    term.send(&["Escape"]);
    // A key sent right after Escape would read as Alt+key: wait for the overlay to close.
    term.wait_for(Duration::from_secs(5), |s| !s.contains("dashboard keys"))
        .expect("help closed");

    // The timeline pane: no incident yet (the console watches), the pool's crossing kept.
    term.send(&["t"]);
    term.expect("Timeline ·", Duration::from_secs(5));
    term.expect("watching: no incident yet", Duration::from_secs(5));
    term.wait_for(Duration::from_secs(10), |s| {
        !s.contains("0 threshold crossing(s) seen so far")
            && s.contains("threshold crossing(s) seen so far")
    })
    .expect("the crossing is kept while watching");
    assert!(
        !dir.path().join("data").join("incidents").exists()
            || std::fs::read_dir(dir.path().join("data").join("incidents"))
                .unwrap()
                .next()
                .is_none(),
        "no incident is created before one is declared"
    );
    // The first note declares the incident; the crossing seen before goes into it.
    term.send(&["n"]);
    term.expect("Note for the timeline", Duration::from_secs(5));
    term.type_text("pool full on api-0 #root-cause");
    term.send(&["Enter"]);
    // (The pane is narrow: rows wrap.)
    term.expect("pool full on", Duration::from_secs(5));
    term.expect("rose", Duration::from_secs(10));
    term.expect("✓ durable", Duration::from_secs(5));
    // Prometheus stops: within two seconds of the next refresh (1 s here) every panel says so,
    // the status bar shows the backoff, and keys are still answered.
    drop(prom);
    let stopped = std::time::Instant::now();
    let screen = term.expect("✖ down, retry in", Duration::from_secs(10));
    // The figure is 1 s refresh + 2 s; the bound leaves room for a loaded CI machine.
    eprintln!(
        "panels reported Prometheus down after {:?}",
        stopped.elapsed()
    );
    assert!(
        stopped.elapsed() < Duration::from_secs(6),
        "took {:?}",
        stopped.elapsed()
    );
    assert!(screen.contains("✖ failing"), "{screen}");
    term.send(&["?"]);
    term.expect("dashboard keys", Duration::from_secs(2));
    term.send(&["Escape"]);
    term.wait_for(Duration::from_secs(5), |s| !s.contains("dashboard keys"))
        .expect("help closed");
    term.send(&["q"]);
    let screen = term.expect("[exited 0]", Duration::from_secs(10));
    assert_eq!(
        term.format("#{alternate_on}"),
        "0",
        "the terminal left the alternate screen"
    );
    assert!(
        !screen.contains("Pool saturation"),
        "the dashboard was left on screen:\n{screen}"
    );
    // Quitting says which incident was recorded and what to do next.
    assert!(screen.contains(" recorded. Next:"), "{screen}");
    assert!(screen.contains("warroom export "), "{screen}");
    // The journal outlives the console: the CLI reads what the console recorded.
    let data = dir.path().join("data");
    let list = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(&data)
        .args(["incident", "list"])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&list.stdout).to_string();
    // A header line, then one line per incident.
    let rows: Vec<&str> = listing.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{listing}");
    let id = rows[0]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    let timeline = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(&data)
        .args(["incident", "timeline", &id, "--json"])
        .output()
        .unwrap();
    let timeline = String::from_utf8_lossy(&timeline.stdout).to_string();
    assert!(timeline.contains("pool full on api-0"), "{timeline}");
    assert!(timeline.contains("root-cause"), "{timeline}");
    assert!(timeline.contains("threshold_crossed"), "{timeline}");
    // The crossing seen while watching went in at the time it happened (before the incident
    // was opened), and before the note that declared the incident.
    let store = warroom::incident::Store::new(&data);
    let records = store
        .read(&warroom::incident::IncidentId::parse(&id).unwrap())
        .unwrap()
        .records;
    use warroom::incident::Event;
    let opened = records
        .iter()
        .find(|r| matches!(r.kind, Event::IncidentOpened { .. }))
        .expect("the incident was opened");
    let (crossing_seq, crossing_at) = records
        .iter()
        .find_map(|r| match r.kind {
            Event::ThresholdCrossed { at, .. } => Some((r.seq, at)),
            _ => None,
        })
        .expect("the crossing was recorded");
    let note_seq = records
        .iter()
        .find(|r| matches!(&r.kind, Event::Note { text, .. } if text.contains("pool full")))
        .expect("the note was recorded")
        .seq;
    assert!(
        crossing_at < opened.time,
        "{crossing_at} vs {}",
        opened.time
    );
    assert!(crossing_seq < note_seq, "{records:?}");
    let log = std::fs::read_to_string(dir.path().join("warroom.log")).unwrap_or_default();
    assert!(log.contains("first frame drawn"), "log: {log}");
    assert!(!log.contains('\u{1b}'), "raw escape in the log");
}

#[test]
fn open_without_a_prometheus_url_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .args(["--log-file"])
        .arg(dir.path().join("log"))
        .args(["--config"])
        .arg(dir.path().join("none.toml"))
        .arg("open")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("none.toml"), "{err}");

    let cfg = dir.path().join("w.toml");
    std::fs::write(
        &cfg,
        "refresh = \"5s\"\n[prometheus]\nurl = \"gopher://x\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .args(["--log-file"])
        .arg(dir.path().join("log"))
        .arg("--config")
        .arg(&cfg)
        .arg("open")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("w.toml:3:7"), "{err}");
    assert!(err.contains("http(s) URL"), "{err}");
}

/// What the console copied into tmux's buffer once `ok` holds (bounded: 5 s).
fn poll_copied(term: &tmux::Tmux, ok: impl Fn(&str) -> bool) -> Option<String> {
    for _ in 0..100 {
        if let Some(c) = term.copied().filter(|c| ok(c)) {
            return Some(c);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    term.copied()
}
