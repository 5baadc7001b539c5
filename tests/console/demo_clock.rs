//! The demo's clock is the operator's: the console on a rehearsal's stage whose pace follows a
//! wall clock the test drives. Nothing moves during the briefing; dismissing it starts the
//! time; `p` pauses the simulation with the panels (ten wall seconds paused are zero simulated
//! seconds) and says so; at the scenario's end the time stops and the console announces the
//! score, the incident and the next commands.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use warroom::app::runtime::open_incident;
use warroom::app::workers::Services;
use warroom::app::workers::spawn_all;
use warroom::app::{Model, Msg, update};
use warroom::clock::{Clock, ManualClock};
use warroom::config::Config;
use warroom::incident::{Event, Store};
use warroom::rehearsal::{Stage, StageSpec};
use warroom::sim::Scenario;
use warroom::theme::Theme;

const SPEED: f64 = 60.0;

struct Console {
    model: Model,
    services: Services,
    clock: Arc<dyn Clock>,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
}

impl Console {
    fn send(&mut self, msg: Msg) {
        let effects = update(&mut self.model, msg);
        spawn_all(effects, &self.services, &self.tx, &self.clock);
    }

    fn key(&mut self, c: KeyCode) {
        self.send(Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    }

    /// Feed worker messages until `done` holds; fails after `within` (wall time).
    async fn until(&mut self, what: &str, within: Duration, done: impl Fn(&Model) -> bool) {
        let deadline = tokio::time::Instant::now() + within;
        while !done(&self.model) {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, self.rx.recv()).await {
                Ok(Some(m)) => self.send(m),
                _ => panic!(
                    "timed out waiting for {what}; notice {:?}",
                    self.model.notice
                ),
            }
        }
    }
}

