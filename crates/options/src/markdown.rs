//! The guide's reference pages: the manual pages of `pages` rendered as
//! CommonMark, one file per command (docs/reference/), and an index. The
//! tools' original names (cxi_write_bw, ...) carry the same page as their
//! subcommand, so the reference holds each once. Pure: text is returned;
//! the test below compares it with the committed files.
//!
//! Written by hand rather than through a Markdown writer crate: the page
//! model has six kinds of block and the only subtle part, escaping, is a
//! few lines here.

use crate::pages::{self, Block, PageDoc, Span};
use fabdiag_model::{Tool, HOST_TRAFFIC_ORIGINAL};

/// One reference page: its file name (`fabdiag-write-bw.md`) and text.
pub struct RefPage {
    pub file: String,
    pub text: String,
}

/// `s` with every character that CommonMark could read as markup escaped,
/// and a line start that would open a list or heading neutralised.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        // an underscore inside a word is never emphasis in CommonMark, so
        // cxi_write_bw stays readable in the source
        let inside_word = c == '_'
            && i > 0
            && chars[i - 1].is_alphanumeric()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#') && !inside_word {
            out.push('\\');
        }
        out.push(c);
    }
    let starts_block = out.starts_with("- ")
        || out.starts_with("+ ")
        || out.starts_with('=')
        || out
            .split_once(['.', ')'])
            .is_some_and(|(n, _)| !n.is_empty() && n.len() < 10 && n.bytes().all(|b| b.is_ascii_digit()));
    if starts_block {
        // a backslash before the first character keeps it text
        out.insert(0, '\\');
        if out[1..].starts_with(|c: char| c.is_ascii_digit()) {
            // escaping a digit is not a CommonMark escape: escape the
            // punctuation after the number instead
            out.remove(0);
            if let Some(at) = out.find(['.', ')']) {
                out.insert(at, '\\');
            }
        }
    }
    out
}

fn spans(s: &[Span]) -> String {
    s.iter()
        .map(|s| match s {
            Span::Roman(t) => escape(t),
            Span::Bold(t) => format!("**{}**", escape(t)),
            Span::Italic(t) => format!("*{}*", escape(t)),
        })
        .collect()
}

