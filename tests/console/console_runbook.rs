//! Runbooks run from the console's pane against the in-process simulator (its control API on
//! loopback, its samples in the embedded store the gates read), with the real effects runtime
//! (`spawn_all`: the executor in its own task, the journal writer thread): typed confirmation
//! of the name and of each step, the simulator's state changed, every transition in the
//! incident's journal, and an abort that stops the run between two actions.

use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use warroom::app::panes::dialog::{Body, Purpose};
use warroom::app::runtime::open_incident;
use warroom::app::workers::Services;
use warroom::app::workers::spawn_all;
use warroom::app::{Model, Msg, update};
use warroom::clock::Clock;
use warroom::config::Config;
use warroom::incident::event::StepState;
use warroom::incident::{Event, Store};
use warroom::rehearsal::runbooks::setup as demo_runbooks;
use warroom::rehearsal::{Stage, StageSpec};
use warroom::runbook::report::RunOutcome;
use warroom::sim::Scenario;
use warroom::sim::retry::Layer;
use warroom::theme::Theme;

struct Console {
    model: Model,
    services: Services,
    clock: Arc<dyn Clock>,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
}

impl Console {
    /// One message through `update`, its effects started for real.
    fn send(&mut self, msg: Msg) {
        let effects = update(&mut self.model, msg);
        spawn_all(effects, &self.services, &self.tx, &self.clock);
    }

    fn key(&mut self, c: KeyCode) {
        self.send(Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    }

    fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// Feed worker messages until `done` holds; fails after `within`.
    async fn until(&mut self, what: &str, within: Duration, done: impl Fn(&Model) -> bool) {
        let deadline = tokio::time::Instant::now() + within;
        while !done(&self.model) {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, self.rx.recv()).await {
                Ok(Some(m)) => self.send(m),
                _ => panic!(
                    "timed out waiting for {what}; run: {:#?}\nnotice: {:?}\ndialog: {:?}",
                    self.model.runbooks.run, self.model.notice, self.model.dialog
                ),
            }
        }
    }

    /// Answer the executor's typed confirmation of `word` once it is asked.
    async fn confirm(&mut self, word: &str) {
        let w = word.to_string();
        self.until(
            &format!("the confirmation of \"{word}\""),
            Duration::from_secs(20),
            move |m| {
                matches!(m.dialog.as_ref().map(|d| (&d.purpose, &d.body)),
                Some((Purpose::Confirm { .. }, Body::Type { word, .. })) if *word == w)
            },
        )
        .await;
        self.type_text(word);
        self.key(KeyCode::Enter);
        assert!(self.model.dialog.is_none(), "{:?}", self.model.dialog);
    }

