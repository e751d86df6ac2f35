//! Where text goes. The text sink prints the legacy tables as each size
//! finishes (so a long run shows progress); the JSON sink keeps stdout for
//! the single document and sends the server's `Listening…` line and
//! warnings to stderr; the silent sink is `--local`'s server half.

use crate::session::Sink;
use fabdiag_engine::SizeResult;
use fabdiag_report::{bw_text, legacy, BwRun, RowView};
use std::io::Write;

pub struct TextSink {
    pub prog: String,
}

fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) must not turn into a panic.
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

impl Sink for TextSink {
    fn listening(&mut self, port: u16) {
        out(&format!("{}\n", legacy::listening(port)));
    }
    fn banner(&mut self, run: &BwRun) {
        out(&bw_text::banner(run));
    }
    fn row(&mut self, _run: &BwRun, r: &SizeResult) {
        out(&bw_text::row(&RowView::from(r)));
    }
    fn footer(&mut self, run: &BwRun) {
        out(&bw_text::footer(run.tool));
    }
    fn warn(&mut self, message: &str) {
        eprintln!("{}: {message}", self.prog);
    }
}

pub struct JsonSink {
    pub prog: String,
}

impl Sink for JsonSink {
    fn listening(&mut self, port: u16) {
        eprintln!("{}", legacy::listening(port));
    }
    fn banner(&mut self, _: &BwRun) {}
    fn row(&mut self, _: &BwRun, _: &SizeResult) {}
    fn footer(&mut self, _: &BwRun) {}
    fn warn(&mut self, message: &str) {
        eprintln!("{}: {message}", self.prog);
    }
}

pub struct SilentSink;

impl Sink for SilentSink {
    fn listening(&mut self, _: u16) {}
    fn banner(&mut self, _: &BwRun) {}
    fn row(&mut self, _: &BwRun, _: &SizeResult) {}
    fn footer(&mut self, _: &BwRun) {}
    fn warn(&mut self, _: &str) {}
}

pub fn print_stdout(s: &str) {
    out(s);
}
