//! Hostile text from Prometheus (label values, error messages, warnings) goes through the real
//! reply parser into the model and onto the screen: 0 raw control bytes reach the terminal.

use chrono::Utc;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use warroom::app::Model;
use warroom::config::Config;
use warroom::metrics::prometheus::parse_answer;
use warroom::sanitize::{HOSTILE_SAMPLES, is_clean};
use warroom::theme::Theme;

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

#[test]
fn hostile_labels_warnings_and_errors_never_reach_the_terminal_raw() {
    assert!(HOSTILE_SAMPLES.len() >= 30);
    let now = Utc::now();
    let t = now.timestamp() as f64;
    // Every hostile string as a pod label, in one matrix with a hostile warning.
    let results: Vec<String> = HOSTILE_SAMPLES
        .iter()
        .map(|h| {
            format!(
                r#"{{"metric":{{"pod":{},{}:"x"}},"values":[[{},"0.97"]]}}"#,
                json_string(h),
                json_string(&format!("l{}", h.len())),
                t - 1.0
            )
        })
        .collect();
    let body = format!(
        r#"{{"status":"success","warnings":[{}],"data":{{"resultType":"matrix","result":[{}]}}}}"#,
        json_string("\u{1b}]0;warned\u{7}shard down"),
        results.join(",")
    );
    let answer = parse_answer(200, Some("application/json"), None, body.as_bytes()).unwrap();
    assert_eq!(answer.series.len(), HOSTILE_SAMPLES.len());

    // A hostile error message on another panel.
    let err_body = format!(
        r#"{{"status":"error","errorType":"bad_data","error":{}}}"#,
        json_string("\u{1b}[2J\u{1b}]52;c;cm0=\u{7}parse error \u{202e}")
    );
    let error = parse_answer(400, Some("application/json"), None, err_body.as_bytes()).unwrap_err();

    for (w, h) in [(80u16, 24u16), (200, 60)] {
        let mut m = Model::new(
            &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
            Theme::builtin("default").unwrap(),
            "p".into(),
            now,
        );
        m.width = w;
        m.height = h;
        m.panels[0].series = answer.series.clone();
        m.panels[0].warnings = answer.warnings.clone();
        m.panels[0].last_ok = Some(now);
        m.panels[1].last_error = Some((now, error.to_string()));
        for zoomed in [false, true] {
            m.zoomed = zoomed;
            let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
            term.draw(|f| warroom::ui::view(f, &m)).unwrap();
            let buf = term.backend().buffer();
            let mut raw = 0;
            for cell in &buf.content {
                if !is_clean(cell.symbol(), false) {
                    raw += 1;
                }
            }
            assert_eq!(raw, 0, "{raw} cells with raw control characters at {w}x{h}");
            let text = term.backend().to_string();
            assert!(!text.contains('\u{1b}'));
            if zoomed && w == 200 {
                // The operator sees what was there, escaped.
                assert!(text.contains("\\e]0;warned\\x07shard down"), "{text}");
            }
        }
    }
}
