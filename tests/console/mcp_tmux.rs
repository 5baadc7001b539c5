//! An assistant's proposal reaches a person at a real console (issue 37): the official MCP
//! Python SDK calls `propose_runbook` through `warroom mcp` against the incident a console in
//! tmux holds; the proposal shows there with its values, is accepted with keys, and the run it
//! starts takes the proposed values over the usual ones. The journal, read through `warroom
//! incident timeline --json`, has both authors: the agent's proposal and the operator's run.
//! A second proposal, declined with esc, is recorded too.

use crate::support::mcp_client::{answer, python_client, python_mcp};
use crate::support::tmux::Tmux;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use warroom::incident::serve::{Client, SOCKET_FILE};
use warroom::incident::store::Role;
use warroom::incident::{IncidentId, Store};

/// Nothing listens on port 1: the run needs no Prometheus; the proposal is what is tested.
const NOWHERE: &str = "http://127.0.0.1:1";

const RUNBOOK: &str = r#"name = "mcp-proposed"
description = "Tells the team which service and region the next steps are for"
[variables]
service = { default = "planner-api", description = "the service" }
region = { default = "us-east", description = "the region" }

[[step]]
id = "tell"
kind = "note"
title = "Tell the team about {{service}} in {{region}}"
text = "The next steps are for {{service}} in {{region}}."
"#;

/// What the client is called, and so the author of its proposals.
const AGENT: &str = "agent (pytest-agent) via mcp, for ana";

fn warroom(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warroom"));
    c.arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(data.join("warroom.toml"))
        .arg("--log-file")
        .arg(data.join("cli.log"))
        .env("WARROOM_ACTOR", "ana");
    c
}

/// The journal through the CLI, one JSON record a line.
fn journal(data: &Path, id: &str) -> Vec<Value> {
    let out = warroom(data)
        .args(["incident", "timeline", id, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8_lossy(&out.stdout).lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Waits (bounded) for a record that `found` picks; it, and the whole journal.
fn wait_record(data: &Path, id: &str, what: &str, found: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let records = journal(data, id);
        if let Some(r) = records.iter().find(|r| found(r)) {
            return r.clone();
        }
        assert!(Instant::now() < deadline, "no {what} in {records:#?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn note_by(r: &Value, actor: &str, has: &str) -> bool {
    r["actor"] == actor
        && r["kind"]["type"] == "note"
        && r["kind"]["text"].as_str().is_some_and(|t| t.contains(has))
}

/// An incident with the runbook and a config that sets `region` for every runbook; its id.
fn incident(data: &Path) -> String {
    std::fs::create_dir_all(data.join("rb")).unwrap();
    std::fs::write(data.join("rb/mcp-proposed.toml"), RUNBOOK).unwrap();
    let config = format!(
        "[runbooks]\ndir = \"{}\"\n[runbooks.vars]\nregion = \"eu-west\"\n",
        data.join("rb").display()
    );
    std::fs::write(data.join("warroom.toml"), config).unwrap();
    let out = warroom(data)
        .args(["incident", "new", "--title", "Planner pool exhausted"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The console holding `id`, in tmux, once it serves the incident's socket.
fn console(data: &Path, id: &str) -> Option<Tmux> {
    let command = format!(
        "WARROOM_ACTOR=ana NO_COLOR=1 {} --data-dir {} --config {} --log-file {} open \
         --incident {id} --prometheus {NOWHERE}",
        env!("CARGO_BIN_EXE_warroom"),
        data.display(),
        data.join("warroom.toml").display(),
        data.join("console.log").display(),
    );
    let term = Tmux::start(&command, 200, 50)?;
    let store = Store::new(data);
    let found = IncidentId::parse(id).unwrap();
    let socket = store.dir(&found).join(SOCKET_FILE);
    let deadline = Instant::now() + Duration::from_secs(15);
    while !(store
        .holder(&found)
        .unwrap()
        .is_some_and(|h| h.role == Role::Console)
        && Client::new(&socket, "probe").hello().is_ok())
    {
        assert!(
            Instant::now() < deadline,
            "the console serves: {}",
            term.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(term)
}

/// The agent proposes the runbook with `service`; the seq of its proposal.
fn propose(data: &Path, id: &str, service: &str, reason: &str) -> u64 {
    let calls = serde_json::json!([["propose_runbook", {"name": "mcp-proposed",
        "variables": {"service": service}, "reason": reason}]]);
    let report = python_client(data, &["mcp", "--incident", id], &calls, &[]);
    let proposal = answer(&report, 0);
    assert_eq!(proposal["author"], AGENT);
    proposal["seq"].as_u64().unwrap()
}

#[test]
fn an_assistants_proposed_run_is_accepted_with_keys_and_recorded_with_both_authors() {
    if python_mcp().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let id = incident(data);
    let Some(term) = console(data, &id) else {
        return;
    };

    let seq = propose(data, &id, "planner-worker", "the worker holds the pool");
    term.expect("A proposal", Duration::from_secs(15));
    let screen = term.expect("service = planner-worker", Duration::from_secs(5));
    assert!(screen.contains("pytest-agent"), "{screen}");
    // Accept: the run dialog opens, its plan made with the proposed value over the usual ones.
    term.send(&["Enter"]);
    term.expect("Run runbook \"mcp-proposed\"?", Duration::from_secs(10));
    term.expect("planner-worker in eu-west", Duration::from_secs(15));
    term.type_text("mcp-proposed");
    term.send(&["Enter"]);

    let started = wait_record(data, &id, "the run's start", |r| {
        r["kind"]["type"] == "runbook_run"
            && r["kind"]["run"]["runbook"] == "mcp-proposed"
            && r["kind"]["state"] == "started"
    });
    // A run's records are the run's own (its id as their actor); the operator's record of
    // starting it names the agent that proposed it.
    assert_eq!(started["source"], "runbook", "{started}");
    let run_id = started["kind"]["run"]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let step = wait_record(data, &id, "the step with the values", |r| {
        r["kind"]["type"] == "runbook_step"
            && r["kind"]["run"]["run_id"] == run_id.as_str()
            && r["kind"]["detail"]
                .as_str()
                .is_some_and(|d| d.contains("Tell the team about"))
    });
    let detail = step["kind"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("planner-worker in eu-west"),
        "the proposed service over the default, the config's region: {detail}"
    );
    let records = journal(data, &id);
    let proposal = (records.iter().find(|r| r["seq"] == seq)).expect("the proposal's record");
    assert!(
        note_by(
            proposal,
            AGENT,
            "proposes running runbook \"mcp-proposed\" with service=planner-worker"
        ),
        "{proposal}"
    );
    let both = format!("as {AGENT} proposed (#{seq}): run {run_id}");
    assert!(
        records.iter().any(|r| note_by(r, "ana", &both)),
        "the operator's record names the agent and the run: {records:#?}"
    );

    // A second proposal, declined with esc: recorded by the operator, and nothing runs.
    let again = propose(data, &id, "planner-api", "one more time");
    term.expect(&format!("(#{again})"), Duration::from_secs(15));
    term.send(&["Escape"]);
    let declined = format!("declined the run of \"mcp-proposed\" proposed by {AGENT} (#{again})");
    wait_record(data, &id, "the refusal", |r| note_by(r, "ana", &declined));
    let runs = (journal(data, &id).iter())
        .filter(|r| r["kind"]["type"] == "runbook_run" && r["kind"]["state"] == "started")
        .count();
    assert_eq!(runs, 1, "the declined proposal ran nothing");
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(10));
}
