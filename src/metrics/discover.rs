//! Discovery: which stacks of [`presets`](super::presets) a Prometheus holds, and the dashboard
//! they give. A pure core and a thin async [`driver`]:
//!
//! 1. [`names_selector`] is the one `match[]` of the names request
//!    (`/api/v1/label/__name__/values`); [`detect`] reads the names that came back.
//! 2. For a detected stack that must choose a grouping label or a label variant,
//!    [`Detected::probe`] gives the one label-names request (`/api/v1/labels?match[]=...`).
//! 3. [`Detected::resolve`] picks the variants, the groups and, for each signal, the first
//!    preset whose metrics all exist; [`build`] orders every stack's signals by priority into
//!    a [`Dashboard`].
//!
//! [`report`] turns a discovery and instant readings into what `warroom discover` prints.

pub mod driver;
pub mod report;

use super::presets::{Group, Presets, Stack};
use crate::config::PanelConfig;
use crate::config::panels::render_toml;
use std::collections::{BTreeMap, BTreeSet};

pub use driver::{DiscoverError, DiscoverOptions, Discovery, discover};
pub use report::{Reading, Report, Value, read_values};

/// The panels a discovered dashboard shows at most (the grid scrolls; the report lists all).
pub const MAX_PANELS: usize = 16;

/// What an empty panel says about the metric it needed (`no series for X · warroom discover`).
pub fn empty_hint(needs: &[String]) -> Option<String> {
    needs
        .first()
        .map(|n| format!("no series for {n} · warroom discover"))
}

/// [`empty_hint`] for any panel, configured or discovered: the first metric its query reads.
pub fn empty_hint_for_query(query: &str) -> Option<String> {
    super::presets::metric_names(query)
        .ok()
        .and_then(|n| empty_hint(&n))
}

/// The `match[]` selector of the names request: every name the presets read, with names that
/// share their first two words folded into one prefix (`pg_stat_.*`), so the URL stays short.
pub fn names_selector(presets: &Presets) -> String {
    let mut by_stem: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in presets.all_names() {
        by_stem.entry(stem(&n)).or_default().push(n);
    }
    let mut parts: Vec<String> = Vec::new();
    for (stem, names) in by_stem {
        if names.len() > 1 && !stem.is_empty() {
            parts.push(format!("{}.*", regex::escape(&stem)));
        } else {
            parts.extend(names.iter().map(|n| regex::escape(n)));
        }
    }
    // Inside a PromQL double-quoted string a backslash is written twice.
    let re = parts.join("|").replace('\\', "\\\\");
    format!("{{__name__=~\"{re}\"}}")
}

/// The first two words and their separators (`pg_stat_` of `pg_stat_activity_count`), or ""
/// for a name of two words or fewer, which stays whole.
fn stem(name: &str) -> String {
    let mut seps = name.match_indices(['_', '.']);
    match (seps.next(), seps.next()) {
        (Some(_), Some((i, _))) if i + 1 < name.len() => name[..=i].to_string(),
        _ => String::new(),
    }
}

/// A stack whose metrics are among the names the server listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    pub stack: Stack,
    /// Its names that exist.
    pub present: BTreeSet<String>,
}

/// The stacks with at least one preset whose metrics all exist in `names`, in preset order.
pub fn detect<S: AsRef<str>>(presets: &Presets, names: &[S]) -> Vec<Detected> {
    let wanted: BTreeSet<String> = presets.all_names().into_iter().collect();
    let have: BTreeSet<String> = names
        .iter()
        .map(std::convert::AsRef::as_ref)
        .filter(|n| wanted.contains(*n))
        .map(str::to_string)
        .collect();
    presets
        .stacks
        .iter()
        .filter_map(|stack| {
            let d = Detected {
                stack: stack.clone(),
                present: have.clone(),
            };
            let detected = (stack.detect.is_empty()
                || stack.detect.iter().any(|n| have.contains(n)))
                && stack.panels.iter().any(|p| d.available_by_name(p));
            detected.then(|| {
                let mine: BTreeSet<String> = stack_names(stack)
                    .into_iter()
                    .filter(|n| have.contains(n))
                    .collect();
                Detected { present: mine, ..d }
            })
        })
        .collect()
}

