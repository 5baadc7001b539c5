//! Issue 17's and issue 32's golden drafts: each rehearsal scenario (planner-peak, bird-count,
//! crash-loop) played headlessly from the command line with the seed's response, its fixing
//! play and wrong ones (a rollback alone, retries off alone, six plain restarts, a batch
//! restart refused by its budget), then drafted by `warroom export`. Every figure the draft
//! states is compared with the simulator's own record, which the game day reports at every
//! scrape (so a change in the simulator's fidelity or the rehearsal clock moves both sides):
//! the impact window, the failed and total user requests, the peak error ratio, each peak's
//! sustained level and momentary maximum from the panel snapshots' own points (and "stayed"
//! only for a signal that never came back), each step's
//! effect on the customers over the windows the draft read (user requests failing, the error
//! ratio's median), which step the recovery is credited to (only one whose effect window holds
//! it), no effect for a step that acted on nothing, every wrong move the scenario recorded
//! named, a share that got worse said to have made it worse, the suggested actions whose
//! patterns the record shows; and the words: one timeline row per event that matters, no step
//! ids or raw bodies, no "rose" for a falling value, no reading that reads as its threshold.

use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const SCRAPE_S: f64 = 5.0;
const CRIT: f64 = 0.05;
/// The queue-depth panel's warn level (the simulator's preset).
const QUEUE_WARN: f64 = 1000.0;
const SPEED: &str = "50";

fn runbooks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export/runbooks")
}

/// Runs `cmd` to its end within `limit` (its exit status is returned, not judged: a play
/// still running when the rehearsal ends makes the game day exit non-zero). Output goes to
/// files: the game day's report is larger than a pipe holds.
fn run(mut cmd: Command, limit: Duration) -> (bool, String, String) {
    let (status, out, err) = crate::support::child::run_to_end(&mut cmd, limit);
    (status.success(), out, err)
}

/// One scrape of the simulator's record.
#[derive(Debug, Clone, Copy)]
struct Scrape {
    t: f64,
    /// The error ratio over the minute before `t`, from the instances' counters (what the
    /// error-ratio panel's PromQL reads), filled in after parsing.
    error_ratio: f64,
    answered: f64,
    errors: f64,
    logical: f64,
    failed: f64,
    duplicates: f64,
    queue_depth: f64,
}

/// A played and drafted rehearsal.
struct Played {
    name: &'static str,
    command: String,
    facts: serde_json::Value,
    md: String,
    status: String,
    scrapes: Vec<Scrape>,
    /// When the simulator's fault began (seconds from the epoch).
    fault: f64,
    epoch: DateTime<Utc>,
    /// The game day's report (its `response` holds the scenario's record of wrong moves).
    report: serde_json::Value,
    _dir: tempfile::TempDir,
}

impl Played {
    fn secs(&self, v: &serde_json::Value) -> f64 {
        let t = DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("no time: {v}")))
            .unwrap()
            .with_timezone(&Utc);
        (t - self.epoch).num_milliseconds() as f64 / 1000.0
    }

    fn at(&self, t: f64) -> Scrape {
        *self
            .scrapes
            .iter()
            .min_by(|a, b| (a.t - t).abs().total_cmp(&(b.t - t).abs()))
            .unwrap()
    }

    /// The latest scrape at or before `t` (what a reading at `t` shows).
    fn at_or_before(&self, t: f64) -> Scrape {
        self.scrapes
            .iter()
            .copied()
            .rfind(|s| s.t <= t + 1e-6)
            .unwrap_or(self.scrapes[0])
    }

    fn rows(&self) -> Vec<String> {
        self.facts["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["event"].as_str().unwrap().to_string())
            .collect()
    }

    fn patterns(&self) -> Vec<String> {
        self.facts["suggestions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["pattern"].as_str().unwrap().to_string())
            .collect()
    }
}

/// Plays `scenario` with `plays` for `run_for`, then exports the draft (Markdown, status page
/// and facts).
fn play(name: &'static str, scenario: &str, plays: &[&str], run_for: &str) -> Played {
    let _shared = crate::HEAVY.blocking_read();
    let dir = tempfile::tempdir().unwrap();
    let (data, config) = (dir.path().join("data"), dir.path().join("warroom.toml"));
    std::fs::write(
        &config,
        format!(
            "timezone = \"Europe/London\"\n[runbooks]\ndir = \"{}\"\n",
            runbooks().display()
        ),
    )
    .unwrap();
    let warroom = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_warroom"));
        c.arg("--data-dir")
            .arg(&data)
            .arg("--config")
            .arg(&config)
            .env("WARROOM_ACTOR", "ana");
        c
    };
    let mut args = vec![
        "gameday",
        scenario,
        "--headless",
        "--speed",
        SPEED,
        "--seed",
        "1",
        "--listen",
        "127.0.0.1:0",
        "--for",
        run_for,
        "--json",
    ];
    for p in plays {
        args.extend(["--play", p]);
    }
    let mut gd = warroom();
    gd.args(&args);
    let (_, out, err) = run(gd, Duration::from_secs(300));
    let report: serde_json::Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("{name}: no report ({e}): {out}\n{err}"));
    let id = report["incident"].as_str().unwrap().to_string();
    let out_dir = dir.path().join("out");
    let out_s = out_dir.to_str().unwrap().to_string();
    for format in ["markdown", "status", "json"] {
        let mut c = warroom();
        c.args(["export", &id, "--format", format, "--out", &out_s]);
        let (ok, o, e) = run(c, Duration::from_secs(60));
        assert!(ok, "{name}: export {format} failed: {o}\n{e}");
    }
    let read = |f: &str| std::fs::read_to_string(out_dir.join(f)).unwrap();
    let scrapes = report["simulator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].as_f64().unwrap_or_else(|| panic!("no {k} in {s}"));
            Scrape {
                t: f("t"),
                error_ratio: 0.0,
                answered: f("answered"),
                errors: f("errors"),
                logical: f("logical"),
                failed: f("logical_failed"),
                duplicates: f("duplicates"),
                queue_depth: f("queue_depth"),
            }
        })
        .collect::<Vec<Scrape>>();
    let mut scrapes = scrapes;
    for i in 0..scrapes.len() {
        let t = scrapes[i].t;
        let m = scrapes
            .iter()
            .copied()
            .rfind(|s| s.t <= t - 60.0 + 1e-6)
            .unwrap_or(scrapes[0]);
        let (e, a) = (
            scrapes[i].errors - m.errors,
            scrapes[i].answered - m.answered,
        );
        scrapes[i].error_ratio = if a > 0.0 { e / a } else { 0.0 };
    }
    let epoch = DateTime::parse_from_rfc3339(report["epoch"].as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc);
    let command = format!(
        "warroom {} && warroom export {id}",
        args.iter()
            .map(|a| if a.contains(' ') {
                format!("\"{a}\"")
            } else {
                a.to_string()
            })
            .collect::<Vec<_>>()
            .join(" ")
            .replace(" --listen 127.0.0.1:0", "")
            .replace(" --json", "")
    );
    Played {
        name,
        command,
        facts: serde_json::from_str(&read("facts.json")).unwrap(),
        md: read("postmortem.md"),
        status: read("status.md"),
        scrapes,
        fault: report["score"]["fault_at_s"]
            .as_f64()
            .expect("the fault's time"),
        epoch,
        report,
        _dir: dir,
    }
}

