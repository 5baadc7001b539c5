//! One incident across machines through NATS JetStream (issue 36): the figures the issue asks.
//! Real `nats-server -js` processes on free loopback ports, each in a temporary dir: one node,
//! and three routed nodes with the incident's stream replicated 3 times. Every responder has
//! its own data dir (its own "machine"); every case has an incident of its own.
//!
//! 1. **Note on A to visible on B**, p50 and p99, in three cases: one node; three nodes at R3;
//!    three nodes at R3 after the node leading the incident's stream is killed (SIGKILL) and the
//!    rest has settled (five notes in a row each seen within a second). What is timed, per note:
//!    - *console*: A is a responder whose journal writer and sync run in this process, as a
//!      console's do (`share::session::start` on A's `JournalWriter`); the clock starts just
//!      before `JournalWriter::append` of the note (its fsync included) and stops when B's
//!      console, the real event loop (`app::runtime::event_loop`) with its own journal and its
//!      sync to the engine, has drawn a frame (200x60, timeline pane open) whose cells contain
//!      the note's text. That is what B's user sees.
//!    - *CLI*: C runs `warroom incident note ID TEXT` as a real process with `[share]` in its
//!      config (the engine reached per command: connect, stream, last sequence, publish, ack);
//!      the clock starts before the spawn and stops at the same frame on B. The process's own
//!      start-to-exit is printed beside it.
//!    - *pace*: each note waits for the one before to be seen (or 10 s) and 20 ms more. After
//!      the kill, the time until B's screen shows a note of A again is printed (a new note
//!      every 5 s until one shows, at most 120 s), with what A's sync said meanwhile.
//! 2. **Records per second one responder shares**: A's journal holds a backlog of 20,000 notes
//!    written while it was not shared; A's sync starts (as a console or recorder opening the
//!    incident does) while B's sync already follows. Timed from `session::start` until A's sync
//!    first says `0 unsent` (the engine acknowledged every record) and until B's sync has given
//!    every record of A as news (what B's console puts on its timeline). A's and B's syncs run
//!    in this one process (two worker threads). One node and R3.
//! 3. **Memory of a responder following a 100,000-record incident**: 100,000 records of A on
//!    the stream (published with `share::sync::publish_backlog`, as a responder's sync sends
//!    its backlog), then B's `warroom record ID` (a real process, `[share]` alone in its
//!    config) follows it. Its peak resident
//!    memory (`VmHWM` of /proc/PID/status) once caught up: the server's consumer has delivered
//!    every record and the process's CPU time has not moved for 2 s (at most
//!    `SHARE_FOLLOW_LIMIT` s). Beside it, the same recorder on a 1-record incident, and
//!    `warroom incident timeline ID --json` with `[share]` on a machine that never had the
//!    incident, replaying the 100,000 records once (its peak read by polling /proc every
//!    millisecond until it exits).
//!
//! Every wait is bounded. Prints Markdown tables headed by the date, commit, build profile and
//! core count, and `figure` lines for `benches/all.sh`. Needs `nats-server` (`apt-get install
//! nats-server`); without it the benchmark prints a SKIPPED line and ends.
//!
//! Run: `cargo bench --bench share` (see benches/README.md for how long each case takes).
//! `SHARE_CASES` (a comma-separated subset of
//! `one,three,down,rate,memory`), `SHARE_SAMPLES` (notes per case and way, default 250),
//! `SHARE_BACKLOG` (default 20,000), `SHARE_RECORDS` (default 100,000) and
//! `SHARE_FOLLOW_LIMIT` (seconds the follower may take, default 1,800) make a shorter run.
//! The process holds SIGINT and SIGTERM (B's console does, as warroom does); `kill -9` stops
//! it.

#[allow(dead_code)]
#[path = "../tests/support/child.rs"]
mod child;
#[path = "support/figure.rs"]
mod figure;
#[path = "../tests/support/nats.rs"]
mod nats;
#[path = "support/probe.rs"]
mod probe;
#[path = "../tests/support/procstat.rs"]
mod procstat;
#[path = "../tests/support/prometheus.rs"]
mod prometheus;
#[path = "../tests/support/skip.rs"]
mod skip;

use chrono::{DateTime, Utc};
use crossterm::event::{Event as Input, KeyCode, KeyEvent, KeyModifiers};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use warroom::app::Model;
use warroom::app::workers::Services;
use warroom::clock::WallClock;
use warroom::config::Config;
use warroom::incident::event::{Event, Severity};
use warroom::incident::store::Role;
use warroom::incident::{IncidentId, JournalWriter, Record, Source, Store};
use warroom::share::session::{self, News};
use warroom::share::{Engine, WriterId};
use warroom::theme::Theme;

use probe::{Hanging, Probe, Wanted};

