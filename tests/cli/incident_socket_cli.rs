//! The incident commands as clients of a holder (issue 18): every kind a person records
//! (note, status, severity, services, action item, impact mark, correction) goes through the
//! holder's socket when one holds the incident, with the same checks as when it is written
//! directly; `--socket` reaches a holder by an explicit path and never writes behind it; the
//! exit status is 0 only on the holder's acknowledgement.

use std::path::Path;
use std::process::Output;
use warroom::incident::event::{Event, Severity, Status};
use warroom::incident::serve::{self, SOCKET_FILE};
use warroom::incident::store::Role;
use warroom::incident::{IncidentId, JournalWriter, Source, Store};

fn run(data: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .env("WARROOM_CONFIG", data.join("none.toml"))
        .env("WARROOM_ACTOR", "ana")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every kind of record a person makes, through `id`, each acknowledged; returns the outputs.
fn record_every_kind(data: &Path, id: &str, via: &[&str]) -> Vec<String> {
    let cmds: Vec<Vec<&str>> = vec![
        vec!["note", id, "pool at 100% #impact"],
        vec!["status", id, "identified"],
        vec!["severity", id, "SEV-1"],
        vec!["services", id, "planner-api,gateway"],
        vec!["action", id, "add a retry budget", "--owner", "platform"],
        vec!["impact", id, "start", "--at", "00:00"],
        vec!["correct", id, "2", "--reason", "typo", "pool at 99%"],
    ];
    cmds.into_iter()
        .map(|mut c| {
            let mut args = vec!["incident"];
            args.append(&mut c);
            args.extend_from_slice(via);
            ok(&run(data, &args))
        })
        .collect()
}

fn kinds(store: &Store, id: &IncidentId) -> Vec<Event> {
    store
        .read(id)
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.kind)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_goes_through_the_holder_and_is_checked_as_local_input() {
    // The same records written directly (nobody holds the incident) and through a holder.
    let direct = tempfile::tempdir().unwrap();
    let out = ok(&run(
        direct.path(),
        &[
            "incident",
            "new",
            "--title",
            "Pools full",
            "--severity",
            "SEV-2",
        ],
    ));
    let direct_id = out.trim().to_string();
    let d = direct.path().to_path_buf();
    let did = direct_id.clone();
    let outs = tokio::task::spawn_blocking(move || record_every_kind(&d, &did, &[]))
        .await
        .unwrap();
    assert!(
        outs.iter()
            .all(|o| o.starts_with("recorded #") && !o.contains("through"))
    );

    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
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
    let serving = serve::serve(writer.clone(), None, Default::default()).unwrap();
    assert_eq!(serving.path(), store.dir(&id).join(SOCKET_FILE));
    let p = data.path().to_path_buf();
    let sid = id.to_string();
    let outs = tokio::task::spawn_blocking(move || record_every_kind(&p, &sid, &[]))
        .await
        .unwrap();
    assert!(
        outs.iter().all(|o| o.contains("through warroom recorder")),
        "{outs:?}"
    );
    // The journal holds the same events either way (the action item's id handed out by the
    // journal in both).
    let through = kinds(&store, &id);
    let direct_kinds = kinds(
        &Store::new(direct.path()),
        &IncidentId::parse(&direct_id).unwrap(),
    );
    // (Times differ, and `incident new` also records the incident's global id.)
    let strip_times = |k: &[Event]| {
        k.iter()
            .filter(|e| !format!("{e:?}").starts_with("IncidentUid"))
            .map(|e| match e {
                Event::ImpactStart { .. } => "impact".to_string(),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip_times(&through), strip_times(&direct_kinds));
    assert!(
        through
            .iter()
            .any(|e| matches!(e, Event::ActionItem { id, .. } if id == "AI-1"))
    );
    assert!(through.contains(&Event::StatusChanged {
        status: Status::Identified
    }));

    // The same refusals both ways: nothing recorded.
    let before = through.len();
    let p = data.path().to_path_buf();
    let (sid, did) = (id.to_string(), direct_id.clone());
    let d = direct.path().to_path_buf();
    let errs = tokio::task::spawn_blocking(move || {
        let mut errs = Vec::new();
        for (data, id) in [(&p, &sid), (&d, &did)] {
            errs.push(refused(&run(
                data,
                &["incident", "correct", id, "99", "--reason", "x"],
            )));
            errs.push(refused(&run(
                data,
                &["incident", "correct", id, "2", "--reason", "  "],
            )));
            errs.push(refused(&run(data, &["incident", "severity", id, "SEV-9"])));
        }
        errs
    })
    .await
    .unwrap();
    assert!(errs[0].contains("no record #99"), "{}", errs[0]);
    assert!(errs[3].contains("no record #99"), "{}", errs[3]);
    assert!(
        errs[1].contains("say why") && errs[4].contains("say why"),
        "{errs:?}"
    );
    assert_eq!(kinds(&store, &id).len(), before);

    // --socket: a forwarded or linked path reaches the holder; a dead one writes nothing.
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("wr.sock");
    std::os::unix::fs::symlink(serving.path(), &link).unwrap();
    let (p, sid, l) = (data.path().to_path_buf(), id.to_string(), link.clone());
    let out = tokio::task::spawn_blocking(move || {
        run(
            &p,
            &[
                "incident",
                "note",
                &sid,
                "via link",
                "--socket",
                l.to_str().unwrap(),
            ],
        )
    })
    .await
    .unwrap();
    assert!(ok(&out).contains("through the holder at"));
    drop(serving);
    drop(writer);
    let (p, sid) = (data.path().to_path_buf(), id.to_string());
    let out = tokio::task::spawn_blocking(move || {
        run(
            &p,
            &[
                "incident",
                "note",
                &sid,
                "nobody",
                "--socket",
                link.to_str().unwrap(),
            ],
        )
    })
    .await
    .unwrap();
    let err = refused(&out);
    assert!(err.contains("nothing was sent"), "{err}");
    assert!(!kinds(&store, &id).contains(&Event::note("nobody")));
}

/// Action-item ids are the holder's to give: a client that sends `AI-4294967295`, then `AI-1`,
/// gets the next ids in order, so no id wraps and no second `AI-1` can take over the first
/// item's GitHub issue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_cannot_choose_an_action_item_id() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let (incident, _) = store.open_incident(&id, Role::Recorder).unwrap();
    let writer = JournalWriter::spawn(incident).unwrap();
    let serving = serve::serve(writer.clone(), None, Default::default()).unwrap();
    let path = serving.path().to_path_buf();
    let sid = id.to_string();
    let ids = tokio::task::spawn_blocking(move || {
        let client = serve::client::Client::new(&path, "mallory");
        ["AI-4294967295", "AI-1", "", "AI-0"]
            .iter()
            .map(|asked| {
                let item = Event::ActionItem {
                    id: asked.to_string(),
                    action: format!("asked for {asked:?}"),
                    owner: None,
                    priority: None,
                    due: None,
                };
                match client.append(&sid, item).unwrap().kind {
                    Event::ActionItem { id, .. } => id,
                    other => panic!("recorded {other:?}"),
                }
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    assert_eq!(ids, ["AI-1", "AI-2", "AI-3", "AI-4"]);
    let on_disk: Vec<String> = kinds(&store, &id)
        .into_iter()
        .filter_map(|e| match e {
            Event::ActionItem { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    assert_eq!(on_disk, ["AI-1", "AI-2", "AI-3", "AI-4"]);
    drop(serving);
}

/// A data directory deep enough that the socket's path passes the kernel's 107 bytes: the
/// holder still serves and a writer still writes through it (both reach the socket through a
/// handle on its directory), from the command line as from a client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_path_past_the_kernels_limit_still_serves_writers() {
    let base = tempfile::tempdir().unwrap();
    let deep = base
        .path()
        .join("a-rather-long-directory-name-for-a-team-share")
        .join("and-another-one-because-home-directories-nest");
    let store = Store::new(&deep);
    let id = store.create(chrono::Utc::now()).unwrap();
    let (incident, _) = store.open_incident(&id, Role::Recorder).unwrap();
    let writer = JournalWriter::spawn(incident).unwrap();
    let serving = serve::serve(writer.clone(), None, Default::default()).unwrap();
    let path = serving.path().to_path_buf();
    assert!(
        path.as_os_str().len() > 108,
        "the test needs a long path: {}",
        path.display()
    );
    let (d, sid) = (deep.clone(), id.to_string());
    let out = tokio::task::spawn_blocking(move || {
        run(
            &d,
            &["incident", "note", &sid, "written through a long path"],
        )
    })
    .await
    .unwrap();
    let said = ok(&out);
    assert!(said.contains("through"), "{said}");
    assert!(
        kinds(&store, &id).iter().any(
            |e| matches!(e, Event::Note { text, .. } if text == "written through a long path")
        )
    );
    drop(serving);
}
