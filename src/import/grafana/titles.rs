//! Titles and legends: Grafana's text made one clean line, `{{ pod }}` made warroom's `{{pod}}`,
//! the suffix that tells a panel's several queries apart, and titles made unique.

use super::json::{SourcePanel, SourceTarget};
use crate::config::panels::PanelConfig;
use crate::variables::interpolate::{Binding, Builtins, Mode, interpolate};

/// Longest title kept, in characters.
pub(super) const MAX_TITLE: usize = 120;

/// Two panels of one title would be hard to tell apart (and share a journal name): titles that
/// repeat get their row's title in front (`Replica · Connections`), and what still repeats gets
/// ` (2)`, ` (3)`.
pub(super) fn dedupe_titles(panels: &mut [(PanelConfig, Option<String>)]) {
    let count = |panels: &[(PanelConfig, Option<String>)], t: &str| {
        panels.iter().filter(|(p, _)| p.title == t).count()
    };
    let repeated: Vec<bool> = panels
        .iter()
        .map(|(p, _)| count(panels, &p.title) > 1)
        .collect();
    for ((p, row), repeated) in panels.iter_mut().zip(repeated) {
        if let Some(row) = row.as_deref().map(clean_text).filter(|r| !r.is_empty())
            && repeated
        {
            p.title = clean_text(&format!("{row} · {}", p.title));
        }
    }
    let mut seen: Vec<(String, usize)> = Vec::new();
    for (p, _) in panels.iter_mut() {
        match seen.iter_mut().find(|(t, _)| *t == p.title) {
            Some((_, n)) => {
                *n += 1;
                p.title = format!("{} ({n})", p.title);
            }
            None => seen.push((p.title.clone(), 1)),
        }
    }
}

pub(super) fn clean_text(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::sanitize::sanitize(&one, false, MAX_TITLE).into_owned()
}

pub(super) fn panel_title<'b>(
    panel: &SourcePanel,
    lookup: &dyn Fn(&str) -> Option<&'b Binding>,
    b: &Builtins,
) -> String {
    let raw = panel.title.as_deref().unwrap_or("");
    let t = clean_text(&interpolate(raw, lookup, b, Mode::Text).text);
    if !t.is_empty() {
        return t;
    }
    match panel.id {
        Some(id) => format!("Panel {id}"),
        None => format!("Panel at {}", clean_text(&panel.path)),
    }
}

/// `{{ pod }}` as warroom writes it (`{{pod}}`); text around it kept.
pub(super) fn legend_template(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                out.push_str("{{");
                out.push_str(after[..end].trim());
                out.push_str("}}");
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The legend's words without its `{{label}}` parts: `{{pod}} p99` gives `p99`.
fn legend_words(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        match rest[start..].find("}}") {
            Some(end) => rest = &rest[start + end + 2..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out.split(|c: char| c.is_whitespace() || "-:|,/".contains(c))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What tells a panel's queries apart in their titles: the legend's words where they differ,
/// else the `refId`; nothing for a panel of one query.
pub(super) fn suffixes<'b>(
    ready: &[&SourceTarget],
    lookup: &dyn Fn(&str) -> Option<&'b Binding>,
    b: &Builtins,
) -> Vec<Option<String>> {
    if ready.len() < 2 {
        return vec![None; ready.len()];
    }
    let words: Vec<String> = ready
        .iter()
        .map(|r| {
            let legend = r.legend.as_deref().unwrap_or("");
            if legend == "__auto" {
                return String::new();
            }
            clean_text(&legend_words(
                &interpolate(legend, lookup, b, Mode::Text).text,
            ))
        })
        .collect();
    ready
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let w = &words[i];
            let unique = !w.is_empty() && words.iter().filter(|o| *o == w).count() == 1;
            if unique {
                return Some(w.chars().take(40).collect());
            }
            Some(
                r.ref_id
                    .as_deref()
                    .map(clean_text)
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| format!("#{}", i + 1)),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legends_lose_inner_blanks_and_keep_words() {
        assert_eq!(
            legend_template("{{ pod }} p99 {{le}}"),
            "{{pod}} p99 {{le}}"
        );
        assert_eq!(legend_template("{{ open"), "{{ open");
        assert_eq!(legend_words("{{pod}} - p99"), "p99");
        assert_eq!(legend_words("{{pod}}"), "");
        assert_eq!(legend_words("in {{x"), "in");
    }
}
