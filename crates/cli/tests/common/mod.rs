//! Test harness: real fabdiag processes, bounded in time, on loopback or in
//! network namespaces of our own. Every wait has a deadline so a hang fails
//! the test instead of stalling CI.
#![allow(dead_code)]

pub use nix::sys::signal::Signal;
use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_fabdiag")
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Output {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }
}

pub struct Proc {
    child: Child,
    started: Instant,
    // Pipes are drained by threads from the start, so a child that writes
    // more than a pipe buffer never blocks on us.
    out: Option<std::thread::JoinHandle<String>>,
    err: Option<std::thread::JoinHandle<String>>,
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

impl Proc {
    pub fn spawn(cmd: &mut Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let out = child.stdout.take().map(drain);
        let err = child.stderr.take().map(drain);
        Proc {
            child,
            started: Instant::now(),
            out,
            err,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits at most `limit`; kills the process and panics past it.
    pub fn wait(mut self, limit: Duration) -> Output {
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let stdout = self
                    .out
                    .take()
                    .map(|h| h.join().unwrap_or_default())
                    .unwrap_or_default();
                let stderr = self
                    .err
                    .take()
                    .map(|h| h.join().unwrap_or_default())
                    .unwrap_or_default();
                return Output {
                    code: status.code(),
                    stdout,
                    stderr,
                    elapsed: self.started.elapsed(),
                };
            }
            if self.started.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let err = self
                    .err
                    .take()
                    .map(|h| h.join().unwrap_or_default())
                    .unwrap_or_default();
                panic!("process did not finish within {limit:?}; stderr:\n{err}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn signal(&self, sig: Signal) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), sig);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn fabdiag(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args);
    c
}

/// Runs to completion within `limit`.
pub fn run(args: &[&str], limit: Duration) -> Output {
    Proc::spawn(&mut fabdiag(args)).wait(limit)
}

/// Starts a server and waits until its port accepts connections.
pub fn server(args: &[&str], port: u16) -> Proc {
    let p = Proc::spawn(&mut fabdiag(args));
    wait_listening("127.0.0.1", port);
    p
}

pub fn wait_listening(host: &str, port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect((host, port)).is_ok() {
            // that probe was a stranger to the server: it is rejected and the
            // server keeps listening
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("server never listened on {host}:{port}");
}

pub const LIMIT: Duration = Duration::from_secs(60);
