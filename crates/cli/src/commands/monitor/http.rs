//! The monitor's HTTP side: `GET /metrics` is the record as Prometheus's
//! text format, `GET /` a line pointing there; anything else is 404, or
//! 405 for a method other than GET and HEAD. It reads the record under
//! its lock and never waits on a probe, so a scrape is answered while
//! probes hang. It stops when the monitor is stopped.

use crate::signals::{lock, Stop};
use fabdiag_monitor::Watch;
use std::sync::Mutex;
use std::time::Duration;
use tiny_http::{Header, Method, Request, Response, Server};

/// The exposition format's content type, as Prometheus asks for it.
const METRICS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

fn text(code: u16, body: String, content_type: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    let mut r = Response::from_string(body).with_status_code(code);
    if let Some(h) = header("Content-Type", content_type) {
        r.add_header(h);
    }
    r
}

/// Answers requests until `stop`; a failed encoding (a fabdiag bug) is
/// answered 500 and said once.
pub fn serve(prog: &str, server: &Server, record: &Mutex<Watch>, stop: &Stop) {
    let mut said = false;
    while stop.signal().is_none() {
        let req = match server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                tell!("{prog}: /metrics: {e}");
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
        };
        answer(prog, req, record, &mut said);
    }
}

fn answer(prog: &str, req: Request, record: &Mutex<Watch>, said: &mut bool) {
    let path = req.url().split('?').next().unwrap_or("").to_string();
    let response = match (req.method(), path.as_str()) {
        (Method::Get | Method::Head, "/metrics") => {
            let page = fabdiag_monitor::metrics::exposition(&lock(record));
            match page {
                Ok(p) => text(200, p, METRICS_TYPE),
                Err(e) => {
                    if !*said {
                        tell!("{prog}: cannot make the metrics page: {e}");
                        *said = true;
                    }
                    text(500, format!("{e}\n"), "text/plain; charset=utf-8")
                }
            }
        }
        (Method::Get | Method::Head, "/") => text(
            200,
            "fabdiag monitor: the metrics are at /metrics\n".into(),
            "text/plain; charset=utf-8",
        ),
        (Method::Get | Method::Head, _) => text(404, "not found: try /metrics\n".into(), "text/plain; charset=utf-8"),
        _ => {
            let mut r = text(405, "only GET and HEAD\n".into(), "text/plain; charset=utf-8");
            if let Some(h) = header("Allow", "GET, HEAD") {
                r.add_header(h);
            }
            r
        }
    };
    // a scraper that hung up is its own business
    let _ = req.respond(response);
}