/// Every instant the draft names (`utc` fields) is within the record: a rehearsal's store
/// still answers after its end, with rates over the last few scrapes.
fn nothing_dated_after_the_record(p: &Played) {
    fn instants(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v.as_str()) {
                        ("utc", Some(t)) => out.push(t.to_string()),
                        _ => instants(v, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| instants(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    instants(&p.facts, &mut all);
    assert!(!all.is_empty(), "{}: the facts name no instant", p.name);
    let end = p.scrapes.last().unwrap().t;
    for t in all {
        let at = p.secs(&serde_json::Value::String(t.clone()));
        assert!(
            at <= end + 1e-6,
            "{}: {t} is {:.0} s after the record's end",
            p.name,
            at - end
        );
    }
}

/// Every chart's time axis ends with the record: no clock label past the last scrape (a
/// rehearsal's store still answers after its end, and a window padded past it once ran every
/// chart 15 minutes beyond what was recorded).
fn charts_end_with_the_record(p: &Played) {
    let end = p.epoch + chrono::Duration::milliseconds((p.scrapes.last().unwrap().t * 1e3) as i64);
    let local = end.with_timezone(&chrono_tz::Europe::London);
    let end_minute = local.format("%H:%M").to_string();
    let clock = regex::Regex::new(r"^\d\d:\d\d$").unwrap();
    let dir = p._dir.path().join("out/charts");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let svg = std::fs::read_to_string(&path).unwrap();
        let labels: Vec<&str> = svg.lines().filter(|l| clock.is_match(l)).collect();
        assert!(
            !labels.is_empty(),
            "{}: no time axis in {}",
            p.name,
            path.display()
        );
        seen += 1;
        for l in labels {
            // Same day and zero-padded: the text order is the time order.
            assert!(
                l <= end_minute.as_str(),
                "{}: {} labels {l}, after the record's end at {end_minute}",
                p.name,
                path.display()
            );
        }
    }
    assert!(seen > 0, "{}: no chart", p.name);
}

/// How the draft writes a figure.
type Rounding = fn(f64) -> String;

/// The peaks the draft states: each one's key in the facts, the draft's rounding, and the name
/// its sentence opens with (the pool's, in the customer impact and the root cause; the others
/// are stated in the facts only).
const PEAKS: [(&str, Rounding, Option<&str>); 3] = [
    (
        "pool_saturation",
        warroom::postmortem::words::percent,
        Some("Database connection-pool saturation"),
    ),
    ("error_ratio", warroom::postmortem::words::percent, None),
    (
        "retry_amplification",
        |v| warroom::postmortem::words::number(v, 1),
        None,
    ),
];

/// How long a level must hold to be the peak's sustained level (issue 32 point 4).
const HOLD_S: f64 = 120.0;

/// One signal as the record holds it over the impact window, figures as the draft rounds them.
#[derive(Debug)]
struct RecordedPeak {
    /// The momentary maximum.
    max: String,
    /// The highest level held for two minutes ([`held_level`]), if any was.
    held: Option<String>,
    /// The window's last reading was past the warning threshold.
    still_bad: bool,
    /// The window's last two minutes were all past the warning threshold and at or beyond the
    /// level held: a signal that rose and stayed.
    held_to_the_end: bool,
    /// It went past its warning threshold (from under it) three times or more while the level
    /// held stayed under it: its least bad reading and how many times.
    swung: Option<(String, usize)>,
}

/// The readings of a panel's snapshot within `[from, to]` (unix seconds): at each instant any
/// series has a point, the worst of the points there, turned so higher is worse.
fn readings(
    snap: &warroom::incident::snapshot::PanelSnapshot,
    from: f64,
    to: f64,
) -> Vec<(f64, f64)> {
    let sign = if snap.bad_below() { -1.0 } else { 1.0 };
    let mut at: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
    for p in snap.series.iter().flat_map(|s| &s.points) {
        if p[0] >= from - 1e-6 && p[0] <= to + 1e-6 {
            let v = at
                .entry((p[0] * 1e3).round() as i64)
                .or_insert(f64::NEG_INFINITY);
            *v = v.max(sign * p[1]);
        }
    }
    at.into_iter().map(|(t, v)| (t as f64 / 1e3, v)).collect()
}

/// The highest level some run of consecutive readings stays at or above from its first reading
/// to one [`HOLD_S`] or more later: every level the record reached is tried, highest first.
fn held_level(readings: &[(f64, f64)]) -> Option<f64> {
    let mut levels: Vec<f64> = readings.iter().map(|r| r.1).collect();
    levels.sort_by(|a, b| b.total_cmp(a));
    levels.dedup();
    levels.into_iter().find(|&level| {
        let mut since: Option<f64> = None;
        readings.iter().any(|&(t, v)| {
            since = if v >= level { since.or(Some(t)) } else { None };
            since.is_some_and(|s| t - s >= HOLD_S - 1e-6)
        })
    })
}

/// The panel titled `title` as the record holds it over the draft's impact window (to the
/// record's end while the impact lasts), its figures written by `text`.
fn recorded_peak(p: &Played, title: &str, text: Rounding) -> RecordedPeak {
    let data = p._dir.path().join("data");
    let store = warroom::incident::Store::new(&data);
    let id = store.find(p.report["incident"].as_str().unwrap()).unwrap();
    let snaps = warroom::incident::snapshot::read_all(&store.snapshots_dir(&id)).unwrap();
    let snap = snaps
        .iter()
        .find(|s| s.title == title)
        .unwrap_or_else(|| panic!("{}: no snapshot of {title}", p.name));
    let unix = |t: f64| p.epoch.timestamp_millis() as f64 / 1e3 + t;
    let impact = &p.facts["impact"];
    let from = unix(p.secs(&impact["start"]["utc"]));
    // The store still answers after the record's end: those are no readings.
    let to = unix(match impact["end"]["utc"].is_string() {
        true => p.secs(&impact["end"]["utc"]),
        false => p.scrapes.last().unwrap().t,
    });
    let r = readings(snap, from, to);
    let Some(&(end, last)) = r.last() else {
        panic!("{}: no reading of {title} in the impact", p.name)
    };
    let sign = if snap.bad_below() { -1.0 } else { 1.0 };
    let warn = snap.warn.or(snap.crit).map_or(f64::INFINITY, |w| sign * w);
    let max = r.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
    let held = held_level(&r);
    let tail = r.iter().filter(|x| x.0 >= end - HOLD_S - 1e-6);
    let held_to_the_end = held.is_some_and(|h| {
        r[0].0 <= end - HOLD_S + 1e-6 && tail.clone().all(|x| x.1 >= warn && x.1 >= h)
    });
    let entries = (r.windows(2))
        .filter(|w| w[0].1 < warn && w[1].1 >= warn)
        .count()
        + usize::from(r[0].1 >= warn);
    let low = r.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
    let swung =
        (held.is_some_and(|h| h < warn) && entries >= 3).then(|| (text(sign * low), entries));
    RecordedPeak {
        max: text(sign * max),
        held: held.map(|h| text(sign * h)),
        still_bad: last >= warn,
        held_to_the_end,
        swung,
    }
}

/// Issue 32 point 4, against the record: each peak the draft states is the highest level the
/// panel's readings held for two minutes within the impact window, with the momentary maximum
/// beside it (to the draft's rounding), both computed here from the snapshot's points; "for
/// a moment" only when no level held that long; "and stayed there" only for a signal still
/// past its warning threshold at the window's end, and always for one that held its level,
/// past that threshold, through the window's last two minutes; "swung between" its least bad
/// reading and its maximum, and how many times it went past its threshold, for one that did
/// three times or more while the level it held stayed short of it.
fn peaks_against_the_record(p: &Played) {
    for (key, text, sentence) in PEAKS {
        let stated = &p.facts["signals"][key];
        if stated.is_null() {
            continue;
        }
        let truth = recorded_peak(p, stated["panel"].as_str().unwrap(), text);
        let name = p.name;
        println!("{name}: {key} in the record {truth:?}; the draft: {stated}");
        assert_eq!(
            stated["text"].as_str(),
            Some(truth.max.as_str()),
            "{name}: {key}"
        );
        let sustained = stated["sustained_text"].as_str();
        assert_eq!(sustained, truth.held.as_deref(), "{name}: {key}");
        let stayed = stated["stayed"].as_bool().unwrap();
        assert!(!stayed || truth.still_bad, "{name}: {key} stayed: {stated}");
        assert!(
            stayed || !truth.held_to_the_end,
            "{name}: {key} stayed: {stated}"
        );
        if let Some(opening) = sentence {
            let said = peak_sentences(&p.md, opening);
            assert!(!said.is_empty(), "{name}: no sentence for {opening}");
            said.iter()
                .for_each(|s| peak_sentence_against(name, s, &truth));
        }
    }
}

/// One sentence of the draft stating a peak, against the record's figures.
fn peak_sentence_against(name: &str, s: &str, truth: &RecordedPeak) {
    let figure = s
        .split(' ')
        .map(|w| w.trim_start_matches('('))
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()));
    let beside = between(s, "momentary maximum ", ",");
    let max = Some(truth.max.as_str());
    if let Some((low, times)) = &truth.swung {
        let said = format!(
            "swung between {low} and {}, past its threshold {times} times",
            truth.max
        );
        assert!(
            s.contains(&said),
            "{name}: not said to swing ({said}): {s:?}"
        );
        return;
    }
    assert!(!s.contains("swung"), "{name}: said to swing: {s:?}");
    if s.contains("for a moment") {
        assert_eq!(truth.held, None, "{name}: a level held, {s:?}");
        assert_eq!(figure, max, "{name}: the maximum: {s:?}");
    } else {
        assert_eq!(
            figure,
            truth.held.as_deref(),
            "{name}: the level held: {s:?}"
        );
        assert!(
            s.contains("two minutes or more") || s.contains("and stayed there"),
            "{name}: a level not said to be held: {s:?}"
        );
        assert_eq!(beside.or(figure), max, "{name}: the maximum: {s:?}");
    }
    let stayed = s.contains("and stayed there");
    assert!(
        !stayed || truth.still_bad,
        "{name}: back under its warning: {s:?}"
    );
    assert!(
        stayed || !truth.held_to_the_end,
        "{name}: it rose and stayed: {s:?}"
    );
}

