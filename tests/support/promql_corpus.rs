//! The corpus of `tests/embedded_conformance.rs`: an hour of synthetic series and the queries,
//! hand-written and generated from a small grammar with a fixed seed.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use warroom::metrics::Labels;

/// The generator's seed, kept so a failure reproduces; `WARROOM_PROMQL_SEED=N` explores others.
pub const SEED: u64 = 0x5eed_2142;

pub fn seed() -> u64 {
    std::env::var("WARROOM_PROMQL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED)
}
/// Generated queries on top of the hand-written ones.
pub const GENERATED: usize = 900;
/// Sample interval of the regular series, seconds.
const STEP: i64 = 15;

/// A small deterministic generator (xorshift64*), so the corpus needs no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

fn labels(name: &str, pairs: &[(&str, &str)]) -> Labels {
    let mut l: Labels = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    l.insert("__name__".into(), name.into());
    l
}

/// One series: its labels and `(milliseconds, value)` samples.
pub type Series = (Labels, Vec<(i64, f64)>);
pub type Samples = Vec<Series>;

/// The hour of series, sample times in milliseconds from `t0` (seconds).
pub fn dataset(t0: i64) -> Samples {
    let mut rng = Rng(SEED ^ 0xda7a);
    let n = 3600 / STEP;
    let at = |k: i64| (t0 + k * STEP) * 1000;
    let mut out: Samples = Vec::new();
    // Counters: three instances of two jobs and two codes; some start at 0, some far above
    // one interval's increase; a few resets.
    for job in ["api", "web"] {
        for instance in ["0", "1", "2"] {
            for code in ["200", "500"] {
                let mut v = if rng.chance(0.5) {
                    0.0
                } else {
                    5000.0 + (rng.below(5000) as f64)
                };
                let rate = if code == "200" { 20.0 } else { 2.0 };
                let mut pts = Vec::new();
                for k in 0..=n {
                    pts.push((at(k), v));
                    v += (rng.unit() * rate).floor();
                    if rng.chance(0.004) {
                        v = 0.0;
                    }
                }
                out.push((
                    labels(
                        "http_requests_total",
                        &[("job", job), ("instance", instance), ("code", code)],
                    ),
                    pts,
                ));
            }
        }
    }
    // A counter that starts at 0 half-way through, and one that ends at 40 min.
    out.push((
        labels("jobs_done_total", &[("queue", "late")]),
        (n / 2..=n)
            .map(|k| (at(k), ((k - n / 2) * 3) as f64))
            .collect(),
    ));
    out.push((
        labels("jobs_done_total", &[("queue", "early")]),
        (0..=160).map(|k| (at(k), (9000 + k * 7) as f64)).collect(),
    ));
    // Gauges: random walks crossing zero.
    for queue in ["a", "b", "c"] {
        let mut v = rng.unit() * 100.0 - 50.0;
        let pts = (0..=n)
            .map(|k| {
                v += rng.unit() * 10.0 - 5.0;
                (at(k), (v * 1000.0).round() / 1000.0)
            })
            .collect();
        out.push((labels("queue_depth", &[("queue", queue)]), pts));
    }
    // A gauge with NaN now and then, and one that is +Inf for a while.
    out.push((
        labels("temp", &[("sensor", "x")]),
        (0..=n)
            .map(|k| {
                let v = if k % 37 == 5 {
                    f64::NAN
                } else {
                    20.0 + ((k as f64) / 7.0).sin() * 5.0
                };
                (at(k), v)
            })
            .collect(),
    ));
    out.push((
        labels("temp", &[("sensor", "y")]),
        (0..=n)
            .map(|k| {
                let v = if (100..110).contains(&k) {
                    f64::INFINITY
                } else {
                    15.0 + (k % 11) as f64
                };
                (at(k), v)
            })
            .collect(),
    ));
    // A gap of 10 minutes (longer than the lookback) from 20 to 30 min.
    out.push((
        labels("sparse", &[("instance", "0")]),
        (0..=n)
            .filter(|k| !(80..120).contains(k))
            .map(|k| (at(k), (k % 13) as f64))
            .collect(),
    ));
    // Irregular sample times, 5 to 40 s apart, at millisecond precision.
    let mut t = t0 * 1000;
    let mut pts = Vec::new();
    let mut v = 0.0;
    while t < (t0 + 3600) * 1000 {
        pts.push((t, v));
        v += rng.unit() * 3.0;
        t += 5000 + rng.below(35_000) as i64;
    }
    out.push((labels("irregular_total", &[]), pts));
    // Classic histograms: cumulative buckets, _sum and _count, for two instances.
    for instance in ["0", "1"] {
        let bounds = ["0.1", "0.5", "1", "+Inf"];
        let mut counts = [0.0f64; 4];
        let mut sum = 0.0f64;
        let mut series: Vec<Vec<(i64, f64)>> = vec![Vec::new(); 6];
        for k in 0..=n {
            for i in 0..4 {
                series[i].push((at(k), counts[i]));
            }
            series[4].push((at(k), (sum * 1000.0).round() / 1000.0));
            series[5].push((at(k), counts[3]));
            for _ in 0..rng.below(20) {
                let x = rng.unit() * 1.5;
                sum += x;
                for (i, b) in [0.1, 0.5, 1.0, f64::INFINITY].iter().enumerate() {
                    if x <= *b {
                        counts[i] += 1.0;
                    }
                }
            }
        }
        for (i, pts) in series.into_iter().enumerate() {
            let l = match i {
                0..=3 => labels(
                    "lat_seconds_bucket",
                    &[("instance", instance), ("le", bounds[i])],
                ),
                4 => labels("lat_seconds_sum", &[("instance", instance)]),
                _ => labels("lat_seconds_count", &[("instance", instance)]),
            };
            out.push((l, pts));
        }
    }
    out.push((
        labels("build_info", &[("version", "1.2.3"), ("job", "api")]),
        (0..=n).map(|k| (at(k), 1.0)).collect(),
    ));
    out
}

/// A value as OpenMetrics writes it.
fn om_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v}")
    }
}

