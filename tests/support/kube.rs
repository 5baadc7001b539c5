//! Kubernetes without a cluster, for the Kubernetes runbooks: a `kubectl` stand-in (a small
//! shell script written into a temporary directory, to put first on `PATH`) that records every
//! call's argv and answers as kubectl does, and a pretend cluster behind it that serves a
//! kube-state-metrics exposition (and the sidecars' Envoy retry stats) for a real Prometheus to
//! scrape. When the stand-in deletes a pod, the cluster does what a ReplicaSet does: the pod
//! terminates (its `kube_pod_deletion_timestamp` appears, the Deployment has one replica less
//! available), it is gone, a replacement with a new name starts and becomes ready. A patch
//! that sets a VirtualService's `retries.attempts` to 0 stops the Envoy retry counter.
//!
//! The cluster keeps a timeline of what it did, so a test can check that the runbook waited
//! for each replacement before the next deletion.

#![allow(dead_code)]

use super::realstack::{Backend, Handler, Request};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a deleted pod takes to terminate.
pub const TERMINATING_FOR: Duration = Duration::from_millis(600);
/// How long a replacement takes from created to ready: longer than the test's settle and soak
/// together, so only a runbook that waits for it sees it.
pub const STARTING_FOR: Duration = Duration::from_millis(6000);
/// Envoy's completed requests per second to the mesh's host, and retries per second before
/// the patch.
pub const COMPLETED_PER_S: f64 = 50.0;
pub const RETRIES_PER_S: f64 = 40.0;

/// The namespace of the pretend cluster and its Istio host.
pub const NAMESPACE: &str = "shop";
pub const HOST: &str = "web.shop.svc.cluster.local";

/// One pod.
#[derive(Debug, Clone)]
pub struct Pod {
    pub name: String,
    pub deployment: String,
    pub replicaset: String,
    pub uid: String,
    pub ready: bool,
    /// When it was asked to go (Unix seconds), while it terminates.
    pub deleting: Option<f64>,
}

/// What the cluster did, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Happened {
    /// kubectl asked for the pod to be deleted.
    Deleting(String),
    Gone(String),
    /// A replacement was created for the deleted pod (deleted, new).
    Created(String, String),
    /// The pod became ready; the Deployment had this many available then.
    Ready(String, u32),
    Patched,
}

#[derive(Debug, Default)]
struct State {
    pods: Vec<Pod>,
    replicas: BTreeMap<String, u32>,
    timeline: Vec<(Instant, Happened)>,
    /// Envoy counters and whether retries are off.
    completed: f64,
    retried: f64,
    retries_off: bool,
    next_uid: u32,
}

impl State {
    fn available(&self, deployment: &str) -> u32 {
        self.pods
            .iter()
            .filter(|p| p.deployment == deployment && p.ready && p.deleting.is_none())
            .count() as u32
    }

    fn render(&self) -> String {
        let mut out = String::new();
        out += "# TYPE kube_pod_info gauge\n";
        for p in &self.pods {
            out += &format!(
                "kube_pod_info{{namespace=\"{NAMESPACE}\",pod=\"{}\",uid=\"{}\",node=\"node-1\",created_by_kind=\"ReplicaSet\",created_by_name=\"{}\"}} 1\n",
                p.name, p.uid, p.replicaset
            );
        }
        out += "# TYPE kube_pod_status_ready gauge\n";
        for p in &self.pods {
            for (cond, v) in [("true", p.ready), ("false", !p.ready)] {
                out += &format!(
                    "kube_pod_status_ready{{namespace=\"{NAMESPACE}\",pod=\"{}\",uid=\"{}\",condition=\"{cond}\"}} {}\n",
                    p.name,
                    p.uid,
                    u8::from(v)
                );
            }
        }
        out += "# TYPE kube_pod_deletion_timestamp gauge\n";
        for p in &self.pods {
            if let Some(at) = p.deleting {
                out += &format!(
                    "kube_pod_deletion_timestamp{{namespace=\"{NAMESPACE}\",pod=\"{}\",uid=\"{}\"}} {at}\n",
                    p.name, p.uid
                );
            }
        }
        out += "# TYPE kube_pod_container_status_restarts_total counter\n";
        for p in &self.pods {
            out += &format!(
                "kube_pod_container_status_restarts_total{{namespace=\"{NAMESPACE}\",pod=\"{}\",uid=\"{}\",container=\"{}\"}} 0\n",
                p.name, p.uid, p.deployment
            );
        }
        out += "# TYPE kube_deployment_spec_replicas gauge\n";
        for (d, n) in &self.replicas {
            out += &format!(
                "kube_deployment_spec_replicas{{namespace=\"{NAMESPACE}\",deployment=\"{d}\"}} {n}\n"
            );
        }
        out += "# TYPE kube_deployment_status_replicas_available gauge\n";
        for d in self.replicas.keys() {
            out += &format!(
                "kube_deployment_status_replicas_available{{namespace=\"{NAMESPACE}\",deployment=\"{d}\"}} {}\n",
                self.available(d)
            );
        }
        let cluster = format!("outbound|8080||{HOST}");
        out += &format!(
            "# TYPE envoy_cluster_upstream_rq_retry counter\nenvoy_cluster_upstream_rq_retry{{cluster_name=\"{cluster}\"}} {}\n",
            self.retried.floor()
        );
        out += &format!(
            "# TYPE envoy_cluster_upstream_rq_completed counter\nenvoy_cluster_upstream_rq_completed{{cluster_name=\"{cluster}\"}} {}\n",
            self.completed.floor()
        );
        out
    }
}