/// The draft's sentences that open with `opening`, each to the full stop that ends it (one
/// followed by a space, a line's end or the draft's).
fn peak_sentences(md: &str, opening: &str) -> Vec<String> {
    md.match_indices(opening)
        .map(|(i, _)| {
            let rest = &md[i..];
            let end = (rest.match_indices('.'))
                .map(|(j, _)| j)
                .find(|&j| rest[j + 1..].chars().next().is_none_or(char::is_whitespace))
                .unwrap_or(rest.len());
            rest[..end].to_string()
        })
        .collect()
}

/// The impact window from the simulator's record: the first scrape where its error ratio
/// reached 5 %, and the scrape after the last one still above the way back (5 % less 5 %
/// hysteresis); customers still waiting in a backlog past its level then keep it open until
/// the backlog is back under it. Whether it ended (for good, before the record ends) too.
fn truth_window(p: &Played) -> (f64, f64, bool) {
    let start = p
        .scrapes
        .iter()
        .find(|s| s.error_ratio >= CRIT)
        .unwrap_or_else(|| panic!("{}: the simulator never reached 5 %", p.name))
        .t;
    let errors = errors_end(p);
    let queued = p
        .scrapes
        .iter()
        .rfind(|s| s.queue_depth >= QUEUE_WARN * 0.95)
        .map(|s| s.t + SCRAPE_S)
        .filter(|t| *t >= errors);
    let end = queued.unwrap_or(errors);
    (start, end, ended(p, end))
}

/// The scrape after the last one where the simulator's error ratio was still above the way
/// back (5 % less 5 % hysteresis): when the errors ended, backlog or not.
fn errors_end(p: &Played) -> f64 {
    p.scrapes
        .iter()
        .rfind(|s| s.error_ratio >= CRIT * 0.95)
        .unwrap()
        .t
        + SCRAPE_S
}

/// An end the record holds two minutes of good readings after.
fn ended(p: &Played, end: f64) -> bool {
    end - SCRAPE_S + 120.0 < p.scrapes.last().unwrap().t
}