    /// Open the pane, show `name`'s plan, type its name: the run starts.
    async fn run(&mut self, name: &str) -> String {
        self.key(KeyCode::Char('b'));
        self.until("the runbook list", Duration::from_secs(10), |m| {
            m.runbooks.entries.is_some()
        })
        .await;
        let i = self
            .model
            .runbooks
            .entries
            .as_ref()
            .unwrap()
            .iter()
            .position(|e| e.name() == name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        for _ in 0..i {
            self.key(KeyCode::Down);
        }
        self.key(KeyCode::Enter);
        self.until("the plan", Duration::from_secs(20), |m| {
            m.runbooks.plan.as_ref().is_some_and(|p| p.lines.is_some())
        })
        .await;
        self.key(KeyCode::Char('x'));
        self.type_text(name);
        self.key(KeyCode::Enter);
        self.model
            .runbooks
            .run
            .as_ref()
            .expect("the run started")
            .run_id
            .clone()
    }
}

fn epoch() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-07-17T05:40:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

async fn console(
    dir: &std::path::Path,
    runbook_dirs: Vec<std::path::PathBuf>,
) -> (Console, Stage, String) {
    let scenario = Scenario::load("planner-peak").expect("scenario");
    let r = Stage::start(StageSpec {
        scenario,
        seed: 1,
        speed: 30.0,
        epoch: epoch(),
        listen: Some("127.0.0.1:0"),
        retention: warroom::metrics::embedded::DEFAULT_RETENTION,
    })
    .await
    .expect("rehearsal");
    let clock: Arc<dyn Clock> = Arc::new(r.clock());
    let config = Config {
        runbook_dir: runbook_dirs.first().cloned(),
        ..Config::default().with_panels(warroom::metrics::presets::sim_panels())
    };
    let mut model = Model::new(&config, Theme::fallback(), "embedded".into(), clock.now());
    let locked = warroom::incident::open::lock(
        &warroom::incident::Store::new(dir),
        warroom::incident::open::Which::New(model.now),
        warroom::incident::store::Role::Console,
    )
    .unwrap();
    let journal = open_incident(
        &mut model,
        locked,
        warroom::incident::open::Header {
            title: Some("Planner rehearsal".into()),
            severity: None,
        },
        None,
    )
    .await
    .expect("incident");
    let id = model.incident.as_ref().unwrap().id.clone();
    let services = Services {
        source: Arc::new(r.store.clone()),
        declare: None,
        journal: Some(journal),
        alerts: None,
        export: Some(warroom::app::workers::export::ExportSetup {
            store: Store::new(dir),
            id: Store::new(dir).find(&id).expect("the incident"),
            timezone: config.timezone,
            step_s: 5.0,
            gap_limit: config.gap_limit,
            public_names: Default::default(),
        }),
        runbooks: demo_runbooks(&config, &r.url(), &r.service_label),
        rehearsal: None,
        github: None,
        serve: false,
        follow: None,
        discovery: None,
        variables: None,
        silences: None,
        engine: None,
        leaving: Default::default(),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    (
        Console {
            model,
            services,
            clock,
            tx,
            rx,
        },
        r,
        id,
    )
}

fn journal(dir: &std::path::Path, id: &str) -> Vec<Event> {
    let store = Store::new(dir);
    let id = store.find(id).unwrap();
    store
        .read(&id)
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.kind)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shipped_runbook_from_the_demo_pane_changes_the_simulator_and_is_journaled() {
    shipped_runbook_journaled().await;
}

/// The same on the runtime `warroom open` has: one thread. The executor runs on a blocking-pool
/// thread of its own (its journal syncs block), its timers and sockets driven by this one.
#[tokio::test(flavor = "current_thread")]
async fn a_shipped_runbook_runs_and_is_journaled_on_the_consoles_one_thread_runtime() {
    shipped_runbook_journaled().await;
}

async fn shipped_runbook_journaled() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, r, id) = console(dir.path(), vec![]).await;
    assert!(r.service.with_sim(|s| s.retries_enabled(Layer::Gateway)));
    let run_id = c.run("disable-retries").await;
    c.confirm("disable").await;
    c.until(
        "the simulator's retries off",
        Duration::from_secs(20),
        |m| {
            m.runbooks.run.as_ref().is_some_and(|r| {
                r.steps
                    .iter()
                    .any(|s| s.id == "disable" && s.detail.contains("200"))
            })
        },
    )
    .await;
    for layer in [Layer::Client, Layer::Gateway, Layer::Worker] {
        assert!(
            !r.service.with_sim(|s| s.retries_enabled(layer)),
            "{layer:?} retries are off after the run's http step"
        );
    }
    // The wait step reads the embedded store; abort it rather than wait out its gate.
    c.until("the wait step", Duration::from_secs(20), |m| {
        m.runbooks
            .run
            .as_ref()
            .and_then(warroom::app::panes::run::RunPane::current)
            == Some(2)
    })
    .await;
    // Abort asks first: nothing stops until the choice is made.
    c.key(KeyCode::Char('A'));
    assert!(
        matches!(
            c.model.dialog.as_ref().map(|d| &d.purpose),
            Some(Purpose::AbortRun { .. })
        ),
        "{:?}",
        c.model.dialog
    );
    assert!(!c.model.runbooks.run.as_ref().unwrap().finished());
    c.key(KeyCode::Down);
    c.key(KeyCode::Enter);
    c.until("the end of the run", Duration::from_secs(20), |m| {
        m.runbooks
            .run
            .as_ref()
            .is_some_and(warroom::app::panes::run::RunPane::finished)
    })
    .await;
    // The journal has run, intent, answer, steps and end, in order.
    let events = journal(dir.path(), &id);
    let kinds: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::RunbookRun { run, state } => {
                assert_eq!(run.run_id, run_id);
                Some(format!("run {state:?}"))
            }
            Event::RunbookStep { step, state, .. } => Some(format!("{step} {state:?}")),
            Event::RunbookIntent { step, .. } => Some(format!("{step} intent")),
            Event::RunbookAck { step, outcome, .. } => Some(format!("{step} ack {outcome}")),
            _ => None,
        })
        .collect();
    let pos = |needle: &str| {
        kinds
            .iter()
            .position(|k| k.starts_with(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in {kinds:#?}"))
    };
    assert!(pos("run Started") < pos("disable intent"));
    assert!(pos("disable intent") < pos("disable ack attempt 1: HTTP 200"));
    assert!(pos("disable ack") < pos("disable Succeeded"));
    assert!(pos("disable Succeeded") < pos("amplification-falls Started"));
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("run Cancelled"),
        "{kinds:#?}"
    );
    // The run is in the runbook domain's own form, so `warroom runbook run --resume` can read
    // it back: its transitions and its one idempotency key.
    let store = Store::new(dir.path());
    let records = store.read(&store.find(&id).unwrap()).unwrap().records;
    let replayed = warroom::runbook::journal::run_records(&records, &run_id);
    assert!(replayed.len() >= 5, "{replayed:#?}");
    let keys = warroom::runbook::journal::intents_of(&records, &run_id);
    assert_eq!(keys.len(), 1, "{keys:?}");
    // What the console shows is what the journal holds.
    let shown = c
        .model
        .timeline
        .iter()
        .filter(|r| matches!(r.kind, Event::RunbookRun { .. } | Event::RunbookStep { .. }))
        .count();
    let recorded = events
        .iter()
        .filter(|e| matches!(e, Event::RunbookRun { .. } | Event::RunbookStep { .. }))
        .count();
    assert_eq!(shown, recorded);
    assert_eq!(
        c.model.runbooks.run.as_ref().unwrap().outcome,
        Some(RunOutcome::Aborted)
    );
}

const TWO_ACTIONS: &str = r#"
name = "two-actions"
description = "Retries off, a gate that never holds, then load shedding on."

[variables]
base_url = { default = "http://127.0.0.1:1", description = "control API" }

[[step]]
id = "retries-off"
kind = "http"
title = "Retries off"
method = "POST"
url = "{{base_url}}/control/retries"
json = { layer = "all", enabled = false }

[[step]]
id = "never"
kind = "wait"
title = "A condition that never holds"
timeout = "5m"
gate = { query = 'max(app_retry_enabled)', above = 5, interval = "1s", consecutive = 1 }

[[step]]
id = "shed"
kind = "http"
title = "Load shedding on"
method = "POST"
url = "{{base_url}}/control/load-shedding"
json = { enabled = true }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_stops_the_run_between_actions() {
    let dir = tempfile::tempdir().unwrap();
    let books = tempfile::tempdir().unwrap();
    std::fs::write(books.path().join("two-actions.toml"), TWO_ACTIONS).unwrap();
    let (mut c, r, id) = console(dir.path(), vec![books.path().to_path_buf()]).await;
    c.run("two-actions").await;
    c.confirm("retries-off").await;
    c.until("the gate's readings", Duration::from_secs(20), |m| {
        m.runbooks
            .run
            .as_ref()
            .and_then(|r| r.gate.as_ref())
            .is_some_and(|g| g.0 == "never")
    })
    .await;
    // Pause first: the run holds; then abort: it ends without the next action.
    c.key(KeyCode::Char('H'));
    c.key(KeyCode::Down);
    c.key(KeyCode::Enter);
    c.key(KeyCode::Char('A'));
    c.key(KeyCode::Down);
    c.key(KeyCode::Enter);
    c.until("the end of the run", Duration::from_secs(20), |m| {
        m.runbooks
            .run
            .as_ref()
            .is_some_and(warroom::app::panes::run::RunPane::finished)
    })
    .await;
    // Give a wrongly continuing executor the chance to send its next request.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!r.service.with_sim(|s| s.retries_enabled(Layer::Gateway)));
    assert!(
        !r.service.with_sim(|s| s.settings().load_shedding),
        "the action after the abort never happened"
    );
    let run = c.model.runbooks.run.as_ref().unwrap();
    assert_eq!(run.outcome, Some(RunOutcome::Aborted));
    let events = journal(dir.path(), &id);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::RunbookStep { step, .. } if step == "shed")),
        "the step after the abort never started"
    );
    assert!(events.iter().any(|e| matches!(
        e,
        Event::RunbookRun {
            state: StepState::Cancelled,
            ..
        }
    )));
}

