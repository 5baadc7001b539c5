//! Alertmanager silences through its v2 API (issue 35): create (`POST /api/v2/silences`), list
//! (`GET /api/v2/silences`, kept to one incident's by the mark in the comment), expire
//! (`DELETE /api/v2/silence/{id}`), and count the alerts some matchers select now
//! (`GET /api/v2/alerts?filter=…`). Requests carry the configured headers (a Mimir or Cortex
//! Alertmanager's `X-Scope-OrgID`).
//!
//! A silence is checked before anything is sent ([`SilenceSpec::check`]): no matchers, an
//! empty one, one that matches every value (unless confirmed), an end before its start or past
//! the ceiling are refused. A create is never retried blind: after a failure that may have
//! reached Alertmanager, its silences are read first, and one equal to ours (same matchers,
//! end, author and comment) is ours.

use super::endpoint::EndpointError;
use super::{AlertEndpoint, endpoint};
use crate::backoff::Backoff;
use crate::config::Config;
use crate::incident::event::AlertSource;
use crate::incident::silence::{IncidentMark, MatchOp, Matcher, SilenceChange, SilenceRecord};
use crate::metrics::SourceError;
use crate::metrics::prometheus::Auth;
use crate::sanitize;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use url::Url;

/// A matcher as Alertmanager's API writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiMatcher {
    pub name: String,
    pub value: String,
    pub is_regex: bool,
    #[serde(default = "yes")]
    pub is_equal: bool,
}

fn yes() -> bool {
    true
}

impl From<&Matcher> for ApiMatcher {
    fn from(m: &Matcher) -> ApiMatcher {
        ApiMatcher {
            name: m.name.clone(),
            value: m.value.clone(),
            is_regex: m.op.is_regex(),
            is_equal: m.op.is_equal(),
        }
    }
}

impl From<&ApiMatcher> for Matcher {
    fn from(m: &ApiMatcher) -> Matcher {
        Matcher::new(
            m.name.clone(),
            MatchOp::from_flags(m.is_regex, m.is_equal),
            m.value.clone(),
        )
        .sanitized()
    }
}

/// A silence as Alertmanager takes it and gives it back, without its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SilenceSpec {
    pub matchers: Vec<ApiMatcher>,
    /// Alertmanager moves a start in the past to when it got the silence.
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// The author (`$WARROOM_ACTOR`).
    pub created_by: String,
    /// [`IncidentMark::comment`]: the incident's mark, then the note.
    pub comment: String,
}

/// A silence to create (`id` set: to update that one, as an extension does).
#[derive(Serialize)]
struct PostableSilence<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(flatten)]
    spec: &'a SilenceSpec,
}

/// Where a silence stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SilenceState {
    Active,
    Pending,
    Expired,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SilenceStatus {
    pub state: SilenceState,
}

/// A silence as Alertmanager lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Silence {
    pub id: String,
    pub status: SilenceStatus,
    #[serde(flatten)]
    pub spec: SilenceSpec,
}

impl Silence {
    /// Its matchers in the journal's terms, sanitized.
    pub fn matchers(&self) -> Vec<Matcher> {
        self.spec.matchers()
    }

    /// Whether it is in force or will be (not expired).
    pub fn in_force(&self) -> bool {
        self.status.state != SilenceState::Expired
    }