/// The pretend cluster: the exposition on [`Cluster::target`], the stand-in in
/// [`Cluster::bin_dir`], the calls in [`Cluster::calls`].
pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub bin_dir: PathBuf,
    exposition: Backend,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The stand-in: records `time_ms<TAB>arg<TAB>arg…` a line in `calls.log`, then answers.
fn script(dir: &Path) -> String {
    let d = dir.display();
    format!(
        r#"#!/bin/sh
# A kubectl stand-in for warroom's tests: records its argv, answers as kubectl does.
d={d}
line="$(date +%s%3N)"
for a in "$@"; do line="$line	$a"; done
printf '%s\n' "$line" >> "$d/calls.log"
set -- $(for a in "$@"; do case "$a" in --*) ;; *) printf '%s\n' "$a";; esac; done)
case "$1 $2" in
"delete pod")
  if [ ! -e "$d/pods/$3" ]; then
    echo "Error from server (NotFound): pods \"$3\" not found" >&2; exit 1
  fi
  touch "$d/deleting/$3"
  echo "pod \"$3\" deleted"
  i=0
  while [ -e "$d/pods/$3" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
  [ ! -e "$d/pods/$3" ] || {{ echo "error: timed out waiting for the condition on pods/$3" >&2; exit 1; }}
  ;;
"rollout undo")
  echo "deployment.apps/${{3#deployment/}} rolled back" ;;
"rollout status")
  echo "deployment \"${{3#deployment/}}\" successfully rolled out" ;;
"rollout history")
  printf 'deployment.apps/%s \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n' "${{3#deployment/}}" ;;
"get virtualservice")
  cat "$d/retries.json" ;;
"patch virtualservice")
  touch "$d/patched"
  echo "virtualservice.networking.istio.io/$3 patched" ;;
*)
  echo "error: unknown command \"$1\" for \"kubectl\"" >&2; exit 1 ;;
esac
"#
    )
}

fn now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Cluster {
    /// A cluster with `deployments` (name, replicas), every pod ready.
    pub fn start(deployments: &[(&str, u32)]) -> Cluster {
        let dir = tempfile::tempdir().expect("temp dir");
        let bin_dir = dir.path().join("bin");
        for sub in ["bin", "pods", "deleting"] {
            std::fs::create_dir(dir.path().join(sub)).expect("a stand-in directory");
        }
        let kubectl = bin_dir.join("kubectl");
        std::fs::write(&kubectl, script(dir.path())).expect("write the kubectl stand-in");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755))
            .expect("make the stand-in executable");
        std::fs::write(
            dir.path().join("retries.json"),
            r#"{"attempts":3,"perTryTimeout":"2s","retryOn":"5xx,connect-failure"}"#,
        )
        .expect("write the VirtualService's retries");
        let mut state = State::default();
        for (d, n) in deployments {
            state.replicas.insert(d.to_string(), *n);
            let rs = format!("{d}-5d8f7c9b4");
            for i in 0..*n {
                let name = format!(
                    "{rs}-{}",
                    ["x2x7q", "b9k4m", "p3w8z", "r7t2n", "h5c1v"][i as usize % 5]
                );
                state.next_uid += 1;
                std::fs::write(dir.path().join("pods").join(&name), "").expect("a pod file");
                state.pods.push(Pod {
                    name,
                    deployment: d.to_string(),
                    replicaset: rs.clone(),
                    uid: format!("uid-{}", state.next_uid),
                    ready: true,
                    deleting: None,
                });
            }
        }
        let state = Arc::new(Mutex::new(state));
        let handler: Handler = {
            let state = state.clone();
            Arc::new(move |_r: &Request| match state.lock() {
                Ok(s) => (200, s.render()),
                Err(_) => (500, "poisoned\n".into()),
            })
        };
        let exposition = Backend::start("kube-state-metrics", dir.path(), handler);
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (state, stop, root) = (state.clone(), stop.clone(), dir.path().to_path_buf());
            std::thread::spawn(move || control(&root, &state, &stop))
        };
        Cluster {
            dir,
            bin_dir,
            exposition,
            state,
            stop,
            thread: Some(thread),
        }
    }

    /// `host:port` of the exposition, for a Prometheus scrape config.
    pub fn target(&self) -> String {
        self.exposition.addr()
    }

    /// `PATH` with the stand-in first.
    pub fn path_env(&self) -> String {
        format!(
            "{}:{}",
            self.bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// The stand-in's calls: when, and the argv after `kubectl`.
    pub fn calls(&self) -> Vec<(u128, Vec<String>)> {
        std::fs::read_to_string(self.dir.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let mut f = l.split('\t');
                let at = f.next()?.parse().ok()?;
                Some((at, f.map(String::from).collect()))
            })
            .collect()
    }

    /// The pods now (name, deployment, ready, terminating).
    pub fn pods(&self) -> Vec<Pod> {
        self.state
            .lock()
            .map(|s| s.pods.clone())
            .unwrap_or_default()
    }

    /// Replicas available of `deployment` now.
    pub fn available(&self, deployment: &str) -> u32 {
        self.state
            .lock()
            .map(|s| s.available(deployment))
            .unwrap_or(0)
    }

    /// What the cluster did, with when.
    pub fn timeline(&self) -> Vec<(Instant, Happened)> {
        self.state
            .lock()
            .map(|s| s.timeline.clone())
            .unwrap_or_default()
    }

    /// The VirtualService's retries as `kubectl get` would print them.
    pub fn retries(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("retries.json")).unwrap_or_default()
    }
}

