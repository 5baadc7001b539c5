//! The end-to-end journey's driver: a console in tmux that a test drives only with keys and
//! reads only from the screen, every wait bounded by time and by count, every failure showing
//! the last screen; plus the journal and the simulator's record read from outside.
//!
//! Include next to `support/prometheus.rs` and `support/tmux.rs`.

#![allow(dead_code)]

use super::tmux::Tmux;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use warroom::incident::event::{Severity, Status, StepState, Tag};
use warroom::incident::{Event, Record};

/// Longest any one wait of the journey may take (each wait also has its own, shorter limit).
pub const MAX_WAIT: Duration = Duration::from_secs(90);
/// Screens read per wait at most (one every 100 ms).
const MAX_READS: usize = 2000;

/// `warroom` with the journey's data dir, config and log file.
pub fn warroom(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warroom"));
    cmd.arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--config")
        .arg(dir.join("warroom.toml"))
        .arg("--log-file")
        .arg(dir.join("cli.log"))
        .env("NO_COLOR", "1");
    cmd
}

/// The console command line run in tmux (`sub` is e.g. `open --title T` or `demo --speed 30`).
pub fn console_command(dir: &Path, sub: &str) -> String {
    format!(
        "{} --config {} --log-file {} --data-dir {} {sub}",
        env!("CARGO_BIN_EXE_warroom"),
        dir.join("warroom.toml").display(),
        dir.join("console.log").display(),
        dir.join("data").display(),
    )
}

/// A console in a terminal, driven like a person would.
pub struct Journey {
    pub term: Tmux,
    pub dir: std::path::PathBuf,
    started: Instant,
}

impl Journey {
    pub fn new(term: Tmux, dir: &Path) -> Journey {
        Journey {
            term,
            dir: dir.to_path_buf(),
            started: Instant::now(),
        }
    }

    /// Wait until `pred` holds on the screen: at most `within` (capped by [`MAX_WAIT`]) and
    /// [`MAX_READS`] screens; otherwise fail naming `what` and showing the last screen and the
    /// console's log tail.
    pub fn wait(&self, what: &str, within: Duration, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within.min(MAX_WAIT);
        let mut last = String::new();
        for _ in 0..MAX_READS {
            last = self.term.screen();
            if pred(&last) {
                eprintln!("[{:>6.1?}] {what}", self.started.elapsed());
                return last;
            }
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "journey: waited {within:?} for {what}, in vain.\nThe last screen:\n{last}\nThe console's log (tail):\n{}",
            self.log_tail()
        );
    }

    /// Wait until the screen contains `text`.
    pub fn expect(&self, text: &str, within: Duration) -> String {
        self.wait(&format!("{text:?} on the screen"), within, |s| {
            s.contains(text)
        })
    }

    /// The last lines of the console's log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("console.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(25)..].join("\n")
    }

    pub fn keys(&self, keys: &[&str]) {
        self.term.send(keys);
    }

    pub fn text(&self, text: &str) {
        self.term.type_text(text);
    }

    /// Answer the run's typed confirmations (the word the dialog asks for) until the run pane
    /// says it ended; returns the last screen. Fails if the run fails, is aborted, or asks
    /// more than `max_questions` times.
    pub fn run_to_the_end(&self, runbook: &str, within: Duration, max_questions: usize) -> String {
        let deadline = Instant::now() + within.min(MAX_WAIT * 2);
        let mut answered = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let screen = self.wait(
                &format!("a confirmation or the end of the run of {runbook}"),
                left,
                |s| {
                    s.contains("✓ succeeded")
                        || s.contains("✖ failed")
                        || s.contains("■ aborted")
                        || (s.contains("Confirm step") && asked_word(s).is_some())
                        || s.contains("needs a decision")
                },
            );
            if screen.contains("✓ succeeded") {
                eprintln!("confirmed: {answered:?}");
                return screen;
            }
            assert!(
                !screen.contains("✖ failed")
                    && !screen.contains("■ aborted")
                    && !screen.contains("needs a decision"),
                "journey: the run of {runbook} did not succeed (confirmed {answered:?}):\n{screen}\nlog:\n{}",
                self.log_tail()
            );
            let word = asked_word(&screen).expect("a confirmation word");
            assert!(
                answered.len() < max_questions,
                "journey: more than {max_questions} confirmations ({answered:?}); the screen:\n{screen}"
            );
            self.term.answer(&word);
            self.keys(&["Enter"]);
            answered.push(word.clone());
            // The dialog closes before the next question can open.
            self.wait(
                &format!("the confirmation of {word:?} to close"),
                Duration::from_secs(10),
                |s| asked_word(s).as_deref() != Some(word.as_str()) || !s.contains("> "),
            );
        }
    }
}

/// How many `j` presses from the top of the runbook pane select the shipped runbook `name`
/// (the pane lists the catalog sorted by name, those that can act here first: `rehearsal`
/// says whether the console is on the simulator).
pub fn position_in_list(name: &str, rehearsal: bool) -> usize {
    let mut entries = warroom::runbook::catalog::load(&[]);
    warroom::runbook::catalog::Entry::here_first(&mut entries, rehearsal);
    entries
        .iter()
        .position(|e| e.name() == name)
        .unwrap_or_else(|| panic!("{name} is not shipped"))
}

