//! Every Markdown page of the repository renders as written: each code
//! fence on a line of its own, opened with its language and closed again,
//! no heading swallowed by a code block, every relative link and image
//! pointing at a file that exists (and at a heading of it, for `#anchor`).
//! A page that breaks one of these fails here with the file, line and
//! what is wrong, one line each.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` whose name ends in `ending` (not the build's,
/// not git's).
fn files(dir: &Path, ending: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "gpu-kit" | "node_modules") {
                files(&p, ending, out);
            }
        } else if name.ends_with(ending) {
            out.push(p);
        }
    }
}

/// The fence that opens or closes a code block on this line, if it is
/// one: its character, its length and what follows it.
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = rest.chars().take_while(|x| *x == c).count();
    (n >= 3).then(|| (c, n, rest[n..].trim()))
}

/// What is wrong with the fences of `text`, line by line: a fence that is
/// not on a line of its own (text before it on the line), a block opened
/// without its language, a closing fence with text after it, a heading
/// inside a block, a block left open.
fn fence_faults(text: &str) -> Vec<String> {
    let mut faults = Vec::new();
    let mut open: Option<(char, usize, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        match (open, fence(line)) {
            (None, Some((c, len, info))) => {
                if info.is_empty() {
                    faults.push(format!(
                        "line {n}: a code block opened without its language (```text, ```sh, ```console, ...)"
                    ));
                }
                open = Some((c, len, n));
            }
            (Some((c, len, _)), Some((c2, len2, rest))) if c2 == c && len2 >= len => {
                if !rest.is_empty() {
                    faults.push(format!(
                        "line {n}: text after a closing fence ('{rest}'): it does not close the block"
                    ));
                } else {
                    open = None;
                }
            }
            (Some((c, len, _)), _) => {
                let closer: String = std::iter::repeat_n(c, len).collect();
                if line.trim_end().ends_with(&closer) {
                    faults.push(format!(
                        "line {n}: a fence at the end of a text line does not close the block: put it on a line of its own"
                    ));
                }
                let t = line.trim_start();
                let hashes = t.chars().take_while(|c| *c == '#').count();
                if (2..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
                    faults.push(format!(
                        "line {n}: a heading inside a code block ('{}'): a fence above is not closed",
                        t.trim_end()
                    ));
                }
            }
            (None, None) => {
                if line.contains("```") || line.contains("~~~") {
                    faults.push(format!(
                        "line {n}: a fence in the middle of a line: fences must be on lines of their own"
                    ));
                }
            }
        }
    }
    if let Some((_, _, n)) = open {
        faults.push(format!("line {n}: a code block opened here is never closed"));
    }
    faults
}

/// Every extension GitHub has, but not smart punctuation: GitHub keeps
/// "--verify" as typed, where smart punctuation would make it a dash.
fn options() -> Options {
    let mut o = Options::all();
    o.remove(Options::ENABLE_SMART_PUNCTUATION);
    o
}

/// GitHub's anchor for a heading: lower case, spaces to hyphens, most
/// punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Each heading's anchor in `text`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut heading: Option<String> = None;
    for e in Parser::new_ext(text, options()) {
        match e {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    out.insert(anchor(&h));
                }
            }
            _ => {}
        }
    }
    out
}

/// Every relative link and image of the page at `path` whose target (or
/// its heading) does not exist.
fn link_faults(path: &Path, text: &str) -> Vec<String> {
    let mut faults = Vec::new();
    let dir = path.parent().unwrap_or(Path::new("."));
    for (e, range) in Parser::new_ext(text, options()).into_offset_iter() {
        let dest = match e {
            Event::Start(Tag::Link { dest_url, .. }) | Event::Start(Tag::Image { dest_url, .. }) => dest_url,
            _ => continue,
        };
        let line = text[..range.start].lines().count().max(1);
        let dest = dest.to_string();
        if dest.contains("://") || dest.starts_with("mailto:") {
            continue;
        }
        let (file, frag) = match dest.split_once('#') {
            Some((f, a)) => (f, Some(a)),
            None => (dest.as_str(), None),
        };
        let target = if file.is_empty() {
            path.to_path_buf()
        } else {
            dir.join(file)
        };
        if !target.exists() {
            faults.push(format!(
                "line {line}: '{dest}' points at nothing ({} is missing)",
                target.display()
            ));
            continue;
        }
        if let Some(frag) = frag.filter(|_| target.extension().is_some_and(|x| x == "md")) {
            let body = std::fs::read_to_string(&target).unwrap_or_default();
            if !anchors(&body).contains(frag) {
                faults.push(format!(
                    "line {line}: '{dest}': {} has no heading '#{frag}'",
                    target.display()
                ));
            }
        }
    }
    faults
}

