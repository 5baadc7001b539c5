//! Silencing from the console in a real terminal (issue 35): a real Prometheus whose rule fires
//! sends its alert to a real Alertmanager; `warroom open` in tmux shows it on the timeline, `S`
//! silences it with a note, and Alertmanager's API is asked whether the silence exists with
//! the incident id in its comment and the alert is suppressed. Setting the incident resolved
//! in the console offers to expire it; the answer expires it in Alertmanager, and the journal
//! holds the silence made and expired, once each.

use crate::support::alertmanager::{self, AlertmanagerServer};
use crate::support::journey::{self, Journey};
use crate::support::prometheus::{self, PromOptions, http_get};
use crate::support::tmux;

use std::time::{Duration, Instant};
use warroom::incident::Event;
use warroom::incident::event::SilenceChange;

fn am_json(am: &AlertmanagerServer, path: &str) -> serde_json::Value {
    match http_get(am.port, path, Duration::from_secs(3)) {
        Some((200, body)) => serde_json::from_str(&body).expect("Alertmanager's JSON"),
        other => serde_json::json!({ "unanswered": format!("{other:?}") }),
    }
}

/// Polls `f` until it gives something: at most `within` and 300 tries.
fn poll<T>(what: &str, within: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    for _ in 0..300 {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("gave up waiting for {what} within {within:?}");
}

/// The silence of the incident in Alertmanager whose state is `state`, if any.
fn silence_in(am: &AlertmanagerServer, id: &str, state: &str) -> Option<serde_json::Value> {
    let all = am_json(am, "/api/v2/silences");
    let mark = format!("warroom incident {id}: ");
    (all.as_array()?.iter())
        .find(|s| {
            s["comment"].as_str().is_some_and(|c| c.starts_with(&mark))
                && s["status"]["state"] == state
        })
        .cloned()
}

/// The alert's state in Alertmanager and the silences holding it.
fn alert_state(am: &AlertmanagerServer) -> (String, Vec<String>) {
    let alerts = am_json(am, "/api/v2/alerts");
    let alert = (alerts.as_array().into_iter().flatten())
        .find(|a| a["labels"]["alertname"] == "PoolSaturated")
        .cloned()
        .unwrap_or_default();
    let by = (alert["status"]["silencedBy"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|v| v.as_str().map(str::to_string))
    .collect();
    let state = alert["status"]["state"].as_str().unwrap_or("").to_string();
    (state, by)
}

#[test]
fn s_silences_the_firing_alert_in_alertmanager_and_resolving_expires_it() {
    let Some(am) = alertmanager::start() else {
        return;
    };
    let Some(prom) = prometheus::start(PromOptions {
        rules: Some(alertmanager::always_firing(
            "warroom-silence-console",
            &[("PoolSaturated", "page")],
        )),
        alertmanager: Some(am.address()),
        // Sent again every second: the first send may come before Alertmanager is known.
        extra_args: vec!["--rules.alert.resend-delay=1s".into()],
        ..Default::default()
    }) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("warroom.toml"),
        format!(
            "refresh = \"1s\"\n[prometheus]\nurl = \"{}\"\ntimeout = \"5s\"\n\
             [alertmanager]\nurl = \"{}\"\nsilence_ceiling = \"6h\"\n\
             [alerts]\ninterval = \"1s\"\ntimeout = \"3s\"\n\
             [[panel]]\ntitle = \"Targets up\"\nquery = \"count(up)\"\n",
            prom.url, am.url
        ),
    )
    .unwrap();
    let command = format!(
        "env WARROOM_ACTOR=ana {}",
        journey::console_command(dir.path(), "open --title \"Pool saturated\"")
    );
    let Some(term) = tmux::Tmux::start(&command, 160, 48) else {
        return;
    };
    let j = Journey::new(term, dir.path());
    j.expect("Targets up", Duration::from_secs(20));
    j.keys(&["t"]);
    j.expect("Alert firing: PoolSaturated", Duration::from_secs(60));
    let id = journey::only_incident(dir.path());
    poll("the alert in Alertmanager", Duration::from_secs(30), || {
        (alert_state(&am).0 == "active").then_some(())
    });

    // S: the form from the alert's labels; tab past the three matchers and "for" to the note.
    j.keys(&["S"]);
    j.expect("Silence PoolSaturated", Duration::from_secs(10));
    j.expect("service=\"planner-api\"", Duration::from_secs(5));
    j.keys(&["Tab", "Tab", "Tab", "Tab"]);
    j.text("pager storm");
    j.keys(&["Enter"]);
    j.expect("ana silenced", Duration::from_secs(30));

    let made = poll(
        "the silence in Alertmanager",
        Duration::from_secs(10),
        || silence_in(&am, &id, "active"),
    );
    let silence_id = made["id"].as_str().unwrap().to_string();
    assert_eq!(
        made["comment"],
        format!("warroom incident {id}: pager storm")
    );
    assert_eq!(made["createdBy"], "ana");
    let (state, by) = poll("the alert suppressed", Duration::from_secs(20), || {
        let (state, by) = alert_state(&am);
        (state == "suppressed").then_some((state, by))
    });
    assert_eq!(
        (state.as_str(), by),
        ("suppressed", vec![silence_id.clone()])
    );

    // Resolved from the status dialog: the console lists the silence and offers to expire it.
    j.keys(&["s"]);
    j.expect("Incident status", Duration::from_secs(5));
    j.keys(&["Down", "Down", "Down", "Enter"]);
    j.expect("Expire the incident's silences?", Duration::from_secs(10));
    j.term.read_pause();
    j.keys(&["Down", "Enter"]);
    j.expect("ana expired the silence", Duration::from_secs(30));
    poll(
        "the silence expired in Alertmanager",
        Duration::from_secs(10),
        || silence_in(&am, &id, "expired"),
    );
    poll("the alert active again", Duration::from_secs(20), || {
        (alert_state(&am).0 == "active").then_some(())
    });
    j.keys(&["q"]);

    // The journal: made once, expired once, both of this silence.
    let changes: Vec<(SilenceChange, String)> = journey::timeline(dir.path(), &id)
        .into_iter()
        .filter_map(|r| match r.kind {
            Event::Silence(s) => Some((s.change, s.id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        [
            (SilenceChange::Made, silence_id.clone()),
            (SilenceChange::Expired, silence_id)
        ]
    );
}