pub fn openmetrics(data: &Samples) -> String {
    let mut by_name: BTreeMap<&str, Vec<&Series>> = BTreeMap::new();
    for s in data {
        by_name
            .entry(s.0.get("__name__").map(String::as_str).unwrap_or(""))
            .or_default()
            .push(s);
    }
    let mut om = String::new();
    for (name, series) in by_name {
        let _ = writeln!(om, "# TYPE {name} unknown");
        for (l, pts) in series {
            let ls: Vec<String> = l
                .iter()
                .filter(|(k, _)| k.as_str() != "__name__")
                .map(|(k, v)| format!("{k}=\"{v}\""))
                .collect();
            for (t, v) in pts {
                let _ = writeln!(
                    om,
                    "{name}{{{}}} {} {}.{:03}",
                    ls.join(","),
                    om_value(*v),
                    t / 1000,
                    t % 1000
                );
            }
        }
    }
    om.push_str("# EOF\n");
    om
}

/// Queries written by hand: every function and operator the engine supports that 2.42 has.
pub const HAND: &[&str] = &[
    "http_requests_total",
    "http_requests_total{job=\"api\", code!=\"200\"}",
    "http_requests_total{instance=~\"1|2\"}",
    "{__name__=~\"queue_depth|temp\"}",
    "rate(http_requests_total[1m])",
    "rate(http_requests_total[5m] offset 3m)",
    "increase(http_requests_total[2m])",
    "irate(http_requests_total[1m])",
    "delta(queue_depth[5m])",
    "idelta(queue_depth[1m])",
    "resets(http_requests_total[10m])",
    "changes(queue_depth[3m])",
    "rate(jobs_done_total[5m])",
    "increase(jobs_done_total[10m])",
    "rate(irregular_total[2m])",
    "increase(irregular_total[1m])",
    "deriv(queue_depth[5m])",
    "predict_linear(queue_depth[10m], 600)",
    "holt_winters(queue_depth[5m], 0.3, 0.6)",
    "sum_over_time(queue_depth[2m])",
    "avg_over_time(temp[5m])",
    "min_over_time(temp[5m])",
    "max_over_time(temp[5m])",
    "count_over_time(sparse[5m])",
    "last_over_time(sparse[10m])",
    "present_over_time(sparse[1m])",
    "absent_over_time(sparse[1m])",
    "absent_over_time(nope{job=\"x\"}[5m])",
    "quantile_over_time(0.9, queue_depth[5m])",
    "stddev_over_time(queue_depth[5m])",
    "stdvar_over_time(temp[3m])",
    "sparse",
    "timestamp(sparse)",
    "timestamp(irregular_total)",
    "timestamp(queue_depth offset 1m)",
    "timestamp(sum(queue_depth))",
    "sum by (job) (rate(http_requests_total[1m]))",
    "sum without (instance) (rate(http_requests_total[2m]))",
    "avg by (code) (http_requests_total)",
    "max by (job) (http_requests_total)",
    "min without (code) (http_requests_total)",
    "count by (job) (http_requests_total)",
    "group by (instance) (http_requests_total)",
    "stddev by (job) (http_requests_total)",
    "stdvar(queue_depth)",
    "quantile by (job) (0.75, http_requests_total)",
    "topk(2, queue_depth)",
    "bottomk by (queue) (1, queue_depth)",
    "count_values(\"count\", build_info)",
    "count_values by (job) (\"v\", floor(queue_depth / 20))",
    "sum(temp)",
    "avg(temp)",
    "histogram_quantile(0.9, rate(lat_seconds_bucket[5m]))",
    "histogram_quantile(0.5, sum by (le) (rate(lat_seconds_bucket[2m])))",
    "rate(lat_seconds_sum[5m]) / rate(lat_seconds_count[5m])",
    "http_requests_total{code=\"500\"} / ignoring (code) http_requests_total{code=\"200\"}",
    "http_requests_total / on (job, instance) group_left sum by (job, instance) (http_requests_total)",
    "sum by (job, instance) (http_requests_total) / on (job, instance) group_right http_requests_total",
    "http_requests_total > 1000",
    "http_requests_total > bool 1000",
    "1000 < http_requests_total",
    "queue_depth == bool queue_depth offset 1m",
    "queue_depth > on (queue) queue_depth offset 5m",
    "http_requests_total and on (job) build_info",
    "http_requests_total unless on (job) build_info",
    "queue_depth or temp",
    "sum(http_requests_total) by (job) or vector(0)",
    "-queue_depth",
    "queue_depth % 7 ^ 2",
    "queue_depth atan2 on (queue) queue_depth offset 2m",
    "abs(queue_depth)",
    "ceil(queue_depth)",
    "floor(queue_depth)",
    "round(queue_depth, 5)",
    "sqrt(queue_depth)",
    "exp(queue_depth / 10)",
    "ln(queue_depth)",
    "log2(abs(queue_depth))",
    "log10(temp)",
    "sgn(queue_depth)",
    "clamp(queue_depth, -10, 10)",
    "clamp_min(queue_depth, 0)",
    "clamp_max(temp, 18)",
    "sin(queue_depth)",
    "cos(queue_depth)",
    "tan(temp)",
    "asin(queue_depth / 100)",
    "acos(queue_depth / 100)",
    "atan(queue_depth)",
    "sinh(queue_depth / 10)",
    "cosh(queue_depth / 10)",
    "tanh(queue_depth)",
    "asinh(queue_depth)",
    "acosh(temp)",
    "atanh(queue_depth / 100)",
    "deg(queue_depth)",
    "rad(queue_depth)",
    "pi() * 2",
    "time()",
    "vector(time())",
    "scalar(sum(queue_depth))",
    "queue_depth * scalar(build_info)",
    "year()",
    "month(vector(time()))",
    "day_of_month(timestamp(sparse))",
    "day_of_week()",
    "day_of_year()",
    "days_in_month()",
    "hour(timestamp(queue_depth))",
    "minute()",
    "label_replace(http_requests_total, \"job2\", \"$1-x\", \"job\", \"(a.*)\")",
    "label_join(http_requests_total, \"id\", \"/\", \"job\", \"instance\", \"code\")",
    "absent(nope)",
    "absent(queue_depth)",
    "absent(nope{a=\"1\", a=\"2\", b=\"3\"})",
    "sort(queue_depth)",
    "sort_desc(rate(http_requests_total[5m]))",
    "queue_depth @ 1",
    "queue_depth offset -5m",
    "max_over_time(rate(http_requests_total[1m])[10m:])",
    "max_over_time(rate(http_requests_total[1m])[10m:30s])",
    "avg_over_time(sum by (job) (rate(http_requests_total[1m]))[5m:1m])",
    "min_over_time(queue_depth[7m:45s] offset 2m)",
    "rate(sum(http_requests_total)[5m:15s])",
    "deriv(queue_depth[10m:1m])",
    "last_over_time(sparse[15m:2m])",
    "count_over_time(temp[3m:20s])",
    "max_over_time(max_over_time(queue_depth[2m])[6m:1m])",
    "sum_over_time(vector(time())[2m:30s])",
    "absent_over_time(sparse[5m:1m])",
];

