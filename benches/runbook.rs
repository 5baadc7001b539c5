//! Runbook benchmarks: the executor's own overhead per step (note steps do no work of their
//! own, so what is measured is checkpoint, confirmation, records and bookkeeping), one gate
//! judgement, one rollout decision over a 500-instance fleet, and rendering a plan. After
//! criterion's report, figure lines for `benches/all.sh`: the median executor overhead per step
//! (in memory, and durable in a journal) and the median time to render a plan.

#[path = "support/figure.rs"]
mod figure;

use criterion::{Criterion, criterion_group};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use warroom::metrics::{Point, QueryAnswer, Series};
use warroom::runbook::batch::{Next, Rollout, RolloutConfig};
use warroom::runbook::executor::{Control, Executor};
use warroom::runbook::gate::{Condition, Expect, judge};
use warroom::runbook::operator::AssumeYes;
use warroom::runbook::report::{MemoryIntents, RunSink};
use warroom::runbook::{http, load, plan, vars};

struct Discard;
impl RunSink for Discard {
    fn record(
        &self,
        _r: &warroom::runbook::report::RunRecord,
    ) -> Result<(), warroom::runbook::report::RecordError> {
        Ok(())
    }
}

const STEPS: usize = 100;

fn executor_overhead(c: &mut Criterion) {
    let mut src = String::from("name = \"bench\"\n");
    for i in 0..STEPS {
        src += &format!("[[step]]\nid = \"n{i}\"\nkind = \"note\"\ntext = \"step {i}\"\n");
    }
    let rb = load::parse("bench.toml", Path::new("bench.toml"), &src).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let exec = Executor {
        vars: vars::resolve(&rb, &[], |_| None).unwrap(),
        runbook: rb,
        source: None,
        sender: http::Sender::new(
            warroom::backoff::Backoff::default(),
            http::run_retry_budget(),
        )
        .unwrap(),
        sink: Arc::new(Discard),
        intents: Arc::new(MemoryIntents::default()),
        operator: Arc::new(AssumeYes),
        control: watch::channel(Control::Run).1,
        clock: Arc::new(warroom::clock::WallClock),
        run_id: "bench".into(),
        dry_run: false,
    };
    c.bench_function("executor: run of 100 note steps", |b| {
        b.iter(|| rt.block_on(exec.run()));
    });
}

fn gate_and_rollout(c: &mut Criterion) {
    let answer = Ok(QueryAnswer {
        series: vec![Series {
            labels: [("pod".to_string(), "api-0".to_string())].into(),
            points: vec![Point { t: 0.0, v: 0.01 }],
        }],
        ..Default::default()
    });
    c.bench_function("gate: judge one reading", |b| {
        b.iter(|| judge(Condition::Below(0.02), Expect::One, black_box(&answer)));
    });
    let cfg = RolloutConfig {
        batch_size: 25,
        max_unavailable: 25,
        failure_budget: 2,
        soak: Duration::from_secs(10),
        settle: Duration::ZERO,
        instance_deadline: Duration::from_secs(120),
        run_deadline: Duration::from_secs(3600),
        gated: false,
    };
    c.bench_function(
        "rollout: 500 instances, batches of 25, to completion",
        |b| {
            b.iter(|| {
                let mut r = Rollout::new(
                    cfg.clone(),
                    (0..500).map(|i| (format!("i{i}"), true)).collect(),
                );
                let mut t = 0;
                loop {
                    match r.next(Duration::from_secs(t)) {
                        Next::Watch(names) => {
                            for n in names {
                                r.observe(Duration::from_secs(t), &n, true);
                            }
                            t += 5;
                        }
                        Next::Finished(_) => break,
                        _ => {}
                    }
                }
            });
        },
    );
}

fn plan_render(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks");
    let rb = load::load_file(&dir.join("pool-exhaustion.toml")).unwrap();
    let v = vars::resolve(&rb, &[], |_| None).unwrap();
    c.bench_function("plan: render pool-exhaustion", |b| {
        b.iter(|| {
            plan::render(
                black_box(&rb),
                &v,
                &Default::default(),
                &warroom::backoff::Backoff::default(),
            )
        });
    });
    c.bench_function("load: parse and check pool-exhaustion", |b| {
        b.iter(|| load::load_file(&dir.join("pool-exhaustion.toml")).unwrap());
    });
}

