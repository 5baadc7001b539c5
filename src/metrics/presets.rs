//! Signal presets: for each common exporter or library (a *stack*), the PromQL of every signal
//! it can give, as data. One TOML file per stack in `src/metrics/presets/`, embedded at build
//! time ([`BUILTIN`]); each `[[panel]]` entry has the shape of a `warroom.toml` `[[panel]]`
//! plus what discovery needs: the signal it answers, its priority, the name generation
//! (`variant`) it belongs to and the grouping label candidates (`group`) its `$group`
//! placeholder is filled with. The metric names a preset needs are read from its query.
//!
//! ```toml
//! [stack]
//! id = "hikaricp"                  # lower-case, unique
//! name = "HikariCP"                # shown in the status bar: "found HikariCP"
//! probe = ["hikaricp_connections"] # label names are asked once on these (grouping, variants)
//! group = ["pool"]                 # default candidates for $group, best first
//!
//! [[variant]]                      # a name generation; present when any `detect` name is
//! id = "micrometer"                # present and all `labels` are on the probe series
//! detect = ["hikaricp_connections_max"]
//!
//! [[panel]]
//! signal = "saturation"            # at most one panel per signal and stack: the first listed
//! priority = 10                    # whose metrics exist; lower priorities come first
//! variant = "micrometer"
//! title = "HikariCP pool saturation"
//! query = "sum by ($group) (hikaricp_connections_active) / (sum by ($group) (hikaricp_connections_max) > 0)"
//! unit = "percent"
//! warn = 0.8
//! crit = 0.95
//! legend = "$group"                # becomes {{pool}}
//! ```

use crate::config::panels::{PanelConfig, RawPanel};
use crate::diagnostic::Diagnostic;
use serde::Deserialize;
use serde_spanned::Spanned;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The placeholder a preset's query and legend use for the chosen grouping label(s).
pub const GROUP: &str = "$group";

/// The presets shipped with warroom: `(file name, text)`, in the order their stacks are
/// listed when several are found.
pub const BUILTIN: &[(&str, &str)] = &[
    ("postgres.toml", include_str!("presets/postgres.toml")),
    ("pgbouncer.toml", include_str!("presets/pgbouncer.toml")),
    ("hikaricp.toml", include_str!("presets/hikaricp.toml")),
    ("gosql.toml", include_str!("presets/gosql.toml")),
    ("otel.toml", include_str!("presets/otel.toml")),
    ("rails.toml", include_str!("presets/rails.toml")),
    ("haproxy.toml", include_str!("presets/haproxy.toml")),
    ("envoy.toml", include_str!("presets/envoy.toml")),
    ("istio.toml", include_str!("presets/istio.toml")),
    ("linkerd.toml", include_str!("presets/linkerd.toml")),
    (
        "ingress-nginx.toml",
        include_str!("presets/ingress-nginx.toml"),
    ),
    (
        "kube-state-metrics.toml",
        include_str!("presets/kube-state-metrics.toml"),
    ),
    ("cadvisor.toml", include_str!("presets/cadvisor.toml")),
    ("redis.toml", include_str!("presets/redis.toml")),
    ("sim.toml", include_str!("presets/sim.toml")),
];

/// The core signals of a database-bound outage (DESIGN.md), in the order they matter. A
/// preset may answer another signal (`longest-transaction`, `waiting-clients`...); these are
/// the ones every stack is checked against.
pub const CORE_SIGNALS: &[&str] = &[
    "saturation",
    "pool-wait",
    "query-latency",
    "retry-amplification",
    "error-ratio",
    "queue-depth",
    "instances-up",
    "restarts",
];

/// A set of stacks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Presets {
    pub stacks: Vec<Stack>,
}

/// One exporter or library and the signals it gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Stack {
    pub id: String,
    /// How the stack is named to the user ("postgres_exporter", "HAProxy").
    pub name: String,
    pub about: Option<String>,
    /// When not empty, the stack is found only if one of these names exists.
    pub detect: Vec<String>,
    /// Metric names whose label names are asked once, to choose groups and label variants.
    pub probe: Vec<String>,
    pub variants: Vec<Variant>,
    /// In file order: for one signal, the first whose metrics exist is chosen.
    pub panels: Vec<Preset>,
    /// The file it came from (`postgres.toml`), for messages.
    pub file: String,
}

/// A name generation or flavour of an exporter.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub id: String,
    /// Shown in reports ("pgbouncer_exporter ≥ 0.11").
    pub name: String,
    /// Present when any of these names exists (always, when empty).
    pub detect: Vec<String>,
    /// ...and all of these labels are on the probe series.
    pub labels: Vec<String>,
}

