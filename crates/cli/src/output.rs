//! Where text goes. The text sinks print the legacy tables as each size
//! finishes (so a long run shows progress); the JSON sinks keep stdout for
//! the single document and send the server's `Listening…` line and
//! warnings to stderr; the silent sinks are `--local`'s server half.

use crate::session::amo::AmoSink;
use crate::session::bw::BwSink;
use crate::session::lat::LatSink;
use crate::session::Announce;
use fabdiag_engine::{LatResult, SizeResult};
use fabdiag_report::{amo_text, bw_text, lat_text, legacy, AmoRun, BwRun, LatRun, Role, RowView};
use std::io::Write;

pub fn print_stdout(s: &str) {
    let mut o = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) must not turn into a panic.
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

/// Text (`json == false`) or JSON mode, for both families.
pub struct Console {
    pub prog: String,
    pub json: bool,
    /// Print the extra percentile table (latency tools).
    pub percentiles: bool,
}

impl Console {
    fn text(&self, s: &str) {
        if !self.json {
            print_stdout(s);
        }
    }

    fn listening_line(&self, port: u16) {
        if self.json {
            eprintln!("{}", legacy::listening(port));
        } else {
            print_stdout(&format!("{}\n", legacy::listening(port)));
        }
    }

    fn warning(&self, message: &str) {
        eprintln!("{}: {message}", self.prog);
    }
}

impl Announce for Console {
    fn listening(&mut self, port: u16) {
        self.listening_line(port);
    }
    fn warn(&mut self, message: &str) {
        self.warning(message);
    }
}

impl BwSink for Console {
    fn banner(&mut self, run: &BwRun) {
        self.text(&bw_text::banner(run));
    }
    fn row(&mut self, _run: &BwRun, r: &SizeResult) {
        self.text(&bw_text::row(&RowView::from(r)));
    }
    fn footer(&mut self, run: &BwRun) {
        self.text(&bw_text::footer(run.tool));
    }
}

impl LatSink for Console {
    fn banner(&mut self, run: &LatRun) {
        let mut s = lat_text::banner(run);
        if run.role == Role::Client {
            s.push_str(&lat_text::table_start(&run.table()));
        }
        self.text(&s);
    }
    fn size(&mut self, run: &LatRun, r: &LatResult, first: bool) {
        self.text(&lat_text::size_block(&run.table(), r, first));
    }
    fn end(&mut self, run: &LatRun, results: &[LatResult]) {
        match run.role {
            Role::Client => self.text(&lat_text::client_footer(&run.table(), results, self.percentiles)),
            Role::Server => self.text(&lat_text::server_tail(&run.table())),
        }
    }
}

impl AmoSink for Console {
    fn banner(&mut self, run: &AmoRun) {
        let mut s = amo_text::banner(run);
        if run.is_latency() && run.role == Role::Client {
            s.push_str(&lat_text::table_start(&run.table()));
        }
        self.text(&s);
    }
    fn bw_row(&mut self, _: &AmoRun, r: &SizeResult) {
        self.text(&amo_text::bw_row(r));
    }
    fn lat_size(&mut self, run: &AmoRun, r: &LatResult) {
        self.text(&lat_text::size_block(&run.table(), r, true));
    }
    fn end(&mut self, run: &AmoRun, lat: Option<&LatResult>) {
        match (lat, run.role) {
            (None, _) => self.text(&amo_text::bw_footer(run)),
            (Some(r), Role::Client) => self.text(&lat_text::client_footer(
                &run.table(),
                std::slice::from_ref(r),
                self.percentiles,
            )),
            (Some(_), Role::Server) => self.text(&lat_text::server_tail(&run.table())),
        }
    }
}

/// The server half of `--local`: says nothing.
pub struct Silent;

impl Announce for Silent {
    fn listening(&mut self, _: u16) {}
    fn warn(&mut self, _: &str) {}
}

impl BwSink for Silent {
    fn banner(&mut self, _: &BwRun) {}
    fn row(&mut self, _: &BwRun, _: &SizeResult) {}
    fn footer(&mut self, _: &BwRun) {}
}

impl LatSink for Silent {
    fn banner(&mut self, _: &LatRun) {}
    fn size(&mut self, _: &LatRun, _: &LatResult, _: bool) {}
    fn end(&mut self, _: &LatRun, _: &[LatResult]) {}
}

impl AmoSink for Silent {
    fn banner(&mut self, _: &AmoRun) {}
    fn bw_row(&mut self, _: &AmoRun, _: &SizeResult) {}
    fn lat_size(&mut self, _: &AmoRun, _: &LatResult) {}
    fn end(&mut self, _: &AmoRun, _: Option<&LatResult>) {}
}
