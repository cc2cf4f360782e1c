//! A minimal Chrome DevTools Protocol client: a WebSocket client over std's TcpStream (RFC
//! 6455 text frames, client frames masked, no extensions) and CDP's JSON calls on it, with
//! the events that arrive between calls kept for the test to read (console messages,
//! exceptions, log entries).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A WebSocket connection (client side).
struct WebSocket {
    stream: BufReader<TcpStream>,
    mask_seed: u32,
}

fn io(e: std::io::Error) -> String {
    e.to_string()
}

impl WebSocket {
    /// Connects to `ws://host:port/path`.
    fn connect(url: &str) -> Result<WebSocket, String> {
        let rest = url
            .strip_prefix("ws://")
            .ok_or_else(|| format!("not a ws:// URL: {url}"))?;
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let tcp = TcpStream::connect(host).map_err(io)?;
        tcp.set_read_timeout(Some(Duration::from_secs(120)))
            .map_err(io)?;
        let mut tcp2 = tcp.try_clone().map_err(io)?;
        write!(
            tcp2,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: ZWx0cmFjZS12aWV3ZXJzIQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .map_err(io)?;
        let mut stream = BufReader::new(tcp);
        let mut status = String::new();
        stream.read_line(&mut status).map_err(io)?;
        if !status.contains(" 101 ") {
            return Err(format!("WebSocket handshake refused: {}", status.trim()));
        }
        loop {
            let mut line = String::new();
            stream.read_line(&mut line).map_err(io)?;
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        Ok(WebSocket {
            stream,
            mask_seed: 0x5eed_1234,
        })
    }

    fn send_frame(&mut self, opcode: u8, payload: &[u8]) -> Result<(), String> {
        let mut frame = vec![0x80 | opcode];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= 0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        self.mask_seed = self
            .mask_seed
            .wrapping_mul(1_664_525)
            .wrapping_add(1_013_904_223);
        let mask = self.mask_seed.to_be_bytes();
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.get_mut().write_all(&frame).map_err(io)
    }

    /// The next text message (answering pings on the way).
    fn read_message(&mut self) -> Result<String, String> {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            self.stream.read_exact(&mut head).map_err(io)?;
            let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
            let len = match head[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.stream.read_exact(&mut b).map_err(io)?;
                    u64::from(u16::from_be_bytes(b))
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.stream.read_exact(&mut b).map_err(io)?;
                    u64::from_be_bytes(b)
                }
                n => u64::from(n),
            };
            let mask = if head[1] & 0x80 != 0 {
                let mut m = [0u8; 4];
                self.stream.read_exact(&mut m).map_err(io)?;
                Some(m)
            } else {
                None
            };
            let mut payload = vec![0u8; len as usize];
            self.stream.read_exact(&mut payload).map_err(io)?;
            if let Some(m) = mask {
                payload
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, b)| *b ^= m[i % 4]);
            }
            match opcode {
                0x0..=0x2 => {
                    message.extend_from_slice(&payload);
                    if fin {
                        return String::from_utf8(message).map_err(|e| e.to_string());
                    }
                }
                0x8 => return Err("the browser closed the DevTools connection".into()),
                0x9 => self.send_frame(0xA, &payload)?,
                _ => {}
            }
        }
    }
}

/// A CDP session on one page target.
pub struct Cdp {
    ws: WebSocket,
    next_id: u64,
    /// Every event received so far, in order.
    pub events: Vec<Value>,
}

impl Cdp {
    pub fn connect(url: &str) -> Result<Cdp, String> {
        Ok(Cdp {
            ws: WebSocket::connect(url)?,
            next_id: 1,
            events: Vec::new(),
        })
    }

    /// Calls `method` and waits for its result.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws.send_frame(0x1, msg.as_bytes())?;
        loop {
            let text = self.ws.read_message()?;
            let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(e) = v.get("error") {
                    return Err(format!("{method}: {e}"));
                }
                return Ok(v["result"].clone());
            }
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    /// Evaluates `expr` in the page (awaiting a promise) and returns its value.
    pub fn eval(&mut self, expr: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!("{expr}: {e}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Evaluates `expr` every 200 ms until it gives something other than `null`, `false`,
    /// `undefined`; fails after `timeout`.
    pub fn wait_for(&mut self, expr: &str, timeout: Duration) -> Result<Value, String> {
        let start = Instant::now();
        loop {
            let v = self.eval(expr)?;
            if !(v.is_null() || v == Value::Bool(false)) {
                return Ok(v);
            }
            if start.elapsed() > timeout {
                return Err(format!("timed out after {timeout:?} waiting for {expr}"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The page's console errors and warnings, uncaught exceptions and error log entries so
    /// far, one line each (the browser's own warnings, e.g. about WebGL, are left out).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for e in &self.events {
            let p = &e["params"];
            match e["method"].as_str().unwrap_or("") {
                "Runtime.consoleAPICalled" => {
                    let ty = p["type"].as_str().unwrap_or("");
                    if ty == "error" || ty == "warning" || ty == "assert" {
                        let args: Vec<String> = p["args"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|a| match &a["value"] {
                                Value::String(s) => s.clone(),
                                Value::Null => a["description"].as_str().unwrap_or("").into(),
                                v => v.to_string(),
                            })
                            .collect();
                        out.push(format!("console.{ty}: {}", args.join(" ")));
                    }
                }
                "Runtime.exceptionThrown" => {
                    let d = &p["exceptionDetails"];
                    let text = d["exception"]["description"]
                        .as_str()
                        .or(d["text"].as_str())
                        .unwrap_or("");
                    out.push(format!("exception: {text}"));
                }
                "Log.entryAdded" => {
                    let entry = &p["entry"];
                    if entry["level"] == "error" {
                        out.push(format!(
                            "log.{}: {} {}",
                            entry["level"].as_str().unwrap_or(""),
                            entry["text"].as_str().unwrap_or(""),
                            entry["url"].as_str().unwrap_or("")
                        ));
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// `GET http://{host}{path}` and its body (for the DevTools HTTP endpoints, which keep the
/// connection open: the body is as long as `Content-Length` says).
pub fn http_get(host: &str, path: &str) -> Result<String, String> {
    let tcp = TcpStream::connect(host).map_err(io)?;
    tcp.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(io)?;
    let mut reader = BufReader::new(tcp);
    write!(
        reader.get_mut(),
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .map_err(io)?;
    let mut len = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).map_err(io)? == 0 {
            break;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = Vec::new();
    match len {
        Some(n) => {
            body.resize(n, 0);
            reader.read_exact(&mut body).map_err(io)?;
        }
        None => {
            reader.read_to_end(&mut body).map_err(io)?;
        }
    }
    String::from_utf8(body).map_err(|e| e.to_string())
}

/// Decodes standard base64 (a screenshot).
pub fn base64_decode(text: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in text.bytes().filter_map(val) {
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// Encodes standard base64 (a profile handed to speedscope).
pub fn base64_encode(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn base64_round_trip() {
    for data in [&b""[..], b"a", b"ab", b"abc", b"\x00\xff\x10 speedscope"] {
        assert_eq!(base64_decode(&base64_encode(data)), data);
    }
    assert_eq!(base64_encode(b"ab"), "YWI=");
}
