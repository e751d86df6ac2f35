//! One option of one command, as every part of fabdiag sees it. The getopt
//! parser, `-h`, the shells' completions, the manual pages and the guide's
//! reference all read a command's rows, so an option is written once: its
//! letters, its value's name, its help as `-h` prints it and the one line
//! the shells show. Each command keeps its own table of rows, an `apply`
//! that puts one value into its settings, and its checks. Nothing here
//! validates a value or prints.

/// How a row's left column is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Left {
    /// `-s, --long=VALUE` (getopt style) or `-s [ --long ] arg` (Boost's).
    Derived,
    /// As written: an original tool's usage whose column differs from
    /// the rule (`-A, --atomic-op` takes a value it does not name).
    As(&'static str),
    /// Accepted but never shown (an old spelling kept working).
    Hidden,
}

/// One option.
#[derive(Clone, Copy, Debug)]
pub struct Row<Id: Copy> {
    pub id: Id,
    pub short: Option<char>,
    pub long: &'static str,
    /// The value's name in `-h` (`PORT`); None: a flag that takes none.
    pub value: Option<&'static str>,
    /// Help lines as `-h` prints them, wrapped by hand to keep each
    /// command's layout (the originals' among them); `{NAME}` placeholders
    /// are filled by the command.
    pub help: &'static [&'static str],
    /// The shells' one line, where it is not the first help line.
    pub brief: Option<&'static str>,
    pub left: Left,
}

impl<Id: Copy> Row<Id> {
    /// An option that takes no value.
    pub const fn flag(id: Id, short: Option<char>, long: &'static str, help: &'static [&'static str]) -> Row<Id> {
        Row {
            id,
            short,
            long,
            value: None,
            help,
            brief: None,
            left: Left::Derived,
        }
    }

    /// An option that takes a value named `value` in `-h`.
    pub const fn valued(
        id: Id,
        short: Option<char>,
        long: &'static str,
        value: &'static str,
        help: &'static [&'static str],
    ) -> Row<Id> {
        Row {
            id,
            short,
            long,
            value: Some(value),
            help,
            brief: None,
            left: Left::Derived,
        }
    }

    /// The shells' one line for this option.
    pub const fn brief(mut self, line: &'static str) -> Row<Id> {
        self.brief = Some(line);
        self
    }

    /// The left column as the original prints it.
    pub const fn left(mut self, column: &'static str) -> Row<Id> {
        self.left = Left::As(column);
        self
    }

    /// Accepted, never shown.
    pub const fn hidden(mut self) -> Row<Id> {
        self.left = Left::Hidden;
        self
    }

    pub const fn takes_arg(&self) -> bool {
        self.value.is_some()
    }

    pub fn is_shown(&self) -> bool {
        self.left != Left::Hidden
    }

    /// The shells' line, its placeholders filled by `fill`.
    pub fn brief_line(&self, fill: &dyn Fn(&str) -> String) -> String {
        match (self.brief, self.help.first()) {
            (Some(b), _) => fill(b),
            (None, Some(first)) => fill(first),
            (None, None) => String::new(),
        }
    }

    /// The left column in `style`, without its indent; None when hidden.
    pub fn column(&self, style: Style) -> Option<String> {
        let derived = match style {
            Style::Getopt { .. } => {
                let letter = self.short.map_or("    ".to_string(), |c| format!("-{c}, "));
                let value = self.value.map_or(String::new(), |v| format!("={v}"));
                format!("{letter}--{}{value}", self.long)
            }
            Style::Boost { .. } => {
                let name = match self.short {
                    Some(c) => format!("-{c} [ --{} ]", self.long),
                    None => format!("--{}", self.long),
                };
                let arg = if self.takes_arg() { " arg" } else { "" };
                format!("{name}{arg}")
            }
        };
        match self.left {
            Left::Derived => Some(derived),
            Left::As(s) => Some(s.to_string()),
            Left::Hidden => None,
        }
    }
}

/// How a command's `-h` lays its options out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `  -p, --port=PORT        help`, the help at column `width`; a
    /// left column too long for it stands on its own line.
    Getopt { width: usize },
    /// Boost.Program_options' `  -d [ --device-id ] arg   help`, as
    /// gc-hosttraffictest prints it.
    Boost { width: usize },
}

/// The option lines of `-h` for `rows` (hidden ones left out), each help
/// line's placeholders filled by `fill`.
pub fn help_block<Id: Copy>(rows: &[Row<Id>], style: Style, fill: &dyn Fn(&str) -> String) -> String {
    let (Style::Getopt { width } | Style::Boost { width }) = style;
    let mut o = String::new();
    for row in rows {
        let Some(column) = row.column(style) else { continue };
        let left = format!("  {column}");
        let mut lines = row.help.iter().map(|l| fill(l));
        if left.len() >= width {
            o.push_str(&format!("{left}\n"));
        } else {
            match lines.next() {
                Some(first) => o.push_str(&format!("{left:width$}{first}\n")),
                None => o.push_str(&format!("{left}\n")),
            }
        }
        for l in lines {
            o.push_str(&format!("{:width$}{l}\n", ""));
        }
    }
    o
}

/// An option as the shells' completions offer it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub short: Option<char>,
    pub long: &'static str,
    pub takes_arg: bool,
    /// One line of help, filled in.
    pub brief: String,
}

/// The shown rows as completions, their lines filled by `fill`.
pub fn completions<Id: Copy>(rows: &[Row<Id>], fill: &dyn Fn(&str) -> String) -> Vec<Completion> {
    rows.iter()
        .filter(|r| r.is_shown())
        .map(|r| Completion {
            short: r.short,
            long: r.long,
            takes_arg: r.takes_arg(),
            brief: r.brief_line(fill),
        })
        .collect()
}

/// `line` with each `{NAME}` of `pairs` (`("NAME", value)`) filled in.
pub fn fill_in(line: &str, pairs: &[(&str, String)]) -> String {
    pairs.iter().fold(line.to_string(), |l, (name, value)| {
        l.replace(&format!("{{{name}}}"), value)
    })
}

/// Placeholders need no filling.
pub fn as_is(line: &str) -> String {
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROWS: &[Row<u8>] = &[
        Row::valued(0, Some('p'), "port", "PORT", &["The port", "(default: {port})"]),
        Row::flag(1, None, "json", &["JSON"]).brief("JSON instead of text"),
        Row::valued(2, None, "max-test-seconds", "S", &["Refuse a long test"]),
        Row::flag(3, None, "old", &["never shown"]).hidden(),
        Row::valued(4, Some('A'), "atomic-op", "OP", &["The op"]).left("-A, --atomic-op"),
    ];

    #[test]
    fn getopt_layout_and_placeholders() {
        let fill = |l: &str| l.replace("{port}", "49194");
        let got = help_block(ROWS, Style::Getopt { width: 25 }, &fill);
        assert_eq!(
            got,
            "  -p, --port=PORT        The port
                         (default: 49194)
      --json             JSON
      --max-test-seconds=S
                         Refuse a long test
  -A, --atomic-op        The op
"
        );
        assert_eq!(ROWS[1].brief_line(&as_is), "JSON instead of text");
        assert_eq!(ROWS[0].brief_line(&fill), "The port");
        assert!(!ROWS[3].is_shown() && ROWS[4].takes_arg());
    }

    #[test]
    fn boost_layout() {
        let got = help_block(&ROWS[..2], Style::Boost { width: 30 }, &as_is);
        assert_eq!(
            got,
            "  -p [ --port ] arg           The port
                              (default: {port})
  --json                      JSON
"
        );
    }
}
