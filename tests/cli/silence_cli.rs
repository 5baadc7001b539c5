//! `warroom silence` and `incident status ID resolved --expire-silences` against a real
//! Alertmanager fed by a real Prometheus whose alerting rule fires (issue 35): the silence
//! exists in Alertmanager with the incident id in its comment and the alert is suppressed; the
//! journal records it once, across a restart of Alertmanager; resolving expires it; every
//! refusal of point 5 sends nothing and records nothing.

use crate::support::alertmanager::{self, AlertmanagerServer};
use crate::support::prometheus::{self, PromOptions, PromServer, http_get};

use std::process::{Command, Output};
use std::time::{Duration, Instant};
use warroom::incident::event::SilenceChange;
use warroom::incident::{Event, Record};

struct Stack {
    am: AlertmanagerServer,
    _prom: PromServer,
    data: tempfile::TempDir,
}

/// Alertmanager, then Prometheus sending to it, until Alertmanager lists both alerts.
fn stack() -> Option<Stack> {
    let am = alertmanager::start()?;
    let prom = prometheus::start(PromOptions {
        rules: Some(alertmanager::always_firing(
            "warroom-silence-test",
            &[("PoolSaturated", "page"), ("DiskFilling", "ticket")],
        )),
        alertmanager: Some(am.address()),
        // Alerts go out again every second, so a restarted Alertmanager has them back soon.
        extra_args: vec!["--rules.alert.resend-delay=1s".into()],
        ..Default::default()
    })?;
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("warroom.toml"),
        format!(
            "[alerts]\ntimeout = \"3s\"\n[alertmanager]\nurl = \"{}\"\nsilence_ceiling = \"6h\"\n",
            am.url
        ),
    )
    .unwrap();
    let stack = Stack {
        am,
        _prom: prom,
        data,
    };
    wait(
        Duration::from_secs(30),
        "both alerts in Alertmanager",
        || {
            let alerts = stack.am_json("/api/v2/alerts");
            alerts.as_array().is_some_and(|a| a.len() == 2)
        },
    );
    Some(stack)
}