/// Generates type-correct queries over the dataset's metrics.
struct Gen(Rng);

const COUNTERS: &[&str] = &[
    "http_requests_total",
    "http_requests_total{job=\"api\"}",
    "http_requests_total{code=\"500\"}",
    "jobs_done_total",
    "irregular_total",
    "lat_seconds_count",
];
const GAUGES: &[&str] = &["queue_depth", "queue_depth{queue!=\"b\"}", "temp", "sparse"];
const RANGES: &[&str] = &["30s", "1m", "2m", "5m", "10m"];
const LABELS: &[&str] = &["job", "instance", "code", "queue", "sensor"];

impl Gen {
    fn offset(&mut self) -> String {
        if self.0.chance(0.15) {
            format!(" offset {}", self.0.pick(&["30s", "1m", "7m"]))
        } else {
            String::new()
        }
    }

    fn grouping(&mut self) -> String {
        match self.0.below(3) {
            0 => String::new(),
            1 => format!(" by ({})", self.0.pick(LABELS)),
            _ => format!(" without ({})", self.0.pick(LABELS)),
        }
    }

    fn range_arg(&mut self, counter: bool, depth: usize) -> String {
        if depth > 0 && self.0.chance(0.2) {
            let inner = if counter && self.0.chance(0.5) {
                format!("sum{} ({})", self.grouping(), self.0.pick(COUNTERS))
            } else {
                self.vector(depth - 1)
            };
            let step = self.0.pick(&["", "30s", "1m", "45s"]);
            return format!("({inner})[{}:{step}]", self.0.pick(&["3m", "5m", "10m"]));
        }
        let sel = if counter {
            self.0.pick(COUNTERS)
        } else {
            self.0.pick(GAUGES)
        };
        format!("{sel}[{}]{}", self.0.pick(RANGES), self.offset())
    }

