//! A loaded, checked runbook: what the plan shows and the executor runs.

use super::gate::GateSpec;
pub use super::haproxy::{HaproxyOp, HaproxySpec, ServerState};
pub use super::rows::{RowCondition, ValueTest};
pub use super::sql::{PasswordSource, SqlSpec};
use super::template::Template;
use std::path::PathBuf;
use std::time::Duration;

/// Default time an `exec` step may run.
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// Default time an `http` request may take (each attempt).
pub const DEFAULT_HTTP_TIMEOUT: Duration = Duration::from_secs(10);
/// Default deadline of an `http` action, all attempts and waits included.
pub const DEFAULT_HTTP_DEADLINE: Duration = Duration::from_secs(30);
/// Default time a `wait` step polls before it gives up.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(300);

/// A runbook: a name, a description, variables and ordered steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Runbook {
    pub name: String,
    pub description: String,
    /// The file it was loaded from.
    pub file: PathBuf,
    /// A hash of the file's bytes: a run records it, and a changed runbook cannot resume.
    pub hash: String,
    pub variables: Vec<Variable>,
    pub steps: Vec<Step>,
    /// Where it acts and the symptom it answers (`[applies]`); `None` in a runbook of the
    /// user's that does not say, which is then never suggested.
    pub applies: Option<Applies>,
}

/// Where a runbook can act, and the symptom that calls for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Applies {
    pub on: Acts,
    /// Read-only: holds (by the gate's own rules) when this runbook is the move to consider.
    pub symptom: Option<crate::runbook::gate::GateSpec>,
    /// The symptom's reading in words, for the headline.
    pub label: Option<crate::runbook::label::Label>,
}

/// What a runbook acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acts {
    /// The simulator's control API: rehearsals only.
    Simulator,
    /// The user's own systems.
    Real,
}

impl Acts {
    /// As `[applies] on = "…"` names it.
    pub fn name(self) -> &'static str {
        match self {
            Acts::Simulator => "simulator",
            Acts::Real => "real",
        }
    }

    /// Why a runbook acting on this cannot act here (`rehearsal`: the console is on the
    /// simulator), or `None` when it can.
    pub fn refused_here(self, rehearsal: bool) -> Option<&'static str> {
        match (self, rehearsal) {
            (Acts::Real, true) => Some("acts on real systems, not on a rehearsal"),
            (Acts::Simulator, false) => {
                Some("acts on the simulator's control API: rehearsals only")
            }
            _ => None,
        }
    }
}

impl Runbook {
    /// The read-only steps that must pass before it helps (`precondition = true`).
    pub fn preconditions(&self) -> impl Iterator<Item = &Step> {
        self.steps.iter().filter(|s| s.precondition)
    }

    pub fn step(&self, id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }

    /// The id of a run of this runbook started at `at`: it names the run's record file
    /// (`runs/<id>.jsonl`), so the name's own rules (`load::unsafe_name`) keep it one short,
    /// visible file name.
    pub fn run_id(&self, at: chrono::DateTime<chrono::Utc>) -> String {
        format!("{}-{}", self.name, at.format("%Y%m%dT%H%M%S%.3fZ"))
    }
}

/// A variable: a default (overridable by `--var`), or read from the environment.
#[derive(Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub default: Option<String>,
    pub description: String,
    /// Masked everywhere it could be shown.
    pub secret: bool,
    /// Environment variable to read the value from (secrets come from there, never the file).
    pub env: Option<String>,
    /// What values are accepted; a number or bool variable used alone as a JSON value is sent
    /// as a JSON number or bool.
    pub kind: VarKind,
}

/// The type of a variable's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    String,
    Number,
    Bool,
    /// A duration such as "15s"; a duration field may be exactly `"{{name}}"`.
    Duration,
}

impl std::fmt::Debug for Variable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variable")
            .field("name", &self.name)
            .field(
                "default",
                &if self.secret {
                    self.default.as_ref().map(|_| "***")
                } else {
                    self.default.as_deref()
                },
            )
            .field("secret", &self.secret)
            .field("env", &self.env)
            .finish()
    }
}

/// One step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub id: String,
    pub title: String,
    /// Changes the system: needs confirmation, never runs in a dry run.
    pub mutating: bool,
    /// The run may go on without it (`skippable = true`): declining its confirmation can skip it
    /// instead of stopping the run.
    pub skippable: bool,
    /// A read-only check that must hold before the runbook helps (`precondition = true`).
    pub precondition: bool,
    /// A precondition's reading in words, for the headline.
    pub label: Option<crate::runbook::label::Label>,
    pub kind: StepKind,
}

