//! The token canary: a token read from an owner-only file is sent in the Authorization header
//! and nowhere else: 0 occurrences in logs, errors, `Debug` output, the incident's files
//! (journal, outbox, exports) and the bodies and paths of every request.

use crate::support::github_mock;

use github_mock::{Fault, GithubMock, LimitKind, clock, incident_fixture};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};
use warroom::github::deliver::queue_and_deliver;
use warroom::github::publish::Target;
use warroom::github::{Github, VirtualTimer};

const CANARY: &str = "ghp_CANARY_5f3a9c1e7b2d4086";

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn all_files(dir: &std::path::Path, out: &mut String) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            all_files(&p, out);
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
}

#[tokio::test]
async fn the_token_appears_nowhere_but_in_the_authorization_header() {
    let logs = Captured::default();
    let writer = logs.clone();
    tracing::subscriber::set_global_default(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || writer.clone())
            .finish(),
    )
    .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("github-token");
    std::fs::write(&token_file, format!("{CANARY}\n")).unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config_text = format!(
        "[github]\napi_url = \"http://127.0.0.1:1\"\ntoken_file = \"{}\"\n",
        token_file.display()
    );
    let cfg = warroom::config::Config::parse("w.toml", &config_text).unwrap();
    let gh_cfg = cfg.github.clone().unwrap();
    let mut seen = String::new();
    let timer = Arc::new(VirtualTimer::new(clock()));
    let too_open = Github::from_config(&gh_cfg, timer.clone()).unwrap_err();
    assert!(too_open.to_string().contains("chmod 600"), "{too_open}");
    seen.push_str(&format!("{too_open}\n{too_open:?}\n"));
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();

    let data = dir.path().join("data");
    let (store, id) = incident_fixture(&data);
    let clk = clock();
    let mock = GithubMock::start(Some(clk.clone())).await;
    mock.push_fault(Fault::SucceedThen502 {
        method: "POST",
        path_suffix: "/issues",
    });
    mock.push_fault(Fault::Limit {
        method: "PATCH",
        path_suffix: "",
        status: 403,
        kind: LimitKind::Secondary,
    });
    let mut cfg_mock = gh_cfg.clone();
    cfg_mock.api_url = mock.url.clone();
    let gh = Github::from_config(&cfg_mock, Arc::new(VirtualTimer::new(clk.clone()))).unwrap();
    seen.push_str(&format!("{gh:?}\n{cfg:?}\n{gh_cfg:?}\n"));
    let repo = "acme/pm".parse().unwrap();
    for target in [Target::Pr, Target::Issue] {
        for d in queue_and_deliver(&store, &id, &gh, &repo, target, None)
            .await
            .unwrap()
        {
            seen.push_str(&format!("{:?}\n", d.result));
            if let Err(e) = &d.result {
                seen.push_str(&format!("{e}\n"));
            }
        }
    }
    // GitHub down: the errors are looked at too.
    let gh_down = Github::from_config(&gh_cfg, timer).unwrap();
    for d in queue_and_deliver(&store, &id, &gh_down, &repo, Target::Pr, None)
        .await
        .unwrap()
    {
        let e = d.result.unwrap_err();
        seen.push_str(&format!("{e}\n{e:?}\n"));
    }
    let plan = warroom::github::plan::plan(
        &warroom::github::Publication::load(&store, &id).unwrap(),
        &repo,
        Target::Pr,
        &Default::default(),
        None,
    );
    seen.push_str(&format!("{plan:?}\n"));
    all_files(&data, &mut seen);
    let log = mock.log();
    assert!(log.len() > 20, "{}", log.len());
    for l in &log {
        assert_eq!(
            l.auth.as_deref(),
            Some(format!("Bearer {CANARY}").as_str()),
            "{}",
            l.path
        );
        seen.push_str(&format!("{} {} {}\n", l.method, l.path, l.body));
    }
    let logged = String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned();
    assert!(!logged.is_empty(), "the subscriber captured the run's logs");
    seen.push_str(&logged);
    let occurrences = seen.matches(CANARY).count();
    println!(
        "token canary: {occurrences} occurrences in {} bytes of logs, errors, Debug output, files and {} requests",
        seen.len(),
        log.len()
    );
    assert_eq!(occurrences, 0);
}