fn stack_names(stack: &Stack) -> BTreeSet<String> {
    let mut n: BTreeSet<String> = stack.detect.iter().cloned().collect();
    n.extend(stack.probe.iter().cloned());
    for v in &stack.variants {
        n.extend(v.detect.iter().cloned());
    }
    for p in &stack.panels {
        n.extend(p.needs.iter().cloned());
    }
    n
}

impl Detected {
    fn variant_by_name(&self, id: &str) -> bool {
        self.stack
            .variants
            .iter()
            .find(|v| v.id == id)
            .is_some_and(|v| {
                v.detect.is_empty() || v.detect.iter().any(|n| self.present.contains(n))
            })
    }

    fn available_by_name(&self, p: &super::presets::Preset) -> bool {
        p.needs.iter().all(|n| self.present.contains(n))
            && p.variant.as_deref().is_none_or(|v| self.variant_by_name(v))
    }

    /// The `match[]` selectors of the one label-names request this stack needs, or `None` when
    /// nothing depends on labels (no label variant, no choice of group).
    pub fn probe(&self) -> Option<Vec<String>> {
        let label_variant = self
            .stack
            .variants
            .iter()
            .any(|v| !v.labels.is_empty() && self.variant_by_name(&v.id));
        let choice = self
            .stack
            .panels
            .iter()
            .any(|p| p.group.len() > 1 && self.available_by_name(p));
        if !(label_variant || choice) {
            return None;
        }
        let selectors: Vec<String> = self
            .stack
            .probe
            .iter()
            .filter(|n| self.present.contains(*n))
            .map(|n| selector_for(n))
            .collect();
        (!selectors.is_empty()).then_some(selectors)
    }

    /// Choose variants, groups and one preset per signal. `labels` is the answer of the probe:
    /// `None` when none was needed or it failed, in which case label variants count as present
    /// (a panel that shows nothing is better than a signal silently left out) and each group
    /// is its first candidate.
    pub fn resolve(&self, labels: Option<&BTreeSet<String>>) -> Found {
        let variant_ok = |id: &str| -> bool {
            let Some(v) = self.stack.variants.iter().find(|v| v.id == id) else {
                return false;
            };
            self.variant_by_name(id)
                && (v.labels.is_empty()
                    || labels.is_none_or(|l| v.labels.iter().all(|x| l.contains(x))))
        };
        let mut signals: Vec<SignalPanel> = Vec::new();
        let mut missing: Vec<Missing> = Vec::new();
        for (order, p) in self.stack.panels.iter().enumerate() {
            if signals.iter().any(|s| s.signal == p.signal) {
                continue;
            }
            let names_ok = p.needs.iter().all(|n| self.present.contains(n));
            let var_ok = p.variant.as_deref().is_none_or(variant_ok);
            if !(names_ok && var_ok) {
                continue;
            }
            let group = choose_group(&p.group, labels);
            signals.push(SignalPanel {
                stack: self.stack.id.clone(),
                stack_name: self.stack.name.clone(),
                signal: p.signal.clone(),
                priority: p.priority,
                order,
                variant: p.variant.as_ref().and_then(|id| {
                    self.stack
                        .variants
                        .iter()
                        .find(|v| &v.id == id)
                        .map(|v| v.name.clone())
                }),
                group: group.clone(),
                note: p.note.clone(),
                needs: p.needs.clone(),
                panel: p.resolve(&group),
            });
        }
        for p in &self.stack.panels {
            if signals.iter().any(|s| s.signal == p.signal)
                || missing.iter().any(|m| m.signal == p.signal)
            {
                continue;
            }
            missing.push(Missing {
                signal: p.signal.clone(),
                title: p.panel.title.clone(),
                absent: p
                    .needs
                    .iter()
                    .filter(|n| !self.present.contains(*n))
                    .cloned()
                    .collect(),
                note: p.note.clone(),
            });
        }
        let variants = self
            .stack
            .variants
            .iter()
            .filter(|v| variant_ok(&v.id))
            .map(|v| v.name.clone())
            .collect();
        Found {
            stack: self.stack.id.clone(),
            name: self.stack.name.clone(),
            variants,
            signals,
            missing,
        }
    }
}