/// Declares the step kinds once: the [`Kind`] enum (what a runbook's `kind = "…"` names, read
/// by serde from the same strings), [`Kind::ALL`] and [`Kind::name`]. A kind added here is in
/// every list (the journal's reading of step starts uses [`Kind::ALL`]); [`StepKind::kind`] is an
/// exhaustive match, so a new [`StepKind`] variant cannot be left without its [`Kind`].
macro_rules! step_kinds {
    ($($variant:ident => $name:literal),+ $(,)?) => {
        /// The kind of a step, as a runbook names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
        pub enum Kind {
            $(#[serde(rename = $name)] $variant,)+
        }

        impl Kind {
            /// Every kind, in the order a runbook's documentation lists them.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant,)+];

            /// The name a runbook writes, e.g. `"sql"`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$variant => $name,)+
                }
            }
        }
    };
}

step_kinds! {
    Check => "check",
    Wait => "wait",
    Http => "http",
    Exec => "exec",
    Batch => "batch",
    Manual => "manual",
    Note => "note",
    Sql => "sql",
    Haproxy => "haproxy",
}

impl Kind {
    /// The kind `name` names (as a runbook or a journal's step start writes it), if any.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Whether a step of this kind can change something (a request, a command, a statement, a
    /// rollout), as against reading (a check, a wait) or asking a person (manual, note).
    pub fn acts(self) -> bool {
        match self {
            Kind::Http | Kind::Exec | Kind::Batch | Kind::Sql | Kind::Haproxy => true,
            Kind::Check | Kind::Wait | Kind::Manual | Kind::Note => false,
        }
    }
}

/// The kinds of step.
#[derive(Debug, Clone, PartialEq)]
pub enum StepKind {
    /// A condition must hold now (the gate's counts apply).
    Check(GateSpec),
    /// Poll a condition until it holds or the timeout passes.
    Wait {
        gate: GateSpec,
        timeout: Duration,
    },
    Http(HttpSpec),
    Exec(ExecSpec),
    Batch(Box<BatchSpec>),
    /// An instruction the operator carries out and confirms.
    Manual {
        text: String,
    },
    Note {
        text: String,
    },
    /// A statement on PostgreSQL or PgBouncer's admin console.
    Sql(SqlSpec),
    /// A command of HAProxy's runtime API.
    Haproxy(HaproxySpec),
}

impl StepKind {
    /// The kind, by an exhaustive match.
    pub fn kind(&self) -> Kind {
        match self {
            StepKind::Check(_) => Kind::Check,
            StepKind::Wait { .. } => Kind::Wait,
            StepKind::Http(_) => Kind::Http,
            StepKind::Exec(_) => Kind::Exec,
            StepKind::Batch(_) => Kind::Batch,
            StepKind::Manual { .. } => Kind::Manual,
            StepKind::Note { .. } => Kind::Note,
            StepKind::Sql(_) => Kind::Sql,
            StepKind::Haproxy(_) => Kind::Haproxy,
        }
    }

    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// Whether the step reads Prometheus (a gate, or a batch's health and targets): a run of a
    /// runbook with such a step needs a metrics source.
    pub fn uses_metrics(&self) -> bool {
        match self {
            StepKind::Check(_) | StepKind::Wait { .. } | StepKind::Batch(_) => true,
            StepKind::Http(_)
            | StepKind::Exec(_)
            | StepKind::Manual { .. }
            | StepKind::Note { .. }
            | StepKind::Sql(_)
            | StepKind::Haproxy(_) => false,
        }
    }

    /// Whether the step asks its own confirmations (a batch asks one per batch) rather than
    /// the executor asking once before a mutating step.
    pub fn confirms_itself(&self) -> bool {
        match self {
            StepKind::Batch(_) => true,
            StepKind::Manual { .. }
            | StepKind::Check(_)
            | StepKind::Wait { .. }
            | StepKind::Http(_)
            | StepKind::Exec(_)
            | StepKind::Note { .. }
            | StepKind::Sql(_)
            | StepKind::Haproxy(_) => false,
        }
    }

    /// Whether the step reads what it judges (a check's gate, a sql or haproxy step's rows), so
    /// that, when it does not change the system, it can be a precondition.
    /// The numeric condition a reading step judges: a check's gate, an `sql` or `haproxy`
    /// step's `expect` on a number; `None` for any other step.
    pub fn condition(&self) -> Option<crate::runbook::gate::Condition> {
        let expect = match self {
            StepKind::Check(g) => return Some(g.condition),
            StepKind::Sql(s) => s.expect.as_ref(),
            StepKind::Haproxy(h) => h.expect.as_ref(),
            _ => None,
        };
        match expect?.test {
            ValueTest::Number(c) => Some(c),
            ValueTest::Equals(_) => None,
        }
    }

