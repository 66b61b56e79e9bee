//! Concurrent records, ordered results: a stage's independent records run at once in the
//! calling task (the client's semaphore caps the requests in flight), and their results come
//! back in input order, so the harness and the report are the same whatever the concurrency.
//!
//! Two rules keep a concurrent stage equal to the sequential one. Records with the same
//! cache key run one after another, in input order: sequentially the second was a cache hit of
//! the first's validated answer, and run side by side both would miss and ask the model twice
//! (another answer at temperature 0.7, another ledger). And an error ends the stage with the
//! error of the first record, in input order, that fails — the one a sequential run stops at —
//! and records after it are dropped unfinished. No `'static` bound (the generator borrows its
//! spec and client), hence a local join rather than `tokio::task::JoinSet`; the work between
//! requests is validation, short beside a model's answer.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// `one(i)` for every `i` in `0..keys.len()`, concurrently but one after another among equal
/// keys; the outputs in input order, or the error of the first `i` that failed.
pub(crate) async fn run<T, E, F, Fut>(keys: &[String], one: F) -> Result<Vec<T>, E>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let one = &one;
    let chains = groups(keys).into_iter().map(|indices| {
        (indices[0], async move {
            let mut out = Vec::with_capacity(indices.len());
            for i in indices {
                out.push((i, one(i).await.map_err(|e| (i, e))?));
            }
            Ok::<_, (usize, E)>(out)
        })
    });
    let mut slots: Vec<Option<T>> = (0..keys.len()).map(|_| None).collect();
    for (i, t) in join(chains.collect()).await?.into_iter().flatten() {
        slots[i] = Some(t);
    }
    Ok(slots.into_iter().flatten().collect())
}

/// The indices of `keys` grouped by equal key, each group in input order, the groups in the
/// order of their first index.
fn groups(keys: &[String]) -> Vec<Vec<usize>> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        match first.get(k.as_str()) {
            Some(&g) => out[g].push(i),
            None => {
                first.insert(k, out.len());
                out.push(vec![i]);
            }
        }
    }
    out
}

/// Drives `chains` (each with the index it starts at) to completion in this task. A chain
/// that fails at index `i` drops the chains starting after `i`, which a sequential run would
/// not have reached; the lowest failing index wins.
async fn join<T, E, Fut>(chains: Vec<(usize, Fut)>) -> Result<Vec<T>, E>
where
    Fut: Future<Output = Result<T, (usize, E)>>,
{
    let mut pending: Vec<(usize, Option<Pin<Box<Fut>>>)> = chains
        .into_iter()
        .map(|(start, c)| (start, Some(Box::pin(c))))
        .collect();
    let mut done: Vec<Option<T>> = (0..pending.len()).map(|_| None).collect();
    let mut failed: Option<(usize, E)> = None;
    std::future::poll_fn(|cx| {
        for ((start, slot), out) in pending.iter_mut().zip(done.iter_mut()) {
            if failed.as_ref().is_some_and(|(i, _)| *start > *i) {
                *slot = None;
            }
            let Some(chain) = slot else { continue };
            if let Poll::Ready(r) = chain.as_mut().poll(cx) {
                *slot = None;
                match r {
                    Ok(t) => *out = Some(t),
                    Err((i, e)) => {
                        if failed.as_ref().is_none_or(|(j, _)| i < *j) {
                            failed = Some((i, e));
                        }
                    }
                }
            }
        }
        if pending.iter().all(|(_, slot)| slot.is_none()) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    match failed {
        Some((_, e)) => Err(e),
        None => Ok(done.into_iter().flatten().collect()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::sync::oneshot;

    use super::*;

    fn keys(ks: &[&str]) -> Vec<String> {
        ks.iter().map(|k| (*k).to_owned()).collect()
    }

    /// Outputs come back in input order even when a later one finishes first; equal keys run
    /// one after another.
    #[tokio::test]
    async fn results_in_input_order_equal_keys_in_sequence() {
        let (tx, rx) = oneshot::channel::<()>();
        let (tx, rx) = (Mutex::new(Some(tx)), Mutex::new(Some(rx)));
        let log = Mutex::new(Vec::new());
        let out = run(&keys(&["a", "b", "a"]), |i| {
            let (tx, rx, log) = (&tx, &rx, &log);
            async move {
                log.lock().unwrap().push(format!("start {i}"));
                // 0 waits for 1 to finish: 1 is done before 0, yet comes second.
                match i {
                    0 => {
                        let rx = rx.lock().unwrap().take().unwrap();
                        rx.await.unwrap();
                    }
                    1 => tx.lock().unwrap().take().unwrap().send(()).unwrap(),
                    _ => {}
                }
                log.lock().unwrap().push(format!("end {i}"));
                Ok::<_, String>(i * 10)
            }
        })
        .await
        .unwrap();
        assert_eq!(out, [0, 10, 20]);
        let log = log.into_inner().unwrap();
        let at = |s: &str| log.iter().position(|l| l == s).unwrap();
        assert!(at("end 1") < at("end 0"), "{log:?}");
        assert!(at("end 0") < at("start 2"), "same key: 2 after 0: {log:?}");
    }

    /// The error is the first one in input order, whichever fails first; records after it
    /// are dropped (a sequential run never reached them).
    #[tokio::test]
    async fn the_first_error_in_input_order_wins() {
        let (tx, rx) = oneshot::channel::<()>();
        let (tx, rx) = (Mutex::new(Some(tx)), Mutex::new(Some(rx)));
        let finished = Mutex::new(Vec::new());
        let r = run(&keys(&["a", "b", "c", "d"]), |i| {
            let (tx, rx, finished) = (&tx, &rx, &finished);
            async move {
                match i {
                    // Fails only after 2 has failed.
                    1 => {
                        let rx = rx.lock().unwrap().take().unwrap();
                        rx.await.unwrap();
                        return Err(format!("error {i}"));
                    }
                    2 => {
                        tx.lock().unwrap().take().unwrap().send(()).unwrap();
                        return Err(format!("error {i}"));
                    }
                    // Never finishes: dropped once 2 fails.
                    3 => std::future::pending::<()>().await,
                    _ => {}
                }
                finished.lock().unwrap().push(i);
                Ok(i)
            }
        })
        .await;
        assert_eq!(r, Err("error 1".to_owned()));
        assert_eq!(finished.into_inner().unwrap(), [0]);
    }
}
