//! Handing an accepted control connection to a `fabdiag serve` worker that
//! is already running: the socket itself crosses a Unix socket pair as
//! SCM_RIGHTS, so a spare worker can load libfabric before any client
//! arrives. Moves one descriptor and one marker byte; decides nothing
//! about tests and never prints.
//!
//! rustix rather than nix: its `recvmsg` yields the received descriptor
//! as an `OwnedFd`, so this crate needs no `unsafe` to adopt it.

use rustix::io::Errno;
use rustix::net::{
    recvmsg, sendmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage,
    SendFlags,
};
use std::io::{Error, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

/// Sends `stream` over `channel`. The receiver gets its own descriptor;
/// the caller may close `stream` at once.
pub fn give(channel: &UnixStream, stream: &TcpStream) -> std::io::Result<()> {
    let fds = [stream.as_fd()];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(Error::other("no room for a descriptor in the message"));
    }
    loop {
        // NOSIGNAL: a worker that died is an error here, not SIGPIPE
        match sendmsg(channel, &[IoSlice::new(&[1])], &mut control, SendFlags::NOSIGNAL) {
            Ok(_) => return Ok(()),
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Waits for a connection sent by `give`. None: the sender closed its end
/// without sending one (the server stopped or is gone).
pub fn take(channel: &UnixStream) -> std::io::Result<Option<TcpStream>> {
    let mut marker = [0u8; 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = loop {
        let mut iov = [IoSliceMut::new(&mut marker)];
        match recvmsg(channel, &mut iov, &mut control, RecvFlags::CMSG_CLOEXEC) {
            Ok(got) => break got,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    let fd = control.drain().find_map(|m| match m {
        RecvAncillaryMessage::ScmRights(mut fds) => fds.next(),
        _ => None,
    });
    match fd {
        Some(fd) => Ok(Some(TcpStream::from(fd))),
        None if got.bytes == 0 => Ok(None),
        None => Err(Error::other("a hand-over message without a connection")),
    }
}

#[cfg(test)]
mod tests {
    use super::{give, take};
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_connection_crosses_and_still_carries_bytes() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        let (server_end, worker_end) = UnixStream::pair().unwrap();
        give(&server_end, &accepted).unwrap();
        // the sender's copy may go before the receiver takes it
        drop(accepted);
        drop(server_end);
        let mut got = take(&worker_end).unwrap().expect("a connection");
        assert_eq!(got.peer_addr().unwrap(), peer);
        client.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        got.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"ping");
        // and the sender closing after one hand-over is then "no more"
        assert!(take(&worker_end).unwrap().is_none());
    }

    #[test]
    fn a_closed_sender_is_none_and_a_dead_receiver_an_error() {
        let (server_end, worker_end) = UnixStream::pair().unwrap();
        drop(server_end);
        assert!(take(&worker_end).unwrap().is_none());
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let _client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let (server_end, worker_end) = UnixStream::pair().unwrap();
        drop(worker_end);
        assert!(give(&server_end, &accepted).is_err());
    }

    #[test]
    fn plain_bytes_without_a_descriptor_are_an_error() {
        let (mut server_end, worker_end) = UnixStream::pair().unwrap();
        server_end.write_all(b"x").unwrap();
        assert!(take(&worker_end).is_err());
    }
}
