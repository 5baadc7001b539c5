//! What the export writes is safe and well-formed (issue 7): hostile note text reaches the
//! Markdown, the status page and the JSON escaped (no raw control bytes, no HTML, no links),
//! and every chart is valid SVG showing the thresholds and the impact window where they are.

use crate::support::export_incident as incident;

use pulldown_cmark::{Event as Md, Options, Parser, Tag};
use warroom::postmortem::{self, ExportOptions, Format};
use warroom::sanitize::HOSTILE_SAMPLES;

/// No byte below 0x20 but the newline, no DEL, and nothing else the sanitizer calls hostile.
fn assert_clean(name: &str, text: &str) {
    let raw = text
        .bytes()
        .filter(|b| (*b < 0x20 && *b != b'\n') || *b == 0x7f)
        .count();
    assert_eq!(raw, 0, "{name}: {raw} raw control bytes");
    assert!(warroom::sanitize::is_clean(text, true), "{name}");
}

#[test]
fn hostile_note_text_reaches_every_format_escaped() {
    // Each sample as a note of every judgement kind, as an action item's text and owner.
    let notes: Vec<String> = HOSTILE_SAMPLES
        .iter()
        .flat_map(|s| {
            ["#lesson", "#root-cause", "#impact", "#factor"].map(|tag| format!("{s} {tag}"))
        })
        .collect();
    let refs: Vec<&str> = notes.iter().map(String::as_str).collect();
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(&dir.path().join("data"), &refs, true);
    let mut files = Vec::new();
    for format in [Format::Markdown, Format::Status, Format::Json] {
        let mut opts = ExportOptions::new(format, incident::TZ);
        opts.out = Some(dir.path().join("out"));
        let report = postmortem::export(&store, &id, &opts).unwrap();
        files.push((format, std::fs::read_to_string(&report.written[0]).unwrap()));
    }
    for (format, text) in &files {
        assert_clean(&format!("{format:?}"), text);
    }
    for (format, md) in files.iter().filter(|(f, _)| *f != Format::Json) {
        let mut images = 0;
        for e in Parser::new_ext(md, Options::ENABLE_TABLES) {
            match e {
                Md::Html(h) | Md::InlineHtml(h) => {
                    panic!("{format:?}: HTML reached the draft: {h}")
                }
                Md::Start(Tag::Link { dest_url, .. }) => {
                    panic!("{format:?}: a link reached the draft: {dest_url}")
                }
                Md::Start(Tag::Image { dest_url, .. }) => {
                    assert!(dest_url.starts_with("charts/"), "{format:?}: {dest_url}");
                    images += 1;
                }
                Md::Start(Tag::Heading { .. })
                | Md::Start(Tag::List(_))
                | Md::Start(Tag::Table(_)) => {}
                _ => {}
            }
        }
        if *format == Format::Markdown {
            // Every panel but the request rate, which never moved.
            assert_eq!(images, 8);
        }
        assert!(!md.contains("<script>"), "{format:?}");
    }
    // The text is still there, shown escaped: the script tag's words, the pipes of a table cell.
    let md = &files[0].1;
    assert!(md.contains("\\<script\\>alert(1)\\</script\\>"), "{md}");
    assert!(
        md.contains("\\`code\\` \\| pipe \\| \\!\\[img\\](x)"),
        "{md}"
    );
    assert!(md.contains("\\\\e\\]0;pwned title\\\\x07"), "{md}");
    // Lessons hold every sample, each its own paragraph: none swallowed another (the lessons
    // the draft suggests from the facts follow them, marked).
    let lessons = md.split("## Lessons Learned").nth(1).unwrap();
    let paragraphs = lessons
        .split("\n\n")
        .filter(|p| !p.trim().is_empty() && !p.starts_with("[Suggested]"))
        .count();
    assert_eq!(paragraphs, HOSTILE_SAMPLES.len() + 1, "{lessons}");
    // The timeline table keeps two columns on every row whatever the notes hold.
    let rows: Vec<&str> = md
        .split("## Timeline")
        .nth(1)
        .unwrap()
        .split("## Root Cause")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('|'))
        .collect();
    for r in &rows {
        let unescaped = r.replace("\\|", "");
        assert_eq!(unescaped.matches('|').count(), 3, "{r}");
    }
    // JSON keeps the (sanitized) text as data, as the sentence the draft prints (a full stop
    // added).
    let v: serde_json::Value = serde_json::from_str(&files[2].1).unwrap();
    let lessons = v["notes"]["lesson"].as_array().unwrap();
    assert!(lessons.iter().any(|l| l == "<script>alert(1)</script>."));
}