    fn scalar(&mut self) -> String {
        match self.0.below(4) {
            0 => format!("{}", self.0.below(50)),
            1 => "time()".into(),
            2 => format!("scalar(sum({}))", self.0.pick(GAUGES)),
            _ => format!("{}.5", self.0.below(5)),
        }
    }

    fn vector(&mut self, depth: usize) -> String {
        let choice = if depth == 0 {
            self.0.below(3)
        } else {
            self.0.below(9)
        };
        match choice {
            0 => format!("{}{}", self.0.pick(GAUGES), self.offset()),
            1 => {
                let f = self.0.pick(&["rate", "increase", "irate", "resets"]);
                format!("{f}({})", self.range_arg(true, depth))
            }
            2 => {
                let f = self.0.pick(&[
                    "avg_over_time",
                    "max_over_time",
                    "min_over_time",
                    "sum_over_time",
                    "count_over_time",
                    "last_over_time",
                    "delta",
                    "deriv",
                    "changes",
                    "stddev_over_time",
                ]);
                format!("{f}({})", self.range_arg(false, depth))
            }
            3 | 4 => {
                let op = self
                    .0
                    .pick(&["sum", "avg", "max", "min", "count", "stddev", "group"]);
                format!("{op}{} ({})", self.grouping(), self.vector(depth - 1))
            }
            5 => {
                let op = self
                    .0
                    .pick(&["+", "-", "*", "/", ">", "<=", "== bool", "!= bool"]);
                if self.0.chance(0.5) {
                    format!("{} {op} {}", self.vector(depth - 1), self.scalar())
                } else {
                    format!("{} {op} {}", self.scalar(), self.vector(depth - 1))
                }
            }
            6 => {
                // Vector matching between aggregations over the same label, so the "one" side
                // is unique and most generated joins succeed.
                let l = self.0.pick(&["job", "queue", "instance"]);
                let op = self
                    .0
                    .pick(&["+", "/", ">", "and", "or", "unless", "> bool"]);
                let lhs = self.vector(depth - 1);
                let rhs = self.vector(depth - 1);
                match self.0.below(3) {
                    0 => format!("sum by ({l}) ({lhs}) {op} on ({l}) sum by ({l}) ({rhs})"),
                    1 => format!("({lhs}) {op} ({rhs})"),
                    _ => format!("{lhs} {op} ignoring ({l}) {rhs}"),
                }
            }
            7 => {
                let f = self.0.pick(&[
                    "abs",
                    "ceil",
                    "floor",
                    "sqrt",
                    "sgn",
                    "exp",
                    "ln",
                    "round",
                    "sin",
                    "cos",
                    "atan",
                    "deg",
                    "clamp_min",
                    "clamp_max",
                    "clamp",
                    "timestamp",
                ]);
                let inner = self.vector(depth - 1);
                match f {
                    "clamp_min" | "clamp_max" => format!("{f}({inner}, {})", self.scalar()),
                    "clamp" => format!("clamp({inner}, -5, {})", self.scalar()),
                    "round" => format!("round({inner}, 0.5)"),
                    _ => format!("{f}({inner})"),
                }
            }
            _ => {
                let q = self.0.pick(&["0", "0.25", "0.5", "0.9", "1"]);
                match self.0.below(3) {
                    0 => format!(
                        "histogram_quantile({q}, sum by (le{}) (rate(lat_seconds_bucket[{}])))",
                        if self.0.chance(0.5) { ", instance" } else { "" },
                        self.0.pick(RANGES)
                    ),
                    1 => format!(
                        "quantile{} ({q}, {})",
                        self.grouping(),
                        self.vector(depth - 1)
                    ),
                    _ => format!(
                        "{}k(2, queue_depth{})",
                        self.0.pick(&["top", "bottom"]),
                        self.offset()
                    ),
                }
            }
        }
    }
}

pub fn corpus() -> Vec<String> {
    let mut out: Vec<String> = HAND.iter().map(std::string::ToString::to_string).collect();
    let mut g = Gen(Rng(seed()));
    let mut seen: std::collections::HashSet<String> = out.iter().cloned().collect();
    let mut tries = 0;
    while out.len() < HAND.len() + GENERATED && tries < GENERATED * 20 {
        tries += 1;
        let depth = 1 + g.0.below(3);
        let q = g.vector(depth);
        if seen.insert(q.clone()) {
            out.push(q);
        }
    }
    out
}