/// The checks every draft passes, against the simulator's record.
fn check(p: &Played) {
    let name = p.name;
    let f = &p.facts;
    nothing_dated_after_the_record(p);
    charts_end_with_the_record(p);
    peaks_against_the_record(p);
    let (start, last_bad, recovered) = truth_window(p);
    let last_bad = last_bad - SCRAPE_S;
    let got_start = p.secs(&f["impact"]["start"]["utc"]);
    assert!(
        (got_start - start).abs() <= 2.0 * SCRAPE_S,
        "{name}: impact start {got_start} vs the simulator's {start}"
    );
    let end = if recovered {
        let got_end = p.secs(&f["impact"]["end"]["utc"]);
        let truth = last_bad + SCRAPE_S;
        assert!(
            (got_end - truth).abs() <= 2.0 * SCRAPE_S,
            "{name}: impact end {got_end} vs the simulator's {truth}"
        );
        got_end
    } else {
        assert!(f["impact"]["end"].is_null(), "{name}: {}", f["impact"]);
        assert!(p.md.contains("until the time of writing"), "{name}");
        p.scrapes.last().unwrap().t
    };

    // User requests in the window, and those that failed, from the simulator's counters.
    let (a, b) = (p.at(got_start), p.at(end));
    let (made, failed) = (b.logical - a.logical, b.failed - a.failed);
    let got_made = f["customer"]["requests"]["value"].as_f64().unwrap();
    let got_failed = f["customer"]["failed"]["value"].as_f64().unwrap();
    println!(
        "{name}: user requests {got_made:.0} (simulator {made:.0}), failed {got_failed:.0} \
         (simulator {failed:.0})"
    );
    assert!(
        (got_made - made).abs() <= made * 0.02,
        "{name}: {got_made} user requests vs the simulator's {made}"
    );
    // Failures are counted when they happen for good, after the retries: a window's edges
    // cut through requests still retrying, worth a few seconds of traffic.
    let edge = (made / (end - got_start).max(1.0)) * 2.0 * SCRAPE_S;
    assert!(
        (got_failed - failed).abs() <= failed * 0.05 + edge,
        "{name}: {got_failed} failed user requests vs the simulator's {failed} (edge {edge})"
    );

    // The peak error ratio at the snapshot's instants inside the window.
    let peak = p
        .scrapes
        .iter()
        .filter(|s| s.t >= got_start && s.t <= end)
        .map(|s| s.error_ratio)
        .fold(0.0, f64::max);
    let got = f["signals"]["error_ratio"]["value"].as_f64().unwrap();
    // The panel's rate window and the simulator's minute may sit one scrape apart: where
    // the ratio jumps between scrapes at its peak (instances crashing), that jump is the
    // tolerance too.
    let inside: Vec<f64> = p
        .scrapes
        .iter()
        .filter(|s| s.t >= got_start - SCRAPE_S && s.t <= end + SCRAPE_S)
        .map(|s| s.error_ratio)
        .collect();
    let at_peak = inside.iter().position(|v| *v == peak).unwrap_or(0);
    let jump = inside[at_peak.saturating_sub(1)..(at_peak + 2).min(inside.len())]
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(0.0, f64::max);
    eprintln!("{name}: peak error ratio {got}, simulator {peak}, jump at the peak {jump}");
    assert!(
        (got - peak).abs() <= 0.03 + jump,
        "{name}: peak error ratio {got} vs the simulator's {peak} (jump at the peak {jump})"
    );

    let responses = f["responses"].as_array().unwrap();
    for r in responses {
        effects_against_the_record(p, r);
    }
    // The recovery a step is credited with is the errors' end, backlog or not.
    if ended(p, errors_end(p)) {
        credit_against_the_record(p, got_start, errors_end(p));
    }
    steps_that_did_nothing(p);
    wrong_moves_named(p);

    // Suggestions only where the record shows their pattern.
    let patterns = p.patterns();
    let dup = b.duplicates - p.at(got_start).duplicates;
    assert_eq!(
        patterns.iter().any(|s| s == "duplicates"),
        dup >= 1.0,
        "{name}: {dup} duplicates, suggestions {patterns:?}"
    );
    let amplification = p
        .scrapes
        .iter()
        .filter(|s| s.t >= got_start + 60.0 && s.t <= end)
        .map(|s| {
            let m = p.at(s.t - 60.0);
            (s.answered - m.answered) / (s.logical - m.logical).max(1.0)
        })
        .fold(0.0, f64::max);
    assert_eq!(
        patterns.iter().any(|s| s == "retry-amplification"),
        amplification > 2.0 + 0.05,
        "{name}: amplification {amplification}, suggestions {patterns:?}"
    );

    // The words: house phrasing, no internal identifiers, one row per event.
    let rows = p.rows();
    for r in &rows {
        for banned in ["past its", "came back", "HTTP 2", "{\"", "batch-1", "step "] {
            assert!(!r.contains(banned), "{name}: {banned:?} in {r:?}");
        }
        if r.starts_with("Instances up") {
            assert!(!r.contains("rose"), "{name}: {r}");
        }
        // A reading never reads as the threshold it is set beside.
        if let (Some(t), Some(v)) = (
            between(r, "threshold of ", " "),
            between(r, "(reading ", ")"),
        ) {
            assert_ne!(t.trim_end_matches(['.', ',']), v, "{name}: {r}");
        }
    }
    let panels = [
        "Pool saturation",
        "Pool wait p99",
        "Query latency p50/p99",
        "Retry amplification",
        "Queue depth",
        "Instances up",
        "Restarts (5m)",
    ];
    for panel in panels {
        let n = rows.iter().filter(|r| r.starts_with(panel)).count();
        // The panel whose return ended the impact (a drained backlog) has that row too.
        let ended = rows
            .iter()
            .any(|r| r.starts_with(panel) && r.ends_with("Impact ended."));
        assert!(
            n <= 1 + usize::from(ended),
            "{name}: {n} rows for {panel}: {rows:#?}"
        );
    }
    let errors = rows.iter().filter(|r| r.starts_with("Error ratio")).count();
    assert!(errors <= 2, "{name}: {errors} error-ratio rows: {rows:#?}");
    for m in f["resolution"].as_array().unwrap() {
        let title = m["title"].as_str().unwrap();
        if m["manual"] == true && m["auto_confirmed"] == true {
            // Folded: no one acted; the resolution says so.
            continue;
        }
        let n = rows.iter().filter(|r| r.starts_with(title)).count();
        assert!(
            (1..=2).contains(&n),
            "{name}: {n} rows for {title}: {rows:#?}"
        );
        assert_ne!(
            title,
            m["step"].as_str().unwrap(),
            "{name}: a step id as a title"
        );
    }
    // "Investigating" is dated when something was wrong, not at the opening minutes before the
    // fault: at the first signal past a level, by the impact's start at the latest.
    let investigating = p.secs(&f["status_page"]["updates"][0]["at"]["utc"]);
    assert_eq!(f["status_page"]["updates"][0]["stage"], "investigating");
    assert!(
        investigating >= p.fault && investigating <= got_start + SCRAPE_S,
        "{name}: investigating at {investigating}, the fault at {}, the impact from {got_start}",
        p.fault
    );
    // The status page speaks to customers: no step title, no service id, no promise.
    let internal = f["resolution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["title"].as_str().unwrap())
        .chain(
            f["services"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap()),
        );
    for word in internal {
        assert!(!p.status.contains(word), "{name}: {word:?} in {}", p.status);
    }
    assert!(!p.status.contains("will be"), "{name}: {}", p.status);
    // No internal title, a headline from the impact.
    assert!(
        !p.status.contains(f["title"].as_str().unwrap()),
        "{name}: {}",
        p.status
    );
    let worst = f["customer"]["worst_minute"]["value"].as_f64().unwrap();
    let headline = p.status.lines().next().unwrap();
    let expected = if worst >= 0.5 {
        "Major Outage"
    } else if worst >= 0.05 {
        "Partial Outage"
    } else {
        "Degraded Performance"
    };
    assert_eq!(headline, expected, "{name}: worst minute {worst}");
    println!(
        "{name}: {} timeline rows; draft: {}\n{}",
        rows.len(),
        p.command,
        rows.join("\n")
    );
}

/// The share of user requests that failed over `[from, to]`, from the simulator's counters
/// as the draft defines it: those made less those served (each served once with a 2xx). The
/// simulator's own failure counter counts a request when its last retry gives up, which over
/// a minute's window is not the same minute's requests.
fn share(p: &Played, from: f64, to: f64) -> Option<f64> {
    let (a, b) = (p.at_or_before(from), p.at_or_before(to));
    let made = b.logical - a.logical;
    let served = (b.answered - b.errors) - (a.answered - a.errors);
    (made > 0.0).then(|| ((made - served) / made).clamp(0.0, 1.0))
}

/// The median of the simulator's per-scrape error ratio over `[from, to]`.
fn median_error_ratio(p: &Played, from: f64, to: f64) -> Option<f64> {
    let v: Vec<f64> = p
        .scrapes
        .iter()
        .filter(|s| s.t >= from - 1e-6 && s.t <= to + 1e-6)
        .map(|s| s.error_ratio)
        .collect();
    warroom::postmortem::window::median(&v)
}

/// A response's effect on the customers, over the windows the draft read, as the simulator
/// saw it: the share of user requests failing from its counters (within 2 points), the error
/// ratio's median from its per-scrape ratio (within 3 points, the panel's rate window and
/// the simulator's minute sitting a scrape apart); a share that rose beyond its noise is said
/// to have made it worse, one that fell never is.
fn effects_against_the_record(p: &Played, r: &serde_json::Value) {
    let name = p.name;
    for e in r["effects"].as_array().unwrap() {
        let w = |k: &str| (p.secs(&e[k][0]), p.secs(&e[k][1]));
        let ((b0, b1), (a0, a1)) = (w("before_window"), w("after_window"));
        assert!(
            b1 - b0 >= 44.0 && a1 - a0 >= 29.0,
            "{name}: windows too short: {e}"
        );
        let (before, after) = (e["before"].as_f64().unwrap(), e["after"].as_f64().unwrap());
        let truth = match e["panel"].as_str().unwrap() {
            "User requests" => share(p, b0, b1).zip(share(p, a0, a1)),
            "Error ratio" => median_error_ratio(p, b0, b1).zip(median_error_ratio(p, a0, a1)),
            _ => continue,
        };
        let Some((sb, sa)) = truth else { continue };
        let tolerance = if e["panel"] == "User requests" {
            0.02
        } else {
            0.03
        };
        println!(
            "{name}: {:?} {} {before:.3} → {after:.3} (simulator {sb:.3} → {sa:.3}, noise {})",
            r["titles"], e["panel"], e["noise"]
        );
        assert!(
            (before - sb).abs() <= tolerance,
            "{name}: before {before} vs {sb}: {r}"
        );
        assert!(
            (after - sa).abs() <= tolerance,
            "{name}: after {after} vs {sa}: {r}"
        );
        let noise = e["noise"].as_f64().unwrap();
        let worse = r["worse"].as_str().unwrap_or_default();
        if e["panel"] == "User requests" {
            if sa - sb > noise + tolerance + 0.01 && (sa - sb) / sa >= 0.1 + tolerance {
                assert!(worse.contains("user requests"), "{name}: got worse: {r}");
            }
            if sb - sa > tolerance {
                assert!(!worse.contains("user requests"), "{name}: got better: {r}");
            }
        }
    }
}

/// The recovery is credited to the last response whose effect window (its start to
/// `effect_end`) holds the moment the simulator's error ratio fell below 5 % for good; to
/// none when no window does, and then the recovery says how long after the last step it came.
/// The simulator knows the fall to a scrape: a window edge within a scrape of it may go
/// either way.
/// When the simulator's error ratio fell below 5 % for good (by `end`), the acting responses
/// whose effect windows hold it, and those whose window edges are within a scrape of it.
fn holding_the_fall(
    p: &Played,
    start: f64,
    end: f64,
) -> (f64, Vec<&serde_json::Value>, Vec<&serde_json::Value>) {
    let responses = p.facts["responses"].as_array().unwrap();
    let fallen = p
        .scrapes
        .iter()
        .rfind(|s| s.error_ratio >= CRIT && s.t <= end)
        .map_or(start, |s| s.t + SCRAPE_S);
    let acting = |r: &&serde_json::Value| r["no_effect"].is_null() && r["stopped"].is_null();
    let span = |r: &serde_json::Value| (p.secs(&r["start"]), p.secs(&r["effect_end"]));
    let inside: Vec<&serde_json::Value> = responses
        .iter()
        .filter(acting)
        .filter(|r| {
            let (s, e) = span(r);
            s < fallen - SCRAPE_S && fallen <= e - SCRAPE_S
        })
        .collect();
    let near: Vec<&serde_json::Value> = responses
        .iter()
        .filter(acting)
        .filter(|r| {
            let (s, e) = span(r);
            (s - fallen).abs() <= SCRAPE_S || (e - fallen).abs() <= SCRAPE_S
        })
        .collect();
    (fallen, inside, near)
}

/// The titles of the step that restored service as the simulator saw it (the last response
/// whose window holds the errors' fall, or one within a scrape of it), `None` when none does.
fn restoring(p: &Played, start: f64) -> Option<Vec<Vec<String>>> {
    let (_, inside, near) = holding_the_fall(p, start, errors_end(p));
    let last = inside.last()?;
    Some(std::iter::once(*last).chain(near).map(titles).collect())
}

fn credit_against_the_record(p: &Played, start: f64, end: f64) {
    let name = p.name;
    let responses = p.facts["responses"].as_array().unwrap();
    let (fallen, inside, near) = holding_the_fall(p, start, end);
    let credited: Vec<&serde_json::Value> =
        responses.iter().filter(|r| r["credited"] == true).collect();
    match inside.last() {
        Some(last) => {
            assert_eq!(
                credited.len(),
                1,
                "{name}: fallen at {fallen}: {credited:?}"
            );
            assert!(
                credited[0] == *last || near.contains(&credited[0]),
                "{name}: fallen at {fallen}, credited {} rather than {}",
                credited[0]["titles"],
                last["titles"]
            );
        }
        None => {
            assert!(
                credited.iter().all(|c| near.contains(c)),
                "{name}: fallen at {fallen}, outside every window, credited {credited:?}"
            );
            if credited.is_empty() && responses.iter().any(|r| p.secs(&r["start"]) < fallen) {
                let text = p.facts["recovery"]["text"].as_str().unwrap();
                assert!(text.contains("no step is credited"), "{name}: {text}");
            }
        }
    }
}

/// A step that acted on nothing has no effect and a response of its own that says so, and
/// why it stopped when the journal says.
fn steps_that_did_nothing(p: &Played) {
    let name = p.name;
    let resolution = p.facts["resolution"].as_array().unwrap();
    for r in p.facts["responses"].as_array().unwrap() {
        let steps: Vec<&serde_json::Value> = r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| &resolution[i.as_u64().unwrap() as usize])
            .collect();
        if steps.iter().all(|m| m["did_nothing"] == true) {
            assert!(r["stopped"].is_string(), "{name}: {r}");
            assert!(r["effects"].as_array().unwrap().is_empty(), "{name}: {r}");
            assert!(
                r["effect_text"].is_null() && r["credited"] == false,
                "{name}: {r}"
            );
        } else {
            assert!(
                steps.iter().all(|m| m["did_nothing"] == false),
                "{name}: a step that did nothing shares a response: {r}"
            );
        }
    }
}