/// The whole `pool-exhaustion` runbook from the demo's pane, every confirmation typed, until
/// the simulated error ratio is under 2 % (its last step). Its soaks and gate intervals run on
/// the simulated clock (the demo divides them by the speed), so it takes seconds, not minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_exhaustion_recovers_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, r, _id) = console(dir.path(), vec![]).await;
    // Let the fault land first (it is 5 simulated minutes away: 10 s at 30×).
    tokio::time::sleep(Duration::from_secs(20)).await;
    let started = std::time::Instant::now();
    c.run("pool-exhaustion").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(900);
    while !c
        .model
        .runbooks
        .run
        .as_ref()
        .is_some_and(warroom::app::panes::run::RunPane::finished)
    {
        if let Some(d) = &c.model.dialog {
            match (&d.purpose, &d.body) {
                (Purpose::Confirm { .. }, Body::Type { word, .. }) => {
                    let w = word.clone();
                    c.type_text(&w);
                    c.key(KeyCode::Enter);
                }
                // A decision: abort (the safest answer, highlighted first) and let the
                // test fail below.
                _ => {
                    if d.selected().is_none() {
                        c.key(KeyCode::Down);
                    }
                    c.key(KeyCode::Enter);
                }
            }
            continue;
        }
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout(left, c.rx.recv()).await {
            Ok(Some(m)) => c.send(m),
            _ => panic!("the run did not end: {:#?}", c.model.runbooks.run),
        }
    }
    let run = c.model.runbooks.run.as_ref().unwrap();
    eprintln!("pool-exhaustion took {:?}", started.elapsed());
    assert_eq!(run.outcome, Some(RunOutcome::Succeeded), "{run:#?}");
    assert!(!r.service.with_sim(|s| s.retries_enabled(Layer::Gateway)));
}

