//! `warroom publish ID [--repo OWNER/NAME] [--as pr|issue] [--dry-run]`.

use super::Context;
use crate::cli::{PublishArgs, PublishAs};
use crate::config::RepoName;
use crate::github::client::{Github, load_token};
use crate::github::deliver::queue_and_deliver;
use crate::github::outbox::Outbox;
use crate::github::plan;
use crate::github::publication::Publication;
use crate::github::publish::Target;
use crate::github::timer::WallTimer;
use color_eyre::eyre::{Result, eyre};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs `warroom publish`.
pub async fn run(ctx: &Context, args: PublishArgs) -> Result<ExitCode> {
    let cfg = ctx.config()?;
    let gh_cfg = cfg.github.clone().unwrap_or_default();
    let repo: RepoName = match (&args.repo, &gh_cfg.postmortems) {
        (Some(r), _) => r.parse().map_err(|m: String| eyre!("--repo: {m}"))?,
        (None, Some(r)) => r.clone(),
        (None, None) => {
            return Err(eyre!(
                "no repository to publish to: pass --repo OWNER/NAME or set `postmortems = \
                 \"owner/name\"` under [github] in the config"
            ));
        }
    };
    let store = ctx.store.clone();
    let id = store.find(&args.id)?;
    let publication = Publication::load(&store, &id)?;
    let target = match args.publish_as {
        PublishAs::Pr => Target::Pr,
        PublishAs::Issue => Target::Issue,
    };
    let mut out = std::io::stdout().lock();
    // The author's work left in the draft goes out as it is: say so before it does.
    for f in crate::postmortem::lint::unfinished(&publication.markdown) {
        eprintln!("warroom publish: warning: {}", f.message);
    }
    if args.dry_run {
        let known = Outbox::new(&store.dir(&id)).known(&repo.to_string())?;
        let requests = plan::plan(
            &publication,
            &repo,
            target,
            &known,
            gh_cfg.base_branch.as_deref(),
        );
        out.write_all(plan::render(&publication, &repo, target, &requests).as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let token = load_token(&gh_cfg.token).map_err(|e| {
        eyre!("{e}; warroom reads the GitHub token from GITHUB_TOKEN or [github] token_file")
    })?;
    let gh = Github::new(
        &gh_cfg.api_url,
        Some(&token),
        gh_cfg.timeout,
        Arc::new(WallTimer),
    )?;
    // Ctrl-C, SIGTERM or a dropped ssh session (SIGHUP) stops publishing at once, in a
    // rate-limit wait too: nothing more is sent. The work stays in the outbox, which was made
    // durable before each request (as after a crash), and the next run finishes it.
    let mut signals = crate::signals::Signals::new();
    let delivering = queue_and_deliver(
        &store,
        &id,
        &gh,
        &repo,
        target,
        gh_cfg.base_branch.as_deref(),
    );
    let deliveries = tokio::select! {
        d = delivering => d?,
        signal = signals.next() => {
            eprintln!(
                "warroom publish: stopped by {signal}; nothing more was sent. The work is kept \
                 in \"{}\"; run `warroom publish {id}` again to complete it.",
                Outbox::new(&store.dir(&id)).path().display()
            );
            return Ok(crate::signals::exit_code(signal));
        }
    };
    let mut failed = false;
    for d in &deliveries {
        match &d.result {
            Ok(outcome) => {
                writeln!(out, "published to {}: {}", d.job.repo, outcome.summary())?;
                for (item, obj) in &outcome.items {
                    writeln!(out, "  {item}: {}", obj.url)?;
                }
                if !d.on_timeline {
                    writeln!(
                        out,
                        "  (the incident is held by a console; the result is in the outbox, \
                         not yet on the timeline)"
                    )?;
                }
            }
            Err(e) => {
                failed = true;
                eprintln!(
                    "warroom publish: {} to {} not finished: {e}\nThe work is kept in \"{}\"; \
                     run `warroom publish {id}` again to complete it.",
                    id,
                    d.job.repo,
                    Outbox::new(&store.dir(&id)).path().display()
                );
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