    /// Whether it is `wanted` as created (what a lost answer to a create leaves to compare;
    /// Alertmanager moves a start in the past to when it got the silence).
    fn is(&self, wanted: &SilenceSpec) -> bool {
        let s = &self.spec;
        s.matchers == wanted.matchers
            && s.ends_at == wanted.ends_at
            && s.created_by == wanted.created_by
            && s.comment == wanted.comment
            && self.in_force()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Created {
    #[serde(rename = "silenceID")]
    silence_id: String,
}

/// A silence warroom refuses to send, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "a silence needs at least one matcher: name the alert, e.g. --match alertname=PoolSaturated"
    )]
    NoMatchers,
    #[error(
        "the matcher {0} is empty: give a label name and a value (a silence on an empty value \
         matches only alerts without the label)"
    )]
    EmptyMatcher(String),
    #[error(
        "the matcher {0} matches every value of its label, so the silence would hide alerts \
         nobody has seen yet; confirm it (--confirm-broad) if that is what you mean"
    )]
    MatchesEverything(String),
    #[error("the silence would end ({end}) before it starts ({start})")]
    EndBeforeStart {
        start: DateTime<Utc>,
        end: DateTime<Utc>,
    },
    #[error(
        "a silence of {asked} is longer than the ceiling of {ceiling} ([alertmanager] \
         silence_ceiling); silence for less and extend it while the incident lasts"
    )]
    AboveCeiling { asked: String, ceiling: String },
}

/// Tries of one create (each after a look at what Alertmanager holds).
pub const CREATE_ATTEMPTS: u32 = 3;

/// Values a label may take, for telling a matcher that matches every value from one that
/// names some: none of them is likely to be named.
const PROBES: [&str; 5] = ["a", "Z9", "warroom-probe", "x y/z:-_.", "ünïcødé"];

/// Whether `m` matches every value its label can take (`=~".*"`, `!=""`, `!~""` …).
pub fn matches_everything(m: &Matcher) -> bool {
    let anchored = |re: &str| regex::Regex::new(&format!("^(?:{re})$")).ok();
    match m.op {
        MatchOp::Equal => false,
        MatchOp::NotEqual => m.value.is_empty(),
        MatchOp::Regex => anchored(&m.value).is_some_and(|r| PROBES.iter().all(|p| r.is_match(p))),
        MatchOp::NotRegex => anchored(&m.value)
            .is_some_and(|r| r.is_match("") && !PROBES.iter().any(|p| r.is_match(p))),
    }
}

impl SilenceSpec {
    /// A silence of the incident `mark` names from now for `length`, by `author`, with `note`.
    pub fn new(
        mark: &IncidentMark,
        matchers: Vec<Matcher>,
        now: DateTime<Utc>,
        length: Duration,
        author: &str,
        note: &str,
    ) -> SilenceSpec {
        // Whole seconds: Alertmanager answers times in milliseconds, and a silence read back
        // must compare equal to the one sent.
        let now =
            chrono::DurationRound::duration_trunc(now, chrono::Duration::seconds(1)).unwrap_or(now);
        let length = chrono::Duration::from_std(length).unwrap_or(chrono::Duration::MAX);
        SilenceSpec {
            matchers: matchers.iter().map(ApiMatcher::from).collect(),
            starts_at: now,
            ends_at: now.checked_add_signed(length).unwrap_or(now),
            created_by: author.to_string(),
            comment: mark.comment(note),
        }
    }

    /// Its matchers in the journal's terms, sanitized.
    pub fn matchers(&self) -> Vec<Matcher> {
        self.matchers.iter().map(Matcher::from).collect()
    }

    /// The refusals of issue 35's point 5; `broad_confirmed` lets a matcher that matches every
    /// value through.
    pub fn check(&self, ceiling: Duration, broad_confirmed: bool) -> Result<(), Refusal> {
        if self.matchers.is_empty() {
            return Err(Refusal::NoMatchers);
        }
        for m in &self.matchers() {
            let empty_value = m.value.is_empty() && m.op.is_equal();
            if m.name.trim().is_empty() || empty_value {
                return Err(Refusal::EmptyMatcher(m.shown()));
            }
            if !broad_confirmed && matches_everything(m) {
                return Err(Refusal::MatchesEverything(m.shown()));
            }
        }
        if self.ends_at <= self.starts_at {
            return Err(Refusal::EndBeforeStart {
                start: self.starts_at,
                end: self.ends_at,
            });
        }
        let asked = (self.ends_at - self.starts_at).to_std().unwrap_or_default();
        if asked > ceiling {
            let shown = |d: Duration| humantime::format_duration(d).to_string();
            return Err(Refusal::AboveCeiling {
                asked: shown(asked),
                ceiling: shown(ceiling),
            });
        }
        Ok(())
    }
}

