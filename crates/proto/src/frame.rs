//! Length-prefixed frames. The length is checked before anything is
//! allocated, so a stranger writing garbage to the port costs nothing.

use std::io::{self, Read, Write};

/// Largest payload accepted; real messages are a few hundred bytes.
pub const MAX_FRAME: u32 = 1 << 20;

pub fn write_frame(w: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&l| l <= MAX_FRAME)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "control message too large"))?;
    let mut buf = Vec::with_capacity(4 + payload.len());
    buf.extend_from_slice(&len.to_be_bytes());
    buf.extend_from_slice(payload);
    w.write_all(&buf)?;
    w.flush()
}

/// Reads one frame. `Ok(None)` is a clean end of stream before a header.
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut hdr = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut hdr[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed inside a frame header",
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let len = frame_len(hdr).map_err(|what| io::Error::new(io::ErrorKind::InvalidData, what))?;
    let mut payload = vec![0u8; len as usize];
    r.read_exact(&mut payload)?;
    Ok(Some(payload))
}

/// The payload length a frame header announces, or what is wrong with it.
pub(crate) fn frame_len(hdr: [u8; 4]) -> Result<u32, String> {
    let len = u32::from_be_bytes(hdr);
    if len <= MAX_FRAME {
        return Ok(len);
    }
    // a stranger speaking a text protocol (HTTP, SSH, a typo'd nc) shows
    // as a huge length: say what it sent instead
    let text = hdr.iter().all(|b| b.is_ascii_graphic() || *b == b' ');
    Err(if text {
        format!(
            "received text starting {:?}, not a fabdiag frame",
            String::from_utf8_lossy(&hdr)
        )
    } else {
        format!("frame of {len} bytes announced (limit {MAX_FRAME})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_limits() {
        let mut v = Vec::new();
        write_frame(&mut v, b"hello").unwrap();
        write_frame(&mut v, b"").unwrap();
        let mut r = &v[..];
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"hello");
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"");
        assert!(read_frame(&mut r).unwrap().is_none());

        let huge = (MAX_FRAME + 1).to_be_bytes();
        assert_eq!(
            read_frame(&mut &huge[..]).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        let short = [0u8, 0, 0, 9, b'x'];
        assert!(read_frame(&mut &short[..]).is_err());
        let http = read_frame(&mut &b"GET / HTTP/1.0\r\n"[..]).unwrap_err().to_string();
        assert_eq!(http, "received text starting \"GET \", not a fabdiag frame");
        let torn = [0u8, 0];
        assert!(read_frame(&mut &torn[..]).is_err());
    }
}