    pub fn reads(&self) -> bool {
        match self {
            StepKind::Check(_) | StepKind::Sql(_) | StepKind::Haproxy(_) => true,
            StepKind::Batch(_)
            | StepKind::Manual { .. }
            | StepKind::Wait { .. }
            | StepKind::Http(_)
            | StepKind::Exec(_)
            | StepKind::Note { .. } => false,
        }
    }
}

/// HTTP methods a step may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn parse(s: &str) -> Option<Method> {
        Some(match s.to_ascii_uppercase().as_str() {
            "GET" => Method::Get,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// Whether a request with this method changes the system unless declared otherwise.
    pub fn mutates(self) -> bool {
        !matches!(self, Method::Get)
    }
}

/// A JSON body whose string values are templates.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonTemplate {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(Template),
    /// A whole value `"{{name}}"` of a number or bool variable, sent as that JSON type.
    Typed(String, VarKind),
    Array(Vec<JsonTemplate>),
    Object(Vec<(String, JsonTemplate)>),
}

/// A request to a control endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSpec {
    pub method: Method,
    pub url: Template,
    pub headers: Vec<(String, Template)>,
    pub json: Option<JsonTemplate>,
    /// Per attempt.
    pub timeout: Duration,
    /// All attempts and waits included.
    pub deadline: Duration,
}

/// A program run with an argv list (never a shell string).
#[derive(Debug, Clone, PartialEq)]
pub struct ExecSpec {
    pub argv: Vec<Template>,
    pub timeout: Duration,
    pub grace: Duration,
}

/// What a batch does to each target (one of a short sequence).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Http(HttpSpec),
    Exec(ExecSpec),
    Sql(SqlSpec),
    Haproxy(HaproxySpec),
}

impl Action {
    /// The kind of step this action is.
    pub fn kind(&self) -> Kind {
        match self {
            Action::Http(_) => Kind::Http,
            Action::Exec(_) => Kind::Exec,
            Action::Sql(_) => Kind::Sql,
            Action::Haproxy(_) => Kind::Haproxy,
        }
    }
}

/// Where a batch's targets come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Targets {
    List(Vec<String>),
    /// An instant query; each series' `label` value is a target, in sorted order.
    Query {
        query: Template,
        label: String,
    },
    /// The servers of an HAProxy backend (`show servers state BACKEND`), in its order.
    Haproxy {
        socket: Template,
        backend: Template,
    },
}

/// How big a batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchSize {
    Count(usize),
    /// Percent of the targets, 1..=100, rounded up, at least one.
    Percent(u8),
}

impl BatchSize {
    /// The number of instances per batch for `n` targets.
    pub fn resolve(self, n: usize) -> usize {
        match self {
            BatchSize::Count(c) => c.max(1),
            BatchSize::Percent(p) => (n * usize::from(p)).div_ceil(100).max(1),
        }
    }
}

/// Restart targets in batches with a budget, a soak and a health gate between batches.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchSpec {
    pub targets: Targets,
    pub size: BatchSize,
    /// Most instances unavailable at once, counting those already unhealthy. Defaults to the
    /// batch size.
    pub max_unavailable: Option<usize>,
    /// Instances that may fail to come back over the whole run; once spent, no batch starts.
    pub failure_budget: usize,
    /// An instance counts as healthy only after this long healthy without interruption.
    pub soak: Duration,
    /// Readings this soon after an instance's action are ignored (they may predate it).
    pub settle: Duration,
    /// Time from an instance's action until it must count healthy.
    pub instance_deadline: Duration,
    /// Time for the whole batch step; after it no new action starts.
    pub deadline: Duration,
    /// What is done to each target, in order; the first that does not succeed ends the
    /// target's sequence (a server whose restart failed is not made ready).
    pub actions: Vec<Action>,
    /// Per-instance health (uses `{{target}}`), judged on each reading.
    pub instance: GateSpec,
    /// The fleet's health gate between batches.
    pub gate: Option<GateSpec>,
}

#[cfg(test)]
mod tests {
    use super::Kind;

    /// The name a runbook writes is the name serde reads, for every kind.
    #[test]
    fn every_kind_reads_back_from_its_name() {
        #[derive(serde::Deserialize)]
        struct K {
            kind: Kind,
        }
        for k in Kind::ALL {
            let parsed: K = toml::from_str(&format!("kind = \"{}\"", k.name())).unwrap();
            assert_eq!(parsed.kind, *k);
        }
        let names: std::collections::BTreeSet<_> = Kind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), Kind::ALL.len(), "two kinds share a name");
    }
}