/// Why a silence request to Alertmanager failed.
#[derive(Debug, thiserror::Error)]
pub enum SilenceError {
    #[error("{0}")]
    Refused(#[from] Refusal),
    #[error("Alertmanager at {url}: {error}")]
    Source { url: String, error: SourceError },
    #[error("Alertmanager at {url} has no silence {id}")]
    NotFound { url: String, id: String },
    #[error("Alertmanager at {url} answered something that is not {what}: {reason}")]
    BadAnswer {
        url: String,
        what: &'static str,
        reason: String,
    },
}

/// Why the silence client the config asks for cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum SilenceConfigError {
    #[error(
        "no Alertmanager is configured: set [alertmanager] url in the config file, or pass \
         --alertmanager URL"
    )]
    NoAlertmanager,
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
}

/// An Alertmanager's silences.
#[derive(Debug, Clone)]
pub struct SilenceClient {
    /// Its alerts endpoint, whose client and reader every request goes through.
    endpoint: AlertEndpoint,
    /// `…/api/v2/`.
    api: Url,
    timeout: Duration,
}

impl SilenceClient {
    pub fn new(
        base: &str,
        headers: &[(String, String)],
        timeout: Duration,
    ) -> Result<SilenceClient, EndpointError> {
        let endpoint = AlertEndpoint::new(
            AlertSource::Alertmanager,
            base,
            Auth::None,
            headers,
            timeout,
        )?;
        Ok(SilenceClient {
            api: endpoint::api_url("Alertmanager", base, "api/v2/")?,
            endpoint,
            timeout,
        })
    }

    /// The Alertmanager `config` names, with its headers.
    pub fn from_config(config: &Config) -> Result<SilenceClient, SilenceConfigError> {
        let url = config
            .alertmanager
            .as_deref()
            .ok_or(SilenceConfigError::NoAlertmanager)?;
        Ok(SilenceClient::new(
            url,
            &config
                .alerts
                .alertmanager_headers(&config.prometheus.headers),
            config.alerts.timeout,
        )?)
    }

    fn base(&self) -> String {
        self.api.as_str().trim_end_matches("api/v2/").to_string()
    }

    fn url(&self, path: &str) -> Url {
        self.api.join(path).expect("a relative API path")
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<Vec<u8>, SourceError> {
        match tokio::time::timeout(self.timeout, self.endpoint.call(req)).await {
            Ok(r) => r,
            Err(_) => Err(SourceError::Timeout(self.timeout)),
        }
    }

    fn source(&self, error: SourceError) -> SilenceError {
        SilenceError::Source {
            url: self.base(),
            error,
        }
    }

    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        body: &[u8],
        what: &'static str,
    ) -> Result<T, SilenceError> {
        serde_json::from_slice(body).map_err(|e| SilenceError::BadAnswer {
            url: self.base(),
            what,
            reason: sanitize::line(&e.to_string()).into_owned(),
        })
    }

    /// Every silence Alertmanager holds (expired ones too, while it keeps them).
    pub async fn list(&self) -> Result<Vec<Silence>, SilenceError> {
        let body = self
            .send(self.endpoint.http().get(self.url("silences")))
            .await
            .map_err(|e| self.source(e))?;
        self.decode(&body, "a list of silences")
    }

    /// The silences of the incident `mark` names.
    pub async fn of_incident(&self, mark: &IncidentMark) -> Result<Vec<Silence>, SilenceError> {
        let mut all = self.list().await?;
        all.retain(|s| mark.marks(&s.spec.comment));
        Ok(all)
    }

    /// One silence by id.
    pub async fn get(&self, id: &str) -> Result<Silence, SilenceError> {
        let url = self.url(&format!("silence/{}", urlencoding(id)));
        match self.send(self.endpoint.http().get(url)).await {
            Ok(body) => self.decode(&body, "a silence"),
            Err(SourceError::Http { status: 404, .. }) => Err(self.not_found(id)),
            Err(e) => Err(self.source(e)),
        }
    }

