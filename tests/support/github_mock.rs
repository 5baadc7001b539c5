//! A stand-in for the GitHub REST API on loopback, with state (issues, pull requests, branches,
//! files) so that publishing can be tested end to end, and faults to inject: rate limits of
//! each kind, a create that succeeds and then answers 502, a server that never answers.
//!
//! Requests are logged with the time of a shared clock (a `ManualClock` moved by the client's
//! `VirtualTimer`, or the wall clock), so tests compute pacing and waits from what the server
//! saw. Include with `#[path = "support/github_mock.rs"] mod github_mock;`.
#![allow(dead_code)]

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use warroom::clock::{Clock, ManualClock};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    /// Path and query.
    pub path: String,
    pub at: DateTime<Utc>,
    pub body: String,
    pub auth: Option<String>,
    /// The status the mock answered.
    pub status: u16,
}

impl Logged {
    pub fn is_write(&self) -> bool {
        self.method != "GET"
    }
}

/// How a rate-limit refusal is expressed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimitKind {
    RetryAfter(u64),
    /// `x-ratelimit-remaining: 0` and a reset this many seconds ahead.
    Reset(u64),
    /// Neither header: a secondary limit.
    Secondary,
}

/// A fault applied to the next request that matches.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Refuse with `status` (403 or 429) as `kind` says.
    Limit {
        method: &'static str,
        path_suffix: &'static str,
        status: u16,
        kind: LimitKind,
    },
    /// Do the request, then answer 502 as if it had failed.
    SucceedThen502 {
        method: &'static str,
        path_suffix: &'static str,
    },
}

#[derive(Debug, Clone)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
    pub assignees: Vec<String>,
    pub pr_head: Option<String>,
    pub state: String,
}

#[derive(Debug, Default)]
pub struct MockState {
    pub clock: Option<ManualClock>,
    pub log: Vec<Logged>,
    pub issues: Vec<Issue>,
    /// branch → commit sha
    pub refs: BTreeMap<String, String>,
    /// (branch, path) → bytes
    pub files: BTreeMap<(String, String), Vec<u8>>,
    pub assignable: Vec<String>,
    pub faults: VecDeque<Fault>,
    /// The changes feed's fixture: `deployments`, `statuses` (by deployment id), `releases`,
    /// `pulls`.
    pub changes: Value,
    /// Requests being handled now, and the most at once.
    pub in_flight: u32,
    pub max_in_flight: u32,
    counter: u64,
}

impl MockState {
    fn now(&self) -> DateTime<Utc> {
        match &self.clock {
            Some(c) => c.now(),
            None => Utc::now(),
        }
    }
    pub fn prs(&self) -> Vec<&Issue> {
        self.issues.iter().filter(|i| i.pr_head.is_some()).collect()
    }
    pub fn plain_issues(&self) -> Vec<&Issue> {
        self.issues.iter().filter(|i| i.pr_head.is_none()).collect()
    }
}

/// A running mock.
pub struct GithubMock {
    pub url: String,
    pub state: Arc<Mutex<MockState>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for GithubMock {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl GithubMock {
    /// Starts on a free loopback port.
    pub async fn start(clock: Option<ManualClock>) -> GithubMock {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve(listener, clock)
    }

    /// Starts on `port` (the mock "comes back" where a client was already pointed).
    pub async fn start_on(port: u16, clock: Option<ManualClock>) -> GithubMock {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        Self::serve(listener, clock)
    }

    fn serve(listener: tokio::net::TcpListener, clock: Option<ManualClock>) -> GithubMock {
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mut st = MockState {
            clock,
            ..Default::default()
        };
        st.refs.insert("main".into(), "0".repeat(40));
        st.assignable = vec!["ana".into(), "bob".into()];
        let state = Arc::new(Mutex::new(st));
        let s = state.clone();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let s = s.clone();
                async move {
                    {
                        let mut st = s.lock().unwrap();
                        st.in_flight += 1;
                        st.max_in_flight = st.max_in_flight.max(st.in_flight);
                    }
                    // Long enough for a second request to overlap if the client allowed one.
                    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
                    let resp = handle(&s, method, uri, headers, body);
                    s.lock().unwrap().in_flight -= 1;
                    resp
                }
            },
        );
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        GithubMock { url, state, server }
    }

