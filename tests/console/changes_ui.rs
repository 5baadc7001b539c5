//! The Changes pane: snapshots beside the timeline and alone, at two sizes with a fixed clock,
//! with a change whose title carries terminal escapes (they reach the screen inert, as text),
//! and its empty states (nothing configured, nothing yet).

use crate::support::records;
use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use warroom::app::model::IncidentHeader;
use warroom::app::{Model, Msg, update};
use warroom::config::Config;
use warroom::incident::{Event, Record, Source};
use warroom::theme::Theme;

fn t0() -> DateTime<Utc> {
    "2026-11-29T10:30:00Z".parse().unwrap()
}

fn config(github: bool) -> Config {
    let text = if github {
        "timezone = \"Europe/Berlin\"\n[github]\nwatch = [\"acme/api\", \"acme/infra\"]\npostmortems = \"acme/pm\"\n"
    } else {
        "timezone = \"Europe/Berlin\"\n"
    };
    Config::parse("warroom.toml", text)
        .unwrap()
        .with_panels(warroom::metrics::presets::sim_panels())
}

fn change(
    seq: u64,
    actor: &str,
    reference: &str,
    title: &str,
    url: Option<&str>,
    at: &str,
) -> Record {
    let kind = Event::Change {
        repo: "acme/api".into(),
        reference: reference.into(),
        title: title.into(),
        url: url.map(String::from),
        at: Some(at.parse().unwrap()),
    };
    records::record(seq, t0(), Source::Github, actor, kind.sanitized())
}

fn model(github: bool, width: u16, height: u16) -> Model {
    let mut m = Model::new(
        &config(github),
        Theme::fallback(),
        "prometheus".into(),
        t0(),
    );
    m.width = width;
    m.height = height;
    m.incident = Some(IncidentHeader {
        id: "2026-11-29-1".into(),
        title: "Journey planner outage".into(),
    });
    m
}

fn with_changes(mut m: Model) -> Model {
    m.timeline = vec![
        records::record(
            1,
            "2026-11-29T10:00:00Z".parse().unwrap(),
            Source::Operator,
            "ana",
            Event::IncidentOpened {
                title: "Journey planner outage".into(),
                severity: warroom::incident::event::Severity::Sev1,
            },
        ),
        change(
            2,
            "bob",
            "#42",
            "merged: Skip the index for stale plans \u{1b}[2J\u{1b}]0;pwned\u{7}",
            Some("https://github.example/acme/api/pull/42"),
            "2026-11-29T09:30:00Z",
        ),
        change(
            3,
            "ci-bot",
            "deploy production main@abcdef1",
            "planner v2.3.1 (success)",
            Some("https://ci.example/deploy/11/a/very/long/path/that/does/not/fit/in/the/pane"),
            "2026-11-29T09:40:00Z",
        ),
        change(
            4,
            "github",
            "v2.3.1",
            "release Planner 2.3.1",
            None,
            "2026-11-28T20:35:00Z",
        ),
    ];
    m
}

fn key(m: &mut Model, c: char) {
    update(
        m,
        Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
    );
}

fn render(m: &Model) -> TestBackend {
    let mut term = Terminal::new(TestBackend::new(m.width, m.height)).unwrap();
    term.draw(|f| warroom::ui::view(f, m)).unwrap();
    term.backend().clone()
}

#[test]
fn the_pane_lists_changes_newest_first_beside_the_timeline() {
    for (w, h) in [(120, 40), (200, 60)] {
        let mut m = with_changes(model(true, w, h));
        key(&mut m, 'C');
        assert!(m.changes.shown, "C shows the pane");
        let alone = render(&m);
        insta::assert_snapshot!(format!("changes_alone_{w}x{h}"), alone);
        key(&mut m, 't');
        let both = render(&m);
        let text = format!("{both}");
        // Escapes from the title are shown as text, never sent to the terminal.
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        assert!(text.contains("\\e[2J"), "{text}");
        // Newest first: the deployment (09:40) above the pull request (09:30).
        let (deploy, pr) = (
            text.find("planner v2.3.1").unwrap(),
            text.find("#42:").unwrap(),
        );
        assert!(deploy < pr, "{text}");
        insta::assert_snapshot!(format!("changes_with_timeline_{w}x{h}"), both);
        key(&mut m, 'C');
        assert!(!m.changes.shown, "C hides it again");
    }
}

#[test]
fn the_empty_pane_says_what_is_watched_or_that_github_is_not_configured() {
    let mut m = model(true, 120, 30);
    key(&mut m, 'C');
    let watched = render(&m);
    assert!(format!("{watched}").contains("watching acme/api, acme/infra"));
    insta::assert_snapshot!("changes_empty_watching_120x30", watched);
    let mut m = model(false, 120, 30);
    key(&mut m, 'C');
    let none = render(&m);
    assert!(format!("{none}").contains("[github] is not configured"));
    insta::assert_snapshot!("changes_empty_unconfigured_120x30", none);
}

#[test]
fn publish_asks_first_and_says_when_it_is_not_configured() {
    let mut m = model(true, 120, 30);
    key(&mut m, 'P');
    let d = m.dialog.as_ref().expect("P asks first");
    assert!(d.title.contains("acme/pm"), "{}", d.title);
    insta::assert_snapshot!("publish_dialog_120x30", render(&m));
    // esc: nothing published.
    let effects = update(
        &mut m,
        Msg::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)),
    );
    assert!(effects.is_empty() && m.dialog.is_none());
    key(&mut m, 'P');
    let effects = update(
        &mut m,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    assert_eq!(
        effects,
        vec![warroom::app::Effect::Publish(
            warroom::github::publish::Target::Pr
        )]
    );
    assert!(m.publish.in_flight);
    key(&mut m, 'P');
    assert!(m.dialog.is_none(), "not twice at once");

    let mut m = model(false, 120, 30);
    key(&mut m, 'P');
    assert!(m.dialog.is_none());
    let notice = m.notice.as_ref().unwrap().text.clone();
    assert!(notice.contains("postmortems"), "{notice}");
}