/// Every wrong move the scenario recorded is named on the response it happened in.
fn wrong_moves_named(p: &Played) {
    let name = p.name;
    let responses = p.facts["responses"].as_array().unwrap();
    for w in p.report["response"]["wrong_moves"].as_array().unwrap() {
        let at = p.secs(&w["at"]);
        let why = w["what"].as_str().unwrap().split_once(": ").unwrap().1;
        let r = responses
            .iter()
            .rfind(|r| p.secs(&r["start"]) <= at + 2.0)
            .unwrap_or_else(|| panic!("{name}: no response before the wrong move {w}"));
        assert!(
            r["wrong_move"].as_str().is_some_and(|t| t.contains(why)),
            "{name}: wrong move {w} not named on {r}"
        );
        assert!(p.md.contains("wrong move"), "{name}");
    }
}

/// A draft with what changes from run to run masked: every number, with its decimals and
/// thousands separators (the rehearsal runs in real time at 50×, so a step lands a few
/// simulated seconds either way and a figure moves by a few units, or gains a decimal: "4%"
/// on one run, "4.5%" on the next), the month (the rehearsal is dated today) and which
/// signals a step's "Effect:" lists (a signal near its noise floor is in it on one run and not
/// the next; the list may hold decimals, "rising by 1.5 a minute").
fn masked(md: &str) -> String {
    let effects = regex::Regex::new(r"Effect: (?:[^.]|\.\d)*? within").unwrap();
    let md = effects.replace_all(md, "Effect: … within");
    let numbers = regex::Regex::new(r"\d+(?:[.,]\d+)*").unwrap();
    let md = numbers.replace_all(&md, "#");
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    MONTHS
        .iter()
        .fold(md.into_owned(), |t, m| t.replace(m, "Month"))
}