/// `E` takes the panel snapshots from the console's own source and exports the draft, off the
/// loop, and says where it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_from_the_console_takes_snapshots_and_writes_the_draft() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _r, id) = console(dir.path(), vec![]).await;
    c.key(KeyCode::Char('E'));
    c.until("the export", Duration::from_secs(60), |m| {
        m.notice
            .as_ref()
            .is_some_and(|n| n.text.starts_with("exported") || n.text.contains("failed"))
    })
    .await;
    let notice = c.model.notice.as_ref().unwrap().text.clone();
    assert!(notice.starts_with("exported "), "{notice}");
    let store = Store::new(dir.path());
    let id = store.find(&id).unwrap();
    let draft = std::fs::read_to_string(store.exports_dir(&id).join("postmortem.md")).unwrap();
    assert!(draft.contains("## Timeline"), "{draft}");
    assert!(notice.contains("postmortem.md"), "{notice}");
    let snaps = std::fs::read_dir(store.snapshots_dir(&id)).unwrap().count();
    assert_eq!(snaps, config_panels(), "one snapshot per panel");
}

fn config_panels() -> usize {
    warroom::metrics::presets::sim_panels().len()
}

const ONE_CHECK: &str = r#"
name = "one-check"
description = "A check that no series satisfies."

[[step]]
id = "serving"
kind = "check"
title = "Something is serving"
gate = { query = 'sum(up)', above = 0 }
"#;

/// Starts `ONE_CHECK` as run `run-1` on the embedded engine with no series (its check waits),
/// journaled to `journal` if given. The run reads its runbook's file again when it starts, so
/// the file's directory is handed back to be kept.
fn start_one_check(
    journal: Option<warroom::incident::JournalWriter>,
    tx: &mpsc::UnboundedSender<Msg>,
) -> (warroom::runbook::setup::RunbookSetup, tempfile::TempDir) {
    let books = tempfile::tempdir().unwrap();
    let path = books.path().join("one-check.toml");
    std::fs::write(&path, ONE_CHECK).unwrap();
    let rb = warroom::runbook::load::parse("one-check.toml", &path, ONE_CHECK).unwrap();
    let setup = warroom::runbook::setup::RunbookSetup::new(vec![], vec![]);
    warroom::app::workers::runbooks::start(
        &rb,
        "run-1".into(),
        &setup,
        Arc::new(warroom::metrics::embedded::EmbeddedSource::default()),
        journal,
        Arc::new(warroom::clock::WallClock),
        tx,
        None,
    );
    (setup, books)
}