#[test]
fn every_page_renders_as_written() {
    let mut pages = Vec::new();
    files(&root(), ".md", &mut pages);
    pages.sort();
    assert!(
        pages.iter().any(|f| f.ends_with("README.md")),
        "no README.md under {}",
        root().display()
    );
    let mut faults = Vec::new();
    for f in &pages {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = f.strip_prefix(root()).unwrap_or(f).display().to_string();
        for fault in fence_faults(&text).into_iter().chain(link_faults(f, &text)) {
            faults.push(format!("{name}: {fault}"));
        }
    }
    assert!(faults.is_empty(), "{} fault(s):\n{}", faults.len(), faults.join("\n"));
}

/// The checks themselves, on pages made to break them.
#[test]
fn the_checks_find_what_breaks_a_page() {
    // the fence closed at the end of a text line: CommonMark takes it as
    // text, and every fence after it is inverted
    let bad = "text\n\n```text\nout\n```\n\nA table ends here.```\n\n## Options\n\n```sh\nls\n```\n";
    let f = fence_faults(bad);
    assert!(
        f.iter()
            .any(|x| x.starts_with("line 7: a fence in the middle of a line")),
        "{f:?}"
    );
    // the same inside an open block: the block runs on past it
    let inside = "```text\nrows\nlast row```\n\n## Next\n";
    let f = fence_faults(inside);
    assert!(f[0].starts_with("line 3: a fence at the end of a text line"), "{f:?}");
    assert!(f[1].contains("a heading inside a code block"), "{f:?}");
    let swallowed = "```sh\nls\n\n## Options\n```\n";
    assert!(fence_faults(swallowed)[0].contains("a heading inside a code block"));
    assert!(fence_faults("```\nls\n```\n")[0].contains("without its language"));
    assert!(fence_faults("```text\nls\n")[0].contains("never closed"));
    assert!(fence_faults("```text\nls\n``` text\n```\n")[0].contains("text after a closing fence"));
    // a shell comment is no heading, and a longer fence holds a shorter one
    assert!(fence_faults("```sh\n# Slurm\nls\n```\n\n````markdown\n```text\nx\n```\n````\n").is_empty());
    let dir = std::env::temp_dir().join(format!("fabdiag-md-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    std::fs::write(dir.join("a.md"), "# Title\n\n## The tools\n").expect("written");
    let page = dir.join("b.md");
    let text = "[ok](a.md#the-tools) [gone](nothere.md) [no heading](a.md#nope) ![pic](a.png) [web](https://x.org/y)";
    let f = link_faults(&page, text);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(f.len(), 3, "{f:?}");
    assert!(f[0].contains("'nothere.md' points at nothing"));
    assert!(f[1].contains("has no heading '#nope'"));
    assert!(f[2].contains("'a.png' points at nothing"));
    assert_eq!(anchor("Exit codes, and `--json`"), "exit-codes-and---json");
}

/// The section numbers docs/originals.md has: its numbered headings, and
/// the numbered points of §6 (the originals' quirks) as 6.N.
fn original_sections(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_quirks = false;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix('#') {
            let number: String = h
                .trim_start_matches('#')
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.').to_string();
            in_quirks = number == "6";
            if !number.is_empty() {
                out.insert(number);
            }
        } else if in_quirks {
            if let Some((n, _)) = line.split_once(". ") {
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                    out.insert(format!("6.{n}"));
                }
            }
        }
    }
    out
}

/// The code cites the originals' behaviour as "originals §2.9": each such
/// section is in docs/originals.md, so a reader can follow the citation.
#[test]
fn every_section_the_code_cites_is_in_the_originals_page() {
    let page = std::fs::read_to_string(root().join("docs/originals.md")).expect("docs/originals.md");
    let have = original_sections(&page);
    let mut sources = Vec::new();
    files(&root().join("crates"), ".rs", &mut sources);
    let mut missing = Vec::new();
    let mut cited = 0;
    for f in sources {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            for part in line.split("originals §").skip(1) {
                let n: String = part.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
                let n = n.trim_end_matches('.');
                if n.is_empty() {
                    continue; // the words themselves, not a citation
                }
                cited += 1;
                if !have.contains(n) {
                    let name = f.strip_prefix(root()).unwrap_or(&f).display().to_string();
                    missing.push(format!("{name}:{}: originals §{n}", i + 1));
                }
            }
        }
    }
    assert!(
        cited > 10,
        "only {cited} citations found: is the search looking in the right place?"
    );
    assert!(
        missing.is_empty(),
        "cited but not in docs/originals.md:\n{}",
        missing.join("\n")
    );
    assert!(
        have.contains("6.13") && have.contains("2.6.4") && !have.contains("7"),
        "{have:?}"
    );
}