/// The scenario's draft with the seed's response, as checked in under
/// `tests/fixtures/export/drafts/SCENARIO/` (the README links them): the same draft, line for
/// line, but for the figures and the date, which move from run to run. With
/// `UPDATE_DRAFTS=1` the checked-in draft and its charts are replaced by this run's.
fn golden(p: &Played, scenario: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/export/drafts")
        .join(scenario);
    let file = dir.join("postmortem.md");
    if std::env::var_os("UPDATE_DRAFTS").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("charts")).unwrap();
        std::fs::write(&file, &p.md).unwrap();
        let charts = p._dir.path().join("out/charts");
        for e in std::fs::read_dir(&charts).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.join("charts").join(e.file_name())).unwrap();
        }
        println!("{}: wrote {}", p.name, file.display());
        return;
    }
    let kept = std::fs::read_to_string(&file).unwrap_or_default();
    let (want, got) = (masked(&kept), masked(&p.md));
    readme_excerpt(scenario, &want);
    if want != got {
        let diff: Vec<String> = want
            .lines()
            .zip(got.lines())
            .filter(|(a, b)| a != b)
            .take(20)
            .map(|(a, b)| format!("- {a}\n+ {b}"))
            .collect();
        panic!(
            "{}: the draft is not the one in {} ({} lines there, {} now; digits and months \
             masked); the lines that differ:\n{}\nIf the change is meant, update the drafts \
             (the README shows one) with\n  UPDATE_DRAFTS=1 cargo test --test export \
             with_the_seeds_response\nand review `git diff tests/fixtures/export/drafts`.",
            p.name,
            file.display(),
            want.lines().count(),
            got.lines().count(),
            diff.join("\n")
        );
    }
}

/// The README links the three drafts and shows an excerpt of one in its ```markdown block (of
/// the draft linked last before it): the excerpt's lines are that draft's, masked as
/// [`golden`] compares them, and there are at most 12.
fn readme_excerpt(scenario: &str, masked_draft: &str) {
    const DRAFTS: &str = "tests/fixtures/export/drafts/";
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let link = format!("{DRAFTS}{scenario}/postmortem.md");
    assert!(readme.contains(&link), "the README does not link {link}");
    let Some(at) = readme.find("```markdown\n") else {
        panic!("the README shows no excerpt of a draft (a ```markdown block)");
    };
    let before = &readme[..at];
    let shown = before[before.rfind(DRAFTS).unwrap() + DRAFTS.len()..]
        .split('/')
        .next()
        .unwrap();
    if shown != scenario {
        return;
    }
    let block = readme[at + "```markdown\n".len()..]
        .split("```")
        .next()
        .unwrap();
    assert!(
        block.lines().count() <= 12,
        "the README's excerpt is over 12 lines"
    );
    let lines: Vec<&str> = masked_draft.lines().collect();
    for l in masked(block).lines() {
        assert!(
            lines.contains(&l),
            "the README's excerpt of {link} has a line the draft does not: {l}"
        );
    }
}

/// The numbers a text holds ("1,922,020", "2.6", "07" and "00" of "07:00").
fn numbers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .map(|t| t.trim_matches(|c| c == ',' || c == '.'))
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

/// Every string the facts hold, but the prose's own sentences.
fn fact_strings(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    const PROSE: &str = "sections";
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                if path == "prose" && k == PROSE {
                    continue;
                }
                fact_strings(v, k, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| fact_strings(v, path, out)),
        _ => {}
    }
}

/// The prose's sentences, all sections.
fn prose_sentences(p: &Played) -> Vec<String> {
    p.facts["prose"]["sections"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|v| v.as_array().unwrap().clone())
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// The Summary opens with sentences built from the record: the service the scenario runs,
/// the impact's duration as the simulator's error ratio (and backlog) give it, and the step
/// whose effect window holds the errors' end as the simulator saw it (or that none does, or
/// that customers were still affected); every number any prose sentence holds is one the
/// facts hold, none typed in the template; each sentence is in the draft.
fn prose_against_the_record(p: &Played, scenario: &str) {
    let name = p.name;
    let summary = p.facts["prose"]["sections"]["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("runbooks/gameday/{scenario}.toml"));
    let toml: toml::Table = toml::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let service = toml["service"].as_str().unwrap();
    assert!(
        summary.contains(service),
        "{name}: {service} not in {summary}"
    );
    let (start, end, recovered) = truth_window(p);
    if recovered {
        let minute = |t: f64| (t / 60.0).floor();
        let truth = minute(end) - minute(start);
        let said: Vec<String> = (-1..=1)
            .map(|d| {
                let m = (truth + f64::from(d)) as i64;
                warroom::postmortem::words::duration(m * 60)
            })
            .collect();
        assert!(
            said.iter()
                .any(|d| summary.contains(&format!(" for {d}, from"))),
            "{name}: {truth} minutes (±1: {said:?}) not in {summary}"
        );
        match restoring(p, start) {
            Some(candidates) => {
                let joined: Vec<String> = candidates
                    .iter()
                    .map(|t| warroom::postmortem::words::and_list(t))
                    .collect();
                assert!(
                    (summary.contains("Service was restored at")
                        || summary.contains("The errors stopped at"))
                        && joined.iter().any(|j| summary.contains(j.as_str())),
                    "{name}: restored by {joined:?}? {summary}"
                );
            }
            None => assert!(
                summary.contains("no step is credited") || !summary.contains("was restored"),
                "{name}: {summary}"
            ),
        }
    } else {
        assert!(
            summary.contains("still") || summary.contains("not ended"),
            "{name}: {summary}"
        );
    }
    let mut strings = Vec::new();
    fact_strings(&p.facts, "", &mut strings);
    let known: std::collections::BTreeSet<String> =
        strings.iter().flat_map(|s| numbers(s)).collect();
    for sentence in prose_sentences(p) {
        for n in numbers(&sentence) {
            assert!(
                known.contains(&n),
                "{name}: {n} in {sentence:?} is in no fact"
            );
        }
        let first = sentence.split(' ').take(4).collect::<Vec<_>>().join(" ");
        assert!(
            p.md.contains(&first),
            "{name}: {sentence:?} not in the draft"
        );
    }
}

fn between<'a>(text: &'a str, from: &str, to: &str) -> Option<&'a str> {
    let rest = &text[text.find(from)? + from.len()..];
    Some(&rest[..rest.find(to).unwrap_or(rest.len())])
}

