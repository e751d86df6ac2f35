//! Outside programs run in a time box, so none may hold fabdiag up: each
//! is killed once past its time limit, and its output is read by threads
//! of its own while it runs, so a child that writes more than a pipe holds
//! (sinfo on a large partition) is never stuck on a full pipe; input, when
//! it has some, is written by a thread too, so a child that does not read
//! it cannot hold the caller either. Used for scontrol and sinfo, the
//! monitor's probes (polled without blocking) and munge/unmunge. It judges
//! nothing of what a child printed.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most of a child's output kept: more is read and dropped.
const MAX_OUTPUT: u64 = 4 << 20;

/// A running child, its output being read.
pub struct Running {
    child: Child,
    out: Option<JoinHandle<String>>,
    err: Option<JoinHandle<String>>,
    started: Instant,
}

/// How a child ended.
pub struct Finished {
    /// None when it was killed for its time limit.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> Option<JoinHandle<String>> {
    let pipe = pipe?;
    std::thread::Builder::new()
        .name("fabdiag-timebox-output".into())
        .spawn(move || {
            let mut limited = pipe.take(MAX_OUTPUT);
            let mut bytes = Vec::new();
            let _ = limited.read_to_end(&mut bytes);
            // what is past the limit is drained, so the child never blocks
            let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .ok()
}

impl Running {
    /// Starts `cmd` with no input and both outputs read.
    pub fn spawn(cmd: &mut Command) -> std::io::Result<Running> {
        Running::spawn_with(cmd, None)
    }

    /// Starts `cmd` with `input` (if any) as its standard input, then
    /// closed, and both outputs read.
    pub fn spawn_with(cmd: &mut Command, input: Option<Vec<u8>>) -> std::io::Result<Running> {
        let stdin = if input.is_some() { Stdio::piped() } else { Stdio::null() };
        let mut child = cmd.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        if let (Some(bytes), Some(mut pipe)) = (input, child.stdin.take()) {
            // a child that exits unread makes this fail: its status says why
            let _ = std::thread::Builder::new()
                .name("fabdiag-timebox-input".into())
                .spawn(move || pipe.write_all(&bytes));
        }
        let out = reader(child.stdout.take());
        let err = reader(child.stderr.take());
        Ok(Running {
            child,
            out,
            err,
            started: Instant::now(),
        })
    }

    /// Without blocking: how it ended if it has, or (killing it) if it has
    /// run `limit`; None while it runs within it.
    pub fn poll(&mut self, limit: Duration) -> Option<Finished> {
        let status = match self.child.try_wait() {
            Ok(Some(s)) => Some(s),
            Ok(None) if self.started.elapsed() < limit => return None,
            // past its limit, or not to be waited for: killed
            Ok(None) | Err(_) => {
                self.stop();
                None
            }
        };
        Some(self.collect(status))
    }

    /// Kills it and waits for it (its output threads end with it).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn collect(&mut self, status: Option<ExitStatus>) -> Finished {
        let join = |h: Option<JoinHandle<String>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
        Finished {
            status,
            stdout: join(self.out.take()),
            stderr: join(self.err.take()),
        }
    }
}

/// Runs `program` with `args` and `input` on its standard input, killed
/// after `limit`: how it ended, whatever its status, or one line saying
/// why it could not start or did not end in time.
pub fn finish(program: &str, args: &[String], input: Option<Vec<u8>>, limit: Duration) -> Result<Finished, String> {
    let mut child = Running::spawn_with(Command::new(program).args(args), input)
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let done = loop {
        match child.poll(limit) {
            Some(f) => break f,
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    match done.status {
        None => Err(format!("{program} did not answer within {:.0} s", limit.as_secs_f64())),
        Some(_) => Ok(done),
    }
}

/// Runs `program` with `args`, killed after `limit`: its standard
/// output, or one line saying why not.
pub fn output(program: &str, args: &[String], limit: Duration) -> Result<String, String> {
    let done = finish(program, args, None, limit)?;
    if done.status.is_some_and(|s| s.success()) {
        return Ok(done.stdout);
    }
    let first = done.stderr.lines().next().unwrap_or("no message").trim().to_string();
    Err(format!(
        "{program} {} failed: {first}",
        args.first().map_or("", String::as_str)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_writes_more_than_a_pipe_holds_is_read_whole() {
        let big = output(
            "sh",
            &["-c".into(), "head -c 300000 /dev/zero | tr '\\0' x".into()],
            Duration::from_secs(10),
        )
        .expect("runs");
        assert_eq!(big.len(), 300_000);
    }

    #[test]
    fn a_child_past_its_limit_is_killed_and_said() {
        let t = Instant::now();
        let e = output("sleep", &["30".into()], Duration::from_millis(300)).expect_err("killed");
        assert_eq!(e, "sleep did not answer within 0 s");
        assert!(t.elapsed() < Duration::from_secs(5));
        let e = output(
            "sh",
            &["-c".into(), "echo nope >&2; exit 3".into()],
            Duration::from_secs(5),
        )
        .expect_err("fails");
        assert_eq!(e, "sh -c failed: nope");
        let e = output("/nonexistent/x", &[], Duration::from_secs(5)).expect_err("absent");
        assert!(e.starts_with("cannot run /nonexistent/x: "), "{e}");
    }

    #[test]
    fn input_reaches_the_child_and_one_that_ignores_it_is_not_stuck() {
        let f = finish(
            "tr",
            &["a-z".into(), "A-Z".into()],
            Some(b"munge".to_vec()),
            Duration::from_secs(10),
        )
        .expect("runs");
        assert_eq!(f.stdout, "MUNGE");
        assert!(f.status.is_some_and(|s| s.success()));
        // more input than a pipe holds, never read: the child's exit ends it
        let f = finish(
            "sh",
            &["-c".into(), "exit 4".into()],
            Some(vec![b'x'; 1 << 20]),
            Duration::from_secs(10),
        )
        .expect("runs");
        assert_eq!(f.status.and_then(|s| s.code()), Some(4));
    }
}
