//! Loading runbooks: TOML syntax and types through the `toml` crate, then semantic checks on
//! the spans it kept. Every problem is a [`Diagnostic`] with `file:line:col`; all problems of a
//! file are reported together, and one broken file never hides the others.

use super::format::{RawKind, RawRunbook, RawStep, allowed_fields};
use super::model::*;
use super::template::{TARGET, Template};
use crate::diagnostic::{Diagnostic, Diagnostics};
use serde_spanned::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The result of loading a directory: the good runbooks and, separately, each broken file.
#[derive(Debug, Default)]
pub struct Loaded {
    pub runbooks: Vec<Runbook>,
    pub broken: Vec<(PathBuf, Diagnostics)>,
}

/// Load every `*.toml` directly in `dir` (not subdirectories), sorted by file name.
pub fn load_dir(dir: &Path) -> Result<Loaded, std::io::Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(load_files(&files))
}

/// Load the given files; each either loads or is listed with its diagnostics.
pub fn load_files(files: &[PathBuf]) -> Loaded {
    let mut out = Loaded::default();
    for f in files {
        match load_file(f) {
            Ok(r) => out.runbooks.push(r),
            Err(d) => out.broken.push((f.clone(), d)),
        }
    }
    out
}

/// The largest runbook file read (the shipped ones are under 8 KiB).
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// A runbook file's text, read again after it was loaded (at most [`MAX_FILE_BYTES`]).
pub fn read_again(path: &Path) -> Result<String, String> {
    let bytes = crate::paths::read_capped(path, MAX_FILE_BYTES)
        .map_err(|e| format!("cannot read \"{}\" again: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("\"{}\" is no longer UTF-8", path.display()))
}

/// Load one file.
pub fn load_file(path: &Path) -> Result<Runbook, Diagnostics> {
    let name = path.display().to_string();
    let bytes = crate::paths::read_capped(path, MAX_FILE_BYTES).map_err(|e| {
        Diagnostics(vec![Diagnostic::at(
            &name,
            "",
            None,
            format!("cannot read the runbook: {e}"),
        )])
    })?;
    let source = utf8(&name, &bytes)?;
    parse(&name, path, source)
}

/// The text of a runbook file, or where it stops being UTF-8 (its line and column).
pub fn utf8<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, Diagnostics> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        // The lossy text has the same bytes up to `at`, so the span points at the bad byte.
        let shown = String::from_utf8_lossy(bytes);
        Diagnostics(vec![Diagnostic::at(
            file,
            &shown,
            Some(at..at + 1),
            format!(
                "invalid UTF-8 (byte 0x{:02x} at offset {at}); a runbook is UTF-8 text: re-save the file as UTF-8",
                bytes[at]
            ),
        )])
    })
}

/// The longest runbook name or step id, in bytes: a run's file name is the name, a 25-byte
/// time and `.jsonl`, and must stay well under the 255 bytes a file name may have.
pub const MAX_NAME: usize = 64;

/// Why a runbook name or step id cannot be used: it becomes part of file names (a run's
/// record) and of what is shown, so at most [`MAX_NAME`] bytes, no path separators, `..`, no
/// leading `.` (a hidden file; `.` and `..` themselves), control characters, NUL, bidi
/// overrides or invisible characters.
pub fn unsafe_name(name: &str) -> Option<&'static str> {
    if name.len() > MAX_NAME {
        Some("is longer than 64 bytes")
    } else if name.contains('/') || name.contains('\\') {
        Some("holds a path separator")
    } else if name.starts_with('.') {
        Some("starts with '.' (a hidden file)")
    } else if name.contains("..") {
        Some("holds \"..\"")
    } else if name.chars().any(crate::sanitize::is_hostile) {
        Some("holds a control, bidi or invisible character")
    } else {
        None
    }
}

/// Parse and check runbook text; `file` names it in messages.
pub fn parse(file: &str, path: &Path, source: &str) -> Result<Runbook, Diagnostics> {
    parse_with(file, path, source, &BTreeMap::new())
}

