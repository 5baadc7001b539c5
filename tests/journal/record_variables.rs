//! `warroom record` on a dashboard imported offline from Grafana, whose panels use query
//! variables: the recorder resolves the `[[variable]]`s against its Prometheus as the console
//! does, sends each templated panel's query with the value (counted in Prometheus's own query
//! log: never a `$name`), titles the panel with it, and refuses, by name and with why, the
//! panel whose variable cannot resolve, sending nothing for it.

use crate::support::expositions;
use crate::support::prometheus::{self, PromOptions};

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use warroom::incident::Store;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Two services' queues; `cart`'s sorts first, so a value not chosen would show as `cart`.
const EXPOSITION: &str = "# TYPE queue_depth gauge\n\
    queue_depth{service=\"cart\",queue=\"emails\"} 1\n\
    queue_depth{service=\"checkout\",queue=\"orders\"} 7\n";

/// A Grafana dashboard as the community writes them: `$service` is a query variable saved
/// as "checkout", used in a query, a title and a legend; `$shard`'s query is one Prometheus
/// refuses (an invalid regular expression), so the panel using it cannot be sent.
const DASHBOARD: &str = r#"{
  "title": "Queues",
  "templating": {"list": [
    {"name": "service", "type": "query", "datasource": {"type": "prometheus", "uid": "p"},
     "query": {"query": "label_values(queue_depth, service)", "refId": "A"},
     "current": {"text": "checkout", "value": "checkout"}, "refresh": 1},
    {"name": "shard", "type": "query", "datasource": {"type": "prometheus", "uid": "p"},
     "query": "query_result(label_replace(queue_depth, \"shard\", \"$1\", \"queue\", \"([\"))",
     "refresh": 1}
  ]},
  "panels": [
    {"id": 1, "type": "timeseries", "title": "Queue depth of $service",
     "datasource": {"type": "prometheus", "uid": "p"},
     "targets": [{"refId": "A", "expr": "max by (queue) (queue_depth{service=\"$service\"})",
                  "legendFormat": "{{queue}} of ${service}"}]},
    {"id": 2, "type": "timeseries", "title": "Shard $shard",
     "datasource": {"type": "prometheus", "uid": "p"},
     "targets": [{"refId": "A", "expr": "sum(queue_depth{queue=~\"$shard\"})"}]}
  ]
}"#;

fn warroom(data: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warroom"));
    cmd.arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(data.join("warroom.toml"))
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .env("NO_COLOR", "1");
    cmd
}

/// Polls until `pred` holds or `within` passes; whether it held.
fn wait_for(within: Duration, mut pred: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if pred() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    pred()
}

#[test]
fn the_recorder_sends_an_imported_dashboards_queries_with_their_variables_values() {
    let target = expositions::serve_with(|_| EXPOSITION.to_string());
    let Some(prom) = prometheus::start_logging_queries(PromOptions {
        targets: vec![target],
        ..Default::default()
    }) else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    // The dashboard imported offline: its query variables become `[[variable]]` entries.
    std::fs::write(dir.join("queues.json"), DASHBOARD).unwrap();
    std::fs::write(dir.join("warroom.toml"), "refresh = \"1s\"\n").unwrap();
    let out = warroom(dir)
        .args(["import", "grafana"])
        .arg(dir.join("queues.json"))
        .arg("--toml")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{said}");
    let toml = String::from_utf8_lossy(&out.stdout).to_string();
    for written in [
        "[[variable]]",
        "name = \"service\"",
        "name = \"shard\"",
        "$service",
    ] {
        assert!(toml.contains(written), "{written}: {toml}\n{said}");
    }
    std::fs::write(
        dir.join("warroom.toml"),
        format!("refresh = \"1s\"\n{toml}"),
    )
    .unwrap();
    // Until Prometheus has the series the variable looks up, bounded.
    let has = |q: &str| {
        let path = format!("/api/v1/query?query={q}");
        prometheus::http_get(prom.port, &path, Duration::from_secs(2))
            .is_some_and(|(s, body)| s == 200 && body.contains("checkout"))
    };
    assert!(
        wait_for(Duration::from_secs(30), || has("queue_depth")),
        "Prometheus did not scrape the exposition within 30 s"
    );
    let before = prom.queries().len();

    let out = warroom(dir)
        .args(["incident", "new", "--title", "queues"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let err = dir.join("record.err");
    let mut recorder = Killed(
        warroom(dir)
            .args(["record", &id, "--prometheus", &prom.url])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("start warroom record"),
    );
    let log = || std::fs::read_to_string(&err).unwrap_or_default();
    let mine = |q: &String| q.contains("queue_depth{service=");
    // A few refreshes of the templated panel (1 s each), bounded.
    let sent = wait_for(Duration::from_secs(30), || {
        prom.queries()[before..].iter().filter(|q| mine(q)).count() >= 3
    });
    assert!(sent, "the panel was not queried: {}", log());

    let pid = nix::unistd::Pid::from_raw(recorder.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let stopped = wait_for(Duration::from_secs(10), || {
        recorder.0.try_wait().unwrap().is_some()
    });
    assert!(stopped, "the recorder did not stop on SIGTERM");
    let log = log();

    // Prometheus's own log: every query of the templated panel carries the saved value, and
    // nothing the recorder sent has a `$` in it or is the refused panel's.
    let queries: Vec<String> = prom.queries()[before..].to_vec();
    let with_value = "max by (queue) (queue_depth{service=\"checkout\"})";
    let n = queries.iter().filter(|q| *q == with_value).count();
    let templated = queries.iter().filter(|q| mine(q)).count();
    assert!(n >= 3 && n == templated, "{n} of {templated}: {queries:#?}");
    // No Grafana reference (`$name`, `${name}`, `[[name]]`) reached Prometheus; the one `$1`
    // is PromQL's own, in `$shard`'s look-up, which Prometheus refused.
    let named: Vec<&String> = (queries.iter())
        .filter(|q| !warroom::variables::references(q).is_empty())
        .collect();
    assert!(named.is_empty(), "{named:#?}");
    let lookups = queries.iter().filter(|q| q.starts_with("label_replace("));
    assert_eq!(lookups.count(), 1, "{queries:#?}");
    assert!(
        !queries.iter().any(|q| q.contains("queue=~")),
        "{queries:#?}"
    );
    eprintln!(
        "the recorder sent {} queries, {n} of them the templated panel's with $service = checkout",
        queries.len()
    );

    // The refused panel is named, with its variable and why.
    assert!(
        log.contains("panel \"Shard $shard\" is not recorded: variable $shard has no value"),
        "{log}"
    );
    assert!(log.contains("nothing is sent for it"), "{log}");

    // The snapshot taken at the stop holds the panel as filled in: title, legend and the
    // checkout queue's figure.
    let store = Store::new(dir);
    let found = store.find(&id).unwrap();
    let snaps = warroom::incident::snapshot::read_all(&store.snapshots_dir(&found)).unwrap();
    assert_eq!(snaps.len(), 1, "{snaps:#?}\n{log}");
    let snap = &snaps[0];
    assert_eq!(snap.title, "Queue depth of checkout");
    assert_eq!(snap.query, with_value);
    assert_eq!(snap.legend.as_deref(), Some("{{queue}} of checkout"));
    let last = (snap.series.iter())
        .flat_map(|s| s.points.last())
        .map(|p| p[1])
        .collect::<Vec<_>>();
    assert_eq!(last, [7.0], "{snap:#?}");
}