    fn not_found(&self, id: &str) -> SilenceError {
        SilenceError::NotFound {
            url: self.base(),
            id: sanitize::line(id).into_owned(),
        }
    }

    /// Creates the silence (`id`: updates that one) and returns its id. A failure that may
    /// have reached Alertmanager is followed by a look at its silences before a second try,
    /// so one silence is made however often the answer is lost; `attempts` bounds the tries.
    pub async fn create(
        &self,
        wanted: &SilenceSpec,
        id: Option<String>,
        attempts: u32,
    ) -> Result<String, SilenceError> {
        let body = PostableSilence { id, spec: wanted };
        let backoff = Backoff {
            base: Duration::from_millis(500),
            cap: Duration::from_secs(5),
            max_attempts: attempts.max(1),
        };
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::from_os_rng();
        let mut attempt = 0;
        loop {
            let req = self.endpoint.http().post(self.url("silences")).json(&body);
            let error = match self.send(req).await {
                Ok(body) => return Ok(self.decode::<Created>(&body, "a silence id")?.silence_id),
                Err(e) if !e.is_transient() => return Err(self.source(e)),
                Err(e) => e,
            };
            attempt += 1;
            if attempt >= backoff.max_attempts {
                return Err(self.source(error));
            }
            tracing::warn!(error = %error, attempt, "silence create failed; looking before retrying");
            tokio::time::sleep(backoff.delay(attempt - 1, &mut rng)).await;
            if let Ok(all) = self.list().await
                && let Some(found) = all.iter().find(|s| s.is(wanted))
            {
                return Ok(found.id.clone());
            }
        }
    }

    /// Expires silence `id`; one already expired is left as it is (`false`).
    pub async fn expire(&self, id: &str) -> Result<bool, SilenceError> {
        if !self.get(id).await?.in_force() {
            return Ok(false);
        }
        let url = self.url(&format!("silence/{}", urlencoding(id)));
        match self.send(self.endpoint.http().delete(url)).await {
            Ok(_) => Ok(true),
            Err(SourceError::Http { status: 404, .. }) => Err(self.not_found(id)),
            Err(e) => Err(self.source(e)),
        }
    }

    /// How many alerts `matchers` select now (silenced and inhibited ones included).
    pub async fn matching_alerts(&self, matchers: &[Matcher]) -> Result<usize, SilenceError> {
        let mut url = self.url("alerts");
        {
            let mut q = url.query_pairs_mut();
            for m in matchers {
                q.append_pair("filter", &m.shown());
            }
        }
        let body = self
            .send(self.endpoint.http().get(url))
            .await
            .map_err(|e| self.source(e))?;
        let alerts: Vec<serde::de::IgnoredAny> = self.decode(&body, "a list of alerts")?;
        Ok(alerts.len())
    }
}

/// Makes the silence `wanted` (after [`SilenceSpec::check`]) and gives the journal's record of
/// it: what `warroom silence add` and the console's silence dialog both record.
pub async fn make(
    client: &SilenceClient,
    wanted: &SilenceSpec,
    ceiling: Duration,
    broad_confirmed: bool,
    attempts: u32,
) -> Result<SilenceRecord, SilenceError> {
    wanted.check(ceiling, broad_confirmed)?;
    let id = client.create(wanted, None, attempts).await?;
    Ok(SilenceRecord {
        change: SilenceChange::Made,
        id,
        matchers: wanted.matchers(),
        until: wanted.ends_at,
        author: wanted.created_by.clone(),
    })
}

/// Expires silence `id` (of `matchers`) for `author` and gives the journal's record of it;
/// `None` when it had already expired (nothing to record).
pub async fn expire_recorded(
    client: &SilenceClient,
    id: &str,
    matchers: Vec<Matcher>,
    author: &str,
) -> Result<Option<SilenceRecord>, SilenceError> {
    if !client.expire(id).await? {
        return Ok(None);
    }
    Ok(Some(SilenceRecord {
        change: SilenceChange::Expired,
        id: id.to_string(),
        matchers,
        until: Utc::now(),
        author: author.to_string(),
    }))
}

