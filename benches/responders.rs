//! Several responders on one incident (issue 18):
//! - a note's round trip through the holder: `warroom incident note` from its start to its
//!   acknowledged exit (a real process per note), and the client call alone;
//! - a follower's delay from the holder's append to the frame that shows the note (the real
//!   event loop of a follower console, on a test terminal that looks for the note);
//! - the holder console's frame time while 4 clients write through its socket as fast as they
//!   can.
//!
//! Run: `cargo bench --bench responders`

#[path = "support/figure.rs"]
mod figure;
#[path = "support/probe.rs"]
mod probe;

use probe::{Hanging, Probe, Wanted};

use chrono::Utc;
use crossterm::event::{Event as Input, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use warroom::app::Model;
use warroom::app::sharing::{FollowSetup, Sharing};
use warroom::app::workers::Services;
use warroom::clock::WallClock;
use warroom::config::Config;
use warroom::incident::event::{Event, Severity};
use warroom::incident::serve::{self, Client};
use warroom::incident::store::Role;
use warroom::incident::{JournalWriter, Source, Store};
use warroom::theme::Theme;

static FRAME_STARTED: Mutex<Option<Instant>> = Mutex::new(None);
static FRAMES: Mutex<Vec<f64>> = Mutex::new(Vec::new());

/// Times each frame: `sync(true)` before drawing, `sync(false)` after.
fn frame_timer(begin: bool) {
    if begin {
        *FRAME_STARTED.lock().unwrap() = Some(Instant::now());
    } else if let Some(t) = FRAME_STARTED.lock().unwrap().take() {
        FRAMES.lock().unwrap().push(t.elapsed().as_secs_f64() * 1e3);
    }
}

fn quantiles(mut v: Vec<f64>) -> (f64, f64, usize) {
    v.sort_by(f64::total_cmp);
    (
        figure::quantile(&v, 0.5),
        figure::quantile(&v, 0.99),
        v.len(),
    )
}

fn model(w: u16, h: u16) -> Model {
    let mut m = Model::new(
        &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
        Theme::builtin("default").unwrap(),
        "hanging".into(),
        Utc::now(),
    );
    m.width = w;
    m.height = h;
    m.show_timeline = true;
    m
}

/// An incident held and served in this process, as a recorder holds it.
async fn holder(store: &Store) -> (warroom::incident::IncidentId, JournalWriter) {
    let id = store.create(Utc::now()).unwrap();
    let (incident, _) = store.open_incident(&id, Role::Recorder).unwrap();
    let writer = JournalWriter::spawn(incident).unwrap();
    writer
        .append(
            Source::Operator,
            "ana",
            Event::IncidentOpened {
                title: "Pools full".into(),
                severity: Severity::Sev2,
            },
        )
        .await
        .unwrap();
    (id, writer)
}

async fn round_trips(data: &std::path::Path, store: &Store) {
    let (id, writer) = holder(store).await;
    let serving = serve::serve(writer.clone(), None, Default::default()).unwrap();
    let (data, idc, path) = (
        data.to_path_buf(),
        id.to_string(),
        serving.path().to_path_buf(),
    );
    let (process, call) = tokio::task::spawn_blocking(move || {
        let mut process = Vec::new();
        for i in 0..100 {
            let t = Instant::now();
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
                .arg("--data-dir")
                .arg(&data)
                .arg("--log-file")
                .arg(data.join("warroom.log"))
                .env("WARROOM_CONFIG", data.join("none.toml"))
                .args(["incident", "note", &idc, &format!("round trip {i}")])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            process.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let client = Client::new(&path, "bench");
        let mut call = Vec::new();
        for i in 0..500 {
            let t = Instant::now();
            client
                .append(&idc, Event::note(format!("call {i}")))
                .unwrap();
            call.push(t.elapsed().as_secs_f64() * 1e3);
        }
        (process, call)
    })
    .await
    .unwrap();
    let (pm, p99, n) = quantiles(process);
    println!(
        "note round trip through the holder, `warroom incident note` start to exit 0 ({n}): median {pm:.2} ms, p99 {p99:.2} ms"
    );
    figure::report(
        "note round trip through the holder, process, median",
        pm,
        "ms",
        figure::Target::Under(100.0),
    );
    figure::report(
        "note round trip through the holder, process, p99",
        p99,
        "ms",
        figure::Target::Under(250.0),
    );
    let (cm, c99, n) = quantiles(call);
    println!(
        "note round trip through the holder, the client call alone ({n}): median {cm:.2} ms, p99 {c99:.2} ms"
    );
    figure::report(
        "note round trip through the holder, client call, median",
        cm,
        "ms",
        figure::Target::Under(20.0),
    );
    figure::report(
        "note round trip through the holder, client call, p99",
        c99,
        "ms",
        figure::Target::Under(50.0),
    );
}

async fn follower_delay(store: &Store) {
    let (w, h) = (200u16, 60u16);
    let (id, writer) = holder(store).await;
    let serving = serve::serve(writer.clone(), None, Default::default()).unwrap();
    let mut m = model(w, h);
    m.incident = Some(warroom::app::model::IncidentHeader {
        id: id.to_string(),
        title: "Pools full".into(),
    });
    m.sharing = Sharing::Following {
        holder: writer.info().holder.clone(),
        followers: 0,
        gone: None,
    };
    let mut services = Services::metrics_only(Arc::new(Hanging));
    services.follow = Some(FollowSetup {
        client: Client::new(serving.path(), "bo"),
        incident: id.to_string(),
        actor: "bo".into(),
        local: None,
    });
    let wanted: Wanted = Arc::new(Mutex::new(None));
    let probe = Probe {
        inner: TestBackend::new(w, h),
        wanted: wanted.clone(),
    };
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let looped = tokio::spawn(async move {
        let mut term = Terminal::new(probe).unwrap();
        warroom::app::runtime::event_loop(&mut term, m, services, Arc::new(WallClock), rx, |_| {})
            .await
            .unwrap()
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut delays = Vec::new();
    for i in 0..200 {
        // Texts that share no prefix with the one before, so only the new one matches.
        let text = format!("{}-follow-{i}", ["qx", "zv", "kj", "wm"][i % 4]);
        *wanted.lock().unwrap() = Some((text.clone(), None));
        let t = Instant::now();
        writer
            .append(Source::Operator, "ana", Event::note(text))
            .await
            .unwrap();
        let deadline = t + Duration::from_secs(2);
        loop {
            if let Some((_, Some(seen))) = wanted.lock().unwrap().as_ref() {
                delays.push((*seen - t).as_secs_f64() * 1e3);
                break;
            }
            if Instant::now() > deadline {
                delays.push(2000.0);
                break;
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let _ = tx.unbounded_send(Ok(Input::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::NONE,
    ))));
    let _ = tokio::time::timeout(Duration::from_secs(5), looped).await;
    let (dm, d99, n) = quantiles(delays);
    println!(
        "follower: the holder's append to the frame that shows it, {w}x{h} ({n}): median {dm:.2} ms, p99 {d99:.2} ms"
    );
    figure::report(
        "follower delay, holder append to screen, median",
        dm,
        "ms",
        figure::Target::Under(50.0),
    );
    figure::report(
        "follower delay, holder append to screen, p99",
        d99,
        "ms",
        figure::Target::Under(100.0),
    );
}

async fn holder_frames(store: &Store) {
    let (w, h) = (200u16, 60u16);
    let id = store.create(Utc::now()).unwrap();
    let (incident, _) = store.open_incident(&id, Role::Console).unwrap();
    let writer = JournalWriter::spawn(incident).unwrap();
    let mut m = model(w, h);
    m.incident = Some(warroom::app::model::IncidentHeader {
        id: id.to_string(),
        title: "Pools full".into(),
    });
    let mut services = Services::metrics_only(Arc::new(Hanging));
    services.journal = Some(writer.clone());
    services.serve = true;
    let probe = Probe {
        inner: TestBackend::new(w, h),
        wanted: Arc::new(Mutex::new(None)),
    };
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let looped = tokio::spawn(async move {
        let mut term = Terminal::new(probe).unwrap();
        warroom::app::runtime::event_loop(
            &mut term,
            m,
            services,
            Arc::new(WallClock),
            rx,
            frame_timer,
        )
        .await
        .unwrap()
    });
    let socket = store.dir(&id).join(serve::SOCKET_FILE);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Client::new(&socket, "probe").hello().is_err() {
        assert!(Instant::now() < deadline, "the holder console never served");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    FRAMES.lock().unwrap().clear();
    let writing = Arc::new(AtomicBool::new(true));
    let written = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..4)
        .map(|c| {
            let (socket, idc, writing, written) = (
                socket.clone(),
                id.to_string(),
                writing.clone(),
                written.clone(),
            );
            std::thread::spawn(move || {
                let client = Client::new(&socket, &format!("client-{c}"));
                let mut i = 0;
                while writing.load(Ordering::Relaxed) {
                    client
                        .append(&idc, Event::note(format!("c{c} n{i}")))
                        .unwrap();
                    written.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
            })
        })
        .collect();
    let secs = 5.0;
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    writing.store(false, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let _ = tx.unbounded_send(Ok(Input::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::NONE,
    ))));
    let model = tokio::time::timeout(Duration::from_secs(5), looped)
        .await
        .ok()
        .and_then(std::result::Result::ok);
    let frames = std::mem::take(&mut *FRAMES.lock().unwrap());
    let n_written = written.load(Ordering::Relaxed);
    let shown = model.map_or(0, |m| m.timeline.len());
    let (fm, f99, n) = quantiles(frames);
    println!(
        "holder console, 4 clients writing as fast as they can for {secs} s: {n_written} notes \
         ({:.0}/s), {shown} records on its timeline, {n} frames: median {fm:.2} ms, p99 {f99:.2} ms",
        n_written as f64 / secs
    );
    figure::report(
        "holder frame time while 4 clients write, median",
        fm,
        "ms",
        figure::Target::Under(8.0),
    );
    figure::report(
        "holder frame time while 4 clients write, p99",
        f99,
        "ms",
        figure::Target::Under(16.0),
    );
    figure::report(
        "notes through the holder, 4 clients",
        n_written as f64 / secs,
        "notes/s",
        figure::Target::None,
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("none.toml"), "").unwrap();
    let store = Store::new(data.path());
    round_trips(data.path(), &store).await;
    follower_delay(&store).await;
    holder_frames(&store).await;
}