fn wait(within: Duration, what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !ok() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Stack {
    fn warroom(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_warroom"))
            .arg("--data-dir")
            .arg(self.data.path())
            .arg("--config")
            .arg(self.data.path().join("warroom.toml"))
            .arg("--log-file")
            .arg(self.data.path().join("warroom.log"))
            .args(args)
            .env("NO_COLOR", "1")
            .env("WARROOM_ACTOR", "ana")
            .output()
            .expect("run warroom")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.warroom(args);
        assert!(
            out.status.success(),
            "warroom {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn new_incident(&self) -> String {
        self.ok(&["incident", "new", "--title", "pool saturated"])
            .trim()
            .to_string()
    }

    fn am_json(&self, path: &str) -> serde_json::Value {
        match http_get(self.am.port, path, Duration::from_secs(3)) {
            Some((200, body)) => serde_json::from_str(&body).expect("Alertmanager's JSON"),
            other => serde_json::json!({ "unanswered": format!("{other:?}") }),
        }
    }

    /// Alertmanager's silences, as its API lists them.
    fn silences(&self) -> Vec<serde_json::Value> {
        self.am_json("/api/v2/silences")
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    fn records(&self, id: &str) -> Vec<Record> {
        self.ok(&["incident", "timeline", id, "--json"])
            .lines()
            .map(|l| Record::decode(format!("{l}\n").as_bytes()).expect("a record a line"))
            .collect()
    }

    fn silence_records(&self, id: &str) -> Vec<(SilenceChange, String)> {
        self.records(id)
            .into_iter()
            .filter_map(|r| match r.kind {
                Event::Silence(s) => Some((s.change, s.id)),
                _ => None,
            })
            .collect()
    }
}

/// The alert's state in Alertmanager and the silences that hold it.
fn alert_state(stack: &Stack, name: &str) -> (String, Vec<String>) {
    let alerts = stack.am_json("/api/v2/alerts");
    let alert = alerts
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["labels"]["alertname"] == name)
        .cloned()
        .unwrap_or_default();
    let state = alert["status"]["state"].as_str().unwrap_or("").to_string();
    let by = alert["status"]["silencedBy"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    (state, by)
}

#[test]
fn a_silence_from_the_cli_suppresses_the_alert_survives_a_restart_and_expires_on_resolve() {
    let Some(mut stack) = stack() else {
        return;
    };
    let id = stack.new_incident();
    let out = stack.ok(&[
        "silence",
        "add",
        &id,
        "--match",
        "alertname=PoolSaturated",
        "--match",
        "service=planner-api",
        "--for",
        "2h",
        "--comment",
        "pager storm while we raise the pool",
    ]);
    assert!(out.contains("1 alert(s) match it now"), "{out}");
    assert!(out.contains("recorded #"), "{out}");

    // Alertmanager has it, with the incident id in its comment and the author.
    let silences = stack.silences();
    assert_eq!(silences.len(), 1, "{silences:#?}");
    let s = &silences[0];
    let silence_id = s["id"].as_str().unwrap().to_string();
    assert_eq!(
        s["comment"],
        format!("warroom incident {id}: pager storm while we raise the pool")
    );
    assert_eq!(
        (&s["createdBy"], &s["status"]["state"]),
        (&"ana".into(), &"active".into())
    );
    let ends = chrono::DateTime::parse_from_rfc3339(s["endsAt"].as_str().unwrap()).unwrap();
    let starts = chrono::DateTime::parse_from_rfc3339(s["startsAt"].as_str().unwrap()).unwrap();
    // Alertmanager starts it when it got it, a moment after warroom's start.
    assert!(
        (7190..=7200).contains(&(ends - starts).num_seconds()),
        "{s:#}"
    );
    // The alert is suppressed by it; the other one is not.
    wait(Duration::from_secs(10), "the alert suppressed", || {
        alert_state(&stack, "PoolSaturated") == ("suppressed".into(), vec![silence_id.clone()])
    });
    assert_eq!(alert_state(&stack, "DiskFilling").0, "active");

    // The journal has it once, and the timeline says it.
    assert_eq!(
        stack.silence_records(&id),
        [(SilenceChange::Made, silence_id.clone())]
    );
    let timeline = stack.ok(&["incident", "timeline", &id]);
    assert!(
        timeline
            .contains("ana silenced alertname=\"PoolSaturated\", service=\"planner-api\" until"),
        "{timeline}"
    );

    // Alertmanager restarts: the silence is still there, and listing records nothing more.
    stack.am.stop();
    let down = stack.warroom(&["silence", "list", &id]);
    assert!(!down.status.success());
    let err = String::from_utf8_lossy(&down.stderr);
    assert!(err.contains("Alertmanager at http://127.0.0.1:"), "{err}");
    let refused = stack.warroom(&["silence", "add", &id, "--match", "alertname=DiskFilling"]);
    assert!(
        !refused.status.success(),
        "made a silence with Alertmanager down"
    );
    stack.am.start_again();
    let listed = stack.ok(&["silence", "list", &id]);
    assert!(listed.contains(&silence_id), "{listed}");
    assert!(listed.contains("active"), "{listed}");
    assert_eq!(stack.silence_records(&id).len(), 1, "recorded once");
    wait(
        Duration::from_secs(15),
        "the alert back and suppressed",
        || alert_state(&stack, "PoolSaturated").0 == "suppressed",
    );

    // Resolving lists it; with --expire-silences it is expired, in Alertmanager and the journal.
    let out = stack.ok(&["incident", "status", &id, "resolved"]);
    assert!(
        out.contains("still in force") && out.contains(&silence_id),
        "{out}"
    );
    assert_eq!(stack.silences()[0]["status"]["state"], "active");
    let out = stack.ok(&["incident", "status", &id, "resolved", "--expire-silences"]);
    assert!(
        out.contains(&format!("expired silence {silence_id}")),
        "{out}"
    );
    assert_eq!(stack.silences()[0]["status"]["state"], "expired");
    wait(Duration::from_secs(10), "the alert active again", || {
        alert_state(&stack, "PoolSaturated").0 == "active"
    });
    assert_eq!(
        stack.silence_records(&id),
        [
            (SilenceChange::Made, silence_id.clone()),
            (SilenceChange::Expired, silence_id.clone())
        ]
    );
    // Again: nothing to do, nothing recorded.
    let out = stack.ok(&["silence", "expire", &id]);
    assert!(out.contains("Nothing to expire"), "{out}");
    assert_eq!(stack.silence_records(&id).len(), 2);
    let timeline = stack.ok(&["incident", "timeline", &id]);
    assert!(
        timeline.contains("ana expired the silence of alertname=\"PoolSaturated\""),
        "{timeline}"
    );
    // The postmortem's timeline says both.
    let out = stack.data.path().join("draft");
    stack.ok(&["export", &id, "--out", out.to_str().unwrap()]);
    let draft: String = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(
        draft.contains("ana silenced alertname=\"PoolSaturated\""),
        "{draft}"
    );
    assert!(draft.contains("ana expired the silence of"), "{draft}");
}

#[test]
fn a_silence_the_journal_lacks_is_recorded_once_when_the_incidents_silences_are_read() {
    let Some(stack) = stack() else {
        return;
    };
    let id = stack.new_incident();
    // Made outside warroom (a crash between Alertmanager's answer and the journal leaves the
    // same), with the incident's mark; another incident's silence beside it.
    let post = |comment: String| {
        let body = serde_json::json!({
            "matchers": [{"name": "alertname", "value": "DiskFilling", "isRegex": false, "isEqual": true}],
            "startsAt": chrono::Utc::now().to_rfc3339(),
            "endsAt": (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339(),
            "createdBy": "bo",
            "comment": comment,
        });
        let url = format!("{}/api/v2/silences", stack.am.url);
        let rt = tokio::runtime::Runtime::new().unwrap();
        let status = rt
            .block_on(async {
                reqwest::Client::new()
                    .post(url)
                    .json(&body)
                    .timeout(Duration::from_secs(5))
                    .send()
                    .await
            })
            .expect("post a silence")
            .status();
        assert!(status.is_success(), "{status}");
    };
    post(format!("warroom incident {id}: made by hand"));
    post(format!("warroom incident {id}1: another incident"));
    let out = stack.ok(&["silence", "list", &id]);
    assert!(out.contains("the journal lacked it"), "{out}");
    assert_eq!(
        out.matches("DiskFilling").count(),
        2,
        "one silence listed: {out}"
    );
    let again = stack.ok(&["silence", "list", &id]);
    assert!(!again.contains("the journal lacked it"), "{again}");
    let recorded = stack.silence_records(&id);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let r = stack.records(&id);
    let made = r
        .iter()
        .find(|r| matches!(r.kind, Event::Silence(_)))
        .unwrap();
    let Event::Silence(made) = &made.kind else {
        unreachable!()
    };
    assert_eq!(made.author, "bo");
}

#[test]
fn every_refusal_of_point_5_sends_nothing_and_records_nothing() {
    let Some(stack) = stack() else {
        return;
    };
    let id = stack.new_incident();
    let cases: &[(&[&str], &str)] = &[
        (&[], "at least one matcher"),
        (&["--match", "alertname="], "is empty"),
        (&["--match", "=PoolSaturated"], "is empty"),
        (
            &["--match", "alertname=X", "--match", "job=~.*"],
            "matches every value",
        ),
        (
            &["--match", "alertname=X", "--match", "job!=\"\""],
            "matches every value",
        ),
        (
            &["--match", "alertname=X", "--for", "0s"],
            "before it starts",
        ),
        (
            &["--match", "alertname=X", "--for", "7h"],
            "longer than the ceiling of 6h",
        ),
        (&["--match", "alertname"], "is not a matcher"),
    ];
    for (args, says) in cases {
        let mut all = vec!["silence", "add", id.as_str()];
        all.extend_from_slice(args);
        let out = stack.warroom(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(stack.silences().is_empty(), "{:#?}", stack.silences());
    assert!(stack.silence_records(&id).is_empty());
    // Confirmed, a broad matcher goes through.
    let out = stack.ok(&[
        "silence",
        "add",
        &id,
        "--match",
        "service=~.+",
        "--confirm-broad",
        "--for",
        "10m",
    ]);
    assert!(out.contains("2 alert(s) match it now"), "{out}");
    assert_eq!(stack.silences().len(), 1);
    assert_eq!(stack.silence_records(&id).len(), 1);
}

/// A create whose answer is lost is looked for before it is sent again, and found: one POST,
/// one silence; every request carries the tenant header.
#[tokio::test]
async fn a_lost_answer_to_a_create_is_looked_for_not_sent_again_and_the_tenant_goes_along() {
    use warroom::alerts::silence::{SilenceClient, SilenceSpec};
    use warroom::incident::silence::IncidentMark;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let server = MockServer::start().await;
    let spec = SilenceSpec::new(
        &IncidentMark::new("2026-12-04-1"),
        vec!["alertname=PoolSaturated".parse().unwrap()],
        chrono::Utc::now(),
        Duration::from_secs(3600),
        "ana",
        "pager storm",
    );
    // The create reached Alertmanager, but its answer is a proxy's 502.
    Mock::given(method("POST"))
        .and(path("/api/v2/silences"))
        .respond_with(ResponseTemplate::new(502).set_body_string("bad gateway"))
        .expect(1)
        .mount(&server)
        .await;
    let mut listed = serde_json::to_value(&spec).unwrap();
    listed["id"] = "4c1d0a5e-0000-4000-8000-000000000001".into();
    listed["status"] = serde_json::json!({"state": "active"});
    listed["updatedAt"] = listed["startsAt"].clone();
    Mock::given(method("GET"))
        .and(path("/api/v2/silences"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!([listed])))
        .mount(&server)
        .await;
    let headers = vec![("X-Scope-OrgID".to_string(), "tenant-1".to_string())];
    let client = SilenceClient::new(&server.uri(), &headers, Duration::from_secs(3)).unwrap();
    let id = client.create(&spec, None, 3).await.unwrap();
    assert_eq!(id, "4c1d0a5e-0000-4000-8000-000000000001");
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2, "one create, one look: {requests:#?}");
    assert!(
        requests.iter().all(|r| r
            .headers
            .get("x-scope-orgid")
            .is_some_and(|v| v == "tenant-1")),
        "the tenant header on every request"
    );
}

/// Extending (the console's answer to "this silence lapses in 5 minutes") moves the silence's
/// end in the real Alertmanager and keeps the alert suppressed; the records it gives name the
/// silence that now holds the alert, with its new end, and an "expired" for the old id when
/// Alertmanager replaced it rather than updating it.
#[tokio::test(flavor = "multi_thread")]
async fn extending_a_silence_moves_its_end_in_alertmanager_and_keeps_the_alert_suppressed() {
    use warroom::alerts::silence::{self, SilenceClient};

    let Some(stack) = tokio::task::spawn_blocking(stack).await.unwrap() else {
        return;
    };
    let id = stack.new_incident();
    stack.ok(&[
        "silence",
        "add",
        &id,
        "--match",
        "alertname=PoolSaturated",
        "--for",
        "10m",
    ]);
    let old = stack.silences()[0]["id"].as_str().unwrap().to_string();
    let client = SilenceClient::new(&stack.am.url, &[], Duration::from_secs(3)).unwrap();
    let until = chrono::Utc::now() + chrono::Duration::hours(2);
    let records = silence::extend(&client, &old, until, "ben", 3)
        .await
        .expect("extended");

    let active: Vec<serde_json::Value> = stack
        .silences()
        .into_iter()
        .filter(|s| s["status"]["state"] == "active")
        .collect();
    assert_eq!(active.len(), 1, "one silence holds the alert: {active:#?}");
    let now_id = active[0]["id"].as_str().unwrap().to_string();
    let ends = chrono::DateTime::parse_from_rfc3339(active[0]["endsAt"].as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc);
    assert!(
        (ends - until).num_seconds().abs() <= 1,
        "ends {ends}, asked {until}"
    );
    let last = records.last().expect("a record");
    assert_eq!(
        (&last.change, &last.id, &last.author),
        (&SilenceChange::Extended, &now_id, &"ben".to_string())
    );
    let want: warroom::incident::silence::Matcher = "alertname=PoolSaturated".parse().unwrap();
    assert_eq!(last.matchers, vec![want]);
    assert!((last.until - until).num_seconds().abs() <= 1);
    if now_id == old {
        assert_eq!(records.len(), 1, "{records:?}");
    } else {
        assert_eq!(
            (&records[0].change, &records[0].id),
            (&SilenceChange::Expired, &old),
            "{records:?}"
        );
    }
    let stack = std::sync::Arc::new(stack);
    let s = stack.clone();
    tokio::task::spawn_blocking(move || {
        wait(
            Duration::from_secs(10),
            "the alert still suppressed",
            || alert_state(&s, "PoolSaturated") == ("suppressed".into(), vec![now_id.clone()]),
        );
    })
    .await
    .unwrap();
}