/// Wait (bounded) until the stage's simulated time is `t`; the pacer runs in its own task.
async fn settles_at(stage: &Stage, t: f64) {
    for _ in 0..200 {
        if (stage.now() - t).abs() < 1e-6 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("simulated time {} never reached {t}", stage.now());
}

async fn console(dir: &std::path::Path, wall: &ManualClock) -> (Console, Stage) {
    let scenario = Scenario::load("crash-loop").unwrap();
    let end = scenario.duration_s;
    let spec = StageSpec {
        scenario,
        seed: 1,
        speed: SPEED,
        epoch: "2026-02-11T22:30:00Z".parse().unwrap(),
        listen: Some("127.0.0.1:0"),
        retention: Duration::from_secs(3600),
    };
    let stage = Stage::start_with(spec, false, Arc::new(wall.clone()))
        .await
        .expect("the stage starts paused");
    stage.pacer().set_end(end);
    let clock: Arc<dyn Clock> = Arc::new(stage.clock());
    let config = Config::default().with_panels(warroom::metrics::presets::sim_panels());
    let mut model = Model::new(&config, Theme::fallback(), "embedded".into(), clock.now());
    model.briefing = Some("Late evening. Restarts start to arrive.".into());
    model.rehearsal = true;
    model.wall = Some(wall.now());
    let store = Store::new(dir);
    let locked = warroom::incident::open::lock(
        &store,
        warroom::incident::open::Which::New(model.now),
        warroom::incident::store::Role::Console,
    )
    .unwrap();
    let header = warroom::incident::open::Header {
        title: Some("Rehearsal: crash-loop".into()),
        severity: None,
    };
    let journal = open_incident(&mut model, locked, header, Some(clock.clone()))
        .await
        .unwrap();
    let id = model.incident.as_ref().unwrap().id.clone();
    let services = Services {
        source: Arc::new(stage.store.clone()),
        journal: Some(journal.clone()),
        declare: None,
        alerts: None,
        export: Some(warroom::app::workers::export::ExportSetup {
            store: store.clone(),
            id: store.find(&id).unwrap(),
            timezone: config.timezone,
            step_s: 5.0,
            gap_limit: config.gap_limit,
            public_names: Default::default(),
        }),
        runbooks: warroom::rehearsal::runbooks::setup(&config, &stage.url(), &stage.service_label),
        rehearsal: Some(stage.live()),
        github: None,
        discovery: None,
        variables: None,
        silences: None,
        engine: None,
        leaving: Default::default(),
        serve: false,
        follow: None,
    };
    let (tx, rx) = mpsc::unbounded_channel();
    warroom::app::workers::rehearsal::spawn(stage.live(), journal, &services, &tx);
    let c = Console {
        model,
        services,
        clock,
        tx,
        rx,
    };
    (c, stage)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_paused_for_ten_wall_seconds_advances_zero_simulated_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let wall = ManualClock::new("2026-12-01T10:00:00Z".parse().unwrap());
    let (mut c, stage) = console(dir.path(), &wall).await;
    let start = stage.now();

    // The briefing is up: the operator's clock has not started.
    wall.advance(Duration::from_secs(10));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(stage.now(), start, "time passed during the briefing");

    // Dismissed: a wall second is SPEED simulated seconds.
    c.key(KeyCode::Esc);
    assert!(c.model.briefing.is_none());
    tokio::time::sleep(Duration::from_millis(50)).await;
    wall.advance(Duration::from_secs(1));
    settles_at(&stage, start + SPEED).await;

    // Paused: the simulation too, and the console says so.
    c.key(KeyCode::Char('p'));
    assert!(c.model.paused);
    let notice = c
        .model
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert!(notice.contains("simulation"), "{notice}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let paused_at = stage.now();
    for _ in 0..10 {
        wall.advance(Duration::from_secs(1));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        stage.now(),
        paused_at,
        "ten wall seconds paused moved the simulation"
    );

    // Resumed: it goes on from where it stood.
    c.key(KeyCode::Char('p'));
    assert!(!c.model.paused);
    tokio::time::sleep(Duration::from_millis(50)).await;
    wall.advance(Duration::from_secs(2));
    settles_at(&stage, paused_at + 2.0 * SPEED).await;

    // The notice expires on the wall clock, not the simulated one.
    let until = c
        .model
        .notice
        .as_ref()
        .and_then(|n| n.until)
        .expect("a timed notice");
    assert!(until > c.model.ui_now());
    c.send(Msg::Wall(until));
    assert!(c.model.notice.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_the_scenario_is_announced_with_the_score_the_incident_and_what_next() {
    let dir = tempfile::tempdir().unwrap();
    let wall = ManualClock::new("2026-12-01T10:00:00Z".parse().unwrap());
    let (mut c, stage) = console(dir.path(), &wall).await;
    c.key(KeyCode::Esc);
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The scenario's hour, driven a wall minute at a time.
    let end = stage.pacer().end_s();
    for _ in 0..200 {
        if stage.pacer().has_ended() {
            break;
        }
        wall.advance(Duration::from_secs(60));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    c.until("the end announcement", Duration::from_secs(30), |m| {
        m.ended.is_some()
    })
    .await;
    assert_eq!(stage.now(), end, "the time stops at the scenario's end");
    let id = c.model.incident.as_ref().unwrap().id.clone();
    let text = c.model.ended.clone().unwrap();
    for needle in [
        "is over",
        "time to detect",
        "time to first mitigation",
        "objective: error ratio under 2 %",
        &format!("warroom export {id}"),
        &format!("warroom replay {id}"),
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    // The end is in the journal, at the scenario's last simulated second.
    let store = Store::new(dir.path());
    let records = store.read(&store.find(&id).unwrap()).unwrap().records;
    let ended = records
        .iter()
        .find(|r| matches!(r.kind, Event::RehearsalEnded { .. }))
        .expect("the end recorded");
    assert_eq!(ended.time, stage.clock().now());
    // Nothing moves any more, whatever the wall does.
    wall.advance(Duration::from_secs(600));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(stage.now(), end);
    // Closing the announcement leaves the console usable.
    c.key(KeyCode::Esc);
    assert!(c.model.ended.is_none());
}