/// Numbers in an SVG attribute.
fn num(node: roxmltree::Node, attr: &str) -> f64 {
    node.attribute(attr)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

#[test]
fn charts_are_valid_svg_with_thresholds_and_the_impact_window() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(&dir.path().join("data"), &[], true);
    let mut opts = ExportOptions::new(Format::Markdown, incident::TZ);
    opts.out = Some(dir.path().join("out"));
    let report = postmortem::export(&store, &id, &opts).unwrap();
    let svgs: Vec<_> = report
        .written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    assert_eq!(svgs.len(), 8);
    for path in &svgs {
        let text = std::fs::read_to_string(path).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg", "{path:?}");
    }

    let text = std::fs::read_to_string(dir.path().join("out/charts/error-ratio.svg")).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().trim().to_string())
        .collect();
    for label in [
        "warn 1%",
        "crit 5%",
        "impact window 07:18–08:53",
        "Error ratio",
    ] {
        assert!(
            texts.iter().any(|t| t == label),
            "no {label:?} in {texts:?}"
        );
    }
    // The plot's horizontal extent: the crit threshold line runs across all of it.
    let c = postmortem::chart::IMPACT_FILL;
    // The plot's horizontal extent: the crit threshold line runs across all of it (the widest
    // line drawn in that colour; the legend's sample is short).
    let (left, right) = doc
        .descendants()
        .filter(|n| n.attribute("stroke") == Some("#C80000"))
        .filter_map(|n| n.attribute("points"))
        .map(|pts| {
            pts.split_whitespace()
                .filter_map(|p| p.split(',').next()?.parse::<f64>().ok())
                .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)))
        })
        .max_by(|a, b| (a.1 - a.0).total_cmp(&(b.1 - b.0)))
        .unwrap_or_else(|| panic!("no crit line in {text}"));
    let fill = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
    let shade = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(fill.as_str()))
        .max_by(|a, b| num(*a, "width").total_cmp(&num(*b, "width")))
        .unwrap_or_else(|| panic!("no impact shade ({fill}) in {text}"));
    let (x, w) = (num(shade, "x"), num(shade, "width"));
    // Where 07:18 and 08:53 fall in a 06:40–09:30 window, within two pixels.
    let span = right - left;
    let frac = |hm: &str| {
        let w = incident::window();
        (incident::at(hm) - w.from).num_seconds() as f64 / (w.to - w.from).num_seconds() as f64
    };
    assert!(
        (x - (left + frac("07:18") * span)).abs() <= 2.0,
        "x {x}, plot {left}..{right}"
    );
    assert!(
        (x + w - (left + frac("08:53") * span)).abs() <= 2.0,
        "end {}, plot {left}..{right}",
        x + w
    );
    // Four steps marked, each with its line, labelled with the action; the two restarts a
    // minute apart (one response) share one label.
    for label in ["Rollback", "Gateway off", "Restart (+1)"] {
        assert!(
            texts.iter().any(|t| t == label),
            "no step label {label:?} in {texts:?}"
        );
    }
    let color = |c: plotters::style::RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
    let action_lines = doc
        .descendants()
        .filter(|n| n.attribute("stroke") == Some(color(postmortem::chart::ACTION).as_str()))
        .count();
    assert_eq!(action_lines, 4, "{text}");
    // The deploy marked where it happened, with its name.
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("change planner-api-2026.07.1")),
        "{texts:?}"
    );
    let fault = doc
        .descendants()
        .filter(|n| n.attribute("stroke") == Some(color(postmortem::chart::FAULT).as_str()))
        .count();
    assert!(fault >= 1, "no fault line in {text}");
    // The legend is beside the plot: every legend text starts right of the plot's last x.
    let legend_x = postmortem::chart::SIZE.0 - postmortem::chart::LEGEND_W;
    for label in [
        "warn 1%",
        "crit 5%",
        "Error ratio",
        "impact window 07:18–08:53",
    ] {
        let xs: Vec<f64> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(label))
            .map(|n| num(n, "x"))
            .collect();
        assert!(
            xs.iter().any(|x| *x >= legend_x as f64),
            "{label} not in the legend: {xs:?}"
        );
    }
    assert!(
        right <= legend_x as f64,
        "the plot stays left of the legend"
    );
}