    pub fn log(&self) -> Vec<Logged> {
        self.state.lock().unwrap().log.clone()
    }

    pub fn push_fault(&self, f: Fault) {
        self.state.lock().unwrap().faults.push_back(f);
    }
}

/// A loopback server that accepts connections and never answers; its sockets stay open until
/// the returned task is aborted.
pub async fn never_answers() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
            if held.len() > 64 {
                break;
            }
        }
        std::future::pending::<()>().await;
    });
    (url, task)
}

fn handle(
    state: &Mutex<MockState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut st = state.lock().unwrap();
    let path = uri.path().to_string();
    let query: BTreeMap<String, String> = uri
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let now = st.now();
    let text = String::from_utf8_lossy(&body).into_owned();
    let mut logged = Logged {
        method: method.to_string(),
        path: uri
            .path_and_query()
            .map(std::string::ToString::to_string)
            .unwrap_or_default(),
        at: now,
        body: text.clone(),
        auth: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(String::from),
        status: 0,
    };
    // Faults first.
    let hit = st.faults.iter().position(|f| match f {
        Fault::Limit {
            method: m,
            path_suffix,
            ..
        }
        | Fault::SucceedThen502 {
            method: m,
            path_suffix,
        } => *m == method.as_str() && path.ends_with(path_suffix),
    });
    let fault = hit.and_then(|i| st.faults.remove(i));
    if let Some(Fault::Limit { status, kind, .. }) = &fault {
        logged.status = *status;
        st.log.push(logged);
        let mut resp = (
            StatusCode::from_u16(*status).unwrap(),
            axum::Json(json!({"message": match kind {
                LimitKind::Secondary => "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                _ => "API rate limit exceeded",
            }})),
        )
            .into_response();
        let h = resp.headers_mut();
        match kind {
            LimitKind::RetryAfter(s) => {
                h.insert("retry-after", s.to_string().parse().unwrap());
            }
            LimitKind::Reset(s) => {
                h.insert("x-ratelimit-remaining", "0".parse().unwrap());
                let reset = now.timestamp() + *s as i64;
                h.insert("x-ratelimit-reset", reset.to_string().parse().unwrap());
            }
            LimitKind::Secondary => {}
        }
        return resp;
    }
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let (status, answer) = route(&mut st, &method, &path, &query, &body);
    let status = if matches!(fault, Some(Fault::SucceedThen502 { .. })) {
        502
    } else {
        status
    };
    logged.status = status;
    st.log.push(logged);
    if status == 502 {
        return (StatusCode::BAD_GATEWAY, "<html>502 Bad Gateway</html>").into_response();
    }
    if status == 204 {
        return StatusCode::NO_CONTENT.into_response();
    }
    (StatusCode::from_u16(status).unwrap(), axum::Json(answer)).into_response()
}

