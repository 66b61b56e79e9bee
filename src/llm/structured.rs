//! Structured answers: extract the JSON object (tolerating prose or code fences around it),
//! deserialize, check, and retry with the problem fed back: at most [`ATTEMPTS`] answers, and
//! all requests (transport retries included) within one [`super::Budget`].

use serde_json::Value;

use super::{Answer, Client, LlmError, Request};

pub(super) const ATTEMPTS: u32 = 3;

/// The structured answer, and how many answers the provider gave for it (cache hits not
/// counted): more than one means an answer was rejected and asked again.
pub(super) async fn structured<T, F>(
    client: &Client,
    req: &Request,
    check: F,
) -> (Result<T, LlmError>, u32)
where
    T: serde::de::DeserializeOwned,
    F: Fn(&T) -> Result<(), String>,
{
    let mut fresh = 0;
    let result = attempts(client, req, check, &mut fresh).await;
    (result, fresh)
}

async fn attempts<T, F>(
    client: &Client,
    req: &Request,
    check: F,
    fresh: &mut u32,
) -> Result<T, LlmError>
where
    T: serde::de::DeserializeOwned,
    F: Fn(&T) -> Result<(), String>,
{
    let mut attempt_req = req.clone();
    let mut last = (String::new(), String::new());
    let mut budget = client.budget();
    let mut requests = 0;
    for attempt in 1..=ATTEMPTS {
        let before = budget.left;
        let answer = client.answer(&attempt_req, &mut budget).await?;
        requests += before - budget.left;
        *fresh += u32::from(!answer.cached);
        let parsed = accept(&answer, req.max_tokens, &check);
        match parsed {
            Ok(t) => {
                // Cache under the original request, so a replay finds it without retries.
                client.remember(req, &answer)?;
                return Ok(t);
            }
            Err(problem) => {
                last = (problem.clone(), answer.text.chars().take(200).collect());
                if budget.is_spent() {
                    break;
                }
                if attempt < ATTEMPTS {
                    attempt_req = retry_request(req, &problem);
                }
            }
        }
    }
    Err(LlmError::InvalidOutput {
        attempts: requests.max(1) as u32,
        problem: last.0,
        excerpt: last.1,
    })
}

/// The answer's value, or why it is rejected: cut off at the token limit, no JSON object, not
/// the schema's shape, or refused by `check`. The words are fed back to the model.
pub(super) fn accept<T, F>(answer: &Answer, max_tokens: u32, check: &F) -> Result<T, String>
where
    T: serde::de::DeserializeOwned,
    F: Fn(&T) -> Result<(), String>,
{
    // A cut-off answer is no answer, whatever object a part of it parses as.
    if answer.truncated {
        return Err(format!(
            "the answer was cut off at the token limit ({max_tokens}) before its JSON ended; \
             keep every text field short"
        ));
    }
    let v = extract_json(&answer.text)
        .ok_or_else(|| "the answer holds no complete JSON object".to_owned())?;
    let t = serde_json::from_value::<T>(v)
        .map_err(|e| format!("the JSON does not fit the schema: {e}"))?;
    check(&t).map(|()| t)
}

/// The request asked again after an answer was rejected for `problem`: the original, with the
/// problem fed back at the end of the user message.
pub(super) fn retry_request(req: &Request, problem: &str) -> Request {
    let mut again = req.clone();
    again.user = format!(
        "{}\n\nYour previous answer was rejected: {problem}. Answer again with one JSON object that follows the schema exactly.",
        req.user
    );
    again
}

/// The first complete top-level JSON object in `text`: the whole text when it is one, else the
/// inside of a code fence, else the first balanced `{…}`.
pub fn extract_json(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(t) {
        return Some(v);
    }
    let bytes = t.as_bytes();
    let mut start = 0;
    while let Some(off) = t[start..].find('{') {
        let s = start + off;
        let (mut depth, mut in_str, mut esc) = (0i32, false, false);
        for (i, &b) in bytes.iter().enumerate().skip(s) {
            if in_str {
                match (esc, b) {
                    (true, _) => esc = false,
                    (false, b'\\') => esc = true,
                    (false, b'"') => in_str = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_str = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&t[s..=i]) {
                            return Some(v);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
        if depth > 0 {
            // The object at `s` never closes (cut off): every later `{` lies inside it, and
            // one of its parts is not the answer.
            return None;
        }
        start = s + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_from_prose_and_fences() {
        assert_eq!(
            extract_json(r#"{"a": 1}"#),
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(
            extract_json("Sure! ```json\n{\"a\": {\"b\": \"}\"}}\n``` hope it helps"),
            Some(serde_json::json!({"a": {"b": "}"}}))
        );
        assert_eq!(
            extract_json("{\"a\": 1, \"b\": [1, 2"),
            None,
            "truncated JSON is not an answer"
        );
        assert_eq!(extract_json("no json here"), None);
        assert_eq!(
            extract_json(r#"{"scenarios": [{"title": "t", "calls": [{"f": 1}, {"g": 2"#),
            None,
            "an inner object of a cut-off answer is not the answer"
        );
        assert_eq!(
            extract_json(r#"Use {braces} like this: {"a": 1}"#),
            Some(serde_json::json!({"a": 1})),
            "prose braces that close are skipped"
        );
    }
}
