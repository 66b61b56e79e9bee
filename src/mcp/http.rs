//! The streamable HTTP transport, client side: every JSON-RPC message its own POST to the MCP
//! endpoint, the answer a JSON body or an SSE stream scoped to the request (its notifications
//! skipped, a legacy server's requests on it answered). Legacy sessions (`Mcp-Session-Id`,
//! revisions up to 2025-11-25) are carried and ended with DELETE; the 2026-07-28 revision's
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers are sent by the caller.
//!
//! Header values the user gives (bearer tokens, API keys) are never printed: a server that
//! quotes one in an error body has it replaced by `[redacted]` ([`crate::redact`], the same
//! path the LLM providers' keys take; the [`super::Client`] redacts everything it hands on).

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::redact::Secrets;

use super::{MAX_LINE, McpError, Reply, answer_server_request, shown};

/// The client side of one MCP endpoint.
pub(crate) struct Http {
    client: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    secrets: Secrets,
    /// The legacy session the server assigned at `initialize`, sent on every later request.
    pub(crate) session: Option<String>,
}

impl Http {
    /// A client of `url` sending `headers` (`(name, value)`) on every request.
    pub(crate) fn new(url: &str, headers: &[(String, String)]) -> Result<Self, McpError> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| McpError::new(format!("`{url}` is not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(McpError::new(format!(
                "`{url}`: an MCP endpoint is an http:// or https:// URL"
            )));
        }
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| McpError::new(format!("`{k}` is not an HTTP header name")))?;
            let mut value = HeaderValue::from_str(v).map_err(|_| {
                McpError::new(format!(
                    "the value of header `{k}` is not a valid HTTP header value"
                ))
            })?;
            value.set_sensitive(true);
            map.append(name, value);
        }
        let secrets = Secrets::of_headers(headers);
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| McpError::new(format!("cannot build the HTTP client: {e}")))?;
        Ok(Http {
            client,
            url,
            headers: map,
            secrets,
            session: None,
        })
    }

    /// `text` with every header value the user gave replaced by `[redacted]`.
    fn redact(&self, text: &str) -> String {
        self.secrets.redact(text).into_owned()
    }

    fn error(&self, message: impl AsRef<str>) -> McpError {
        McpError::new(self.redact(message.as_ref()))
    }

    /// POSTs `msg` with `extra` headers. A request (`id` given) waits for its response, a JSON
    /// body or the response event of an SSE stream; a notification wants `202 Accepted` and
    /// gives `None`. A JSON-RPC error body with a 4xx status is a [`Reply`] too (a modern
    /// server's way of saying which version it speaks); any other failure is an error.
    pub(crate) async fn post(
        &mut self,
        msg: &Value,
        id: Option<u64>,
        extra: &[(String, String)],
        timeout: Duration,
    ) -> Result<Option<Reply>, McpError> {
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("a response")
            .to_owned();
        let work = self.post_inner(msg, id, extra, &method);
        match tokio::time::timeout(timeout, work).await {
            Ok(r) => r,
            Err(_) => Err(self.error(format!(
                "`{method}` got no answer from {} within {timeout:?}",
                self.url
            ))),
        }
    }

    async fn post_inner(
        &mut self,
        msg: &Value,
        id: Option<u64>,
        extra: &[(String, String)],
        method: &str,
    ) -> Result<Option<Reply>, McpError> {
        let mut req = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(serde_json::to_vec(msg).unwrap_or_default());
        for (k, v) in extra {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s.as_str());
        }
        let resp = req.send().await.map_err(|e| {
            self.error(format!(
                "`{method}`: cannot reach {}: {}",
                self.url,
                error_chain(&e)
            ))
        })?;
        let status = resp.status().as_u16();
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(s.to_owned());
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let Some(id) = id else {
            return if (200..300).contains(&status) {
                Ok(None)
            } else {
                let body = self.body(resp).await.unwrap_or_default();
                Err(self.error(format!(
                    "`{method}` was refused with HTTP {status}: {}",
                    shown(&body)
                )))
            };
        };
        if sse && (200..300).contains(&status) {
            return self.stream(resp, id, method).await.map(Some);
        }
        let body = self.body(resp).await?;
        let parsed: Option<Value> = match serde_json::from_slice(&body) {
            Ok(v) => Some(v),
            Err(e) if crate::source::json_too_deep(&e) => {
                return Err(self.error(format!(
                    "`{method}` got an answer nested deeper than {} levels of arrays and objects, \
                     the most agent-seer reads: {}",
                    crate::source::MAX_JSON_DEPTH,
                    shown(&body)
                )));
            }
            Err(_) => None,
        };
        match parsed {
            Some(msg) if msg.get("id").and_then(Value::as_u64) == Some(id) => {
                Ok(Some(Reply { msg, text: body }))
            }
            // A JSON-RPC error without the id (a refused request the server could not read).
            Some(msg) if status >= 400 && msg.get("error").is_some() => {
                Ok(Some(Reply { msg, text: body }))
            }
            Some(msg) if (200..300).contains(&status) => Err(self.error(format!(
                "the server answered `{method}` with id {}, expected {id}: {}",
                msg.get("id").unwrap_or(&Value::Null),
                shown(&body)
            ))),
            _ => Err(self.error(format!(
                "`{method}` got HTTP {status} from {} with no JSON-RPC answer: {}",
                self.url,
                if body.is_empty() {
                    "(an empty body)".to_owned()
                } else {
                    shown(&body)
                }
            ))),
        }
    }

    /// The body, at most [`MAX_LINE`] bytes.
    async fn body(&self, mut resp: reqwest::Response) -> Result<Vec<u8>, McpError> {
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| self.error(format!("cannot read the answer: {}", error_chain(&e))))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_LINE {
                return Err(self.error(format!(
                    "the answer is longer than {} MiB (the most one JSON-RPC message may take)",
                    MAX_LINE >> 20
                )));
            }
        }
        Ok(body)
    }

    /// Reads an SSE stream until the response to `id`: notifications are skipped, a legacy
    /// server's requests answered (ping) or refused, comments and `id:`/`retry:` fields
    /// ignored.
    async fn stream(
        &mut self,
        mut resp: reqwest::Response,
        id: u64,
        method: &str,
    ) -> Result<Reply, McpError> {
        let mut buf: Vec<u8> = Vec::new();
        loop {
            while let Some((event, rest)) = next_event(&buf) {
                let data = event_data(&event);
                buf = rest;
                if data.trim_ascii().is_empty() {
                    continue;
                }
                let msg: Value = serde_json::from_slice(&data).map_err(|e| {
                    if crate::source::json_too_deep(&e) {
                        return self.error(format!(
                            "the server's event stream carried a message nested deeper than {} \
                             levels of arrays and objects, the most agent-seer reads: {}",
                            crate::source::MAX_JSON_DEPTH,
                            shown(&data)
                        ));
                    }
                    self.error(format!(
                        "the server's event stream carried something that is not JSON-RPC \
                         ({e}): {}",
                        shown(&data)
                    ))
                })?;
                let rid = msg.get("id");
                match msg.get("method") {
                    Some(m) if rid.is_some() => {
                        let reply = answer_server_request(m, rid);
                        Box::pin(self.post_inner(&reply, None, &[], "a response")).await?;
                    }
                    Some(_) => {}
                    None if rid.and_then(Value::as_u64) == Some(id) => {
                        return Ok(Reply { msg, text: data });
                    }
                    None => {
                        return Err(self.error(format!(
                            "the server answered `{method}` with id {}, expected {id}: {}",
                            rid.unwrap_or(&Value::Null),
                            shown(&data)
                        )));
                    }
                }
            }
            if buf.len() > MAX_LINE {
                return Err(self.error(format!(
                    "an event longer than {} MiB (the most one JSON-RPC message may take)",
                    MAX_LINE >> 20
                )));
            }
            match resp.chunk().await {
                Ok(Some(chunk)) => buf.extend_from_slice(&chunk),
                Ok(None) => {
                    return Err(self.error(format!(
                        "the server's event stream for `{method}` ended without its answer"
                    )));
                }
                Err(e) => {
                    return Err(self.error(format!(
                        "the server's event stream for `{method}` broke: {}",
                        error_chain(&e)
                    )));
                }
            }
        }
    }

    /// Ends a legacy session (DELETE, as the 2025-11-25 transport asks); a server that does not
    /// allow it answers 405, which is fine.
    pub(crate) async fn close(self) {
        if let Some(s) = &self.session {
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                self.client
                    .delete(self.url.clone())
                    .headers(self.headers.clone())
                    .header("mcp-session-id", s.as_str())
                    .send(),
            )
            .await;
        }
    }
}