/// `warroom open` has one thread for keys, frames and answers. A run's records are synced
/// before it goes on, and a stalled disk stalls that sync: it must stall the run only, not the
/// console. The journal's syncs are held; this thread must go on while the run's first record
/// waits. Were the run on this thread, it would wait until a watchdog thread let the sync go.
#[tokio::test(flavor = "current_thread")]
async fn a_run_whose_journal_sync_stalls_does_not_stall_the_consoles_thread() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let dir = tempfile::tempdir().unwrap();
    let (_, writer, faults) = crate::support::faulty_journal::writer(
        &Store::new(dir.path()),
        warroom::incident::store::Role::Console,
    );
    faults.hold_syncs();
    let (done, fired) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let watchdog = {
        let (done, fired, faults) = (done.clone(), fired.clone(), faults.clone());
        std::thread::spawn(move || {
            for _ in 0..200 {
                if done.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            fired.store(true, Ordering::SeqCst);
            faults.release_syncs();
        })
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (setup, _books) = start_one_check(Some(writer), &tx);
    // This thread goes on (its timers fire) while the run's first record waits for its sync.
    for _ in 0..500 {
        if faults.syncs_waiting() > 0 || fired.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let waiting = faults.syncs_waiting();
    done.store(true, Ordering::SeqCst);
    faults.release_syncs();
    watchdog.join().unwrap();
    assert!(
        !fired.load(Ordering::SeqCst),
        "the console's thread waited for the run's journal sync"
    );
    assert_eq!(waiting, 1, "the run's first record waits for its sync");
    // Released, the run goes on: its first record is journaled, then it is aborted while its
    // check waits for a series.
    setup.control("run-1", warroom::runbook::executor::Control::Abort);
    let mut journaled = 0;
    let outcome = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(m) = rx.recv().await {
            match m {
                Msg::Run {
                    journaled: Some(_), ..
                } => journaled += 1,
                Msg::RunEnded { outcome, .. } => return Some(outcome),
                _ => {}
            }
        }
        None
    })
    .await
    .expect("the run ends once its sync is let go");
    assert_eq!(outcome, Some(RunOutcome::Aborted));
    assert!(journaled >= 1, "the run's first record was journaled");
}

/// Quitting the console while a run waits on its gate: the run stops where it is (as when the
/// process is killed; `--resume` goes on from the journal) and the runtime ends at once.
/// Without that, the run's thread wakes on drivers that are gone and panics after the console
/// has quit. A panic on any thread prints, so the scenario runs in a process of its own (this
/// test binary again, on `quit_scenario` alone) and its output must have none.
#[test]
fn quitting_during_a_run_ends_the_runtime_and_the_run_without_a_panic() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "console_runbook::quit_scenario",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("the test binary runs again");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the scenario ran: {text}");
    assert!(!text.contains("panicked"), "{text}");
}

/// The scenario of the test above, which runs it in a process of its own.
#[test]
#[ignore = "run by quitting_during_a_run_ends_the_runtime_and_the_run_without_a_panic"]
fn quit_scenario() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (_setup, _books) = start_one_check(None, &tx);
        // The check has read its gate once and waits for the next reading.
        let reading = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(m) = rx.recv().await {
                if let Msg::Run { record, .. } = &m
                    && matches!(
                        record.event,
                        warroom::runbook::report::RunEvent::GateReading { .. }
                    )
                {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(reading, Ok(true), "the check reads its gate");
        // The console quits: its loop drops the receiver, then the runtime goes.
        drop(rx);
        drop(tx);
    });
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(runtime);
        let _ = done_tx.send(());
    });
    // The runtime's end waits for its blocking-pool threads: once it is over, a panic on the
    // run's thread has been printed.
    assert!(
        done_rx.recv_timeout(Duration::from_secs(10)).is_ok(),
        "the runtime's end waited for the run's thread"
    );
}
