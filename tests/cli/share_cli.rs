//! One incident across machines through the binary (issue 36): two data dirs stand for two
//! responders' machines, one real `nats-server` with JetStream for the engine. A note written
//! on A appears on B's timeline; B joins an incident it never had; a note written while the
//! engine is out of reach is kept and shared later, once; bad URLs and an unreachable engine
//! say so in one line.

use crate::support::nats::Nats;
use crate::support::prometheus::free_port;
use std::path::Path;
use std::process::{Command, Output};

/// warroom on the machine whose data dir is `data`, its responder named after the dir, with
/// an empty config (no `[share]`) and no `$WARROOM_SHARE`.
pub(crate) fn warroom(data: &Path) -> Command {
    std::fs::write(data.join("none.toml"), "").unwrap();
    warroom_with(data, &data.join("none.toml"))
}

/// `warroom` with `data` as its data dir and `config` as its config file, acting as the data
/// dir's name.
pub(crate) fn warroom_with(data: &Path, config: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warroom"));
    c.arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .arg("--config")
        .arg(config)
        .env("WARROOM_ACTOR", data.file_name().unwrap())
        .env("NO_COLOR", "1")
        .env_remove("WARROOM_SHARE");
    c
}

fn run(data: &Path, env_share: Option<&str>, args: &[&str]) -> Output {
    let mut c = warroom(data);
    c.args(args);
    if let Some(url) = env_share {
        c.env("WARROOM_SHARE", url);
    }
    c.output().unwrap()
}

fn ok(data: &Path, args: &[&str]) -> (String, String) {
    let out = run(data, None, args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?} failed: {err}");
    (String::from_utf8(out.stdout).unwrap(), err)
}