/// The first complete event in `buf` and what follows it (events end with a blank line; `\r\n`
/// and `\r` end lines too).
fn next_event(buf: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let text = buf;
    let mut i = 0;
    let mut line_start = 0;
    while i < text.len() {
        let end = match text[i] {
            b'\n' => Some(i + 1),
            b'\r' if text.get(i + 1) == Some(&b'\n') => Some(i + 2),
            b'\r' if i + 1 < text.len() => Some(i + 1),
            _ => None,
        };
        if let Some(next) = end {
            if i == line_start {
                return Some((text[..line_start].to_vec(), text[next..].to_vec()));
            }
            line_start = next;
            i = next;
        } else {
            i += 1;
        }
    }
    None
}

/// The `data:` lines of an event, joined with `\n` (SSE's rule).
fn event_data(event: &[u8]) -> Vec<u8> {
    let mut data: Vec<u8> = Vec::new();
    let mut first = true;
    let text = String::from_utf8_lossy(event)
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    for line in text.as_bytes().split(|&b| b == b'\n') {
        let Some(rest) = line.strip_prefix(b"data") else {
            continue;
        };
        let value = match rest {
            [] => &[][..],
            [b':', b' ', v @ ..] | [b':', v @ ..] => v,
            _ => continue, // `database: …` is another field
        };
        if !first {
            data.push(b'\n');
        }
        first = false;
        data.extend_from_slice(value);
    }
    data
}

fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_on_blank_lines_of_every_ending() {
        let buf =
            b": keep-alive\n\nevent: message\ndata: {\"a\":\ndata: 1}\r\n\r\nid: 7\ndata:x\r\rtail";
        let (e1, rest) = next_event(buf).unwrap();
        assert_eq!(event_data(&e1), b"");
        let (e2, rest) = next_event(&rest).unwrap();
        assert_eq!(event_data(&e2), b"{\"a\":\n1}");
        let (e3, rest) = next_event(&rest).unwrap();
        assert_eq!(event_data(&e3), b"x");
        assert_eq!(rest, b"tail");
        assert!(next_event(&rest).is_none());
    }
}
