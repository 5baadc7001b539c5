//! The shipped Kubernetes and Istio runbooks, run as a user runs them (`warroom runbook run NAME
//! --yes --prometheus URL`) with a `kubectl` stand-in first on `PATH` (kubectl cannot reach a
//! cluster here): the stand-in records its argv and answers as kubectl does, and a pretend
//! cluster serves kube-state-metrics (and Envoy's retry stats) to a real Prometheus, which the
//! runbooks' gates read. Deleting a pod makes the cluster replace it as a ReplicaSet would, so
//! the gates see replicas go and come back; the test checks that each deletion waited for the
//! replacement before it.

use crate::support::kube::{self, Cluster, Happened, NAMESPACE};
use crate::support::prometheus;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `warroom runbook run NAME --yes` with the stand-in on PATH, a fresh data dir, no config.
fn run(cluster: &Cluster, prom: &str, name: &str, vars: &[&str]) -> Output {
    let dir = cluster.dir.path();
    std::fs::write(dir.join("empty.toml"), "").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warroom"));
    cmd.arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--config")
        .arg(dir.join("empty.toml"))
        .arg("--log-file")
        .arg(dir.join("warroom.log"))
        .args(["runbook", "run", name, "--yes", "--prometheus", prom])
        .env("PATH", cluster.path_env())
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null());
    for v in vars {
        cmd.args(["--var", v]);
    }
    let out = cmd.output().expect("run warroom");
    eprintln!(
        "warroom runbook run {name}: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A real Prometheus scraping the cluster every second, once it has the Deployment's replicas.
fn prometheus_on(cluster: &Cluster) -> Option<prometheus::PromServer> {
    let prom = prometheus::start(prometheus::PromOptions {
        targets: vec![cluster.target()],
        ..Default::default()
    })?;
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        if let Some((200, body)) = prometheus::http_get(
            prom.port,
            "/api/v1/query?query=kube_deployment_spec_replicas",
            Duration::from_secs(2),
        ) && body.contains("\"deployment\":\"web\"")
        {
            return Some(prom);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("prometheus never scraped the pretend cluster");
}

fn ns() -> String {
    format!("--namespace={NAMESPACE}")
}

#[test]
fn k8s_batch_restart_deletes_each_pod_after_the_last_replacement_is_available() {
    let cluster = Cluster::start(&[("web", 3), ("worker", 2)]);
    let Some(prom) = prometheus_on(&cluster) else {
        return;
    };
    let before: Vec<String> = cluster
        .pods()
        .iter()
        .filter(|p| p.deployment == "web")
        .map(|p| p.name.clone())
        .collect();
    let workers: Vec<String> = cluster
        .pods()
        .iter()
        .filter(|p| p.deployment == "worker")
        .map(|p| p.name.clone())
        .collect();
    let out = run(
        &cluster,
        &prom.url,
        "k8s-batch-restart",
        &[
            &format!("namespace={NAMESPACE}"),
            "deployment=web",
            "soak=1s",
            "settle=2s",
            "interval=1s",
            "instance_deadline=30s",
            "delete_within=20s",
        ],
    );
    assert!(out.status.success(), "the run failed");
    // kubectl was asked to delete exactly the Deployment's pods, one call each, in order.
    let deletes: Vec<(u128, Vec<String>)> = cluster
        .calls()
        .into_iter()
        .filter(|(_, argv)| argv.iter().any(|a| a == "delete"))
        .collect();
    let deleted: Vec<String> = deletes.iter().map(|(_, a)| a[4].clone()).collect();
    let mut sorted = before.clone();
    sorted.sort();
    assert_eq!(deleted, sorted, "{deletes:?}");
    for (_, argv) in &deletes {
        assert_eq!(argv[..4], ["--context=", ns().as_str(), "delete", "pod"]);
        assert_eq!(argv[5..], ["--wait=true", "--timeout=20s"]);
    }
    // The workers were never touched; the web pods are all replacements, all ready.
    let after = cluster.pods();
    for w in &workers {
        assert!(after.iter().any(|p| &p.name == w), "{w} was touched");
    }
    let web: Vec<_> = after.iter().filter(|p| p.deployment == "web").collect();
    assert_eq!(web.len(), 3);
    assert!(web.iter().all(|p| p.ready && !before.contains(&p.name)));
    assert_eq!(cluster.available("web"), 3);
    // Each deletion came after the replacement of the one before was ready and the Deployment
    // whole again: the gate held the batches apart.
    let timeline = cluster.timeline();
    let ready_at: Vec<Instant> = timeline
        .iter()
        .filter_map(|(at, h)| matches!(h, Happened::Ready(_, 3)).then_some(*at))
        .collect();
    let deleting_at: Vec<Instant> = timeline
        .iter()
        .filter_map(|(at, h)| matches!(h, Happened::Deleting(_)).then_some(*at))
        .collect();
    assert_eq!((ready_at.len(), deleting_at.len()), (3, 3), "{timeline:?}");
    for i in 1..3 {
        let gap = deleting_at[i].saturating_duration_since(ready_at[i - 1]);
        assert!(
            deleting_at[i] > ready_at[i - 1],
            "pod {} was deleted before the replacement of pod {} was ready",
            i + 1,
            i
        );
        eprintln!(
            "batch {}: deleted {:.1} s after the Deployment was whole again",
            i + 1,
            gap.as_secs_f64()
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("restart"), "{stdout}");
}

#[test]
fn k8s_rollback_undoes_waits_for_the_rollout_and_for_every_replica() {
    let cluster = Cluster::start(&[("web", 3)]);
    let Some(prom) = prometheus_on(&cluster) else {
        return;
    };
    let out = run(
        &cluster,
        &prom.url,
        "k8s-rollback",
        &[
            &format!("namespace={NAMESPACE}"),
            "deployment=web",
            "interval=1s",
            "rollout_within=30s",
        ],
    );
    assert!(out.status.success(), "the run failed");
    let calls: Vec<Vec<String>> = cluster.calls().into_iter().map(|(_, a)| a).collect();
    let want: Vec<Vec<String>> = [
        vec!["rollout", "history", "deployment/web"],
        vec!["rollout", "undo", "deployment/web", "--to-revision=0"],
        vec!["rollout", "status", "deployment/web", "--timeout=30s"],
    ]
    .iter()
    .map(|tail| {
        let mut v = vec!["--context=".to_string(), ns()];
        v.extend(tail.iter().map(std::string::ToString::to_string));
        v
    })
    .collect();
    assert_eq!(calls, want);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("rolled back"),
        "kubectl's answer shown:\n{stdout}"
    );
}

#[test]
fn k8s_rollback_of_a_deployment_prometheus_does_not_know_touches_nothing() {
    let cluster = Cluster::start(&[("web", 3)]);
    let Some(prom) = prometheus_on(&cluster) else {
        return;
    };
    let out = run(
        &cluster,
        &prom.url,
        "k8s-rollback",
        &[
            &format!("namespace={NAMESPACE}"),
            "deployment=nope",
            "interval=1s",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "a failed step");
    assert!(
        cluster.calls().is_empty(),
        "kubectl was called: {:?}",
        cluster.calls()
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        all.lines()
            .any(|l| l.contains("deployed: failed") && l.contains("no series")),
        "the failed step says why:\n{all}"
    );
}

#[test]
fn a_kubectl_that_is_not_there_fails_its_step_with_one_clear_line() {
    let cluster = Cluster::start(&[("web", 3)]);
    let Some(prom) = prometheus_on(&cluster) else {
        return;
    };
    let missing = cluster.dir.path().join("no-such-kubectl");
    let out = run(
        &cluster,
        &prom.url,
        "k8s-rollback",
        &[
            &format!("namespace={NAMESPACE}"),
            "deployment=web",
            &format!("kubectl={}", missing.display()),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = all
        .lines()
        .find(|l| l.contains("history: failed"))
        .unwrap_or_else(|| panic!("no line says the step failed:\n{all}"));
    assert!(
        line.contains(&format!("cannot start \"{}\"", missing.display()))
            && line.contains("No such file or directory"),
        "{line}"
    );
    assert!(cluster.calls().is_empty());
    // The undo never ran: the first exec step failed and the run stopped.
    assert!(!all.contains("rolled back"), "{all}");
}

#[test]
fn istio_retries_off_patches_the_route_and_waits_until_envoy_stops_retrying() {
    let cluster = Cluster::start(&[("web", 2)]);
    let Some(prom) = prometheus_on(&cluster) else {
        return;
    };
    let amplification = |window: &str| -> Option<f64> {
        let q = format!(
            "1 %2B sum(rate(envoy_cluster_upstream_rq_retry[{window}])) / sum(rate(envoy_cluster_upstream_rq_completed[{window}]))"
        );
        let (_, body) = prometheus::http_get(
            prom.port,
            &format!("/api/v1/query?query={}", q.replace(' ', "%20")),
            Duration::from_secs(2),
        )?;
        let v: serde_json::Value = serde_json::from_str(&body).ok()?;
        v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    };
    // Retries show first: about 1.8 attempts per request.
    let until = Instant::now() + Duration::from_secs(20);
    let before = loop {
        if let Some(a) = amplification("5s").filter(|a| *a > 1.5) {
            break a;
        }
        assert!(Instant::now() < until, "the retries never showed");
        std::thread::sleep(Duration::from_millis(250));
    };
    let started = Instant::now();
    let out = run(
        &cluster,
        &prom.url,
        "istio-retries-off",
        &[
            &format!("namespace={NAMESPACE}"),
            "virtualservice=web",
            &format!("host={}", kube::HOST),
            "window=5s",
            "interval=1s",
            "within=60s",
        ],
    );
    assert!(out.status.success(), "the run failed");
    let calls: Vec<Vec<String>> = cluster.calls().into_iter().map(|(_, a)| a).collect();
    let get = |tail: &str| {
        vec![
            "--context=".to_string(),
            ns(),
            "get".into(),
            "virtualservice".into(),
            "web".into(),
            tail.to_string(),
        ]
    };
    let patch = vec![
        "--context=".to_string(),
        ns(),
        "patch".into(),
        "virtualservice".into(),
        "web".into(),
        "--type=json".into(),
        r#"--patch=[{"op": "add", "path": "/spec/http/0/retries", "value": {"attempts": 0}}]"#
            .into(),
    ];
    let jsonpath = "--output=jsonpath={.spec.http[0].retries}";
    assert_eq!(calls, vec![get(jsonpath), patch, get(jsonpath)]);
    // The patch is valid JSON Patch, and it turns retries off.
    let body = calls[1][6].strip_prefix("--patch=").unwrap();
    let ops: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(ops[0]["value"]["attempts"], 0);
    assert_eq!(cluster.retries(), r#"{"attempts":0}"#);
    let after = amplification("5s").unwrap();
    eprintln!(
        "attempts per request: {before:.2} before, {after:.2} after; the run took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(after < 1.05, "{after}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("perTryTimeout"),
        "the policy as it was is shown:\n{stdout}"
    );
}