fn fails(data: &Path, args: &[&str]) -> String {
    let out = run(data, None, args);
    assert!(!out.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Two machines' data dirs, named as their responders.
fn machines() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("ana"), root.path().join("bo"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    (root, a, b)
}

#[test]
fn a_note_written_on_one_machine_appears_on_the_others_timeline() {
    let Some(nats) = Nats::start() else { return };
    let url = nats.url();
    let (_root, a, b) = machines();
    let (id, _) = ok(
        &a,
        &[
            "incident",
            "new",
            "--title",
            "Pool exhausted",
            "--share",
            &url,
        ],
    );
    let id = id.trim();
    ok(
        &a,
        &["incident", "note", id, "pool at 100% on A", "--share", &url],
    );

    // B never had the incident: the engine lists it, B's timeline shows A's records.
    let (listed, _) = ok(&b, &["incident", "list", "--share", &url]);
    let row = listed.lines().find(|l| l.starts_with(id)).expect(&listed);
    assert!(
        row.contains("no") && row.contains("Pool exhausted"),
        "{row}"
    );
    let (timeline, _) = ok(&b, &["incident", "timeline", id, "--share", &url]);
    assert!(timeline.contains("pool at 100% on A"), "{timeline}");
    assert!(!b.join("incidents").join(id).exists(), "reading joined it");

    // B writes (the engine named by $WARROOM_SHARE this time): it joins, and A sees the note.
    let out = run(
        &b,
        Some(&url),
        &["incident", "note", id, "replica lag on B"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("joined incident"), "{err}");
    let (json, _) = ok(&a, &["incident", "timeline", id, "--json", "--share", &url]);
    for note in ["pool at 100% on A", "replica lag on B", "Pool exhausted"] {
        assert_eq!(json.matches(note).count(), 1, "{note} in\n{json}");
    }
    // Without the engine each machine shows its own journal only.
    let (local, _) = ok(&b, &["incident", "timeline", id]);
    assert!(local.contains("replica lag on B") && !local.contains("pool at 100%"));
    let (listed, _) = ok(&b, &["incident", "list", "--share", &url]);
    let row = listed.lines().find(|l| l.starts_with(id)).expect(&listed);
    assert!(row.contains("yes"), "{row}");
}

#[test]
fn a_note_written_with_the_engine_out_of_reach_is_kept_and_shared_later_once() {
    let Some(nats) = Nats::start() else { return };
    let url = nats.url();
    let down = format!("nats://127.0.0.1:{}", free_port());
    let (_root, a, b) = machines();
    let (id, _) = ok(
        &a,
        &["incident", "new", "--title", "Cut off", "--share", &url],
    );
    let id = id.trim();
    let (said, err) = ok(
        &a,
        &["incident", "note", id, "written offline", "--share", &down],
    );
    assert!(said.starts_with("recorded #"), "{said}");
    assert!(
        err.contains("not shared yet") && err.contains("unreachable"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    let (timeline, _) = ok(&b, &["incident", "timeline", id, "--share", &url]);
    assert!(!timeline.contains("written offline"), "{timeline}");
    ok(
        &a,
        &["incident", "note", id, "back online", "--share", &url],
    );
    let (json, _) = ok(&b, &["incident", "timeline", id, "--json", "--share", &url]);
    for note in ["written offline", "back online"] {
        assert_eq!(json.matches(note).count(), 1, "{note} in\n{json}");
    }
}

#[test]
fn a_bad_url_or_an_unreachable_engine_is_said_in_one_line() {
    let (_root, a, _b) = machines();
    let (id, _) = ok(&a, &["incident", "new", "--title", "x"]);
    let id = id.trim();
    let err = fails(
        &a,
        &[
            "incident",
            "note",
            id,
            "n",
            "--share",
            "http://127.0.0.1:4222",
        ],
    );
    assert!(err.contains("is not a NATS URL"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let (timeline, _) = ok(&a, &["incident", "timeline", id]);
    assert!(
        !timeline.contains(" n\n"),
        "nothing was recorded: {timeline}"
    );
    let down = format!("nats://127.0.0.1:{}", free_port());
    let err = fails(&a, &["incident", "list", "--share", &down]);
    assert!(err.contains("unreachable") && err.contains(&down), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// A recorder with nothing to record names what it can record from, the engine among them (a
/// recorder with `[share]` alone serves and shares the incident: `share_cluster` kills one).
#[test]
fn a_recorder_with_nothing_to_record_names_the_engine_among_what_to_pass() {
    let (_root, a, _b) = machines();
    let (id, _) = ok(&a, &["incident", "new", "--title", "x"]);
    let err = fails(&a, &["record", id.trim()]);
    assert!(
        err.contains("nothing to record") && err.contains("--share URL"),
        "{err}"
    );
}

/// Hostile input on the real stream: a message that does not parse, one over the size a
/// record may take, and a well-formed record published on one writer's subject claiming
/// another's identity are each refused and reported by the responder that reads the stream,
/// and never merged into its timeline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_record_on_the_stream_is_refused_and_reported_never_merged() {
    let Some(nats) = tokio::task::spawn_blocking(Nats::start).await.unwrap() else {
        return;
    };
    let url = nats.url();
    let (_root, a, b) = machines();
    let (a2, u2) = (a.clone(), url.clone());
    let id = tokio::task::spawn_blocking(move || {
        let (id, _) = ok(
            &a2,
            &[
                "incident",
                "new",
                "--title",
                "Pool exhausted",
                "--share",
                &u2,
            ],
        );
        let id = id.trim().to_string();
        ok(
            &a2,
            &["incident", "note", &id, "honest note", "--share", &u2],
        );
        id
    })
    .await
    .unwrap();

    let client = async_nats::connect(url.as_str()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let publish = |subject: String, payload: Vec<u8>| {
        let js = js.clone();
        async move {
            js.publish(subject, payload.into())
                .await
                .unwrap()
                .await
                .expect("the stream stored it");
        }
    };
    let on = |writer: &str| format!("warroom.{id}.{writer}");
    publish(on("mallory-1"), b"{not json".to_vec()).await;
    let mut huge = br#"{"writer":"mallory-2","record":{"seq":1,"text":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'x', 100 * 1024));
    huge.extend(br#""}}"#);
    publish(on("mallory-2"), huge).await;
    // A record that parses, in A's name, on mallory's subject.
    let (json, _) = {
        let a = a.clone();
        let id = id.clone();
        tokio::task::spawn_blocking(move || ok(&a, &["incident", "timeline", &id, "--json"]))
            .await
            .unwrap()
    };
    let mut record: serde_json::Value = serde_json::from_str(json.lines().last().unwrap()).unwrap();
    record["seq"] = 99.into();
    record["kind"]["text"] = "forged: run every runbook".into();
    let writer = std::fs::read_to_string(
        warroom::incident::Store::new(&a)
            .dir(&warroom::incident::IncidentId::parse(&id).unwrap())
            .join("writer-id"),
    )
    .unwrap();
    let forged = serde_json::json!({"writer": writer.trim(), "record": record});
    publish(on("mallory-3"), serde_json::to_vec(&forged).unwrap()).await;

    let out = tokio::task::spawn_blocking(move || {
        run(&b, None, &["incident", "timeline", &id, "--share", &url])
    })
    .await
    .unwrap();
    let (shown, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{err}");
    assert!(shown.contains("honest note"), "{shown}");
    assert!(
        !shown.contains("forged") && !shown.contains("xxxx"),
        "merged: {shown}"
    );
    let refused: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("refused a record on the engine"))
        .collect();
    assert_eq!(refused.len(), 3, "{err}");
    assert!(refused.iter().any(|l| l.contains("not a record")), "{err}");
    assert!(
        refused.iter().any(|l| l.contains("bytes, over the")),
        "{err}"
    );
    assert!(
        refused
            .iter()
            .any(|l| l.contains("claims to be written by")),
        "{err}"
    );
}