/// Longest wait for one note to show on B.
const NOTE_WAIT: Duration = Duration::from_secs(10);
/// Longest wait, after a node is killed, for a note of A to show on B.
const RECOVERY_WAIT: Duration = Duration::from_secs(120);

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------------------------
// B's console: the real event loop on a test terminal that says when a text is on screen.

/// B's console on incident `id` of `store`, sharing through `engine`; `q` on the sender ends it.
struct Console {
    wanted: Wanted,
    keys: futures::channel::mpsc::UnboundedSender<std::io::Result<Input>>,
    looped: tokio::task::JoinHandle<()>,
}

impl Console {
    fn start(store: &Store, id: &IncidentId, engine: Engine) -> Console {
        let (w, h) = (200u16, 60u16);
        let (incident, recovery) = store.open_incident(id, Role::Console).expect("B opens");
        let journal = JournalWriter::spawn(incident).expect("B's journal writer");
        let mut m = Model::new(
            &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
            Theme::builtin("default").expect("theme"),
            "hanging".into(),
            Utc::now(),
        );
        m.width = w;
        m.height = h;
        m.show_timeline = true;
        m.timeline = recovery.records;
        m.incident = Some(warroom::app::model::IncidentHeader {
            id: id.to_string(),
            title: "Pool exhausted".into(),
        });
        let mut services = Services::metrics_only(Arc::new(Hanging));
        services.journal = Some(journal);
        services.engine = Some((engine, store.clone()));
        let wanted: Wanted = Arc::new(Mutex::new(None));
        let probe = Probe {
            inner: TestBackend::new(w, h),
            wanted: wanted.clone(),
        };
        let (keys, rx) = futures::channel::mpsc::unbounded();
        let looped = tokio::spawn(async move {
            let mut term = Terminal::new(probe).expect("terminal");
            let _ = warroom::app::runtime::event_loop(
                &mut term,
                m,
                services,
                Arc::new(WallClock),
                rx,
                |_| {},
            )
            .await;
        });
        Console {
            wanted,
            keys,
            looped,
        }
    }

    fn want(&self, text: &str) {
        *self.wanted.lock().unwrap() = Some((text.to_string(), None));
    }

    fn seen(&self) -> Option<Instant> {
        self.wanted.lock().unwrap().as_ref().and_then(|(_, s)| *s)
    }

    /// Waits (bounded) until the text wanted is on screen: when it was drawn.
    async fn until_seen(&self, limit: Duration) -> Option<Instant> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(t) = self.seen() {
                return Some(t);
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        self.seen()
    }

