//! `warroom import grafana FILE.json [--toml] [--prometheus URL]`: a Grafana dashboard as
//! `[[panel]]` entries, and a report of every panel not converted (its JSON path and why) and
//! every caveat worth a look. Without `--prometheus`, the query variables the panels use are
//! written as `[[variable]]` entries, which the console and `warroom record` resolve when
//! they start.

use super::Context;
use crate::cli::GrafanaArgs;
use crate::import::grafana::{self, Finding, ImportOptions, VariableResolver};
use color_eyre::eyre::WrapErr;
use std::process::ExitCode;

/// Run `warroom import grafana`.
pub async fn grafana(ctx: &Context, args: GrafanaArgs) -> color_eyre::Result<ExitCode> {
    let config = ctx.config_or_default();
    let shown = if args.file.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        format!("\"{}\"", args.file.display())
    };
    let bytes = crate::paths::read_capped(&args.file, grafana::MAX_INPUT_BYTES)
        .wrap_err_with(|| format!("cannot read the dashboard from {shown}"))?;
    let text = String::from_utf8(bytes)
        .wrap_err_with(|| format!("{shown} is not UTF-8 text: is it a dashboard JSON export?"))?;
    let client = match config.prometheus.url {
        Some(_) => Some(crate::metrics::from_config::client(&config)?),
        None => None,
    };
    let resolver = client.as_deref().map(|c| c as &dyn VariableResolver);
    let options = ImportOptions {
        range: config.range,
        ..ImportOptions::default()
    };
    let import = grafana::import(&text, resolver, options).await?;
    let mut panels = crate::config::panels::render_toml(&import.panels);
    if !import.variables.is_empty() {
        panels.push('\n');
        panels.push_str(&crate::config::variables::render_toml(&import.variables));
    }
    let mut report = String::new();
    let say = |out: &mut String, head: &str, findings: &[Finding]| {
        if findings.is_empty() {
            return;
        }
        out.push_str(&format!("{head} ({}):\n", findings.len()));
        for f in findings {
            out.push_str(&format!("  {}: {}\n", f.path, f.message));
        }
    };
    report.push_str(&format!(
        "{}: {} panel(s) converted from the {}\n",
        import.title.as_deref().unwrap_or("the dashboard"),
        import.panels.len(),
        import.model.name()
    ));
    if !import.variables.is_empty() {
        let names: Vec<String> = (import.variables.iter())
            .map(|v| format!("${}", v.name))
            .collect();
        report.push_str(&format!(
            "resolved against the Prometheus when the console opens or `warroom record` \
             starts ({}): {}\n",
            names.len(),
            names.join(", ")
        ));
    }
    say(&mut report, "not converted", &import.skipped);
    say(&mut report, "to check", &import.warnings);
    if args.toml {
        print!("{panels}");
        eprint!("{report}");
    } else {
        print!("{report}");
        if !import.panels.is_empty() {
            println!("\n# The panels, for warroom.toml (or run again with --toml):\n{panels}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