/// The first line inside the panel titled `title` (its value and level, e.g. `100.0% ▲ CRIT`):
/// the text under the title's column on the line below it, up to the panel's right border;
/// or, for a panel in the compact rows, its value and level after its title.
pub fn panel_headline(screen: &str, title: &str) -> Option<String> {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let needle: Vec<char> = format!("┌ {title} ").chars().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(col) = line
            .windows(needle.len())
            .position(|w| w == needle.as_slice())
        else {
            continue;
        };
        let below = lines.get(i + 1)?;
        let rest: String = below
            .iter()
            .skip(col + 1)
            .take_while(|c| **c != '│')
            .collect();
        return Some(rest.trim().to_string());
    }
    // The compact form (more panels than charts fit): " TITLE   VALUE LEVEL   ▁▂… STATE".
    let row = format!(" {title} ");
    let line = screen.lines().find(|l| l.starts_with(&row))?;
    let rest = line[row.len()..].trim_start();
    Some(
        rest.split("  ")
            .next()
            .unwrap_or_default()
            .trim()
            .to_string(),
    )
}

/// The word a typed-confirmation dialog asks for: `Type "WORD" to go ahead`.
pub fn asked_word(screen: &str) -> Option<String> {
    let rest = screen.split("Type \"").nth(1)?;
    let (word, tail) = rest.split_once('"')?;
    tail.trim_start()
        .starts_with("to go ahead")
        .then(|| word.to_string())
}

/// The incident's records, through `warroom incident timeline ID --json`.
pub fn timeline(dir: &Path, id: &str) -> Vec<Record> {
    let out = warroom(dir)
        .args(["incident", "timeline", id, "--json"])
        .output()
        .expect("run warroom incident timeline");
    assert!(
        out.status.success(),
        "warroom incident timeline {id}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| Record::decode(format!("{l}\n").as_bytes()).expect("a checksummed record a line"))
        .collect()
}

/// The only incident in the journey's data dir.
/// `warroom export ID --format json` into `dir/facts`, read back: the facts the draft is written
/// from.
pub fn facts(dir: &Path, id: &str) -> serde_json::Value {
    let out = warroom(dir)
        .args(["export", id, "--format", "json", "--out"])
        .arg(dir.join("facts"))
        .output()
        .expect("run warroom export");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("facts/facts.json")).expect("facts.json");
    serde_json::from_str(&text).expect("facts.json is JSON")
}

pub fn only_incident(dir: &Path) -> String {
    let out = warroom(dir)
        .args(["incident", "list"])
        .output()
        .expect("run warroom incident list");
    let list = String::from_utf8_lossy(&out.stdout).into_owned();
    let ids: Vec<String> = list
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    assert_eq!(ids.len(), 1, "one incident expected: {list}");
    ids[0].clone()
}

/// What the journal must hold after a journey, each a description and a test; all are checked
/// and every missing one is named.
pub fn check_journal(records: &[Record], runbook_steps: &[&str], alert: Option<&str>) {
    let has = |f: &dyn Fn(&Event) -> bool| records.iter().any(|r| f(&r.kind));
    let mut missing = Vec::new();
    let mut need = |what: String, ok: bool| {
        if !ok {
            missing.push(what);
        }
    };
    need(
        "a critical crossing of Pool saturation".into(),
        has(&|e| matches!(e, Event::ThresholdCrossed { panel, .. } if panel == "Pool saturation")),
    );
    if let Some(name) = alert {
        need(
            format!("alert {name} firing"),
            has(&|e| matches!(e, Event::AlertFiring { name: n, .. } if n == name)),
        );
    }
    need(
        "the severity SEV-2".into(),
        has(&|e| {
            matches!(
                e,
                Event::SeverityChanged {
                    severity: Severity::Sev2
                }
            )
        }),
    );
    need(
        "the note with its #root-cause tag".into(),
        has(
            &|e| matches!(e, Event::Note { tags, text } if tags.contains(&Tag::RootCause) && text.contains("bypasses its index")),
        ),
    );
    need(
        "the action item".into(),
        has(
            &|e| matches!(e, Event::ActionItem { action, owner, .. } if action.contains("index check") && owner.as_deref() == Some("planner-team")),
        ),
    );
    for step in runbook_steps {
        need(
            format!("runbook step {step} succeeded"),
            has(
                &|e| matches!(e, Event::RunbookStep { step: s, state: StepState::Succeeded, .. } if s == step),
            ),
        );
    }
    need(
        "the status resolved".into(),
        has(&|e| {
            matches!(
                e,
                Event::StatusChanged {
                    status: Status::Resolved
                }
            )
        }),
    );
    assert!(
        missing.is_empty(),
        "journey: the journal lacks {missing:?}; it holds:\n{}",
        records
            .iter()
            .map(|r| format!("{:?}", r.kind))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The house format's sections, each a `## ` heading of the draft.
pub const HOUSE_SECTIONS: [&str; 11] = [
    "## Summary",
    "## Customer Impact",
    "## Timeline",
    "## Root Cause",
    "## Contributing Factors",
    "## Detection",
    "## Resolution and Recovery",
    "## What Went Well",
    "## What Went Poorly",
    "## Corrective and Preventive Actions",
    "## Lessons Learned",
];

/// Check the draft has every house section, the note and the action item.
pub fn check_draft(md: &str) {
    let missing: Vec<&str> = HOUSE_SECTIONS
        .iter()
        .copied()
        .filter(|s| !md.contains(s))
        .collect();
    assert!(missing.is_empty(), "draft lacks {missing:?}:\n{md}");
    assert!(
        md.contains("index check"),
        "the action item is in the draft:\n{md}"
    );
    // The runbook's actions, by their titles (the house's words, not step ids).
    for action in ["Roll back the deploy", "Disable retries in every layer"] {
        assert!(md.contains(action), "{action} is in the draft:\n{md}");
    }
}