/// The same run recorded on an incident's journal: each step's two records are written and
/// synced before the run goes on, so this is the durable cost per step.
fn journal_overhead(c: &mut Criterion) {
    use warroom::incident::event::RunRef;
    use warroom::incident::store::Store;
    use warroom::incident::writer::JournalWriter;
    use warroom::runbook::journal::{JournalIntents, JournalSink};
    let mut src = String::from("name = \"bench\"\n");
    for i in 0..STEPS {
        src += &format!("[[step]]\nid = \"n{i}\"\nkind = \"note\"\ntext = \"step {i}\"\n");
    }
    let rb = load::parse("bench.toml", Path::new("bench.toml"), &src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let (incident, _) = store
        .open_incident(&id, warroom::incident::store::Role::Cli)
        .unwrap();
    let writer = JournalWriter::spawn(incident).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let run = RunRef {
        run_id: "bench".into(),
        runbook: rb.name.clone(),
        hash: rb.hash.clone(),
    };
    let exec = Executor {
        vars: vars::resolve(&rb, &[], |_| None).unwrap(),
        source: None,
        sender: http::Sender::new(
            warroom::backoff::Backoff::default(),
            http::run_retry_budget(),
        )
        .unwrap(),
        sink: Arc::new(JournalSink::new(writer.clone(), run)),
        intents: Arc::new(JournalIntents::new(writer, "bench", &[])),
        operator: Arc::new(AssumeYes),
        control: watch::channel(Control::Run).1,
        clock: Arc::new(warroom::clock::WallClock),
        run_id: "bench".into(),
        dry_run: false,
        runbook: rb,
    };
    let mut g = c.benchmark_group("journal");
    g.sample_size(10);
    g.bench_function(
        "executor: run of 100 note steps recorded in the journal",
        |b| b.iter(|| rt.block_on(exec.run())),
    );
    g.finish();
}

criterion_group!(
    benches,
    executor_overhead,
    journal_overhead,
    gate_and_rollout,
    plan_render
);

/// Median of `n` timings of `f`, in seconds.
fn median(n: usize, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..n)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    v.sort_by(f64::total_cmp);
    figure::quantile(&v, 0.5)
}

/// The figure lines: plain medians on the wall clock, next to criterion's means.
fn figures() {
    let mut src = String::from("name = \"bench\"\n");
    for i in 0..STEPS {
        src += &format!("[[step]]\nid = \"n{i}\"\nkind = \"note\"\ntext = \"step {i}\"\n");
    }
    let rb = load::parse("bench.toml", Path::new("bench.toml"), &src).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let exec = |sink: Arc<dyn RunSink>, intents: Arc<dyn warroom::runbook::report::IntentStore>| {
        Executor {
            vars: vars::resolve(&rb, &[], |_| None).unwrap(),
            runbook: rb.clone(),
            source: None,
            sender: http::Sender::new(
                warroom::backoff::Backoff::default(),
                http::run_retry_budget(),
            )
            .unwrap(),
            sink,
            intents,
            operator: Arc::new(AssumeYes),
            control: watch::channel(Control::Run).1,
            clock: Arc::new(warroom::clock::WallClock),
            run_id: "bench".into(),
            dry_run: false,
        }
    };
    let memory = exec(Arc::new(Discard), Arc::new(MemoryIntents::default()));
    let per_step = median(50, || {
        rt.block_on(memory.run());
    }) / STEPS as f64;
    figure::report(
        "executor overhead per step (memory)",
        per_step * 1e6,
        "us",
        figure::Target::Under(1000.0),
    );

    use warroom::incident::event::RunRef;
    use warroom::incident::store::Store;
    use warroom::incident::writer::JournalWriter;
    use warroom::runbook::journal::{JournalIntents, JournalSink};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let (incident, _) = store
        .open_incident(&id, warroom::incident::store::Role::Cli)
        .unwrap();
    let writer = JournalWriter::spawn(incident).unwrap();
    let run = RunRef {
        run_id: "bench".into(),
        runbook: rb.name.clone(),
        hash: rb.hash.clone(),
    };
    let journal = exec(
        Arc::new(JournalSink::new(writer.clone(), run)),
        Arc::new(JournalIntents::new(writer, "bench", &[])),
    );
    let per_step = median(5, || {
        rt.block_on(journal.run());
    }) / STEPS as f64;
    figure::report(
        "executor step recorded in the journal (synced)",
        per_step * 1e3,
        "ms",
        figure::Target::Under(50.0),
    );

    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks/pool-exhaustion.toml");
    let pool = load::load_file(&file).unwrap();
    let v = vars::resolve(&pool, &[], |_| None).unwrap();
    let render = median(200, || {
        black_box(plan::render(
            &pool,
            &v,
            &Default::default(),
            &warroom::backoff::Backoff::default(),
        ));
    });
    figure::report(
        "plan render (pool-exhaustion)",
        render * 1e3,
        "ms",
        figure::Target::Under(10.0),
    );
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    figures();
}
