//! `y` copies and `o` links (issue 33 point 7): what a responder pastes into a chat or a
//! browser (the incident id, the selected panel's PromQL, the run's id, the last export's
//! path, the panel's Prometheus `/graph` URL) goes to the terminal's clipboard by OSC 52,
//! which reaches the responder's own machine through ssh and tmux. Every copy is also shown
//! in the message line, for a terminal that does not take OSC 52.

use crate::app::effect::Effect;
use crate::app::model::{Model, RANGES};
use crate::app::panes::dialog::{Dialog, Purpose};

/// What `y` can copy now: (what it is, the text), the most asked for first.
pub(super) fn copyable(model: &Model) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(i) = &model.incident {
        out.push(("the incident id".to_string(), i.id.clone()));
    }
    if let Some(p) = model.panels.get(model.selected) {
        let what = format!("the PromQL of \"{}\"", p.config.title);
        out.push((what, p.config.query.clone()));
    }
    if let Some(run) = &model.runbooks.run {
        out.push(("the run's id".to_string(), run.run_id.clone()));
    }
    if let Some(path) = &model.exported {
        out.push(("the exported draft's path".to_string(), path.clone()));
    }
    out
}

/// `y`: copy the one thing there is, or ask which.
pub(super) fn ask(model: &mut Model) -> Vec<Effect> {
    let items = copyable(model);
    match items.len() {
        0 => {
            model.notify("nothing to copy yet", false, Some(5));
            Vec::new()
        }
        1 => copy(model, &items[0]),
        _ => {
            let options = (items.iter())
                .map(|(what, text)| format!("{what}: {}", crate::sanitize::line(text)))
                .collect();
            model.dialog = Some(Dialog::choose(
                "Copy to the clipboard".into(),
                vec!["Through the terminal (OSC 52): over ssh and tmux too.".into()],
                options,
                0,
                Purpose::Copy(items),
            ));
            Vec::new()
        }
    }
}

/// The choice made in `y`'s dialog.
pub(super) fn chosen(model: &mut Model, items: &[(String, String)], i: usize) -> Vec<Effect> {
    match items.get(i) {
        Some(item) => copy(model, item),
        None => Vec::new(),
    }
}

fn copy(model: &mut Model, (what, text): &(String, String)) -> Vec<Effect> {
    let shown = crate::sanitize::line(text);
    model.notify(format!("copied {what}: {shown}"), false, Some(15));
    vec![Effect::Copy(text.clone())]
}

/// `o`: the selected panel's query in its Prometheus's graph page, over the range shown,
/// shown and copied; a console with no Prometheus URL (the demo's engine) says so.
pub(super) fn graph(model: &mut Model) -> Vec<Effect> {
    let Some(p) = model.panels.get(model.selected) else {
        return Vec::new();
    };
    let range = RANGES[model.range_idx];
    let url = (model.graph_base.as_deref()).and_then(|b| graph_url(b, &p.config.query, range));
    match url {
        Some(url) => copy(model, &("the graph URL".to_string(), url)),
        None => {
            let why = "no Prometheus to link to: this console's metrics come from its own engine (y copies the PromQL)";
            model.notify(why, false, Some(10));
            Vec::new()
        }
    }
}

/// `BASE/graph?g0.expr=…&g0.tab=0&g0.range_input=1h`: the graph page of Prometheus (both its
/// old and new UI read these), with the path prefix of `base` kept.
pub fn graph_url(base: &str, expr: &str, range: std::time::Duration) -> Option<String> {
    let base = match base.ends_with('/') {
        true => url::Url::parse(base).ok()?,
        false => url::Url::parse(&format!("{base}/")).ok()?,
    };
    let mut url = base.join("graph").ok()?;
    (url.query_pairs_mut())
        .append_pair("g0.expr", expr)
        .append_pair("g0.tab", "0")
        .append_pair("g0.range_input", &range_input(range));
    Some(url.into())
}

/// A range as the graph page's range field takes it: `15m`, `1h`, `2d`.
fn range_input(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s % 3_600 == 0 => format!("{}h", s / 3_600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn graph_urls_keep_the_prefix_and_encode_the_query() {
        let q = r#"sum by (pod) (rate(http_requests_total{code=~"5.."}[5m])) / 2"#;
        let url = graph_url(
            "http://prom.internal:9090/prometheus/",
            q,
            Duration::from_secs(3600),
        )
        .unwrap();
        assert!(
            url.starts_with("http://prom.internal:9090/prometheus/graph?g0.expr="),
            "{url}"
        );
        assert!(url.ends_with("&g0.tab=0&g0.range_input=1h"), "{url}");
        // What the browser gives Prometheus back is the query itself.
        let parsed = url::Url::parse(&url).unwrap();
        let expr = parsed
            .query_pairs()
            .find(|(k, _)| k == "g0.expr")
            .unwrap()
            .1;
        assert_eq!(expr, q);
        let bare = graph_url("http://127.0.0.1:9090", "up", Duration::from_secs(900)).unwrap();
        assert_eq!(
            bare,
            "http://127.0.0.1:9090/graph?g0.expr=up&g0.tab=0&g0.range_input=15m"
        );
        assert_eq!(range_input(Duration::from_secs(2 * 86_400)), "2d");
        assert!(graph_url("not a url", "up", Duration::from_secs(60)).is_none());
    }
}