/// Moves the end of silence `id` to `until` (Alertmanager updates it in place: same start and
/// matchers) and gives the journal's records: "extended" (under the new id, after "expired"
/// for the old one, when Alertmanager replaced it rather than updated it).
pub async fn extend(
    client: &SilenceClient,
    id: &str,
    until: DateTime<Utc>,
    author: &str,
    attempts: u32,
) -> Result<Vec<SilenceRecord>, SilenceError> {
    let old = client.get(id).await?;
    let mut spec = old.spec.clone();
    spec.ends_at = until;
    let new = client.create(&spec, Some(old.id.clone()), attempts).await?;
    let record = |change, id: &str, until| SilenceRecord {
        change,
        id: id.to_string(),
        matchers: old.matchers(),
        until,
        author: author.to_string(),
    };
    let mut out = Vec::new();
    if new != old.id {
        out.push(record(SilenceChange::Expired, &old.id, Utc::now()));
    }
    out.push(record(SilenceChange::Extended, &new, until));
    Ok(out)
}

/// A silence id as one path segment.
fn urlencoding(id: &str) -> String {
    url::form_urlencoded::byte_serialize(id.trim().as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Matcher {
        s.parse().unwrap()
    }

    fn request(matchers: &[&str], minutes: i64) -> SilenceSpec {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let mut s = SilenceSpec::new(
            &IncidentMark::new("2026-12-04-1"),
            matchers.iter().map(|s| m(s)).collect(),
            now,
            Duration::ZERO,
            "ana",
            "",
        );
        s.ends_at = now + chrono::Duration::minutes(minutes);
        s
    }

    const CEILING: Duration = Duration::from_secs(12 * 3600);

    #[test]
    fn every_refusal_of_point_5_and_what_passes() {
        let check = |r: SilenceSpec| r.check(CEILING, false);
        assert_eq!(check(request(&[], 60)), Err(Refusal::NoMatchers));
        for empty in ["alertname=", "=x", "alertname=~\"\""] {
            assert!(
                matches!(check(request(&[empty], 60)), Err(Refusal::EmptyMatcher(_))),
                "{empty}"
            );
        }
        for every in [
            "job=~.*",
            "job=~\".+\"",
            "job!=\"\"",
            "job!~\"\"",
            "job=~(.*|x)",
        ] {
            let r = request(&["alertname=X", every], 60);
            assert!(
                matches!(check(r.clone()), Err(Refusal::MatchesEverything(_))),
                "{every}"
            );
            assert_eq!(r.check(CEILING, true), Ok(()), "confirmed: {every}");
        }
        for fine in ["job=api", "job!=api", "pod=~api-.*", "pod!~api-.*"] {
            assert_eq!(check(request(&[fine], 60)), Ok(()), "{fine}");
        }
        assert!(matches!(
            check(request(&["alertname=X"], -5)),
            Err(Refusal::EndBeforeStart { .. })
        ));
        assert!(matches!(
            check(request(&["alertname=X"], 0)),
            Err(Refusal::EndBeforeStart { .. })
        ));
        assert_eq!(check(request(&["alertname=X"], 12 * 60)), Ok(()));
        let long = check(request(&["alertname=X"], 12 * 60 + 1));
        assert!(
            matches!(long, Err(Refusal::AboveCeiling { .. })),
            "{long:?}"
        );
        assert!(long.unwrap_err().to_string().contains("12h 1m"));
    }

    #[test]
    fn matchers_go_to_the_api_as_its_flags_and_come_back_the_same() {
        for s in ["a=b", "a!=b", "a=~b.*", "a!~b"] {
            let api = ApiMatcher::from(&m(s));
            assert_eq!(Matcher::from(&api), m(s));
        }
        let json = serde_json::to_value(ApiMatcher::from(&m("job!~x"))).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"name": "job", "value": "x", "isRegex": true, "isEqual": false})
        );
    }
}