    async fn quit(self) {
        let _ = (self.keys).unbounded_send(Ok(Input::Key(KeyEvent::new(
            KeyCode::Char('q'),
            KeyModifiers::NONE,
        ))));
        let _ = tokio::time::timeout(Duration::from_secs(5), self.looped).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Responders' machines and the engine.

fn engine(url: &str, replicas: usize) -> Engine {
    let mut e = Engine::new(url);
    e.replicas = replicas;
    e
}

/// A responder's data dir with `[share]` in its config, as a user sets it.
fn machine(root: &Path, name: &str, url: &str, replicas: usize) -> PathBuf {
    let data = root.join(name);
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::write(
        data.join("warroom.toml"),
        format!("[share]\nurl = \"{url}\"\nreplicas = {replicas}\n"),
    )
    .expect("config");
    data
}

fn warroom(bin: &str, data: &Path) -> Command {
    let mut c = Command::new(bin);
    c.arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .arg("--config")
        .arg(data.join("warroom.toml"))
        .env("WARROOM_ACTOR", data.file_name().expect("name"))
        .env("NO_COLOR", "1")
        .env_remove("WARROOM_SHARE");
    c
}

/// Records as a journal holds them: the opening, then `notes` notes a quarter second apart.
fn records(notes: usize, t0: DateTime<Utc>) -> Vec<Record> {
    let opened = Event::IncidentOpened {
        title: "Pool exhausted".into(),
        severity: Severity::Sev2,
    };
    std::iter::once(opened)
        .chain((1..=notes).map(|n| {
            Event::note(format!(
                "check {n}: pool at {}% on api-{}, replica lag {}.{} s",
                90 + n % 10,
                n % 7,
                n % 5,
                n % 10
            ))
        }))
        .enumerate()
        .map(|(i, kind)| Record {
            seq: i as u64 + 1,
            time: t0 + chrono::Duration::milliseconds(i as i64 * 250),
            source: Source::Operator,
            actor: "ana".into(),
            host: "laptop-a".into(),
            kind,
        })
        .collect()
}

/// A new incident in `store` whose journal holds `notes` notes (written without a sync each).
/// Each case's incident has a number of its own (cases share the engines, and a stream holds
/// an incident's records from every case that wrote to it).
fn incident_with(store: &Store, notes: usize) -> (IncidentId, Vec<Record>) {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let want = NEXT.fetch_add(1, Ordering::SeqCst);
    let t0 = Utc::now() - chrono::Duration::milliseconds(notes as i64 * 250 + 60_000);
    let id = loop {
        let id = store.create(Utc::now()).expect("incident");
        let n: usize = (id.to_string().rsplit('-').next())
            .and_then(|n| n.parse().ok())
            .expect("number");
        if n >= want {
            break id;
        }
    };
    let all = records(notes, t0);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(store.journal_path(&id))
        .expect("journal");
    let mut out = std::io::BufWriter::new(file);
    for r in &all {
        out.write_all(&r.encode().expect("encode")).expect("write");
    }
    out.flush().expect("flush");
    (id, all)
}

/// Drains a sync's news, keeping the last status and counting records of others.
struct Listener {
    records: Arc<Mutex<usize>>,
    acked_at: Arc<Mutex<Option<Instant>>>,
    /// Every status the sync said (not the records), with when.
    said: Arc<Mutex<Vec<(Instant, String)>>>,
    task: tokio::task::JoinHandle<()>,
    /// The responder's presence: kept, as a console keeps it while it is open.
    _leaving: warroom::share::presence::Handle,
}

impl Listener {
    fn on(
        (mut news, leaving): (
            mpsc::UnboundedReceiver<News>,
            warroom::share::presence::Handle,
        ),
    ) -> Listener {
        let records = Arc::new(Mutex::new(0usize));
        let acked_at = Arc::new(Mutex::new(None));
        let said = Arc::new(Mutex::new(Vec::new()));
        let (r, a, l) = (records.clone(), acked_at.clone(), said.clone());
        let task = tokio::spawn(async move {
            while let Some(n) = news.recv().await {
                if let News::Record(_) = n {
                    *r.lock().unwrap() += 1;
                    continue;
                }
                if let News::Shared { unsent: 0, .. } = n {
                    a.lock().unwrap().get_or_insert_with(Instant::now);
                }
                l.lock().unwrap().push((Instant::now(), n.to_string()));
            }
        });
        Listener {
            records,
            acked_at,
            said,
            task,
            _leaving: leaving,
        }
    }
    fn records(&self) -> usize {
        *self.records.lock().unwrap()
    }
    fn acked_at(&self) -> Option<Instant> {
        *self.acked_at.lock().unwrap()
    }
    /// What the sync said since `t`, one line each with its time after `t`.
    fn said_since(&self, t: Instant) -> Vec<String> {
        (self.said.lock().unwrap().iter())
            .filter(|(at, _)| *at >= t)
            .map(|(at, n)| format!("+{:.1} s {n}", (*at - t).as_secs_f64()))
            .collect()
    }
}

/// A responder whose journal writer and sync run here: its records so far and the writer.
fn responder(store: &Store, id: &IncidentId, engine: Engine) -> (JournalWriter, Listener) {
    let (incident, recovery) = store.open_incident(id, Role::Console).expect("open");
    let journal = JournalWriter::spawn(incident).expect("journal writer");
    let news = session::start(engine, store, id, &journal, recovery.records).expect("sync");
    (journal, Listener::on(news))
}

// ---------------------------------------------------------------------------------------------
// 1. Note on A to visible on B.

#[derive(Default)]
struct Latency {
    console: Vec<f64>,
    cli: Vec<f64>,
    cli_exit: Vec<f64>,
    late: usize,
    /// From the node's kill to the first note seen on B (the one-node-down case).
    recovery: Option<f64>,
    /// Why nothing was timed: B saw no note of A within the bound after the kill.
    failed: Option<String>,
    /// What A's sync said from the kill until B saw a note again.
    said: Vec<String>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn quantiles(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    (figure::quantile(&v, 0.5), figure::quantile(&v, 0.99))
}

/// Kills a node of the engine at the URL given; says which.
type Kill = Box<dyn FnOnce(&str) -> Option<String> + Send>;

/// `samples` notes from A's in-process responder and `samples` from C's CLI, each timed to
/// B's frame. `kill` runs once A and B follow; the notes are timed after it has settled.
async fn latency(
    bin: &str,
    url: &str,
    replicas: usize,
    samples: usize,
    kill: Option<Kill>,
) -> Latency {
    let root = tempfile::tempdir().expect("root");
    let (a, b) = (
        machine(root.path(), "ana", url, replicas),
        machine(root.path(), "bo", url, replicas),
    );
    let c = machine(root.path(), "cy", url, replicas);
    let (store_a, store_b) = (Store::new(&a), Store::new(&b));
    let (id, _) = incident_with(&store_a, 0);
    let (journal_a, news_a) = responder(&store_a, &id, engine(url, replicas));
    // B joins as `warroom incident note` joins: a place for the incident on its machine.
    store_b.adopt(&id).expect("B joins");
    let console = Console::start(&store_b, &id, engine(url, replicas));
    eprintln!("share: incident {id}: A shares, B's console follows; C joins");
    // C joins with its first note (not timed).
    let out = warroom(bin, &c)
        .args(["incident", "note", &id.to_string(), "cy joins"])
        .output()
        .expect("warroom");
    assert!(
        out.status.success(),
        "C's first note: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lat = Latency::default();
    eprintln!("share: C joined; waiting for A's first note on B");
    // Everyone follows: a note from A shows on B.
    let settle = |console: &Console, journal: &JournalWriter, text: String| {
        console.want(&text);
        let journal = journal.clone();
        async move {
            journal
                .append(Source::Operator, "ana", Event::note(text))
                .await
                .expect("append");
        }
    };
    settle(&console, &journal_a, "wq-settle-0".into()).await;
    assert!(
        console.until_seen(Duration::from_secs(60)).await.is_some(),
        "B never saw A's first note"
    );
    if let Some(kill) = kill {
        let t = Instant::now();
        let killed = tokio::task::spawn_blocking({
            let url = url.to_string();
            move || kill(&url)
        })
        .await
        .expect("kill");
        println!("  killed {}", killed.as_deref().unwrap_or("a node"));
        // The first note after the kill, a new one every 5 s until one is seen (bounded): the
        // failover as B's user sees it.
        let mut n = 1;
        loop {
            settle(&console, &journal_a, format!("wq-settle-{n}")).await;
            if let Some(seen) = console.until_seen(Duration::from_secs(5)).await {
                lat.recovery = Some((seen - t).as_secs_f64());
                lat.said = news_a.said_since(t);
                break;
            }
            n += 1;
            if t.elapsed() > RECOVERY_WAIT {
                let writer = WriterId::for_incident(&store_a.dir(&id)).expect("writer");
                let held = on_the_stream(url, &id, &writer).await;
                let consumers = consumers(url, &id).await;
                let why = format!(
                    "B's console showed none of A's {n} notes within {} s of the kill; the \
                     stream's last record of A: {held}; its consumers: {consumers}; A's sync \
                     said: {}",
                    RECOVERY_WAIT.as_secs(),
                    news_a.said_since(t).join("; ")
                );
                println!("  {why}");
                lat.failed = Some(why);
                console.quit().await;
                return lat;
            }
        }
        // Then settled: five notes in a row each seen within a second.
        let mut in_a_row = 0;
        while in_a_row < 5 {
            n += 1;
            settle(&console, &journal_a, format!("wq-settle-{n}")).await;
            match console.until_seen(Duration::from_secs(1)).await {
                Some(_) => in_a_row += 1,
                None => in_a_row = 0,
            }
            assert!(t.elapsed() < Duration::from_secs(180), "never settled");
        }
    }
    let prefixes = ["qx", "zv", "kj", "wm"];
    for i in 0..samples {
        let text = format!("{}-console-{i}", prefixes[i % 4]);
        console.want(&text);
        let t = Instant::now();
        journal_a
            .append(Source::Operator, "ana", Event::note(text))
            .await
            .expect("append");
        match console.until_seen(NOTE_WAIT).await {
            Some(seen) => lat.console.push(ms(seen - t)),
            None => {
                lat.late += 1;
                lat.console.push(ms(NOTE_WAIT));
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for i in 0..samples {
        let text = format!("{}-cli-{i}", prefixes[i % 4]);
        console.want(&text);
        let t = Instant::now();
        let mut child = child::Reaped(
            warroom(bin, &c)
                .args(["incident", "note", &id.to_string(), &text])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("warroom"),
        );
        let deadline = t + NOTE_WAIT;
        let (mut seen, mut exited) = (None, None);
        while (seen.is_none() || exited.is_none()) && Instant::now() < deadline {
            seen = seen.or_else(|| console.seen());
            if exited.is_none() && child.0.try_wait().expect("wait").is_some() {
                exited = Some(Instant::now());
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        drop(child);
        lat.cli_exit
            .push(exited.map_or(ms(NOTE_WAIT), |e| ms(e - t)));
        match seen {
            Some(s) => lat.cli.push(ms(s - t)),
            None => {
                lat.late += 1;
                lat.cli.push(ms(NOTE_WAIT));
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    console.quit().await;
    drop(journal_a);
    lat
}

/// The last record of `writer` the incident's stream holds, asked of the engine afresh.
async fn on_the_stream(url: &str, id: &IncidentId, writer: &WriterId) -> String {
    let asked = async {
        let js = engine(url, 3).connect().await.map_err(|e| e.to_string())?;
        let stream = (js.get_stream(warroom::share::wire::stream_name(id)).await)
            .map_err(|e| e.to_string())?;
        let m = (stream
            .get_last_raw_message_by_subject(&warroom::share::wire::subject(id, writer)))
        .await
        .map_err(|e| e.to_string())?;
        let shared = warroom::share::Shared::decode(m.subject.as_str(), &m.payload)
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(format!("#{} {:?}", shared.record.seq, shared.record.kind))
    };
    match tokio::time::timeout(Duration::from_secs(10), asked).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => format!("not read ({e})"),
        Err(_) => "not read (no answer in 10 s)".into(),
    }
}

/// The incident stream's consumers as the engine reports them: delivered, pending, waiting.
async fn consumers(url: &str, id: &IncidentId) -> String {
    let asked = async {
        let js = engine(url, 3).connect().await.ok()?;
        let stream = js
            .get_stream(warroom::share::wire::stream_name(id))
            .await
            .ok()?;
        let mut infos = stream.consumers();
        let mut out = Vec::new();
        while let Some(info) = infos.next().await {
            out.push(match info {
                Ok(i) => format!(
                    "{} delivered to #{}, {} pending, {} pulls waiting",
                    i.name, i.delivered.stream_sequence, i.num_pending, i.num_waiting
                ),
                Err(e) => format!("not read ({e})"),
            });
        }
        Some(out.join(", "))
    };
    match tokio::time::timeout(Duration::from_secs(10), asked).await {
        Ok(Some(s)) if !s.is_empty() => s,
        Ok(Some(_)) => "none".into(),
        _ => "not read".into(),
    }
}

/// Kills the node that leads the incident streams' (the one whose loss costs an election):
/// asks the engine which node leads the first `warroom-` stream.
async fn leader_of_incident(url: &str) -> Option<String> {
    let js = engine(url, 3).connect().await.ok()?;
    let mut names = js.stream_names();
    while let Some(Ok(name)) = names.next().await {
        if name.starts_with("warroom-") {
            let mut s = js.get_stream(&name).await.ok()?;
            return s.info().await.ok()?.cluster.as_ref()?.leader.clone();
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// 2. Records per second.

struct Rate {
    /// What A's sync said meanwhile.
    said: Vec<String>,
    records: usize,
    acked: Option<f64>,
    visible: Option<f64>,
    visible_count: usize,
}

async fn rate(url: &str, replicas: usize, backlog: usize, limit: Duration) -> Rate {
    let root = tempfile::tempdir().expect("root");
    let (a, b) = (
        machine(root.path(), "ana", url, replicas),
        machine(root.path(), "bo", url, replicas),
    );
    let (store_a, store_b) = (Store::new(&a), Store::new(&b));
    let (id, all) = incident_with(&store_a, backlog);
    store_b.adopt(&id).expect("B joins");
    let (_journal_b, b_news) = responder(&store_b, &id, engine(url, replicas));
    // B follows (its sync said it reached the engine) before A starts.
    let deadline = Instant::now() + Duration::from_secs(30);
    while b_news.acked_at().is_none() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let t = Instant::now();
    let (_journal_a, a_news) = responder(&store_a, &id, engine(url, replicas));
    let deadline = t + limit;
    let mut visible = None;
    while Instant::now() < deadline {
        if visible.is_none() && b_news.records() >= all.len() {
            visible = Some(t.elapsed().as_secs_f64());
        }
        if visible.is_some() && a_news.acked_at().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let out = Rate {
        said: a_news.said_since(t),
        records: all.len(),
        acked: a_news.acked_at().map(|a| (a - t).as_secs_f64()),
        visible,
        visible_count: b_news.records(),
    };
    a_news.task.abort();
    b_news.task.abort();
    out
}

// ---------------------------------------------------------------------------------------------
// 3. Memory of a follower.

struct Follow {
    records: u64,
    caught_up: Option<f64>,
    delivered: u64,
    peak_mib: f64,
    rss_mib: f64,
    cpu_s: f64,
}

/// How far the engine's consumers of the incident's stream have delivered (the furthest).
async fn delivered(js: &async_nats::jetstream::Context, stream: &str) -> u64 {
    let asked = async {
        let Ok(s) = js.get_stream(stream).await else {
            return 0;
        };
        let mut infos = s.consumers();
        let mut most = 0;
        while let Some(Ok(info)) = infos.next().await {
            most = most.max(info.delivered.stream_sequence);
        }
        most
    };
    tokio::time::timeout(Duration::from_secs(5), asked)
        .await
        .unwrap_or(0)
}

/// B's `warroom record ID` following `id`, until it has caught up with `last` (the stream's
/// last sequence) or `limit`.
async fn follower(
    bin: &str,
    url: &str,
    data: &Path,
    id: &IncidentId,
    last: u64,
    limit: Duration,
) -> Follow {
    let child = warroom(bin, data)
        .args(["record", &id.to_string()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(data.join("record.err")).expect("stderr"))
        .spawn()
        .expect("warroom record");
    let mut child = child::Reaped(child);
    let pid = child.0.id();
    eprintln!("share: warroom record (pid {pid}) follows {id}");
    let js = engine(url, 1).connect().await.expect("connect");
    let stream = warroom::share::wire::stream_name(id);
    let t = Instant::now();
    let (mut quiet_since, mut last_cpu) = (Instant::now(), procstat::cpu_ticks(pid));
    let (mut caught_up, mut got) = (None, 0);
    while t.elapsed() < limit {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if let Ok(Some(status)) = child.0.try_wait() {
            panic!(
                "warroom record ended ({status}): {}",
                std::fs::read_to_string(data.join("record.err")).unwrap_or_default()
            );
        }
        let cpu = procstat::cpu_ticks(pid);
        if cpu != last_cpu {
            (quiet_since, last_cpu) = (Instant::now(), cpu);
        }
        got = got.max(delivered(&js, &stream).await);
        if got >= last && quiet_since.elapsed() >= Duration::from_secs(2) {
            caught_up = Some((quiet_since - t).as_secs_f64());
            break;
        }
    }
    let out = Follow {
        records: last,
        caught_up,
        delivered: got,
        peak_mib: procstat::status_kib(pid, "VmHWM:") as f64 / 1024.0,
        rss_mib: procstat::status_kib(pid, "VmRSS:") as f64 / 1024.0,
        cpu_s: procstat::cpu_ticks(pid) as f64 / procstat::TICKS_PER_SEC,
    };
    drop(child);
    out
}

struct Replay {
    seconds: f64,
    peak_mib: f64,
    ok: bool,
    lines: usize,
    err: String,
}

/// `warroom incident timeline ID --share URL --json` on a machine that never had the incident.
fn replay(bin: &str, root: &Path, url: &str, id: &IncidentId) -> Replay {
    let data = machine(root, "dee", url, 1);
    let (out, err) = (data.join("out.jsonl"), data.join("err"));
    let t = Instant::now();
    let mut child = warroom(bin, &data)
        .args(["incident", "timeline", &id.to_string(), "--json"])
        .stdout(std::fs::File::create(&out).expect("out"))
        .stderr(std::fs::File::create(&err).expect("err"))
        .spawn()
        .expect("warroom");
    let pid = child.id();
    let mut peak = 0;
    let status = loop {
        peak = peak.max(procstat::status_kib(pid, "VmHWM:"));
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if t.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let lines = std::fs::read_to_string(&out).map_or(0, |s| s.lines().count());
    Replay {
        seconds: t.elapsed().as_secs_f64(),
        peak_mib: peak as f64 / 1024.0,
        ok: status.success(),
        lines,
        err: std::fs::read_to_string(&err)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

/// A's `records` records on the engine, published as a responder's sync publishes its
/// backlog; returns the incident and how long publishing took.
async fn on_engine(url: &str, root: &Path, records: usize) -> (IncidentId, u64, f64) {
    let store = Store::new(&machine(root, "ana", url, 1));
    let (id, all) = incident_with(&store, records);
    let writer = WriterId::for_incident(&store.dir(&id)).expect("writer");
    let js = engine(url, 1).connect().await.expect("connect");
    let stream = warroom::share::sync::ensure_stream(&js, &id, 1)
        .await
        .expect("stream");
    let t = Instant::now();
    eprintln!("share: publishing {} records of {id}", all.len());
    let publish = warroom::share::sync::publish_backlog(&js, &stream, &id, &writer, &all);
    let sent = tokio::time::timeout(Duration::from_secs(600), publish)
        .await
        .expect("the records published within 600 s")
        .expect("publish");
    let took = t.elapsed().as_secs_f64();
    assert_eq!(sent, all.len());
    (id, all.len() as u64, took)
}

// ---------------------------------------------------------------------------------------------

fn commit() -> String {
    Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "?".into())
}

/// The profile this benchmark and its warroom were built with, from where cargo put them.
fn profile(bin: &str) -> String {
    let exe = std::env::current_exe().map(|p| p.display().to_string());
    let dir = if exe.as_deref().is_ok_and(|e| e.contains("/debug/")) {
        "target/debug"
    } else {
        "target/release"
    };
    let kind = if cfg!(debug_assertions) {
        "dev profile (debug build: opt-level 0 for warroom, 1 for dependencies)"
    } else {
        "bench profile (release's opt-level \"s\", no LTO)"
    };
    format!("{kind}, {dir}; warroom binary {bin}")
}

/// The cases to run: `SHARE_CASES`, a comma-separated list of `one`, `three`, `down`, `rate`
/// and `memory` (default: all).
fn cases() -> Vec<String> {
    std::env::var("SHARE_CASES")
        .unwrap_or_else(|_| "one,three,down,rate,memory".into())
        .split(',')
        .map(|c| c.trim().to_string())
        .collect()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bin = figure::warroom_bin();
    let cases = cases();
    let run = |c: &str| cases.iter().any(|x| x == c);
    let samples = env_usize("SHARE_SAMPLES", 250);
    let backlog = env_usize("SHARE_BACKLOG", 20_000);
    let big = env_usize("SHARE_RECORDS", 100_000);
    let follow_limit = Duration::from_secs(env_usize("SHARE_FOLLOW_LIMIT", 1800) as u64);
    let started = Utc::now();
    let Some(single) = tokio::task::spawn_blocking(nats::Nats::start)
        .await
        .expect("start")
    else {
        return;
    };
    let url1 = single.url();
    eprintln!("share: one node on {url1}");
    nats::until_streams_are_taken(&url1, 1).await;
    let mut cluster = None;
    if run("three") || run("down") || run("rate") {
        let c = tokio::task::spawn_blocking(|| nats::Cluster::start(3))
            .await
            .expect("start")
            .expect("nats-server");
        eprintln!("share: three nodes on {}", c.url());
        nats::until_streams_are_taken(&c.url(), 3).await;
        cluster = Some(c);
    }
    let url3 = cluster.as_ref().map(nats::Cluster::url).unwrap_or_default();

    // 1. Latency.
    let mut latencies: Vec<(&str, Latency)> = Vec::new();
    if run("one") {
        println!("note on A to visible on B, one node ({samples} notes each way)");
        latencies.push((
            "one node, loopback",
            latency(&bin, &url1, 1, samples, None).await,
        ));
    }
    if run("three") {
        println!("note on A to visible on B, three nodes, R3");
        latencies.push((
            "three nodes, R3",
            latency(&bin, &url3, 3, samples, None).await,
        ));
    }
    if run("down") {
        // The cluster is shared with the kill, which notes the node it stopped.
        let slot = Arc::new(Mutex::new((
            cluster.take().expect("cluster"),
            None::<usize>,
        )));
        let kill = {
            let slot = slot.clone();
            Box::new(move |url: &str| {
                let leader = tokio::runtime::Handle::current().block_on(leader_of_incident(url));
                let k = (leader.as_deref())
                    .and_then(|l| l.strip_prefix("node-"))
                    .and_then(|k| k.parse::<usize>().ok())
                    .unwrap_or(0);
                let mut guard = slot.lock().unwrap();
                guard.0.nodes[k].stop();
                guard.1 = Some(k);
                let what = match leader {
                    Some(_) => "the incident stream's leader",
                    None => "its leader unknown",
                };
                Some(format!("node-{k}, {what}"))
            }) as Kill
        };
        println!("note on A to visible on B, three nodes, R3, one node killed");
        latencies.push((
            "three nodes, R3, leader killed",
            latency(&bin, &url3, 3, samples, Some(kill)).await,
        ));
        // The killed node back, for the rate at R3.
        let (mut c, killed) = Arc::try_unwrap(slot)
            .ok()
            .expect("the kill is done")
            .into_inner()
            .unwrap();
        if let Some(k) = killed {
            tokio::task::block_in_place(|| c.nodes[k].restart());
        }
        cluster = Some(c);
    }

    // 2. Records per second.
    let limit = Duration::from_secs(300);
    let mut rates: Vec<(&str, Rate)> = Vec::new();
    if run("rate") {
        println!("records per second one responder shares ({backlog} records of backlog)");
        rates.push(("one node", rate(&url1, 1, backlog, limit).await));
        nats::until_streams_are_taken(&url3, 3).await;
        rates.push(("three nodes, R3", rate(&url3, 3, backlog, limit).await));
    }
    drop(cluster);

    // 3. Memory.
    let mut memory = None;
    if run("memory") {
        println!("memory of a follower ({big} records)");
        let root = tempfile::tempdir().expect("root");
        let (id, last, publish_s) = on_engine(&url1, root.path(), big).await;
        let b = machine(root.path(), "bo", &url1, 1);
        Store::new(&b).adopt(&id).expect("B joins");
        let follow = follower(&bin, &url1, &b, &id, last, follow_limit).await;
        let small_root = root.path().join("small");
        let (small, small_last, _) = on_engine(&url1, &small_root, 0).await;
        let b0 = machine(&small_root, "bo", &url1, 1);
        Store::new(&b0).adopt(&small).expect("B joins");
        let idle = follower(
            &bin,
            &url1,
            &b0,
            &small,
            small_last,
            Duration::from_secs(60),
        )
        .await;
        let replayed = tokio::task::spawn_blocking({
            let (bin, root, url, id) = (bin.clone(), root.path().to_path_buf(), url1.clone(), id);
            move || replay(&bin, &root, &url, &id)
        })
        .await
        .expect("replay");
        memory = Some((publish_s, follow, idle, replayed));
    }
    drop(single);

    // The tables.
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!();
    println!(
        "share benchmark, {} UTC, commit {}, {}, {cores} cores",
        started.format("%Y-%m-%d %H:%M"),
        commit(),
        profile(&bin)
    );
    if !latencies.is_empty() {
        println!();
        println!(
            "| note on A → visible on B | console p50 | console p99 | CLI p50 | CLI p99 | CLI process p50 | notes late (> {} s) |",
            NOTE_WAIT.as_secs()
        );
        println!("|---|---|---|---|---|---|---|");
    }
    for (name, l) in &latencies {
        if let Some(why) = &l.failed {
            println!("| {name} | not measured: {why} | | | | | |");
            continue;
        }
        let (c50, c99) = quantiles(&l.console);
        let (l50, l99) = quantiles(&l.cli);
        let (e50, _) = quantiles(&l.cli_exit);
        println!(
            "| {name} | {c50:.2} ms | {c99:.2} ms | {l50:.1} ms | {l99:.1} ms | {e50:.1} ms | {} of {} |",
            l.late,
            l.console.len() + l.cli.len()
        );
        if let Some(r) = l.recovery {
            println!(
                "From the kill to the first note of A on B's screen: {r:.2} s (a note every 5 s \
                 until one shows); A's sync said meanwhile: {}",
                l.said.join("; ")
            );
        }
    }
    if !rates.is_empty() {
        println!();
        println!(
            "| records shared by one responder | records | all acknowledged | all visible on B's sync |"
        );
        println!("|---|---|---|---|");
    }
    for (name, r) in &rates {
        let per = |s: Option<f64>| match s {
            Some(s) => format!("{s:.2} s ({:.0} records/s)", r.records as f64 / s),
            None => format!(
                "not within {} s ({} of {} seen)",
                limit.as_secs(),
                r.visible_count,
                r.records
            ),
        };
        println!(
            "| {name} | {} | {} | {} |",
            r.records,
            per(r.acked),
            per(r.visible)
        );
    }
    for (name, r) in &rates {
        println!("A's sync said ({name}): {}", r.said.join("; "));
    }
    if let Some((publish_s, follow, idle, replayed)) = &memory {
        println!();
        println!(
            "Filling the stream: {} records with share::sync::publish_backlog (one node): {publish_s:.2} s ({:.0} records/s).",
            follow.records,
            follow.records as f64 / publish_s
        );
        println!();
        println!(
            "| responder following | records | caught up | peak memory (VmHWM) | resident after | CPU |"
        );
        println!("|---|---|---|---|---|---|");
        for (f, limit) in [(follow, follow_limit), (idle, Duration::from_secs(60))] {
            let caught = match f.caught_up {
                Some(s) => format!("{s:.1} s"),
                None => format!(
                    "not within {} s ({} of {} delivered)",
                    limit.as_secs(),
                    f.delivered,
                    f.records
                ),
            };
            println!(
                "| `warroom record` | {} | {caught} | {:.1} MiB | {:.1} MiB | {:.1} s |",
                f.records, f.peak_mib, f.rss_mib, f.cpu_s
            );
        }
        println!(
            "| `warroom incident timeline --share --json` (one replay) | {} lines | {:.2} s{} | {:.1} MiB | - | - |",
            replayed.lines,
            replayed.seconds,
            if replayed.ok {
                String::new()
            } else {
                format!(", FAILED: {}", replayed.err)
            },
            replayed.peak_mib
        );
    }

    // Figure lines for benches/all.sh.
    for (name, l) in latencies.iter().filter(|(_, l)| l.failed.is_none()) {
        let (c50, c99) = quantiles(&l.console);
        let (l50, l99) = quantiles(&l.cli);
        for (what, q, v) in [
            ("note on A to B's screen", "median", c50),
            ("note on A to B's screen", "p99", c99),
            ("CLI note to B's screen", "median", l50),
            ("CLI note to B's screen", "p99", l99),
        ] {
            figure::report(
                &format!("{what}, {name}, {q}"),
                v,
                "ms",
                figure::Target::None,
            );
        }
    }
    for (name, r) in &rates {
        for (what, s) in [("acknowledged", r.acked), ("visible on B", r.visible)] {
            if let Some(s) = s {
                figure::report(
                    &format!("records one responder shares ({what}), {name}"),
                    r.records as f64 / s,
                    "records/s",
                    figure::Target::None,
                );
            }
        }
    }
    if let Some((_, follow, _, _)) = &memory {
        figure::report(
            &format!("follower (warroom record) peak memory, {big} records"),
            follow.peak_mib,
            "MiB",
            figure::Target::None,
        );
    }
}
