//! The command palette (`:`, as in k9s and vim): a dashboard action by its name (`export`,
//! `declare`, `timeline`…, the names `[keys.*]` uses), or `runbook NAME`, `theme NAME`,
//! `status NAME`, `severity NAME`, `row NAME`. The candidates show as the command is typed; tab completes
//! the word being typed as far as the candidates agree.

use super::incident::{SEVERITIES, STATUSES};
use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::app::panes::dialog::{Body, Dialog, Field, Purpose};
use crate::incident::Event;
use crate::keymap::{Action, Mode, TABLE};

/// The commands that take a name, with what they do. `status` and `severity` are actions too:
/// alone they open their dialog, with a name they set it at once.
const WITH_NAME: [(&str, &str); 5] = [
    ("runbook ", "NAME: open that runbook's run dialog"),
    (
        "row ",
        "NAME: open a collapsed row of the dashboard, or collapse an open one",
    ),
    ("theme ", "NAME: switch to that theme for this session"),
    ("status", "the incident's status (status NAME sets it)"),
    (
        "severity",
        "the incident's severity (severity NAME sets it)",
    ),
];

/// Most candidates listed under the field.
const SHOWN: usize = 8;

/// What a typed command does.
#[derive(Debug, Clone, PartialEq)]
enum Command {
    Act(Action),
    Runbook(String),
    Row(String),
    Theme(String),
    Status(crate::incident::event::Status),
    Severity(crate::incident::event::Severity),
}

/// `:`: the palette, listing what can be typed.
pub(super) fn open(model: &mut Model) -> Vec<Effect> {
    let mut d = Dialog::form(
        "Command".into(),
        Vec::new(),
        vec![Field::new(
            "command",
            "an action, or runbook/theme/status/severity NAME",
            "",
        )],
        Purpose::Palette,
    );
    d.text = listing(model, "");
    model.dialog = Some(d);
    Vec::new()
}

/// The dashboard's actions by name (quit and help too; closing is esc's).
fn actions() -> impl Iterator<Item = Action> {
    let mut seen = Vec::new();
    (TABLE.iter())
        .filter(|(mode, action, ..)| *mode == Mode::Dashboard && *action != Action::Close)
        .map(|(_, action, ..)| *action)
        .filter(move |action| {
            let new = !seen.contains(action);
            seen.push(*action);
            new
        })
}

/// The names the second word of `head` can be.
fn names(model: &Model, head: &str) -> Vec<String> {
    match head {
        "runbook" => (model.runbooks.entries.iter().flatten())
            .map(crate::runbook::catalog::Entry::name)
            .collect(),
        "row" => model.rows().into_iter().map(|(row, ..)| row).collect(),
        "theme" => (crate::theme::BUILTIN.iter())
            .map(|(n, _)| n.to_string())
            .collect(),
        "status" => STATUSES.iter().map(ToString::to_string).collect(),
        "severity" => SEVERITIES.iter().map(ToString::to_string).collect(),
        _ => Vec::new(),
    }
}

/// What `typed` may become: whole command lines, each with what it does.
fn candidates(model: &Model, typed: &str) -> Vec<(String, String)> {
    let typed = typed.trim_start();
    match typed.split_once(char::is_whitespace) {
        None => {
            let word = typed.replace('-', "_");
            let named = WITH_NAME.iter().map(|(w, what)| (w.to_string(), *what));
            let acts = (actions().map(|a| (a.name().to_string(), a.describe())))
                .filter(|(w, _)| !WITH_NAME.iter().any(|(n, _)| n == w));
            (named.chain(acts))
                .filter(|(w, _)| w.starts_with(word.as_str()))
                .map(|(w, what)| (w, what.to_string()))
                .collect()
        }
        Some((head, rest)) => {
            let rest = rest.trim_start().to_ascii_lowercase();
            (names(model, head).into_iter())
                .filter(|n| n.to_ascii_lowercase().starts_with(&rest))
                .map(|n| (format!("{head} {n}"), String::new()))
                .collect()
        }
    }
}

