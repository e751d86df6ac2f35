//! Manual pages: every page of `pages` rendered as roff (fabdiag(1), one
//! page per tool under its subcommand and its original name, and pages
//! for `serve`, `sweep` and the host traffic test). Pure: pages are
//! returned as text; writing them somewhere is the caller's business.

use crate::pages::{self, Block, PageDoc, Span};
use roff::{bold, italic, roman, Inline, Roff};

/// One page: its file name without the section (`cxi_write_bw`) and roff.
pub struct Page {
    pub name: String,
    pub roff: String,
}

fn inlines(spans: &[Span]) -> Vec<Inline> {
    spans
        .iter()
        .map(|s| match s {
            Span::Roman(t) => roman(t.as_str()),
            Span::Bold(t) => bold(t.as_str()),
            Span::Italic(t) => italic(t.as_str()),
        })
        .collect()
}

fn block(r: &mut Roff, b: &Block) {
    match b {
        Block::Text(spans) => {
            r.text(inlines(spans));
        }
        Block::Break => {
            r.control("br", []);
        }
        Block::Para(t) => {
            r.control("PP", []).text([roman(t.as_str())]);
        }
        Block::Verbatim(t) => {
            r.control("nf", []);
            for line in t.lines() {
                r.text([roman(line)]);
            }
            r.control("fi", []);
        }
        Block::Item { term, lines } => {
            r.control("TP", []).text(inlines(term));
            for (i, line) in lines.iter().enumerate() {
                if i > 0 {
                    r.control("br", []);
                }
                r.text([roman(line.as_str())]);
            }
        }
        Block::Bullet(t) => {
            r.control("IP", ["\\(bu", "2"]).text([roman(t.as_str())]);
        }
    }
}

/// `page` as roff.
fn render(page: &PageDoc) -> Page {
    let mut r = Roff::new();
    let title = page.name.to_ascii_uppercase();
    // title, section, then the footer's middle (the version stands in for a
    // date, so pages are reproducible), its left (source) and the manual
    let source = format!("fabdiag {}", page.version);
    r.control(
        "TH",
        [
            title.as_str(),
            "1",
            page.version.as_str(),
            source.as_str(),
            "fabdiag manual",
        ],
    );
    for s in &page.sections {
        r.control("SH", [s.title]);
        for b in &s.blocks {
            block(&mut r, b);
        }
    }
    Page {
        name: page.name.clone(),
        roff: r.render(),
    }
}

/// Every page fabdiag installs.
pub fn pages(version: &str) -> Vec<Page> {
    pages::pages(version).iter().map(render).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout;
    use fabdiag_model::Tool;

    #[test]
    fn every_tool_has_a_page_under_both_names_with_every_option_of_its_help() {
        let pages = pages("9.9.9");
        for t in Tool::all() {
            for name in [t.original_name().to_string(), format!("fabdiag-{}", t.subcommand())] {
                let p = pages
                    .iter()
                    .find(|p| p.name == name)
                    .unwrap_or_else(|| panic!("{name}"));
                assert!(
                    p.roff.contains(&format!("\n.TH {} 1 9.9.9", name.to_ascii_uppercase())),
                    "{name}"
                );
                // what a stop signal does, with the exit codes
                assert!(
                    p.roff.contains("SIGINT, SIGTERM") && p.roff.contains("interrupted"),
                    "{name}"
                );
                // every option the tool's -h shows is on its page
                for d in layout(t).documented() {
                    let shown = d.left.trim().replace('-', "\\-");
                    assert!(p.roff.contains(&shown), "{name}: {}", d.left);
                }
                for section in [
                    "SYNOPSIS",
                    "OPTIONS",
                    "FABDIAG OPTIONS",
                    "EXIT STATUS",
                    "JSON",
                    "DIFFERENCES",
                ] {
                    assert!(
                        p.roff.contains(&format!(".SH {section}")) || p.roff.contains(&format!(".SH \"{section}")),
                        "{name}: {section}"
                    );
                }
            }
        }
        for name in [
            "fabdiag",
            "fabdiag-serve",
            "fabdiag-sweep",
            "gc-hosttraffictest",
            "fabdiag-host-traffic",
        ] {
            assert!(pages.iter().any(|p| p.name == name), "{name}");
        }
    }

    /// serve, sweep and host-traffic each document their own exit codes
    /// and stop signals, not the pair tools' (which name --min-bw and a
    /// peer they do not have).
    #[test]
    fn each_command_page_has_its_own_exit_codes() {
        let pages = pages("9.9.9");
        let page = |name: &str| {
            pages
                .iter()
                .find(|p| p.name == name)
                .map(|p| p.roff.replace("\\-", "-"))
                .unwrap_or_else(|| panic!("{name}"))
        };
        let exits = |roff: &str| -> String {
            let start = roff.find(".SH \"EXIT STATUS\"").unwrap_or(0);
            let end = roff.find(".SH \"SEE ALSO\"").unwrap_or(roff.len());
            roff[start..end].to_string()
        };
        let sweep = exits(&page("fabdiag-sweep"));
        assert!(
            sweep.contains("\\fB5\\fR") && sweep.contains("Slow links or nodes"),
            "{sweep}"
        );
        assert!(sweep.contains("rounds left as not tested"), "{sweep}");
        for name in ["gc-hosttraffictest", "fabdiag-host-traffic"] {
            let t = exits(&page(name));
            assert!(t.contains("--min-tile-bandwidth") && !t.contains("--min-bw"), "{t}");
            assert!(t.contains("every finished test"), "{t}");
        }
        let serve = exits(&page("fabdiag-serve"));
        assert!(
            serve.contains("Stopped by SIGINT or SIGTERM") && !serve.contains("--min-bw"),
            "{serve}"
        );
        let overview = exits(&page("fabdiag"));
        assert!(overview.contains("fabdiag sweep only"), "{overview}");
        // the sweep's own variables, and the shared ones on every command page
        let sweep = page("fabdiag-sweep");
        for var in [
            "FABDIAG_RANK",
            "FABDIAG_COORDINATOR",
            "FABDIAG_NODE_NAME",
            "FABDIAG_PROGRESS_SECS",
        ] {
            assert!(sweep.contains(var), "{var}: {sweep}");
        }
        for name in ["fabdiag-serve", "fabdiag-sweep", "fabdiag-host-traffic"] {
            assert!(page(name).contains("FABDIAG_LIBFABRIC"), "{name}");
        }
    }
}