fn response_titles(p: &Played) -> Vec<Vec<String>> {
    p.facts["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(titles)
        .collect()
}

/// A response's step titles.
fn titles(r: &serde_json::Value) -> Vec<String> {
    r["titles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn planner_peak_with_its_fixing_play() {
    let p = play(
        "planner-peak, fixed",
        "planner-peak",
        &["pool-exhaustion@+3m"],
        "20m",
    );
    check(&p);
    assert_eq!(
        response_titles(&p),
        [
            vec!["Roll back the deploy", "Disable retries in every layer"],
            vec!["Restart planner-api in batches of 25 %"]
        ]
    );
    // The batch restart's own restarts are the step's, not the incident's signals.
    let batch = &p.facts["resolution"][2];
    let planned = batch["planned"].as_array().unwrap();
    assert!(
        planned
            .iter()
            .any(|t| t.as_str().unwrap().starts_with("instances up fell to")),
        "{batch}"
    );
    assert!(!p.rows().iter().any(|r| r.starts_with("Instances up")));
    let patterns = p.patterns();
    assert!(
        patterns.contains(&"unalerted-first-signal".to_string()),
        "{patterns:?}"
    );
    assert!(
        !patterns.contains(&"restart-loop".to_string()),
        "{patterns:?}"
    );
    assert!(
        !patterns.contains(&"scale-out-worse-latency".to_string()),
        "{patterns:?}"
    );
}

#[test]
fn planner_peak_scaled_out_then_rolled_back_late() {
    let p = play(
        "planner-peak, wrong",
        "planner-peak",
        &["scale-out@+12m", "rollback-deploy@+20m"],
        "32m",
    );
    check(&p);
    let response = |title: &str| {
        p.facts["responses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["titles"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t.as_str().unwrap().starts_with(title))
            })
            .unwrap_or_else(|| panic!("no response {title}: {}", p.facts["responses"]))
            .clone()
    };
    // More instances while the slow query is deployed: more connections to the bottleneck,
    // and query latency gets worse.
    let scale = response("Scale the API tier out");
    assert!(
        scale["effects"].as_array().unwrap().iter().any(
            |e| e["name"] == "median query latency" && e["improvement"].as_f64().unwrap() < 0.0
        ),
        "{scale}"
    );
    assert!(
        p.patterns()
            .contains(&"scale-out-worse-latency".to_string()),
        "{:?}",
        p.patterns()
    );
    // Rolling back at the peak succeeds and changes nothing the customers see (user requests
    // failing, not attempts): the stale
    // connections keep the pools full (the seed needed batch restarts after it).
    let rollback = response("Roll planner-api back");
    assert!(
        rollback["no_effect"]
            .as_str()
            .is_some_and(|t| t.contains("user requests failing")),
        "{rollback}"
    );
    assert!(
        p.md.contains("no visible effect"),
        "the draft says the step did nothing"
    );
}

#[test]
fn bird_count_with_its_fixing_play() {
    let p = play(
        "bird-count, fixed",
        "bird-count",
        // As the seed did: retries off, a bigger pool, then the backlog released at a pace.
        &[
            "disable-retries@+20m",
            "raise-pool@+21m",
            "queue-drain@+24m",
        ],
        "45m",
    );
    check(&p);
    // The manual capacity check was confirmed by the play, not by a person, and says so.
    let manual = p.facts["resolution"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["manual"] == true)
        .unwrap();
    assert_eq!(manual["auto_confirmed"], true, "{manual}");
    assert!(p.md.contains("was confirmed automatically; no one checked it"));
    // The backlog's peak and drain, from its panel.
    let backlog = &p.facts["customer"]["backlog"];
    assert!(backlog["drained"].is_object(), "{backlog}");
    assert!(p.patterns().contains(&"duplicates".to_string()));
}

#[test]
fn bird_count_with_a_batch_restart_cut_short() {
    let p = play(
        "bird-count, wrong",
        "bird-count",
        &["batch-restart@+20m"],
        "26m",
    );
    check(&p);
    // An unfinished batch that acted is in the resolution, with what it did.
    let batch = batch_step(&p);
    assert_eq!(batch["ok"], false, "{batch}");
    assert!(
        batch["progress"]
            .as_str()
            .is_some_and(|t| t.starts_with("after acting on")),
        "{batch}"
    );
}

#[test]
fn crash_loop_with_its_fixing_play() {
    let p = play(
        "crash-loop, fixed",
        "crash-loop",
        &["scale-and-memory@+15m"],
        "30m",
    );
    check(&p);
    assert!(p.patterns().contains(&"restart-loop".to_string()));
    // Memory is charted for a restart loop.
    let charts: Vec<&str> = p.facts["charts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["slug"].as_str().unwrap())
        .collect();
    assert!(charts.contains(&"memory-per-instance"), "{charts:?}");
}

#[test]
fn crash_loop_with_a_batch_restart_during_the_loop() {
    let p = play(
        "crash-loop, wrong",
        "crash-loop",
        &["batch-restart@+10m"],
        "20m",
    );
    check(&p);
    // The loop's own restarts came first: they are the incident's, not the batch's.
    assert!(p.rows().iter().any(|r| r.starts_with("Restarts (5m)")));
    assert!(p.patterns().contains(&"restart-loop".to_string()));
}

/// The draft's batch step.
fn batch_step(p: &Played) -> serde_json::Value {
    p.facts["resolution"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["kind"] == "batch")
        .unwrap_or_else(|| panic!("{}: no batch step", p.name))
        .clone()
}

/// The response whose titles include one starting with `title`.
fn response_titled(p: &Played, title: &str) -> serde_json::Value {
    p.facts["responses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["titles"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t.as_str().unwrap().starts_with(title))
        })
        .unwrap_or_else(|| panic!("{}: no response {title}: {}", p.name, p.facts["responses"]))
        .clone()
}

/// The seed's own response (`--play seed`): rollback, retries off, then batch restarts. The
/// first two leave the failing share of user requests where it was; the restarts bring it back
/// and are credited; pool saturation led the impact.
#[test]
fn planner_peak_with_the_seeds_response() {
    let p = play("planner-peak, seed", "planner-peak", &["seed"], "110m");
    check(&p);
    prose_against_the_record(&p, "planner-peak");
    golden(&p, "planner-peak");
    for title in ["Roll planner-api back", "Disable retries"] {
        let r = response_titled(&p, title);
        assert!(
            r["no_effect"]
                .as_str()
                .is_some_and(|t| t.contains("user requests failing")),
            "{r}"
        );
        assert_eq!(r["credited"], false, "{r}");
    }
    let restart = response_titled(&p, "Restart planner-api");
    assert_eq!(restart["credited"], true, "{restart}");
    assert_eq!(
        p.facts["detection"]["first_crossing_panel"],
        "Pool saturation"
    );
    assert!(p.md.contains("The leading signal was pool saturation"));
}

/// A wrong response: the rollback alone, at the start. It fixes the query and nothing the
/// customers see; nothing is credited, the impact has not ended.
#[test]
fn planner_peak_with_the_rollback_alone() {
    let p = play(
        "planner-peak, rollback alone",
        "planner-peak",
        &["rollback-deploy@+3m"],
        "30m",
    );
    check(&p);
    let r = response_titled(&p, "Roll planner-api back");
    assert!(r["no_effect"].is_string() && r["credited"] == false, "{r}");
    assert!(
        r["effect_text"]
            .as_str()
            .is_none_or(|t| !t.contains("user requests")),
        "{r}"
    );
}

/// The seed's response: retries off (the ratio of attempts falls, the share of user requests
/// failing does not: no visible effect on it), the pool raised (credited), the backlog
/// drained at a pace (judged by its rate: it falls after, where it rose or held before).
#[test]
fn bird_count_with_the_seeds_response() {
    // Long enough for the backlog to drain after the errors end.
    let p = play("bird-count, seed", "bird-count", &["seed"], "170m");
    check(&p);
    prose_against_the_record(&p, "bird-count");
    golden(&p, "bird-count");
    backlog_against_the_record(&p);
    let retries = response_titled(&p, "Disable retries");
    assert!(
        retries["no_effect"]
            .as_str()
            .is_some_and(|t| t.contains("user requests failing")),
        "{retries}"
    );
    assert!(
        !retries["effects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["panel"] == "Error ratio"),
        "attempts' error ratio where user requests were counted: {retries}"
    );
    assert_eq!(response_titled(&p, "Set the pool size")["credited"], true);
    let drain = response_titled(&p, "Drain the backlog");
    let queue = drain["effects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["panel"] == "Queue depth")
        .unwrap_or_else(|| panic!("no backlog effect: {drain}"))
        .clone();
    assert_eq!(queue["measure"], "rate per minute", "{queue}");
    assert!(
        queue["after"].as_f64().unwrap() < 0.0 && queue["visible"] == true,
        "the drain is a visible fall: {queue}"
    );
    assert!(drain["no_effect"].is_null(), "{drain}");
}

/// The backlog's drain is a fact of its own: the impact lasts until the queue is back under
/// its level (when the simulator's queue depth was), the errors' recovery comes before it and
/// is still credited to the step that ended them, and the drain's rate is the queue's fall
/// from its peak over the time it took, as the simulator counted it.
fn backlog_against_the_record(p: &Played) {
    let name = p.name;
    let f = &p.facts;
    let b = &f["customer"]["backlog"];
    let drained = p.secs(&b["drained"]["utc"]);
    let end = p.secs(&f["impact"]["end"]["utc"]);
    // One moment, said twice: the record's crossing back under the level ends both.
    assert!(
        (drained - end).abs() < 1.0,
        "{name}: drained {drained}, impact end {end}"
    );
    let recovered = p.secs(&f["recovery"]["at"]["utc"]);
    assert!(
        recovered + 600.0 < end,
        "{name}: the errors' end {recovered}, impact {end}"
    );
    assert!(
        (recovered - errors_end(p)).abs() <= 2.0 * SCRAPE_S,
        "{name}: {recovered}"
    );
    // The fall from when it began: the last scrape within 1 % of the peak before it drained
    // (a backlog held near its peak before the drain began would otherwise time the drain from
    // whichever reading of the plateau was highest).
    let peak = p.scrapes.iter().map(|s| s.queue_depth).fold(0.0, f64::max);
    let plateau = peak * (1.0 - warroom::postmortem::customer::PLATEAU);
    let began = p
        .scrapes
        .iter()
        .rfind(|s| s.t <= drained && s.queue_depth >= plateau)
        .unwrap();
    let after = p.at(drained).queue_depth;
    let truth = (began.queue_depth - after) / ((drained - began.t) / 60.0);
    let rate = b["rate"]["value"].as_f64().unwrap();
    println!("{name}: drained at {rate:.0} a minute (simulator {truth:.0})");
    assert!(
        (rate - truth).abs() <= truth * 0.05,
        "{name}: rate {rate} vs {truth}"
    );
    let summary = f["prose"]["sections"]["summary"][0].as_str().unwrap();
    assert!(
        summary.contains(&format!(
            "drained by {}",
            b["drained"]["clock"].as_str().unwrap()
        )),
        "{name}: {summary}"
    );
}

/// A wrong response: retries off alone. The recovery comes much later, as traffic falls, and
/// is credited to no step.
#[test]
fn bird_count_with_retries_off_alone() {
    let p = play(
        "bird-count, retries off alone",
        "bird-count",
        &["disable-retries@+20m"],
        "150m",
    );
    check(&p);
    let r = response_titled(&p, "Disable retries");
    assert_eq!(r["credited"], false, "{r}");
    let text = p.facts["recovery"]["text"].as_str().unwrap();
    assert!(
        text.contains("after Disable retries") && text.contains("no step is credited"),
        "{text}"
    );
    assert!(!p.md.contains("The recovery followed this step"));
}

/// The seed's response: twice the instances and twice the memory, credited.
#[test]
fn crash_loop_with_the_seeds_response() {
    let p = play("crash-loop, seed", "crash-loop", &["seed"], "40m");
    check(&p);
    prose_against_the_record(&p, "crash-loop");
    golden(&p, "crash-loop");
    let r = &p.facts["responses"][0];
    assert_eq!(r["credited"], true, "{r}");
    assert!(r["wrong_move"].is_null(), "{r}");
}

/// A wrong response: six plain restarts, each recorded by the scenario as a wrong move; each
/// step is named, and the wrong moves are.
#[test]
fn crash_loop_with_six_plain_restarts() {
    let p = play(
        "crash-loop, six plain restarts",
        "crash-loop",
        &["plain-restarts@+10m"],
        "20m",
    );
    check(&p);
    let r = response_titled(&p, "Restart api-0");
    assert_eq!(r["titles"].as_array().unwrap().len(), 6, "{r}");
    assert!(
        r["wrong_move"]
            .as_str()
            .is_some_and(|t| t.contains("6 wrong moves")),
        "{r}"
    );
    assert_eq!(r["credited"], false, "{r}");
}

/// A wrong response: a batch restart whose unavailability budget refuses every batch. It
/// acted on nothing: no effect, the reason it stopped, no credit.
#[test]
fn crash_loop_with_a_batch_restart_refused_by_its_budget() {
    let p = play(
        "crash-loop, batch refused by its budget",
        "crash-loop",
        &["budget-restart@+10m"],
        "20m",
    );
    check(&p);
    let batch = batch_step(&p);
    assert_eq!(batch["did_nothing"], true, "{batch}");
    assert!(
        batch["stopped"]
            .as_str()
            .is_some_and(|t| t.contains("unavailability budget exhausted")),
        "{batch}"
    );
    let r = response_titled(&p, "Restart calls-api one instance");
    assert!(r["effects"].as_array().unwrap().is_empty(), "{r}");
    let line =
        p.md.lines()
            .find(|l| l.contains("budget-restart: Restart calls-api one instance"))
            .unwrap();
    assert!(!line.contains("Effect:"), "{line}");
    assert!(line.contains("acted on nothing"), "{line}");
}