/// Parse with variable values: a duration field written `"{{name}}"` takes the value of
/// `name` from `values`, else its default.
pub fn parse_with(
    file: &str,
    path: &Path,
    source: &str,
    values: &BTreeMap<String, String>,
) -> Result<Runbook, Diagnostics> {
    let raw: RawRunbook = toml::from_str(source)
        .map_err(|e| Diagnostics(vec![Diagnostic::from_toml(file, source, &e)]))?;
    let mut c = Checker {
        file,
        source,
        diags: Vec::new(),
        typed: BTreeMap::new(),
        secrets: BTreeSet::new(),
        values: values.clone(),
    };
    let rb = c.runbook(raw, path);
    if c.diags.is_empty() {
        Ok(rb)
    } else {
        Err(Diagnostics(c.diags))
    }
}

struct Checker<'a> {
    file: &'a str,
    source: &'a str,
    diags: Vec<Diagnostic>,
    typed: BTreeMap<String, VarKind>,
    /// The secret variables (a `sql` step's password may name only one of these).
    secrets: BTreeSet<String>,
    /// Values for duration fields that name a variable: given ones, then defaults.
    values: BTreeMap<String, String>,
}

/// Whether `value` is acceptable for a variable of `kind`.
pub fn kind_accepts(kind: VarKind, value: &str) -> bool {
    match kind {
        VarKind::String => true,
        VarKind::Number => value.trim().parse::<f64>().is_ok_and(f64::is_finite),
        VarKind::Bool => matches!(value.trim(), "true" | "false"),
        VarKind::Duration => humantime::parse_duration(value.trim()).is_ok_and(|d| !d.is_zero()),
    }
}