/// The lines under the field: the candidates of `typed`, or why there are none.
fn listing(model: &Model, typed: &str) -> Vec<String> {
    let found = candidates(model, typed);
    if found.is_empty() {
        let loading =
            typed.trim_start().starts_with("runbook ") && model.runbooks.entries.is_none();
        return vec![match loading {
            true => "the runbook list is loading…".to_string(),
            false => "nothing matches: backspace, or esc to close".to_string(),
        }];
    }
    let mut lines: Vec<String> = (found.iter().take(SHOWN))
        .map(|(line, what)| match what.is_empty() {
            true => format!("  {line}"),
            false => format!("  {:<18} {what}", line.trim_end()),
        })
        .collect();
    if found.len() > SHOWN {
        lines.push(format!("  … {} more (type to narrow)", found.len() - SHOWN));
    }
    lines
}

/// Tab: complete the word being typed as far as the candidates agree.
pub(super) fn complete(model: &mut Model) {
    let Some(d) = model.dialog.as_ref() else {
        return;
    };
    let typed = d.field(0).to_string();
    let found = candidates(model, &typed);
    let Some(first) = found.first().map(|(l, _)| l.clone()) else {
        return;
    };
    let common = (found.iter()).fold(first, |acc, (l, _)| {
        let n = (acc.chars().zip(l.chars()))
            .take_while(|(a, b)| a == b)
            .count();
        acc.chars().take(n).collect()
    });
    if common.len() > typed.trim_start().len() {
        set_text(model, common);
    }
}

/// The field's text is now `text` (caret at its end), and the listing follows it.
fn set_text(model: &mut Model, text: String) {
    let lines = listing(model, &text);
    if let Some(Body::Form { fields, .. }) = model.dialog.as_mut().map(|d| &mut d.body)
        && let Some(f) = fields.first_mut()
    {
        f.caret = crate::app::panes::text::Caret::END;
        f.value = text;
    }
    if let Some(d) = model.dialog.as_mut() {
        d.text = lines;
    }
}

/// A key was typed into the field: the listing follows it.
pub(super) fn typed(model: &mut Model) {
    let Some(d) = model.dialog.as_ref() else {
        return;
    };
    let lines = listing(model, d.field(0));
    if let Some(d) = model.dialog.as_mut() {
        d.text = lines;
    }
}

/// What the typed line asks for, or why it asks for nothing.
fn parse(line: &str) -> Result<Command, String> {
    let line = line.trim();
    let (head, rest) = match line.split_once(char::is_whitespace) {
        Some((h, r)) => (h, r.trim()),
        None => (line, ""),
    };
    let needs = |what: &str| format!("{head} needs a {what}: tab lists them");
    match (head, rest) {
        ("", _) => Err("type a command (tab lists them), or esc".into()),
        ("runbook", "") => Err(needs("runbook name")),
        ("runbook", name) => Ok(Command::Runbook(name.to_string())),
        ("row", "") => Err(needs("row name")),
        ("row", name) => Ok(Command::Row(name.to_string())),
        ("theme", "") => Err(needs("theme name")),
        ("theme", name) => Ok(Command::Theme(name.to_string())),
        ("status", s) if !s.is_empty() => s.parse().map(Command::Status).map_err(|e| e.to_string()),
        ("severity", s) if !s.is_empty() => {
            s.parse().map(Command::Severity).map_err(|e| e.to_string())
        }
        (word, "") => (actions())
            .find(|a| a.name() == word.replace('-', "_"))
            .map(Command::Act)
            .ok_or_else(|| format!("no command \"{word}\": tab lists them")),
        (word, _) => Err(format!("\"{word}\" takes no name: tab lists the commands")),
    }
}