/// `{__name__="x"}` for a name (dotted names need the quoted form anyway).
fn selector_for(name: &str) -> String {
    format!(
        "{{__name__=\"{}\"}}",
        name.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

fn choose_group(candidates: &[Group], labels: Option<&BTreeSet<String>>) -> Group {
    if let Some(l) = labels
        && let Some(g) = candidates.iter().find(|g| g.iter().all(|x| l.contains(x)))
    {
        return g.clone();
    }
    candidates.first().cloned().unwrap_or_default()
}

/// A stack found on the server: its variants and one panel per signal it answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub stack: String,
    pub name: String,
    /// Names of the variants present ("pgbouncer_exporter ≥ 0.11 (pgbouncer_stats_totals_*)").
    pub variants: Vec<String>,
    pub signals: Vec<SignalPanel>,
    /// Signals the stack has presets for whose metrics are not there.
    pub missing: Vec<Missing>,
}

/// A signal a stack could give but does not here, and the metrics that are absent.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    pub signal: String,
    pub title: String,
    pub absent: Vec<String>,
    pub note: Option<String>,
}

/// One signal of one stack, ready to show.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalPanel {
    pub stack: String,
    pub stack_name: String,
    pub signal: String,
    pub priority: u32,
    /// Position in its preset file (ties of priority keep file order).
    pub order: usize,
    /// The variant's name, when the preset belongs to one.
    pub variant: Option<String>,
    /// The grouping labels `$group` became.
    pub group: Group,
    pub note: Option<String>,
    /// The metrics the query reads, in query order: the first is named by an empty panel.
    pub needs: Vec<String>,
    pub panel: PanelConfig,
}

impl SignalPanel {
    /// What the panel says when its query returns no series.
    pub fn empty_hint(&self) -> String {
        empty_hint(&self.needs).unwrap_or_else(|| "no series · warroom discover".into())
    }
}

/// The discovered dashboard.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Dashboard {
    pub panels: Vec<SignalPanel>,
    /// The names of the stacks found, in preset order.
    pub stacks: Vec<String>,
}

/// Every found stack's signals ordered by priority (then preset order, then file order), at
/// most `max_panels` of them. One panel per signal and stack; two stacks answering the same
/// signal both show.
pub fn build(found: &[Found], max_panels: usize) -> Dashboard {
    let mut panels: Vec<(usize, SignalPanel)> = found
        .iter()
        .enumerate()
        .flat_map(|(i, f)| f.signals.iter().map(move |s| (i, s.clone())))
        .collect();
    panels.sort_by_key(|(i, s)| (s.priority, *i, s.order));
    Dashboard {
        panels: panels
            .into_iter()
            .take(max_panels)
            .map(|(_, s)| s)
            .collect(),
        stacks: found
            .iter()
            .filter(|f| !f.signals.is_empty())
            .map(|f| f.name.clone())
            .collect(),
    }
}

impl Dashboard {
    /// The stacks found, for the status bar: `postgres_exporter, HAProxy` (empty when none).
    pub fn summary(&self) -> String {
        self.stacks.join(", ")
    }

    pub fn is_empty(&self) -> bool {
        self.panels.is_empty()
    }

    /// The panels as the console and the recorder take them.
    pub fn panel_configs(&self) -> Vec<PanelConfig> {
        self.panels.iter().map(|p| p.panel.clone()).collect()
    }

    /// A `warroom.toml` fragment with these panels, each under a comment naming its stack,
    /// signal and what to know about it. `source` names where they were found.
    pub fn to_toml(&self, source: &str) -> String {
        let mut out = format!(
            "# Panels found by `warroom discover` on {}\n# Stacks: {}\n# Edit freely: with [[panel]] entries in warroom.toml, discovery is not run.\n",
            crate::sanitize::line(source),
            if self.stacks.is_empty() {
                "none".to_string()
            } else {
                self.summary()
            }
        );
        for p in &self.panels {
            out.push('\n');
            let mut about = format!("# {} · {}", p.stack_name, p.signal);
            if let Some(v) = &p.variant {
                about += &format!(" · {v}");
            }
            if let Some(n) = &p.note {
                about += &format!(" · {n}");
            }
            out += &crate::sanitize::line(&about);
            out.push('\n');
            out += &render_toml(std::slice::from_ref(&p.panel));
        }
        out
    }
}

#[cfg(test)]
#[path = "discover_tests.rs"]
mod tests;