/// A fence longer than any run of backticks in `body`.
fn fence(body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// The blocks of one section. Consecutive `Text` lines form one paragraph
/// (a `Break` between them is a hard line break), as in roff.
fn blocks(out: &mut String, bs: &[Block]) {
    let mut open = false; // inside a paragraph of Text lines
    let close = |out: &mut String, open: &mut bool| {
        if *open {
            out.push_str("\n\n");
            *open = false;
        }
    };
    for b in bs {
        match b {
            Block::Text(s) => {
                if open && !out.ends_with("\\\n") {
                    out.push('\n');
                }
                out.push_str(&spans(s));
                open = true;
            }
            Block::Break => {
                if open {
                    out.push_str("\\\n");
                }
            }
            Block::Para(t) => {
                close(out, &mut open);
                out.push_str(&escape(t));
                out.push_str("\n\n");
            }
            Block::Verbatim(t) => {
                close(out, &mut open);
                let f = fence(t);
                out.push_str(&format!("{f}text\n{}\n{f}\n\n", t.trim_end()));
            }
            Block::Item { term, lines } => {
                close(out, &mut open);
                out.push_str(&format!("- {}", spans(term)));
                for l in lines {
                    out.push_str(&format!("\\\n  {}", escape(l)));
                }
                out.push_str("\n\n");
            }
            Block::Bullet(t) => {
                close(out, &mut open);
                out.push_str(&format!("- {}\n\n", escape(t)));
            }
        }
    }
    close(out, &mut open);
}

/// A generated page's title and the line that says how it is made.
fn start(title: &str) -> String {
    format!(
        "# {title}\n\n<!-- Made from the option tables and crates/options/src/pages.rs by `FABDIAG_WRITE_REFERENCE=1 cargo test -p fabdiag-options reference`; edit those, not this file. -->\n\n"
    )
}

/// `out` with one newline at the end, as an editor leaves it.
fn finish(mut out: String) -> String {
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn render(page: &PageDoc) -> String {
    let mut out = start(&format!("{}(1)", page.name));
    for s in &page.sections {
        out.push_str(&format!("## {}\n\n", s.title));
        blocks(&mut out, &s.blocks);
    }
    finish(out)
}

/// Pages under a tool's original name: the same page as its subcommand's.
fn is_original_name(name: &str) -> bool {
    Tool::from_original(name).is_some() || name == HOST_TRAFFIC_ORIGINAL
}

/// The index: every command, with what it does, and the original names.
fn index(pages: &[PageDoc]) -> String {
    let mut out = start("Reference");
    out.push_str(
        "Every command's manual page, made from the same option table that prints its `-h`. \
Installed, the same pages are `man fabdiag`, `man fabdiag-write-bw`, ..., and `man cxi_write_bw` under each tool's original name.\n\n\
| Page | Original name | What it is |\n|---|---|---|\n",
    );
    for p in pages.iter().filter(|p| !is_original_name(&p.name)) {
        let summary = p
            .sections
            .first()
            .and_then(|s| s.blocks.first())
            .map(|b| match b {
                Block::Text(s) => spans(s),
                _ => String::new(),
            })
            .unwrap_or_default();
        // "cxi_write_bw, fabdiag write-bw - what" → "what"
        let what = summary.split_once(" - ").map_or(summary.as_str(), |(_, w)| w);
        let original = Tool::all()
            .find(|t| format!("fabdiag-{}", t.subcommand()) == p.name)
            .map(|t| t.original_name())
            .or((p.name == "fabdiag-host-traffic").then_some(HOST_TRAFFIC_ORIGINAL))
            .unwrap_or("");
        let original = if original.is_empty() {
            String::new()
        } else {
            format!("`{original}`")
        };
        out.push_str(&format!("| [{0}]({0}.md) | {original} | {what} |\n", p.name));
    }
    out.push_str("\nEvery command's exit codes on one page: [exit-status.md](exit-status.md).\n");
    out
}

/// Every command's exit codes on one page, from the same tables as each
/// manual page's EXIT STATUS: the guide links here rather than repeat
/// them.
fn exit_status(pages: &[PageDoc]) -> String {
    let mut out = start("Exit status");
    out.push_str(
        "What each command's exit code means, as its manual page says it. The pair tools are write-bw, \
read-bw, send-bw, send-lat, write-lat, read-lat, atomic-bw, atomic-lat and gpu-loopback-bw, under \
those subcommands or their original names (cxi_write_bw, ...); host-traffic is also \
gc-hosttraffictest.\n\n",
    );
    let groups = [
        ("fabdiag-write-bw", "The pair tools"),
        ("fabdiag-serve", "fabdiag serve"),
        ("fabdiag-sweep", "fabdiag sweep"),
        ("fabdiag-host-traffic", "fabdiag host-traffic"),
        ("fabdiag", "Every command at a glance"),
    ];
    for (name, title) in groups {
        let Some(section) = pages
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.sections.iter().find(|s| s.title == "EXIT STATUS"))
        else {
            continue;
        };
        out.push_str(&format!("## {}\n\n", escape(title)));
        blocks(&mut out, &section.blocks);
    }
    finish(out)
}

/// The reference: one page per command, and `README.md`, its index.
pub fn reference(version: &str) -> Vec<RefPage> {
    let pages = pages::pages(version);
    let mut out: Vec<RefPage> = pages
        .iter()
        .filter(|p| !is_original_name(&p.name))
        .map(|p| RefPage {
            file: format!("{}.md", p.name),
            text: render(p),
        })
        .collect();
    out.push(RefPage {
        file: "exit-status.md".into(),
        text: exit_status(&pages),
    });
    out.push(RefPage {
        file: "README.md".into(),
        text: index(&pages),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn escaping_keeps_markup_characters_text() {
        assert_eq!(escape("a*b _c"), "a\\*b \\_c");
        assert_eq!(escape("cxi_write_bw"), "cxi_write_bw");
        assert_eq!(escape("- not a list"), "\\- not a list");
        assert_eq!(escape("1. not a list"), "1\\. not a list");
        assert_eq!(escape("<port>"), "\\<port\\>");
        assert_eq!(escape("plain --iters=N"), "plain --iters=N");
    }

    #[test]
    fn verbatim_fences_outgrow_the_backticks_inside() {
        assert_eq!(fence("no ticks"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }

    /// docs/reference/ is exactly what the option tables make, so the
    /// guide's reference cannot drift from `-h` and the manual pages. Set
    /// FABDIAG_WRITE_REFERENCE=1 to rewrite the files after changing an
    /// option.
    #[test]
    fn reference_pages_match_the_option_tables() {
        // the version is not printed on reference pages: a release does
        // not rewrite them
        let pages = reference("0.0.0");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference");
        if std::env::var_os("FABDIAG_WRITE_REFERENCE").is_some() {
            std::fs::create_dir_all(&dir).expect("create docs/reference");
            for p in &pages {
                std::fs::write(dir.join(&p.file), &p.text).expect("write a reference page");
            }
        }
        let mut stale = Vec::new();
        for p in &pages {
            let on_disk = std::fs::read_to_string(dir.join(&p.file)).unwrap_or_default();
            if on_disk != p.text {
                stale.push(p.file.clone());
            }
        }
        let mut extra: Vec<String> = std::fs::read_dir(&dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|f| !pages.iter().any(|p| &p.file == f))
                    .collect()
            })
            .unwrap_or_default();
        extra.sort();
        assert!(
            stale.is_empty() && extra.is_empty(),
            "docs/reference is stale (rewrite with FABDIAG_WRITE_REFERENCE=1 cargo test -p fabdiag-options reference): differ {stale:?}, not made by the tables {extra:?}"
        );
    }

    #[test]
    fn every_tool_has_a_reference_page_listed_in_the_index() {
        let pages = reference("0.0.0");
        let index = &pages.iter().find(|p| p.file == "README.md").expect("index").text;
        for t in Tool::all() {
            let file = format!("fabdiag-{}.md", t.subcommand());
            let page = pages.iter().find(|p| p.file == file).expect("a page per tool");
            assert!(index.contains(&format!("]({file})")), "{file}");
            assert!(index.contains(&format!("`{}`", t.original_name())), "{file}");
            assert!(page.text.contains("## FABDIAG OPTIONS"), "{file}");
        }
    }
}