/// What the ReplicaSet controller and the sidecars do, every 50 ms.
fn control(root: &Path, state: &Mutex<State>, stop: &AtomicBool) {
    let mut starting: Vec<(String, Instant)> = Vec::new();
    let mut terminating: Vec<(String, Instant)> = Vec::new();
    let mut last = Instant::now();
    let names = ["k4d9s", "m2q8v", "t6z1c", "w3n5j", "y8f2h", "c1r7p"];
    let mut next_name = 0;
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
        let Ok(mut s) = state.lock() else { return };
        let now = Instant::now();
        let dt = now.duration_since(last).as_secs_f64();
        last = now;
        s.completed += COMPLETED_PER_S * dt;
        if !s.retries_off && root.join("patched").exists() {
            s.retries_off = true;
            let _ = std::fs::write(root.join("retries.json"), r#"{"attempts":0}"#);
            s.timeline.push((now, Happened::Patched));
        }
        if !s.retries_off {
            s.retried += RETRIES_PER_S * dt;
        }
        // kubectl asked for a deletion: the pod terminates, a replacement is created.
        let asked: Vec<String> = std::fs::read_dir(root.join("deleting"))
            .into_iter()
            .flatten()
            .filter_map(std::result::Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        for name in asked {
            let _ = std::fs::remove_file(root.join("deleting").join(&name));
            let Some(i) = s.pods.iter().position(|p| p.name == name) else {
                continue;
            };
            s.pods[i].deleting = Some(now_s());
            s.pods[i].ready = false;
            let old = s.pods[i].clone();
            s.timeline.push((now, Happened::Deleting(name.clone())));
            let new = format!("{}-{}", old.replicaset, names[next_name % names.len()]);
            next_name += 1;
            s.next_uid += 1;
            let uid = format!("uid-{}", s.next_uid);
            s.pods.push(Pod {
                name: new.clone(),
                uid,
                ready: false,
                deleting: None,
                ..old
            });
            let _ = std::fs::write(root.join("pods").join(&new), "");
            s.timeline
                .push((now, Happened::Created(name.clone(), new.clone())));
            terminating.push((name, now));
            starting.push((new, now));
        }
        terminating.retain(|(name, at)| {
            if now.duration_since(*at) < TERMINATING_FOR {
                return true;
            }
            s.pods.retain(|p| &p.name != name);
            let _ = std::fs::remove_file(root.join("pods").join(name));
            s.timeline.push((now, Happened::Gone(name.clone())));
            false
        });
        starting.retain(|(name, at)| {
            if now.duration_since(*at) < STARTING_FOR {
                return true;
            }
            let Some(p) = s.pods.iter_mut().find(|p| &p.name == name) else {
                return false;
            };
            p.ready = true;
            let d = p.deployment.clone();
            let available = s.available(&d);
            s.timeline
                .push((now, Happened::Ready(name.clone(), available)));
            false
        });
    }
}