fn issue_json(i: &Issue) -> Value {
    let kind = if i.pr_head.is_some() {
        "pull"
    } else {
        "issues"
    };
    json!({
        "number": i.number,
        "title": i.title,
        "body": i.body,
        "labels": i.labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>(),
        "assignees": i.assignees.iter().map(|l| json!({"login": l})).collect::<Vec<_>>(),
        "html_url": format!("https://github.example/acme/pm/{kind}/{}", i.number),
        "head": i.pr_head.as_ref().map(|h| json!({"ref": h})),
        "state": i.state,
    })
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn route(
    st: &mut MockState,
    method: &Method,
    path: &str,
    q: &BTreeMap<String, String>,
    body: &Value,
) -> (u16, Value) {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if parts.len() < 3 || parts[0] != "repos" {
        return (404, json!({"message": "Not Found"}));
    }
    let rest = &parts[3..];
    let m = method.as_str();
    let not_found = (404, json!({"message": "Not Found"}));
    match (m, rest) {
        ("GET", []) => (200, json!({"default_branch": "main"})),
        ("GET", ["git", "ref", "heads", branch @ ..]) => match st.refs.get(&branch.join("/")) {
            Some(sha) => (
                200,
                json!({"ref": format!("refs/heads/{}", branch.join("/")), "object": {"sha": sha}}),
            ),
            None => not_found,
        },
        ("POST", ["git", "refs"]) => {
            let name = body["ref"]
                .as_str()
                .unwrap_or("")
                .trim_start_matches("refs/heads/")
                .to_string();
            if st.refs.contains_key(&name) {
                return (422, json!({"message": "Reference already exists"}));
            }
            st.refs
                .insert(name.clone(), body["sha"].as_str().unwrap_or("").into());
            (201, json!({"ref": format!("refs/heads/{name}")}))
        }
        ("GET", ["contents", file @ ..]) => {
            let key = (
                q.get("ref").cloned().unwrap_or("main".into()),
                file.join("/"),
            );
            match st.files.get(&key) {
                Some(bytes) => {
                    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
                    let wrapped: Vec<String> = b64
                        .as_bytes()
                        .chunks(60)
                        .map(|c| String::from_utf8_lossy(c).into_owned())
                        .collect();
                    (
                        200,
                        json!({"sha": format!("sha-{}", bytes.len()), "content": wrapped.join("\n"), "html_url": format!("https://github.example/acme/pm/blob/{}/{}", key.0, key.1)}),
                    )
                }
                None => not_found,
            }
        }
        ("PUT", ["contents", file @ ..]) => {
            let branch = body["branch"].as_str().unwrap_or("main").to_string();
            let key = (branch.clone(), file.join("/"));
            if st.files.contains_key(&key) && body["sha"].is_null() {
                return (422, json!({"message": "\"sha\" wasn't supplied."}));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(body["content"].as_str().unwrap_or(""))
                .unwrap_or_default();
            let existed = st.files.insert(key.clone(), bytes).is_some();
            (
                if existed { 200 } else { 201 },
                json!({"content": {"html_url": format!("https://github.example/acme/pm/blob/{}/{}", key.0, key.1)}}),
            )
        }
        ("GET", ["pulls"]) if q.get("state").map(String::as_str) == Some("closed") => {
            (200, st.changes["pulls"].clone())
        }
        ("GET", ["pulls"]) => {
            let head = q
                .get("head")
                .and_then(|h| h.split_once(':'))
                .map(|(_, b)| b.to_string());
            let list: Vec<Value> = st
                .prs()
                .into_iter()
                .filter(|p| head.is_none() || p.pr_head == head)
                .map(issue_json)
                .collect();
            (200, json!(list))
        }
        ("POST", ["pulls"]) => {
            let head = body["head"].as_str().unwrap_or("").to_string();
            if st.prs().iter().any(|p| p.pr_head.as_deref() == Some(&head)) {
                return (422, json!({"message": "A pull request already exists"}));
            }
            let i = new_issue(st, body, Some(head));
            (201, issue_json(&i))
        }
        ("GET" | "PATCH", ["pulls" | "issues", n]) => {
            let Ok(n) = n.parse::<u64>() else {
                return not_found;
            };
            let is_pull = rest[0] == "pulls";
            let Some(i) = st
                .issues
                .iter_mut()
                .find(|i| i.number == n && (!is_pull || i.pr_head.is_some()))
            else {
                return not_found;
            };
            if m == "PATCH" {
                if let Some(t) = body["title"].as_str() {
                    i.title = t.into();
                }
                if let Some(b) = body["body"].as_str() {
                    i.body = b.into();
                }
                if body["labels"].is_array() {
                    i.labels = strs(&body["labels"]);
                }
                if let Some(state) = body["state"].as_str() {
                    i.state = state.into();
                }
                if body["assignees"].is_array() {
                    i.assignees = strs(&body["assignees"]);
                }
            }
            (200, issue_json(i))
        }
        ("GET", ["issues"]) => {
            let per_page: usize = q.get("per_page").and_then(|p| p.parse().ok()).unwrap_or(30);
            let page: usize = q.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
            let mut all: Vec<&Issue> = st.issues.iter().collect();
            all.sort_by_key(|i| std::cmp::Reverse(i.number));
            let list: Vec<Value> = all
                .into_iter()
                .skip((page - 1) * per_page)
                .take(per_page)
                .map(issue_json)
                .collect();
            (200, json!(list))
        }
        ("POST", ["issues"]) => {
            let i = new_issue(st, body, None);
            (201, issue_json(&i))
        }
        ("GET", ["assignees", login]) => {
            if st.assignable.iter().any(|a| a == login) {
                (204, Value::Null)
            } else {
                not_found
            }
        }
        ("GET", ["deployments"]) => (200, st.changes["deployments"].clone()),
        ("GET", ["deployments", id, "statuses"]) => {
            let list = st.changes["statuses"][*id].clone();
            (200, if list.is_null() { json!([]) } else { list })
        }
        ("GET", ["releases"]) => (200, st.changes["releases"].clone()),
        _ => not_found,
    }
}

fn new_issue(st: &mut MockState, body: &Value, pr_head: Option<String>) -> Issue {
    st.counter += 1;
    let i = Issue {
        number: st.counter,
        title: body["title"].as_str().unwrap_or("").into(),
        body: body["body"].as_str().unwrap_or("").into(),
        labels: strs(&body["labels"]),
        assignees: strs(&body["assignees"]),
        pr_head,
        state: "open".into(),
    };
    st.issues.push(i.clone());
    i
}

/// An incident with a title, three action items and an export (Markdown with a chart link
/// and a mention, one chart), as `warroom export` would leave it.
pub fn incident_fixture(
    data_dir: &std::path::Path,
) -> (warroom::incident::Store, warroom::incident::IncidentId) {
    use warroom::incident::event::{Event, Priority, Severity, Source};
    let store = warroom::incident::Store::new(data_dir);
    let id = store.create(Utc::now()).unwrap();
    let (mut inc, _) = store
        .open_incident(&id, warroom::incident::store::Role::Cli)
        .unwrap();
    let mut add = |e: Event| {
        inc.journal.append(Source::Operator, "ana", e).unwrap();
    };
    add(Event::IncidentOpened {
        title: "Journey planner outage".into(),
        severity: Severity::Sev1,
    });
    add(Event::ActionItem {
        id: "AI-1".into(),
        action: "Add a retry budget to the gateway @everyone\n```\nrm -rf /\n```".into(),
        owner: Some("ana".into()),
        priority: Some(Priority::P1),
        due: Some("2026-12-15".parse().unwrap()),
    });
    add(Event::ActionItem {
        id: "AI-2".into(),
        action: "Alert on pool saturation".into(),
        owner: Some("DB team".into()),
        priority: Some(Priority::P2),
        due: None,
    });
    add(Event::ActionItem {
        id: "AI-3".into(),
        action: "Batch restarts with a health gate".into(),
        owner: Some("@eve".into()),
        priority: None,
        due: None,
    });
    drop(inc);
    write_export(
        &store,
        &id,
        "# Journey planner outage\n\nPinged @oncall.\n\n![pool](charts/pool.svg)\n",
    );
    (store, id)
}

/// Writes (or rewrites) the incident's export.
pub fn write_export(
    store: &warroom::incident::Store,
    id: &warroom::incident::IncidentId,
    markdown: &str,
) {
    let dir = store.exports_dir(id);
    std::fs::create_dir_all(dir.join("charts")).unwrap();
    std::fs::write(dir.join("postmortem.md"), markdown).unwrap();
    std::fs::write(
        dir.join("charts/pool.svg"),
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
    )
    .unwrap();
}

/// A client of `url` whose waits move `clock` (no real waiting), with a short call timeout.
pub fn client(url: &str, clock: &ManualClock, token: &str) -> warroom::github::Github {
    let timer = warroom::github::VirtualTimer::new(clock.clone());
    warroom::github::Github::new(
        url,
        Some(&warroom::secret::Secret::new(token)),
        std::time::Duration::from_secs(5),
        Arc::new(timer),
    )
    .unwrap()
}

/// A virtual clock at a fixed instant.
pub fn clock() -> ManualClock {
    ManualClock::new("2026-11-29T10:00:00Z".parse().unwrap())
}