impl Checker<'_> {
    fn err(&mut self, span: Range<usize>, msg: impl Into<String>) {
        self.diags
            .push(Diagnostic::at(self.file, self.source, Some(span), msg));
    }

    fn runbook(&mut self, raw: RawRunbook, path: &Path) -> Runbook {
        if raw.name.get_ref().trim().is_empty() {
            self.err(
                raw.name.span(),
                "the runbook name is empty; expected a name such as \"disable-retries\"",
            );
        } else if let Some(why) = unsafe_name(raw.name.get_ref()) {
            self.err(
                raw.name.span(),
                format!(
                    "the runbook name \"{}\" {why}; it names the run's files: expected letters, digits, '-', '_' or '.', e.g. \"raise-pool\"",
                    crate::sanitize::line(raw.name.get_ref())
                ),
            );
        }
        let mut variables = Vec::new();
        for (name, v) in raw.variables {
            let span = name.span();
            let name = name.into_inner();
            if name == TARGET || Template::parse(&format!("{{{{{name}}}}}")).is_err() {
                self.err(
                    span,
                    format!(
                        "\"{name}\" cannot be a variable name; expected letters, digits, '_' or '-', and not \"{TARGET}\" (set by batches)"
                    ),
                );
            }
            let v_span = v.span();
            let v = v.into_inner();
            if v.secret && v.default.is_some() {
                self.err(
                    v_span.clone(),
                    format!(
                        "secret variable \"{name}\" has a default in the file; secrets come from the environment: expected env = \"VAR_NAME\" instead"
                    ),
                );
            }
            if v.secret && v.env.is_none() {
                self.err(
                    v_span.clone(),
                    format!("secret variable \"{name}\" needs env = \"VAR_NAME\" to read it from"),
                );
            }
            let kind = match v.kind.as_ref().map(|k| (k.get_ref().as_str(), k.span())) {
                None | Some(("string", _)) => VarKind::String,
                Some(("number", _)) => VarKind::Number,
                Some(("bool", _)) => VarKind::Bool,
                Some(("duration", _)) => VarKind::Duration,
                Some((other, span)) => {
                    self.err(
                        span,
                        format!(
                            "type = \"{other}\"; expected \"string\", \"number\", \"bool\" or \"duration\""
                        ),
                    );
                    VarKind::String
                }
            };
            if let Some(d) = &v.default
                && !kind_accepts(kind, d)
            {
                self.err(
                    v_span.clone(),
                    format!(
                        "the default \"{d}\" of \"{name}\" is not a {}; expected e.g. \"{}\"",
                        format!("{kind:?}").to_lowercase(),
                        match kind {
                            VarKind::Bool => "true",
                            VarKind::Duration => "15s",
                            _ => "40",
                        }
                    ),
                );
            }
            self.typed.insert(name.clone(), kind);
            if v.secret {
                self.secrets.insert(name.clone());
            }
            if let Some(d) = &v.default {
                self.values.entry(name.clone()).or_insert_with(|| d.clone());
            }
            variables.push(Variable {
                kind,
                name,
                default: v.default,
                description: crate::sanitize::line(&v.description.unwrap_or_default()).into_owned(),
                secret: v.secret,
                env: v.env.map(serde_spanned::Spanned::into_inner),
            });
        }
        let known: BTreeSet<String> = variables.iter().map(|v| v.name.clone()).collect();
        let mut ids: BTreeMap<String, Range<usize>> = BTreeMap::new();
        let mut steps = Vec::new();
        if raw.step.is_empty() {
            self.err(
                raw.name.span(),
                "the runbook has no steps; expected at least one [[step]] table",
            );
        }
        for s in raw.step {
            let span = s.span();
            let s = s.into_inner();
            let id = s.id.get_ref().clone();
            if id.trim().is_empty() {
                self.err(s.id.span(), "the step id is empty; expected a short name");
            } else if let Some(why) = unsafe_name(&id) {
                self.err(
                    s.id.span(),
                    format!(
                        "the step id \"{}\" {why}; it is typed to confirm and recorded: expected letters, digits, '-', '_' or '.', e.g. \"raise-pool\"",
                        crate::sanitize::line(&id)
                    ),
                );
            } else if let Some(first) = ids.get(&id) {
                let (line, _) = self.line_col(first.start);
                self.err(
                    s.id.span(),
                    format!(
                        "duplicate step id \"{id}\" (first used on line {line}); expected a unique id"
                    ),
                );
            } else {
                ids.insert(id.clone(), s.id.span());
            }
            let precondition = s.precondition.as_ref().map(Spanned::span);
            if let Some(step) = self.step(s, span, &known) {
                if let (true, Some(at)) = (step.precondition, precondition) {
                    self.precondition_first(&steps, &step.id, at);
                }
                steps.push(step);
            }
        }
        let applies = raw.applies.and_then(|a| self.applies(a, &known));
        // Text shown to people is sanitized here, where it enters; templates stay exact (they
        // are what is sent) and the plan sanitizes what it prints of them.
        Runbook {
            name: crate::sanitize::line(raw.name.get_ref()).into_owned(),
            description: crate::sanitize::multiline(&raw.description.unwrap_or_default())
                .into_owned(),
            file: path.to_path_buf(),
            hash: content_hash(self.source),
            variables,
            steps,
            applies,
        }
    }

    /// `[applies]`: `on` is "simulator" or "real"; the symptom is a gate, read only.
    fn applies(
        &mut self,
        raw: Spanned<crate::runbook::format::RawApplies>,
        known: &BTreeSet<String>,
    ) -> Option<Applies> {
        let raw = raw.into_inner();
        let on = match raw.on.get_ref().as_str() {
            "simulator" => Acts::Simulator,
            "real" => Acts::Real,
            other => {
                self.err(
                    raw.on.span(),
                    format!(
                        "on = \"{}\"; expected \"real\" (your own systems) or \"simulator\" (the rehearsal's control API)",
                        crate::sanitize::line(other)
                    ),
                );
                return None;
            }
        };
        let symptom = match &raw.symptom {
            Some(g) => Some(self.gate(g, known, false)?),
            None => None,
        };
        let label = match (&raw.label, &symptom) {
            (Some(l), Some(_)) => Some(self.label(l, known)?),
            (Some(l), None) => {
                self.err(
                    l.span(),
                    "label says the symptom's reading, and [applies] has no symptom: remove label",
                );
                return None;
            }
            (None, _) => None,
        };
        Some(Applies { on, symptom, label })
    }

    /// A precondition is checked before the runbook changes anything: step `id` (its
    /// `precondition = true` at `at`) may not follow one of `before` that changes the system.
    fn precondition_first(&mut self, before: &[Step], id: &str, at: Range<usize>) {
        if let Some(first) = before.iter().find(|s| s.mutating) {
            self.err(
                at,
                format!(
                    "step \"{id}\" comes after \"{}\", which changes the system: a precondition must be checked before anything changes; move it up or remove precondition",
                    first.id
                ),
            );
        }
    }

    fn line_col(&self, at: usize) -> (usize, usize) {
        let d = Diagnostic::at("", self.source, Some(at..at), "");
        (d.line, d.col)
    }

    fn step(&mut self, s: RawStep, span: Range<usize>, known: &BTreeSet<String>) -> Option<Step> {
        let kind = *s.kind.get_ref();
        let allowed = allowed_fields(kind);
        for (field, fspan) in s.present_fields() {
            if !allowed.contains(&field) {
                self.err(
                    fspan,
                    format!(
                        "\"{field}\" is not allowed in a \"{}\" step; expected one of: {}",
                        kind.name(),
                        allowed.join(", ")
                    ),
                );
            }
        }
        let id = s.id.get_ref().clone();
        let title =
            crate::sanitize::line(&s.title.clone().unwrap_or_else(|| id.clone())).into_owned();
        let kind = match kind {
            RawKind::Check => {
                let mut g = self.gate_required(&s.gate, &span, known, false)?;
                // A check is about now: one good reading is enough unless the runbook says more.
                let raw = s.gate.as_ref().map(serde_spanned::Spanned::get_ref);
                if raw.is_some_and(|r| r.consecutive.is_none()) {
                    g.consecutive = 1;
                }
                if raw.is_some_and(|r| r.min_samples.is_none()) {
                    g.min_samples = g.consecutive;
                }
                StepKind::Check(g)
            }
            RawKind::Wait => StepKind::Wait {
                gate: self.gate_required(&s.gate, &span, known, false)?,
                timeout: self.duration(&s.timeout, DEFAULT_WAIT_TIMEOUT),
            },
            RawKind::Http | RawKind::Exec | RawKind::Sql | RawKind::Haproxy => {
                if matches!(kind, RawKind::Sql | RawKind::Haproxy)
                    && let Some(m) = &s.mutating
                {
                    self.err(
                        m.span(),
                        format!(
                            "a \"{}\" step says what it changes by itself (sql: mutating unless read_only = true; haproxy: set commands are mutating, show is not); remove mutating",
                            kind.name()
                        ),
                    );
                }
                match self.action(kind, &s.as_action(), &span, known, false)? {
                    Action::Http(h) => StepKind::Http(h),
                    Action::Exec(e) => StepKind::Exec(e),
                    Action::Sql(q) => StepKind::Sql(q),
                    Action::Haproxy(h) => StepKind::Haproxy(h),
                }
            }
            RawKind::Batch => StepKind::Batch(Box::new(self.batch(&s, &span, known)?)),
            RawKind::Manual | RawKind::Note => {
                let Some(text) = &s.text else {
                    self.err(
                        span,
                        format!("a \"{}\" step needs text = \"...\"", kind.name()),
                    );
                    return None;
                };
                let t = crate::sanitize::multiline(text.get_ref()).into_owned();
                if kind == RawKind::Manual {
                    StepKind::Manual { text: t }
                } else {
                    StepKind::Note { text: t }
                }
            }
        };
        let default_mutating = match &kind {
            StepKind::Http(h) => h.method.mutates(),
            StepKind::Exec(_) | StepKind::Batch(_) => true,
            StepKind::Sql(q) => !q.read_only,
            StepKind::Haproxy(h) => h.op.mutates(),
            StepKind::Check(_)
            | StepKind::Wait { .. }
            | StepKind::Manual { .. }
            | StepKind::Note { .. } => false,
        };
        let mutating = match &kind {
            // What these do decides; `mutating` was refused above.
            StepKind::Sql(_) | StepKind::Haproxy(_) => default_mutating,
            _ => s
                .mutating
                .as_ref()
                .map_or(default_mutating, |m| *m.get_ref()),
        };
        let skippable = s.skippable.as_ref().is_some_and(|k| *k.get_ref());
        let asks = matches!(kind, StepKind::Manual { .. }) || (mutating && !kind.confirms_itself());
        if let Some(k) = &s.skippable
            && *k.get_ref()
            && !asks
        {
            self.err(
                k.span(),
                "skippable = true applies to a step that asks to be confirmed (a mutating http, exec, sql or haproxy step, or a manual step); a batch asks per batch and cannot be skipped; remove skippable",
            );
        }
        let precondition = s.precondition.as_ref().is_some_and(|p| *p.get_ref());
        if let Some(p) = &s.precondition
            && *p.get_ref()
            && (mutating || !kind.reads())
        {
            self.err(
                p.span(),
                "precondition = true applies to a step that only reads (a check, a read-only sql step, an haproxy show); remove precondition",
            );
        }
        let label = self.step_label(&s.label, precondition, &kind, known);
        Some(Step {
            id,
            title,
            mutating,
            skippable,
            precondition,
            label,
            kind,
        })
    }

    /// Parse a template and check that its variables exist; `target_ok` inside a batch action.
    fn template(
        &mut self,
        t: &Spanned<String>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<Template> {
        self.template_text(t.get_ref(), t.span(), known, target_ok)
    }

    fn template_text(
        &mut self,
        text: &str,
        span: Range<usize>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<Template> {
        let source = self.source;
        let at = |needle: &str| within(source, &span, needle);
        let tpl = match Template::parse(text) {
            Ok(t) => t,
            Err(e) => {
                let needle: String = text[e.offset..].chars().take(2).collect();
                self.err(at(&needle), e.message);
                return None;
            }
        };
        let mut ok = true;
        for (name, offset) in tpl.variables() {
            let end = text[offset..]
                .find("}}")
                .map_or(text.len(), |i| offset + i + 2);
            let needle = &text[offset..end];
            if name == TARGET && !target_ok {
                self.err(
                    at(needle),
                    "\"{{target}}\" is only defined in a batch's action and instance check",
                );
                ok = false;
            } else if name != TARGET && !known.contains(name) {
                let list = if known.is_empty() {
                    "none are defined; add it under [variables]".to_string()
                } else {
                    known.iter().cloned().collect::<Vec<_>>().join(", ")
                };
                self.err(
                    at(needle),
                    format!("unknown variable \"{name}\"; expected one of: {list}"),
                );
                ok = false;
            }
        }
        ok.then_some(tpl)
    }

    fn count(&mut self, v: &Option<Spanned<i64>>, what: &str, min: i64, default: u32) -> u32 {
        let Some(v) = v else { return default };
        let n = *v.get_ref();
        if n < min || n > i64::from(u32::MAX) {
            self.err(
                v.span(),
                format!("{what} is {n}; expected a whole number of at least {min}"),
            );
            return default;
        }
        n as u32
    }
}

/// Where `needle` is written inside `span` of `source` (the whole span when it is not found).
fn within(source: &str, span: &Range<usize>, needle: &str) -> Range<usize> {
    let written = source.get(span.clone()).unwrap_or("");
    match written.find(needle) {
        Some(i) => span.start + i..span.start + i + needle.len(),
        None => span.clone(),
    }
}

/// A short content hash: a run records it so a changed runbook cannot resume.
pub fn content_hash(source: &str) -> String {
    format!(
        "crc32:{:08x}:{}",
        crc32fast::hash(source.as_bytes()),
        source.len()
    )
}

mod acting;
mod durations;
mod quoting;
mod steps;

pub use durations::{bind, bind_text};