/// A set of labels to group by, e.g. `["job", "pool_name"]`.
pub type Group = Vec<String>;

/// One signal of one stack, as a panel with `$group` still in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub signal: String,
    pub priority: u32,
    pub variant: Option<String>,
    /// Candidates for `$group`, best first; empty when the query has no `$group`.
    pub group: Vec<Group>,
    /// What a reader should know about the figure ("an average, not a quantile").
    pub note: Option<String>,
    /// The metric names the query reads; the preset applies only when all exist.
    pub needs: Vec<String>,
    pub panel: PanelConfig,
}

impl Preset {
    /// The panel with `$group` filled: `sum by ($group)` becomes `sum by (job, pool_name)` and
    /// a legend `$group` becomes `{{job}} {{pool_name}}`.
    pub fn resolve(&self, group: &[String]) -> PanelConfig {
        let by = group.join(", ");
        let legend_group = group
            .iter()
            .map(|l| format!("{{{{{l}}}}}"))
            .collect::<Vec<_>>()
            .join(" ");
        PanelConfig {
            query: self.panel.query.replace(GROUP, &by),
            legend: self
                .panel
                .legend
                .as_ref()
                .map(|l| l.replace(GROUP, &legend_group)),
            ..self.panel.clone()
        }
    }

    /// The first grouping candidate (what `$group` becomes when nothing is known).
    pub fn default_group(&self) -> &[String] {
        self.group.first().map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Why a preset file could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct PresetError(pub Diagnostic);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    stack: RawStack,
    #[serde(default)]
    variant: Vec<Spanned<RawVariant>>,
    #[serde(default)]
    panel: Vec<Spanned<RawPreset>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStack {
    id: Spanned<String>,
    name: String,
    about: Option<String>,
    #[serde(default)]
    detect: Vec<String>,
    #[serde(default)]
    probe: Vec<String>,
    #[serde(default)]
    group: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariant {
    id: String,
    name: String,
    #[serde(default)]
    detect: Vec<String>,
    #[serde(default)]
    labels: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPreset {
    signal: String,
    priority: u32,
    variant: Option<String>,
    group: Option<Vec<String>>,
    note: Option<String>,
    title: String,
    query: String,
    #[serde(default)]
    unit: crate::config::Unit,
    warn: Option<f64>,
    crit: Option<f64>,
    #[serde(default)]
    bad_when: crate::config::BadWhen,
    legend: Option<String>,
}

/// `"job, pool_name"` → `["job", "pool_name"]`.
fn parse_group(s: &str) -> Result<Group, String> {
    let labels: Group = s.split(',').map(|l| l.trim().to_string()).collect();
    for l in &labels {
        if !is_label_name(l) {
            return Err(format!(
                "group \"{s}\": \"{l}\" is not a label name (expected letters, digits and _, such as \"pool\" or \"job, pool_name\")"
            ));
        }
    }
    Ok(labels)
}

fn is_label_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_id(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A metric name as discovery may see it: the classic form or an OpenTelemetry dotted one.
fn is_metric_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.'))
}

pub use super::selectors::metric_names;

impl Presets {
    /// Parse one preset file; `file` names it in messages. Every query is parsed as PromQL
    /// with each of its grouping candidates filled in.
    pub fn parse_stack(file: &str, text: &str) -> Result<Stack, PresetError> {
        Presets::parse_stack_with(file, text, true)
    }

    /// [`Presets::parse_stack`], with the PromQL of its queries parsed (`check`) or taken as it
    /// is: the simulator's panels on the way to the first frame skip it, as the shipped presets
    /// are parsed whole by their tests, and the first PromQL parse decodes the parser's tables.
    fn parse_stack_with(file: &str, text: &str, check: bool) -> Result<Stack, PresetError> {
        let err = |span: Option<std::ops::Range<usize>>, msg: String| {
            PresetError(Diagnostic::at(file, text, span, msg))
        };
        let raw: RawFile =
            toml::from_str(text).map_err(|e| PresetError(Diagnostic::from_toml(file, text, &e)))?;
        let s = raw.stack;
        if !is_id(s.id.get_ref()) {
            return Err(err(
                Some(s.id.span()),
                format!(
                    "stack id \"{}\" must be lower-case letters, digits and -, such as \"postgres\"",
                    s.id.get_ref()
                ),
            ));
        }
        let name_list = |what: &str, names: &[String]| -> Result<(), String> {
            match names.iter().find(|n| !is_metric_name(n)) {
                Some(n) => Err(format!("{what}: \"{n}\" is not a metric name")),
                None => Ok(()),
            }
        };
        name_list("[stack] detect", &s.detect).map_err(|m| err(None, m))?;
        name_list("[stack] probe", &s.probe).map_err(|m| err(None, m))?;
        let stack_group = s
            .group
            .iter()
            .map(|g| parse_group(g))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| err(None, format!("[stack] {m}")))?;
        let mut variants: Vec<Variant> = Vec::new();
        for v in raw.variant {
            let span = v.span();
            let v = v.into_inner();
            if !is_id(&v.id) || variants.iter().any(|o| o.id == v.id) {
                return Err(err(
                    Some(span),
                    format!(
                        "variant id \"{}\" must be unique, lower-case letters, digits and -",
                        v.id
                    ),
                ));
            }
            name_list("variant detect", &v.detect).map_err(|m| err(Some(span.clone()), m))?;
            if let Some(l) = v.labels.iter().find(|l| !is_label_name(l)) {
                return Err(err(
                    Some(span),
                    format!("variant labels: \"{l}\" is not a label name"),
                ));
            }
            if !v.labels.is_empty() && s.probe.is_empty() {
                return Err(err(
                    Some(span),
                    format!(
                        "variant \"{}\" needs labels but [stack] has no probe: name the metrics whose labels tell",
                        v.id
                    ),
                ));
            }
            variants.push(Variant {
                id: v.id,
                name: crate::sanitize::line(&v.name).into_owned(),
                detect: v.detect,
                labels: v.labels,
            });
        }
        let mut panels = Vec::new();
        for p in raw.panel {
            let span = p.span();
            let p = p.into_inner();
            let preset = preset(p, &stack_group, &variants, !s.probe.is_empty(), check)
                .map_err(|m| err(Some(span), m))?;
            panels.push(preset);
        }
        if panels.is_empty() {
            return Err(err(
                None,
                "a preset file needs at least one [[panel]]".into(),
            ));
        }
        Ok(Stack {
            id: s.id.into_inner(),
            name: crate::sanitize::line(&s.name).into_owned(),
            about: s.about.map(|a| crate::sanitize::line(&a).into_owned()),
            detect: s.detect,
            probe: s.probe,
            variants,
            panels,
            file: file.to_string(),
        })
    }

    /// Parse several files (in order); stack ids must be unique.
    pub fn parse(files: &[(&str, &str)]) -> Result<Presets, PresetError> {
        let mut stacks: Vec<Stack> = Vec::new();
        for (file, text) in files {
            let stack = Presets::parse_stack(file, text)?;
            if let Some(o) = stacks.iter().find(|o| o.id == stack.id) {
                return Err(PresetError(Diagnostic::at(
                    *file,
                    text,
                    None,
                    format!(
                        "stack id \"{}\" is already used by {}; give this stack another id",
                        stack.id, o.file
                    ),
                )));
            }
            stacks.push(stack);
        }
        Ok(Presets { stacks })
    }

    /// The shipped presets, parsed once. Every shipped file is checked by a unit test; should
    /// one ever fail to parse, the others are still served.
    pub fn builtin() -> &'static Presets {
        static BUILT: OnceLock<Presets> = OnceLock::new();
        BUILT.get_or_init(|| Presets {
            stacks: BUILTIN
                .iter()
                .filter_map(|(file, text)| Presets::parse_stack(file, text).ok())
                .collect(),
        })
    }

    /// The shipped presets with the `*.toml` files of `dir` on top: a file whose stack id is
    /// a shipped one replaces it, any other is added after them. A missing directory is no
    /// error; a broken file is, with its place.
    pub fn with_dir(dir: &std::path::Path) -> Result<Presets, PresetError> {
        let mut p = Presets::builtin().clone();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(p);
        };
        let mut files: Vec<std::path::PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for f in files {
            let name = f.display().to_string();
            let text = std::fs::read_to_string(&f).map_err(|e| {
                PresetError(Diagnostic::at(
                    &name,
                    "",
                    None,
                    format!("cannot read it: {e}"),
                ))
            })?;
            let stack = Presets::parse_stack(&name, &text)?;
            match p.stacks.iter_mut().find(|s| s.id == stack.id) {
                Some(s) => *s = stack,
                None => p.stacks.push(stack),
            }
        }
        Ok(p)
    }

    pub fn stack(&self, id: &str) -> Option<&Stack> {
        self.stacks.iter().find(|s| s.id == id)
    }

    /// Every metric name any preset reads or detects by, sorted and unique.
    pub fn all_names(&self) -> Vec<String> {
        let mut names = BTreeSet::new();
        for s in &self.stacks {
            names.extend(s.detect.iter().cloned());
            names.extend(s.probe.iter().cloned());
            for v in &s.variants {
                names.extend(v.detect.iter().cloned());
            }
            for p in &s.panels {
                names.extend(p.needs.iter().cloned());
            }
        }
        names.into_iter().collect()
    }
}

fn preset(
    p: RawPreset,
    stack_group: &[Group],
    variants: &[Variant],
    has_probe: bool,
    check: bool,
) -> Result<Preset, String> {
    let title = p.title.clone();
    if !is_id(&p.signal) {
        return Err(format!(
            "panel \"{title}\": signal \"{}\" must be lower-case words joined by -, such as \"saturation\"",
            p.signal
        ));
    }
    if !(1..=999).contains(&p.priority) {
        return Err(format!(
            "panel \"{title}\": priority {} must be 1..=999 (lower comes first)",
            p.priority
        ));
    }
    if let Some(v) = &p.variant
        && !variants.iter().any(|o| &o.id == v)
    {
        return Err(format!(
            "panel \"{title}\": variant \"{v}\" is not declared by a [[variant]] in this file"
        ));
    }
    let group = match &p.group {
        Some(g) => g
            .iter()
            .map(|g| parse_group(g))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| format!("panel \"{title}\": {m}"))?,
        None => stack_group.to_vec(),
    };
    let uses_group =
        p.query.contains(GROUP) || p.legend.as_deref().is_some_and(|l| l.contains(GROUP));
    if uses_group && group.is_empty() {
        return Err(format!(
            "panel \"{title}\" uses {GROUP} but neither it nor [stack] has a group"
        ));
    }
    if group.len() > 1 && !has_probe {
        return Err(format!(
            "panel \"{title}\" has several group candidates but [stack] has no probe to choose between them"
        ));
    }
    let raw = RawPanel {
        title: p.title,
        query: p.query,
        unit: p.unit,
        warn: p.warn,
        crit: p.crit,
        bad_when: p.bad_when,
        legend: p.legend,
        signal: Some(p.signal.clone()),
        ..RawPanel::default()
    };
    let panel = raw.validate()?;
    let mut preset = Preset {
        signal: p.signal,
        priority: p.priority,
        variant: p.variant,
        group: if uses_group { group } else { Vec::new() },
        note: p.note.map(|n| crate::sanitize::line(&n).into_owned()),
        needs: Vec::new(),
        panel,
    };
    if !check {
        return Ok(preset);
    }
    // Check the query with every candidate filled in; the names it reads do not depend on
    // the group.
    let candidates: Vec<Group> = if preset.group.is_empty() {
        vec![Vec::new()]
    } else {
        preset.group.clone()
    };
    for g in &candidates {
        let q = preset.resolve(g).query;
        let names = metric_names(&q).map_err(|e| {
            format!(
                "panel \"{title}\": the query does not parse as PromQL with {GROUP} = \"{}\": {}",
                g.join(", "),
                e.trim()
            )
        })?;
        if names.is_empty() {
            return Err(format!(
                "panel \"{title}\": the query names no metric, so discovery cannot tell when it applies"
            ));
        }
        preset.needs = names;
    }
    Ok(preset)
}

/// The simulator's preset as panels: the dashboard of the demo, the rehearsals and the tests,
/// which ask for it (an empty `[[panel]]` list means discovery). Only `sim.toml` is parsed, not every shipped stack, and its PromQL is not: loading the config is
/// on the way to the console's first frame, and the fourteen stacks with their PromQL checked
/// took 3.5 ms of it (issue 20). Discovery, after the first frame, parses them all.
pub fn sim_panels() -> Vec<PanelConfig> {
    static SIM: OnceLock<Option<Stack>> = OnceLock::new();
    let sim = SIM.get_or_init(|| {
        let (file, text) = BUILTIN.iter().find(|(file, _)| *file == "sim.toml")?;
        Presets::parse_stack_with(file, text, false).ok()
    });
    (sim.iter())
        .flat_map(|s| s.panels.iter().map(|p| p.resolve(&[])))
        .collect()
}

#[cfg(test)]
#[path = "presets_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "sim_panels_tests.rs"]
mod sim_panels_tests;
