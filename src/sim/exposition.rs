//! The model as metrics: the families of DESIGN.md's table ("Signals and the simulator's
//! metrics"), as data ([`samples`], for the embedded store) and as the Prometheus text format
//! ([`render`], through prometheus-client). Both come from the same [`families`], so the
//! console sees the same numbers whether it scrapes or embeds.

use super::fleet::{CODES, Instance};
use super::histogram::{BUCKETS, FluidHistogram};
use super::model::Sim;
use super::retry::Layer;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// The content type of [`render`]'s output.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Label pairs, in order.
pub type Labels = Vec<(String, String)>;

/// One series' value. Counters of events are whole numbers (the fluid model's counts floored,
/// which keeps them monotonic).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Counter(f64),
    Gauge(f64),
    Histogram(FluidHistogram),
}

/// A metric family: name (counters without `_total`), help, and its series.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
    pub series: Vec<(Labels, Value)>,
}

/// One exposed sample, as Prometheus would store it after a scrape.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Full name: `_total`, `_bucket`, `_sum`, `_count` included.
    pub name: String,
    pub labels: Labels,
    pub value: f64,
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn per_pod(sim: &Sim, f: impl Fn(&Instance) -> Value) -> Vec<(Labels, Value)> {
    let service = sim.scenario().service.as_str();
    sim.instances()
        .iter()
        .map(|i| (labels(&[("service", service), ("pod", &i.name)]), f(i)))
        .collect()
}

/// Every family the simulator exports, in DESIGN.md's order.
pub fn families(sim: &Sim) -> Vec<Family> {
    let sc = sim.scenario();
    let service = sc.service.as_str();
    let svc = || labels(&[("service", service)]);
    let count = |v: f64| Value::Counter(v.max(0.0).floor());
    let totals = sim.totals();
    let mut requests = Vec::new();
    for i in sim.instances() {
        for (c, code) in CODES.iter().enumerate() {
            requests.push((
                labels(&[("service", service), ("pod", &i.name), ("code", code)]),
                count(i.codes[c]),
            ));
        }
    }
    let retries = Layer::ALL
        .iter()
        .map(|l| {
            (
                labels(&[("service", service), ("layer", l.as_str())]),
                count(totals.retries[*l as usize]),
            )
        })
        .collect();
    let queries = sc
        .queries
        .iter()
        .zip(&sim.query_hist)
        .map(|(q, h)| {
            (
                labels(&[("service", service), ("query", &q.name)]),
                Value::Histogram(h.clone()),
            )
        })
        .collect();
    let mut build: Vec<&str> = sim
        .instances()
        .iter()
        .filter_map(|i| sc.versions.get(i.version).map(|v| v.name.as_str()))
        .collect();
    build.sort_unstable();
    build.dedup();
    vec![
        Family {
            name: "app_requests",
            help: "Attempts that reached an API instance, retries included.",
            series: requests,
        },
        Family {
            name: "app_logical_requests",
            help: "Distinct user requests (first attempts).",
            series: vec![(svc(), count(totals.logical))],
        },
        Family {
            name: "app_retries",
            help: "Retries issued by each layer.",
            series: retries,
        },
        Family {
            name: "app_request_duration_seconds",
            help: "End-to-end attempt latency.",
            series: per_pod(sim, |i| Value::Histogram(i.request_duration.clone())),
        },
        Family {
            name: "db_pool_connections_in_use",
            help: "Database connections in use.",
            series: per_pod(sim, |i| Value::Gauge(round(i.in_use()))),
        },
        Family {
            name: "db_pool_connections_max",
            help: "Database pool size.",
            series: per_pod(sim, |i| Value::Gauge(i.pool)),
        },
        Family {
            name: "db_pool_wait_seconds",
            help: "Time waiting for a database connection.",
            series: per_pod(sim, |i| Value::Histogram(i.pool_wait.clone())),
        },
        Family {
            name: "db_pool_acquire_timeouts",
            help: "Requests that gave up waiting for a connection.",
            series: per_pod(sim, |i| count(i.acquire_timeouts)),
        },
        Family {
            name: "db_query_duration_seconds",
            help: "Database query latency.",
            series: queries,
        },
        Family {
            name: "queue_depth",
            help: "Backlog waiting to be processed.",
            series: vec![(
                labels(&[("queue", &sim.backlog.name)]),
                Value::Gauge(sim.backlog.depth.floor()),
            )],
        },
        Family {
            name: "app_instance_up",
            help: "1 while the instance serves.",
            series: per_pod(sim, |i| Value::Gauge(if i.up { 1.0 } else { 0.0 })),
        },
        Family {
            name: "process_restarts",
            help: "Restarts, planned or crashes.",
            series: per_pod(sim, |i| count(i.restarts)),
        },
        Family {
            name: "process_resident_memory_bytes",
            help: "Memory in use.",
            series: per_pod(sim, |i| {
                Value::Gauge((i.memory_mb * 1024.0 * 1024.0).round())
            }),
        },
        Family {
            name: "app_duplicate_submissions",
            help: "Writes that duplicated an earlier one.",
            series: vec![(svc(), count(totals.duplicates))],
        },
        Family {
            name: "app_retry_enabled",
            help: "1 while the layer retries.",
            series: Layer::ALL
                .iter()
                .map(|l| {
                    let on = sim.retries_enabled(*l);
                    (
                        labels(&[("layer", l.as_str())]),
                        Value::Gauge(on as u8 as f64),
                    )
                })
                .collect(),
        },
        Family {
            name: "app_load_shedding_enabled",
            help: "1 while load shedding is on.",
            series: vec![(
                Vec::new(),
                Value::Gauge(sim.settings().load_shedding as u8 as f64),
            )],
        },
        Family {
            name: "app_build_info",
            help: "The deployed version.",
            series: build
                .into_iter()
                .map(|v| {
                    (
                        labels(&[("service", service), ("version", v)]),
                        Value::Gauge(1.0),
                    )
                })
                .collect(),
        },
    ]
}