/// Enter: do what was typed, or say why not (the palette stays open).
pub(super) fn submit(model: &mut Model, d: &Dialog) -> Result<Vec<Effect>, String> {
    match parse(d.field(0))? {
        Command::Act(Action::Help) => Ok(super::help::toggle(model)),
        Command::Act(Action::Quit) => Ok(super::quit(model)),
        Command::Act(a) => Ok(super::dashboard::key(model, Some(a))),
        Command::Runbook(name) => runbook(model, &name),
        Command::Row(name) => row(model, &name),
        Command::Theme(name) => {
            let Some(theme) = crate::theme::Theme::builtin(&name) else {
                return Err(format!("no theme \"{name}\": tab lists the shipped ones"));
            };
            model.theme = theme;
            model.dirty = true;
            let kept = format!(
                "theme \"{name}\" for this session (theme = \"{name}\" in warroom.toml keeps it)"
            );
            model.notify(kept, false, Some(8));
            Ok(Vec::new())
        }
        Command::Status(status) => Ok(super::incident::operator_event(
            model,
            Event::StatusChanged { status },
        )),
        Command::Severity(severity) => Ok(super::incident::operator_event(
            model,
            Event::SeverityChanged { severity },
        )),
    }
}

/// `row NAME`: open the row when collapsed (its panels are queried at once), else collapse it
/// (its panels are no longer queried).
fn row(model: &mut Model, name: &str) -> Result<Vec<Effect>, String> {
    let Some((row, n, collapsed)) = (model.rows().into_iter()).find(|(r, ..)| r == name) else {
        return Err(match model.rows().is_empty() {
            true => "this dashboard has no rows (an imported Grafana dashboard's rows)".into(),
            false => format!("no row \"{name}\": tab lists them"),
        });
    };
    let said = if collapsed {
        model.collapsed.remove(&row);
        for i in 0..model.panels.len() {
            if model.panels[i].config.shape.row.as_deref() == Some(row.as_str()) {
                model.panels[i].next_due = None;
            }
        }
        format!("row \"{row}\" opened: its {n} panel(s) are queried from now on")
    } else {
        model.collapsed.insert(row.clone());
        if model.folded(model.selected)
            && let Some(first) = model.panel_order().first()
        {
            model.selected = *first;
        }
        format!("row \"{row}\" collapsed: its {n} panel(s) are not queried until it is opened")
    };
    model.dirty = true;
    model.notify(said, false, Some(6));
    Ok(super::schedule(model))
}

/// `runbook NAME`: the runbook pane with NAME selected, and its run dialog.
fn runbook(model: &mut Model, name: &str) -> Result<Vec<Effect>, String> {
    let Some(entries) = model.runbooks.entries.as_ref() else {
        model.notify(
            "the runbook list is loading: try again in a moment",
            false,
            Some(5),
        );
        return Ok(super::runbooks::open(model));
    };
    let Some(i) = entries.iter().position(|e| e.name() == name) else {
        return Err(format!("no runbook \"{name}\": tab lists them"));
    };
    model.runbooks.filter = None;
    model.runbooks.selected = i;
    let mut effects = super::runbooks::open(model);
    effects.extend(super::runbooks::key(model, Action::Run));
    Ok(effects)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Model {
        let config = crate::config::Config::default();
        let now = chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 7, 17, 8, 0, 0).unwrap();
        Model::new(&config, crate::theme::Theme::fallback(), "t".into(), now)
    }

    #[test]
    fn words_complete_and_lines_parse_to_what_the_keys_do() {
        let m = model();
        let first: Vec<String> = candidates(&m, "ex").into_iter().map(|c| c.0).collect();
        assert_eq!(first, ["export"]);
        let sev: Vec<String> = candidates(&m, "severity s")
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(sev.len(), 4, "{sev:?}");
        let themes: Vec<String> = candidates(&m, "theme l").into_iter().map(|c| c.0).collect();
        assert_eq!(themes, ["theme light"]);
        assert_eq!(parse(" export "), Ok(Command::Act(Action::Export)));
        assert_eq!(parse("action-item"), Ok(Command::Act(Action::ActionItem)));
        assert_eq!(
            parse("status Identified"),
            Ok(Command::Status(crate::incident::event::Status::Identified))
        );
        assert!(parse("status nope").unwrap_err().contains("investigating"));
        assert!(parse("close").unwrap_err().contains("no command"));
        assert!(parse("runbook").unwrap_err().contains("tab lists"));
        assert!(parse("export now").unwrap_err().contains("takes no name"));
        assert!(listing(&m, "zz")[0].contains("nothing matches"));
    }
}
