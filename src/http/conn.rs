//! The connection under hyper: gives hyper's own parse-error answers the service's JSON
//! error body.
//!
//! When a request head cannot be parsed, hyper answers by itself, before any service
//! runs: 400 (malformed), 414 (URI over hyper's limit) or 431 (head over
//! `MAX_HEAD_BYTES`, or more than hyper's header count), each with an empty body and
//! `connection: close`, and it offers no hook to shape that answer. `JsonParseErrors`
//! wraps the socket hyper writes to and replaces exactly those automatic answers with
//! the same status and `{"error": {"code", "message"}}`, so a client sees one error
//! shape whatever layer refused it. Nothing is parsed from the client: only hyper's own
//! output is recognised, by the fixed bytes hyper encodes it with (status line, then
//! `connection: close` and `content-length: 0`). The service's own answers never match:
//! they carry `content-type` first, and no body the service writes contains a raw CRLF.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Headers hyper parses at most (its default): one more is a 431.
pub const MAX_HEADERS: usize = 100;

/// The automatic answers hyper writes: their fixed start, status and error code.
const AUTOMATIC: [(&[u8], u16, &str); 3] = [
    (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n",
        431,
        "headers_too_large",
    ),
    (
        b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\n",
        414,
        "uri_too_long",
    ),
    (
        b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n",
        400,
        "malformed_request",
    ),
];

fn message(status: u16) -> String {
    match status {
        431 => format!(
            "the request head (request line and headers) is over the limit of {} bytes or {MAX_HEADERS} headers",
            super::MAX_HEAD_BYTES
        ),
        414 => format!(
            "the request URI is over the limit of {} bytes",
            super::MAX_URI_BYTES
        ),
        _ => "the request line or a header is not valid HTTP/1.1".to_string(),
    }
}

/// A socket whose hyper parse-error answers get a JSON body (module doc).
pub struct JsonParseErrors<S> {
    inner: S,
    /// The JSON answer owed in place of hyper's, and how much of it is written.
    owed: Option<(Vec<u8>, usize)>,
}

impl<S> JsonParseErrors<S> {
    pub fn new(inner: S) -> Self {
        JsonParseErrors { inner, owed: None }
    }
}

/// The full answer (head and body) for `status` with the error `code` and `message`.
pub fn error_response(status: u16, reason: &str, code: &str, message: &str) -> Vec<u8> {
    let body = serde_json::json!({"error": {"code": code, "message": message}}).to_string();
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Where in `buf` hyper's automatic answer starts, and the JSON answer replacing it.
fn find_automatic(buf: &[u8]) -> Option<(usize, Vec<u8>)> {
    AUTOMATIC.iter().find_map(|(head, status, code)| {
        let at = buf.windows(head.len()).position(|w| w == *head)?;
        // The reason phrase is hyper's own: the status line after `HTTP/1.1 NNN `.
        let reason = head
            .split(|b| *b == b'\r')
            .next()
            .and_then(|line| line.get("HTTP/1.1 NNN ".len()..))
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .unwrap_or_default();
        Some((
            at,
            error_response(*status, &reason, code, &message(*status)),
        ))
    })
}

/// The end (exclusive) of the head starting at `buf[0]`: just past its blank line.
fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

impl<S: AsyncWrite + Unpin> JsonParseErrors<S> {
    /// Writes what is owed of the JSON answer; ready once all of it is out.
    fn poll_owed(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, done)) = &mut self.owed {
            let Some(rest) = bytes.get(*done..).filter(|r| !r.is_empty()) else {
                self.owed = None;
                break;
            };
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, rest))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *done += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonParseErrors<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonParseErrors<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_owed(cx))?;
        match find_automatic(buf) {
            // Bytes before the automatic answer (an earlier answer's tail) go out as
            // they are; hyper calls again with the rest.
            Some((at, _)) if at > 0 => {
                Pin::new(&mut this.inner).poll_write(cx, buf.get(..at).unwrap_or_default())
            }
            Some((_, json)) => match head_end(buf) {
                Some(end) => {
                    // Hyper's head is taken as written; the JSON answer goes out in
                    // its place, finished by the next write, flush or shutdown.
                    this.owed = Some((json, 0));
                    let _ = this.poll_owed(cx)?;
                    Poll::Ready(Ok(end))
                }
                None => Pin::new(&mut this.inner).poll_write(cx, buf),
            },
            None => Pin::new(&mut this.inner).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_owed(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_owed(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    async fn through(chunks: &[&[u8]]) -> String {
        let mut out = JsonParseErrors::new(Vec::new());
        for c in chunks {
            out.write_all(c).await.unwrap();
        }
        out.shutdown().await.unwrap();
        String::from_utf8(out.inner).unwrap()
    }

    #[tokio::test]
    async fn hypers_431_gets_the_json_body() {
        let out = through(&[b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: Tue, 01 Dec 2026 04:34:23 GMT\r\n\r\n"]).await;
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            "{out}"
        );
        assert!(head.contains("content-type: application/json"), "{out}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{out}"
        );
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "headers_too_large");
    }

    #[tokio::test]
    async fn an_earlier_answer_passes_untouched() {
        let ok = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        let both = format!(
            "{ok}HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\ndate: x\r\n\r\n"
        );
        let out = through(&[both.as_bytes()]).await;
        assert!(out.starts_with(ok), "{out}");
        let rest = out.strip_prefix(ok).unwrap();
        assert!(rest.starts_with("HTTP/1.1 414 URI Too Long\r\n"), "{rest}");
        assert!(rest.contains(r#""code":"uri_too_long""#), "{rest}");
    }

    #[tokio::test]
    async fn the_services_own_answers_are_not_touched() {
        let own = "HTTP/1.1 414 URI Too Long\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(through(&[own.as_bytes()]).await, own);
        let chunked: [&[u8]; 2] = [b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n", b"HTTP"];
        assert_eq!(
            through(&chunked).await,
            "HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nHTTP"
        );
    }
}