fn round(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Histogram buckets as prometheus-client wants them: (bound, count in that bucket alone).
fn buckets(h: &FluidHistogram) -> (Vec<(f64, u64)>, u64) {
    let count = h.count.max(0.0).floor() as u64;
    let mut last = 0;
    let mut out = Vec::with_capacity(BUCKETS.len());
    for (bound, c) in BUCKETS.iter().zip(h.cumulative) {
        let c = (c.max(0.0).floor() as u64).clamp(last, count);
        out.push((*bound, c - last));
        last = c;
    }
    (out, count)
}

/// The model's samples now (histograms as `_bucket`, `_sum`, `_count`).
pub fn samples(sim: &Sim) -> Vec<Sample> {
    samples_of(families(sim))
}

/// Families flattened into samples.
pub fn samples_of(families: Vec<Family>) -> Vec<Sample> {
    let mut out = Vec::new();
    for f in families {
        for (l, v) in f.series {
            match v {
                Value::Counter(x) => out.push(Sample {
                    name: format!("{}_total", f.name),
                    labels: l,
                    value: x,
                }),
                Value::Gauge(x) => out.push(Sample {
                    name: f.name.to_string(),
                    labels: l,
                    value: x,
                }),
                Value::Histogram(h) => {
                    let (b, count) = buckets(&h);
                    let mut acc = 0;
                    for (bound, n) in b {
                        acc += n;
                        let mut bl = l.clone();
                        bl.push(("le".into(), format!("{bound}")));
                        out.push(Sample {
                            name: format!("{}_bucket", f.name),
                            labels: bl,
                            value: acc as f64,
                        });
                    }
                    let mut inf = l.clone();
                    inf.push(("le".into(), "+Inf".into()));
                    let name = f.name;
                    out.push(Sample {
                        name: format!("{name}_bucket"),
                        labels: inf,
                        value: count as f64,
                    });
                    out.push(Sample {
                        name: format!("{name}_sum"),
                        labels: l.clone(),
                        value: h.sum,
                    });
                    out.push(Sample {
                        name: format!("{name}_count"),
                        labels: l,
                        value: count as f64,
                    });
                }
            }
        }
    }
    out
}

/// A scrape's worth of families, encoded by prometheus-client.
#[derive(Debug)]
struct Snapshot(Vec<Family>);

impl Collector for Snapshot {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for f in &self.0 {
            let kind = match f.series.first().map(|s| &s.1) {
                Some(Value::Counter(_)) => MetricType::Counter,
                Some(Value::Histogram(_)) => MetricType::Histogram,
                _ => MetricType::Gauge,
            };
            let mut family = encoder.encode_descriptor(f.name, f.help, None, kind)?;
            for (l, v) in &f.series {
                let mut m = family.encode_family(l)?;
                match v {
                    Value::Counter(x) => {
                        m.encode_counter::<Labels, f64, f64>(&(*x as u64 as f64), None)?;
                    }
                    Value::Gauge(x) => m.encode_gauge(x)?,
                    Value::Histogram(h) => {
                        let (b, count) = buckets(h);
                        m.encode_histogram::<Labels>(h.sum, count, &b, None)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The Prometheus text format (version 0.0.4) of the model now.
pub fn render(sim: &Sim) -> String {
    render_families(families(sim))
}

/// Families in the Prometheus text format (the encoding can run outside the model's lock).
pub fn render_families(families: Vec<Family>) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Snapshot(families)));
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Scenario;

    fn planner() -> Sim {
        let mut s = Sim::new(Scenario::load("planner-peak").unwrap(), 1);
        s.run_until(120.0);
        s
    }

    #[test]
    fn text_has_every_family_with_its_type() {
        let text = render(&planner());
        for (name, kind) in [
            ("app_requests_total", "counter"),
            ("app_logical_requests_total", "counter"),
            ("app_retries_total", "counter"),
            ("app_request_duration_seconds", "histogram"),
            ("db_pool_connections_in_use", "gauge"),
            ("db_pool_connections_max", "gauge"),
            ("db_pool_wait_seconds", "histogram"),
            ("db_pool_acquire_timeouts_total", "counter"),
            ("db_query_duration_seconds", "histogram"),
            ("queue_depth", "gauge"),
            ("app_instance_up", "gauge"),
            ("process_restarts_total", "counter"),
            ("process_resident_memory_bytes", "gauge"),
            ("app_duplicate_submissions_total", "counter"),
            ("app_retry_enabled", "gauge"),
            ("app_load_shedding_enabled", "gauge"),
            ("app_build_info", "gauge"),
        ] {
            assert!(
                text.contains(&format!("# TYPE {name} {kind}\n")),
                "{name}\n{text}"
            );
        }
        assert!(
            text.contains("app_requests_total{service=\"planner-api\",pod=\"api-3\",code=\"200\"}")
        );
        assert!(text.contains("db_query_duration_seconds_bucket{service=\"planner-api\",query=\"stop_times\",le=\"0.05\"}"));
    }

    #[test]
    fn samples_match_the_text() {
        let sim = planner();
        let text = render(&sim);
        let samples = samples(&sim);
        assert!(samples.len() > 300);
        for s in samples.iter().step_by(17) {
            let l: Vec<String> = s
                .labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{v}\""))
                .collect();
            let head = if l.is_empty() {
                s.name.clone()
            } else {
                format!("{}{{{}}}", s.name, l.join(","))
            };
            let line = text
                .lines()
                .find(|x| x.starts_with(&format!("{head} ")))
                .unwrap_or_else(|| panic!("{head} not in the text"));
            let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
            assert!(
                (v - s.value).abs() <= 1e-6 * v.abs().max(1.0),
                "{line} vs {}",
                s.value
            );
        }
    }
}
