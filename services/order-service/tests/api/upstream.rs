//! A point service stand-in at the socket level: a real HTTP/1.1 server on loopback that
//! records each request's raw request target (the bytes on the wire, before any parser
//! could normalise them) and answers with whatever its script writes. The relay tests see
//! exactly what the relay sent and decide exactly what it gets back.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// Writes the answer to one request (given its method and raw target) on the connection.
pub type Script = dyn Fn(&[u8], &[u8], &mut TcpStream) + Send + Sync;

pub struct RawUpstream {
    /// `http://127.0.0.1:<port>`, for `POINT_SERVICE_URL`.
    pub url: String,
    /// The raw request target of every request received, in order.
    pub targets: Arc<Mutex<Vec<Vec<u8>>>>,
    /// How many connections it has accepted.
    accepted: Arc<AtomicUsize>,
    /// How many of them the relay has closed.
    ended: Arc<AtomicUsize>,
}

impl RawUpstream {
    /// Starts the server; each connection gets a thread and may carry several requests.
    pub fn start(script: impl Fn(&[u8], &[u8], &mut TcpStream) + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let targets: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let script: Arc<Script> = Arc::new(script);
        let recorded = targets.clone();
        let accepted: Arc<AtomicUsize> = Arc::default();
        let ended: Arc<AtomicUsize> = Arc::default();
        let (counted, closed) = (accepted.clone(), ended.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                counted.fetch_add(1, Ordering::SeqCst);
                let (recorded, script, closed) = (recorded.clone(), script.clone(), closed.clone());
                thread::spawn(move || {
                    serve(stream, &recorded, &*script);
                    closed.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        Self {
            url,
            targets,
            accepted,
            ended,
        }
    }

    /// Answers every request `200 application/json {"recorded":true}`.
    pub fn recording() -> Self {
        Self::start(|_, _, stream| {
            write_answer(
                stream,
                200,
                Some("application/json"),
                br#"{"recorded":true}"#,
            )
        })
    }

    pub fn seen(&self) -> Vec<Vec<u8>> {
        self.targets.lock().unwrap().clone()
    }

    /// How many connections the relay has opened to it so far.
    pub fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// How many of them have ended (the relay closed them, or a script did).
    pub fn ended(&self) -> usize {
        self.ended.load(Ordering::SeqCst)
    }
}

/// Requests on one connection until the peer closes it.
fn serve(mut stream: TcpStream, recorded: &Mutex<Vec<Vec<u8>>>, script: &Script) {
    let mut buffer = Vec::new();
    loop {
        let head_end = loop {
            if let Some(end) = find(&buffer, b"\r\n\r\n") {
                break end + 4;
            }
            let mut chunk = [0u8; 8192];
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        };
        // The request line as sent: METHOD SP target SP version.
        let line_end = find(&buffer, b"\r\n").unwrap();
        let line = &buffer[..line_end];
        let first_space = line.iter().position(|&b| b == b' ').unwrap();
        let last_space = line.iter().rposition(|&b| b == b' ').unwrap();
        let method = line[..first_space].to_vec();
        let target = line[first_space + 1..last_space].to_vec();
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        // The target was checked above byte by byte; httparse only reads the headers here.
        let _ = request.parse(&buffer[..head_end]);
        let length: usize = request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-length"))
            .and_then(|h| std::str::from_utf8(h.value).ok()?.parse().ok())
            .unwrap_or(0);
        while buffer.len() < head_end + length {
            let mut chunk = [0u8; 8192];
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        buffer.drain(..head_end + length);
        recorded.lock().unwrap().push(target.clone());
        script(&method, &target, &mut stream);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A whole answer with `Content-Length` (none on 204, which has no body).
pub fn write_answer(stream: &mut TcpStream, status: u16, content_type: Option<&str>, body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status} Status\r\n");
    if let Some(content_type) = content_type {
        head.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    if status != 204 {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    // One write: a second small one on a kept-alive connection waits for the ACK of the first
    // (Nagle's algorithm), which the relay's side delays by up to 40 ms. Written in two, the
    // 456 answers of relay_answers.rs took 16 s.
    let mut answer = head.into_bytes();
    answer.extend_from_slice(body);
    let _ = stream.write_all(&answer);
}

/// Sends `request` as raw bytes to `base` (`http://host:port`) on a connection of its own and
/// returns the raw answer: no client library sees the target, so none can normalise it.
pub fn raw_exchange(base: &str, request: &[u8]) -> Vec<u8> {
    let address = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    // A server may close as soon as it has refused the head, before the whole of an
    // overlong request is written: what it answered is still read below.
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer
}

/// A GET or POST of `target` with `Connection: close`, as raw bytes.
pub fn raw_request(method: &str, target: &[u8]) -> Vec<u8> {
    let mut request = format!("{method} ").into_bytes();
    request.extend_from_slice(target);
    request.extend_from_slice(
        b" HTTP/1.1\r\nHost: order\r\nAuthorization: Bearer token-1001\r\n\
          Content-Length: 0\r\nConnection: close\r\n\r\n",
    );
    request
}

/// The status of a raw answer (0 when there is none).
pub fn status_of(answer: &[u8]) -> u16 {
    answer
        .get(9..12)
        .and_then(|s| std::str::from_utf8(s).ok()?.parse().ok())
        .unwrap_or(0)
}
