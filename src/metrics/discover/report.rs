//! What `warroom discover` prints: per stack, per signal, its query, how many series it gives
//! and the current worst value. [`read_values`] fetches the readings with instant queries;
//! [`Report`] is pure.

use super::driver::Discovery;
use crate::config::BadWhen;
use crate::metrics::presets::Presets;
use crate::metrics::source::{InstantQuery, Source};
use std::fmt;

/// One signal's instant reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub stack: String,
    pub signal: String,
    /// The reading, or the error message of its query.
    pub value: Result<Value, String>,
}

/// An instant query's answer, reduced to what the report shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Value {
    pub series: usize,
    /// The worst series' value (highest, or lowest for `bad_when = "below"`) and its labels.
    pub worst: Option<(f64, String)>,
    /// The server's notes, e.g. "metric might not be a counter" (not errors).
    pub infos: Vec<String>,
    pub warnings: Vec<String>,
}

/// Read every found signal once at `time` (Unix seconds; the server's now when `None`), a few
/// at a time (the client keeps at most 4 requests in flight).
pub async fn read_values(
    source: &dyn Source,
    discovery: &Discovery,
    time: Option<f64>,
) -> Vec<Reading> {
    let signals: Vec<_> = discovery
        .found
        .iter()
        .flat_map(|f| f.signals.iter())
        .collect();
    let answers = futures::future::join_all(signals.iter().map(|s| {
        source.query(InstantQuery {
            query: s.panel.query.clone(),
            time,
        })
    }))
    .await;
    signals
        .iter()
        .zip(answers)
        .map(|(s, a)| Reading {
            stack: s.stack.clone(),
            signal: s.signal.clone(),
            value: a
                .map(|a| {
                    let mut v = Value {
                        series: a.series.len(),
                        worst: None,
                        infos: a.infos,
                        warnings: a.warnings,
                    };
                    for series in &a.series {
                        let Some(p) = series.last() else { continue };
                        let worse = match (&v.worst, s.panel.bad_when) {
                            (None, _) => true,
                            (Some((w, _)), BadWhen::Above) => p.v > *w || w.is_nan(),
                            (Some((w, _)), BadWhen::Below) => p.v < *w || w.is_nan(),
                        };
                        if worse {
                            v.worst = Some((p.v, series.label_text()));
                        }
                    }
                    v
                })
                .map_err(|e| e.to_string()),
        })
        .collect()
}

/// The report of one discovery with its readings.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub source: String,
    pub discovery: Discovery,
    pub readings: Vec<Reading>,
}

impl Report {
    pub fn new(source: &str, discovery: Discovery, readings: Vec<Reading>) -> Report {
        Report {
            source: crate::sanitize::line(source).into_owned(),
            discovery,
            readings,
        }
    }

    fn reading(&self, stack: &str, signal: &str) -> Option<&Reading> {
        self.readings
            .iter()
            .find(|r| r.stack == stack && r.signal == signal)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.discovery;
        writeln!(
            f,
            "{} · {} metric names listed · {} requests, {} bytes",
            self.source, d.names_listed, d.requests, d.bytes
        )?;
        for w in &d.warnings {
            writeln!(f, "warning: {}", crate::sanitize::line(w))?;
        }
        if d.found.is_empty() {
            let known: Vec<&str> = Presets::builtin()
                .stacks
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            writeln!(
                f,
                "No known exporter found. Presets cover: {}.\nFor other metric names, write [[panel]] entries in warroom.toml.",
                known.join(", ")
            )?;
            return Ok(());
        }
        writeln!(f, "Found: {}", d.dashboard.summary())?;
        for found in &d.found {
            writeln!(f)?;
            write!(f, "{}", found.name)?;
            if !found.variants.is_empty() {
                write!(f, " ({})", found.variants.join("; "))?;
            }
            writeln!(f)?;
            for s in &found.signals {
                write!(f, "  {:<22} {}", s.signal, s.panel.title)?;
                match self.reading(&s.stack, &s.signal).map(|r| &r.value) {
                    Some(Ok(v)) => {
                        write!(f, " · {} series", v.series)?;
                        if let Some((x, labels)) = &v.worst {
                            write!(f, " · {}", s.panel.unit.format(*x))?;
                            if !labels.is_empty() {
                                write!(f, " {{{labels}}}")?;
                            }
                        } else {
                            write!(f, " · {}", s.empty_hint())?;
                        }
                        writeln!(f)?;
                        for i in &v.infos {
                            writeln!(f, "      note from the server: {i}")?;
                        }
                        for w in &v.warnings {
                            writeln!(f, "      warning from the server: {w}")?;
                        }
                    }
                    Some(Err(e)) => writeln!(f, " · query failed: {e}")?,
                    None => writeln!(f)?,
                }
                if let Some(n) = &s.note {
                    writeln!(f, "      {n}")?;
                }
                writeln!(f, "      {}", s.panel.query)?;
            }
            for m in &found.missing {
                write!(f, "  {:<22} not here: {}", m.signal, m.title)?;
                if !m.absent.is_empty() {
                    write!(f, " needs {}", m.absent.join(", "))?;
                }
                if let Some(n) = &m.note {
                    write!(f, " ({n})")?;
                }
                writeln!(f)?;
            }
        }
        if d.dashboard.panels.len() < d.found.iter().map(|f| f.signals.len()).sum::<usize>() {
            writeln!(
                f,
                "\nThe dashboard shows the first {} signals by priority; `warroom discover --toml` writes them all to edit.",
                d.dashboard.panels.len()
            )?;
        }
        Ok(())
    }
}
