//! `warroom open --prometheus URL` with no config file on a real stack (PostgreSQL with Debian's
//! postgres_exporter under a pgbench load of slow statements, HAProxy with its exporter in
//! front of a backend that fails some requests, a real Prometheus): the console discovers the
//! stacks, names them in the status bar and shows live saturation, latency and error panels;
//! the saturation it shows is what `pg_stat_activity` says. `warroom discover --toml` then
//! writes a config that loads back and shows the same panels.

use crate::support::realstack;
use crate::support::realstack_presets::{RetryingHaproxy, failing_backend};
use crate::support::tmux::Tmux;
use realstack::prometheus;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const PANELS: [&str; 3] = [
    "PostgreSQL connection saturation",
    "HAProxy backend 5xx ratio",
    "HAProxy backend response time",
];

fn console(data: &Path, config: &Path, url: &str) -> String {
    format!(
        "{} --data-dir {} --config {} --log-file {} open --prometheus {url}",
        env!("CARGO_BIN_EXE_warroom"),
        data.display(),
        config.display(),
        data.join("console.log").display(),
    )
}

/// The percentage shown on the line after a panel's title, e.g. `38.6%` in
/// `│38.6% ✓ ok ...`: the number before the first `%` of the next line under the title.
fn shown_percent(screen: &str, title: &str) -> Option<f64> {
    let lines: Vec<&str> = screen.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(col) = l.find(title) else { continue };
        let next = lines.get(i + 1)?;
        let tail: String = next
            .chars()
            .skip(l[..col].chars().count().saturating_sub(2))
            .collect();
        let pct = tail.find('%')?;
        let num: String = tail[..pct]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return num.parse().ok();
    }
    None
}

#[test]
fn the_console_on_a_real_stack_discovers_it_and_shows_live_panels() {
    let Some(pg) = realstack::Postgres::start() else {
        return;
    };
    let Some(exporter) = realstack::Exporter::postgres(&pg) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (backend, _counts) = failing_backend(dir.path());
    let Some(haproxy) = RetryingHaproxy::start(backend.port, 2) else {
        return;
    };
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![exporter.target(), haproxy.prometheus_target()],
        scrape_interval: "1s",
        ..Default::default()
    }) else {
        return;
    };
    // Traffic through HAProxy (bounded), so its panels have data.
    let port = haproxy.port;
    let traffic = std::thread::spawn(move || {
        for _ in 0..600 {
            let _ = realstack::http_get(port, "/work", Duration::from_secs(2));
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let clients = 16;
    let Some(_bench) = realstack::Pgbench::start(
        pg.port,
        "SELECT pg_sleep(60);\n",
        clients,
        Duration::from_secs(70),
    ) else {
        return;
    };
    let data = dir.path().join("data");
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let Some(term) = Tmux::start(&console(&data, &empty, &prom.url), 200, 60) else {
        return;
    };
    let wait = Duration::from_secs(60);
    term.expect("found postgres_exporter, HAProxy", wait);
    // Every panel live, none "no data".
    let screen = term
        .wait_for(wait, |s| {
            PANELS.iter().all(|p| s.contains(p))
                && shown_percent(s, PANELS[0]).is_some_and(|v| v > 20.0)
                && !s.contains("no data")
                && !s.contains("waiting for the first answer")
        })
        .unwrap_or_else(|| panic!("live panels:\n{}", term.screen()));
    // What the console shows is what PostgreSQL says (within a scrape of drift).
    let connected = "select count(*) from pg_stat_activity where datname is not null and state is not null and pid <> pg_backend_pid()";
    let limit = "select current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int";
    let usable: f64 = pg.psql("postgres", limit).trim().parse().unwrap();
    let now: f64 = pg.psql("postgres", connected).trim().parse().unwrap();
    let want = 100.0 * now / usable;
    let shown = shown_percent(&screen, PANELS[0]).unwrap();
    eprintln!("saturation: console {shown}% against pg_stat_activity {now}/{usable} = {want:.1}%");
    assert!(
        (shown - want).abs() <= 2.0,
        "console {shown}% vs {want:.1}%\n{screen}"
    );
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(10));

    // `warroom discover --toml` writes a config that loads back and shows the same panels.
    let out = Command::new(env!("CARGO_BIN_EXE_warroom"))
        .args(["--config"])
        .arg(&empty)
        .args(["--log-file"])
        .arg(dir.path().join("discover.log"))
        .args(["discover", "--toml", "--prometheus", &prom.url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = String::from_utf8_lossy(&out.stdout).to_string();
    let written = dir.path().join("discovered.toml");
    std::fs::write(&written, &toml).unwrap();
    let config = warroom::config::Config::load(Some(&written)).expect("the written config loads");
    assert!(!config.panels.is_empty());
    for p in PANELS {
        assert!(
            config.panels.iter().any(|c| c.title.starts_with(p)),
            "{p} in\n{toml}"
        );
    }
    let Some(term) = Tmux::start(&console(&data, &written, &prom.url), 200, 60) else {
        return;
    };
    term.wait_for(wait, |s| {
        PANELS.iter().all(|p| s.contains(p))
            && shown_percent(s, PANELS[0]).is_some_and(|v| v > 20.0)
            && !s.contains("no data")
    })
    .unwrap_or_else(|| panic!("the written config's panels:\n{}", term.screen()));
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(10));
    let _ = traffic.join();
    let _ = Instant::now();
}
